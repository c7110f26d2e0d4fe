"""Where each 74HC165 of a shift-register build, and each reader hub, sits and which stations it serves, from the game's
coordinates; the wire runs of chains, reed matrices and light chains, and their limits.

A chip reads 8 neighbouring stations, so its reed wires stay short and its stripboard sits among them.
``chip_groups`` chooses the groups by recursive bisection of the board (split the stations across their longer
side, in proportion to the chips each half gets), so every group is a compact patch of the board;
``profile_text`` numbers a new profile's channels by it (chip k's stations are channels 8k..8k+7).
``reader_groups`` does the same for reader hubs (16 readers a 74HC154, every hub full but the last) and ``hub_reach``
measures each hub's farthest reader against the cables (``HUB_CABLES``). ``chain_plan`` then lays out a profile's chain as built: each chip at the middle of its stations, the chain order
chosen from the Pico (at the middle of the board's bottom edge) by nearest neighbour, every reed's wire run and
each ribbon link. Runs are measured along the board's axes (wires are laid along the rows and columns) with
``SLACK_MM`` for stripping and bends.

Limits a test checks for every profile: a chip's ``spread`` (its farthest station) at most ``SPREAD_LIMIT_SPACINGS``
station spacings, a reed's run at most ``RUN_LIMIT_SPACINGS`` spacings plus the slack, and on a reed matrix each line's
wire (``matrix_runs``) at most ``MATRIX_COLUMN_LIMIT_MM`` for a column, ``MATRIX_ROW_LIMIT_MM`` for a row; ``matrix_layout`` gives a new matrix profile its rows and
columns from the coordinates.

>>> from controller.sensing.profile import find_profile
>>> plan = chain_plan(find_profile("siguo"))
>>> len(plan.chips), plan.spread_ok, plan.runs_ok
(17, True, True)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from controller.board_geometry import layout
from controller.errors import FaceDownError

INPUTS = 8
#: Extra wire per run: stripping both ends and bending round a station's reed and LED.
SLACK_MM = 30.0
#: A chip's farthest station (straight line from the chip) may be this many station spacings away (``spacing``: the
#: usual distance from a station to its nearest neighbour; 40 mm on most boards, 80 mm between sanjunqi's rows).
SPREAD_LIMIT_SPACINGS = 2.5
#: A reed's wire to its chip (along the axes, before slack) may be this many station spacings long.
RUN_LIMIT_SPACINGS = 3.5
#: Ribbon from the Pico through every chip longer than this: re-drive PL and CP halfway (a 74HC125).
BUFFER_RIBBON_MM = 2000.0
#: A reed-matrix column's wire may be at most this long. A column is an input held high by the RP2040's (or the Pi's)
#: internal pull-up, 50-80 kOhm; loose hook-up wire over the board is about 50 pF a metre. When a row is released, a
#: column it pulled low must climb back above the logic threshold (1.2 time constants) within the scanner's 10 us
#: ``settle_us`` before the next row is read, or that row sees a ghost: 10 us / 1.2 / 80 kOhm = 104 pF, about 2 m.
MATRIX_COLUMN_LIMIT_MM = 2000.0
#: A row is driven by an output (tens of ns on any length here): this limit only catches a layout that zigzags.
MATRIX_ROW_LIMIT_MM = 5000.0
#: Readers per hub (one 74HC154), and how far a reader's header may be from its hub's centre, along the board: a 30 cm
#: strip of jumpers less the hub's own half-width (its 16 headers along a 100 x 160 mm stripboard) and slack.
READERS_PER_HUB = 16
HUB_REACH_MM = 250.0
#: The reader cables the BOM offers (jumper strips, cm) and how far each reaches from the hub's centre (mm): the
#: longest is 50 cm, at the readers' 4 MHz SPI clock still far inside what unshielded jumpers carry cleanly.
HUB_CABLES = ((30, HUB_REACH_MM), (50, 450.0))


def hub_cable_cm(reach_mm: float) -> int | None:
    """The shortest reader cable (cm) that reaches ``reach_mm`` from the hub's centre, or None when none does."""
    return next((cm for cm, mm in HUB_CABLES if reach_mm <= mm + 1e-6), None)
