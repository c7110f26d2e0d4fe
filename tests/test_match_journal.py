"""`facedown match --journal`: bot games kept in a real SQLite journal replay through the engine to the same end,
and `facedown record` reads them like any table's game."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from controller.bots import GreedyBot, RandomBot
from controller.bots.arena import play_game
from controller.cli import main
from controller.messages import render
from controller.referee.arena_record import ArenaRecorder
from controller.referee.journal import Journal
from controller.referee.replay import rebuild


def _pieces(state: Any) -> dict[str, tuple[str, str]]:
    return {s: (p.owner, p.type) for s, p in state.board.items()}


def test_every_game_of_a_match_is_journaled_and_replays_to_its_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "journal.sqlite"
    assert main(["match", "luzhanqi", "--red", "greedy", "--blue", "random", "--games", "3", "--max-plies", "120",
                 "--seed", "4", "--json", "--journal", str(path)]) == 0
    records = json.loads(capsys.readouterr().out)["records"]
    assert [r["journal_id"] for r in records] == [1, 2, 3]
    with Journal(path, create=False) as journal:
        for rec in records:
            events = journal.events(rec["journal_id"])
            start = events[0].data
            assert start["board"] == "arena" and start["seats"] == rec["seats"]  # seats named by their bots
            final = rebuild(events)
            assert final.phase == "over"
            assert sorted(final.result.winners) == sorted(rec["winners"])
            moves = [e for e in events if e.kind == "move"]
            assert len(moves) == rec["plies"]
            if rec["draw"] and rec["plies"] == 120:  # stopped by the arena, said in the players' words
                assert final.result.reason == {"code": "verdict.ply_cap", "params": {"plies": 120}}
                assert render(final.result.reason, "zh-Hans") == "对局达到 120 步上限，判和"
    assert main(["record", "list", "--journal", str(path)]) == 0
    listing = capsys.readouterr().out
    assert len(listing.strip().splitlines()) == 3 and "luzhanqi" in listing
    assert main(["record", "show", "2", "--journal", str(path)]) == 0
    assert "1. red" in capsys.readouterr().out


def test_a_won_game_replays_to_the_same_board(tmp_path: Path) -> None:
    recorder = ArenaRecorder()
    names = {"red": "greedy", "blue": "random"}
    record = play_game("stratego", {"red": GreedyBot(), "blue": RandomBot()}, names, seed=3, max_plies=3000,
                       watch=recorder.watch)
    assert record.winners  # greedy against random ends the game long before the cap
    with Journal(tmp_path / "j.sqlite") as journal:
        gid = recorder.write(journal, names, record.failures, 3000)
        final = rebuild(journal.events(gid))
    assert recorder.state is not None
    assert final.result == recorder.state.result
    assert _pieces(final) == _pieces(recorder.state)
    assert final.ply == record.plies


class _CrashesAtMove(RandomBot):
    """A random bot whose program fails at its fifth move."""

    def __init__(self) -> None:
        super().__init__()
        self.moves = 0

    def choose_move(self, view: Any, time_ms: float) -> tuple[str, str]:
        self.moves += 1
        if self.moves == 5:
            raise RuntimeError("boom")
        return super().choose_move(view, time_ms)


def test_a_seat_put_out_because_its_bot_failed_is_journaled_in_order_with_the_reason(tmp_path: Path) -> None:
    names = {"red": "random", "green": "crasher", "blue": "random", "purple": "random"}
    bots = {"red": RandomBot(), "green": _CrashesAtMove(), "blue": RandomBot(), "purple": RandomBot()}
    recorder = ArenaRecorder()
    record = play_game("siguo", bots, names, seed=2, max_plies=200, watch=recorder.watch)
    assert [f["side"] for f in record.failures] == ["green"] and record.failures[0]["why"] == "crashed"
    with Journal(tmp_path / "j.sqlite") as journal:
        gid = recorder.write(journal, names, record.failures, 200)
        events = journal.events(gid)
    outs = [i for i, e in enumerate(events) if e.kind == "arbiter"]
    assert len(outs) == 1
    out = events[outs[0]].data
    assert out["side"] == "green"
    # put out after its fifth turn came (four moves of its own made), before the next move
    green_moves = [e for e in events[:outs[0]] if e.kind == "move" and e.data["side"] == "green"]
    assert len(green_moves) == 4
    assert render(out["reason"], "en") == "Green's computer player stopped: it crashed"
    assert "程序崩溃" in render(out["reason"], "zh-Hans")
    final = rebuild(events)
    assert recorder.state is not None
    assert set(final.out) == set(recorder.state.out) and "green" in final.out
    assert _pieces(final) == _pieces(recorder.state)


def test_a_game_that_never_started_is_not_journaled_and_the_match_goes_on(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "j.sqlite"
    assert main(["match", "luzhanqi", "--red", "cmd:/nonexistent/bot", "--blue", "random", "--games", "2",
                 "--max-plies", "30", "--journal", str(path)]) == 0
    captured = capsys.readouterr()
    assert captured.err.count("not journaled: the game never started") == 2
    assert "journaled as" not in captured.out
    with Journal(path, create=False) as journal:
        assert journal.games() == []


def test_a_journal_that_cannot_be_used_is_refused_before_any_game(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "notes.sqlite"
    bad.write_text("my notes, not a journal\n", encoding="utf-8")
    assert main(["match", "luzhanqi", "--red", "random", "--blue", "random", "--journal", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "cannot keep games in the journal" in err and str(bad) in err and "not a FaceDown journal" in err
    assert bad.read_text(encoding="utf-8") == "my notes, not a journal\n"
