"""Draws a game's board as SVG, the one board-drawing module: the web page's static board and the 1:1 printable board.

A game file gives stations (x, y, kind) and lines (kind, ordered stations). ``layout`` turns those into drawing
coordinates: the game's smallest station distance becomes ``pitch`` units (pixels on screen, millimetres on paper),
y grows downwards, and the board may be turned by quarter turns so that a seat's home is at the bottom.
``board_layer`` draws lines (one class per line kind), stations (one ``g.station`` per station, its mark shaped by what
its kind does: impassable square, sheltering circle, frozen rounded box, plain box) and labels. The web page serves
that layer and adds pieces on top; ``printable`` adds sensor channels, drill marks and LED holes from a hardware
profile and splits the board onto A4 or Letter pages with cut lines and alignment marks; its ``layer`` may instead be
the drill or the assembly layer (controller/board_layers.py). Where stations lie comes from
controller/board_geometry.py, the mechanical design from controller/hardware/mechanics.py.

>>> from controller.rules import load_game
>>> job = printable(load_game("luzhanqi"), paper="a4")
>>> job.pitch, len(job.pages), job.grid
(40.0, 3, ('landscape', 1, 3))
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple
from xml.sax.saxutils import escape, quoteattr

from controller.board_geometry import Layout, layout, quarter_turns, unit_distance  # noqa: F401 - re-exported
from controller.board_geometry import rounded as _r
from controller.errors import FaceDownError
from controller.hardware import mechanics as _mech

#: Paper sizes in millimetres (portrait width, height).
PAPER_MM: dict[str, tuple[float, float]] = {"a4": (210.0, 297.0), "letter": (215.9, 279.4)}
#: Default distance between neighbouring stations on paper: room for a 30 mm piece and the LED beside it, and far
#: enough apart that a magnet never closes its neighbour's reed switch (controller/hardware/mechanics.py checks it).
DEFAULT_PITCH_MM = 40.0
#: An RC522 reader module is 60 x 40 mm: with one under each station a square grid needs 63 mm (module plus 3 mm);
#: the pitch of a reader-per-station board is computed for its game (controller/hardware/readers.build_pitch).
RFID_PITCH_MM = 65.0
PITCH_RANGE_MM = (25.0, 120.0)
#: Most printers cannot print the outer few millimetres of a sheet.
PAGE_MARGIN_MM = 10.0
#: Each page repeats this much of its neighbour, so sheets can be trimmed at the cut line and overlapped.
OVERLAP_MM = 16.0
#: The band at the top of each page for the page number, the game, a scale bar and the printing notes.
HEADER_MM = 12.0
#: The 50 mm scale bar sits at the top right of the header; text beside it keeps this far away.
SCALE_BAR_MM = 50.0
SCALE_GAP_MM = 4.0
#: Drill marks (the cross at a station's centre, the sensor's outline): the blue hardware/README.md documents.
DRILL_COLOUR = "#0050a0"
#: A generous average advance per character, in em, for wrapping header text without a font engine (a CJK
#: character is a full em); the rendering test checks the real glyphs stay clear of the scale bar.
_EM_LATIN, _EM_CJK = 0.6, 1.0
#: The glass reed switch (length x diameter, mm) drawn under each station, and how far its centre sits from the
#: station's (controller/hardware/mechanics.py: the magnet must be over one end of the glass).
REED_MM = (_mech.REED.glass_mm, _mech.REED.dia_mm)
REED_OFFSET_MM = _mech.REED_OFFSET_MM
#: The layers `facedown print-board --layer` draws: the printed top, the drill template, the underside.
LAYERS = ("board", "drill", "assembly")

#: Chinese names of common station kinds, used when the kind's doc in the game file does not begin with one.
KIND_ZH = {
    "camp": "行營", "hq": "大本營", "lake": "湖", "river": "河", "water": "水", "sea": "海", "harbour": "港",
    "harbor": "港", "port": "港口", "base": "基地", "island": "島", "airfield": "機場", "anchorage": "錨地",
    "command": "指揮部", "normal": "",
}
_KIND_EN = {"hq": "HQ"}
_CJK_HEAD = re.compile(r"^([\u3400-\u9fff\uf900-\ufaff]+(?:[/／][\u3400-\u9fff\uf900-\ufaff]+)*)")

# print styles: fill of a station's mark by kind, and stroke of a line by kind (colour, width mm, dash)
_PRINT_FILL = {
    "camp": "#e4f2dc", "hq": "#fbe0bd", "lake": "#bcdaf3", "river": "#bcdaf3", "water": "#bcdaf3",
    "sea": "#ffffff", "harbour": "#dcebf7", "harbor": "#dcebf7", "port": "#dcebf7", "anchorage": "#dcebf7",
    "base": "#f6d5d5", "island": "#efe4c2", "airfield": "#eeeeee", "command": "#fbe0bd",
}
_PRINT_LINE = {
    "road": ("#444444", 0.6, None), "rail": ("#000000", 1.6, "6 3"), "diagonal": ("#666666", 0.4, "2 2"),
    "sea": ("#2f6db5", 0.6, "5 2"), "sea_route": ("#2f6db5", 0.6, "5 2"), "route": ("#2f6db5", 0.6, None),
    "air": ("#777777", 0.4, "1 2"), "air_route": ("#777777", 0.4, "1 2"), "red": ("#b22222", 1.2, None),
    "branch": ("#555555", 0.5, "3 2"),
}
_OTHER_DASHES = (None, "4 2", "1 2", "6 2 1 2")


class BoardDrawingError(FaceDownError, ValueError):
    """A board cannot be drawn as asked (bad pitch, unknown paper, a profile for another game)."""


@dataclass(frozen=True, slots=True)
class ScreenBoard:
    """The web page's static board for one viewer: the SVG viewBox and the layer of lines and stations."""

    viewbox: str
    layer: str