#: Series resistors on PL and CP at the Pico: they damp the ringing of a fast edge on a long ribbon, which could
#: otherwise clock the chain twice and shift every station by one.
SERIES_OHMS = 100

#: 74HC165 pins (DIP-16, Nexperia/TI datasheets): the eight parallel inputs A-H, and the rest.
PIN_165 = {"PL": 1, "CP": 2, "E": 3, "F": 4, "G": 5, "H": 6, "Q7n": 7, "GND": 8, "Q7": 9, "DS": 10, "A": 11, "B": 12,
           "C": 13, "D": 14, "CE": 15, "VCC": 16}
INPUT_NAMES = "ABCDEFGH"


class ChainError(FaceDownError, ValueError):
    """A shift-register chain cannot be planned (no stations, more stations than the chips' inputs)."""


@dataclass(frozen=True, slots=True)
class Chip:
    """One 74HC165: its place in the chain, where it sits (mm on the printed board), its stations by input."""

    index: int
    at: tuple[float, float]
    inputs: tuple[str | None, ...]  # station on input A..H (None: a spare input, pulled up)
    spread_mm: float  # its farthest station, straight line
    runs_mm: tuple[float | None, ...]  # wire from each input's reed to the chip, along the axes, slack included
    ribbon_in_mm: float  # ribbon from the previous chip (chip 0: from the Pico)

    @property
    def stations(self) -> tuple[str, ...]:
        return tuple(s for s in self.inputs if s is not None)


@dataclass(frozen=True, slots=True)
class ChainPlan:
    """A profile's 74HC165 chain as built: the chips in chain order, the wire they need, and the limits."""

    pitch: float
    spacing: float
    pico: tuple[float, float]
    chips: tuple[Chip, ...]

    @property
    def spread_limit_mm(self) -> float:
        return SPREAD_LIMIT_SPACINGS * self.spacing

    @property
    def run_limit_mm(self) -> float:
        return RUN_LIMIT_SPACINGS * self.spacing + SLACK_MM

    @property
    def longest_run_mm(self) -> float:
        return max((r for c in self.chips for r in c.runs_mm if r is not None), default=0.0)

    @property
    def widest_spread_mm(self) -> float:
        return max((c.spread_mm for c in self.chips), default=0.0)

    @property
    def spread_ok(self) -> bool:
        return self.widest_spread_mm <= self.spread_limit_mm + 1e-6

    @property
    def runs_ok(self) -> bool:
        return self.longest_run_mm <= self.run_limit_mm + 1e-6

    @property
    def reed_wire_mm(self) -> float:
        return sum(r for c in self.chips for r in c.runs_mm if r is not None)

    @property
    def ribbon_mm(self) -> float:
        return sum(c.ribbon_in_mm for c in self.chips)

    @property
    def buffered(self) -> bool:
        """Whether PL and CP need re-driving halfway along the chain (a 74HC125 at the middle chip)."""
        return self.ribbon_mm > BUFFER_RIBBON_MM

    @property
    def buffer_at(self) -> int | None:
        return len(self.chips) // 2 if self.buffered else None


def _split(items: list[tuple[str, float, float]], chips: int, per: int = INPUTS,
           full: bool = False) -> list[list[tuple[str, float, float]]]:
    """Groups of at most ``per`` stations, ``chips`` of them, by recursive bisection across the longer side;
    ``full``: every group but the last exactly ``per``."""
    if chips <= 1 or len(items) <= per and chips == 1:
        return [items]
    xs = [p[1] for p in items]
    ys = [p[2] for p in items]
    axis = 1 if (max(xs) - min(xs)) >= (max(ys) - min(ys)) else 2
    ordered = sorted(items, key=lambda p: (p[axis], p[3 - axis], p[0]))
    left_chips = chips // 2
    right_chips = chips - left_chips
    n = len(ordered)
    ideal = n * left_chips / chips
    lo, hi = max(0, n - per * right_chips), min(n, per * left_chips)
    # prefer a cut between two different coordinates (a whole row or column to one side), near the ideal share
    best = min(range(lo, hi + 1), key=lambda c: (abs(c - ideal) + (0 if 0 < c < n and ordered[c - 1][axis] != ordered[c][axis]
                                                                   else 0.75), c))
    if full:
        best = min(n, per * left_chips)
    return _split(ordered[:best], left_chips, per, full) + _split(ordered[best:], right_chips, per, full)


