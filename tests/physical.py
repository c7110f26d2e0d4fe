"""Test helper: renders random games of the engine into physical sensor-event scripts (with optional noise) for the
simulated board, as players would produce them at the table (one move at a time: benchmarks/seeded_games.py)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from benchmarks.seeded_games import fixup_stations
from controller.rules import GameState, Move, new_game
from controller.rules.deploy import random_deployment


@dataclass
class Noise:
    """Which human and sensor untidiness to add; all off by default."""

    bounce: float = 0.0  # chance a placed/lifted piece bounces (open/close shorter than settle)
    slide: float = 0.0  # chance a moved piece is slid over an intermediate station
    swap_lift_order: float = 0.0  # chance the defender is lifted before the attacker
    change_mind: float = 0.0  # chance the player first lifts another own piece and puts it back
    long_pause: float = 0.0  # chance of a long pause while a piece is in hand
    faults: float = 0.0  # chance, before each move, of one injected fault (knocked piece, wrong side, second move)


@dataclass
class Script:
    """Lines of a `facedown script` file and the engine's own rulings for the same game."""

    lines: list[dict[str, Any]] = field(default_factory=list)
    rulings: list[dict[str, Any]] = field(default_factory=list)
    state: GameState | None = None
    faults: list[str] = field(default_factory=list)
    game_sides: tuple[str, ...] = ()

    def text(self) -> list[str]:
        return [json.dumps(x) for x in self.lines]


def _tick(script: Script, ms: int) -> None:
    script.lines.append({"tick_ms": ms})


def _act(script: Script, kind: str, station: str, rng: random.Random, noise: Noise, settle: int) -> None:
    if rng.random() < noise.bounce:
        # contact chatter shorter than the settle time, before the real change
        other = "place" if kind == "lift" else "lift"
        script.lines.append({kind: station})
        _tick(script, max(1, settle // 4))
        script.lines.append({other: station})
        _tick(script, max(1, settle // 4))
    script.lines.append({kind: station})
    _tick(script, settle + 5 + (rng.randrange(3000) if rng.random() < noise.long_pause else rng.randrange(100)))


#: Picks the next move from the legal ones (default: uniformly at random).
Policy = Callable[[GameState, list[Move], random.Random], Move]


def random_game_script(game: str, seed: int, *, max_plies: int = 60, noise: Noise | None = None, settle: int = 30, options: dict | None = None,
                       policy: Policy | None = None) -> Script:
    """A random legal game rendered as physical events, with the engine's rulings alongside; ``policy`` may steer
    the moves (towards a game's special rules) instead of picking uniformly."""
    rng = random.Random(seed)
    noise = noise or Noise()
    state = new_game(game, options)
    script = Script()
    for side in state.game.sides:
        placement = random_deployment(state.game, side, rng, options)
        script.lines.append({"setup": side, "pieces": placement})
        state.deploy(side, placement)
    _tick(script, settle + 10)
    while state.phase == "play" and state.ply < max_plies:
        moves = state.legal_moves()
        frm, to = policy(state, moves, rng) if policy is not None else rng.choice(moves)
        side = state.turn
        mine = [s for s, p in state.board.items() if p.owner == side and s not in (frm, to)]
        if mine and rng.random() < noise.change_mind:
            c = rng.choice(mine)
            _act(script, "lift", c, rng, noise, settle)
            _act(script, "place", c, rng, noise, settle)
        attack = to in state.board
        before_uid = {s: p.uid for s, p in state.board.items()}
        empty = [s for s in state.game.station_ids if s not in state.board and state.topo.passable[s] and s != to]
        theirs = [s for s, p in state.board.items() if p.owner != side and s != to]
        fault = rng.choice(["knock", "wrong_side"]) if rng.random() < noise.faults and empty and theirs and mine else None
        if fault == "wrong_side":
            # a piece of the side not to move walks: a mismatch, then it is put back
            c, d = rng.choice(theirs), rng.choice(empty)
            _act(script, "lift", c, rng, noise, settle)
            _act(script, "place", d, rng, noise, settle)
            _act(script, "lift", d, rng, noise, settle)
            _act(script, "place", c, rng, noise, settle)
            script.faults.append(fault)
        ruling = state.apply((frm, to))
        if attack and rng.random() < noise.swap_lift_order:
            _act(script, "lift", to, rng, noise, settle)
            _act(script, "lift", frm, rng, noise, settle)
        else:
            _act(script, "lift", frm, rng, noise, settle)
            if fault == "knock":
                # while moving, the player knocks another own piece off, then puts it back
                c = rng.choice(mine)
                _act(script, "lift", c, rng, noise, settle)
                _act(script, "place", c, rng, noise, settle)
                script.faults.append(fault)
            if attack:
                _act(script, "lift", to, rng, noise, settle)
        if not attack and rng.random() < noise.slide:
            # slide across an empty neighbour of the destination: it must not register (shorter than settle)
            empties = [s for s in state.game.station_ids if s not in state.board and s not in (frm, to)]
            if empties:
                via = rng.choice(empties)
                script.lines.append({"place": via})
                _tick(script, max(1, settle // 3))
                script.lines.append({"lift": via})
        _act(script, "place", to, rng, noise, settle)
        entry = {"event": ruling.kind, "from": frm, "to": to, "player": side}
        if attack:
            entry["outcome"] = ruling.outcome
        script.rulings.append(entry)
        # fix-ups: make the table match the engine's board
        lifts, places = fixup_stations(before_uid, frm, to, state)
        for s in lifts:
            _act(script, "lift", s, rng, noise, settle)
        for s in places:
            _act(script, "place", s, rng, noise, settle)
        if ruling.result is not None:
            script.rulings.append({"event": "game_over", "winners": list(ruling.result.winners), "reason": ruling.result.reason})
    script.state = state
    script.game_sides = state.game.sides
    return script
