"""The board's mechanical design: the layer stack, each station's holes, reed groove and LED, and the air gap
between a piece's magnet (or tag) and its sensor, checked against the parts' specified ranges.

Everything is in millimetres on the printed board (controller/board_geometry.py: y grows downwards), relative to a
station's centre unless said otherwise. The printed drill and assembly layers (`facedown print-board --layer`),
hardware/README.md's mechanical section and the BOM's reed switch and magnet all come from here.

The magnet model: the field on the axis of an axially magnetised disc (remanence ``br_t``),
``B(z) = Br/2 * ((z + L) / sqrt(R^2 + (z + L)^2) - z / sqrt(R^2 + z^2))``, and for a magnet off to one side the
largest field of a dipole of the same moment, ``2 * Br * V / (4 pi r^3)`` (an upper bound). A reed switch's
sensitivity is given in ampere-turns (AT) in its maker's test coil; ``MT_PER_AT`` turns that into a field (a long
coil: B = mu0 N I / l over a 10 mm coil gives 0.126 mT per AT), and a magnet over **one end** of the glass needs about
twice the field of the coil (Littelfuse's application note "Ampere-turn versus mT and Gauss"). That note says such
figures are right within a factor of 2 or so: hence the margins below, and the one-station test jig before any reed
is glued (hardware/README.md, section 3).

>>> gap = reed_air_gap()
>>> round(gap.gap_mm, 2), gap.closes, gap.opens_when_lifted
(2.88, True, True)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

# ---------------------------------------------------------------------------------------------------- parts


@dataclass(frozen=True, slots=True)
class ReedSwitch:
    """A glass reed switch: its glass, its pull-in sensitivity band in ampere-turns, a shop price."""

    part: str
    glass_mm: float
    dia_mm: float
    pull_in_at: tuple[float, float]
    price: float


@dataclass(frozen=True, slots=True)
class Magnet:
    """An axially magnetised neodymium disc."""

    part: str
    dia_mm: float
    thick_mm: float
    grade: str
    br_t: float  # remanence, tesla (N35: 1.17-1.21 T; the low end is used)
    price: float

    @property
    def volume_mm3(self) -> float:
        return math.pi * (self.dia_mm / 2) ** 2 * self.thick_mm


#: Littelfuse (Hamlin) MDSR-7 in its 15-20 AT band: 12.7 x 1.8 mm glass, sold by the usual distributors. Any glass
#: reed of about this size whose listing gives a pull-in band inside 15-20 AT does the same; an unbranded "2 x 14 mm"
#: switch with no AT figure may be anywhere from 10 to 40 AT: test it in the jig first.
REED = ReedSwitch(
    part="Reed switch Littelfuse MDSR-7-15-20 (normally open, glass 12.7 x 1.8 mm, pull-in 15-20 AT)",
    glass_mm=12.7, dia_mm=1.8, pull_in_at=(15.0, 20.0), price=0.70,
)
MAGNET = Magnet(part="Neodymium disc magnet 6 x 2 mm, N35, axially magnetised", dia_mm=6.0, thick_mm=2.0, grade="N35",
                br_t=1.17, price=0.10)

# ---------------------------------------------------------------------------------------------------- the stack
BOARD_MATERIAL = "birch plywood (or MDF)"
BOARD_MM = 6.0
PAPER_MM = 0.10  # 80 g/m2 printer paper
FILM_MM = 0.08  # clear self-adhesive laminating film over the print
#: The reed groove, routed (or cut with a 2.5 mm straight bit in a drill stand) into the underside.
GROOVE_WIDTH_MM = 2.5
GROOVE_DEPTH_MM = 3.5
GROOVE_LENGTH_MM = 18.0  # the glass and 2.6 mm of each lead before its bend
#: The groove's direction on the printed board: 0 degrees = left to right, the glass running away from the centre.
REED_ANGLE_DEG = 0.0
#: The glass's centre sits this far from the station's centre, so its near end is under the magnet's axis: a magnet
#: straight over the middle of the glass magnetises both blades alike and the switch may not close.
REED_OFFSET_MM = 5.0
#: The pilot hole at every station's centre, right through: it shows the station on the underside.
PILOT_MM = 2.0
#: A piece's base and the magnet pocket in it.
PIECE_MM = 30.0
POCKET_DIA_MM = 6.0
POCKET_DEPTH_MM = 2.2  # the magnet sits 0.2 mm inside the base, so it never scratches the print
#: Station lights: a hole right through for the light, beside the piece (not under it).
LED_HOLE_MM = 5.0
LED_COUNTERBORE_MM = 6.5  # from below, for the flange of a 5 mm through-hole LED (5.8 mm)
LED_5MM_HEIGHT_MM = 8.6  # a 5 mm round LED, dome to the underside of its flange
LED_CLEAR_MM = 2.5  # between the piece's edge (or a reader module's) and the LED hole
#: A reader module under each station sits in a pocket routed from below, leaving this much wood over its antenna.
TAG_SKIN_MM = 3.0
#: A 25 mm NTAG213 sticker over an RC522's PCB antenna: a conservative reliable range (hobby reports give 15-30 mm for
#: a card; a small sticker reads less far). The gap must be at most half of it.
TAG_RANGE_MM = 10.0
#: On a hybrid board the reed's glass stands 1.3 mm proud of the reader pocket's floor: the module sits on spacers.
HYBRID_SPACER_MM = 1.5

# ---------------------------------------------------------------------------------------------------- the checks
MT_PER_AT = 0.126
END_FACTOR = 2.0
#: Seated, the field must be at least this many times the band's highest pull-in (covers the factor-2 model).
CLOSE_MARGIN = 4.0
#: A reed lets go once the field falls to about half its pull-in (drop-out); the lifted and neighbour figures must
#: be under that for the most sensitive switch of the band, the neighbour's with another factor of 2 to spare.
DROP_OUT_RATIO = 0.5
NEIGHBOUR_MARGIN = 2.0
#: How high a piece is lifted when it is picked up and put down again at once: the station must read empty there.
LIFT_MM = 15.0


def axial_field_mt(magnet: Magnet, z_mm: float) -> float:
    """The field (mT) on the magnet's axis, ``z_mm`` from its face."""
    r, L = magnet.dia_mm / 2, magnet.thick_mm
    return 1000 * magnet.br_t / 2 * ((z_mm + L) / math.hypot(r, z_mm + L) - z_mm / math.hypot(r, z_mm))


