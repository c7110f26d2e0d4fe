"""Replay, the record text and the chase rule's bookkeeping grow linearly with the game: a 5,000-ply game costs at
most 6x a 1,000-ply one, in the engine's work (its calls to judge, copy, generate moves and draw views: a count,
the same on any machine and under any load) and in peak memory (tracemalloc). Ratios only; the time figures are in
benchmarks/pi_budget.py and ``benchmarks/replay.py --scaling``."""

from __future__ import annotations

import random
import tracemalloc
from collections.abc import Callable
from typing import Any

import pytest

from benchmarks.seeded_games import long_game, prefix, replay_as_the_web_does, walk_rulings
from controller import rules
from controller.commands.record import move_lines
from controller.referee.journal import Event
from controller.referee.replay import rebuild, rulings
from controller.rules import GameState, new_game
from controller.rules.deploy import random_deployment
from controller.rules.hooks import MoreSquares


@pytest.fixture(scope="module")
def game5000() -> list[Event]:
    return long_game(5000, seed=3)


#: the engine's steps whose calls measure the work: judging a move, copying a state, generating a piece's moves,
#: drawing a seat's view of the board
STEPS = [(GameState, "apply"), (GameState, "copy"), (GameState, "destinations"), (rules, "view"), (rules, "redact_ruling")]


def cost(fn: Callable[[], Any], monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    """The calls ``fn()`` makes to the engine's steps, and its peak traced memory in bytes."""
    calls = [0]

    def counted(original: Callable[..., Any]) -> Callable[..., Any]:
        def step(*args: Any, **kwargs: Any) -> Any:
            calls[0] += 1
            return original(*args, **kwargs)
        return step

    with monkeypatch.context() as mp:
        for owner, name in STEPS:
            mp.setattr(owner, name, counted(getattr(owner, name)))
        fn()
    tracemalloc.start()
    try:
        fn()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return calls[0], peak


@pytest.mark.parametrize("name,fn", [
    ("web replay (views encoded)", replay_as_the_web_does),
    ("rulings with the state after each", walk_rulings),
    ("record text", lambda events: len(move_lines(events)[1])),
])
def test_5000_plies_cost_at_most_6x_1000_plies(game5000: list[Event], name: str, fn: Callable[[list[Event]], Any],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    short, long = prefix(game5000, 1000), game5000
    w1, m1 = cost(lambda: fn(short), monkeypatch)
    w5, m5 = cost(lambda: fn(long), monkeypatch)
    assert w1 >= 1000, f"{name}: {w1} engine calls for 1,000 plies: the count misses the work"
    assert w5 <= 6 * w1, f"{name}: 5,000 plies made {w5} engine calls, 1,000 plies {w1}: {w5 / w1:.1f}x"
    assert m5 <= 6 * m1, f"{name}: 5,000 plies peaked at {m5 / 1e6:.1f} MB, 1,000 plies {m1 / 1e6:.1f} MB: {m5 / m1:.1f}x"


def test_rulings_hand_out_one_live_state_that_ends_as_the_rebuilt_game(game5000: list[Event]) -> None:
    events = prefix(game5000, 300)
    seen = {id(state) for _r, state in rulings(events)}
    assert len(seen) == 1  # no copy per ply
    *_, (last_ruling, last_state) = rulings(events)
    final = rebuild(events)
    assert last_ruling.ply == 300 == final.ply
    assert {s: (p.owner, p.type) for s, p in last_state.board.items()} == {s: (p.owner, p.type) for s, p in final.board.items()}


def chase_game(plies: int) -> Any:
    """A Stratego game of ``plies`` plies with the more-squares rule on: the red piece nearest the middle keeps
    stepping next to blue pieces when it can (a long chase); blue answers with any legal move."""
    rng = random.Random(5)
    state = new_game("stratego", {"no_capture_draw": None, "more_squares": True, "two_squares": None})
    for side in state.game.sides:
        state.deploy(side, random_deployment(state.game, side, rng))
    adjacent = MoreSquares.adjacent(state)
    while state.ply < plies and state.phase == "play":
        moves = [m for m in state.legal_moves() if m.to not in state.board]
        if state.turn == "red":
            chasing = [m for m in moves if any(n in state.board and state.board[n].owner == "blue" for n in adjacent[m.to])]
            moves = chasing or moves
        state.apply(rng.choice(moves))
    return state


def test_chase_bookkeeping_is_kept_in_place_and_copies_do_not_share_it() -> None:
    state = chase_game(200)
    chases = state.hook_data["more_squares"]
    live = [c for c in chases.values() if c is not None]
    copy = state.copy()
    for side, chase in chases.items():
        twin = copy.hook_data["more_squares"][side]
        assert (twin is None) == (chase is None)
        if chase is not None:
            assert twin is not chase and twin.positions == chase.positions and twin.positions is not chase.positions
    for chase in live:  # changing the copy's chase leaves the original alone
        before = set(chase.positions)
        copy.hook_data["more_squares"][next(s for s, c in chases.items() if c is chase)].positions.add(frozenset())
        assert chase.positions == before
