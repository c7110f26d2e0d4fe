"""A board build worked out from its hardware profile: the one source the BOM, the wiring tables and the firmware's
config.json are all made from.

``design(profile)`` says which build a profile is (``build_of``), how many of everything it needs (reed switches,
diodes or 74HC165 chips and their pull-ups, readers, decoder chips), which Pico pin carries each signal, the reader
module and the pitch it needs, and the power budget. ``firmware_config(design)`` is the scanner's config.json
(format 2, firmware/CONFIG.md). ``profile_text(game, build)`` writes a profile for a game and build that has none
shipped, so ``facedown bom GAME --build B`` always prices a board that could be wired and flashed as listed.

Reader chip selects go through a decoder tree (firmware/CONFIG.md, ``select.kind = decoder``): one 74HC154
(4-to-16) per 16 readers on the low four address bits, and above 16 readers a 74HC138 (up to 8 groups) or another
74HC154 (up to 16 groups) on the high bits choosing the group; every 154's G1 is the ``enable`` pin. Selecting any
reader is the same handful of pin writes (constant time), unlike shifting a 74HC595 chain. Each group of 16 readers
has a 74HC125 buffer: SCK and MOSI out to its readers, their MISO back, enabled only for the selected group.

>>> from controller.sensing.profile import find_profile
>>> d = design(find_profile("siguo"))
>>> d.build, d.chips_165, d.pullups
('reed-pico', 17, 136)
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any

from controller.errors import FaceDownError

from .readers import RC522, ReaderModule, build_pitch, required_pitch

BUILDS = ("reed-gpio", "reed-pico", "reed-pico-pad", "rfid-pico", "hybrid-pico")
BUILD_TITLES = {
    "reed-gpio": "reed matrix on the Pi's GPIO",
    "reed-pico": "reed switches read by a Pico scanner over USB",
    "reed-pico-pad": "reed switches read by a Pico, plus one RFID reader as a check-in pad",
    "rfid-pico": "an RFID reader under each station, read by a Pico scanner over USB",
    "hybrid-pico": "reed switches and an RFID reader under each station, read by a Pico scanner over USB",
}
SENSING_OF_BUILD = {"reed-gpio": "reed", "reed-pico": "reed", "reed-pico-pad": "checkin", "rfid-pico": "rfid",
                    "hybrid-pico": "hybrid"}

#: The Pi's GPIO pins a reed matrix may use (BCM): 0-27 less the HAT ID EEPROM pins (0, 1), GPIO2/3 (fixed 1.8 kOhm
#: pull-ups: the ready and turn LEDs go there), the UART (14, 15), the buzzer (18) and the error LED (27).
PI_MATRIX_POOL = (4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 19, 20, 21, 22, 23, 24, 25, 26)
PI_BUZZER = 18
PI_LEDS = {"ready": 2, "turn": 3, "error": 27}

#: The Pico's edge GPIOs, and its fixed assignments: SPI0 for the readers, the 74HC165 chain's three lines.
PICO_PINS = (*range(0, 23), 26, 27, 28)
PICO_SPI = {"sck": 18, "mosi": 19, "miso": 16}
PICO_165 = {"load": 20, "clock": 21, "data": 22}
#: The order in which matrix lines, then decoder address lines, take the Pico's remaining pins.
#: SPI0's pins come last, so a build without readers may use them for its matrix.
PICO_POOL = (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17, 20, 21, 22, 26, 27, 28, 16, 18, 19)

#: Scanner firmware settings the profile does not carry (firmware/CONFIG.md defaults, written out).
HEARTBEAT_MS = 1000
WATCHDOG_MS = 2000
SPI_BAUDRATE = 4_000_000
CHECKIN_POLL_MS = 100
#: The pad's antenna is on for field_us + timeout_us (1 ms each by default) per poll when no tag answers.
PAD_FIELD_MS = 2.0
#: The Pico itself (RP2040 running the scan loop) and the Pi 4 under load, in mA.
PICO_MA, PICO_MAX_MA = 25.0, 50.0
PI_MA, PI_MAX_MA = 700.0, 1300.0
#: A closed reed pulls its 10 kOhm pull-up to ground: 0.33 mA each.
PULLUP_OHMS = 10_000
#: A WS2812B at full white draws 60 mA (20 mA per colour); dark, about 1 mA (its driver).
WS2812_MA, WS2812_IDLE_MA = 60.0, 1.0
#: Station lights lit at once in play: the computer's move (from, to) and a couple of fix-up stations.
LIGHTS_TYPICAL_LIT = 4
#: Supplies are chosen so the worst case uses at most this share of their rating.
SUPPLY_HEADROOM = 0.8
#: A buck converter's efficiency, to carry the 3.3 V readers' current back to the 5 V supply.
BUCK_EFFICIENCY = 0.85


class BuildError(FaceDownError, ValueError):
    """A profile that cannot be built as given: too many lines for the pins, too many readers, a shape that disagrees."""


@dataclass(frozen=True, slots=True)
class Decoder:
    """The chip-select decoder tree for ``readers`` readers: which chips, how many address bits."""

    readers: int
    groups: int  # 74HC154s, one per 16 readers (0 when a single 74HC138 does it)
    top: str | None  # the chip on the high bits: "74HC138", "74HC154" or None
    address_bits: int

    @property
    def chips(self) -> dict[str, int]:
        out: dict[str, int] = {}
        if self.groups == 0:
            out["74HC138"] = 1
        else:
            out["74HC154"] = self.groups
        if self.top:
            out[self.top] = out.get(self.top, 0) + 1
        return out

    def output_of(self, reader: int) -> tuple[str, str]:
        """(chip, output) whose line selects ``reader``: ('154#2', 'Y5') is output 5 of the third hub's 74HC154."""
        if self.groups == 0:
            return "138", f"Y{reader}"
        return f"154#{reader // 16}", f"Y{reader % 16}"