@dataclass(frozen=True, slots=True)
class PrintJob:
    """A printable board: the whole board on one sheet of its own size, and the same board tiled onto pages."""

    whole: str
    pages: tuple[str, ...]
    grid: tuple[str, int, int]  # orientation, columns, rows
    pitch: float
    paper: str
    width_mm: float
    height_mm: float


def _n(v: float) -> str:
    """A number for an SVG attribute: short, no trailing zeros."""
    text = f"{v:.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def _cls(text: str) -> str:
    return re.sub(r"[^a-z0-9_-]", "_", str(text).lower())


# ---------------------------------------------------------------------------------------------------- names
def kind_names(game: Any, kind: str) -> tuple[str, str]:
    """(English, Chinese) name of a station kind: Chinese from the head of the kind's doc, else a known name."""
    sk = game.station_kinds.get(kind)
    zh = ""
    if sk is not None and sk.doc:
        m = _CJK_HEAD.match(sk.doc.strip())
        zh = m.group(1) if m else ""
    zh = zh or KIND_ZH.get(kind, "")
    return _KIND_EN.get(kind, kind.replace("_", " ")), zh


def background_kind(game: Any) -> str:
    """The most common station kind: it gets no label on every station (only the other kinds are named)."""
    counts = Counter(s.kind for s in game.stations)
    return counts.most_common(1)[0][0] if counts else "normal"


def channel_label(profile: Any, station: str) -> str:
    """The sensor channel of a station as the wiring tables name it: R3 C5 on a Pi matrix, ch 17 on a scanner."""
    ch = profile.channels[station]
    if isinstance(ch, tuple):
        return f"R{ch[0]} C{ch[1]}"
    return f"ch {ch}"


