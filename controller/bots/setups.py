"""Deployments for bots, and the prior a bot holds about where the enemy put what.

Where the game has real human setups (Stratego's Gravon archive through the Ataraxos data files, and any setup saved
with `facedown setups import-human` in the setups store), a bot deploys as a human did and expects its opponent to
have done the same. Elsewhere it builds a deployment from the game's setup rules: the flag (the pieces whose loss
loses the game) as deep as the rules allow, the pieces that never move partly round it (never on a base station, where
a taken flag must be brought, nor shutting it off from the sea), the pieces that clear enemy blockers (miners, sappers, minesweepers) in the back half
but never behind a wall they must go round to get out (a harbour corner), the rest anywhere allowed, and it derives its prior from many such deployments.
"""

from __future__ import annotations

import json
import random
from collections import Counter, defaultdict
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from controller.rules import GameDef
from controller.rules.deploy import random_deployment
from controller.rules.setup import check_deployment

from .belief import Prior, allowed_table, options_key, template
from .values import bfs, worth

#: Games that have human setups in the Ataraxos data, and which kind of file.
HUMAN_KINDS = {"stratego": "classic", "stratego_barrage": "barrage"}
PRIOR_SAMPLES = 120


def human_setups(gdef: GameDef, side: str, limit: int = 2000, seed: int = 0) -> list[dict[str, str]]:
    """Up to ``limit`` human deployments for ``side``: the store's saved setups named 'human ...' first, then the
    Ataraxos human setups the package carries (or $FACEDOWN_ATARAXOS). Empty for games without human setups."""
    return list(_human(gdef, side, limit, seed))


@lru_cache(maxsize=8)
def _human(gdef: GameDef, side: str, limit: int, seed: int) -> tuple[dict[str, str], ...]:
    kind = HUMAN_KINDS.get(gdef.id)
    out: list[dict[str, str]] = []
    try:
        from controller.setups_store import SetupStore

        out += [s.placement for s in SetupStore().list(gdef, side) if s.name.startswith("human")]
    except (OSError, ValueError):
        pass
    if kind is None:
        return tuple(out[:limit])
    from controller.records import RecordError
    from controller.records.ataraxos import as_blue, collection, human_setup, parse_setup_lines, setups_member

    try:  # the package's own copy of the Ataraxos data, or $FACEDOWN_ATARAXOS
        lines = [t for _n, t in parse_setup_lines(collection(None).read_text(setups_member(kind), "ascii")) if len(t) == 40]
    except (RecordError, OSError, KeyError):
        lines = []
    for text in random.Random(seed).sample(lines, min(limit, len(lines))):
        try:
            red = human_setup(text)
        except RecordError:
            continue
        out.append(red if side == "red" else as_blue(red))
    return tuple(p for p in out[:limit] if not check_deployment(gdef, side, p))


