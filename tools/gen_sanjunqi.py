"""Writes the board of land-sea-air chess (陸海空三軍棋) into controller/rules/games/sanjunqi.yaml: everything after the
line starting ``# ---- board`` is replaced by the stations and lines built here. The YAML stays the source of truth (it is
committed); run ``python tools/gen_sanjunqi.py`` after changing the map below.

Red's land is drawn here, rows y=0 (back) to y=5 (the coast); Blue's land is the same map turned half a turn
(x -> 7 - x, y -> 14 - y). The river is rows 6-8 between them. Letters: P supply post 兵站, S stronghold 據點 (on the
railway), C camp 行營, H headquarters 大本營, A airfield 機場, a anchorage 錨地, w open water.
"""

from __future__ import annotations

import sys
from pathlib import Path

GAME = Path(__file__).resolve().parents[1] / "controller/rules/games/sanjunqi.yaml"
MARK = "# ---- board"

KINDS = {"P": "post", "S": "stronghold", "C": "camp", "H": "hq", "A": "airfield", "a": "anchorage", "w": "water"}

# (x, y, letter) of Red's land
RED_LAND = [
    (0, 0, "A"), (2, 0, "H"), (3.5, 0, "H"), (5, 0, "H"), (7, 0, "A"),
    (0, 1, "P"), (2, 1, "S"), (3, 1, "S"), (4, 1, "S"), (5, 1, "S"), (7, 1, "P"),
    (0, 2, "P"), (1.5, 2, "S"), (2.5, 2, "P"), (3.5, 2, "P"), (4.5, 2, "P"), (5.5, 2, "S"), (7, 2, "P"),
    (1, 3, "S"), (2, 3, "C"), (3, 3, "P"), (4, 3, "P"), (5, 3, "C"), (6, 3, "S"),
    (0.5, 4, "S"), (1, 4, "P"), (2, 4, "P"), (3, 4, "P"), (4, 4, "P"), (5, 4, "P"), (6, 4, "P"), (6.5, 4, "S"),
    (0, 5, "S"), (1, 5, "P"), (2, 5, "P"), (3, 5, "P"), (5, 5, "P"), (6, 5, "P"), (7, 5, "S"),
]
COAST = [(1, 5), (2, 5), (3, 5), (5, 5), (6, 5)]  # the five coastal supply posts (forts stand only here)
# Red's half of the hexagonal railway, from the west bridge end round to the east one
RED_RAIL = [(0, 5), (0.5, 4), (1, 3), (1.5, 2), (2, 1), (3, 1), (4, 1), (5, 1), (5.5, 2), (6, 3), (6.5, 4), (7, 5)]
RAIL_EDGES = [RED_RAIL[0:5], RED_RAIL[4:8], RED_RAIL[7:12]]  # three straight edges of the hexagon on each side
# Camps join their four diagonal neighbours, as in Luzhanqi
CAMP_LINKS = [((1, 4), (2, 3)), ((2, 3), (3, 4)), ((1.5, 2), (2, 3)), ((2, 3), (2.5, 2)),
              ((4, 4), (5, 3)), ((5, 3), (6, 4)), ((4.5, 2), (5, 3)), ((5, 3), (5.5, 2))]
RED_ANCHORAGES = [1, 2, 3, 5, 6]  # x of Red's anchorages on row 6, each below a coastal post
WATER = [(x, y) for y in (6, 7, 8) for x in range(1, 7)]
# air routes (dashed): whole columns x=0, 3, 4, 7 from one side's back row to the other's, and rows 2, 7, 12
AIR_COLUMNS = [0, 3, 4, 7]
AIR_ROWS = [2, 7, 12]


def name(x: float, y: float) -> str:
    """Station ids: row letter a-o (y 0-14), then the column (x, with .5 written as 'h')."""
    col = f"{int(x)}h" if x != int(x) else f"{int(x)}"
    return f"{'abcdefghijklmno'[int(y)]}{col}"


def turned(x: float, y: float) -> tuple[float, float]:
    return 7 - x, 14 - y