def decoder_for(readers: int) -> Decoder:
    """The decoder tree for this many readers (1 to 256)."""
    if not 1 <= readers <= 256:
        raise BuildError(f"{readers} readers: a decoder tree on 8 address bits selects 1 to 256 readers")
    if readers <= 8:
        return Decoder(readers, 0, None, max(1, math.ceil(math.log2(readers))) if readers > 1 else 1)
    groups = math.ceil(readers / 16)
    if groups == 1:
        return Decoder(readers, 1, None, 4)
    high = math.ceil(math.log2(groups))
    return Decoder(readers, groups, "74HC138" if groups <= 8 else "74HC154", 4 + high)


@dataclass(frozen=True, slots=True)
class Rail:
    """One supply rail's budget: typical and worst-case current, and the supply chosen for it."""

    name: str
    volts: float
    typical_ma: float
    worst_ma: float
    supply: str
    supply_ma: float
    parts: tuple[tuple[str, float, float], ...]  # (what, typical mA, worst mA)

    @property
    def headroom_ok(self) -> bool:
        return self.worst_ma <= self.supply_ma * SUPPLY_HEADROOM + 1e-9


@dataclass(frozen=True, slots=True)
class Design:
    """Everything a profile's build needs, counted once."""

    profile: Any
    build: str
    stations: int
    channels: int
    pi_matrix: tuple[int, int] | None  # rows, columns on the Pi's GPIO
    pico_matrix: tuple[int, int] | None  # rows, columns on the Pico
    chips_165: int
    readers: int
    decoder: Decoder | None
    module: ReaderModule | None
    pitch: float
    required_pitch: float | None
    pico: dict[str, Any] = field(default_factory=dict)  # signal -> GP number or list of GP numbers
    rails: tuple[Rail, ...] = ()

    @property
    def reeds(self) -> int:
        return self.stations if self.build != "rfid-pico" else 0

    @property
    def pullups(self) -> int:
        """10 kOhm pull-ups: one on every 74HC165 input, spares included (an open input must read 1)."""
        return self.chips_165 * 8

    @property
    def diodes(self) -> int:
        return self.stations if (self.pi_matrix or self.pico_matrix) else 0

    @property
    def matrix_lines(self) -> int:
        m = self.pi_matrix or self.pico_matrix
        return sum(m) if m else 0