def dipole_bound_mt(magnet: Magnet, r_mm: float) -> float:
    """The most field (mT) a magnet's dipole gives at ``r_mm`` from its centre, in any direction."""
    return 1000 * 2 * magnet.br_t * magnet.volume_mm3 / (4 * math.pi * r_mm ** 3)


def pull_in_mt(at: float) -> float:
    """The field over one end of the glass that closes a switch of ``at`` ampere-turns (model, factor 2)."""
    return at * MT_PER_AT * END_FACTOR


@dataclass(frozen=True, slots=True)
class AirGap:
    """The magnet-to-reed gap of a reed build, the fields it gives, and whether the switch band works with them."""

    reed: ReedSwitch
    magnet: Magnet
    gap_mm: float  # magnet face to the glass
    blade_mm: float  # magnet face to the blades (the glass's axis)
    seated_mt: float
    lifted_mt: float
    neighbour_mm: float  # a magnet's centre to the nearest point of another station's glass
    neighbour_mt: float

    @property
    def pull_in_mt(self) -> tuple[float, float]:
        return pull_in_mt(self.reed.pull_in_at[0]), pull_in_mt(self.reed.pull_in_at[1])

    @property
    def closes(self) -> bool:
        return self.seated_mt >= CLOSE_MARGIN * self.pull_in_mt[1]

    @property
    def opens_when_lifted(self) -> bool:
        return self.lifted_mt <= DROP_OUT_RATIO * self.pull_in_mt[0]

    @property
    def neighbour_safe(self) -> bool:
        return self.neighbour_mt <= DROP_OUT_RATIO * self.pull_in_mt[0] / NEIGHBOUR_MARGIN

    @property
    def ok(self) -> bool:
        return self.closes and self.opens_when_lifted and self.neighbour_safe

    def lines(self) -> list[str]:
        lo, hi = self.pull_in_mt
        return [
            f"air gap {self.gap_mm:.2f} mm magnet to glass ({self.blade_mm:.2f} mm to the blades): "
            f"{self.magnet.dia_mm:g} x {self.magnet.thick_mm:g} mm {self.magnet.grade} magnet, reed "
            f"{self.reed.pull_in_at[0]:g}-{self.reed.pull_in_at[1]:g} AT (closes at about {lo:.1f}-{hi:.1f} mT over one end)",
            f"  seated: {self.seated_mt:.0f} mT, needs >= {CLOSE_MARGIN * hi:.1f}: {'ok' if self.closes else 'TOO WEAK'}",
            f"  lifted {LIFT_MM:g} mm: {self.lifted_mt:.2f} mT, must be <= {DROP_OUT_RATIO * lo:.2f} (drop-out): "
            f"{'ok' if self.opens_when_lifted else 'STAYS CLOSED'}",
            f"  nearest other reed {self.neighbour_mm:.1f} mm away: at most {self.neighbour_mt:.2f} mT, must be <= "
            f"{DROP_OUT_RATIO * lo / NEIGHBOUR_MARGIN:.2f}: {'ok' if self.neighbour_safe else 'MAY CLOSE IT'}",
        ]


