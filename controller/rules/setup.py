"""Checks a side's deployment against the game's setup rules and reports every defect at once, each with its station."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

from .errors import SetupProblem
from .model import GameDef
from .say import say


def check_deployment(game: GameDef, side: str, placement: Mapping[str, str], options: Mapping[str, Any] | None = None) -> list[SetupProblem]:
    """Every problem of ``placement`` ({station: piece id}) for ``side``; an empty list means it is valid."""
    opts = game.resolve_options(options) if options is None or set(options) != set(game.options) else options
    game = game.for_options(opts)
    problems: list[SetupProblem] = []
    if side not in game.sides:
        return [SetupProblem(None, f"{game.id} has no side {side!r}; sides are {', '.join(game.sides)}",
                             say("setup.no_side", text=str(side)))]
    zones = game.setup.zones
    home = zones[game.setup.deploy_zone][side]
    counts: Counter[str] = Counter()
    for station, pid in sorted(placement.items(), key=lambda kv: _order(game, kv[0])):
        st = game.station_by_id.get(station)
        if st is None:
            problems.append(SetupProblem(station, "no such station on this board", say("setup.no_station", station=station)))
            continue
        ptype = game.piece_by_id.get(pid)
        if ptype is None:
            problems.append(SetupProblem(station, f"unknown piece {pid!r}", say("setup.unknown_piece", station=station, text=str(pid))))
            continue
        counts[pid] += 1
        if station not in home:
            problems.append(SetupProblem(station, f"{ptype.name} is outside {side}'s deployment area",
                                         say("setup.outside_area", piece=pid, station=station, side=side)))
            continue
        if not game.station_kinds[st.kind].passable:
            problems.append(SetupProblem(station, f"nothing may stand on a {st.kind}",
                                         say("setup.impassable", station=station, where=say(f"kind.{st.kind}"))))
            continue
        for c in game.setup.constraints:
            if not c.when.holds(opts):
                continue
            if c.empty_kinds is not None and st.kind in c.empty_kinds:
                problems.append(SetupProblem(station, c.message or f"a {st.kind} must be empty at the start",
                                             say("setup.must_be_empty", station=station, where=say(f"kind.{st.kind}"))))
            if c.pieces is None or pid not in c.pieces:
                continue
            bad = (
                (c.only_zone is not None and station not in zones[c.only_zone][side])
                or (c.not_zone is not None and station in zones[c.not_zone][side])
                or (c.only_kinds is not None and st.kind not in c.only_kinds)
            )
            if bad:
                problems.append(SetupProblem(station, c.message or f"{ptype.name} may not stand here",
                                             say("setup.not_here", piece=pid, station=station)))
    for ptype in game.pieces:
        have = counts.get(ptype.id, 0)
        if have != ptype.count:
            problems.append(SetupProblem(None, f"{ptype.name} ({ptype.zh}): {have} placed, {ptype.count} expected",
                                         say("setup.count", piece=ptype.id, placed=have, expected=ptype.count)))
    return problems


def _order(game: GameDef, station: str) -> int:
    return game.station_index.get(station, len(game.stations))
