"""Games made for measuring and testing: long seeded Stratego games as journal events, and a judged move played at
the table as the sensor events players make. Benchmarks and tests both import it (benchmarks never import tests/)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from controller.referee.journal import Event
from controller.referee.replay import iter_replay_steps, rulings
from controller.rules import ARBITER, GameState, Ruling, new_game
from controller.rules.deploy import random_deployment


def long_game(plies: int, seed: int, options: dict[str, Any] | None = None) -> list[Event]:
    """The journal events of a seeded random Stratego game of ``plies`` moves, with no draw by moves without a capture.

    Mostly quiet moves (an attack one move in 200) so that the flags survive long enough; still real rulings."""
    rng = random.Random(seed)
    opts = {"no_capture_draw": None, **(options or {})}
    state = new_game("stratego", opts)
    events = [Event(1, "game", {"game": "stratego", "options": dict(state.options)}, 0.0)]
    for side in state.game.sides:
        placement = random_deployment(state.game, side, rng)
        state.deploy(side, placement)
        events.append(Event(len(events) + 1, "deploy", {"side": side, "placement": placement}, 0.0))
    while state.ply < plies:
        assert state.phase == "play", f"seed {seed}: the random game ended at ply {state.ply}"
        moves = state.legal_moves()
        quiet = [m for m in moves if m.to not in state.board]
        move = rng.choice(quiet if quiet and rng.random() < 0.995 else moves)
        side = state.turn
        state.apply(move)
        events.append(Event(len(events) + 1, "move", {"side": side, "from": move.frm, "to": move.to}, 0.0))
    return events


def prefix(events: list[Event], plies: int) -> list[Event]:
    """The events up to and including the ``plies``-th move."""
    moves = [i for i, e in enumerate(events) if e.kind == "move"]
    return events[: moves[plies - 1] + 1]


def replay_as_the_web_does(events: list[Event]) -> int:
    """Encode each step as it comes, as the web app's replay does; the byte count, so nothing is optimised away."""
    return sum(len(json.dumps(step)) for step in iter_replay_steps(events, ARBITER))


def walk_rulings(events: list[Event]) -> int:
    """Walk every ruling of the game with the state after it (the board's size summed, so the walk is not skipped)."""
    return sum(len(state.board) for _ruling, state in rulings(events))


def fixup_stations(before: dict[str, int], frm: str, to: str, state: GameState) -> tuple[list[str], list[str]]:
    """After the move ``frm``-``to`` was judged: the stations to lift, then those to place, so the table (the mover
    standing on ``to``, any enemy piece in hand) matches the engine's board. ``before`` is station -> uid before."""
    physical = dict(before)
    physical[to] = physical.pop(frm)
    after = {s: p.uid for s, p in state.board.items()}
    changed = sorted(s for s in set(physical) | set(after) if physical.get(s) != after.get(s))
    return [s for s in changed if s in physical], [s for s in changed if s in after]


def play_physically(state: GameState, frm: str, to: str, act: Callable[[str, str], None]) -> Ruling:
    """Judge ``frm``-``to`` and do it at the table through ``act(kind, station)``: lift, (lift the enemy), place,
    then the fix-up the ruling asks for. No noise; see random_game_script for that."""
    before = {s: p.uid for s, p in state.board.items()}
    attack = to in state.board
    ruling = state.apply((frm, to))
    act("lift", frm)
    if attack:
        act("lift", to)
    act("place", to)
    lifts, places = fixup_stations(before, frm, to, state)
    for s in lifts:
        act("lift", s)
    for s in places:
        act("place", s)
    return ruling