def reed_air_gap(neighbour_mm: float | None = None, reed: ReedSwitch = REED, magnet: Magnet = MAGNET) -> AirGap:
    """The air gap and fields of a reed station; ``neighbour_mm`` from the board (default: a 40 mm square grid)."""
    gap = (POCKET_DEPTH_MM - magnet.thick_mm) + FILM_MM + PAPER_MM + (BOARD_MM - GROOVE_DEPTH_MM)
    blade = gap + reed.dia_mm / 2
    near = neighbour_mm if neighbour_mm is not None else 40.0 - (REED_OFFSET_MM + reed.glass_mm / 2)
    r = math.hypot(near, blade + magnet.thick_mm / 2)
    return AirGap(reed=reed, magnet=magnet, gap_mm=round(gap, 3), blade_mm=round(blade, 3),
                  seated_mt=axial_field_mt(magnet, blade), lifted_mt=axial_field_mt(magnet, blade + LIFT_MM),
                  neighbour_mm=round(near, 1), neighbour_mt=dipole_bound_mt(magnet, r))


def tag_gap_mm(hybrid: bool = False) -> float:
    """A piece's tag to its reader's antenna: the film, the print and the wood left over the module's pocket (and on
    a hybrid board the spacers that lift the module clear of the reed in its groove)."""
    return round(FILM_MM + PAPER_MM + TAG_SKIN_MM + (HYBRID_SPACER_MM if hybrid else 0.0), 3)


def tag_gap_ok(hybrid: bool = False) -> bool:
    return tag_gap_mm(hybrid) <= TAG_RANGE_MM / 2


# ---------------------------------------------------------------------------------------------------- geometry
@dataclass(frozen=True, slots=True)
class Hole:
    """One hole or cut of a station, relative to its centre: ``kind`` pilot / led / counterbore / groove / pocket."""

    kind: str
    x: float
    y: float
    dia: float  # a round hole's diameter; a groove's or pocket's width across
    depth: float  # BOARD_MM: right through
    side: str  # "top" (drilled through the taped print) or "bottom" (cut into the underside)
    length: float = 0.0  # a groove's or pocket's length along ``angle``
    angle: float = 0.0

    @property
    def through(self) -> bool:
        return self.depth >= BOARD_MM


@dataclass(frozen=True, slots=True)
class Station:
    """A station's mechanical features on the printed board (absolute mm): its holes, its reed's glass, its LED."""

    id: str
    x: float
    y: float
    holes: tuple[Hole, ...]
    glass: tuple[tuple[float, float], tuple[float, float]] | None  # the reed's glass, end under the centre first
    groove: tuple[tuple[float, float], tuple[float, float]] | None  # the groove's axis, end to end
    led: tuple[float, float] | None
    led_index: int | None


def _reader_half(game: Any, module: Any) -> tuple[float, float]:
    """Half the module's extent across (x) and along (y) the printed board, as the BOM lays it."""
    from .readers import orientation

    if orientation(game, module) == "long side left-right":
        return module.width_mm / 2, module.depth_mm / 2
    return module.depth_mm / 2, module.width_mm / 2


def led_offset(game: Any, profile: Any) -> tuple[float, float]:
    """Where a station's LED sits from its centre: beside the piece (and a reader module), towards the top."""
    half_y = PIECE_MM / 2
    if profile is not None and getattr(profile, "sensing", "reed") in ("rfid", "hybrid"):
        from .readers import RC522

        hx, hy = _reader_half(game, RC522)
        if hy > hx:  # a tall module: the LED goes beside it, to the left
            return (-(max(PIECE_MM / 2, hx) + LED_CLEAR_MM + LED_HOLE_MM / 2), 0.0)
        half_y = max(half_y, hy)
    return (0.0, -(half_y + LED_CLEAR_MM + LED_HOLE_MM / 2))


