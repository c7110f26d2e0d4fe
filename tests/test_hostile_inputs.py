"""Hostile inputs (issue 35): every kind of input FaceDown reads is bounded before it is parsed. Each hostile file of
tests/hostile_files.py is given to the command a user would run, as its own process: it must be refused with the
message the case names (the file, and what is wrong: its size and the cap, the line, the kind of file), with the
exit status it names, within the time limit, and never with a traceback. Then the same bounds in-process: the web
API's 413, the YAML value count, the line readers, the scanner's line splitter."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from benchmarks.hostile_files import ROOT, Case, alias_bomb, guide_game, make
from controller.docreader import MAX_NODES, DocumentProblem, count_values, load_yaml
from controller.textfiles import InputFileError, bounded_lines, read_bytes, read_stdin, read_text

with tempfile.TemporaryDirectory() as _tmp:
    NAMES = [f"{c.kind}: {c.name}" for c in make(Path(_tmp) / "h")]


@pytest.fixture(scope="module")
def cases(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Case]:
    return {f"{c.kind}: {c.name}": c for c in make(tmp_path_factory.mktemp("hostile") / "h")}


def run_case(c: Case, timeout: float = 30) -> tuple[int, str]:
    env = dict(os.environ, PYTHONPATH=str(ROOT), **c.env)
    env.pop("FACEDOWN_GAMES_DIR", None) if "FACEDOWN_GAMES_DIR" not in c.env else None
    stdin = open(c.stdin, "rb") if c.stdin else subprocess.DEVNULL  # noqa: SIM115 - closed below
    try:
        p = subprocess.run(c.command, stdin=stdin, capture_output=True, text=True, cwd=ROOT, env=env, timeout=timeout)
    finally:
        if c.stdin:
            stdin.close()
    return p.returncode, p.stdout + p.stderr


@pytest.mark.parametrize("name", NAMES)
def test_each_hostile_input_is_refused_clearly(cases: dict[str, Case], name: str) -> None:
    c = cases[name]
    code, out = run_case(c)
    assert "Traceback" not in out, out[-2000:]
    assert re.search(c.expect, out, re.M), f"{c.command[3:]} said:\n{out[-1500:]}"
    assert code == c.status, out[-1500:]


# ---------------------------------------------------------------------- YAML: the value count
def test_the_issues_bomb_is_44_kb_and_refused_before_anything_is_built() -> None:
    text = alias_bomb()
    assert 4_000 < len(text.encode()) < 4_700
    with pytest.raises(DocumentProblem, match=r"at most 50,000 values"):
        count_values(text)
    with pytest.raises(DocumentProblem, match=r"at most 50,000 values"):
        load_yaml(text, fast=False)  # the pure-Python loader too (hardware profiles)


@pytest.mark.parametrize("doc,values", [
    # the mapping; a and its list of 4; b and the 4 it stands for; c and a list of two 4s
    ("a: &x [1, 2, 3]\nb: *x\nc: [*x, *x]\n", 1 + (1 + 4) + (1 + 4) + (1 + 1 + 4 + 4)),
    ("- &s one\n- *s\n- *s\n", 4),
    ("{}", 1),
    ("plain", 1),
])
def test_count_values_counts_aliases_expanded(doc: str, values: int) -> None:
    assert count_values(doc) == values == count_values(doc, fast=False)


def test_aliases_a_game_file_needs_still_load() -> None:
    from controller.rules import load_game, parse_game

    assert load_game("sanjunqi").id == "sanjunqi"  # it reuses lists of pieces through aliases
    text = guide_game().replace("home: {red: {y: [0, 1, 2]}", "home: {red: {y: &reds [0, 1, 2]}").replace(
        "{pieces: [flag], kinds: [hq]", "{pieces: &flags [flag], kinds: [hq]").replace("capture: [flag]", "capture: *flags")
    assert "*flags" in text and parse_game(text, "anchored.yaml").win.capture == frozenset({"flag"})


def _expanded(value: object) -> int:
    if isinstance(value, dict):
        return 1 + sum(1 + _expanded(v) for v in value.values())  # a key is one value
    if isinstance(value, list):
        return 1 + sum(_expanded(v) for v in value)
    return 1


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.integers(-1, 30), max_size=5), min_size=1, max_size=12), st.booleans())
def test_count_values_is_the_size_of_the_loaded_document(defs: list[list[int]], fast: bool) -> None:
    """Random documents of anchors and aliases: anchor i is a list of earlier anchors (by number) and scalars
    (-1); the count made from the parser's events is the size of what the loader builds, aliases expanded."""
    lines, sizes = [], []
    for i, refs in enumerate(defs):
        items = ["x" if r < 0 or r >= i else f"*a{r}" for r in refs]
        lines.append(f"k{i}: &a{i} [{', '.join(items)}]")
        sizes.append(1 + sum(1 if r < 0 or r >= i else sizes[r] for r in refs))
    doc = "\n".join(lines) + "\n"
    want = 1 + sum(1 + s for s in sizes)
    if want > MAX_NODES:  # too big to build: refused before it is
        with pytest.raises(DocumentProblem, match="at most 50,000 values"):
            load_yaml(doc, fast=fast)
    else:
        assert count_values(doc, fast=fast) == want == _expanded(load_yaml(doc, fast=fast))