def built_setup(gdef: GameDef, side: str, rng: random.Random, options: Mapping[str, Any] | None = None,
                open_base: bool = False) -> dict[str, str]:
    """A deployment from the setup rules alone: flag deep, some never-moving pieces round it, blocker-clearers in the
    back half, the rest at random. With ``open_base`` (games won by bringing the enemy flag to one's base: Dover
    Patrol), a deployment whose never-moving pieces wall in every free base station, so that no carrier could sail a
    taken flag home, is drawn again: Dover Patrol seed 3 against the bot before was drawn at the ply cap that way (our
    mines on a2, b2 and c1, our flag on b1), and 7-9 % of rule-built Dover setups did it. Without it (the bot before,
    and the prior: an opponent may wall in his base), as they were built before."""
    base = template(gdef, options or {})
    game = base.game
    opts = base.options
    w = worth(base)
    depth = w.front[side]
    table = allowed_table(game, options_key(opts))
    order = {s.id: i for i, s in enumerate(game.stations)}
    allowed = {p.id: sorted(table[(side, p.id)], key=order.__getitem__) for p in game.pieces}
    base = frozenset(game.setup.zones.get("base", {}).get(side, ()))
    # a clearer's own way to the enemy along the lines it moves on: longer than ``depth`` where a wall makes it go
    # round (a Dover harbour's one entrance), and a clearer started there stayed shut in behind its own ships
    zones = game.setup.zones[game.setup.deploy_zone]
    enemy = [s for other in game.sides if other != side and not game.ally(side, other) for s in zones[other]]
    way_out = {k: bfs(w.lines_nbrs[w.profiles[w.profile[k]][0]], enemy) for k in w.clears}
    # the lines a carrier sails home along: those of the most numerous kind that can take the flag
    carrier = max((p for p in game.pieces if p.id in w.takers), key=lambda p: p.count, default=None)
    sea = w.lines_nbrs[w.profiles[w.profile[carrier.id]][0]] if open_base and carrier and side in w.bases else None
    for _attempt in range(30):
        placement: dict[str, str] = {}
        ok = True
        flags = [p for p in game.pieces if p.id in w.capture]
        guards = [p for p in game.pieces if not p.movable and p.id not in w.capture]
        # the pieces that clear enemy blockers (miners, sappers, minesweepers) first, so they get the back rows
        rest = sorted((p for p in game.pieces if p.movable and p.id not in w.capture),
                      key=lambda p: (p.id not in w.clears, len(allowed[p.id])))
        flag_at: list[str] = []
        for p in flags:
            free = [s for s in allowed[p.id] if s not in placement]
            if len(free) < p.count:
                ok = False
                break
            top = max(depth.get(s, 0) for s in free)
            deep = [s for s in free if depth.get(s, 0) >= top - 1]
            for s in rng.sample(deep, p.count):
                placement[s] = p.id
                flag_at.append(s)
        for p in guards:  # never on the base left free: a taken flag must be brought to stand there (Dover Patrol)
            free = [s for s in allowed[p.id] if s not in placement and s not in base]
            if len(free) < p.count:
                ok = False
                break
            near = [s for s in free if any(w.distance[f].get(s, 99) == 1 for f in flag_at)]
            rng.shuffle(near)
            n_near = min(len(near), p.count, (p.count + 1) // 2 + rng.randint(0, 1))
            chosen = near[:n_near]
            others = [s for s in free if s not in chosen]
            chosen += rng.sample(others, min(len(others), p.count - len(chosen)))
            if len(chosen) < p.count:
                ok = False
                break
            for s in chosen:
                placement[s] = p.id
        if ok and sea is not None:  # a free base station a carrier reaches from the enemy past none of them
            reached = bfs(sea, enemy, frozenset(placement))
            ok = any(s in reached for s in w.bases[side] if s not in placement)
        for p in rest if ok else ():
            free = [s for s in allowed[p.id] if s not in placement]
            if len(free) < p.count:
                ok = False
                break
            if p.id in w.clears:  # kept out of the first clashes: the deeper half of what is left, with a way out
                out = way_out[p.id]
                open_way = [s for s in free if out.get(s, 99) <= depth.get(s, 0)]
                if len(open_way) >= p.count:
                    free = open_way
                free.sort(key=lambda s: -depth.get(s, 0))
                free = free[:max(p.count, len(free) // 2)]
            for s in rng.sample(free, p.count):
                placement[s] = p.id
        if ok and not check_deployment(gdef, side, placement, opts):
            return placement
    return random_deployment(gdef, side, rng, opts)


def bot_setup(gdef: GameDef, side: str, rng: random.Random, options: Mapping[str, Any] | None = None,
              open_base: bool = False) -> dict[str, str]:
    """A human setup where the game has them (under its default setup rules), else one built from the rules
    (``open_base``: see `built_setup`)."""
    opts = template(gdef, options or {}).options
    humans = human_setups(gdef, side) if opts == gdef.resolve_options() else []
    if humans:
        return dict(rng.choice(humans))
    return built_setup(gdef, side, rng, options, open_base)


@lru_cache(maxsize=16)
def _prior(gdef: GameDef, key: str) -> dict[str, dict[str, dict[str, float]]]:
    options = json.loads(key)
    out: dict[str, dict[str, dict[str, float]]] = {}
    rng = random.Random(1)
    for side in gdef.sides:
        humans = human_setups(gdef, side) if template(gdef, options).options == gdef.resolve_options() else []
        samples = humans or [built_setup(gdef, side, rng, options) for _ in range(PRIOR_SAMPLES)]
        tally: dict[str, Counter[str]] = defaultdict(Counter)
        for placement in samples:
            for station, piece in placement.items():
                tally[station][piece] += 1
        out[side] = {s: {k: n / len(samples) for k, n in c.items()} for s, c in tally.items()}
    return out


def prior(gdef: GameDef, options: Mapping[str, Any]) -> Prior:
    """Side -> station -> piece id -> how often that piece starts there (human setups, else rule-built ones)."""
    return _prior(gdef, json.dumps(dict(options), sort_keys=True))
