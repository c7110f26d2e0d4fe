"""`facedown script GAME -` answers line by line: a tool that drives it over pipes reads each event before it writes the
next line (issue 36), and bad input on standard input still stops it with the line that is wrong.

Each test runs the real command as its own process and reads its output with a deadline, so a script that waits for
the end of its input before answering fails here instead of hanging the suite."""

from __future__ import annotations

import json
import os
import random
import select
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from controller.rules import new_game
from controller.rules.deploy import random_deployment

ROOT = Path(__file__).resolve().parent.parent
ANSWER_S = 20.0  # a slow CI machine starts Python and loads the game in well under this
#: The command's environment: this checkout's code, and standard output buffered as a tool's pipe has it (without
#: PYTHONUNBUFFERED, which would hide a missing flush).
ENV = {**{k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}, "PYTHONPATH": str(ROOT)}


class Driven:
    """``facedown script ARGS`` with its standard input and output as pipes, driven one line at a time."""

    def __init__(self, *args: str) -> None:
        self.proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "script", *args],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     cwd=ROOT, env=ENV)
        self.pending = b""
        self.seen: list[dict[str, Any]] = []

    def send(self, item: dict[str, Any] | bytes) -> None:
        """Write one line (a JSON object, or raw bytes as they are) and let it go at once."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(item if isinstance(item, bytes) else json.dumps(item).encode() + b"\n")
        self.proc.stdin.flush()

    def event(self, timeout: float = ANSWER_S) -> dict[str, Any]:
        """The next event printed, waiting at most ``timeout`` seconds; fails saying what came so far."""
        assert self.proc.stdout is not None
        end = time.monotonic() + timeout
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.pending:
            left = end - time.monotonic()
            ready, _, _ = select.select([fd], [], [], max(0.0, left))
            if not ready:
                self.close()
                raise AssertionError(f"no event within {timeout:.0f} s of writing the line (the script is not "
                                     f"answering line by line); events so far: {[e['event'] for e in self.seen]}")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise AssertionError(f"the script ended before the event; stderr: {self.stderr()}")
            self.pending += chunk
        line, self.pending = self.pending.split(b"\n", 1)
        self.seen.append(json.loads(line))
        return self.seen[-1]

    def expect(self, name: str, **keys: Any) -> dict[str, Any]:
        ev = self.event()
        assert ev["event"] == name and all(ev.get(k) == v for k, v in keys.items()), (name, keys, ev)
        return ev

    def stderr(self) -> str:
        assert self.proc.stderr is not None
        return self.proc.stderr.read().decode("utf-8", "replace")

    def finish(self) -> tuple[int, str, str]:
        """Close standard input; the exit status, the rest of standard output and standard error."""
        out, err = self.proc.communicate(timeout=ANSWER_S)
        return self.proc.returncode, (self.pending + out).decode(), err.decode()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.communicate()


def deployments(seed: int = 7) -> tuple[Any, dict[str, dict[str, str]]]:
    state = new_game("stratego")
    rng = random.Random(seed)
    return state, {side: random_deployment(state.game, side, rng) for side in state.game.sides}


def test_each_line_is_answered_before_the_next_is_written() -> None:
    state, placed = deployments()
    script = Driven("stratego", "-", "--settle-ms", "30")
    try:
        for side in state.game.sides:
            script.send({"setup": side, "pieces": placed[side]})
            script.expect("setup", player=side, status="registered")
            state.deploy(side, placed[side])
        script.send({"tick_ms": 50})
        script.expect("fixup_done")  # the board matches both deployments
        script.expect("start", player="red")
        for _ply in range(4):  # quiet moves, each answered before the next one is made
            frm, to = next((m.frm, m.to) for m in state.legal_moves() if m.to not in state.board)
            side = state.turn
            state.apply((frm, to))
            for line in ({"lift": frm}, {"tick_ms": 50}, {"place": to}, {"tick_ms": 50}):
                script.send(line)
            script.expect("move", player=side, **{"from": frm, "to": to})
            script.expect("turn", player=state.turn)
        script.send({"lift": "e3"})  # a line with nothing to answer yet, then a wrong one: the run stops there
        script.send({"jump": "e4"})
        code, rest, err = script.finish()
    finally:
        script.close()
    assert code == 2, (code, err)
    assert "facedown script: <stdin>: line 21: expected one of setup, lift" in err, err
    assert "Traceback" not in err and not rest.strip(), (rest, err)


def test_a_byte_that_is_not_utf8_names_its_line_after_the_lines_before_it_ran() -> None:
    state, placed = deployments()
    script = Driven("stratego", "-")
    try:
        script.send({"setup": "red", "pieces": placed["red"]})
        script.expect("setup", player="red", status="registered")
        script.send(b'{"tick_ms": \xff50}\n')
        code, _rest, err = script.finish()
    finally:
        script.close()
    assert code == 2
    assert "facedown script: <stdin>: line 2, column 13: byte 0xFF is not UTF-8 text (save the script as UTF-8)" in err, err
    assert "Traceback" not in err


def test_a_line_too_long_is_refused_with_its_number_without_reading_it_all() -> None:
    script = Driven("stratego", "-")
    try:
        script.send(b"# a comment\n")
        try:
            script.send(b"[" + b"1," * 40_000)  # no end of line yet: more than 64 KiB of one line
        except BrokenPipeError:  # it stopped reading after 64 KiB, before the rest was written: as it should
            pass
        deadline = time.monotonic() + ANSWER_S
        while script.proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert script.proc.poll() is not None, "still reading a line of 80 KB: the line length is not bounded"
        code, _rest, err = script.finish()
    finally:
        script.close()
    assert code == 2
    assert "facedown script: <stdin>: line 2 is longer than a script line may be (more than 64 kB without a line end)" in err, err


def test_a_closed_standard_input_is_said_so() -> None:
    done = subprocess.run(["sh", "-c", 'exec "$0" -m controller.cli script stratego - <&-', sys.executable],
                          capture_output=True, cwd=ROOT, env=ENV, timeout=60)
    assert done.returncode == 2 and b"<stdin>: standard input is closed" in done.stderr, done.stderr


def test_a_file_and_standard_input_give_the_same_events(tmp_path: Path) -> None:
    state, placed = deployments(seed=11)
    lines = [{"setup": side, "pieces": placed[side]} for side in state.game.sides] + [{"tick_ms": 50}]
    for side in state.game.sides:
        state.deploy(side, placed[side])
    frm, to = next((m.frm, m.to) for m in state.legal_moves() if m.to not in state.board)
    lines += [{"lift": frm}, {"tick_ms": 50}, {"place": to}, {"tick_ms": 50}]
    text = "".join(json.dumps(x) + "\n" for x in lines)
    path = tmp_path / "game.jsonl"
    path.write_text("\ufeff" + text, encoding="utf-8")  # a byte-order mark, as some editors write, is dropped
    run = [sys.executable, "-m", "controller.cli", "script", "stratego"]
    from_file = subprocess.run([*run, str(path)], capture_output=True, cwd=ROOT, env=ENV, timeout=60, check=True)
    from_stdin = subprocess.run([*run, "-"], input=path.read_bytes(), capture_output=True, cwd=ROOT, env=ENV,
                                timeout=60, check=True)
    events = [json.loads(x)["event"] for x in from_stdin.stdout.splitlines()]
    assert from_stdin.stdout == from_file.stdout and events == ["setup", "setup", "fixup_done", "start", "move", "turn"], events
