"""Where a game's stations lie on a drawing: the game file's coordinates scaled to a pitch, turned by quarter turns.

The one geometry both the board drawings (controller/board_svg.py) and the hardware design (controller/hardware/)
use, so the printed board, the drill and assembly layers, the wire runs and the BOM's board size all agree; it
imports neither of them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Layout:
    """Where each station is drawn: ``points`` in drawing units inside a ``width`` x ``height`` box (y downwards)."""

    points: Mapping[str, tuple[float, float]]
    pitch: float
    width: float
    height: float
    turns: int = 0


def smallest_distance(pts: Sequence[tuple[float, float]]) -> float:
    """The smallest distance between two distinct points (1.0 when there are fewer than two)."""
    best = math.inf
    for i, (ax, ay) in enumerate(pts):
        for bx, by in pts[i + 1:]:
            d = math.hypot(ax - bx, ay - by)
            if 0 < d < best:
                best = d
    return best if math.isfinite(best) else 1.0


def unit_distance(game: Any) -> float:
    """The smallest distance between two stations in the game file's own coordinates (1 on a square grid)."""
    return smallest_distance([(s.x, s.y) for s in game.stations])


def quarter_turns(game: Any, bottom_side: str | None) -> int:
    """Quarter turns (clockwise on screen) that put ``bottom_side``'s deployment area at the bottom of the drawing."""
    if not bottom_side or not game.stations:
        return 0
    zones = game.setup.zones.get(game.setup.deploy_zone, {})
    home = zones.get(bottom_side) or ()
    if not home:
        return 0
    by_id = {s.id: s for s in game.stations}
    cx = sum(s.x for s in game.stations) / len(game.stations)
    cy = sum(s.y for s in game.stations) / len(game.stations)
    hx = sum(by_id[h].x for h in home) / len(home) - cx
    hy = -(sum(by_id[h].y for h in home) / len(home) - cy)  # screen y grows downwards
    if abs(hx) < 1e-9 and abs(hy) < 1e-9:
        return 0
    return round(math.atan2(hx, hy) / (math.pi / 2)) % 4


_ROT = {0: (1, 0), 1: (0, 1), 2: (-1, 0), 3: (0, -1)}  # quarter turns -> (cos, sin)


def layout(game: Any, *, pitch: float, margin: float, turns: int = 0) -> Layout:
    """Station positions with the game's unit distance scaled to ``pitch`` and ``margin`` around the stations."""
    unit = pitch / unit_distance(game)
    cx = sum(s.x for s in game.stations) / len(game.stations)
    cy = sum(s.y for s in game.stations) / len(game.stations)
    c, sn = _ROT[turns % 4]
    raw: dict[str, tuple[float, float]] = {}
    for s in game.stations:
        dx, dy = s.x - cx, -(s.y - cy)
        raw[s.id] = ((dx * c - dy * sn) * unit, (dx * sn + dy * c) * unit)
    x0 = min(p[0] for p in raw.values())
    y0 = min(p[1] for p in raw.values())
    x1 = max(p[0] for p in raw.values())
    y1 = max(p[1] for p in raw.values())
    points = {sid: (rounded(x - x0 + margin), rounded(y - y0 + margin)) for sid, (x, y) in raw.items()}
    return Layout(points=points, pitch=pitch, width=rounded(x1 - x0 + 2 * margin), height=rounded(y1 - y0 + 2 * margin), turns=turns % 4)


def rounded(v: float) -> float:
    """A coordinate rounded to 0.001 (never -0.0)."""
    return round(v, 3) + 0.0