# ---------------------------------------------------------------------------------------------------- the layer
def board_layer(game: Any, lay: Layout, *, printed: bool = False, channels: Mapping[str, str] | None = None,
                drill: str | None = None, only: set[str] | None = None, leds: Mapping[str, int] | None = None,
                led_at: tuple[float, float] = (0.0, 0.0)) -> str:
    """The board's lines and stations as SVG elements (no <svg> around them).

    ``printed`` adds presentation attributes for paper (the screen uses the page's CSS classes, as a Content
    Security Policy forbids inline styles), kind names in English and Chinese, and ``channels`` (station -> text).
    ``drill`` is ``"reed"`` or ``"tag"`` for drill marks under each station. ``only`` limits the stations drawn.
    ``leds`` (station -> LED index) draws each station light's hole at ``led_at`` from the centre, with its index.
    """
    p = lay.pitch
    out: list[str] = ['<g class="lines">']
    line_kinds = sorted({ln.kind for ln in game.lines})
    for ln in game.lines:
        pts = " ".join(f"{_n(lay.points[s][0])},{_n(lay.points[s][1])}" for s in ln.stations)
        attrs = _line_attrs(ln.kind, line_kinds, p) if printed else ""
        out.append(f'<polyline class="line line-{_cls(ln.kind)}" points="{pts}"{attrs}/>')
        if not printed and ln.kind == "rail":  # on screen a railway is a track with sleepers, thin enough to read names through
            out.append(f'<polyline class="line line-rail-ties" points="{pts}"/>')
    out.append("</g>")
    out.append('<g class="stations">')
    plain = background_kind(game)
    for s in game.stations:
        if only is not None and s.id not in only:
            continue
        x, y = lay.points[s.id]
        sk = game.station_kinds.get(s.kind)
        out.append(f'<g class="station kind-{_cls(s.kind)}" data-station={quoteattr(s.id)} data-x="{_n(x)}" data-y="{_n(y)}" '
                   f'transform="translate({_n(x)},{_n(y)})">')
        fill = f' fill="{_PRINT_FILL.get(s.kind, "#ffffff")}" stroke="#333333" stroke-width="{_n(p * 0.012)}"' if printed else ""
        if sk is not None and not sk.passable:
            out.append(f'<rect class="mark" x="{_n(-p / 2)}" y="{_n(-p / 2)}" width="{_n(p)}" height="{_n(p)}"{fill}/>')
        elif sk is not None and sk.shelter:
            out.append(f'<circle class="mark" r="{_n(p * 0.367)}"{fill}/>')
        elif sk is not None and sk.frozen:
            out.append(f'<rect class="mark" x="{_n(-p * 0.4)}" y="{_n(-p * 0.3)}" width="{_n(p * 0.8)}" height="{_n(p * 0.6)}" '
                       f'rx="{_n(p * 0.233)}"{fill}/>')
        else:
            out.append(f'<rect class="mark" x="{_n(-p * 0.367)}" y="{_n(-p * 0.267)}" width="{_n(p * 0.733)}" '
                       f'height="{_n(p * 0.533)}" rx="{_n(p * 0.05)}"{fill}/>')
        if drill:
            out.append(_drill_mark(drill, p))
        if leds is not None and s.id in leds:
            lx, ly = led_at
            out.append(f'<circle class="drill led" cx="{_n(lx)}" cy="{_n(ly)}" r="{_n(_mech.LED_HOLE_MM / 2)}" fill="none" '
                       f'stroke="{DRILL_COLOUR}" stroke-width="0.25"/><text class="led-index" x="{_n(lx + 3.3)}" y="{_n(ly + 0.9)}" '
                       f'font-size="{_n(p * 0.06)}" fill="{DRILL_COLOUR}" font-family="sans-serif">L{leds[s.id]}</text>')
        if printed:  # inside the mark on paper, under it on screen (as the page's pieces cover the mark)
            out.append(f'<text class="sid" y="{_n(p * 0.22)}" font-size="{_n(p * 0.12)}" text-anchor="middle" fill="#444444" '
                       f'font-family="sans-serif">{escape(s.label or s.id)}</text>')
        else:
            out.append(f'<text class="sid" y="{_n(p * 0.45)}">{escape(s.label or s.id)}</text>')
        if printed and s.kind != plain:
            en, zh = kind_names(game, s.kind)
            out.append(f'<text class="kind" y="{_n(-p * 0.19)}" font-size="{_n(p * 0.075)}" text-anchor="middle" fill="#333333" '
                       f'font-family="sans-serif">{escape(en)}</text>')
            if zh:
                out.append(f'<text class="kind-zh" y="{_n(-p * 0.07)}" font-size="{_n(p * 0.1)}" text-anchor="middle" '
                           f'fill="#333333" font-family="Noto Sans CJK SC, Noto Sans CJK TC, sans-serif">{escape(zh)}</text>')
        if printed and channels is not None and s.id in channels:
            out.append(f'<text class="channel" x="{_n(-p * 0.47)}" y="{_n(-p * 0.4)}" font-size="{_n(p * 0.075)}" '
                       f'fill="#a0001c" font-family="monospace">{escape(channels[s.id])}</text>')
        if not printed:
            out.append(f'<rect class="hit" x="{_n(-p / 2)}" y="{_n(-p / 2)}" width="{_n(p)}" height="{_n(p)}"/>')
        out.append("</g>")
    out.append("</g>")
    return "".join(out)


def _line_attrs(kind: str, kinds: list[str], p: float) -> str:
    if kind in _PRINT_LINE:
        colour, width, dash = _PRINT_LINE[kind]
    else:
        colour, width, dash = "#555555", 0.5, _OTHER_DASHES[kinds.index(kind) % len(_OTHER_DASHES)]
    scale = p / DEFAULT_PITCH_MM
    attrs = f' fill="none" stroke="{colour}" stroke-width="{_n(width * scale)}" stroke-linejoin="round"'
    if dash:
        attrs += f' stroke-dasharray="{" ".join(_n(float(d) * scale) for d in dash.split())}"'
    return attrs


