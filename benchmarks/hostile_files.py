"""Hostile inputs of every kind FaceDown reads, made in a folder: each with the command a user (or an attacker)
would run on it and the words its refusal must say. Shared by tests/test_hostile_inputs.py, which asserts the
refusals, and benchmarks/hostile_inputs.py, which measures their time and memory.

Big files are sparse (``truncate``): a 90 MB game file costs no disk and no time to make, and is refused by its size
before a byte of it is read.
"""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GUIDE = ROOT / "docs" / "write-a-game.md"
STRATEGO_PROFILE = ROOT / "hardware" / "profiles" / "stratego.yaml"


@dataclass
class Case:
    """One hostile input: ``argv`` for ``facedown`` (or ``code`` for ``python -c``), run in ``env``, with ``stdin``
    from that file; its refusal must match ``expect`` and exit with status 2."""

    kind: str
    name: str
    expect: str
    argv: list[str] = field(default_factory=list)
    code: str = ""
    env: dict[str, str] = field(default_factory=dict)
    stdin: str | None = None
    status: int = 2
    args: list[str] = field(default_factory=list)  # after ``code``

    @property
    def command(self) -> list[str]:
        return [sys.executable, "-c", self.code, *self.args] if self.code else [sys.executable, "-m", "controller.cli", *self.argv]


