"""Wiring tables in Markdown, generated from hardware profiles (through their build design and the config.json the
firmware gets, controller/hardware/build.py).

``profile_wiring`` says, for one profile, which stations hang on each reed-matrix row and column and which header
pin each line goes to, or, for a Pico build, the Pico's pins, the stations on each matrix crossing, 74HC165 input or
reader, and each reader's decoder output; ``pico_wiring`` lists the pins of one scanner config.json. hardware/README.md carries these tables between marker comments
(``<!-- generated:NAME -->`` ... ``<!-- /generated -->``); ``refresh_readme`` rewrites them and a test keeps them equal.

>>> from controller.sensing.profile import default_profile
>>> print(profile_wiring(default_profile("luzhanqi")).splitlines()[4])
| R0 | GPIO4 | 7 | A0, A1, A2, A3, A4 |
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from controller.errors import FaceDownError

#: BCM GPIO number -> physical pin of the Raspberry Pi's 40-pin header.
PI_HEADER_PIN = {
    2: 3, 3: 5, 4: 7, 14: 8, 15: 10, 17: 11, 18: 12, 27: 13, 22: 15, 23: 16, 24: 18, 10: 19, 9: 21, 25: 22, 11: 23,
    8: 24, 7: 26, 0: 27, 1: 28, 5: 29, 6: 31, 12: 32, 13: 33, 19: 35, 16: 36, 26: 37, 20: 38, 21: 40,
}
PI_GROUND_PINS = (6, 9, 14, 20, 25, 30, 34, 39)
#: Pico GPn -> physical pin of the Raspberry Pi Pico (GP23-25 and GP29 are not on the edge pins).
PICO_PIN = {
    0: 1, 1: 2, 2: 4, 3: 5, 4: 6, 5: 7, 6: 9, 7: 10, 8: 11, 9: 12, 10: 14, 11: 15, 12: 16, 13: 17, 14: 19, 15: 20,
    16: 21, 17: 22, 18: 24, 19: 25, 20: 26, 21: 27, 22: 29, 26: 31, 27: 32, 28: 34,
}
PICO_GROUND_PINS = (3, 8, 13, 18, 23, 28, 33, 38)

_BLOCK = re.compile(r"(<!-- generated:(?P<name>[a-z0-9_:-]+) -->\n)(?P<body>.*?)(<!-- /generated -->)", re.S)


class WiringError(FaceDownError, ValueError):
    """A wiring table cannot be made (an unknown pin, a block name the generator does not know)."""


def header_pin(bcm: int) -> int:
    """The physical header pin of a BCM GPIO number."""
    try:
        return PI_HEADER_PIN[bcm]
    except KeyError:
        raise WiringError(f"GPIO{bcm}: not a pin of the Raspberry Pi's 40-pin header (BCM 0-27)") from None


def pico_pin(gp: int) -> int:
    """The physical pin of a Pico GPn number."""
    try:
        return PICO_PIN[gp]
    except KeyError:
        raise WiringError(f"GP{gp}: not on the Pico's edge pins (GP0-22, GP26-28)") from None


def profile_wiring(profile: Any) -> str:
    """The wiring tables of one hardware profile, as Markdown: made from its build design and, for a Pico build, from
    the very config.json `facedown firmware config` writes for it."""
    from .build import design, firmware_config

    d = design(profile)
    out: list[str] = []
    if profile.scanner is None:
        by_row: dict[int, list[str]] = {i: [] for i in range(len(profile.pins.rows))}
        by_col: dict[int, list[str]] = {i: [] for i in range(len(profile.pins.columns))}
        for station, (r, c) in profile.channels.items():
            by_row[r].append(station)
            by_col[c].append(station)
        out += ["Rows (the Pi drives one low at a time; diode cathodes here):", "",
                "| row | BCM | header pin | stations |", "|---|---|---|---|"]
        out += [f"| R{i} | GPIO{pin} | {header_pin(pin)} | {', '.join(by_row[i]) or '(none)'} |" for i, pin in enumerate(profile.pins.rows)]
        out += ["", "Columns (inputs with pull-ups; reed switches here):", "",
                "| column | BCM | header pin | stations |", "|---|---|---|---|"]
        out += [f"| C{i} | GPIO{pin} | {header_pin(pin)} | {', '.join(by_col[i]) or '(none)'} |" for i, pin in enumerate(profile.pins.columns)]
    else:
        sc = profile.scanner
        cfg = firmware_config(d)
        vid = f"{sc.usb_vid:04X}" if sc.usb_vid is not None else "2E8A"
        pid = f"{sc.usb_pid:04X}" if sc.usb_pid is not None else "0005"
        out += [f"Scanner: a Pico over USB (USB id {vid}:{pid}, {sc.port or '/dev/facedown-scanner'}), "
                f"`facedown firmware flash {profile.id}` writes its config: {_summary(d)}.", "",
                "The Pico's pins (GP: the RP2040's GPIO number; Pico pin: the board's edge pin 1-40, pin 1 beside the USB socket):", "", pico_wiring(cfg).rstrip("\n")]
        out += ["", *_station_tables(d, cfg)]
    out += _lights_tables(profile, d)
    out += ["", "Buzzer, LEDs and ground on the Pi:", "", "| part | BCM | header pin |", "|---|---|---|"]
    if profile.pins.buzzer is not None:
        out.append(f"| buzzer + | GPIO{profile.pins.buzzer} | {header_pin(profile.pins.buzzer)} |")
    for name, pin in profile.pins.leds.items():
        out.append(f"| LED {name} (through 330 Ω) | GPIO{pin} | {header_pin(pin)} |")
    out.append(f"| ground (buzzer −, LED cathodes) | - | {', '.join(str(p) for p in PI_GROUND_PINS)} |")
    return "\n".join(out) + "\n"


def _lights_tables(profile: Any, d: Any) -> list[str]:
    """How the station lights are wired: the WS2812 chain's order and power, or each station LED's Pi pin."""
    lt = profile.lights
    if lt is None:
        return []
    if lt.kind == "gpio":
        out = ["", "Station lights: one LED per station, anode through 330 Ω to its pin, cathode to ground:", "",
               "| station | BCM | header pin |", "|---|---|---|"]
        out += [f"| {st} | GPIO{pin} | {header_pin(pin)} |" for st, pin in lt.pins.items()]
        return out
    rail = next(r for r in d.rails if r.name.startswith("lights"))
    out = ["", f"Station lights: a chain of {lt.count} WS2812B LEDs, one under each station, brightness capped at "
           f"{lt.brightness}/255 (worst case {rail.worst_ma:,.0f} mA, all white), colour order {lt.colour_order.upper()} "
           f"(`lights.colour_order: {lt.colour_order}`). Data: Pico GP{lt.pin} -> 74AHCT125 in a DIP-14 socket "
           "(1A pin 2 in, 1OE pin 1 to ground, VCC pin 14 to 5 V with 100 nF, GND pin 7; 3.3 V in is a valid high for the "
           "AHCT part; unused gates: 2A, 3A, 4A (pins 5, 9, 12) to ground, 2OE, 3OE, 4OE (pins 4, 10, 13) to 5 V) -> 1Y "
           "(pin 3) -> 330 Ω -> DIN of LED 0; each LED's DOUT to the next one's DIN. Power: " + rail.supply
           + " through an inline fuse at its barrel jack, its 5 V and ground to both ends of the chain, "
           "1000 µF across them at LED 0, 100 nF at each LED; its ground joined to the Pico's ground. Never power the "
           "chain from the Pi or the Pico.", "", "LEDs in chain order (LED k's station):", "",
           "| LEDs | stations |", "|---|---|"]
    for k in range(0, lt.count, 10):
        part = lt.chain[k:k + 10]
        out.append(f"| {k}-{k + len(part) - 1} | " + ", ".join(st or "(none)" for st in part) + " |")
    return out


def _summary(d: Any) -> str:
    parts = []
    if d.pico_matrix:
        parts.append(f"a {d.pico_matrix[0]} x {d.pico_matrix[1]} reed matrix ({d.channels} channels)")
    if d.chips_165:
        parts.append(f"{d.chips_165} x 74HC165 ({d.channels} channels, {d.channels - d.stations} spare)")
    if d.readers > 1:
        chips = ", ".join(f"{n} x {c}" for c, n in d.decoder.chips.items())
        parts.append(f"{d.readers} MFRC522 readers selected through {chips}")
    elif d.readers == 1:
        parts.append("one MFRC522 reader as the check-in pad")
    return "; ".join(parts)


def _station_tables(d: Any, cfg: Mapping[str, Any]) -> list[str]:
    """Which station sits on each matrix crossing, 74HC165 input or reader."""
    p = d.profile
    out: list[str] = []
    by_channel = {ch: s for s, ch in p.channels.items()}
    if d.pico_matrix:
        rows, cols = d.pico_matrix
        out += ["Reed matrix (channel = row x " + str(cols) + " + column):", "",
                "| row | Pico GP | " + " | ".join(f"C{c} (GP{cfg['matrix']['cols'][c]})" for c in range(cols)) + " |",
                "|---|---|" + "---|" * cols]
        for r in range(rows):
            out.append(f"| R{r} | GP{cfg['matrix']['rows'][r]} | "
                       + " | ".join(by_channel.get(r * cols + c, "-") for c in range(cols)) + " |")
        out.append("")
    if d.chips_165:
        from .chain import BUFFER_RIBBON_MM, PIN_165, SERIES_OHMS, chain_plan

        pins = ", ".join(f"{n} {PIN_165[n]}" for n in ("A", "B", "C", "D", "E", "F", "G", "H"))
        out += ["74HC165 chain (DIP-16 pins: PL 1, CP 2, CE 15 to ground, Q7 9, DS 10, VCC 16 to 3.3 V, GND 8; inputs "
                f"{pins}; chip 0's Q7 to the Pico; chip k+1's Q7 to chip k's DS; the last chip's DS to ground; "
                "channel = chip x 8 + input):", "", "| chip | A | B | C | D | E | F | G | H |", "|---|---|---|---|---|---|---|---|---|"]
        for k in range(d.chips_165):
            out.append(f"| {k} | " + " | ".join(by_channel.get(k * 8 + i, "spare") for i in range(8)) + " |")
        plan = chain_plan(p, d.pitch)
        out += ["", f"Where each chip sits (its stripboard among its stations; mm from the top-left corner of the "
                f"printed board seen from above: `facedown print-board --layer assembly` draws them seen from below), its "
                f"farthest station and the ribbon from the chip before it (chip 0: from the Pico at {plan.pico[0]:.0f}, {plan.pico[1]:.0f}):", "",
                "| chip at | x mm | y mm | farthest station mm | ribbon in mm |", "|---|---|---|---|---|"]
        out += [f"| #{c.index} | {c.at[0]:.0f} | {c.at[1]:.0f} | {c.spread_mm:.0f} | {c.ribbon_in_mm:.0f} |"
                for c in plan.chips]
        out += ["", f"Load and clock over {plan.ribbon_mm / 1000:.1f} m of 6-way ribbon (3.3 V, GND, PL, GND, CP, Q7/DS: "
                f"a ground between the fast lines): a {SERIES_OHMS} Ω resistor in series with PL and with CP at the Pico "
                "damps the ringing that would clock the chain twice"
                + (f"; longer than {BUFFER_RIBBON_MM / 1000:g} m, so a 74HC125 at chip {plan.buffer_at} re-drives PL and "
                   f"CP for chips {plan.buffer_at + 1}-{d.chips_165 - 1} (chips 0-{plan.buffer_at} take them from the "
                   "Pico's ribbon; 1A/2A in from the ribbon, 1Y/2Y out, 1OE/2OE to ground, unused 3A/4A to "
                   "ground and 3OE/4OE to 3.3 V, 100 nF at its VCC)" if plan.buffered else "")
                + ". Every reed's wire and the ribbon lengths are in `facedown bom --profile " + p.id + "`."]
        out.append("")
    if d.readers > 1:
        dec = d.decoder
        from .chain import reader_stations

        station_of_reader = reader_stations(p)
        out += [f"Decoders: {_decoder_text(dec)}", "",
                "Readers (reader k's SDA, its chip select, on decoder output k; the wiring between a reader and its hub is in "
                "section 3):", "", "| reader | decoder | output | station |", "|---|---|---|---|"]
        for k in range(d.readers):
            chip, pin = dec.output_of(k)
            out.append(f"| {k} | {chip} | {pin} | {station_of_reader[k]} |")
        out.append("")
    if d.readers == 1:
        out += ["Check-in pad: one reader beside the board; its SDA (NSS) on GP"
                f"{cfg['rfid']['select']['pins'][0]}, RST to 3.3 V, IRQ free, 3.3 V from the Pico's pin 36.", ""]
    return out[:-1] if out and out[-1] == "" else out


def _decoder_text(dec: Any) -> str:
    """How the decoder chips of a reader build are wired to the address bits and the enable line."""
    if dec.groups == 0:
        return (f"one 74HC138: A, B, C on address bits 0-{dec.address_bits - 1} (unused inputs to ground), G2A on the "
                "enable line, G2B to ground, G1 to 3.3 V; output Yk is reader k's chip select.")
    if dec.groups == 1:
        return "one 74HC154: A-D on address bits 0-3, G1 on the enable line, G2 to ground; output Yk is reader k's chip select."
    high = dec.address_bits - 4
    inputs = "ABC" if dec.top == "74HC138" else "ABCD"
    tied = f" ({', '.join(inputs[high:])} to ground)" if high < len(inputs) else ""
    enables = "G1 to 3.3 V, G2A and G2B to ground" if dec.top == "74HC138" else "G1 and G2 to ground"
    return (f"{dec.groups} x 74HC154 (154#0 ... 154#{dec.groups - 1}, one per hub of 16 readers): A-D on address bits "
            f"0-3, G1 on the enable line. A {dec.top} chooses the hub: {', '.join(inputs[:high])} on address bits 4-"
            f"{dec.address_bits - 1}{tied}, {enables}; its output Yg goes to G2 of 154#g and to the enable of hub g's "
            "MISO gate (74HC125).")


def pico_wiring(config: Mapping[str, Any]) -> str:
    """The Pico's pins in a scanner config.json (format 2, firmware/CONFIG.md), as Markdown."""
    rows: list[tuple[str, str, int]] = []
    m = config.get("matrix")
    if m:
        rows += [(f"matrix row R{i} (diode cathodes)", "matrix", gp) for i, gp in enumerate(m["rows"])]
        rows += [(f"matrix column C{i} (reed switches)", "matrix", gp) for i, gp in enumerate(m["cols"])]
    s = config.get("shift_register")
    if s:
        rows += [("74HC165 PL (load), all chips", "shift_register", s["load"]), ("74HC165 CP (clock), all chips", "shift_register", s["clock"]),
                 ("74HC165 Q7 of the first chip", "shift_register", s["data"])]
    r = config.get("rfid")
    if r:
        rows += [("MFRC522 SCK, all readers", "rfid", r["sck"]), ("MFRC522 MOSI, all readers", "rfid", r["mosi"]),
                 ("MFRC522 MISO, all readers", "rfid", r["miso"])]
        sel = r.get("select") or {}
        if sel.get("kind") == "direct":
            rows += [(f"MFRC522 SDA (chip select) of reader {k}", "rfid", gp) for k, gp in enumerate(sel["pins"])]
        elif sel.get("kind") == "decoder":
            rows += [(f"decoder address bit {i}", "rfid", gp) for i, gp in enumerate(sel["address"])]
            rows.append(("decoder enable (low = the addressed reader selected)", "rfid", sel["enable"]))
        elif "cs" in r:
            rows += [(f"MFRC522 SDA (chip select) of reader {k}", "rfid", gp) for k, gp in enumerate(r["cs"])]
    lt = config.get("lights")
    if lt:
        rows.append(("station lights: WS2812 data, through the 74AHCT125 and 330 Ω to the first LED's DIN", "lights", lt["pin"]))
    out = ["| signal | used by | Pico GP | Pico pin |", "|---|---|---|---|"]
    out += [f"| {what} | {used} | GP{gp} | {pico_pin(gp)} |" for what, used, gp in rows]
    out.append(f"| ground | all | - | {', '.join(str(p) for p in PICO_GROUND_PINS)} |")
    out.append("| 3.3 V out (pull-ups, 74HC chips, a check-in pad's reader; not a reader per station) | all | - | 36 |")
    return "\n".join(out) + "\n"