def positions(game: Any, pitch: float) -> dict[str, tuple[float, float]]:
    """Each station's centre in mm on the printed board (as `facedown print-board` draws it, unturned)."""
    return dict(layout(game, pitch=pitch, margin=pitch * 0.75).points)


def spacing(pts: dict[str, tuple[float, float]]) -> float:
    """The usual station spacing: the median distance from a station to its nearest neighbour."""
    items = list(pts.values())
    if len(items) < 2:
        return 0.0
    near = sorted(min(math.dist(a, b) for j, b in enumerate(items) if j != i) for i, a in enumerate(items))
    return round(near[len(near) // 2], 1)


def chip_groups(game: Any, chips: int | None = None, pitch: float = 40.0, per: int = INPUTS) -> list[list[str]]:
    """The stations of each 74HC165, in chain order: compact groups of at most 8 (``per``) chosen from the
    coordinates."""
    return [list(g) for g in _groups(game.id, chips, pitch, per)]


def reader_groups(game: Any, pitch: float) -> list[list[str]]:
    """The stations of each reader hub (16 readers, one 74HC154), in hub order from the Pico: compact groups chosen
    from the coordinates, every hub full but the last (hub g's decoder selects readers 16g..16g+15), so every
    reader's 30 cm cable reaches its hub (``HUB_REACH_MM``)."""
    return [list(g) for g in _reader_groups(game.id, pitch)]


@functools.lru_cache(maxsize=32)
def _reader_groups(game_id: str, pitch: float) -> tuple[tuple[str, ...], ...]:
    from controller.rules import load_game

    pts = positions(load_game(game_id), pitch)
    hubs = math.ceil(len(pts) / READERS_PER_HUB)
    groups = [[s for s, _, _ in g] for g in _split([(s, x, y) for s, (x, y) in pts.items()], hubs, READERS_PER_HUB, True)]
    groups = _improve(groups, pts, READERS_PER_HUB, swaps_only=True)
    order = _tour([_centre([pts[s] for s in g]) for g in groups], _pico(pts, pitch))
    order = [i for i in order if len(groups[i]) == READERS_PER_HUB] + [i for i in order if len(groups[i]) < READERS_PER_HUB]
    return tuple(tuple(sorted(groups[i], key=lambda s: (pts[s][1], pts[s][0]))) for i in order)


@functools.lru_cache(maxsize=64)
def _groups(game_id: str, chips: int | None, pitch: float, per: int = INPUTS) -> tuple[tuple[str, ...], ...]:
    from controller.rules import load_game

    game = load_game(game_id)
    pts = positions(game, pitch)
    if not pts:
        raise ChainError(f"{game.id}: no stations to put on a chain")
    chips = chips if chips is not None else math.ceil(len(pts) / per)
    if chips * per < len(pts):
        raise ChainError(f"{game.id}: {len(pts)} stations do not fit on {chips} groups of {per}")
    groups = [[s for s, _, _ in g] for g in _split([(s, x, y) for s, (x, y) in pts.items()], chips, per)]
    groups = _improve(groups, pts, per)
    order = _tour([_centre([pts[s] for s in g]) for g in groups], _pico(pts, pitch))
    return tuple(tuple(sorted(groups[i], key=lambda s: (pts[s][1], pts[s][0]))) for i in order)


def _spread(group: Sequence[str], pts: dict[str, tuple[float, float]]) -> float:
    if not group:
        return 0.0
    c = _centre([pts[s] for s in group])
    return max(math.dist(c, pts[s]) for s in group)


def _sse(group: Sequence[str], pts: dict[str, tuple[float, float]]) -> float:
    if not group:
        return 0.0
    c = _centre([pts[s] for s in group])
    return sum(math.dist(c, pts[s]) ** 2 for s in group)


def _improve(groups: list[list[str]], pts: dict[str, tuple[float, float]], per: int = INPUTS,
             swaps_only: bool = False) -> list[list[str]]:
    """Capacitated k-means from the bisection's groups (each station to the nearest chip with room, the stations with
    most to lose first), then moves and swaps between two neighbouring chips while they shrink the wider of the two, or
    keep it and bring the stations closer to their chips (the sum of squared distances)."""
    best = [list(g) for g in groups]
    score = sorted((_spread(g, pts) for g in best), reverse=True)
    for _ in range(0 if swaps_only else 12):  # swaps only: every group keeps its size
        centres = [_centre([pts[s] for s in g]) for g in best]
        prefs = {s: sorted(range(len(centres)), key=lambda k: math.dist(pts[s], centres[k])) for s in pts}
        regret = sorted(pts, key=lambda s: -(math.dist(pts[s], centres[prefs[s][1]]) - math.dist(pts[s], centres[prefs[s][0]]))
                        if len(centres) > 1 else 0.0)
        trial: list[list[str]] = [[] for _ in centres]
        for s in regret:
            k = next(k for k in prefs[s] if len(trial[k]) < per)
            trial[k].append(s)
        trial_score = sorted((_spread(g, pts) for g in trial), reverse=True)
        if trial_score < score:
            best, score = trial, trial_score
        else:
            break
    def key(a: list[str], b: list[str]) -> tuple[float, float]:
        return (round(max(_spread(a, pts), _spread(b, pts)), 6), round(_sse(a, pts) + _sse(b, pts), 3))

    near = (8 if swaps_only else 4) * max(spacing(pts), 1e-9)
    changed = True
    while changed:
        changed = False
        centres = [_centre([pts[s] for s in g]) for g in best]
        for a in range(len(best)):
            for b in range(len(best)):
                if a == b or math.dist(centres[a], centres[b]) > near:
                    continue
                moved = True
                while moved:  # keep improving this pair, from its new groups each time
                    moved = False
                    now = key(best[a], best[b])
                    for s in best[a]:
                        trials = ([([x for x in best[a] if x != s], [*best[b], s])]
                                  if len(best[b]) < per and not swaps_only else [])
                        trials += [([x if x != s else t for x in best[a]], [x if x != t else s for x in best[b]])
                                   for t in best[b]]
                        for na, nb in trials:
                            k = key(na, nb)
                            if k[0] < now[0] - 1e-6 or (k[0] <= now[0] + 1e-6 and k[1] < now[1] - 1e-3):
                                best[a], best[b], moved = na, nb, True
                                break
                        if moved:
                            changed = True
                            break
    return [g for g in best if g]


def _centre(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    if not points:
        return (0.0, 0.0)
    return (round(sum(p[0] for p in points) / len(points), 1), round(sum(p[1] for p in points) / len(points), 1))


def _pico(pts: dict[str, tuple[float, float]], pitch: float) -> tuple[float, float]:
    """Where the Pico sits: the middle of the board's bottom edge, on the underside."""
    xs = [p[0] for p in pts.values()]
    return (round((min(xs) + max(xs)) / 2, 1), round(max(p[1] for p in pts.values()) + pitch * 0.75, 1))


def _manhattan(a: tuple[float, float], b: tuple[float, float]) -> float:
    return abs(a[0] - b[0]) + abs(a[1] - b[1])


def _tour(centres: Sequence[tuple[float, float]], start: tuple[float, float]) -> list[int]:
    """An order of the chips: nearest neighbour from the Pico, then improved by reversing stretches (2-opt)."""
    left = set(range(len(centres)))
    order: list[int] = []
    at = start
    while left:
        nxt = min(left, key=lambda i: (_manhattan(at, centres[i]), i))
        order.append(nxt)
        left.remove(nxt)
        at = centres[nxt]

    def length(seq: list[int]) -> float:
        pts = [start, *(centres[i] for i in seq)]
        return sum(_manhattan(a, b) for a, b in zip(pts, pts[1:], strict=False))

    improved = True
    while improved:
        improved = False
        for i in range(len(order) - 1):
            for j in range(i + 1, len(order)):
                trial = order[:i] + order[i:j + 1][::-1] + order[j + 1:]
                if length(trial) + 1e-6 < length(order):
                    order, improved = trial, True
    return order


def chain_plan(profile: Any, pitch: float = 40.0) -> ChainPlan:
    """The chain as ``profile``'s channels wire it: chip k reads channels 8k..8k+7."""
    from controller.rules import load_game

    if profile.scanner is None or profile.scanner.kind != "shift_register":
        raise ChainError(f"{profile.file}: scanner.kind: a chain plan is for a shift_register scanner")
    game = load_game(profile.game)
    pts = positions(game, pitch)
    by_channel = {ch: s for s, ch in profile.channels.items()}
    count = math.ceil(profile.scanner.channel_count / INPUTS)
    pico = _pico(pts, pitch)
    chips: list[Chip] = []
    prev = pico
    for k in range(count):
        inputs = tuple(by_channel.get(k * INPUTS + i) for i in range(INPUTS))
        mine = [pts[s] for s in inputs if s is not None]
        at = _centre(mine) if mine else prev
        spread = max((math.dist(at, p) for p in mine), default=0.0)
        runs = tuple(None if s is None else round(_manhattan(pts[s], at) + SLACK_MM, 1) for s in inputs)
        chips.append(Chip(k, at, inputs, round(spread, 1), runs, round(_manhattan(prev, at) + SLACK_MM, 1)))
        prev = at
    return ChainPlan(pitch=pitch, spacing=spacing(pts), pico=pico, chips=tuple(chips))


def channels_by_groups(groups: Sequence[Sequence[str]], per: int = INPUTS) -> dict[str, int]:
    """Station -> channel for chips (or hubs of ``per`` readers) holding these groups in order (chip k: channels 8k,
    8k+1, ...)."""
    return {s: k * per + i for k, group in enumerate(groups) for i, s in enumerate(group)}


def connector_at(game: Any, pitch: float = 40.0) -> tuple[float, float]:
    """Where the wires end: the Pico (or the Pi's screw-terminal breakout) at the middle of the bottom edge."""
    return _pico(positions(game, pitch), pitch)


def _path_mm(points: Sequence[tuple[float, float]], end: tuple[float, float]) -> float:
    """A wire along ``points`` in order, then from the nearer of its ends to ``end``; along the axes, with slack."""
    if not points:
        return 0.0
    along = sum(_manhattan(a, b) for a, b in zip(points, points[1:], strict=False))
    return round(along + min(_manhattan(points[0], end), _manhattan(points[-1], end)) + SLACK_MM, 1)


def matrix_runs(profile: Any, pitch: float = 40.0) -> dict[str, float]:
    """Each reed-matrix line's wire (mm): along its stations, then to the connector; "R3" and "C5" by name."""
    from controller.rules import load_game

    game = load_game(profile.game)
    pts = positions(game, pitch)
    end = _pico(pts, pitch)
    lines: dict[str, list[str]] = {}
    for s, ch in profile.channels.items():
        if isinstance(ch, tuple):
            r, c = ch
        elif profile.scanner is not None and profile.scanner.matrix is not None:
            r, c = divmod(ch, profile.scanner.matrix[1])
        else:
            raise ChainError(f"{profile.file}: channels: a matrix run needs a reed matrix (a Pi matrix or scanner.matrix)")
        lines.setdefault(f"R{r}", []).append(s)
        lines.setdefault(f"C{c}", []).append(s)
    out = {}
    for name, members in lines.items():
        key = (lambda s: (pts[s][0], pts[s][1])) if name[0] == "R" else (lambda s: (pts[s][1], pts[s][0]))
        out[name] = _path_mm([pts[s] for s in sorted(members, key=key)], end)
    return dict(sorted(out.items(), key=lambda kv: (kv[0][0] != "R", int(kv[0][1:]))))


def matrix_layout(game: Any, pool: int, pitch: float = 40.0) -> tuple[int, int, dict[str, tuple[int, int]]]:
    """Rows, columns and each station's (row, column) for a reed matrix of at most ``pool`` lines, from the game's
    coordinates, so each line runs along neighbouring stations: the board's own grid where it has one (a row per
    distinct height, a column per distinct left-right place), else the squarest matrix (the fewest lines) laid as
    bands of rows top to bottom or strips of columns left to right, whichever makes the longest column (an input,
    which ``MATRIX_COLUMN_LIMIT_MM`` limits) shorter, then the longest row."""
    from controller.sensing.profile import squarest_matrix

    pts = positions(game, pitch)
    ys = sorted({round(y, 1) for _, y in pts.values()})
    xs = sorted({round(x, 1) for x, _ in pts.values()})
    grid = {s: (ys.index(round(y, 1)), xs.index(round(x, 1))) for s, (x, y) in pts.items()}
    if len(ys) + len(xs) <= pool and len(set(grid.values())) == len(grid):
        return len(ys), len(xs), grid
    rows, cols = squarest_matrix(len(pts))
    end = _pico(pts, pitch)
    best: tuple[tuple[float, float], int, int, dict[str, tuple[int, int]]] | None = None
    for r_n, c_n in {(rows, cols), (cols, rows)}:
        for across in (True, False):  # bands of rows top to bottom, or strips of columns left to right
            lines, per = (r_n, c_n) if across else (c_n, r_n)
            axis, other = (1, 0) if across else (0, 1)
            ordered = sorted(pts, key=lambda s: (pts[s][axis], pts[s][other], s))
            out: dict[str, tuple[int, int]] = {}
            for i in range(lines):
                group = sorted(ordered[i * per:(i + 1) * per], key=lambda s: (pts[s][other], pts[s][axis], s))
                out |= {s: ((i, j) if across else (j, i)) for j, s in enumerate(group)}
            def longest(k: int, n: int, out: dict[str, tuple[int, int]] = out) -> float:
                return max(_path_mm(sorted((pts[s] for s in out if out[s][k] == v), key=lambda p: (p[k], p[1 - k])), end)
                           for v in range(n))

            score = (longest(1, c_n), longest(0, r_n))  # the columns first: they are the inputs
            if best is None or score < best[0]:
                best = (score, r_n, c_n, out)
    assert best is not None
    return best[1], best[2], best[3]


def reader_stations(profile: Any) -> list[str]:
    """The station each reader watches, reader 0 first: on an RFID-per-station build reader k is channel k; on a
    hybrid build (its channels are the 74HC165 chain's) the readers follow the hubs ``reader_groups`` chooses from the
    coordinates, and config.json's ``rfid.channels`` says which reed channel each reader watches."""
    if getattr(profile, "sensing", None) == "rfid":
        return sorted(profile.channels, key=profile.channels.get)
    from controller.rules import load_game

    from .readers import RC522, build_pitch

    game = load_game(profile.game)
    return [s for group in reader_groups(game, build_pitch(game, RC522)) for s in group]


def hub_reach(profile: Any, pitch: float) -> list[tuple[int, float]]:
    """Each reader hub's farthest reader: (hub, mm along the board from the hub's centre, its readers' middle)."""
    from controller.rules import load_game

    pts = positions(load_game(profile.game), pitch)
    names = reader_stations(profile)
    out = []
    for g in range(0, len(names), READERS_PER_HUB):
        mine = [pts[s] for s in names[g:g + READERS_PER_HUB]]
        c = _centre(mine)
        out.append((g // READERS_PER_HUB, round(max(_manhattan(c, p) for p in mine), 1)))
    return out


def hub_ribbons(profile: Any, pitch: float) -> list[float]:
    """Each reader hub's 10-way ribbon from the Pico (at the middle of the bottom edge) to the hub's centre, mm,
    along the board's axes with slack."""
    from controller.rules import load_game

    game = load_game(profile.game)
    pts = positions(game, pitch)
    names = reader_stations(profile)
    end = _pico(pts, pitch)
    return [round(_manhattan(end, _centre([pts[s] for s in names[g:g + READERS_PER_HUB]])) + SLACK_MM, 1)
            for g in range(0, len(names), READERS_PER_HUB)]


def light_runs(profile: Any, led_points: Sequence[tuple[float, float]], pitch: float = 40.0) -> tuple[float, float]:
    """The WS2812 chain's 3-way ribbon (LED to LED, and the connector to LED 0) and the 5 V feed to its far end (mm)."""
    from controller.rules import load_game

    if not led_points:
        return 0.0, 0.0
    end = connector_at(load_game(profile.game), pitch)
    links = sum(_manhattan(a, b) + SLACK_MM for a, b in zip(led_points, led_points[1:], strict=False))
    return round(links + _manhattan(end, led_points[0]) + SLACK_MM, 1), round(_manhattan(end, led_points[-1]) + SLACK_MM, 1)
