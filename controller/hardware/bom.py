"""Bills of materials for the three board builds, computed from a game's stations, matrix and pieces.

Each part says what its quantity follows: every ``station``, every matrix ``line`` (row or column), every ``chip``
(one per 8 stations: shift registers), every ``piece`` (both armies, the largest any house rule gives), or once per
``board``; ``each`` is how many per unit, rounded up for the whole board (``each`` above 1 on switches covers
breakage). Prices are typical hobby-retail unit prices in US dollars, for budgeting only.
``facedown bom GAME --build B`` prints one game's list; ``write_csvs`` writes hardware/bom/BUILD.csv for every
installed game, and a test keeps those files equal to this code.

>>> bill = bill_of_materials("stratego", "reed-gpio")
>>> bill.stations, bill.matrix, bill.pieces
(100, (10, 10), 80)
>>> next(line.quantity for line in bill.lines if line.part.name.startswith("Reed switch"))
110
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

BUILDS = ("reed-gpio", "reed-pico", "rfid-pico")
BUILD_TITLES = {
    "reed-gpio": "reed matrix on the Pi's GPIO",
    "reed-pico": "reed matrix read by a Pico scanner over USB",
    "rfid-pico": "RFID reader under each station, read by a Pico scanner over USB",
}
PER = ("station", "line", "chip", "piece", "board")
PER_WORDS = {"station": "station", "line": "row or column", "chip": "8 stations", "piece": "piece", "board": "board"}
#: GPIO pins the Pi can give a reed matrix: BCM 0-27 less the ID EEPROM pins (0, 1), the UART (14, 15), the buzzer
#: (18) and three LEDs (25-27).
PI_MATRIX_PINS = 20
#: GPIO pins the Pico can give a reed matrix: GP0-22 and GP26-28.
PICO_MATRIX_PINS = 26


class BomError(ValueError):
    """A bill of materials cannot be made: an unknown build, or a game too big for the build's pins."""


@dataclass(frozen=True, slots=True)
class Part:
    """One line of a parts list: what it is, what its quantity follows, how many per unit, a typical unit price."""

    name: str
    per: str
    each: float
    price: float


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
    """The parts for one game's board in one build, and what they were counted from."""

    game: str
    build: str
    stations: int
    matrix: tuple[int, int] | None
    pieces: int
    lines: tuple[Line, ...]

    @property
    def total(self) -> float:
        return round(sum(line.cost for line in self.lines), 2)


_PI = [
    Part("Raspberry Pi 4 Model B, 2 GB (a Pi 3B+ or Zero 2 W also runs the referee)", "board", 1, 45.00),
    Part("microSD card, 16-32 GB, A1 class", "board", 1, 8.00),
    Part("Raspberry Pi USB-C power supply, 5.1 V 3 A", "board", 1, 8.00),
    Part("Passive piezo buzzer module, 3.3 V", "board", 1, 1.00),
    Part("LED, 5 mm (ready, turn, error)", "board", 3, 0.05),
    Part("Resistor 330 ohm, 1/4 W (one per LED)", "board", 3, 0.02),
    Part("Board blank: 6 mm plywood or MDF, cut to the printed board", "board", 1, 12.00),
    Part("Female-female jumper wires, 20 cm (buzzer, LEDs)", "board", 8, 0.05),
]
_REEDS = [
    Part("Reed switch, glass, normally open, 2 x 14 mm (10 % spare: glass breaks when leads are bent)", "station", 1.1, 0.15),
    Part("Diode 1N4148 (one per switch, against ghost readings)", "station", 1, 0.02),
    Part("Neodymium disc magnet, 10 x 3 mm, N35 (one in each piece's base)", "piece", 1, 0.10),
    Part("Solid hook-up wire, 0.5 mm2 (22 AWG), metres (one run per row or column)", "line", 1.0, 0.15),
]
_PICO = [
    Part("Raspberry Pi Pico (RP2040) with soldered headers", "board", 1, 5.00),
    Part("USB-A to micro-USB data cable, 0.5 m (Pico to Pi)", "board", 1, 3.00),
]
BUILD_PARTS: dict[str, tuple[Part, ...]] = {
    "reed-gpio": tuple(_PI + _REEDS + [
        Part("Female-female jumper wire, 20 cm (one per row or column to the header)", "line", 1, 0.05),
        Part("40-pin GPIO ribbon cable and screw-terminal breakout", "board", 1, 8.00),
    ]),
    "reed-pico": tuple(_PI + _REEDS + _PICO + [
        Part("Female-female jumper wire, 20 cm (one per row or column to the Pico)", "line", 1, 0.05),
    ]),
    "rfid-pico": tuple(_PI + _PICO + [
        Part("MFRC522 RFID reader module, 13.56 MHz (one under each station)", "station", 1, 1.50),
        Part("NTAG213 sticker tag, 25 mm (one in each piece's base)", "piece", 1, 0.15),
        Part("74HC595 shift register, DIP-16 (selects one reader at a time)", "chip", 1, 0.25),
        Part("Capacitor 100 nF ceramic (one per 74HC595)", "chip", 1, 0.02),
        Part("8-way ribbon cable, metres (reader bus)", "station", 0.5, 0.30),
        Part("Buck converter module 5 V to 3.3 V, 3 A (powers the readers)", "board", 1, 2.00),
        Part("Power supply 5 V 4 A with barrel jack (for the readers)", "board", 1, 10.00),
    ]),
}


