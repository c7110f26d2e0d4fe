"""Bills of materials, counted from a build's design (controller/hardware/build.py), which is worked out from its
hardware profile: the same profile makes the wiring tables and the scanner's config.json, so the three agree.

``bill_for(profile)`` lists one profile's parts; ``bill_of_materials(game, build)`` prices the game's shipped profile
of that build, or the profile ``build.profile_text`` writes for it. A part's ``per`` says what its quantity follows
(station, matrix line, 74HC165 chip, reader, group of 16 readers, piece, board). ``write_csvs`` writes
hardware/bom/BUILD.csv for every installed game and hardware/bom/power.csv; a test keeps them equal to this code.

Prices: ``PRICES`` below says where they come from. They are rounded, for budgeting, never a quote.

>>> bill = bill_of_materials("siguo", "reed-pico")
>>> qty(bill, "74HC165"), qty(bill, "Resistor 10 kOhm")
(17, 136)
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.errors import FaceDownError

from .build import BUILD_TITLES, BUILDS, BuildError, Design, design, profile_for

__all__ = ["BUILDS", "BUILD_TITLES", "Bill", "BomError", "Line", "Part", "bill_for", "bill_of_materials", "csv_text", "qty"]

#: Where the prices come from: stated once, printed under every bill.
PRICES = ("Prices: typical single-unit prices (or a small pack divided by its count) at ordinary hobby-electronics "
          "shops - maker retailers of the Adafruit / SparkFun / Pimoroni / Pi Hut kind and local electronics shops - "
          "in US dollars, estimated in December 2026 and rounded; not import-marketplace prices and not a quote: "
          "expect +-30 %.")


class BomError(FaceDownError, ValueError):
    """A bill of materials cannot be made: an unknown build, or a game too big for the build's pins."""


@dataclass(frozen=True, slots=True)
class Part:
    """A part: its name (with its size where that matters), what its quantity follows, a typical hobby-shop price,
    and whether it is a part of the circuit, drawn on the schematic (``drawn``), or wire, board, holder or tool."""

    name: str
    per: str
    price: float
    drawn: bool = True
    spare: float = 0.0  # bought beyond what the design uses, as a fraction (reeds: glass cracks)


@dataclass(frozen=True, slots=True)
class Line:
    """A part with its quantity for one board."""

    part: Part
    quantity: int

    @property
    def cost(self) -> float:
        return round(self.quantity * self.part.price, 2)


@dataclass(frozen=True, slots=True)
class Bill:
    """The parts for one profile's board, and the design they were counted from."""

    game: str
    build: str
    profile: str
    stations: int
    matrix: tuple[int, int] | None
    pieces: int
    lines: tuple[Line, ...]
    design: Design
    lights_from: int = -1  # index of the first station-lights line (-1: the board has no station lights)

    @property
    def total(self) -> float:
        return round(sum(line.cost for line in self.lines), 2)

    @property
    def base_cost(self) -> float:
        """The board without its optional parts (the station lights)."""
        return round(self.total - self.lights_cost, 2)

    @property
    def lights_cost(self) -> float:
        """What the optional station lights add to the total."""
        return round(sum(line.cost for line in self.lines[self.lights_from:]), 2) if self.lights_from >= 0 else 0.0


def qty(bill: Bill, start: str) -> int:
    """The quantity of the part whose name starts with ``start`` (0 when the bill has none)."""
    return next((line.quantity for line in bill.lines if line.part.name.startswith(start)), 0)


def piece_count(game: Any) -> int:
    """Pieces of every side together, with the largest count any house rule gives each piece type."""
    return len(game.sides) * sum(max([p.count, *(n for _, n in p.counts)]) for p in game.pieces)


def board_size(game: Any, pitch: float) -> tuple[float, float]:
    """The printed board's width and height in mm at ``pitch`` (as `facedown print-board` draws it)."""
    from controller.board_geometry import layout

    lay = layout(game, pitch=pitch, margin=pitch * 0.75)
    return lay.width, lay.height


def _blank_price(w: float, h: float) -> float:
    """6 mm plywood or MDF: about $12 for a 600 x 600 mm piece, more for larger, in whole dollars."""
    return float(max(12, math.ceil(12 * (w * h) / (600 * 600))))


