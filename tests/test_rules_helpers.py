"""Shared helpers for the rules tests (hand-built positions, random deployments), and tests of the helpers themselves.

``position`` builds a game in its play phase with exactly the pieces given, without deployment rules: it makes a
state with ``new_game``, fills ``state.board`` with pieces, sets ``phase = 'play'`` and starts the game's hooks,
just as ``GameState._start`` does, but without handing the turn on (so a lone piece with no enemy is fine for
counting moves). Other test modules import it with ``from test_rules_helpers import position``.
"""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from controller.rules import GameDef, GameState, new_game
from controller.rules.deploy import random_deployment
from controller.rules.state import Piece


def position(
    game: str | GameDef,
    pieces: Mapping[str, tuple[str, str]],
    *,
    turn: str | None = None,
    options: Mapping[str, Any] | None = None,
) -> GameState:
    """A game in play with ``pieces`` = {station: (side, piece id)}; uids follow the order given."""
    state = new_game(game, dict(options or {}))
    for uid, (station, (side, kind)) in enumerate(pieces.items(), 1):
        assert station in state.game.station_by_id, station
        assert kind in state.game.piece_by_id, kind
        state.board[station] = Piece(uid, kind, side)
    state.phase = "play"
    state.turn = turn or state.game.sides[0]
    for hook in state.hooks:
        hook.start(state)
    return state


def deployed(game: str, seed: int, options: Mapping[str, Any] | None = None) -> GameState:
    """A game in play after a random valid deployment of every side, from ``seed``."""
    rng = random.Random(seed)
    state = new_game(game, dict(options or {}))
    for side in state.game.sides:
        state.deploy(side, random_deployment(state.game, side, rng, state.options))
    return state


def test_position_places_exactly_the_pieces_given() -> None:
    state = position("stratego", {"a1": ("red", "scout"), "j10": ("blue", "flag")}, turn="blue")
    assert state.phase == "play" and state.turn == "blue"
    assert {s: (p.owner, p.type) for s, p in state.board.items()} == {"a1": ("red", "scout"), "j10": ("blue", "flag")}
    assert state.board["a1"].known_to == {"red"} and not state.board["a1"].public
    assert "two_squares" in state.hook_data


def test_deployed_gives_a_full_board_in_play() -> None:
    state = deployed("luzhanqi", 3)
    assert state.phase == "play"
    assert len(state.board) == 2 * sum(p.count for p in state.game.pieces)
