"""Write-ahead: the session journals a move (and an arbiter's action) before the engine's state moves on, so a journal
that cannot take it leaves the game exactly as the journal says it is."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from controller.referee.journal import Journal
from controller.referee.replay import rebuild
from controller.referee.session import Session
from controller.rules import ARBITER, new_game, view
from controller.rules.deploy import random_deployment
from controller.sensing.sim import SimBoard


class FailingJournal(Journal):
    """A real SQLite journal whose writes fail on demand (a full disk, a pulled SD card)."""

    fail = False

    def append(self, game_id: int, kind: str, data: dict[str, Any]) -> int:
        if self.fail:
            raise OSError("no space left on device")
        return super().append(game_id, kind, data)


def _started(tmp_path: Path) -> tuple[Session, FailingJournal, SimBoard, list[int]]:
    journal = FailingJournal(tmp_path / "j.sqlite")
    state = new_game("stratego")
    gid = journal.new_game("stratego", {}, board="sim")
    session = Session(state, journal=journal, game_id=gid)
    rng = random.Random(3)
    for side in state.game.sides:
        assert session.register_setup(side, random_deployment(state.game, side, rng)) == []
    board = SimBoard(state.game.station_ids, settle_ms=20, clock=lambda: 0.0)
    t = [0]
    board.fill(list(state.board), t[0])
    session.on_snapshot(board.tick(t[0] + 25))
    assert state.phase == "play"
    return session, journal, board, t


def _physical(board: SimBoard, session: Session, t: list[int], kind: str, station: str) -> None:
    t[0] += 30
    board.place(station, t[0]) if kind == "place" else board.lift(station, t[0])
    t[0] += 30
    snap = board.tick(t[0])
    if snap is not None:
        session.on_snapshot(snap)


def _same_as_journal(session: Session, journal: Journal) -> None:
    replayed = rebuild(journal.events(session.game_id))
    assert view(replayed, ARBITER) == view(session.state, ARBITER)
    assert replayed.ply == session.state.ply and replayed.turn == session.state.turn


def test_a_move_the_journal_refuses_does_not_move_the_game(tmp_path: Path) -> None:
    session, journal, board, t = _started(tmp_path)
    st = session.state
    move = next(m for m in st.legal_moves() if m.to not in st.board)
    ply, before = st.ply, dict(st.board)
    _physical(board, session, t, "lift", move.frm)
    journal.fail = True
    with pytest.raises(OSError, match="no space left"):
        _physical(board, session, t, "place", move.to)
    assert session.state.ply == ply and session.state.board == before and not session.state.history
    _same_as_journal(session, journal)
    journal.close()


def test_an_arbiters_end_and_put_out_the_journal_refuses_change_nothing(tmp_path: Path) -> None:
    session, journal, _board, _t = _started(tmp_path)
    journal.fail = True
    with pytest.raises(OSError):
        session.end(("red",), "blue resigned")
    assert session.state.phase == "play" and session.state.result is None
    with pytest.raises(OSError):
        session.put_out("blue", "time rule")
    assert session.state.out == {} and session.state.phase == "play"
    journal.fail = False
    session.end(("red",), "blue resigned")
    assert session.state.result is not None and session.state.result.reason == {"code": "verdict.arbiter", "params": {"note": "blue resigned"}}
    _same_as_journal(session, journal)
    journal.close()


def test_moves_journaled_ahead_replay_to_the_same_game(tmp_path: Path) -> None:
    session, journal, board, t = _started(tmp_path)
    rng = random.Random(9)
    for _ in range(12):
        st = session.state
        if st.phase != "play":
            break
        frm, to = rng.choice(st.legal_moves())
        ply = st.ply
        _physical(board, session, t, "lift", frm)
        if to in session.expected_board():
            _physical(board, session, t, "lift", to)
        _physical(board, session, t, "place", to)
        assert session.state.ply == ply + 1
        # do what the referee asks, so the next move starts from a matching board
        for _ in range(2):
            expected, actual = set(session.expected_board()), set(board.raw_occupied())
            for s in sorted(actual - expected):
                _physical(board, session, t, "lift", s)
            for s in sorted(expected - actual):
                _physical(board, session, t, "place", s)
        for step in next((e.public["steps"] for e in reversed(session.log) if e.public["event"] == "fixup"), []):
            if step["station"] in session.expected_board() and session.recognizer.fixing:
                _physical(board, session, t, "lift", step["station"])
                _physical(board, session, t, "place", step["station"])
        _same_as_journal(session, journal)
    journal.close()