def fuse_for(supply_ma: float) -> int:
    """A fuse rating (A) for a supply: its rating, so a short trips the fuse before it overheats the supply's wires."""
    return max(1, int(supply_ma // 1000))


def bill_for(profile: Any) -> Bill:
    """The parts for ``profile``'s board, counted from its design."""
    from controller.rules import load_game

    try:
        d = design(profile)
    except BuildError as exc:
        raise BomError(str(exc)) from None
    game = load_game(profile.game)
    n, pieces = d.stations, piece_count(game)
    lines: list[tuple[Part, float]] = []

    def add(name: str, per: str, price: float, count: float, drawn: bool = True, spare: float = 0.0) -> None:
        """One line; ``drawn=False`` for what the schematic does not draw (wire, cable, board, socket, holder);
        ``spare``: buy that fraction more than ``count``."""
        if count > 0:
            lines.append((Part(name, per, price, drawn, spare), math.ceil(round(count * (1 + spare), 6))))

    w, h = board_size(game, d.pitch)
    from . import chain as runs
    from . import mechanics as mech

    add("Raspberry Pi 4 Model B, 2 GB (a Pi 3B+ or Zero 2 W also runs the referee)", "board", 45.00, 1)
    add("microSD card, 32 GB, A1 class", "board", 10.00, 1, drawn=False)
    pi_rail = d.rails[0]
    add(pi_rail.supply, "board", 8.00, 1)
    add("Passive piezo buzzer module, 3.3 V", "board", 2.00, 1 if profile.pins.buzzer is not None else 0)
    leds = len(profile.pins.leds)
    add(f"LED, 5 mm ({', '.join(profile.pins.leds)})", "board", 0.20, leds)
    add("Resistor 330 ohm, 1/4 W (one per LED)", "board", 0.10, leds)
    add(f"Board blank: {mech.BOARD_MM:g} mm {mech.BOARD_MATERIAL}, {w:.0f} x {h:.0f} mm (the printed board at "
        f"{d.pitch:g} mm pitch)", "board", _blank_price(w, h), 1, drawn=False)
    frame = math.ceil(2 * (w + h) / 1000 + 0.2)
    add("Pine strip 20 x 20 mm, metres (a frame glued under the board's edges: the wiring clears the table)", "board", 1.50,
        frame, drawn=False)
    add("Rubber feet, self-adhesive, 12 mm (under the frame: the corners and every 300 mm of edge)", "board", 0.15,
        4 + math.ceil(2 * (w + h) / 300), drawn=False)
    add("Clear self-adhesive laminating film, A4 sheets (over the glued print)", "board", 0.50,
        math.ceil(w * h / (210 * 297) * 1.2), drawn=False)
    add("Female-female jumper wire, 20 cm (buzzer, LEDs)", "board", 0.10, 8, drawn=False)
    add("Heat-shrink tubing assortment, 1.5-6 mm (sleeve every crossing and bare joint)", "board", 3.00, 1, drawn=False)
    if d.reeds:
        add(f"{mech.REED.part} (10 % spare: glass cracks when its leads are bent)", "station + 10 %", mech.REED.price,
            n, spare=0.10)
        add(f"{mech.MAGNET.part} (one in each piece's base; {mech.POCKET_DIA_MM:g} mm pocket, {mech.POCKET_DEPTH_MM:g} mm deep)",
            "piece", mech.MAGNET.price, pieces, drawn=False)
    if d.diodes:
        lines_mm = runs.matrix_runs(profile, d.pitch)
        rows_m = sum(v for k, v in lines_mm.items() if k.startswith("R")) / 1000
        cols_m = sum(v for k, v in lines_mm.items() if k.startswith("C")) / 1000
        add("Diode 1N4148 (one per switch, against ghost readings)", "station", 0.05, d.diodes)
        add("Tinned copper wire, bare, 0.6 mm (22 AWG), metres (the matrix rows: diode cathodes; from the wire runs)",
            "row", 0.40, math.ceil(rows_m * 1.1), drawn=False)
        add("Solid hook-up wire, insulated, 0.5 mm2 (22 AWG), metres (the matrix columns: reed leads; from the wire runs)",
            "column", 0.30, math.ceil(cols_m * 1.1), drawn=False)
    if d.pi_matrix:
        add("40-pin GPIO ribbon cable and screw-terminal breakout (every row and column wire ends on it)", "board", 10.00, 1, drawn=False)
    if d.build != "reed-gpio":
        add("Raspberry Pi Pico H (RP2040, headers fitted)", "board", 5.00, 1)
        add("USB-A to micro-USB data cable, 1 m (Pico to Pi)", "board", 3.00, 1)
    if d.pico_matrix:
        add("Screw-terminal breakout board for the Pico (every row and column wire ends on it)", "board", 8.00, 1, drawn=False)
    if d.chips_165:
        c = d.chips_165
        plan = runs.chain_plan(profile, d.pitch)
        add("74HC165 8-bit shift register, DIP-16 (8 neighbouring stations each)", "74HC165", 0.80, c)
        add("IC socket, DIP-16 (one per 74HC165)", "74HC165", 0.15, c, drawn=False)
        add("Resistor 10 kOhm, 1/4 W (pull-up on every 74HC165 input, spare inputs too)", "74HC165 input", 0.05, d.pullups)
        add("Capacitor 100 nF ceramic (one per 74HC165)", "74HC165", 0.10, c)
        add("Stripboard, about 50 x 70 mm (one per 74HC165, placed among its 8 stations)", "74HC165", 1.00, c, drawn=False)
        add("Solid hook-up wire, insulated, 0.5 mm2 (22 AWG), metres (reed to its chip input, and the ground bus; from "
            "the wire runs)", "station", 0.30, math.ceil(plan.reed_wire_mm * 2 / 1000 * 1.1), drawn=False)
        add("Ribbon cable, 6-way, metres (Pico to chip 0, chip to chip: 3.3 V, GND, PL, CP, GND, Q7 to DS; from the "
            "wire runs)", "74HC165", 1.00, math.ceil(plan.ribbon_mm / 1000 * 1.1), drawn=False)
        add(f"Resistor {runs.SERIES_OHMS} ohm, 1/4 W (in series with PL and CP at the Pico: damps the long ribbon's ringing)",
            "board", 0.10, 2)
        if plan.buffered:
            add(f"74HC125 quad buffer, DIP-14 (re-drives PL and CP at chip {plan.buffer_at}: the ribbon is "
                f"{plan.ribbon_mm / 1000:.1f} m)", "board", 0.70, 1)
            add("IC socket, DIP-14 (the 74HC125 re-driver)", "board", 0.15, 1, drawn=False)
            add("Capacitor 100 nF ceramic (the 74HC125 re-driver's VCC to ground)", "board", 0.10, 1)
    if d.readers and d.module:
        m = d.module
        add(f"{m.name}", "reader", m.price, d.readers)
        add("NTAG213 NFC sticker tag, 25 mm (one in each piece's base)", "piece", 0.50, pieces, drawn=False)
    if d.build == "reed-pico-pad":
        add("Female-female jumper wire, 30 cm (the pad's reader to the Pico: 3.3 V, GND, SDA, SCK, MOSI, MISO, RST)", "pad",
            0.10, 7, drawn=False)
        add("Check-in pad: a 70 x 50 mm wooden block or small box over the reader, marked 'tap here'", "pad", 2.00, 1, drawn=False)
    if d.decoder:
        dec = d.decoder
        for chip, count in dec.chips.items():
            what = {"74HC154": "4-to-16 decoder, DIP-24 (chip selects: 16 readers each" + (", and the group select" if
                                                                                        dec.top == "74HC154" else "") + ")",
                    "74HC138": "3-to-8 decoder, DIP-16 (chooses the group of 16 readers)" if dec.groups else
                               "3-to-8 decoder, DIP-16 (chip selects of up to 8 readers)"}[chip]
            add(f"{chip} {what}", "16 readers" if chip == "74HC154" else "board", 1.50 if chip == "74HC154" else 0.70, count)
        groups = max(1, dec.groups)
        if dec.groups > 1:
            add("74HC125 quad buffer, DIP-14 (per group: SCK and MOSI out, MISO back when the group is selected)",
                "16 readers", 0.70, groups)
        add("Capacitor 100 nF ceramic (one per decoder or buffer chip)", "chip", 0.10,
            sum(dec.chips.values()) + (groups if dec.groups > 1 else 0))
        cable = runs.hub_cable_cm(max(mm for _, mm in runs.hub_reach(profile, d.pitch))) or runs.HUB_CABLES[-1][0]
        add(f"Female-female jumper wires, {cable} cm, a strip of 8 (one per reader: its 8-pin header to its hub; the "
            "farthest reader sets the length)", "reader", 0.80 if cable <= 30 else 1.20, d.readers, drawn=False)
        add("Stripboard, about 100 x 160 mm (a hub per 16 readers: decoder, buffer, 16 x 8-pin headers, power bus)",
            "16 readers", 4.00, groups, drawn=False)
        add("Male pin header strip, 1 x 40, 2.54 mm (16 x 8-pin sockets per hub)", "16 readers", 0.60, groups * 4, drawn=False)
        add("Electrolytic capacitor 470 uF 6.3 V or more (one per hub, on the readers' 3.3 V)", "16 readers", 0.30, groups)
        ribbons = runs.hub_ribbons(profile, d.pitch)
        add("Ribbon cable, 10-way, metres (Pico to each hub: address, enable, SPI, GND; from the wire runs, the farthest "
            f"hub {max(ribbons) / 1000:.1f} m)", "16 readers", 1.20, math.ceil(sum(ribbons) / 1000 * 1.1), drawn=False)
        add("IDC socket, 2 x 5, 2.54 mm (both ends of each hub's ribbon)", "16 readers", 0.30, 2 * len(ribbons),
            drawn=False)
        add("Power wire, red and black, 0.75 mm2 (18 AWG), metres (the readers' 3.3 V and ground to every hub)", "16 readers",
            0.60, math.ceil(groups * 1.5), drawn=False)
        for rail in d.rails[1:]:
            if rail.name.startswith("readers 3.3"):
                add(rail.supply, "board", {3000: 4.00, 5000: 8.00, 10000: 15.00}[int(rail.supply_ma)], 1)
            elif rail.name.startswith("readers 5"):
                add(rail.supply, "board", {3000: 10.00, 5000: 15.00, 10000: 25.00}[int(rail.supply_ma)], 1)
        add("DC barrel jack socket, 5.5 x 2.1 mm, panel mount (the readers' supply)", "board", 1.00, 1)
        five = next(r for r in d.rails if r.name.startswith("readers 5"))
        add(f"Inline fuse holder with a {fuse_for(five.supply_ma)} A fast fuse (the readers' 5 V, at the barrel jack)",
            "board", 1.50, 1)
    lt = profile.lights
    lights_from = len(lines) if lt is not None else -1
    if lt is not None and lt.kind == "ws2812":
        feats = {f.id: f for f in mech.stations(game, runs.positions(game, d.pitch), profile)}
        chain_mm, feed_mm = runs.light_runs(profile, [feats[st].led for st in lt.chain if st is not None], d.pitch)
        rail = next(r for r in d.rails if r.name.startswith("lights"))
        add("Addressable RGB LED, 5 mm through-hole (PL9823-F5, colour order RGB) or WS2812B 5050 cut from a strip (GRB): "
            "set lights.colour_order to match", "LED", 0.25, lt.count)
        add("Capacitor 100 nF ceramic (one per LED, across its 5 V and ground)", "LED", 0.05, lt.count)
        add("74AHCT125 quad buffer, DIP-14 (the Pico's 3.3 V data up to 5 V for the chain; unused gates: input to GND, "
            "OE to 5 V)", "board", 0.70, 1)
        add("IC socket, DIP-14, and a 30 x 40 mm piece of stripboard (the 74AHCT125)", "board", 0.60, 1, drawn=False)
        add("Capacitor 100 nF ceramic (the 74AHCT125's VCC to ground)", "board", 0.10, 1)
        add("Resistor 330 ohm, 1/4 W (in series with the chain's data input, at the first LED)", "board", 0.10, 1)
        add("Electrolytic capacitor 1000 uF 10 V (across the chain's 5 V and ground, at the first LED)", "board", 0.40, 1)
        add("Ribbon cable, 3-way, metres (5 V, GND, data from LED to LED; from the wire runs)", "LED", 1.00,
            math.ceil(chain_mm / 1000 * 1.1), drawn=False)
        add("Power wire, red and black, 0.75 mm2 (18 AWG), metres (the chain's 5 V in at both ends; from the wire runs)",
            "board", 0.60, math.ceil((feed_mm + 300) / 1000 * 1.1), drawn=False)
        add(rail.supply, "board", {2000: 7.00, 3000: 10.00, 5000: 15.00, 10000: 25.00}[int(rail.supply_ma)], 1)
        add("DC barrel jack socket, 5.5 x 2.1 mm, panel mount (the lights' supply)", "board", 1.00, 1)
        add(f"Inline fuse holder with a {fuse_for(rail.supply_ma)} A fast fuse (the lights' 5 V, at the barrel jack)",
            "board", 1.50, 1)
    elif lt is not None:
        add("LED, 3 mm (one per station with a light)", "LED", 0.15, lt.count)
        add("Resistor 330 ohm, 1/4 W (one per station LED)", "LED", 0.10, lt.count)
        add("Female-female jumper wire, 20 cm (one per station LED)", "LED", 0.10, lt.count, drawn=False)
    built = tuple(Line(part, int(count)) for part, count in lines)
    return Bill(game=game.id, build=d.build, profile=profile.id, stations=n, matrix=d.pi_matrix or d.pico_matrix,
                pieces=pieces, lines=built, design=d, lights_from=lights_from)


def bill_of_materials(game_id: str, build: str) -> Bill:
    """The parts for ``game_id``'s board in ``build``: its shipped profile of that build, or a generated one."""
    if build not in BUILDS:
        raise BomError(f"build {build!r}: expected one of {', '.join(BUILDS)}")
    try:
        profile = profile_for(game_id, build)
    except BuildError as exc:
        raise BomError(str(exc)) from None
    return bill_for(profile)


def _money(v: float) -> str:
    return f"{v:.2f}"


def _bill_or_none(game_id: str, build: str) -> Bill | None:
    """The bill, or None where the game does not fit the build (too many stations for its pins)."""
    try:
        return bill_of_materials(game_id, build)
    except BomError:
        return None


def csv_text(build: str, games: list[str] | None = None) -> str:
    """hardware/bom/BUILD.csv: one row per part (the union over the games), one quantity column per game, a total row."""
    from controller.rules import game_ids

    games = game_ids() if games is None else games
    bills = [_bill_or_none(g, build) for g in games]
    parts: dict[str, Part] = {}
    for b in bills:
        for line in b.lines if b else ():
            parts.setdefault(line.part.name, line.part)
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["part", "per", "unit_price_usd", *games])
    for name, part in parts.items():
        have = [{ln.part.name: ln.quantity for ln in b.lines}.get(name, "") if b else "" for b in bills]
        w.writerow([name, part.per, _money(part.price), *have])
    w.writerow(["profile (* = generated, none shipped)", "", "",
                *((b.profile + ("*" if str(b.design.profile.file).startswith("generated/") else "")) if b else "" for b in bills)])
    w.writerow(["optional_lights_usd (in the total)", "", "", *(_money(b.lights_cost) if b else "n/a" for b in bills)])
    w.writerow(["total_usd", "", "", *(_money(b.total) if b else "n/a" for b in bills)])
    return buf.getvalue()


def power_csv_text(games: list[str] | None = None) -> str:
    """hardware/bom/power.csv: every game and build's rails, typical and worst-case current, and the supply chosen."""
    from controller.rules import game_ids

    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["game", "build", "rail", "typical_ma", "worst_ma", "supply", "supply_ma"])
    for g in game_ids() if games is None else games:
        for build in BUILDS:
            b = _bill_or_none(g, build)
            for rail in b.design.rails if b else ():
                w.writerow([g, build, rail.name, f"{rail.typical_ma:g}", f"{rail.worst_ma:g}", rail.supply, f"{rail.supply_ma:g}"])
    return buf.getvalue()