@pytest.mark.parametrize("doc,why", [
    ("&a [*a]", "does not contain itself"),
    ("a: &x {b: [1, *x]}", "does not contain itself"),
    ("[" + ", ".join(["1"] * (MAX_NODES + 5)) + "]", "at most 50,000 values"),
])
def test_self_holding_and_oversized_documents(doc: str, why: str) -> None:
    with pytest.raises(DocumentProblem, match=why):
        load_yaml(doc)


# ---------------------------------------------------------------------- the readers
def test_read_bytes_refuses_special_files_without_reading(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "p")
    (tmp_path / "link").symlink_to(tmp_path / "p")
    (tmp_path / "dangling").symlink_to(tmp_path / "nothing")
    for path, why in ((tmp_path / "p", "is a FIFO"), (tmp_path / "link", r"is a FIFO \(named pipe\) \(a symlink to .*/p\)"),
                      (Path("/dev/zero"), "is a character device"), (tmp_path, "is a directory"),
                      (tmp_path / "dangling", r"no such file \(a symlink to .*nothing, which does not exist\)")):
        with pytest.raises(InputFileError, match=why):
            read_bytes(path)


def test_caps_name_the_file_the_size_and_the_cap(tmp_path: Path) -> None:
    f = tmp_path / "g.yaml"
    f.write_bytes(b"x" * (256 * 1024 + 1))
    with pytest.raises(InputFileError, match=r"g\.yaml: 262,145 bytes is too large for a game file \(at most 262,144 bytes\)"):
        read_text(f, "game file")
    f.write_bytes(b"x" * (256 * 1024))
    assert len(read_text(f, "game file")) == 256 * 1024  # the cap itself is allowed
    with pytest.raises(InputFileError, match=r"<stdin>: larger than an Ataraxos file may be \(at most 10 bytes\)"):
        read_stdin("Ataraxos file", io.BytesIO(b"x" * 11), cap=10)


def test_bounded_lines_stops_at_the_cap_and_names_the_line() -> None:
    with open("/dev/zero", "rb") as zero:
        with pytest.raises(InputFileError, match=r"<stdin>: line 1 is longer than a script line may be"):
            next(bounded_lines(zero, "<stdin>", "script"))
    lines = bounded_lines(io.BytesIO(b'{"a": 1}\r\n\n' + b"x" * 10 + b"\n\xff\n"), "s.jsonl", "script", cap=11)
    assert next(lines) == (1, '{"a": 1}') and next(lines) == (2, "") and next(lines) == (3, "x" * 10)
    with pytest.raises(InputFileError, match=r"s\.jsonl: line 4, column 1: byte 0xFF is not UTF-8"):
        next(lines)


def test_a_saved_deployment_that_is_a_fifo_does_not_block_the_list(tmp_path: Path) -> None:
    from controller.rules import load_game
    from controller.setups_store import SetupStore, SetupStoreError

    game = load_game("stratego")
    store = SetupStore(tmp_path)
    folder = tmp_path / "stratego" / "red"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "p.json")
    assert store.list(game, "red") == []
    with pytest.raises(SetupStoreError, match=r"p\.json: not a saved deployment \(is a FIFO"):
        store.load(game, "red", "p")


# ---------------------------------------------------------------------- the web API
def test_a_body_over_the_cap_is_a_413_naming_its_size_and_the_cap(tmp_path: Path) -> None:
    from controller.setups_store import SetupStore
    from harness.web_game import Game
    from web_referee.app import create_app

    g = Game("stratego", tmp_path)
    app = create_app(g.table, setups=SetupStore(tmp_path / "s"))
    client = app.test_client()
    red = g.table.tokens["red"]
    csrf = re.search(r'name="facedown-csrf" content="([0-9a-f]+)"', client.get(f"/seat/{red}").get_data(as_text=True)).group(1)
    head = {"X-CSRF-Token": csrf, "Content-Type": "application/json"}
    r = client.post(f"/api/{red}/setup/check", data=b" " * (1024 * 1024), headers=head)
    assert r.status_code == 413
    assert r.get_json()["error"] == "request too large (1 MB); a request may carry at most 64 kB: nothing was read"

    # no Content-Length (a chunked upload, as the server hands it on): the cap still holds while it is read
    class Endless(io.RawIOBase):  # a stream of no known length that never ends
        def readable(self) -> bool:
            return True

        def readinto(self, b) -> int:  # noqa: ANN001
            b[:] = b" " * len(b)
            return len(b)

    from werkzeug.test import EnvironBuilder

    environ = EnvironBuilder(f"/api/{red}/setup/check", method="POST", headers=head).get_environ()
    environ.pop("CONTENT_LENGTH", None)
    environ.update({"wsgi.input": Endless(), "wsgi.input_terminated": True})
    status: list[str] = []
    body = b"".join(app(environ, lambda s, h, exc=None: status.append(s)))
    assert status[0].startswith("413"), body[:300]
    assert json.loads(body)["error"] == "request too large; a request may carry at most 64 kB: nothing was read"