def build_of(profile: Any) -> str:
    """Which build a profile describes."""
    if profile.scanner is None:
        return "reed-gpio"
    return {"reed": "reed-pico", "checkin": "reed-pico-pad", "rfid": "rfid-pico", "hybrid": "hybrid-pico"}[profile.sensing]


def design(profile: Any, module: ReaderModule = RC522) -> Design:
    """Work out the build of ``profile``: counts, Pico pins, reader fit, power."""
    from controller.rules import load_game

    game = load_game(profile.game)
    build = build_of(profile)
    n = len(profile.stations)
    sc = profile.scanner
    pi_matrix = profile.matrix_size if sc is None else None
    pico_matrix = sc.matrix if sc is not None and build != "rfid-pico" and sc.kind == "matrix" else None
    chips = sc.channel_count // 8 if sc is not None and build != "rfid-pico" and sc.kind == "shift_register" else 0
    if build in ("reed-pico", "reed-pico-pad", "hybrid-pico") and sc is not None and sc.kind == "none":
        raise BuildError(f"{profile.file}: scanner.kind: {profile.sensing} sensing has reeds: give matrix or shift_register")
    readers = {"rfid-pico": n, "hybrid-pico": n, "reed-pico-pad": 1}.get(build, 0)
    if build == "rfid-pico" and sc is not None and sc.channel_count != n:
        raise BuildError(f"{profile.file}: scanner.channel_count: an RFID-per-station build reports one channel per reader; "
                         f"expected {n} (the stations), got {sc.channel_count}")
    decoder = decoder_for(readers) if readers > 1 else None
    per_station = build in ("rfid-pico", "hybrid-pico")
    need = required_pitch(game, module) if per_station else None
    pitch = build_pitch(game, module) if per_station else 40.0
    pico = _pico_pins(profile, build, pico_matrix, chips, decoder, readers) if sc is not None else {}
    lt = profile.lights
    if lt is not None and lt.kind == "ws2812":
        used = {g: sig for sig, v in pico.items() for g in (v if isinstance(v, list) else [v])}
        if lt.pin in used:
            free = [g for g in PICO_POOL if g not in used]
            raise BuildError(f"{profile.file}: lights.pin: GP{lt.pin} already carries {used[lt.pin]} in this build; "
                             f"free Pico pins: {', '.join(f'GP{g}' for g in free) or 'none'}")
        pico["lights"] = lt.pin
    d = Design(profile=profile, build=build, stations=n, channels=sc.channel_count if sc else n, pi_matrix=pi_matrix,
               pico_matrix=pico_matrix, chips_165=chips, readers=readers, decoder=decoder,
               module=module if readers else None, pitch=pitch, required_pitch=need, pico=pico)
    return dataclasses.replace(d, rails=power_budget(d))