def bom_dir() -> Path:
    """hardware/bom of this checkout."""
    import controller

    return Path(controller.__file__).resolve().parent.parent / "hardware" / "bom"


def write_csvs(directory: Path | None = None) -> list[Path]:
    """Write BUILD.csv for every build and power.csv into ``directory`` (default hardware/bom); the paths written."""
    directory = bom_dir() if directory is None else directory
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for build in BUILDS:
        path = directory / f"{build}.csv"
        path.write_text(csv_text(build), encoding="utf-8")
        written.append(path)
    path = directory / "power.csv"
    path.write_text(power_csv_text(), encoding="utf-8")
    written.append(path)
    return written


def totals_markdown() -> str:
    """A Markdown table of every installed game's total for each build (for hardware/README.md)."""
    from controller.rules import game_ids, load_game

    out = ["| game | stations | pieces | " + " | ".join(BUILDS) + " |", "|---|---|---|" + "---|" * len(BUILDS)]
    for g in game_ids():
        bills = [_bill_or_none(g, b) for b in BUILDS]
        game = load_game(g)
        out.append(f"| {g} ({game.zh}) | {len(game.stations)} | {piece_count(game)} | "
                   + " | ".join((f"${b.base_cost:,.0f}" + (f" (+${b.lights_cost:,.0f} lights)" if b.lights_cost else ""))
                                if b else "too big" for b in bills) + " |")
    return "\n".join(out) + "\n"