def led_indices(profile: Any) -> dict[str, int]:
    """Station -> its LED's index: the WS2812 chain's position, or the order of a GPIO build's LEDs."""
    lt = getattr(profile, "lights", None) if profile is not None else None
    if lt is None:
        return {}
    if lt.kind == "ws2812":
        return {s: k for k, s in enumerate(lt.chain) if s is not None}
    return {s: k for k, s in enumerate(lt.pins)}


def stations(game: Any, points: dict[str, tuple[float, float]], profile: Any = None) -> list[Station]:
    """Every station's features at its drawn position (``points``: board_geometry.layout's, in mm)."""
    sensing = getattr(profile, "sensing", "reed") if profile is not None else "reed"
    reeds = sensing in ("reed", "checkin", "hybrid")
    readers = sensing in ("rfid", "hybrid")
    leds = led_indices(profile)
    lx, ly = led_offset(game, profile) if leds else (0.0, 0.0)
    a = math.radians(REED_ANGLE_DEG)
    ca, sa = math.cos(a), math.sin(a)
    out = []
    pocket = None
    if readers:
        from .readers import RC522

        hx, hy = _reader_half(game, RC522)
        pocket = Hole("pocket", 0.0, 0.0, 2 * hy + 1, BOARD_MM - TAG_SKIN_MM, "bottom", length=2 * hx + 1, angle=0.0)
    for s in game.stations:
        x, y = points[s.id]
        holes = [Hole("pilot", 0.0, 0.0, PILOT_MM, BOARD_MM, "top")]
        glass = groove = None
        if reeds:
            gx, gy = REED_OFFSET_MM * ca, REED_OFFSET_MM * sa
            holes.append(Hole("groove", gx, gy, GROOVE_WIDTH_MM, GROOVE_DEPTH_MM, "bottom", GROOVE_LENGTH_MM, REED_ANGLE_DEG))
            h = REED.glass_mm / 2
            glass = ((x + gx - h * ca, y + gy - h * sa), (x + gx + h * ca, y + gy + h * sa))
            g = GROOVE_LENGTH_MM / 2
            groove = ((x + gx - g * ca, y + gy - g * sa), (x + gx + g * ca, y + gy + g * sa))
        if pocket is not None:
            holes.append(pocket)
        led = None
        if s.id in leds:
            holes.append(Hole("led", lx, ly, LED_HOLE_MM, BOARD_MM, "top"))
            holes.append(Hole("counterbore", lx, ly, LED_COUNTERBORE_MM, LED_5MM_HEIGHT_MM - BOARD_MM, "bottom"))
            led = (round(x + lx, 3), round(y + ly, 3))
        out.append(Station(s.id, x, y, tuple(holes), glass, groove, led, leds.get(s.id)))
    return out


def _seg_dist(p: tuple[float, float], a: tuple[float, float], b: tuple[float, float]) -> float:
    (px, py), (ax, ay), (bx, by) = p, a, b
    dx, dy = bx - ax, by - ay
    t = 0.0 if dx == dy == 0 else max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - (ax + t * dx), py - (ay + t * dy))


def nearest_other_reed(features: list[Station]) -> float:
    """The shortest distance from any station's centre (its magnet) to another station's glass."""
    best = math.inf
    for s in features:
        for t in features:
            if t is not s and t.glass is not None and abs(t.x - s.x) < 200 and abs(t.y - s.y) < 200:
                best = min(best, _seg_dist((s.x, s.y), *t.glass))
    return round(best, 1) if math.isfinite(best) else 1000.0


def clashes(features: list[Station]) -> list[str]:
    """LED holes that come within 1.5 mm of a reed groove or another LED hole, or sit under another station's piece."""
    problems = []
    grooves = [(s, s.groove) for s in features if s.groove is not None]
    for s in features:
        if s.led is None:
            continue
        for t, g in grooves:
            if _seg_dist(s.led, *g) < LED_COUNTERBORE_MM / 2 + GROOVE_WIDTH_MM / 2 + 1.5:
                problems.append(f"{s.id}: its LED hole touches {t.id}'s reed groove")
        for t in features:
            if t is s:
                continue
            if t.led is not None and math.dist(s.led, t.led) < LED_COUNTERBORE_MM + 1.5:
                problems.append(f"{s.id}: its LED hole touches {t.id}'s")
            if math.dist(s.led, (t.x, t.y)) < PIECE_MM / 2 + LED_HOLE_MM / 2:
                problems.append(f"{s.id}: its LED sits under a piece on {t.id}")
    return problems