def guide_game() -> str:
    """The small game docs/write-a-game.md builds (3.8 kB): its ```yaml blocks in order."""
    blocks = re.findall(r"```yaml\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)
    return "\n".join(b.rstrip("\n") for b in blocks) + "\n"


def alias_bomb(levels: int = 9, width: int = 9) -> str:
    """The issue's bomb: the guide's game with an option whose default is ``levels`` nested levels of aliases
    (9 x 9: 387 million values once expanded, in 4.4 kB)."""
    names = [f"l{i}" for i in range(levels)]
    parts = [f"&{names[0]} [" + ", ".join(["lol"] * width) + "]"]
    parts += [f"&{names[i]} [" + ", ".join([f"*{names[i - 1]}"] * width) + "]" for i in range(1, levels)]
    option = f"  laughs: {{doc: \"a bomb\", default: [{', '.join(parts)}]}}\n"
    text = guide_game().replace("id: junqi_duel", "id: bomb")
    return text.replace("\noptions:\n", "\noptions:\n" + option, 1)


def sparse(path: Path, size: int) -> Path:
    with open(path, "wb") as f:
        f.truncate(size)
    return path


def fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


def link_to_zero(path: Path) -> Path:
    path.symlink_to("/dev/zero")
    return path


MB = 1024 * 1024


def make(folder: Path, *, big: int = 90 * MB) -> list[Case]:
    """Every hostile input in ``folder`` (made empty first by the caller), the worst of each kind; ``big``: the size
    of the huge files."""
    folder.mkdir(parents=True, exist_ok=True)
    j = str(folder / "journal.sqlite")
    cases: list[Case] = []

    def case(kind: str, name: str, expect: str, *argv: str, **kw: object) -> None:
        cases.append(Case(kind, name, expect, list(argv), **kw))  # type: ignore[arg-type]

    # ---------------------------------------------------------------- game files
    games = folder / "games"
    games.mkdir()
    (games / "bomb.yaml").write_text(alias_bomb(), encoding="utf-8")
    values = r"at most 50,000 values, an alias \(\*name\) counting as all it stands for"
    case("game file", "alias bomb (4.4 kB, 9 levels), facedown rules", rf"bomb\.yaml: line \d+, column \d+: .*{values}",
         "rules", str(games / "bomb.yaml"))
    case("game file", "alias bomb, facedown games", rf"^bomb +does not load: .*bomb\.yaml: line \d+, column \d+: .*{values}",
         "games", env={"FACEDOWN_GAMES_DIR": str(games)}, status=1)
    case("game file", "alias bomb, facedown play", rf"bomb\.yaml: line \d+, column \d+: .*{values}",
         "play", "bomb", "--no-web", "--announce", "none", "--journal", j, env={"FACEDOWN_GAMES_DIR": str(games)})
    sparse(folder / "huge.yaml", big)
    case("game file", f"{big // MB} MB", rf"huge\.yaml: \(file\): {big // MB} MB is too large for a game file \(at most 256 kB\)",
         "rules", str(folder / "huge.yaml"))
    (folder / "flat.yaml").write_text("[" + ",".join(["1"] * 120_000) + "]\n", encoding="utf-8")
    case("game file", "240 kB of 120,000 values (under the size cap)", rf"flat\.yaml: line 1, column \d+: .*{values}",
         "rules", str(folder / "flat.yaml"))
    (folder / "deep.yaml").write_text("[" * 100_000 + "]" * 100_000 + "\n", encoding="utf-8")
    case("game file", "nested 100,000 deep", r"deep\.yaml: \(document\): a document nested at most 200 levels deep",
         "rules", str(folder / "deep.yaml"))
    (folder / "aliasdeep.yaml").write_text("a0: &a0 [x]\n" + "".join(f"a{i}: &a{i} [*a{i - 1}]\n" for i in range(1, 400)),
                                           encoding="utf-8")
    case("game file", "aliases nested 400 deep", r"aliasdeep\.yaml: line \d+, column \d+: a document nested at most 200 levels "
         r"deep with its aliases", "rules", str(folder / "aliasdeep.yaml"))
    (folder / "utf16.yaml").write_bytes(guide_game().encode("utf-16"))
    case("game file", "UTF-16", r"utf16\.yaml: \(file\): line 1, column 1: byte 0xFF is not UTF-8 text \(save the game file as UTF-8\)",
         "rules", str(folder / "utf16.yaml"))
    (folder / "latin1.yaml").write_bytes(guide_game().replace("軍棋對決", "Échecs").encode("latin-1", "replace"))
    case("game file", "Latin-1", r"latin1\.yaml: \(file\): line 4, column 5: byte 0xC9 is not UTF-8", "rules",
         str(folder / "latin1.yaml"))
    (folder / "digits.yaml").write_text(guide_game().replace("count: 2, rank: 3", "count: " + "9" * 5000 + ", rank: 3"), encoding="utf-8")
    case("game file", "a 5,000-digit number", r"digits\.yaml: \(document\): numbers of a sensible length", "rules",
         str(folder / "digits.yaml"))
    (folder / "big_count.yaml").write_text(guide_game().replace("count: 2, rank: 3", "count: " + "9" * 40 + ", rank: 3"),
                                           encoding="utf-8")
    case("game file", "a 40-digit count", r"big_count\.yaml: pieces\[2\]\.count: expected a number of at most 1,000,000,000, "
         r"got a number of 40 digits", "rules", str(folder / "big_count.yaml"))
    (folder / "choice.yaml").write_text(guide_game().replace("{default: silent, choices: [silent, open]",
                                                             "{default: loud, choices: [silent, open]"), encoding="utf-8")
    case("game file", "an option default not among its choices", r"choice\.yaml: options\.reveal\.default: expected one of the "
         r"choices \['silent', 'open'\], got 'loud'", "rules", str(folder / "choice.yaml"))
    (folder / "listdefault.yaml").write_text(guide_game().replace("no_capture_draw: {default: 40",
                                                                  "no_capture_draw: {default: [40, 41]"), encoding="utf-8")
    case("game file", "an option default that is a list", r"listdefault\.yaml: options\.no_capture_draw\.default: expected one "
         r"value \(text, a number, true/false or null\), got a list", "rules", str(folder / "listdefault.yaml"))
    fifo(folder / "fifo.yaml")
    case("game file", "a FIFO", r"fifo\.yaml: \(file\): is a FIFO \(named pipe\), not a game file", "rules",
         str(folder / "fifo.yaml"))
    link_to_zero(folder / "zero.yaml")
    case("game file", "a symlink to /dev/zero", r"zero\.yaml: \(file\): is a character device \(a symlink to /dev/zero\), "
         "not a game file", "rules", str(folder / "zero.yaml"))
    odd = folder / "odd"
    odd.mkdir()
    (odd / "dir.yaml").mkdir()
    fifo(odd / "pipe.yaml")
    link_to_zero(odd / "zero.yaml")
    case("game file", "a directory, a FIFO and /dev/zero in $FACEDOWN_GAMES_DIR, facedown games",
         r"(?s)^dir +does not load: .*is a directory, not a game file.*\npipe +does not load: .*is a FIFO.*\n"
         r"zero +does not load: .*is a character device \(a symlink to /dev/zero\)", "games",
         env={"FACEDOWN_GAMES_DIR": str(odd)}, status=1)

    # ---------------------------------------------------------------- hardware profiles
    (folder / "profile_bomb.yaml").write_text(STRATEGO_PROFILE.read_text(encoding="utf-8") + "\nextra: "
                                              + alias_bomb().split("default: ", 1)[1].split("}\n", 1)[0] + "\n", encoding="utf-8")
    case("hardware profile", "alias bomb", rf"profile_bomb\.yaml: line \d+, column \d+: .*{values}", "hw-test",
         "--profile", str(folder / "profile_bomb.yaml"))
    sparse(folder / "profile_huge.yaml", big)
    case("hardware profile", f"{big // MB} MB", rf"profile_huge\.yaml: .*{big // MB} MB is too large for a hardware profile "
         r"\(at most 64 kB\)", "hw-test", "--profile", str(folder / "profile_huge.yaml"))
    case("hardware profile", "a symlink to /dev/zero", r"zero\.yaml: .*is a character device \(a symlink to /dev/zero\), not a "
         "hardware profile", "hw-test", "--profile", str(folder / "zero.yaml"))

    # ---------------------------------------------------------------- deployments and saved setups
    sparse(folder / "setup_huge.json", big)
    case("deployment file", f"{big // MB} MB", rf"setup_huge\.json: {big // MB} MB is too large for a deployment file "
         r"\(at most 64 kB\)", "setups", "validate", "stratego", "red", str(folder / "setup_huge.json"))
    (folder / "setup_deep.json").write_text("[" * 30_000 + "]" * 30_000, encoding="utf-8")
    case("deployment file", "JSON nested 30,000 deep", r"setup_deep\.json: nested more than 200 levels deep", "setups",
         "validate", "stratego", "red", str(folder / "setup_deep.json"))
    (folder / "setup_digits.json").write_text('{"a1": ' + "9" * 5000 + "}", encoding="utf-8")
    case("deployment file", "a 5,000-digit number", r"setup_digits\.json: a number too long to read", "setups", "validate",
         "stratego", "red", str(folder / "setup_digits.json"))
    fifo(folder / "setup.fifo")
    case("deployment file", "a FIFO", r"setup\.fifo: is a FIFO \(named pipe\), not a deployment file", "setups", "validate",
         "stratego", "red", str(folder / "setup.fifo"))
    case("deployment file", "standard input from /dev/zero", r"<stdin>: larger than a deployment may be \(at most 64 kB\)",
         "setups", "validate", "stratego", "red", "-", stdin="/dev/zero")
    case("deployment file", "play --setup with a symlink to /dev/zero", r"zero\.yaml: is a character device \(a symlink to "
         r"/dev/zero\), not a deployment file", "play", "stratego", "--no-web", "--announce", "none", "--journal", j,
         "--setup", f"red={folder / 'zero.yaml'}")
    store = folder / "store"
    red = store / "stratego" / "red"
    red.mkdir(parents=True)
    fifo(red / "waiting.json")
    link_to_zero(red / "zero.json")
    sparse(red / "huge.json", big)
    (red / "deep.json").write_text("[" * 30_000 + "]" * 30_000, encoding="utf-8")
    case("saved deployment", "a FIFO, /dev/zero, a huge and a deep file in the store: setups list",
         r"^no saved deployments for stratego", "setups", "list",
         "stratego", "--store", str(store), status=0)

    # ---------------------------------------------------------------- scripts
    sparse(folder / "script_huge.jsonl", big)
    case("script", f"{big // MB} MB", rf"script_huge\.jsonl: {big // MB} MB is too large for a script \(at most 16 MB\)",
         "script", "stratego", str(folder / "script_huge.jsonl"))
    fifo(folder / "script.fifo")
    case("script", "a FIFO", r"script\.fifo: is a FIFO \(named pipe\), not a script", "script", "stratego",
         str(folder / "script.fifo"))
    case("script", "a line of /dev/zero read line by line (textfiles.bounded_lines)", r"<stdin>: line 1 is longer than a script "
         r"line may be \(more than 64 kB without a line end\)",
         code="import sys\nfrom controller.textfiles import InputFileError, bounded_lines\n"
              "try:\n    list(bounded_lines(sys.stdin.buffer, '<stdin>', 'script'))\n"
              "except InputFileError as exc:\n    sys.exit(f'facedown script: {exc}')\n", stdin="/dev/zero", status=1)

    # ---------------------------------------------------------------- Gravon records
    sparse(folder / "huge.xml", big)
    case("Gravon file", f"{big // MB} MB", rf"huge\.xml: {big // MB} MB is too large for a Gravon file \(at most 1 MB\)",
         "record", "import", str(folder / "huge.xml"), "--journal", j)
    laughs = "".join(f'<!ENTITY l{i} "' + f"&l{i - 1};" * 10 + '">' for i in range(1, 10))
    (folder / "laughs.xml").write_text(f'<?xml version="1.0"?>\n<!DOCTYPE stratego [<!ENTITY l0 "lol">{laughs}]>\n'
                                       "<stratego><game type='classic'><field content='&l9;'/></game></stratego>\n")
    case("Gravon file", "billion laughs (entities)", r"laughs\.xml: line 2: a Gravon file has no <!DOCTYPE> or <!ENTITY> "
         "declarations", "record", "import", str(folder / "laughs.xml"), "--journal", j)
    (folder / "deep.xml").write_text("<stratego>" + "<a>" * 200_000 + "</a>" * 200_000 + "</stratego>")
    case("Gravon file", "elements nested 200,000 deep (1.3 MB)", r"deep\.xml: 1\.\d MB is too large for a Gravon file", "record",
         "import", str(folder / "deep.xml"), "--journal", j)
    (folder / "deep_under.xml").write_text("<stratego>" + "<a>" * 140_000 + "</a>" * 140_000 + "</stratego>")
    case("Gravon file", "elements nested 140,000 deep (under the cap)", r"deep_under\.xml: nested more than 16 deep by <a>; a "
         "Gravon game is one <game> of moves", "record", "import", str(folder / "deep_under.xml"), "--journal", j)
    (folder / "wide.xml").write_text("<stratego><game type='classic'>" + "<move/>" * 140_000 + "</game></stratego>")
    case("Gravon file", "140,000 elements (under the cap)", r"wide\.xml: more than 20,000 elements by <move>", "record",
         "import", str(folder / "wide.xml"), "--journal", j)
    link_to_zero(folder / "zero.xml")
    case("Gravon file", "a symlink to /dev/zero", r"zero\.xml: is a character device \(a symlink to /dev/zero\), not a Gravon "
         "file", "record", "import", str(folder / "zero.xml"), "--journal", j)

    # ---------------------------------------------------------------- tag maps
    (folder / "tags_deep.json").write_text('{"game": "stratego", "tags": ' + "[" * 30_000 + "]" * 30_000 + "}")
    case("tag map", "JSON nested 30,000 deep", r"tags_deep\.json: not a usable tag map: nested more than 200 levels deep", "tags",
         "list", "stratego", "--map", str(folder / "tags_deep.json"))
    case("tag map", "a FIFO", r"fifo\.yaml: not a usable tag map: is a FIFO", "tags", "list", "stratego", "--map",
         str(folder / "fifo.yaml"))

    # ---------------------------------------------------------------- lines from programs and boards
    (folder / "spew.py").write_text("import sys\nfor _ in range(1600):\n    sys.stdout.write('x' * 65536)\n")
    (folder / "deep_bot.py").write_text("print('[' * 30000 + ']' * 30000, flush=True)\ninput()\n")
    bot = ("import sys\nfrom controller.bots.base import BotError\nfrom controller.bots.process import ProcessBot\n"
           "bot = ProcessBot(sys.argv[1])\ntry:\n    bot.new_game('stratego', 'red', {})\n"
           "except BotError as exc:\n    sys.exit(str(exc))\nfinally:\n    bot.close()\n")
    case("bot line", "a bot writing 100 MB without a line end", r"sent a line longer than 64 kB", code=bot,
         args=[f"{sys.executable} {folder / 'spew.py'}"], status=1)
    case("bot line", "a bot answering with JSON nested 30,000 deep", r"sent JSON nested more than 200 levels deep", code=bot,
         args=[f"{sys.executable} {folder / 'deep_bot.py'}"], status=1)
    case("scanner line", "10 MB of noise without a line end, then 200 lines of 'xHB xHB ...*00'", r"dropped 10485760 bytes; "
         r"a noisy line costs [0-9.]+ ms",
         code="import sys, time\nfrom controller.sensing import scanner_protocol as sp\ns = sp.LineSplitter()\n"
              "for _ in range(160):\n    assert s.feed(b'x' * 65536) == []\n"
              "noise = (('xHB ' * 1100)[:4090] + '*00')\nt = time.perf_counter()\n"
              "assert all(sp.unframe(noise) is None for _ in range(200))\n"
              "sys.exit(f'dropped {s.dropped} bytes; a noisy line costs {(time.perf_counter() - t) * 5:.2f} ms')\n", status=1)
    return cases


