"""Helpers shared by the Navy chess tests (no tests of their own): deployments with chosen pieces on chosen stations,
and physical scripts."""

from __future__ import annotations

import io
import json
from collections.abc import Iterable, Mapping
from typing import Any

from controller.commands.script import run_script
from controller.rules import GameDef, GameState, new_game
from controller.rules.deploy import allowed_stations
from controller.rules.setup import check_deployment

SETTLE = 30


def fill(game: GameDef, side: str, fixed: Mapping[str, str], *, empty: Iterable[str] = (), options: Mapping[str, Any] | None = None) -> dict[str, str]:
    """A valid deployment of ``side`` with ``fixed`` {station: piece}, the rest of the army anywhere else allowed
    except ``empty``, furthest from the front first."""
    opts = game.resolve_options(options)
    game = game.for_options(opts)
    placement = dict(fixed)
    skip = set(empty) | set(fixed)
    home = {s.id: s for s in game.stations}
    middle = (min(s.y for s in game.stations) + max(s.y for s in game.stations)) / 2
    left = {p.id: p.count - sum(v == p.id for v in fixed.values()) for p in game.pieces}
    allowed = {p.id: allowed_stations(game, side, p.id, opts) for p in game.pieces}
    for pid in sorted(left, key=lambda k: len(allowed[k])):
        spots = sorted((s for s in allowed[pid] if s not in skip and s not in placement), key=lambda s: -abs(home[s].y - middle))
        for s in spots[: left[pid]]:
            placement[s] = pid
    problems = check_deployment(game, side, placement, opts)
    assert not problems, problems
    return placement


def started(game: str, red: Mapping[str, str], blue: Mapping[str, str], options: Mapping[str, Any] | None = None) -> GameState:
    state = new_game(game, dict(options or {}))
    state.deploy("red", red)
    state.deploy("blue", blue)
    return state


def tick(lines: list[dict], ms: int = SETTLE + 5) -> None:
    lines.append({"tick_ms": ms})


def move(lines: list[dict], frm: str, to: str) -> None:
    """A player lifts the piece on ``frm`` and puts it on empty ``to``."""
    for item in ({"lift": frm}, {"place": to}):
        lines.append(item)
        tick(lines)


def attack(lines: list[dict], frm: str, to: str) -> None:
    """A player lifts the piece on ``frm``, lifts the enemy on ``to`` and puts the own piece on ``to``."""
    for item in ({"lift": frm}, {"lift": to}, {"place": to}):
        lines.append(item)
        tick(lines)


def lift(lines: list[dict], station: str) -> None:
    lines.append({"lift": station})
    tick(lines)


def place(lines: list[dict], station: str) -> None:
    lines.append({"place": station})
    tick(lines)


def events(game: str, lines: list[dict], options: Mapping[str, Any] | None = None) -> list[dict]:
    out = io.StringIO()
    run_script(game, [json.dumps(x) for x in lines], out, options=dict(options or {}), settle_ms=SETTLE, everything=True)
    return [json.loads(line) for line in out.getvalue().splitlines()]