def _pico_pins(profile: Any, build: str, matrix: tuple[int, int] | None, chips: int, decoder: Decoder | None,
               readers: int) -> dict[str, Any]:
    pins: dict[str, Any] = {}
    taken: set[int] = set()
    if readers:
        pins.update({f"spi_{k}": v for k, v in PICO_SPI.items()})
        taken |= set(PICO_SPI.values())
    if chips:
        pins.update({f"sr_{k}": v for k, v in PICO_165.items()})
        taken |= set(PICO_165.values())
    pool = [p for p in PICO_POOL if p not in taken]
    need = (sum(matrix) if matrix else 0) + ((decoder.address_bits + 1) if decoder else (1 if readers else 0))
    if need > len(pool):
        what = f"a {matrix[0]} x {matrix[1]} matrix ({sum(matrix)} lines)" if matrix else ""
        rest = f"{decoder.address_bits + 1} decoder lines" if decoder else ("a chip select" if readers else "")
        raise BuildError(f"{profile.file}: scanner: {' and '.join(x for x in (what, rest) if x)} need {need} Pico pins; "
                         f"{len(pool)} are free: use scanner kind shift_register (3 pins for any number of reeds)")
    if matrix:
        pins["matrix_rows"], pool = pool[:matrix[0]], pool[matrix[0]:]
        pins["matrix_cols"], pool = pool[:matrix[1]], pool[matrix[1]:]
    if decoder:
        pins["decoder_address"], pool = pool[:decoder.address_bits], pool[decoder.address_bits:]
        pins["decoder_enable"], pool = pool[0], pool[1:]
    elif readers:
        pins["reader_select"], pool = [pool[0]], pool[1:]
    return pins


# ---------------------------------------------------------------------------------------------------- power
_PI_SUPPLY = ((3000, "Raspberry Pi USB-C power supply, 5.1 V 3 A"),)
_SUPPLIES_5V = ((3000, "Power supply 5 V 3 A with barrel jack (for the readers)"),
                (5000, "Power supply 5 V 5 A with barrel jack (for the readers)"),
                (10000, "Power supply 5 V 10 A, enclosed, screw terminals (for the readers)"))
_LIGHT_SUPPLIES = ((2000, "Power supply 5 V 2 A with barrel jack (for the station lights)"),
                   (3000, "Power supply 5 V 3 A with barrel jack (for the station lights)"),
                   (5000, "Power supply 5 V 5 A with barrel jack (for the station lights)"),
                   (10000, "Power supply 5 V 10 A, enclosed, screw terminals (for the station lights)"))
_BUCKS = ((3000, "Buck converter module 5 V to 3.3 V, 3 A (powers the readers)"),
          (5000, "Buck converter module 5 V to 3.3 V, 5 A (powers the readers)"),
          (10000, "Buck converter module 5 V to 3.3 V, 10 A (powers the readers)"))
#: The Pico's 3V3 pin: the on-board regulator gives 300 mA in all (Pico datasheet), the Pico itself included.
PICO_3V3_MA = 300.0


def _pick(options: tuple[tuple[int, str], ...], worst: float, what: str) -> tuple[str, float]:
    for rating, name in options:
        if worst <= rating * SUPPLY_HEADROOM:
            return name, float(rating)
    raise BuildError(f"{what}: {worst:.0f} mA worst case is more than any supply listed; split the readers over two supplies")


def _rail(name: str, volts: float, parts: list[tuple[str, float, float]], supply: str, rating: float) -> Rail:
    typ = round(sum(p[1] for p in parts), 1)
    worst = round(sum(p[2] for p in parts), 1)
    return Rail(name, volts, typ, worst, supply, rating, tuple((w, round(t, 1), round(x, 1)) for w, t, x in parts))