# ---------------------------------------------------------------------- scanner lines
def test_scanner_lines_are_bounded_whole_or_in_pieces() -> None:
    from controller.sensing import scanner_protocol as sp

    s = sp.LineSplitter()
    assert s.feed(b"x" * (sp.MAX_LINE + 10) + b"\nHB b=1*00\n") == ["HB b=1*00"]  # the long line arrived whole
    assert s.dropped == sp.MAX_LINE + 11
    assert s.feed(b"y" * 100_000) == [] and s.dropped == sp.MAX_LINE + 11 + 100_000


def test_a_scanner_cfg_nested_deep_is_an_unreadable_message_not_a_crash() -> None:
    from controller.sensing import scanner_protocol as sp
    from controller.sensing.serial_link import LinkState

    link = LinkState(["s0"], {"s0": (0, 0)})
    requests, snap = link.on_line(sp.frame("CFG json=" + "[" * 1500 + "]" * 1500).decode().strip(), 0)
    assert snap is None and requests  # it asks the scanner again, as for any message it cannot understand


def test_the_package_has_no_unbounded_reads() -> None:
    """Every file the product reads goes through controller.textfiles (bounded, regular files only), or is a file
    of its own making (the journal's key, the package's catalogs and records)."""
    own = {"controller/referee/table.py", "controller/messages/__init__.py", "web_referee/blueprints/public.py",
           "controller/commands/bom.py", "controller/commands/firmware.py", "controller/hardware/usb.py",
           "controller/records/corpus.py", "controller/referee/journal.py", "controller/referee/signing_key.py"}
    found = []
    for path in sorted([*ROOT.glob("controller/**/*.py"), *ROOT.glob("web_referee/**/*.py")]):
        rel = path.relative_to(ROOT).as_posix()
        if rel in own or rel == "controller/textfiles.py":
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"\.read_(text|bytes)\(|stdin\.buffer\.read\(\)|ET\.parse\(", line) and "collection" not in line:
                found.append(f"{rel}:{n}: {line.strip()}")
    assert found == [], "\n".join(found)



# -- the club's inputs: broker messages, the password file, the results file ---------------------------------------
def test_a_deeply_nested_club_message_is_refused_with_its_reason_not_a_traceback(caplog) -> None:  # noqa: ANN001
    from controller.club.results import ResultBook
    from web_referee.club import ClubState

    state = ClubState(ResultBook())
    payload = b"[" * 50_000 + b"]" * 50_000  # under the size cap, far past any nesting a status has
    state.on_message("facedown/tables/table-1/status", payload)
    assert state.rejected == 1 and "not JSON" in state.problems[-1] and "nest" in state.problems[-1].lower()
    assert "Traceback" not in caplog.text
    state.on_message("facedown/tables/table-1/status", b"\xff\xfe{}")
    assert state.rejected == 2 and "not UTF-8" in state.problems[-1]


def test_the_club_password_and_results_files_are_bounded_and_regular(tmp_path: Path) -> None:
    from controller.club.broker import ClubError, parse_broker
    from controller.club.results import ResultBook, ResultError

    fifo = tmp_path / "password"
    os.mkfifo(fifo)
    with pytest.raises(ClubError, match="FIFO"):  # refused by what it is, never opened (a FIFO would block)
        parse_broker("mqtt://127.0.0.1:1883", username="club", password_file=str(fifo))
    big = tmp_path / "big-password"
    big.write_bytes(b"x" * 10_000)
    with pytest.raises(ClubError, match="too large"):
        parse_broker("mqtt://127.0.0.1:1883", username="club", password_file=str(big))
    good = tmp_path / "good-password"
    good.write_text("s3cret\n", encoding="utf-8")
    assert parse_broker("mqtt://127.0.0.1:1883", username="club", password_file=str(good)).password == "s3cret"
    results = tmp_path / "results.jsonl"
    os.mkfifo(results)
    with pytest.raises(ResultError, match="not a regular file"):
        ResultBook(results)
    long_line = tmp_path / "long.jsonl"
    with long_line.open("wb") as f:
        f.write(b'{"x": "' + b"y" * (9 * 1024 * 1024))
    with pytest.raises(ResultError, match="line 1 is longer"):
        ResultBook(long_line)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
