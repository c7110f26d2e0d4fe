"""A remote game of four seats (siguo, four-player Junqi) through a real Mosquitto: one host, four simulated boards,
each told every other seat's move and in step after every ruling, none sent a kind it may not know."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from test_remote import audit, play_ply, start_game

from harness.broker import Mosquitto


@pytest.fixture()
def broker(tmp_path: Path) -> Any:
    b = Mosquitto(tmp_path)
    b.start()
    yield b
    b.stop()


def test_four_boards_play_siguo_through_the_host(broker: Any, tmp_path: Path) -> None:
    host, boards = start_game("siguo", broker, tmp_path, seed=11)
    try:
        assert sorted(boards) == sorted(host.seats) and len(boards) == 4
        rng = random.Random(7)
        movers: set[str] = set()
        attacks = wrong = 0
        for _ in range(40):
            st = host.session.state
            if st.phase != "play":
                break
            movers.add(st.turn)
            wrong += play_ply(host, boards, rng, wrong_first=wrong == 0)
            attacks += st.history[-1].kind == "attack"
        assert movers == set(host.seats), "not every seat moved"
        assert attacks >= 2, "the scripted game made too few attacks to test fix-ups on four boards"
        assert wrong, "no token was moved wrongly"
        truth = {s: (p.owner, p.uid) for s, p in host.session.state.board.items()}
        for b in boards.values():
            st = b.session.state
            assert (st.ply, st.turn) == (host.session.state.ply, host.session.state.turn)
            assert {s: (p.owner, p.uid) for s, p in st.board.items()} == truth
            assert set(b.sim.raw_occupied()) == set(truth)
            assert b.session.pending is None and b.session.mismatch is None
            assert audit(b, host) > 0
    finally:
        for b in boards.values():
            b.stop()
        host.stop()