def build() -> tuple[list[tuple[str, float, float, str]], list[tuple[str, list[str]]]]:
    stations: dict[tuple[float, float], str] = {}
    for x, y, letter in RED_LAND:
        stations[(x, y)] = KINDS[letter]
        stations[turned(x, y)] = KINDS[letter]
    for x, y in WATER:
        if y == 6 and x in RED_ANCHORAGES:
            kind = "anchorage"
        elif y == 8 and turned(x, y)[0] in RED_ANCHORAGES:
            kind = "anchorage"
        else:
            kind = "water"
        stations[(x, y)] = kind
    lines: list[tuple[str, list[str]]] = []

    def run(kind: str, points: list[tuple[float, float]]) -> None:
        ids = [name(*p) for p in points]
        if len(ids) >= 2:
            lines.append((kind, ids))

    land = [p for p, k in stations.items() if k not in ("water", "anchorage", "airfield")]
    for side in (0, 1):
        mine = [p for p in land if (p[1] <= 5) == (side == 0)]
        for y in sorted({p[1] for p in mine}):
            run("road", sorted((p for p in mine if p[1] == y), key=lambda p: p[0]))
        for x in sorted({p[0] for p in mine}):
            run("road", sorted((p for p in mine if p[0] == x), key=lambda p: p[1]))
        for a, b in CAMP_LINKS:
            run("road", [a, b] if side == 0 else [turned(*a), turned(*b)])
        for edge in RAIL_EDGES:
            run("rail", edge if side == 0 else [turned(*p) for p in edge])
    # the two bridges: the railway crosses the river between the bridge ends
    run("rail", [(0, 5), (0, 9)])
    run("rail", [(7, 5), (7, 9)])
    water = [p for p, k in stations.items() if k in ("water", "anchorage")]
    for y in (6, 7, 8):
        run("sea", sorted((p for p in water if p[1] == y), key=lambda p: p[0]))
    for x in range(1, 7):
        run("sea", sorted((p for p in water if p[0] == x), key=lambda p: p[1]))
    # shore: each anchorage to the land station in front of it, and the bridge ends to the nearest anchorage
    for x, y in COAST:
        run("shore", [(x, y), (x, y + 1)])
        tx, ty = turned(x, y)
        run("shore", [(tx, ty), (tx, ty - 1)])
    run("shore", [(0, 5), (1, 6)])
    run("shore", [(7, 5), (6, 6)])
    run("shore", [(7, 9), (6, 8)])
    run("shore", [(0, 9), (1, 8)])
    for x in AIR_COLUMNS:
        run("air", sorted((p for p in stations if p[0] == x), key=lambda p: p[1]))
    for y in AIR_ROWS:
        run("air", sorted((p for p in stations if p[1] == y), key=lambda p: p[0]))
    out = [(name(*p), p[0], p[1], k) for p, k in sorted(stations.items(), key=lambda kv: (kv[0][1], kv[0][0]))]
    return out, lines


def render() -> str:
    stations, lines = build()
    width = max(len(s[0]) for s in stations)
    parts = [MARK + " (generated by tools/gen_sanjunqi.py; edit the map there)", "stations:"]
    for sid, x, y, kind in stations:
        xs = f"{x:g}"
        parts.append(f"  - [{sid + ',':<{width + 1}} {xs + ',':<4} {y:g}, {kind}]")
    parts.append("")
    parts.append("lines:")
    for kind, ids in lines:
        parts.append(f"  - {{kind: {kind}, path: \"{' '.join(ids)}\"}}")
    coast_red = [name(*p) for p in COAST]
    coast_blue = [name(*turned(*p)) for p in COAST]
    parts.append("")
    parts.append(f"# coastal supply posts: red {' '.join(coast_red)}; blue {' '.join(coast_blue)}")
    return "\n".join(parts) + "\n"


def main() -> int:
    text = GAME.read_text(encoding="utf-8")
    head = text.split("\n" + MARK, 1)[0] + "\n"
    GAME.write_text(head + render(), encoding="utf-8")
    print(f"wrote the board of {GAME}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