def matrix_shape(stations: int, max_pins: int) -> tuple[int, int]:
    """The squarest rows x columns matrix with room for every station, within ``max_pins`` pins in all."""
    rows = math.ceil(math.sqrt(stations))
    cols = math.ceil(stations / rows)
    if rows + cols > max_pins:
        raise BomError(f"{stations} stations need a {rows} x {cols} reed matrix ({rows + cols} pins); this build has "
                       f"{max_pins} pins for it: choose reed-pico or rfid-pico")
    return rows, cols


def _shipped_matrix(game_id: str) -> tuple[int, int] | None:
    """The reed matrix of the game's shipped GPIO profile, if there is one."""
    from controller.sensing.profile import ProfileError, default_profile

    try:
        return default_profile(game_id).matrix_size
    except ProfileError:
        return None


def piece_count(game: Any) -> int:
    """Pieces of every side together, with the largest count any house rule gives each piece type."""
    return len(game.sides) * sum(max([p.count, *(n for _, n in p.counts)]) for p in game.pieces)


def bill_of_materials(game_id: str, build: str) -> Bill:
    """The parts for ``game_id``'s board in ``build`` (reed-gpio, reed-pico, rfid-pico)."""
    from controller.rules import load_game

    if build not in BUILD_PARTS:
        raise BomError(f"build {build!r}: expected one of {', '.join(BUILDS)}")
    game = load_game(game_id)
    n = len(game.stations)
    matrix: tuple[int, int] | None = None
    if build == "reed-gpio":
        matrix = _shipped_matrix(game.id) or matrix_shape(n, PI_MATRIX_PINS)
    elif build == "reed-pico":
        matrix = matrix_shape(n, PICO_MATRIX_PINS)
    units = {"station": n, "line": sum(matrix) if matrix else 0, "chip": math.ceil(n / 8), "piece": piece_count(game), "board": 1}
    lines = tuple(Line(part, math.ceil(round(part.each * units[part.per], 6))) for part in BUILD_PARTS[build])
    return Bill(game=game.id, build=build, stations=n, matrix=matrix, pieces=units["piece"], lines=lines)


def _money(v: float) -> str:
    return f"{v:.2f}"


def csv_text(build: str, games: list[str] | None = None) -> str:
    """hardware/bom/BUILD.csv: one row per part, one quantity column per game, and a total row."""
    from controller.rules import game_ids

    games = game_ids() if games is None else games
    bills = [_bill_or_none(g, build) for g in games]
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["part", "per", "each", "unit_price_usd", *games])
    for i, part in enumerate(BUILD_PARTS[build]):
        w.writerow([part.name, PER_WORDS[part.per], f"{part.each:g}", _money(part.price),
                    *(b.lines[i].quantity if b else "" for b in bills)])
    w.writerow(["total_usd", "", "", "", *(_money(b.total) if b else "n/a" for b in bills)])
    return buf.getvalue()


def _bill_or_none(game_id: str, build: str) -> Bill | None:
    """The bill, or None where the game does not fit the build (too many stations for its pins)."""
    try:
        return bill_of_materials(game_id, build)
    except BomError:
        return None


def bom_dir() -> Path:
    """hardware/bom of this checkout."""
    import controller

    return Path(controller.__file__).resolve().parent.parent / "hardware" / "bom"


def write_csvs(directory: Path | None = None) -> list[Path]:
    """Write BUILD.csv for every build into ``directory`` (default hardware/bom); the paths written."""
    directory = bom_dir() if directory is None else directory
    directory.mkdir(parents=True, exist_ok=True)
    written = []
    for build in BUILDS:
        path = directory / f"{build}.csv"
        path.write_text(csv_text(build), encoding="utf-8")
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
                   + " | ".join(f"${b.total:.2f}" if b else "too big" for b in bills) + " |")
    return "\n".join(out) + "\n"


def bill_table(bill: Bill) -> str:
    """A bill as a plain-text table for the terminal."""
    shape = f", matrix {bill.matrix[0]} x {bill.matrix[1]}" if bill.matrix else ""
    head = f"{bill.game}, build {bill.build} ({BUILD_TITLES[bill.build]}): {bill.stations} stations{shape}, {bill.pieces} pieces"
    width = max(len(line.part.name) for line in bill.lines)
    rows = [head, "", f"{'part':<{width}}  {'qty':>5}  {'each $':>7}  {'cost $':>8}"]
    rows += [f"{line.part.name:<{width}}  {line.quantity:>5}  {line.part.price:>7.2f}  {line.cost:>8.2f}" for line in bill.lines]
    rows.append(f"{'total':<{width}}  {'':>5}  {'':>7}  {bill.total:>8.2f}")
    return "\n".join(rows) + "\n"