def power_budget(d: Design) -> tuple[Rail, ...]:
    """Typical and worst-case current per rail, with the supply sized so the worst case uses at most 80 % of it.

    Readers: every reader draws its idle current (chip awake, antenna off); the firmware switches one antenna on at a
    time, only while that reader is read (firmware/CONFIG.md), so one reader at a time adds its field current.
    Typical: typical figures, a full army standing on a 74HC165 board. Worst case: every reader at its idle maximum
    plus one at the MFRC522 transmitter's maximum, every 74HC165 input closed.
    """
    rails: list[Rail] = []
    pico: list[tuple[str, float, float]] = []
    if d.build != "reed-gpio":
        pico.append(("Pico (RP2040 running the scan loop)", PICO_MA, PICO_MAX_MA))
    if d.chips_165:
        typical_closed = min(d.stations, 40)
        pico.append((f"{d.pullups} x 10 kOhm pull-up, 0.33 mA each while its reed is closed", typical_closed * 3.3e3 / PULLUP_OHMS,
                     d.pullups * 3.3e3 / PULLUP_OHMS))
        pico.append((f"{d.chips_165} x 74HC165", 0.0, 0.1 * d.chips_165))
    if d.decoder:
        chips = sum(d.decoder.chips.values()) + (d.decoder.groups if d.decoder.groups > 1 else 0)
        pico.append((f"{chips} decoder and buffer chips", 0.0, 0.1 * chips))
    if d.readers == 1 and d.module:
        m = d.module
        duty = PAD_FIELD_MS / CHECKIN_POLL_MS
        pico.append((f"the check-in pad's {m.chip} (antenna on {PAD_FIELD_MS:g} ms in every {CHECKIN_POLL_MS} ms poll)",
                     m.idle_ma + (m.field_ma - m.idle_ma) * duty, m.field_max_ma))
    if pico:
        rails.append(_rail("Pico 3.3 V", 3.3, pico, "the Pico's own regulator (3V3, pin 36; 300 mA in all)", PICO_3V3_MA))
    if d.readers > 1 and d.module:
        m = d.module
        readers = [(f"{d.readers} x {m.chip} awake, antenna off", d.readers * m.idle_ma, d.readers * m.idle_max_ma),
                   ("one antenna on while its reader is read", m.field_ma - m.idle_ma, m.field_max_ma - m.idle_max_ma)]
        worst = sum(p[2] for p in readers)
        buck, rating = _pick(_BUCKS, worst, "the readers' 3.3 V rail")
        rails.append(_rail("readers 3.3 V", 3.3, readers, buck, rating))
        r = rails[-1]
        into = [("the readers' buck converter (85 % efficient)", r.typical_ma * 3.3 / 5 / BUCK_EFFICIENCY,
                 r.worst_ma * 3.3 / 5 / BUCK_EFFICIENCY)]
        supply, rating = _pick(_SUPPLIES_5V, into[0][2], "the readers' 5 V supply")
        rails.append(_rail("readers 5 V (their own supply)", 5.0, into, supply, rating))
    lt = d.profile.lights
    if lt is not None and lt.kind == "ws2812":
        rails.append(lights_rail(lt.count, lt.brightness))
    five = [("Raspberry Pi 4 (referee and web page)", PI_MA, PI_MAX_MA)]
    if pico:
        five.append(("the Pico's 3.3 V rail, by USB from the Pi (counted mA for mA)", sum(p[1] for p in pico), sum(p[2] for p in pico)))
    supply, rating = _pick(_PI_SUPPLY, sum(p[2] for p in five), "the Pi's supply")
    rails.insert(0, _rail("Pi 5 V", 5.0, five, supply, rating))
    return tuple(rails)


def lights_rail(count: int, brightness: int) -> Rail:
    """The WS2812 chain's own 5 V supply: sized for every LED white at the brightness cap (count x 60 mA x cap / 255),
    whatever the host asks, so no colour the firmware can show overloads it."""
    share = brightness / 255
    parts = [(f"{count} x WS2812B dark (driver)", count * WS2812_IDLE_MA, count * WS2812_IDLE_MA),
             (f"LEDs lit, capped at brightness {brightness}/255 (typical {LIGHTS_TYPICAL_LIT} white, worst all white)",
              min(count, LIGHTS_TYPICAL_LIT) * WS2812_MA * share, count * WS2812_MA * share)]
    supply, rating = _pick(_LIGHT_SUPPLIES, sum(p[2] for p in parts), "the station lights' 5 V supply")
    return _rail("lights 5 V (their own supply)", 5.0, parts, supply, rating)