def power_markdown(games: tuple[str, ...] = ("luzhanqi", "stratego", "siguo")) -> str:
    """The power budget of every build of a few games, as Markdown (hardware/README.md; all games: power.csv)."""
    out = ["| game | build | rail | typical | worst case | supply |", "|---|---|---|---|---|---|"]
    for g in games:
        for build in BUILDS:
            b = _bill_or_none(g, build)
            for rail in b.design.rails if b else ():
                out.append(f"| {g} | {build} | {rail.name} | {rail.typical_ma:,.0f} mA | {rail.worst_ma:,.0f} mA | "
                           f"{rail.supply} |")
    return "\n".join(out) + "\n"


def bill_table(bill: Bill) -> str:
    """A bill as a plain-text table for the terminal, with the reader fit and the power budget."""
    d = bill.design
    shape = f", matrix {bill.matrix[0]} x {bill.matrix[1]}" if bill.matrix else ""
    chain = f", {d.chips_165} x 74HC165 ({d.channels} inputs)" if d.chips_165 else ""
    made = str(d.profile.file).startswith("generated/")
    source = (f"profile {bill.profile} (none shipped: `facedown firmware profile {bill.game} --build {bill.build}` writes it)"
              if made else f"profile {bill.profile}")
    head = (f"{bill.game}, build {bill.build} ({BUILD_TITLES[bill.build]}), {source}: "
            f"{bill.stations} stations{shape}{chain}, {bill.pieces} pieces")
    width = max(len(line.part.name) for line in bill.lines)
    rows = [head, "", f"{'part':<{width}}  {'qty':>5}  {'each $':>7}  {'cost $':>8}"]
    rows += [f"{line.part.name:<{width}}  {line.quantity:>5}  {line.part.price:>7.2f}  {line.cost:>8.2f}" for line in bill.lines]
    rows.append(f"{'total':<{width}}  {'':>5}  {'':>7}  {bill.total:>8.2f}")
    if bill.lights_cost:
        rows.append(f"{'  of which the optional station lights (the lines from the LEDs on)':<{width}}  {'':>5}  {'':>7}  "
                    f"{bill.lights_cost:>8.2f}")
        rows.append(f"{'  the board without them':<{width}}  {'':>5}  {'':>7}  {bill.base_cost:>8.2f}")
    rows += ["", fit_text(bill.design), "", *mechanics_lines(bill), "", "Power budget (typical / worst case):"]
    for rail in d.rails:
        rows.append(f"  {rail.name}: {rail.typical_ma:,.0f} / {rail.worst_ma:,.0f} mA -> {rail.supply} "
                    f"({rail.supply_ma:,.0f} mA; worst case uses {rail.worst_ma / rail.supply_ma:.0%})")
        rows += [f"    {what}: {typ:,.1f} / {worst:,.1f} mA" for what, typ, worst in rail.parts]
    rows += ["", PRICES]
    return "\n".join(rows) + "\n"


