"""A first build walked from the docs: every `facedown ...` command that hardware/README.md and docs/firmware.md give,
for the `stratego-pico` build (reed matrix on a Pico, WS2812 lights) and the `siguo` build (74HC165 chain), run as
written (PROFILE, GAME and BUILD filled in, by name and by file) in a fresh directory. Commands that need no hardware
must succeed and write what they say; the ones that need a Pico must stop with a clear message, never a traceback.
The commands that need the board itself (hw-test, play, service install, tags enroll) are run end to end elsewhere
(test_hw_faults, test_play_serial, test_service, test_play_checkin)."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest

from controller.cli import main
from controller.hardware.build import build_of
from controller.sensing.profile import find_profile

ROOT = Path(__file__).resolve().parent.parent
DOCS = (ROOT / "hardware" / "README.md", ROOT / "docs" / "firmware.md")
#: needs the board or a Pi's GPIO, or writes into the checkout
ELSEWHERE = ("hw-test", "play", "service", "tags enroll", "bom --sync-docs")


def doc_commands() -> list[str]:
    """Every facedown command the two documents give (inline or in a code block), whitespace made single."""
    out: list[str] = []
    for doc in DOCS:
        text = doc.read_text(encoding="utf-8")
        found = [" ".join(c.split()) for c in re.findall(r"`(facedown [^`]+)`", text)]
        for block in re.findall(r"```\n(.*?)```", text, re.S):
            found += [line.split("  #")[0].strip() for line in block.splitlines() if line.startswith("facedown ")]
        out += found
    return list(dict.fromkeys(out))


def _runnable(cmd: str) -> bool:
    words = cmd.split()[1:]
    if any(" ".join(words).startswith(e) for e in ELSEWHERE):
        return False
    sub = words[:2] if words[0] in ("firmware", "tags") else words[:1]
    rest = words[len(sub):]
    named = "--profile" in rest or (rest and not rest[0].startswith("-"))
    return bool(named) or sub == ["firmware", "list"]  # `facedown print-board --layer assembly` is a mention, not a step


@pytest.mark.parametrize("how", ["name", "file"])
@pytest.mark.parametrize("pid", ["stratego-pico", "siguo"])
def test_every_command_of_the_build_docs_runs_as_written(pid: str, how: str, tmp_path: Path, monkeypatch, capsys) -> None:  # noqa: ANN001
    prof = find_profile(pid)
    mine = tmp_path / "my-board.yaml"
    shutil.copy(prof.file, mine)
    given = pid if how == "name" else str(mine)
    fill = {"PROFILE": given, "YOURS.yaml": str(mine), "my-board.yaml": str(mine), "GAME": prof.game,
            "BUILD": build_of(prof), "B": build_of(prof)}
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    ran = []
    for cmd in filter(_runnable, doc_commands()):
        args = [fill.get(w, w) for w in shlex.split(cmd)[1:]]
        code = main(args)
        out, err = capsys.readouterr()
        ran.append(" ".join(args))
        if args[:2] in (["firmware", "flash"], ["firmware", "list"]):  # no Pico on this machine
            assert code in (1, 2) and "Pico" in out + err and "Traceback" not in err, (cmd, out, err)
            continue
        assert code == 0, (cmd, args, err)
        if "--out" in args:
            written = Path(args[args.index("--out") + 1])
            assert written.is_file() and written.stat().st_size > 0, (cmd, written)
    assert any(r.startswith(f"firmware config {given} --out config.json") for r in ran), ran
    assert any(r.startswith(f"print-board --profile {given} --schematic") for r in ran), ran
    drill = (tmp_path / "board" / "drill.svg").read_text(encoding="utf-8")  # the build's own drill layer
    assert drill.count('class="hole led"') == (prof.lights.count if prof.lights else 0)
    assert any(r.startswith(f"bom {prof.game} --build") for r in ran), ran
    assert len(ran) >= 12, ran