def _drill_mark(kind: str, p: float) -> str:
    """Where the sensor goes under a station: a reed switch off-centre, or the tag's circle over a reader module
    centred under the station."""
    arm = 3.0
    cross = (f'<path class="drill cross" d="M{_n(-arm)},0H{_n(arm)}M0,{_n(-arm)}V{_n(arm)}" stroke="{DRILL_COLOUR}" '
             f'stroke-width="0.25" fill="none"/><circle class="drill" r="1" fill="none" stroke="{DRILL_COLOUR}" stroke-width="0.2"/>')
    if kind == "reed":
        length, dia = REED_MM
        x0 = REED_OFFSET_MM - length / 2
        return (cross + f'<rect class="drill reed" x="{_n(x0)}" y="{_n(-dia / 2)}" width="{_n(length)}" height="{_n(dia)}" '
                        f'fill="none" stroke="{DRILL_COLOUR}" stroke-width="0.25" stroke-dasharray="1 0.6"/>')
    return cross + (f'<circle class="drill tag" r="{_n(min(p * 0.3, 15.0))}" fill="none" stroke="{DRILL_COLOUR}" stroke-width="0.25" '
                    f'stroke-dasharray="1 0.6"/>')


# ---------------------------------------------------------------------------------------------------- the web page
SCREEN_PITCH = 60.0
SCREEN_MARGIN = 40.0


def screen_board(game: Any, bottom_side: str | None, *, extra_turns: int = 0) -> ScreenBoard:
    """The web page's static board for a viewer whose side (or the first side) is at the bottom; ``extra_turns``
    quarter turns more (1: that side on the left, for a tall board on a wide screen)."""
    turns = (quarter_turns(game, bottom_side) + extra_turns) % 4
    lay = widen_front(game, layout(game, pitch=SCREEN_PITCH, margin=SCREEN_MARGIN, turns=turns))
    return ScreenBoard(viewbox=f"0 0 {_n(lay.width)} {_n(lay.height)}", layer=front_layer(game, lay) + board_layer(game, lay))


#: how much wider than a row's pitch the gap at the front is drawn on screen (room for the mountains and the names)
FRONT_GAP = 0.6


def widen_front(game: Any, lay: Layout) -> Layout:
    """Open the gap between two Junqi armies, as the printed board does, so the front's mountains cross no name."""
    front = front_line(game, lay)
    if front is None:
        return lay
    extra = lay.pitch * FRONT_GAP
    if front.axis == "y":
        points = {sid: (x, _r(y + extra if y > front.at else y)) for sid, (x, y) in lay.points.items()}
        return Layout(points=points, pitch=lay.pitch, width=lay.width, height=_r(lay.height + extra), turns=lay.turns)
    points = {sid: (_r(x + extra if x > front.at else x), y) for sid, (x, y) in lay.points.items()}
    return Layout(points=points, pitch=lay.pitch, width=_r(lay.width + extra), height=lay.height, turns=lay.turns)


class Front(NamedTuple):
    """Where two Junqi armies meet: across the ``axis`` ("y": a horizontal front, "x": a vertical one) at ``at``; the
    positions along the front of each line of stations that a road or railway crosses (``passes``) and that none
    crosses (``mountains``)."""

    axis: str
    at: float
    passes: list[float]
    mountains: list[float]


def _transposed(lay: Layout) -> Layout:
    return Layout(points={s: (y, x) for s, (x, y) in lay.points.items()}, pitch=lay.pitch, width=lay.height,
                  height=lay.width, turns=lay.turns)


def front_line(game: Any, lay: Layout) -> Front | None:
    """Where two armies' areas meet with no station between them (Junqi's front), on a board drawn either way up;
    None for boards without such a front."""
    zones = game.setup.zones.get(game.setup.deploy_zone, {})
    if len(game.sides) != 2 or len(zones) != 2 or not any(ln.kind == "rail" for ln in game.lines):
        return None  # the Junqi family only (railways and a front); sea games and Stratego's lakes are drawn as they are
    for axis, view in (("y", lay), ("x", _transposed(lay))):
        found = _front_across_y(game, zones, view)
        if found is not None:
            return Front(axis, *found)
    return None