def pin_plan() -> str:
    """The Pico's fixed pin assignments and the order the rest are given out in (hardware/README.md)."""
    from .build import PICO_165, PICO_POOL, PICO_SPI

    out = ["| signal | Pico GP | Pico pin |", "|---|---|---|"]
    out += [f"| MFRC522 {k.upper()} (SPI0), when the build has readers | GP{gp} | {pico_pin(gp)} |" for k, gp in PICO_SPI.items()]
    out += [f"| 74HC165 {'PL' if k == 'load' else 'CP' if k == 'clock' else 'Q7 of chip 0'}, on a shift-register build | GP{gp} | "
            f"{pico_pin(gp)} |" for k, gp in PICO_165.items()]
    out.append("| then matrix rows, matrix columns, decoder address bits, decoder enable (or a pad's chip select), in "
               f"this order of the pins left: {', '.join(f'GP{g}' for g in PICO_POOL)} | | |")
    return "\n".join(out) + "\n"


def generators() -> dict[str, Callable[[], str]]:
    """Every generated block hardware/README.md may hold, by name: one per shipped profile, the Pico, the BOMs."""
    from controller.sensing.profile import find_profile, profile_ids

    from . import bom, mechanics

    gens: dict[str, Callable[[], str]] = {f"profile:{pid}": (lambda pid=pid: profile_wiring(find_profile(pid))) for pid in profile_ids()}
    gens["pico"] = pin_plan
    gens["power"] = bom.power_markdown
    gens["bom-totals"] = bom.totals_markdown
    gens["mechanics"] = mechanics.mechanics_markdown
    return gens