# ---------------------------------------------------------------------------------------------------- firmware
def firmware_config(d: Design) -> dict[str, Any]:
    """The scanner's config.json (format 2, firmware/CONFIG.md) for a Pico build."""
    p = d.profile
    if p.scanner is None:
        raise BuildError(f"{p.file}: a reed matrix on the Pi's own GPIO has no scanner firmware (the Pi scans it); "
                         f"a Pico build has a scanner: section")
    cfg: dict[str, Any] = {"format": 2, "board": p.name or p.id, "profile": p.id, "channels": d.channels,
                           "sensing": p.sensing}
    if d.build != "rfid-pico":
        cfg["scanner"] = p.scanner.kind
    cfg.update({"active_low": True, "settle_ms": p.settle_ms, "scan_period_ms": p.scan_period_ms, "heartbeat_ms": HEARTBEAT_MS,
                "watchdog_ms": WATCHDOG_MS})
    if d.pico_matrix:
        cfg["matrix"] = {"rows": d.pico["matrix_rows"], "cols": d.pico["matrix_cols"], "settle_us": 10}
    if d.chips_165:
        cfg["shift_register"] = {"load": d.pico["sr_load"], "clock": d.pico["sr_clock"], "data": d.pico["sr_data"],
                                 "count": d.chips_165 * 8}
    if d.readers:
        if d.decoder:
            select: dict[str, Any] = {"kind": "decoder", "address": d.pico["decoder_address"], "enable": d.pico["decoder_enable"]}
        else:
            select = {"kind": "direct", "pins": d.pico["reader_select"]}
        rfid: dict[str, Any] = {"spi": 0, "sck": d.pico["spi_sck"], "mosi": d.pico["spi_mosi"], "miso": d.pico["spi_miso"],
                                "baudrate": SPI_BAUDRATE, "select": select, "readers": d.readers}
        if d.build == "hybrid-pico":
            from .chain import reader_stations

            rfid["channels"] = [p.channels[s] for s in reader_stations(p)]
        elif d.build == "rfid-pico" and sorted(p.channels.values()) != list(range(d.readers)):
            raise BuildError(f"{p.file}: channels: on an RFID-per-station build reader k is channel k; number the "
                             f"stations 0..{d.readers - 1}, each once")
        cfg["rfid"] = rfid
    if d.build == "reed-pico-pad":
        cfg["checkin"] = {"poll_ms": CHECKIN_POLL_MS}
    lt = p.lights
    if lt is not None and lt.kind == "ws2812":
        cfg["lights"] = {"pin": lt.pin, "count": lt.count, "order": [-1 if s is None else p.channels[s] for s in lt.chain],
                         "brightness": lt.brightness, "colour_order": lt.colour_order}
    return cfg


def config_json(cfg: dict[str, Any]) -> str:
    """config.json text: one key per line at the top, each section on one line (as firmware/CONFIG.md shows them)."""
    import json

    lines = [f"  {json.dumps(k)}: {json.dumps(v)}" for k, v in cfg.items()]
    return "{\n" + ",\n".join(lines) + "\n}\n"