def _front_across_y(game: Any, zones: Mapping[str, Any], lay: Layout) -> tuple[float, list[float], list[float]] | None:
    ys = [sorted({lay.points[s][1] for s in zones[side]}) for side in game.sides]
    if not all(ys):
        return None
    (a, b) = sorted(ys, key=lambda v: v[0])
    top, bottom = a[-1], b[0]
    if bottom <= top or any(top < y < bottom for _, y in lay.points.values()):
        return None
    mid = (top + bottom) / 2
    edge = {x for x, y in lay.points.values() if abs(y - top) < 1e-6}
    crossing: set[float] = set()
    for ln in game.lines:
        for u, v in zip(ln.stations, ln.stations[1:], strict=False):
            (x1, y1), (x2, y2) = lay.points[u], lay.points[v]
            if (y1 - mid) * (y2 - mid) < 0:
                crossing.add(round(x1 + (x2 - x1) * (mid - y1) / (y2 - y1), 3))
    passes = sorted(x for x in edge if any(abs(x - c) < 1e-3 for c in crossing))
    return mid, passes, sorted(x for x in edge if x not in passes)


def front_layer(game: Any, lay: Layout) -> str:
    """On screen, the front between two armies as the printed Junqi board has it: a band with mountains where no
    road or railway crosses. Its words are filled in by the page (``data-t``) in the reader's language."""
    front = front_line(game, lay)
    if front is None:
        return ""
    p = lay.pitch
    at = front.at
    if front.axis == "y":
        band = f'x="0" y="{_n(at - p * 0.2)}" width="{_n(lay.width)}" height="{_n(p * 0.4)}"'
        spots = [(m, at) for m in front.mountains]
    else:
        band = f'x="{_n(at - p * 0.2)}" y="0" width="{_n(p * 0.4)}" height="{_n(lay.height)}"'
        spots = [(at, m) for m in front.mountains]
    out = [f'<g class="front"><title data-t="page.front_line">front line</title><rect class="front-band" {band}/>']
    for x, y in spots:
        out.append(f'<path class="mountain" d="M{_n(x - p * 0.3)},{_n(y + p * 0.18)}L{_n(x - p * 0.1)},{_n(y - p * 0.16)}'
                   f'L{_n(x)},{_n(y)}L{_n(x + p * 0.12)},{_n(y - p * 0.2)}L{_n(x + p * 0.3)},{_n(y + p * 0.18)}Z">'
                   '<title data-t="page.mountain">mountain</title></path>')
    out.append("</g>")
    return "".join(out)


# ---------------------------------------------------------------------------------------------------- paper
def default_pitch(profile: Any = None, game: Any = None) -> float:
    """40 mm for reed boards (a check-in pad too); for a reader under each station, the pitch its reader modules
    need on this game's board (``readers.build_pitch``, 65 mm on a square grid)."""
    if profile is not None and getattr(profile, "sensing", "reed") in ("rfid", "hybrid"):
        if game is None:
            return RFID_PITCH_MM
        from controller.hardware.readers import RC522, build_pitch

        return build_pitch(game, RC522)
    return DEFAULT_PITCH_MM


def page_grid(width: float, height: float, paper: str) -> tuple[str, int, int]:
    """(orientation, columns, rows) of pages for a board of this size in mm: the orientation needing fewer pages."""
    best: tuple[int, int, str, int, int] | None = None
    for rank, orientation in enumerate(("portrait", "landscape")):
        tw, th = _tile(paper, orientation)
        cols, rows = _count(width, tw), _count(height, th)
        key = (cols * rows, rank, orientation, cols, rows)
        if best is None or key < best:
            best = key
    assert best is not None
    return best[2], best[3], best[4]


def _paper(paper: str) -> tuple[float, float]:
    try:
        return PAPER_MM[paper.lower()]
    except KeyError:
        raise BoardDrawingError(f"paper {paper!r}: expected one of {', '.join(PAPER_MM)}") from None


def _sheet(paper: str, orientation: str) -> tuple[float, float]:
    w, h = _paper(paper)
    return (h, w) if orientation == "landscape" else (w, h)


def _tile(paper: str, orientation: str) -> tuple[float, float]:
    """The part of the board one page shows (mm): the sheet less its margins and header."""
    w, h = _sheet(paper, orientation)
    return w - 2 * PAGE_MARGIN_MM, h - 2 * PAGE_MARGIN_MM - HEADER_MM


def _count(length: float, tile: float) -> int:
    if length <= tile + 1e-6:
        return 1
    return math.ceil((length - OVERLAP_MM) / (tile - OVERLAP_MM) - 1e-9)