def board_air_gap(game: Any, points: dict[str, tuple[float, float]], profile: Any = None) -> AirGap:
    """The reed air gap of this board as drawn (its nearest other reed measured from the layout)."""
    return reed_air_gap(nearest_other_reed(stations(game, points, profile)))


def stack_lines() -> list[tuple[str, float]]:
    """The layer stack from the top: (layer, thickness mm)."""
    return [("clear self-adhesive laminating film", FILM_MM), ("the printed sheet, 80 g/m2 paper, spray-glued", PAPER_MM),
            (f"board: {BOARD_MM:g} mm {BOARD_MATERIAL}", BOARD_MM)]


def mechanics_markdown() -> str:
    """hardware/README.md's mechanical tables: the stack, each station's holes and cuts, the air gap of every build."""
    from .build import BUILDS, SENSING_OF_BUILD

    gap = reed_air_gap()
    lo, hi = gap.pull_in_mt
    out = ["| layer, top down | thickness |", "|---|---|"]
    out += [f"| {what} | {mm:g} mm |" for what, mm in stack_lines()]
    out += ["", "| at each station | size | depth | from | where |", "|---|---|---|---|---|",
            f"| pilot hole | ⌀{PILOT_MM:g} mm | through | top (drill layer) | the station's centre (the blue cross) |",
            f"| reed groove | {GROOVE_WIDTH_MM:g} x {GROOVE_LENGTH_MM:g} mm | {GROOVE_DEPTH_MM:g} mm (leaves "
            f"{BOARD_MM - GROOVE_DEPTH_MM:g} mm of wood) | bottom (assembly layer) | at {REED_ANGLE_DEG:g}° (left-right on "
            f"the print), its centre {REED_OFFSET_MM:g} mm right of the station's: the glass's end under the pilot |",
            f"| LED hole (lights) | ⌀{LED_HOLE_MM:g} mm | through | top (drill layer) | {PIECE_MM / 2 + LED_CLEAR_MM + LED_HOLE_MM / 2:g} "
            "mm above the centre, beside the piece (reader boards: beside the module) |",
            f"| LED counterbore (5 mm LEDs) | ⌀{LED_COUNTERBORE_MM:g} mm | {LED_5MM_HEIGHT_MM - BOARD_MM:.1f} mm | bottom | "
            "round the LED hole, for the LED's flange: its dome ends flush under the print |",
            f"| reader pocket (reader boards) | the module plus 1 mm | {BOARD_MM - TAG_SKIN_MM:g} mm (leaves "
            f"{TAG_SKIN_MM:g} mm) | bottom | the module centred on the pilot, as the BOM's fit check lays it |",
            f"| magnet pocket (each piece's base) | ⌀{POCKET_DIA_MM:g} mm | {POCKET_DEPTH_MM:g} mm | the piece's base | "
            "centred; the magnet sits 0.2 mm inside |",
            "", "| build | sensor | gap | the figures | verdict |", "|---|---|---|---|---|"]
    for build in BUILDS:
        sensing = SENSING_OF_BUILD[build]
        if sensing != "rfid":
            out.append(f"| {build} | reed, {gap.reed.pull_in_at[0]:g}-{gap.reed.pull_in_at[1]:g} AT, "
                       f"{gap.magnet.dia_mm:g} x {gap.magnet.thick_mm:g} mm {gap.magnet.grade} | {gap.gap_mm:.2f} mm magnet "
                       f"to glass | seated {gap.seated_mt:.0f} mT (closing needs {lo:.1f}-{hi:.1f}, x{CLOSE_MARGIN:g} "
                       f"margin: {CLOSE_MARGIN * hi:.0f}); lifted {LIFT_MM:g} mm {gap.lifted_mt:.2f} mT (drop-out about "
                       f"{DROP_OUT_RATIO * lo:.2f}); next reed {gap.neighbour_mm:.1f} mm away at most {gap.neighbour_mt:.2f} mT "
                       f"| {'ok' if gap.ok else 'FAILS'} |")
        if sensing in ("rfid", "hybrid"):
            hyb = sensing == "hybrid"
            out.append(f"| {build} | RC522 reader, 25 mm NTAG213 tag | {tag_gap_mm(hyb):.2f} mm tag to antenna"
                       + (f" (the module on {HYBRID_SPACER_MM:g} mm spacers over the reed)" if hyb else "")
                       + f" | reliable range about {TAG_RANGE_MM:g} mm; the gap must be at most half | "
                       f"{'ok' if tag_gap_ok(hyb) else 'FAILS'} |")
    return "\n".join(out) + "\n"