# ---------------------------------------------------------------------------------------------------- profiles
def profile_text(game_id: str, build: str) -> str:
    """A complete hardware profile (YAML) for ``game_id`` in ``build``: a reed matrix's rows and columns, and a chain's
    chips, and the readers' hubs, chosen from the game's coordinates (controller/hardware/chain.py)."""
    from controller.rules import load_game

    if build not in BUILDS:
        raise BuildError(f"build {build!r}: expected one of {', '.join(BUILDS)}")
    game = load_game(game_id)
    ids = game.station_ids
    n = len(ids)
    head = [f"# A {BUILD_TITLES[build]} for {game.name}, written by `facedown firmware profile {game.id} --build {build}`.",
            "# Pins are BCM numbers on the Pi. Format: docs/profiles.md.",
            "format: 1", f"name: {game.id}-{build}", f"description: {game.name}, {BUILD_TITLES[build]}", f"game: {game.id}",
            f"sensing: {SENSING_OF_BUILD[build]}",
            *(["scan_period_ms: 10", "settle_ms: 40"] if build == "reed-gpio" else ["scan_period_ms: 5", "settle_ms: 30"])]
    leds = "{" + ", ".join(f"{k}: {v}" for k, v in PI_LEDS.items()) + "}"
    from .chain import matrix_layout

    if build == "reed-gpio":
        rows, cols, at = matrix_layout(game, len(PI_MATRIX_POOL))
        if rows + cols > len(PI_MATRIX_POOL):
            raise BuildError(f"{game.id}: {n} stations need a {rows} x {cols} reed matrix ({rows + cols} GPIO lines); the Pi "
                             f"has {len(PI_MATRIX_POOL)} for it: choose reed-pico (a Pico scanner)")
        body = ["pins:", f"  rows: {list(PI_MATRIX_POOL[:rows])}", f"  columns: {list(PI_MATRIX_POOL[rows:rows + cols])}",
                f"  buzzer: {PI_BUZZER}", f"  leds: {leds}", "channels:"]
        body += [f"  {s}: [{at[s][0]}, {at[s][1]}]" for s in ids]
        return "\n".join(head + body) + "\n"
    if build == "rfid-pico":
        scanner = ["scanner:", "  kind: none", f"  channel_count: {n}"]
    else:
        rows, cols, at = matrix_layout(game, len(PICO_POOL) - (4 if build == "reed-pico-pad" else 0))
        if rows + cols + (4 if build == "reed-pico-pad" else 0) <= len(PICO_POOL) and build != "hybrid-pico":
            scanner = ["scanner:", "  kind: matrix", f"  matrix: [{rows}, {cols}]"]
        else:
            scanner = ["scanner:", "  kind: shift_register", f"  channel_count: {math.ceil(n / 8) * 8}"]
    scanner += ["  port: null", "  usb_vid: 0x2E8A", "  usb_pid: 0x0005"]
    body = [*scanner, "pins:", f"  buzzer: {PI_BUZZER}", "  leds: {ready: 25, turn: 26, error: 27}", "channels:"]
    if build == "rfid-pico":
        from .chain import channels_by_groups, reader_groups

        body[-1] = "channels:  # reader k is channel k; hub g reads 16g-16g+15: 16 neighbouring stations (controller/hardware/chain.py)"
        body += [f"  {s}: {ch}" for s, ch in channels_by_groups(reader_groups(game, build_pitch(game, RC522)), 16).items()]
    elif "shift_register" in scanner[1]:
        from .chain import channels_by_groups, chip_groups

        body[-1] = "channels:  # chip k reads channels 8k-8k+7: 8 neighbouring stations (controller/hardware/chain.py)"
        body += [f"  {s}: {ch}" for s, ch in channels_by_groups(chip_groups(game, math.ceil(n / 8))).items()]
    elif "matrix" in scanner[1]:
        body += [f"  {s}: {at[s][0] * cols + at[s][1]}" for s in ids]
    else:
        body += [f"  {s}: {i}" for i, s in enumerate(ids)]
    return "\n".join(head + body) + "\n"


def profile_for(game_id: str, build: str) -> Any:
    """The profile ``facedown bom GAME --build B`` prices: a shipped profile of that game and build (GAME.yaml first),
    else one written by ``profile_text``."""
    from controller.rules import load_game
    from controller.sensing.profile import find_profile, parse_profile, profile_ids

    game = load_game(game_id)
    if build not in BUILDS:
        raise BuildError(f"build {build!r}: expected one of {', '.join(BUILDS)}")
    shipped = [pid for pid in profile_ids() if pid == game.id or pid.startswith(f"{game.id}-")]
    for pid in sorted(shipped, key=lambda p: p != game.id):
        prof = find_profile(pid)
        if prof.game == game.id and build_of(prof) == build:
            return prof
    return parse_profile(profile_text(game.id, build), f"generated/{game.id}-{build}.yaml")
