"""Reads a hardware profile (one YAML file per physical board build): which game, which sensors, station -> channel, pins.

A profile is validated like a game file: every defect is rejected with the file, the path in the document and what
was expected (``ProfileError``). See docs/profiles.md for the format.

>>> p = default_profile("stratego")
>>> p.game, p.sensing, p.channels["a1"], p.matrix_size
('stratego', 'reed', (0, 0), (10, 10))
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from controller.docreader import DocReader, DocumentProblem, kind_of, load_yaml
from controller.docreader import join as _join
from controller.errors import FaceDownError

FORMAT_VERSION = 1
#: reed: occupancy only; rfid: a reader per station; hybrid: reeds and a reader per station; checkin: reeds under the
#: stations and ONE reader beside the board as a check-in pad (a piece is tapped on it before it is put down).
SENSING_KINDS = ("reed", "rfid", "hybrid", "checkin")
#: matrix: the scanner drives a diode matrix of reeds; shift_register: a 74HC165 chain; none: readers only (rfid).
SCANNER_KINDS = ("matrix", "shift_register", "none")
#: BCM GPIO numbers on the Raspberry Pi's 40-pin header.
BCM_PINS = range(0, 28)
#: Pins with a fixed resistor on every Raspberry Pi board: GPIO2/3 (I2C1 SDA/SCL) have 1.8 kOhm pull-ups to 3.3 V.
#: A matrix line there fights the resistor: a closed switch on a column reads ~0.7-0.75 V against the 0.8 V
#: input-low limit, and a driven row sinks ~1.8 mA for nothing. Outputs to an LED or the buzzer are fine there.
FIXED_PULL_PINS: dict[int, str] = {
    2: "a fixed 1.8 kOhm pull-up to 3.3 V on every Pi (I2C1 SDA)",
    3: "a fixed 1.8 kOhm pull-up to 3.3 V on every Pi (I2C1 SCL)",
}
DEFAULT_SCAN_PERIOD_MS = 10
DEFAULT_SETTLE_MS = 40
#: Environment variable naming another directory of profiles (checked before the checkout's hardware/profiles).
PROFILES_DIR_ENV = "FACEDOWN_PROFILES_DIR"

#: A reed-matrix crossing (row index, column index) for GPIO builds, or a scanner channel index for scanner builds.
Channel = tuple[int, int] | int


class ProfileError(FaceDownError, ValueError):
    """A hardware profile is missing or malformed: names the file, the path inside the document and what was expected."""

    def __init__(self, file: str, where: str, expected: str) -> None:
        self.file = file
        self.where = where
        self.expected = expected
        super().__init__(f"{file}: {where}: {expected}")


@dataclass(frozen=True, slots=True)
class Pins:
    """The Pi's GPIO pins (BCM numbers) a build uses: reed-matrix rows and columns, the buzzer, named status LEDs."""

    rows: tuple[int, ...] = ()
    columns: tuple[int, ...] = ()
    buzzer: int | None = None
    leds: Mapping[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Scanner:
    """A USB microcontroller that scans the board and reports channels 0..channel_count-1 over serial."""

    kind: str
    port: str | None
    usb_vid: int | None
    usb_pid: int | None
    channel_count: int
    #: (rows, columns) of a reed matrix the scanner drives (kind matrix), channel = row x columns + column; else None.
    matrix: tuple[int, int] | None = None


#: Station lights: a WS2812 chain on the Pico scanner, or one LED per station on the Pi's GPIO (small boards).
LIGHT_KINDS = ("ws2812", "gpio")
#: The Pico's GPIOs a WS2812 chain may take (its edge pins; the build checks it is free, controller/hardware/build.py).
PICO_GPIO = (*range(0, 23), 26, 27, 28)
MAX_CHAIN = 512
DEFAULT_BRIGHTNESS = 64
#: The byte order a chain's LEDs read: WS2812B (and most 5050 strips) GRB; the 5 mm PL9823 and many through-hole
#: parts RGB. Sent the wrong way, cyan shows as magenta.
COLOUR_ORDERS = ("grb", "rgb")


@dataclass(frozen=True, slots=True)
class Lights:
    """Station lights (docs/profiles.md): ``ws2812``: a chain on the scanner's ``pin`` whose LEDs show ``chain``'s
    stations in order (None: an LED at no station); ``gpio``: an LED per station on a Pi pin (``pins``)."""

    kind: str
    brightness: int = DEFAULT_BRIGHTNESS
    pin: int | None = None
    chain: tuple[str | None, ...] = ()
    pins: Mapping[str, int] = field(default_factory=dict)
    colour_order: str = "grb"

    @property
    def count(self) -> int:
        return len(self.chain) if self.kind == "ws2812" else len(self.pins)


@dataclass(frozen=True, slots=True)
class Profile:
    """One physical board build: the game it is for, how it senses pieces, and which channel each station is on."""

    game: str
    sensing: str
    channels: Mapping[str, Channel]
    pins: Pins
    scan_period_ms: int
    settle_ms: int
    scanner: Scanner | None
    file: str
    name: str = ""
    description: str = ""
    lights: Lights | None = None

    @property
    def id(self) -> str:
        """The profile's name as `facedown` commands take it: its file name without .yaml."""
        return Path(self.file).stem

    @property
    def stations(self) -> tuple[str, ...]:
        """The stations, in the game's order."""
        return tuple(self.channels)

    @property
    def matrix_size(self) -> tuple[int, int] | None:
        """(rows, columns) of the Pi-driven reed matrix, or None for a scanner build."""
        if self.scanner is not None:
            return None
        return len(self.pins.rows), len(self.pins.columns)


class _Reader(DocReader):
    """Walks a parsed profile, so every complaint can say the file and where in the document."""

    error = ProfileError

    def integer(self, value: Any, where: str, *, low: int, high: int, what: str = "a whole number") -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(where, f"expected {what}, got {value!r}")
        if not low <= value <= high:
            raise self.fail(where, f"expected {what} from {low} to {high}, got {value}")
        return value

    def pin(self, value: Any, where: str) -> int:
        return self.integer(value, where, low=BCM_PINS.start, high=BCM_PINS.stop - 1, what="a BCM GPIO number")


def _show(channel: Channel) -> str:
    return f"[{channel[0]}, {channel[1]}]" if isinstance(channel, tuple) else str(channel)


def load_profile(path: str | Path) -> Profile:
    """Read and validate one hardware profile file."""
    from controller.textfiles import InputFileError, read_text

    path = Path(path)
    try:
        text = read_text(path, "hardware profile")
    except InputFileError as exc:
        raise ProfileError(str(path), "(file)", f"a readable hardware profile, in UTF-8 ({str(exc).removeprefix(f'{path}: ')})") from None
    return parse_profile(text, str(path))


def parse_profile(text: str, file: str = "<profile>") -> Profile:
    """Validate a hardware profile given as YAML text; ``file`` names it in error messages."""
    try:
        doc = load_yaml(text, fast=False)
    except DocumentProblem as exc:
        raise ProfileError(file, exc.where, exc.expected) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(document)"
        raise ProfileError(file, where, f"expected valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    return _build(_Reader(file), doc)


def _build(r: _Reader, doc: Any) -> Profile:
    top = r.mapping(
        doc,
        "",
        allowed={"format", "name", "description", "game", "sensing", "pins", "channels", "scan_period_ms", "settle_ms", "scanner",
                 "lights"},
        required={"format", "game", "sensing", "channels"},
    )
    if top["format"] != FORMAT_VERSION:
        raise r.fail("format", f"expected format {FORMAT_VERSION}, got {top['format']!r}")
    name = r.text(top.get("name", ""), "name")
    description = r.text(top.get("description", ""), "description")
    stations = _game_stations(r, top["game"])
    sensing = r.one_of(top["sensing"], "sensing", SENSING_KINDS, "a sensing kind")

    scanner = _scanner(r, top["scanner"], len(stations)) if top.get("scanner") is not None else None
    if scanner is None and sensing != "reed":
        raise r.fail("sensing", f"expected 'reed' for a Pi-driven reed matrix; {sensing!r} sensing reads tags, which needs a scanner: section")
    if scanner is not None and sensing != "rfid" and scanner.kind == "none":
        raise r.fail("scanner.kind", f"expected matrix or shift_register: {sensing!r} sensing has reed switches to scan")
    pins = _pins(r, top.get("pins"), matrix=scanner is None)

    scan_period_ms = r.integer(top.get("scan_period_ms", DEFAULT_SCAN_PERIOD_MS), "scan_period_ms", low=1, high=1000, what="milliseconds")
    settle_ms = r.integer(top.get("settle_ms", DEFAULT_SETTLE_MS), "settle_ms", low=0, high=1000, what="milliseconds")
    if settle_ms < scan_period_ms:
        raise r.fail("settle_ms", f"expected at least scan_period_ms ({scan_period_ms}) so a station is read twice before it settles, got {settle_ms}")

    channels = _channels(r, top["channels"], stations, top["game"], pins, scanner)
    lights = _lights(r, top["lights"], stations, scanner, pins) if top.get("lights") is not None else None
    return Profile(
        game=top["game"], sensing=sensing, channels=channels, pins=pins, scan_period_ms=scan_period_ms,
        settle_ms=settle_ms, scanner=scanner, file=r.file, name=name, description=description, lights=lights,
    )


def _lights(r: _Reader, raw: Any, stations: tuple[str, ...], scanner: Scanner | None, pins: Pins) -> Lights:
    where = "lights"
    lt = r.mapping(raw, where, allowed={"kind", "pin", "brightness", "chain", "pins", "colour_order"}, required={"kind"})
    kind = r.one_of(lt["kind"], f"{where}.kind", LIGHT_KINDS, "a kind of station lights")
    brightness = r.integer(lt.get("brightness", DEFAULT_BRIGHTNESS), f"{where}.brightness", low=1, high=255,
                           what="a brightness cap (255 = full)")
    known = set(stations)
    if kind == "ws2812":
        if scanner is None:
            raise r.fail(f"{where}.kind", "expected gpio: a WS2812 chain is driven by the Pico scanner, and this build has "
                                          "no scanner: section")
        if "pins" in lt:
            raise r.fail(f"{where}.pins", "expected no per-station pins on a WS2812 chain (give chain:); remove this key")
        if "pin" not in lt:
            raise r.fail(f"{where}.pin", "required key is missing (the Pico GPIO driving the chain's data input)")
        pin = r.integer(lt["pin"], f"{where}.pin", low=0, high=28, what="a Pico GPIO number")
        if pin not in PICO_GPIO:
            raise r.fail(f"{where}.pin", f"expected a Pico GPIO on its edge pins (0-22, 26-28), got {pin}")
        raw_chain = lt.get("chain")
        if raw_chain is None:
            chain: tuple[str | None, ...] = stations
        else:
            flat: list[tuple[str, Any]] = []  # (where, station): a flat list, or a list of rows (lists) of LEDs
            for i, item in enumerate(r.seq(raw_chain, f"{where}.chain", nonempty=True)):
                if isinstance(item, list):
                    flat += [(f"{where}.chain[{i}][{j}]", st) for j, st in enumerate(item)]
                else:
                    flat.append((f"{where}.chain[{i}]", item))
            if len(flat) > MAX_CHAIN:
                raise r.fail(f"{where}.chain", f"expected at most {MAX_CHAIN} LEDs, got {len(flat)}")
            seq = [st for _, st in flat]
            seen: dict[str, int] = {}
            for i, (at, st) in enumerate(flat):
                if st is None:
                    continue
                if not isinstance(st, str) or st not in known:
                    raise r.fail(at, f"expected a station of the game or null (an LED at no station), got {st!r}")
                if st in seen:
                    raise r.fail(at, f"expected each station once; {st} is already LED {seen[st]}")
                seen[st] = i
            chain = tuple(seq)
        order = r.one_of(lt.get("colour_order", "grb"), f"{where}.colour_order", COLOUR_ORDERS,
                         "the LEDs' byte order (grb: WS2812B; rgb: PL9823 and other RGB parts)")
        return Lights(kind=kind, brightness=brightness, pin=pin, chain=chain, colour_order=order)
    for key in ("pin", "chain", "colour_order"):
        if key in lt:
            raise r.fail(f"{where}.{key}", "expected pins: {station: BCM pin} for GPIO lights; remove this key")
    if "brightness" in lt:
        raise r.fail(f"{where}.brightness", "expected no brightness on GPIO LEDs (each LED's resistor sets it); remove this key")
    taken = {p: "pins.rows" for p in pins.rows} | {p: "pins.columns" for p in pins.columns}
    taken |= {pins.buzzer: "pins.buzzer"} if pins.buzzer is not None else {}
    taken |= {p: f"pins.leds.{n}" for n, p in pins.leds.items()}
    given = r.mapping(lt.get("pins"), f"{where}.pins")
    if not given:
        raise r.fail(f"{where}.pins", "expected at least one station: BCM pin")
    out: dict[str, int] = {}
    for st, value in given.items():
        at = _join(f"{where}.pins", st)
        if st not in known:
            raise r.fail(at, f"expected a station of the game; it has no station {st!r}")
        pin = r.pin(value, at)
        if pin in taken:
            raise r.fail(at, f"expected each GPIO pin used once; GPIO{pin} is already used at {taken[pin]}")
        taken[pin] = at
        out[st] = pin
    return Lights(kind=kind, brightness=brightness, pins=out)


def _game_stations(r: _Reader, game: Any) -> tuple[str, ...]:
    from controller.rules import game_ids, load_game
    from controller.rules.errors import RulesError

    if not isinstance(game, str) or game not in game_ids():
        raise r.fail("game", f"expected the id of an installed game (one of: {', '.join(game_ids())}), got {game!r}")
    try:
        return load_game(game).station_ids
    except RulesError as exc:
        raise r.fail("game", f"a game that loads ({exc})") from None


def _scanner(r: _Reader, raw: Any, station_count: int) -> Scanner:
    where = "scanner"
    sc = r.mapping(raw, where, allowed={"kind", "port", "usb_vid", "usb_pid", "channel_count", "matrix"}, required={"kind"})
    kind = r.one_of(sc["kind"], f"{where}.kind", SCANNER_KINDS, "a scanner kind")
    port = sc.get("port")
    if port is not None:
        port = r.text(port, f"{where}.port")
        if not port:
            raise r.fail(f"{where}.port", "expected a serial device such as /dev/ttyACM0, or null to autodetect")
    usb = {}
    for key in ("usb_vid", "usb_pid"):
        value = sc.get(key)
        usb[key] = None if value is None else r.integer(value, f"{where}.{key}", low=0, high=0xFFFF, what="a 16-bit USB id")
    matrix = None
    if kind == "matrix":
        matrix = _scanner_matrix(r, sc.get("matrix"), station_count)
        default_count = matrix[0] * matrix[1]
    elif "matrix" in sc:
        raise r.fail(f"{where}.matrix", f"expected no matrix shape on a {kind} scanner; remove this key")
    elif kind == "shift_register":
        default_count = -(-station_count // 8) * 8
    else:
        default_count = station_count
    count = r.integer(sc.get("channel_count", default_count), f"{where}.channel_count", low=station_count, high=4096,
                      what=f"a channel count (at least the game's {station_count} stations)")
    if matrix is not None and count != matrix[0] * matrix[1]:
        raise r.fail(f"{where}.channel_count", f"expected {matrix[0] * matrix[1]} (a {matrix[0]} x {matrix[1]} matrix has that many "
                                               f"crossings, and the scanner reports every one), got {count}")
    if kind == "shift_register" and count % 8:
        raise r.fail(f"{where}.channel_count", f"expected a multiple of 8 (a 74HC165 has 8 inputs and the scanner reports every "
                                               f"input of every chip): {-(-count // 8) * 8} for {-(-count // 8)} chips, got {count}")
    return Scanner(kind=kind, port=port, usb_vid=usb["usb_vid"], usb_pid=usb["usb_pid"], channel_count=count, matrix=matrix)


def squarest_matrix(count: int) -> tuple[int, int]:
    """The rows x columns matrix with the fewest lines (then the fewest spare crossings) for ``count`` stations."""
    shapes = ((rows, -(-count // rows)) for rows in range(1, max(1, count) + 1))
    return min((s for s in shapes if s[0] <= s[1]), key=lambda s: (s[0] + s[1], s[0] * s[1] - count, -s[0]))


def _scanner_matrix(r: _Reader, raw: Any, station_count: int) -> tuple[int, int]:
    where = "scanner.matrix"
    if raw is None:
        return squarest_matrix(station_count)
    if not isinstance(raw, list) or len(raw) != 2:
        raise r.fail(where, f"expected [rows, columns] of the reed matrix the scanner drives, got {raw!r}")
    rows = r.integer(raw[0], f"{where}[0]", low=1, high=64, what="a number of rows")
    cols = r.integer(raw[1], f"{where}[1]", low=1, high=64, what="a number of columns")
    if rows * cols < station_count:
        raise r.fail(where, f"expected at least {station_count} crossings (one per station), got {rows} x {cols} = {rows * cols}")
    return rows, cols


def _pins(r: _Reader, raw: Any, *, matrix: bool) -> Pins:
    if raw is None:
        if matrix:
            raise r.fail("pins", "required key is missing (a Pi-driven reed matrix needs pins.rows and pins.columns)")
        return Pins()
    allowed = {"rows", "columns", "buzzer", "leds"}
    p = r.mapping(raw, "pins", allowed=allowed, required={"rows", "columns"} if matrix else set())
    used: dict[int, str] = {}

    def claim(value: Any, where: str) -> int:
        pin = r.pin(value, where)
        if pin in used:
            raise r.fail(where, f"expected each GPIO pin used once; GPIO{pin} is already used at {used[pin]}")
        used[pin] = where
        return pin

    lines: dict[str, tuple[int, ...]] = {}
    for key in ("rows", "columns"):
        if key not in p:
            continue
        if not matrix:
            raise r.fail(f"pins.{key}", "expected no matrix pins on a scanner build (the scanner drives the matrix); remove this key")
        seq = p[key]
        if not isinstance(seq, list) or not seq:
            raise r.fail(f"pins.{key}", f"expected a non-empty list of BCM GPIO numbers, got {kind_of(seq)}")
        lines[key] = tuple(claim(v, f"pins.{key}[{i}]") for i, v in enumerate(seq))
        for i, pin in enumerate(lines[key]):
            if pin in FIXED_PULL_PINS:
                raise r.fail(f"pins.{key}[{i}]", f"expected a matrix line off GPIO{pin}: it has {FIXED_PULL_PINS[pin]}, so a closed "
                                                 "switch reads ~0.7 V against the 0.8 V input-low limit; move the line to a free "
                                                 "pin (GPIO2/3 suit an LED or the buzzer)")
    buzzer = None if p.get("buzzer") is None else claim(p["buzzer"], "pins.buzzer")
    leds: dict[str, int] = {}
    for name, value in r.mapping(p.get("leds", {}) or {}, "pins.leds").items():
        leds[name] = claim(value, f"pins.leds.{name}")
    return Pins(rows=lines.get("rows", ()), columns=lines.get("columns", ()), buzzer=buzzer, leds=leds)


def _channels(r: _Reader, raw: Any, stations: tuple[str, ...], game: str, pins: Pins, scanner: Scanner | None) -> dict[str, Channel]:
    given = r.mapping(raw, "channels")
    known = set(stations)
    owner: dict[Channel, str] = {}
    found: dict[str, Channel] = {}
    for station, value in given.items():
        where = _join("channels", station)
        if station not in known:
            raise r.fail(where, f"expected a station of game {game!r}; it has no station {station!r}")
        channel = _scanner_channel(r, value, where, scanner) if scanner else _matrix_channel(r, value, where, pins)
        if channel in owner:
            raise r.fail(where, f"expected each channel used once; channel {_show(channel)} is already {owner[channel]}'s")
        owner[channel] = station
        found[station] = channel
    missing = [s for s in stations if s not in found]
    if missing:
        shown = ", ".join(missing[:12]) + (f" and {len(missing) - 12} more" if len(missing) > 12 else "")
        raise r.fail("channels", f"expected a channel for every station of {game!r}; no channel for {shown}")
    return {s: found[s] for s in stations}


def _matrix_channel(r: _Reader, value: Any, where: str, pins: Pins) -> tuple[int, int]:
    if not isinstance(value, list) or len(value) != 2:
        raise r.fail(where, f"expected [row, column] of the reed matrix (integer channels need a scanner: section), got {value!r}")
    row = r.integer(value[0], f"{where}[0]", low=0, high=len(pins.rows) - 1, what=f"a row index of pins.rows ({len(pins.rows)} rows)")
    col = r.integer(value[1], f"{where}[1]", low=0, high=len(pins.columns) - 1,
                    what=f"a column index of pins.columns ({len(pins.columns)} columns)")
    return row, col


def _scanner_channel(r: _Reader, value: Any, where: str, scanner: Scanner) -> int:
    return r.integer(value, where, low=0, high=scanner.channel_count - 1, what="a scanner channel index")


def profiles_dir() -> Path:
    """The directory of shipped profiles: $FACEDOWN_PROFILES_DIR if set, else hardware/profiles of this checkout."""
    env = os.environ.get(PROFILES_DIR_ENV)
    if env:
        path = Path(env)
        if not path.is_dir():
            raise ProfileError(env, "(directory)", f"a directory of hardware profiles (named by ${PROFILES_DIR_ENV})")
        return path
    import controller

    # `hardware/` is not a Python package: it sits next to `controller/` in the checkout (installed editable).
    path = Path(controller.__file__).resolve().parent.parent / "hardware" / "profiles"
    if not path.is_dir():
        raise ProfileError(
            str(path), "(directory)",
            f"the checkout's hardware/profiles directory; install FaceDown editable from its checkout (pip install -e .) "
            f"or set ${PROFILES_DIR_ENV}",
        )
    return path


def profile_ids() -> list[str]:
    """The names of the shipped profiles, sorted."""
    return sorted(p.stem for p in profiles_dir().glob("*.yaml"))


def find_profile(name: str | Path) -> Profile:
    """The profile at this path (a .yaml file), or the shipped profile with this name."""
    path = Path(name)
    meant_file = path.suffix in (".yaml", ".yml") or os.sep in str(name)
    if (path.is_file() and (meant_file or not (profiles_dir() / f"{name}.yaml").exists())) \
            or (meant_file and os.path.lexists(path)):
        return load_profile(path)  # a FIFO, a device, a directory or a dangling symlink: refused there by what it is
    if path.suffix in (".yaml", ".yml") or len(path.parts) > 1:  # a file was meant, not a shipped profile's name
        raise ProfileError(str(path), "(file)", f"no such hardware profile; shipped profiles: {', '.join(profile_ids())}")
    candidate = profiles_dir() / f"{name}.yaml"
    if not candidate.exists():
        raise ProfileError(str(name), "(name)", f"no such file here and no shipped profile of that name; a profile file "
                           f"(my-board.yaml) or one of the shipped profiles: {', '.join(profile_ids())}")
    return load_profile(candidate)


def default_profile(game_id: str) -> Profile:
    """The shipped profile for this game: hardware/profiles/<game_id>.yaml."""
    profile = find_profile(game_id)
    if profile.game != game_id:
        raise ProfileError(profile.file, "game", f"expected {game_id!r} in the default profile of {game_id!r}, got {profile.game!r}")
    return profile