def printable(game: Any, *, profile: Any = None, paper: str = "a4", pitch: float | None = None,
              layer: str = "board") -> PrintJob:
    """The 1:1 printable board split onto pages: ``layer`` "board" (stations, lines, kind names, labels, sensor
    channels, drill marks and LED holes), "drill" (the holes to drill from the top) or "assembly" (the underside seen
    from below: reed grooves, LEDs, channels and wiring; controller/board_layers.py)."""
    from controller import board_layers

    _paper(paper)
    if layer not in LAYERS:
        raise BoardDrawingError(f"layer {layer!r}: expected one of {', '.join(LAYERS)}")
    if profile is not None and profile.game != game.id:
        raise BoardDrawingError(f"{profile.file}: game: the profile is for {profile.game!r}, not {game.id!r}")
    pitch = float(pitch) if pitch is not None else default_pitch(profile, game)
    if not PITCH_RANGE_MM[0] <= pitch <= PITCH_RANGE_MM[1]:
        raise BoardDrawingError(f"pitch {_n(pitch)} mm: expected {_n(PITCH_RANGE_MM[0])} to {_n(PITCH_RANGE_MM[1])} mm between stations")
    lay = layout(game, pitch=pitch, margin=pitch * 0.75)
    channels = {s: channel_label(profile, s) for s in profile.stations} if profile is not None else None
    drill = "reed" if profile is None or profile.sensing in ("reed", "checkin") else "tag"
    leds = _mech.led_indices(profile)
    led_at = _mech.led_offset(game, profile)
    if layer == "assembly":
        lay = board_layers.mirrored(lay)

    def draw(only: set[str] | None = None) -> str:
        if layer == "drill":
            return board_layers.drill_layer(game, lay, profile, only)
        if layer == "assembly":
            return board_layers.assembly_layer(game, lay, profile, channels, only=only)
        return board_layer(game, lay, printed=True, channels=channels, drill=drill, only=only, leds=leds, led_at=led_at)

    orientation, cols, rows = page_grid(lay.width, lay.height, paper)
    tw, th = _tile(paper, orientation)
    seams_x = [(i + 1) * (tw - OVERLAP_MM) + OVERLAP_MM / 2 for i in range(cols - 1)]
    seams_y = [(j + 1) * (th - OVERLAP_MM) + OVERLAP_MM / 2 for j in range(rows - 1)]
    marks = _seam_marks(lay, seams_x, seams_y)
    title = f"{game.name} {game.zh}".strip() + ("" if layer == "board" else f" · {layer} layer")
    source = f"profile {profile.name or profile.file}" if profile is not None else "no profile: no channels"
    extra = [] if layer == "board" else board_layers.notes(layer, game, lay, profile)
    whole = _whole_sheet(game, lay, draw(), title, source, marks, extra)
    pages: list[str] = []
    if cols * rows > 1:
        n = cols * rows
        for j in range(rows):
            for i in range(cols):
                x0, y0 = i * (tw - OVERLAP_MM), j * (th - OVERLAP_MM)
                inside = {s for s, (x, y) in lay.points.items()
                          if x0 - pitch <= x <= x0 + tw + pitch and y0 - pitch <= y <= y0 + th + pitch}
                pages.append(_page(paper, orientation, draw(inside) + marks, x0, y0, tw, th, title, source,
                                   f"page {j * cols + i + 1} of {n} (row {j + 1}, column {i + 1})", pitch,
                                   cut_left=i > 0, cut_top=j > 0, extra=extra[0] if extra else ""))
    else:
        w, h = lay.width, lay.height
        pages.append(_page(paper, orientation, draw(), -(tw - w) / 2, -(th - h) / 2, tw, th, title, source, "page 1 of 1",
                           pitch, cut_left=False, cut_top=False, extra=extra[0] if extra else ""))
    return PrintJob(whole=whole, pages=tuple(pages), grid=(orientation, cols, rows), pitch=pitch, paper=paper.lower(),
                    width_mm=lay.width, height_mm=lay.height)


def _seam_marks(lay: Layout, seams_x: list[float], seams_y: list[float]) -> str:
    """Cut lines where two pages meet, with registration crosses on them (in board coordinates)."""
    out = ['<g class="alignment">']
    for x in seams_x:
        out.append(f'<path class="cut" d="M{_n(x)},0V{_n(lay.height)}" stroke="#888888" stroke-width="0.25" stroke-dasharray="3 2" fill="none"/>')
        for y in _spread(lay.height):
            out.append(_cross(x, y))
    for y in seams_y:
        out.append(f'<path class="cut" d="M0,{_n(y)}H{_n(lay.width)}" stroke="#888888" stroke-width="0.25" stroke-dasharray="3 2" fill="none"/>')
        for x in _spread(lay.width):
            out.append(_cross(x, y))
    out.append("</g>")
    return "".join(out)


