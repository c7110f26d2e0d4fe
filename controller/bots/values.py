"""What pieces and positions are worth to a bot, worked out from the game file alone (no per-game tables).

A piece's worth comes from the clash table: how much of the enemy army it beats when it attacks, how much it
survives when attacked, whether it moves at all. The pieces whose loss loses the game are worth the game. Distances
along the board's lines give the positional terms (how near the attackers are to the enemy's flag, how near the
enemy's movers are to one's own).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass

from controller.rules.state import GameState

WIN = 10_000.0


@dataclass(frozen=True)
class Worth:
    """Per-game figures a bot evaluates positions with."""

    value: dict[str, float]  # piece id -> material worth
    capture: frozenset[str]  # pieces whose loss loses the game
    movable: frozenset[str]
    #: the movers that can attack: only they can take a flag (a Dover minelayer never can, however near it stands)
    takers: frozenset[str]
    beaten_by: dict[str, frozenset[str]]  # piece id -> the kinds that win when they attack it
    distance: dict[str, dict[str, int]]  # station -> station -> steps along any line
    #: piece id -> station -> station -> steps along the lines that piece moves on (a ship does not cross the
    #: harbour wall a flying boat flies over; an engineer's railway is not a soldier's): how far it really is
    reach: dict[str, dict[str, dict[str, int]]]
    front: dict[str, dict[str, int]]  # side -> station -> steps to the nearest enemy deployment station
    bases: dict[str, tuple[str, ...]]  # side -> its base stations (games won by bringing a flag home)
    #: blockers: piece id -> the few kinds that beat it when they attack, for pieces that stand in the way without
    #: attacking (a bomb or mine only a miner or minesweeper clears, a minelayer only a destroyer sinks). While an
    #: enemy blocker stands, the last pieces that can remove it are worth much more than their rank.
    blockers: dict[str, frozenset[str]]
    clears: dict[str, frozenset[str]]  # the other way round: piece id -> the blockers it can remove
    tracked: frozenset[str]  # the kinds in either: the only ones an evaluation counts
    #: pieces that never move and do not lose the game (bombs, mines): they stand in the way of the pieces that
    #: cannot remove them
    fixed: frozenset[str]
    #: (the lines it moves on, the fixed kinds it cannot remove): pieces alike in both find the same ways
    profiles: list[tuple[frozenset[str], frozenset[str]]]
    profile: dict[str, int]  # piece id -> its index in ``profiles``
    lines_nbrs: dict[frozenset[str], dict[str, tuple[str, ...]]]  # the lines of a profile -> station -> neighbours
    #: see ``way_down``: a cache
    ways: dict[tuple[str, int, tuple[tuple[str, str], ...]], tuple[dict[str, int], dict[str, list[str]]]]


def way(w: Worth, goal: str, profile: int, fixed: tuple[tuple[str, str], ...]) -> dict[str, int]:
    """Station -> steps to ``goal`` for a piece of ``profile``, around the ``fixed`` pieces (station, kind) it
    cannot remove: a flag behind mines is far for every ship but a minesweeper, however near it stands."""
    return way_down(w, goal, profile, fixed)[0]


def way_down(w: Worth, goal: str, profile: int,
             fixed: tuple[tuple[str, str], ...]) -> tuple[dict[str, int], dict[str, list[str]]]:
    """``way`` and, for each station on it but the goal, the neighbours one step nearer (the next stations of its
    shortest ways), cached together."""
    key = (goal, profile, fixed)
    found = w.ways.get(key)
    if found is None:
        if len(w.ways) > 4_000:  # ~90 stations each: a few MB at most (a Pi Zero 2 W has 512 MB for everything)
            w.ways.clear()
        lines, stops = w.profiles[profile]
        walls = frozenset(s for s, kind in fixed if kind in stops)
        nbrs = w.lines_nbrs[lines]
        steps = {goal: 0}
        down: dict[str, list[str]] = {}
        todo = deque([goal])
        while todo:
            at = todo.popleft()
            n_at = steps[at] + 1
            for n in nbrs.get(at, ()):
                if n in walls:
                    continue
                k = steps.get(n)
                if k is None:
                    steps[n] = n_at
                    down[n] = [at]
                    todo.append(n)
                elif k == n_at:
                    down[n].append(at)
        found = w.ways[key] = (steps, down)
    return found


_CACHE: dict[tuple[int, str], Worth] = {}


def _worth(state: GameState) -> Worth:
    game = state.game
    counts = {p.id: p.count for p in game.pieces}
    total = sum(counts.values())
    movable = frozenset(p.id for p in game.pieces if p.movable)
    takers = frozenset(p.id for p in game.pieces if p.movable and p.can_attack)
    beaten_by = {d.id: frozenset(a for a in takers if state.clash[(a, d.id)] == "attacker") for d in game.pieces}
    capture = frozenset(game.win.capture)
    value: dict[str, float] = {}
    for p in game.pieces:
        beats = sum(n for d, n in counts.items() if state.clash[(p.id, d)] == "attacker") if p.can_attack and p.movable else 0
        trades = sum(n for d, n in counts.items() if state.clash[(p.id, d)] == "both") if p.can_attack and p.movable else 0
        holds = sum(n for a, n in counts.items() if a in movable and state.clash[(a, p.id)] in ("defender", "bounce", "both"))
        worth = 1.0 + 6.0 * (beats + 0.4 * trades) / total + 2.0 * holds / max(1, sum(counts[a] for a in movable))
        if not p.movable:
            worth = 1.0 + 2.0 * holds / max(1, sum(counts[a] for a in movable))
        if p.count == 1 and beats / total > 0.5:
            worth *= 1.3  # the single strongest pieces
        value[p.id] = round(worth, 3)
    for c in capture:
        value[c] = 0.0  # its loss is the game itself: scored as a result, not as material
    kinds = frozenset(line.kind for line in game.lines)
    nbrs = state.topo.neighbours(kinds)
    distance = {s: bfs(nbrs, [s]) for s in game.station_ids}
    zones = game.setup.zones[game.setup.deploy_zone]
    front = {}
    for side in game.sides:
        enemy = [s for other in game.sides if state.enemies(side, other) for s in zones[other]]
        front[side] = bfs(nbrs, enemy)
    zone = game.setup.zones.get("base", {})
    bases = {side: tuple(sorted(zone[side])) for side in game.sides if zone.get(side)}
    by_lines: dict[frozenset[str], dict[str, dict[str, int]]] = {kinds: distance}
    reach = {}
    fixed = frozenset(p.id for p in game.pieces if not p.movable and p.id not in capture)
    profiles: list[tuple[frozenset[str], frozenset[str]]] = []
    profile: dict[str, int] = {}
    lines_nbrs: dict[frozenset[str], dict[str, tuple[str, ...]]] = {}
    for p in game.pieces:
        lines = frozenset().union(*(m.along for m in p.moves)) if p.movable and p.moves else kinds
        lines_nbrs[lines] = state.topo.neighbours(lines)
        if lines not in by_lines:
            by_lines[lines] = {s: bfs(lines_nbrs[lines], [s]) for s in game.station_ids}
        reach[p.id] = by_lines[lines]
        stops = frozenset(f for f in fixed if not (p.can_attack and state.clash[(p.id, f)] == "attacker"))
        if (lines, stops) not in profiles:
            profiles.append((lines, stops))
        profile[p.id] = profiles.index((lines, stops))
    blockers = {}
    for e in game.pieces:
        if e.id in capture or (e.movable and e.can_attack):
            continue
        answers = frozenset(a.id for a in game.pieces if a.movable and a.can_attack and state.clash[(a.id, e.id)] == "attacker")
        if 0 < len(answers) <= 2:
            blockers[e.id] = answers
    clears = {a: frozenset(k for k, ans in blockers.items() if a in ans) for a in set().union(*blockers.values())}
    return Worth(value, capture, movable, takers, beaten_by, distance, reach, front, bases, blockers, clears, frozenset(blockers) | frozenset(clears),
                 fixed, profiles, profile, lines_nbrs, {})


def worth(state: GameState) -> Worth:
    """The figures for ``state``'s game and options (cached per game object and options)."""
    key = (id(state.game), repr(sorted(state.options.items())))
    found = _CACHE.get(key)
    if found is None:
        found = _CACHE[key] = _worth(state)
    return found


def bfs(nbrs: Mapping[str, tuple[str, ...]], starts: list[str], walls: frozenset[str] = frozenset(),
        limit: int = 1 << 30) -> dict[str, int]:
    """Station -> steps from the nearest of ``starts`` along ``nbrs``, none farther than ``limit``; a station of
    ``walls`` is reached but not passed (a piece standing on it still gets out, none gets through)."""
    dist = {s: 0 for s in starts}
    todo = deque(starts)
    while todo:
        at = todo.popleft()
        d = dist[at] + 1
        if d > limit:
            continue
        for n in nbrs.get(at, ()):
            if n not in dist:
                dist[n] = d
                if n not in walls:
                    todo.append(n)
    return dist
