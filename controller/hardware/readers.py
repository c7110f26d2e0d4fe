"""RFID reader modules: their size, current and price, and whether one fits under every station of a board.

A reader module is a rectangle of board (``width`` x ``depth`` mm, the header pins on one short edge) centred under
its station (the antenna coil, at the end away from the header, reaches past the module's middle, under the tag). Two neighbouring modules must not overlap, with ``CLEARANCE_MM`` between
them for the header and its cable. ``required_pitch`` finds the smallest station pitch at which every pair of a
game's stations is far enough apart, with the module turned whichever way (long side across or along the board)
needs less; the printed board of an RFID build uses ``build_pitch`` (that, rounded up to 5 mm, never under the reed
pitch). A standard RC522 module (60 x 40 mm) does not fit the 40 mm reed pitch: an RFID board is larger.

>>> from controller.rules import load_game
>>> required_pitch(load_game("stratego"), RC522)
63.0
>>> build_pitch(load_game("stratego"), RC522)
65.0
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

from controller.board_geometry import smallest_distance

#: Room between two modules: the 2.54 mm header and its connector, and a hand's error when gluing.
CLEARANCE_MM = 3.0
#: The printed reed board's pitch (board_svg.DEFAULT_PITCH_MM); an RFID board is never smaller.
REED_PITCH_MM = 40.0


@dataclass(frozen=True, slots=True)
class ReaderModule:
    """One off-the-shelf reader board, with the figures the BOM's fit check and power budget use.

    Currents are at 3.3 V for the whole module: ``idle_ma`` with the antenna off (chip awake, what every reader draws
    between its reads), ``field_ma`` with the antenna on while it is read (typical, and ``field_max_ma`` the chip's
    transmitter limit, the worst a badly matched antenna can pull).
    """

    name: str
    chip: str
    width_mm: float  # the long side
    depth_mm: float
    idle_ma: float
    idle_max_ma: float
    field_ma: float
    field_max_ma: float
    price: float
    pins: tuple[str, ...]

    @property
    def size(self) -> str:
        return f"{self.width_mm:g} x {self.depth_mm:g} mm"


#: The common blue "RFID-RC522" board: MFRC522, PCB antenna, 8-pin 2.54 mm header (SDA SCK MOSI MISO IRQ GND RST 3.3V).
#: 60 x 40 mm; module listings give 13-26 mA working current; the MFRC522 datasheet's transmitter maximum is 100 mA.
RC522 = ReaderModule(
    name="RC522 RFID reader module (NXP MFRC522, 13.56 MHz, PCB antenna), 60 x 40 mm, with its 8-pin header",
    chip="MFRC522", width_mm=60.0, depth_mm=40.0, idle_ma=13.0, idle_max_ma=20.0, field_ma=30.0, field_max_ma=100.0,
    price=6.00, pins=("SDA", "SCK", "MOSI", "MISO", "IRQ", "GND", "RST", "3.3V"),
)
MODULES = {"rc522": RC522}


def _unit_offsets(game: Any) -> tuple[tuple[float, float], ...]:
    """Every pair of stations' (|dx|, |dy|) in units of the game's smallest station distance."""
    return _offsets(tuple((s.x, s.y) for s in game.stations))


@functools.lru_cache(maxsize=32)
def _offsets(pts: tuple[tuple[float, float], ...]) -> tuple[tuple[float, float], ...]:
    unit = smallest_distance(pts)
    return tuple((abs(ax - bx) / unit, abs(ay - by) / unit) for i, (ax, ay) in enumerate(pts) for bx, by in pts[i + 1:])


@functools.lru_cache(maxsize=128)
def _pitch_for(offsets: tuple[tuple[float, float], ...], across: float, along: float) -> float:
    """The smallest pitch at which rectangles ``across`` x ``along`` mm (with clearance) centred on the stations
    never overlap: a pair is clear when it is far enough apart in x or in y."""
    need = 0.0
    for dx, dy in offsets:
        gx = (across + CLEARANCE_MM) / dx if dx > 1e-9 else math.inf
        gy = (along + CLEARANCE_MM) / dy if dy > 1e-9 else math.inf
        need = max(need, min(gx, gy))
    return need


def required_pitch(game: Any, module: ReaderModule) -> float:
    """The smallest station pitch (mm) at which a ``module`` fits under every station, turned the better way."""
    offsets = _unit_offsets(game)
    best = min(_pitch_for(offsets, module.width_mm, module.depth_mm), _pitch_for(offsets, module.depth_mm, module.width_mm))
    return round(best, 1)


def orientation(game: Any, module: ReaderModule) -> str:
    """How to lay the modules: 'long side across' (left-right on the printed board) or 'long side along'."""
    offsets = _unit_offsets(game)
    across = _pitch_for(offsets, module.width_mm, module.depth_mm)
    along = _pitch_for(offsets, module.depth_mm, module.width_mm)
    return "long side left-right" if across <= along else "long side top-bottom"


def build_pitch(game: Any, module: ReaderModule) -> float:
    """The printed pitch of a reader-per-station board: the required pitch rounded up to 5 mm, at least the reed pitch."""
    return max(REED_PITCH_MM, math.ceil(required_pitch(game, module) / 5 - 1e-9) * 5.0)


def fits(game: Any, module: ReaderModule, pitch: float) -> bool:
    """Whether ``module`` fits under every station of ``game`` printed at ``pitch`` mm."""
    return pitch + 1e-9 >= required_pitch(game, module)