def _spread(length: float) -> list[float]:
    """Positions for registration marks along a seam: near both ends and about every 60 mm between."""
    n = max(2, round(length / 60) + 1)
    return [8 + (length - 16) * k / (n - 1) for k in range(n)]


def _cross(x: float, y: float) -> str:
    return (f'<g class="register" transform="translate({_n(x)},{_n(y)})"><circle r="3" fill="none" stroke="#000000" stroke-width="0.25"/>'
            '<path d="M-5,0H5M0,-5V5" stroke="#000000" stroke-width="0.25" fill="none"/></g>')


def _scale_bar(x: float, y: float) -> str:
    """A 50 mm bar: measure it to check the page printed at 100 %."""
    return (f'<g class="scale" transform="translate({_n(x)},{_n(y)})"><path d="M0,0V-2M0,-1H50M50,0V-2M10,-1.8V-1M20,-1.8V-1'
            f'M30,-1.8V-1M40,-1.8V-1" stroke="#000000" stroke-width="0.3" fill="none"/>'
            '<text x="25" y="-2.6" font-size="2.4" text-anchor="middle" font-family="sans-serif">50 mm at 100 %</text></g>')


def _svg_open(width: float, height: float, title: str) -> str:
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{_n(width)}mm" height="{_n(height)}mm" '
            f'viewBox="0 0 {_n(width)} {_n(height)}"><title>{escape(title)}</title>')


def text_width(text: str, size: float) -> float:
    """A generous estimate of a line's width in mm at font ``size`` mm (CJK characters a full em)."""
    return sum(size * (_EM_CJK if "\u2e80" <= ch <= "\uffef" else _EM_LATIN) for ch in text)


def wrap(text: str, size: float, width: float) -> list[str]:
    """``text`` broken between words into lines no wider than ``width`` mm at font ``size``; no line starts or ends
    with a " · " separator."""
    lines: list[str] = []
    current = ""
    for word in text.split(" "):
        trial = f"{current} {word}" if current else word
        if current and text_width(trial, size) > width:
            lines.append(current)
            current = word
        else:
            current = trial
    if current:
        lines.append(current)
    return [ln.strip(" ·") for ln in lines if ln.strip(" ·")]


def header_layout(w: float, title: str, notes: list[str]) -> tuple[list[tuple[str, float, float, float]], float]:
    """Where the header's lines go on a sheet ``w`` mm wide: (text, x, baseline y, font size) per line, and where the
    scale bar's left end is. The title is one line beside the bar (smaller type if it must); notes level with the bar
    wrap short of it, notes below it use the full width; all within HEADER_MM."""
    m = PAGE_MARGIN_MM
    bar_x = w - m - SCALE_BAR_MM
    beside = bar_x - SCALE_GAP_MM - m
    bar_bottom = m + 7.5  # the bar's baseline; its label sits above it
    title_size = max(2.4, min(3.4, 3.4 * beside / max(text_width(title, 3.4), 1e-9)))
    for note_size in (2.4, 2.2, 2.0):
        out = [(title, m, m + title_size * 0.95, title_size)]
        y = m + title_size * 1.3
        for text in notes:
            rest = text
            while rest:
                width = beside if y < bar_bottom + 0.5 else (w - 2 * m)
                line = wrap(rest, note_size, width)[0]
                out.append((line, m, y + note_size * 0.95, note_size))
                y += note_size * 1.3
                rest = rest[len(line):].lstrip(" ·")
        if y <= m + HEADER_MM + 0.01:
            return out, bar_x
    raise BoardDrawingError(f"the page header needs {y - m:.1f} mm, more than its {HEADER_MM:g} mm (a profile name too long?)")


