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
