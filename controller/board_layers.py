"""Draws the drill and assembly layers of a printable board from its hardware's mechanical design.

``drill_layer`` is the top view to tape on the blank and drill through: a 2 mm pilot at every station, a 5 mm hole
at every station light (with its index). ``assembly_layer`` is the underside, seen from below (mirrored left to
right, its text still readable), to tape on the back aligned on the pilot holes: each reed groove with its glass,
each LED's counterbore and chain index with the chain's data path, each station's channel, and the wiring: the
matrix rows and columns, or every 74HC165 at its place with a line to each of its stations and the ribbon from the
Pico through the chips. Both are SVG elements in board millimetres (controller/board_geometry.py), for
controller/board_svg.py to put on pages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from xml.sax.saxutils import escape

from controller.board_geometry import Layout
from controller.hardware import mechanics as mech

DRILL = "#0050a0"
UNDER = "#7a3b00"
WIRE = "#555555"
_FONT = 'font-family="sans-serif"'


def _n(v: float) -> str:
    text = f"{v:.3f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def mirrored(lay: Layout) -> Layout:
    """The layout seen from below: left and right swapped."""
    return Layout(points={s: (round(lay.width - x, 3) + 0.0, y) for s, (x, y) in lay.points.items()}, pitch=lay.pitch,
                  width=lay.width, height=lay.height, turns=lay.turns)


def _features(game: Any, lay: Layout, profile: Any) -> list[mech.Station]:
    return mech.stations(game, dict(lay.points), profile)


def drill_layer(game: Any, lay: Layout, profile: Any, only: set[str] | None = None) -> str:
    """Every hole drilled from the top, right through, at 1:1: pilots and LED holes, with the station ids."""
    out = ['<g class="drill-layer">']
    for st in _features(game, lay, profile):
        if only is not None and st.id not in only:
            continue
        out.append(f'<g class="station" data-station="{escape(st.id)}" transform="translate({_n(st.x)},{_n(st.y)})">')
        out.append(f'<path class="cross" d="M-4,0H4M0,-4V4" stroke="{DRILL}" stroke-width="0.2" fill="none"/>')
        for h in st.holes:
            if h.side != "top":
                continue
            out.append(f'<circle class="hole {h.kind}" cx="{_n(h.x)}" cy="{_n(h.y)}" r="{_n(h.dia / 2)}" fill="none" '
                       f'stroke="{DRILL}" stroke-width="0.3"/>')
            if h.kind == "led":
                out.append(f'<text class="led-index" x="{_n(h.x + h.dia / 2 + 0.8)}" y="{_n(h.y + 1)}" font-size="2.4" '
                           f'fill="{DRILL}" {_FONT}>L{st.led_index} ⌀{_n(h.dia)}</text>')
        out.append(f'<text class="sid" y="6.5" font-size="3" text-anchor="middle" fill="#444444" {_FONT}>'
                   f'{escape(st.id)} ⌀{_n(mech.PILOT_MM)}</text></g>')
    out.append("</g>")
    return "".join(out)


def _rect(cls: str, cx: float, cy: float, length: float, width: float, angle: float, stroke: str, dash: str = "") -> str:
    d = f' stroke-dasharray="{dash}"' if dash else ""
    return (f'<rect class="{cls}" x="{_n(-length / 2)}" y="{_n(-width / 2)}" width="{_n(length)}" height="{_n(width)}" '
            f'transform="translate({_n(cx)},{_n(cy)}) rotate({_n(angle)})" fill="none" stroke="{stroke}" stroke-width="0.25"{d}/>')


def assembly_layer(game: Any, lay: Layout, profile: Any, channels: Mapping[str, str] | None = None, design: Any = None,
                   only: set[str] | None = None) -> str:
    """The underside seen from below (``lay`` already mirrored): grooves, glass, LEDs, channels and the wiring."""
    feats = _features(game, lay, profile)
    by_id = {f.id: f for f in feats}
    out = ['<g class="assembly-layer">', _wiring(profile, design, lay, by_id)]
    # a mirrored board: a feature at +x from the centre on top is at -x from below, its angle 180 - angle
    for st in feats:
        if only is not None and st.id not in only:
            continue
        out.append(f'<g class="station" data-station="{escape(st.id)}" transform="translate({_n(st.x)},{_n(st.y)})">')
        for h in st.holes:
            x, angle = -h.x, 180.0 - h.angle
            if h.kind == "pilot":
                out.append(f'<circle class="hole pilot" r="{_n(h.dia / 2)}" fill="none" stroke="{DRILL}" stroke-width="0.3"/>')
            elif h.kind == "groove":
                out.append(_rect("groove", x, h.y, h.length, h.dia, angle, UNDER))
                out.append(_rect("glass", x, h.y, mech.REED.glass_mm, mech.REED.dia_mm, angle, UNDER, "1 0.5"))
            elif h.kind == "pocket":
                out.append(_rect("pocket", x, h.y, h.length, h.dia, 0.0, UNDER, "2 1"))
            elif h.kind == "counterbore":
                out.append(f'<circle class="led" cx="{_n(x)}" cy="{_n(h.y)}" r="{_n(h.dia / 2)}" fill="none" stroke="{UNDER}" '
                           f'stroke-width="0.3"/><text class="led-index" x="{_n(x)}" y="{_n(h.y + 0.9)}" font-size="2.4" '
                           f'text-anchor="middle" fill="{UNDER}" {_FONT}>{st.led_index}</text>')
        label = escape(st.id) + (f" · {escape(channels[st.id])}" if channels and st.id in channels else "")
        out.append(f'<text class="sid" y="7" font-size="2.6" text-anchor="middle" fill="#222222" {_FONT}>{label}</text></g>')
    out.append(_chain_path(feats))
    out.append("</g>")
    return "".join(out)


def _chain_path(feats: list[mech.Station]) -> str:
    """The WS2812 data path, LED 0 to the last (DOUT to the next DIN), as a thin line with arrows every LED."""
    leds = sorted((f.led_index, (-(f.led[0] - f.x) + f.x, f.led[1])) for f in feats if f.led is not None and f.led_index is not None)
    if len(leds) < 2:
        return ""
    pts = " ".join(f"{_n(x)},{_n(y)}" for _, (x, y) in leds)
    return f'<polyline class="led-chain" points="{pts}" fill="none" stroke="{UNDER}" stroke-width="0.2" stroke-dasharray="0.8 0.8"/>'


def _wiring(profile: Any, design: Any, lay: Layout, by_id: Mapping[str, mech.Station]) -> str:
    """Matrix rows and columns, or the 74HC165 chips, their station wires and the ribbon."""
    if profile is None:
        return ""
    out: list[str] = ['<g class="wiring">']
    matrix = None
    if profile.scanner is None:
        matrix = "pi"
    elif profile.scanner.kind == "matrix":
        matrix = "pico"
    if matrix:
        rows: dict[int, list[str]] = {}
        cols: dict[int, list[str]] = {}
        for s, ch in profile.channels.items():
            if s not in by_id:
                continue
            r, c = ch if isinstance(ch, tuple) else divmod(ch, profile.scanner.matrix[1])
            rows.setdefault(r, []).append(s)
            cols.setdefault(c, []).append(s)
        for cls, groups, dy, dash in (("row", rows, 3.0, ""), ("column", cols, -3.0, "2 1")):
            for k, members in sorted(groups.items()):
                pts = sorted((by_id[s].x, by_id[s].y + dy) for s in members)
                if cls == "column":
                    pts = sorted(pts, key=lambda p: (p[1], p[0]))
                line = " ".join(f"{_n(x)},{_n(y)}" for x, y in pts)
                out.append(f'<polyline class="wire {cls}" points="{line}" fill="none" stroke="{WIRE}" stroke-width="0.35"'
                           + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
                x, y = pts[0]
                out.append(f'<text class="wire-label" x="{_n(x - 6)}" y="{_n(y + 1)}" font-size="2.6" text-anchor="end" '
                           f'fill="{WIRE}" {_FONT}>{"R" if cls == "row" else "C"}{k}</text>')
    elif profile.scanner.kind == "shift_register":
        from controller.hardware.chain import chain_plan

        plan = chain_plan(profile, lay.pitch)
        w = lay.width

        def under(p: tuple[float, float]) -> tuple[float, float]:
            return (w - p[0], p[1])

        ribbon = [under(plan.pico)] + [under(c.at) for c in plan.chips]
        out.append(f'<polyline class="ribbon" points="{" ".join(f"{_n(x)},{_n(y)}" for x, y in ribbon)}" fill="none" '
                   f'stroke="#2f6db5" stroke-width="0.8" stroke-opacity="0.6"/>')
        px, py = ribbon[0]
        out.append(f'<rect class="pico" x="{_n(px - 10.5)}" y="{_n(py - 25.5)}" width="21" height="51" fill="none" stroke="#2f6db5" '
                   f'stroke-width="0.4"/><text x="{_n(px)}" y="{_n(py)}" font-size="3" text-anchor="middle" fill="#2f6db5" {_FONT}>Pico</text>')
        for chip in plan.chips:
            cx, cy = under(chip.at)
            for s in chip.inputs:
                if s is None or s not in by_id:
                    continue
                st = by_id[s]
                out.append(f'<path class="wire input" d="M{_n(st.x)},{_n(st.y)}H{_n(cx)}V{_n(cy)}" fill="none" stroke="{WIRE}" '
                           f'stroke-width="0.25" stroke-opacity="0.7"/>')
            out.append(f'<rect class="chip" x="{_n(cx - 10)}" y="{_n(cy - 4)}" width="20" height="8" fill="#ffffff" '
                       f'stroke="#2f6db5" stroke-width="0.4"/><text class="chip-label" x="{_n(cx)}" y="{_n(cy + 1)}" '
                       f'font-size="2.6" text-anchor="middle" fill="#2f6db5" {_FONT}>165 #{chip.index}</text>')
    out.append("</g>")
    return "".join(out)


def notes(layer: str, game: Any, lay: Layout, profile: Any) -> list[str]:
    """The header lines a drill or assembly page carries: what to do with it, and the figures it needs."""
    feats = _features(game, lay, profile)
    leds = sum(1 for f in feats if f.led is not None)
    if layer == "drill":
        text = (f"DRILL LAYER, top view: tape on the blank, drill every cross ⌀{_n(mech.PILOT_MM)} mm right through"
                + (f" and every LED ring ⌀{_n(mech.LED_HOLE_MM)} mm right through ({leds} LEDs)" if leds else ""))
        return [text, f"board {_n(mech.BOARD_MM)} mm {mech.BOARD_MATERIAL}"]
    parts = []
    if any(f.glass for f in feats):
        parts.append(f"reed grooves {_n(mech.GROOVE_WIDTH_MM)} wide x {_n(mech.GROOVE_DEPTH_MM)} deep x "
                     f"{_n(mech.GROOVE_LENGTH_MM)} mm, glass end at the pilot")
    if leds:
        parts.append(f"LED counterbore ⌀{_n(mech.LED_COUNTERBORE_MM)} x {_n(mech.LED_5MM_HEIGHT_MM - mech.BOARD_MM)} mm "
                     "(5 mm LEDs), numbers = chain order")
    if profile is not None and getattr(profile, "sensing", "reed") in ("rfid", "hybrid"):
        parts.append(f"reader pockets {_n(mech.BOARD_MM - mech.TAG_SKIN_MM)} mm deep")
    return ["ASSEMBLY LAYER, seen from below (mirrored): tape face up on the underside, pilot holes on the circles",
            " · ".join(parts) or "pilot holes only"]