def _page(paper: str, orientation: str, body: str, x0: float, y0: float, tw: float, th: float, title: str, source: str,
          which: str, pitch: float, *, cut_left: bool, cut_top: bool, extra: str = "") -> str:
    w, h = _sheet(paper, orientation)
    m, top = PAGE_MARGIN_MM, PAGE_MARGIN_MM + HEADER_MM
    hint = []
    if cut_left:
        hint.append("the left")
    if cut_top:
        hint.append("the top")
    notes = [f"{paper.upper() if paper == 'a4' else paper.capitalize()} {orientation} · print at 100 % (no fit to page) · "
             f"pitch {_n(pitch)} mm · {source}"]
    if hint:
        notes.append(f"Cut {' and '.join(hint)} edge{'s' if len(hint) > 1 else ''} on the dashed lines · overlap the neighbour, crosses matching")
    try:
        lines, bar_x = header_layout(w, f"FaceDown · {title} · {which}", [*notes, extra] if extra else notes)
    except BoardDrawingError:
        if not extra:
            raise
        lines, bar_x = header_layout(w, f"FaceDown · {title} · {which}", notes)  # the layer's note is on the whole sheet
    head = "".join(
        f'<text class="{"page-note" if i else "page-title"}" x="{_n(x)}" y="{_n(y)}" font-size="{_n(size)}" '
        f'font-family="{"sans-serif" if i else "Noto Sans CJK SC, sans-serif"}">{escape(text)}</text>'
        for i, (text, x, y, size) in enumerate(lines))
    return (_svg_open(w, h, f"{title} — {which}") + head + _scale_bar(bar_x, m + 7.5)
            + f'<defs><clipPath id="tile"><rect x="{_n(m)}" y="{_n(top)}" width="{_n(tw)}" height="{_n(th)}"/></clipPath></defs>'
            + f'<g clip-path="url(#tile)"><g class="board" transform="translate({_n(m - x0)},{_n(top - y0)})">{body}</g></g>'
            + f'<rect class="tile-edge" x="{_n(m)}" y="{_n(top)}" width="{_n(tw)}" height="{_n(th)}" fill="none" stroke="#cccccc" '
              f'stroke-width="0.2"/></svg>\n')


def _whole_sheet(game: Any, lay: Layout, body: str, title: str, source: str, marks: str, extra: list[str]) -> str:
    """The whole board on one sheet of its own size (a poster, or the drilling template), with a legend below."""
    legend, legend_h = _legend(game, lay.width)
    bar_x = lay.width - 6 - SCALE_BAR_MM
    head: list[str] = []
    y = 2.0
    for text, size, cls in ((f"FaceDown · {title}", 4.0, "page-title"),
                            (f"whole board at 1:1 · pitch {_n(lay.pitch)} mm · {source}", 2.6, "page-note"),
                            *((note, 2.6, "page-note") for note in extra)):
        for line in wrap(text, size, (bar_x - SCALE_GAP_MM - 6) if y < 11.5 else (lay.width - 12)):
            y += size * 1.05
            font = "Noto Sans CJK SC, sans-serif" if cls == "page-title" else "sans-serif"
            head.append(f'<text class="{cls}" x="6" y="{_n(y)}" font-size="{_n(size)}" font-family="{font}">{escape(line)}</text>')
            y += size * 0.3
    band = max(14.0, y + 3)
    h = band + lay.height + legend_h
    return (_svg_open(lay.width, h, title) + "".join(head) + _scale_bar(bar_x, 11)
            + f'<g class="board" transform="translate(0,{_n(band)})">{body}{marks}</g>'
            + f'<g class="legend" transform="translate(0,{_n(band + lay.height)})">{legend}</g></svg>\n')


def _legend(game: Any, width: float) -> tuple[str, float]:
    """Line kinds and station kinds with their names, in rows under the board."""
    out: list[str] = []
    kinds = sorted({ln.kind for ln in game.lines})
    x, y, row = 6.0, 6.0, 7.0
    for kind in kinds:
        if x + 45 > width:
            x, y = 6.0, y + row
        out.append(f'<path d="M{_n(x)},{_n(y)}h14"{_line_attrs(kind, kinds, DEFAULT_PITCH_MM)}/>'
                   f'<text x="{_n(x + 16)}" y="{_n(y + 1)}" font-size="3" font-family="sans-serif">{escape(kind.replace("_", " "))} line</text>')
        x += 45
    x, y = 6.0, y + row
    for kind in sorted({s.kind for s in game.stations}):
        en, zh = kind_names(game, kind)
        if x + 45 > width:
            x, y = 6.0, y + row
        out.append(f'<rect x="{_n(x)}" y="{_n(y - 2.5)}" width="8" height="5" fill="{_PRINT_FILL.get(kind, "#ffffff")}" stroke="#333333" '
                   f'stroke-width="0.3"/><text x="{_n(x + 10)}" y="{_n(y + 1)}" font-size="3" font-family="Noto Sans CJK SC, sans-serif">'
                   f'{escape(en)}{(" " + escape(zh)) if zh else ""}</text>')
        x += 45
    return "".join(out), y + row
