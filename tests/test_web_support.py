"""The web tests' hand-driven table (harness/web_game.py) plays a real game physically."""

from __future__ import annotations

from pathlib import Path

from harness.web_game import Game


def test_helper_plays_a_physical_game(tmp_path: Path) -> None:
    g = Game("stratego", tmp_path)
    g.start()
    for _ in range(12):
        if not g.random_move():
            break
    assert g.table.state.ply >= 1
    assert set(g.board.raw_occupied()) == set(g.session.expected_board())