def refresh_readme(text: str, gens: Mapping[str, Callable[[], str]] | None = None) -> str:
    """``text`` with every generated block rewritten from its generator (an unknown block name is an error)."""
    gens = generators() if gens is None else gens

    def fill(m: re.Match[str]) -> str:
        name = m.group("name")
        if name not in gens:
            raise WiringError(f"hardware/README.md: block 'generated:{name}': no such generator; known: {', '.join(sorted(gens))}")
        return m.group(1) + gens[name]() + m.group(4)

    return _BLOCK.sub(fill, text)


PROFILES_END = "### The Pico scanner"


def add_profile_sections(text: str) -> str:
    """``text`` with an (empty) wiring section added before the Pico's for every shipped profile it lacks."""
    from controller.rules import load_game
    from controller.sensing.profile import find_profile, profile_ids

    have = readme_blocks(text)
    missing = [pid for pid in profile_ids() if f"profile:{pid}" not in have]
    if not missing:
        return text
    if PROFILES_END not in text:
        raise WiringError(f"hardware/README.md: no '{PROFILES_END}' heading to put the wiring of {', '.join(missing)} before")
    sections = []
    for pid in missing:
        prof = find_profile(pid)
        game = load_game(prof.game)
        sections.append(f"### {game.name} ({game.zh}) — `hardware/profiles/{pid}.yaml`\n\n{prof.description or prof.name or pid}.\n\n"
                        f"<!-- generated:profile:{pid} -->\n<!-- /generated -->\n\n")
    at = text.index(PROFILES_END)
    return text[:at] + "".join(sections) + text[at:]


def readme_blocks(text: str) -> dict[str, str]:
    """The generated blocks of a README as they stand, by name."""
    return {m.group("name"): m.group("body") for m in _BLOCK.finditer(text)}
