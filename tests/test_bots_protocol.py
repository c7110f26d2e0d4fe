"""The bot protocol with real external programs: the transcript in docs/bots.md replayed against
`python -m controller.bots.example`, and programs that crash, hang, break the protocol or answer illegal moves."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from controller.bots import RandomBot, find_bot
from controller.bots.arena import play_game
from controller.bots.process import ProcessBot
from controller.cli import main

ROOT = Path(__file__).resolve().parents[1]
PY = sys.executable


def _transcript() -> list[tuple[str, str]]:
    text = (ROOT / "docs" / "bots.md").read_text(encoding="utf-8")
    block = text.split("```transcript\n", 1)[1].split("```", 1)[0]
    return [(line[0], line[2:]) for line in block.splitlines() if line.strip()]


def test_the_transcript_in_the_docs_is_what_the_example_bot_answers() -> None:
    lines = _transcript()
    assert lines[0] == (">", '{"type":"hello","protocol":1}')
    assert {d for d, _ in lines} == {">", "<"}
    proc = subprocess.Popen([PY, "-m", "controller.bots.example", "random"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            text=True, cwd=ROOT)
    assert proc.stdin is not None and proc.stdout is not None
    try:
        for direction, line in lines:
            message = json.loads(line)
            if direction == ">":
                proc.stdin.write(line + "\n")
                proc.stdin.flush()
            else:
                got = proc.stdout.readline()
                assert json.loads(got) == message, f"the bot answered {got.strip()[:200]}, the docs say {line[:200]}"
        assert proc.wait(timeout=10) == 0  # it quits on 'quit'
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_the_transcript_moves_are_legal_and_the_refused_move_is_not_repeated() -> None:
    lines = _transcript()
    moves = [json.loads(t) for d, t in lines if d == "<" and json.loads(t)["type"] == "move"]
    refused = [json.loads(t) for d, t in lines if d == ">" and json.loads(t)["type"] == "refused"]
    assert len(moves) == 2 and len(refused) == 1
    assert (moves[1]["from"], moves[1]["to"]) != (refused[0]["from"], refused[0]["to"])


def test_an_external_bot_plays_whole_games_through_the_pipe() -> None:
    bot = find_bot(f"cmd:{PY} -m controller.bots.example greedy")
    assert isinstance(bot, ProcessBot)
    try:
        record = play_game("luzhanqi", {"red": bot, "blue": RandomBot()}, {"red": "ext", "blue": "random"}, seed=4, max_plies=40)
    finally:
        bot.close()
    assert record.failures == []
    assert record.plies == 40 or record.winners
    assert bot.proc is None  # closed: the program was told to quit


def _script(tmp_path: Path, body: str) -> str:
    path = tmp_path / "bot.py"
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return f"cmd:{PY} {path}"


HELLO = """
    import json, sys
    def say(m):
        print(json.dumps(m), flush=True)
    for line in sys.stdin:
        m = json.loads(line)
        if m["type"] == "hello":
            say({"type": "hello", "protocol": 1, "name": "test"})
        elif m["type"] == "new_game":
            say({"type": "ready"})
        elif m["type"] == "go" and m["want"] == "setup":
            from controller.bots.setups import built_setup
            from controller.rules import load_game
            import random
            say({"type": "setup", "placement": built_setup(load_game("luzhanqi"), SEAT, random.Random(1))})
        elif m["type"] == "go":
            MOVE
"""


@pytest.mark.parametrize(("move", "why", "words"), [
    ("sys.exit(5)", "crashed", "exit status 5"),
    ("import time; time.sleep(30)", "timeout", "no answer"),
    ("print('not json', flush=True)", "protocol", "not JSON"),
    ("say({'type': 'move', 'from': 'A0', 'to': 'A0'})", "illegal", "refused moves"),
    ("say({'type': 'setup', 'placement': {}})", "protocol", "where a 'move' was asked"),
])
def test_a_program_that_fails_loses_the_game_with_a_clear_reason(tmp_path: Path, move: str, why: str, words: str) -> None:
    cmd = _script(tmp_path, HELLO.replace("SEAT", '"red"').replace("MOVE", move))
    bot = ProcessBot(cmd[4:], grace_s=2.0)
    try:
        record = play_game("luzhanqi", {"red": bot, "blue": RandomBot()}, {"red": "ext", "blue": "random"}, seed=1,
                           max_plies=20, time_ms=200)
    finally:
        bot.close()
    assert record.winners == ("blue",)
    assert [f["why"] for f in record.failures] == [why]
    assert words in record.failures[0]["message"]


def test_match_prints_the_failure_of_a_program_that_cannot_start(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "luzhanqi", "--red", "cmd:/nonexistent/bot", "--blue", "random", "--games", "1"]) == 0
    out = capsys.readouterr().out
    assert "crashed" in out and "cannot start it" in out
    with pytest.raises(ValueError, match="needs a program"):
        find_bot("cmd:  ")
