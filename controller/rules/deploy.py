"""Builds valid deployments: a random one for demos, tests and benchmarks (the caller passes the random source)."""

from __future__ import annotations

import random
from collections.abc import Mapping
from typing import Any

from .model import GameDef
from .setup import check_deployment


def allowed_stations(game: GameDef, side: str, piece: str, options: Mapping[str, Any]) -> list[str]:
    """The stations of ``side``'s deployment area where ``piece`` may stand under the setup constraints."""
    zones = game.setup.zones
    home = zones[game.setup.deploy_zone][side]
    out = []
    for st in game.stations:
        if st.id not in home or not game.station_kinds[st.kind].passable:
            continue
        ok = True
        for c in game.setup.constraints:
            if not c.when.holds(options):
                continue
            if c.empty_kinds is not None and st.kind in c.empty_kinds:
                ok = False
            if c.pieces is not None and piece in c.pieces:
                if c.only_zone is not None and st.id not in zones[c.only_zone][side]:
                    ok = False
                if c.not_zone is not None and st.id in zones[c.not_zone][side]:
                    ok = False
                if c.only_kinds is not None and st.kind not in c.only_kinds:
                    ok = False
        if ok:
            out.append(st.id)
    return out


def random_deployment(game: GameDef, side: str, rng: random.Random, options: Mapping[str, Any] | None = None) -> dict[str, str]:
    """A random valid deployment {station: piece id} for ``side``: most constrained pieces placed first."""
    opts = game.resolve_options(options)
    game = game.for_options(opts)
    for _attempt in range(100):
        allowed = {p.id: allowed_stations(game, side, p.id, opts) for p in game.pieces}
        order = sorted(game.pieces, key=lambda p: (len(allowed[p.id]), p.id))
        placement: dict[str, str] = {}
        failed = False
        for p in order:
            free = [s for s in allowed[p.id] if s not in placement]
            if len(free) < p.count:
                failed = True
                break
            for s in rng.sample(free, p.count):
                placement[s] = p.id
        if not failed and not check_deployment(game, side, placement, opts):
            return placement
    raise ValueError(f"could not build a valid deployment for {side} in {game.id}")


def completable(game: GameDef, side: str, placement: Mapping[str, str], options: Mapping[str, Any] | None = None) -> bool:
    """Can ``side``'s partial deployment ``placement`` still be completed under the setup constraints: is there a
    station for every piece still to place (a matching of the pieces left to the free allowed stations)?"""
    opts = game.resolve_options(options)
    game = game.for_options(opts)
    placed: dict[str, int] = {}
    for pid in placement.values():
        placed[pid] = placed.get(pid, 0) + 1
    left = [p.id for p in game.pieces for _ in range(p.count - placed.get(p.id, 0))]
    if any(p.count < placed.get(p.id, 0) for p in game.pieces):
        return False
    free = {pid: [s for s in allowed_stations(game, side, pid, opts) if s not in placement] for pid in {*left}}
    taken: dict[str, int] = {}  # station -> index in ``left`` of the piece matched to it

    def augment(i: int, seen: set[str]) -> bool:
        for s in free[left[i]]:
            if s in seen:
                continue
            seen.add(s)
            if s not in taken or augment(taken[s], seen):
                taken[s] = i
                return True
        return False

    return all(augment(i, set()) for i in range(len(left)))


def guided_order(game: GameDef, side: str, rng: random.Random, options: Mapping[str, Any] | None = None) -> list[str]:
    """The private order in which a seat is asked for its pieces during guided setup: one piece id per piece, in a
    fresh random order (so the order itself, or the board filling up in it, tells an onlooker nothing), checked to
    be completable: placing the pieces in this order on stations that keep the deployment completable ends in a
    deployment the rules accept (``check_deployment``). Raises ValueError if no such order is found."""
    opts = game.resolve_options(options)
    game = game.for_options(opts)
    pieces = [p.id for p in game.pieces for _ in range(p.count)]
    allowed = {p.id: allowed_stations(game, side, p.id, opts) for p in game.pieces}
    for _attempt in range(20):
        order = pieces[:]
        rng.shuffle(order)
        placement: dict[str, str] = {}
        for pid in order:
            spots = [s for s in allowed[pid] if s not in placement]
            rng.shuffle(spots)
            spot = next((s for s in spots if completable(game, side, {**placement, s: pid}, opts)), None)
            if spot is None:
                break
            placement[spot] = pid
        else:
            if not check_deployment(game, side, placement, opts):
                return order
    raise ValueError(f"could not build a completable guided setup order for {side} in {game.id}")