def mechanics_lines(bill: Bill) -> list[str]:
    """The board's mechanical figures: the layer stack, the air gap and its checks, the wire runs."""
    from controller.rules import load_game

    from . import chain as runs
    from . import mechanics as mech

    d = bill.design
    game = load_game(d.profile.game)
    pts = runs.positions(game, d.pitch)
    stack = " / ".join(f"{what} {mm:g} mm" for what, mm in mech.stack_lines())
    out = [f"Layer stack, top down: {stack}."]
    if d.reeds:
        out += ["Reed stations: " + line if i == 0 else line
                for i, line in enumerate(mech.board_air_gap(game, pts, d.profile).lines())]
    if d.readers > 1:
        hyb = d.build == "hybrid-pico"
        out.append(f"Reader stations: tag to antenna {mech.tag_gap_mm(hyb):.2f} mm (reader in a pocket leaving "
                   f"{mech.TAG_SKIN_MM:g} mm of wood" + (f", on {mech.HYBRID_SPACER_MM:g} mm spacers over the reed" if hyb else "")
                   + f"), within half the {mech.TAG_RANGE_MM:g} mm reliable range: "
                   + ("ok" if mech.tag_gap_ok(hyb) else "TOO FAR"))
    if d.readers > 1:
        reach = runs.hub_reach(d.profile, d.pitch)
        far = max(mm for _, mm in reach)
        cable = runs.hub_cable_cm(far)
        out.append(f"Reader hubs: {len(reach)} of up to {runs.READERS_PER_HUB} readers, each among its readers; the "
                   f"farthest reader {far:.0f} mm from its hub's centre: "
                   + (f"{cable} cm cables (they reach {dict(runs.HUB_CABLES)[cable]:.0f} mm)." if cable else
                      f"TOO FAR for the longest cable ({runs.HUB_CABLES[-1][0]} cm)."))
    if d.diodes:
        lines = runs.matrix_runs(d.profile, d.pitch)
        row, row_mm = max(((k, v) for k, v in lines.items() if k[0] == "R"), key=lambda kv: kv[1])
        col, col_mm = max(((k, v) for k, v in lines.items() if k[0] == "C"), key=lambda kv: kv[1])
        out.append(f"Matrix wires: {len(lines)} runs, {sum(lines.values()) / 1000:.1f} m in all (each to the connector at "
                   f"the middle of the bottom edge); the longest column {col} {col_mm:.0f} mm (limit "
                   f"{runs.MATRIX_COLUMN_LIMIT_MM:.0f}: its pull-up recharges it within the scanner's 10 us), the longest "
                   f"row {row} {row_mm:.0f} mm (limit {runs.MATRIX_ROW_LIMIT_MM:.0f})"
                   + ("" if col_mm <= runs.MATRIX_COLUMN_LIMIT_MM and row_mm <= runs.MATRIX_ROW_LIMIT_MM else ": TOO LONG")
                   + ".")
    if d.chips_165:
        plan = runs.chain_plan(d.profile, d.pitch)
        out.append(f"74HC165 chain: widest chip {plan.widest_spread_mm:.0f} mm from its farthest station (limit "
                   f"{plan.spread_limit_mm:.0f}), longest reed wire {plan.longest_run_mm:.0f} mm (limit "
                   f"{plan.run_limit_mm:.0f}), ribbon {plan.ribbon_mm / 1000:.1f} m"
                   + (f": PL and CP re-driven by a 74HC125 at chip {plan.buffer_at}" if plan.buffered else "") + ".")
    return out


def fit_text(d: Design) -> str:
    """Where the reader modules go, and the proof that they fit the board's pitch."""
    from controller.rules import load_game

    from .readers import orientation

    if not d.module:
        return f"No readers: the board is printed at {d.pitch:g} mm pitch (a 30 mm piece and its magnet)."
    m = d.module
    if d.readers == 1:
        return (f"Reader: one {m.chip} module ({m.size}) beside the board as the check-in pad; the board keeps the "
                f"{d.pitch:g} mm reed pitch.")
    return (f"Readers: {d.readers} x {m.chip} module, {m.size} each, the module centred under its station, "
            f"{orientation(load_game(d.profile.game), m)}; on this board they need a pitch of at least "
            f"{d.required_pitch:g} mm (module plus 3 mm between neighbours); printed at {d.pitch:g} mm, so they fit.")
