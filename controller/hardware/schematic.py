"""A board's schematic, generated from its hardware profile: the netlist (every part, every pin, every net) and an
SVG drawing of it in the net-label style (each pin ends in the name of its net; pins with the same name are joined).

Parts and pins come from the same build design as the wiring tables and config.json (controller/hardware/build.py),
so the schematic's nets and the wiring tables agree (a test checks it for every profile), and every part it uses is
in the BOM (``Part.bom`` names the BOM line). Pin numbers are the parts' own: the Raspberry Pi's header pins, the
Pico's physical pins, 74HC165 / 74HC125 / 74HC154 / 74HC138 DIP pins (``PINS``), WS2812 and reed pins by name.

>>> from controller.sensing.profile import find_profile
>>> sch = schematic(find_profile("luzhanqi"))
>>> sorted(sch.nets["R0"])[:3]
[('D_A0', 'K'), ('D_A1', 'K'), ('D_A2', 'K')]
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from xml.sax.saxutils import escape, quoteattr

from .chain import INPUT_NAMES, PIN_165

#: DIP pin numbers of the logic chips (maker datasheets: Nexperia, TI).
PINS: dict[str, dict[str, int]] = {
    "74HC165": PIN_165,
    "74HC125": {"1OE": 1, "1A": 2, "1Y": 3, "2OE": 4, "2A": 5, "2Y": 6, "GND": 7, "3Y": 8, "3A": 9, "3OE": 10, "4Y": 11,
                "4A": 12, "4OE": 13, "VCC": 14},
    "74HC154": {**{f"Y{i}": i + 1 for i in range(11)}, "GND": 12, **{f"Y{i}": i + 2 for i in range(11, 16)}, "G1": 18,
                "G2": 19, "D": 20, "C": 21, "B": 22, "A": 23, "VCC": 24},
    "74HC138": {"A": 1, "B": 2, "C": 3, "G2A": 4, "G2B": 5, "G1": 6, "Y7": 7, "GND": 8, "Y6": 9, "Y5": 10, "Y4": 11,
                "Y3": 12, "Y2": 13, "Y1": 14, "Y0": 15, "VCC": 16},
}


@dataclass
class Part:
    """One part on the schematic: its reference, what it is, and the BOM line (name prefix) it is bought as."""

    ref: str
    value: str
    bom: str
    pins: dict[str, str] = field(default_factory=dict)  # pin -> net


@dataclass
class Schematic:
    """Parts and nets: ``nets`` maps a net's name to its (part, pin) pairs."""

    title: str
    parts: dict[str, Part] = field(default_factory=dict)
    nets: dict[str, set[tuple[str, str]]] = field(default_factory=dict)

    def add(self, ref: str, value: str, bom: str, **pins: str) -> Part:
        part = self.parts.setdefault(ref, Part(ref, value, bom))
        for pin, net in pins.items():
            self.connect(ref, pin, net)
        return part

    def connect(self, ref: str, pin: str | int, net: str) -> None:
        pin = str(pin)
        self.parts[ref].pins[pin] = net
        self.nets.setdefault(net, set()).add((ref, pin))


def _chip(sch: Schematic, ref: str, kind: str, bom: str, nets: Mapping[str, str]) -> None:
    sch.add(ref, kind, bom)
    for name, net in nets.items():
        sch.connect(ref, PINS[kind][name], net)


def schematic(profile: Any) -> Schematic:
    """The schematic of ``profile``'s board."""
    from controller.rules import load_game

    from .build import design, firmware_config
    from .wiring import header_pin, pico_pin

    d = design(profile)
    game = load_game(profile.game)
    sch = Schematic(title=f"{game.name} — {profile.name or profile.id} ({d.build})")
    sch.add("J1", "Raspberry Pi 4: 40-pin header, USB-C in", "Raspberry Pi 4", **{"USB-C": "5V_PI", "2": "5V_PI",
                                                                                   "4": "5V_PI"})
    for gnd in (6, 9, 14, 20, 25, 30, 34, 39):
        sch.connect("J1", gnd, "GND_PI")
    pi_rail = d.rails[0]
    sch.add("PS1", "the Pi's USB-C supply", pi_rail.supply, **{"+": "5V_PI", "-": "GND_PI"})
    if profile.pins.buzzer is not None:
        sch.add("BZ1", "passive buzzer module", "Passive piezo buzzer", **{"+": "BUZZER", "-": "GND_PI"})
        sch.connect("J1", header_pin(profile.pins.buzzer), "BUZZER")
    for k, (name, pin) in enumerate(profile.pins.leds.items(), start=1):
        sch.add(f"LED{k}", f"LED {name}", "LED, 5 mm", A=f"LED_{name.upper()}_A", K="GND_PI")
        sch.add(f"R{k}", "330 ohm", "Resistor 330 ohm", **{"1": f"LED_{name.upper()}", "2": f"LED_{name.upper()}_A"})
        sch.connect("J1", header_pin(pin), f"LED_{name.upper()}")
    lt = profile.lights
    if lt is not None and lt.kind == "gpio":
        for st, pin in lt.pins.items():
            sch.add(f"LS_{st}", f"station LED {st}", "LED, 3 mm", A=f"LIGHT_{st}_A", K="GND_PI")
            sch.add(f"RL_{st}", "330 ohm", "Resistor 330 ohm", **{"1": f"LIGHT_{st}", "2": f"LIGHT_{st}_A"})
            sch.connect("J1", header_pin(pin), f"LIGHT_{st}")
    if profile.scanner is None:
        for s, (r, c) in profile.channels.items():
            sch.add(f"SW_{s}", "reed switch", "Reed switch", **{"1": f"C{c}", "2": f"N_{s}"})
            sch.add(f"D_{s}", "1N4148", "Diode 1N4148", A=f"N_{s}", K=f"R{r}")
        for r, pin in enumerate(profile.pins.rows):
            sch.connect("J1", header_pin(pin), f"R{r}")
        for c, pin in enumerate(profile.pins.columns):
            sch.connect("J1", header_pin(pin), f"C{c}")
        return sch
    cfg = firmware_config(d)
    sch.add("U1", "Raspberry Pi Pico (RP2040)", "Raspberry Pi Pico", **{"36": "3V3", "USB": "USB_PICO"})
    for gnd in (3, 8, 13, 18, 23, 28, 33, 38):
        sch.connect("U1", gnd, "GND")
    sch.connect("J1", "USB-A", "USB_PI")
    sch.add("CN1", "USB cable to the Pi (power and data)", "USB-A to micro-USB", A="USB_PI", B="USB_PICO")
    if d.pico_matrix:
        cols = d.pico_matrix[1]
        for s, ch in profile.channels.items():
            r, c = divmod(ch, cols)
            sch.add(f"SW_{s}", "reed switch", "Reed switch", **{"1": f"C{c}", "2": f"N_{s}"})
            sch.add(f"D_{s}", "1N4148", "Diode 1N4148", A=f"N_{s}", K=f"R{r}")
        for r, gp in enumerate(cfg["matrix"]["rows"]):
            sch.connect("U1", pico_pin(gp), f"R{r}")
        for c, gp in enumerate(cfg["matrix"]["cols"]):
            sch.connect("U1", pico_pin(gp), f"C{c}")
    if d.chips_165:
        _chain(sch, profile, d, cfg, pico_pin)
    if d.readers:
        _readers(sch, profile, d, cfg, pico_pin)
    if lt is not None and lt.kind == "ws2812":
        sch.connect("U1", pico_pin(lt.pin), "LIGHTS_DATA_3V3")
        _chip(sch, "U2", "74HC125", "74AHCT125", {"1OE": "GND", "1A": "LIGHTS_DATA_3V3", "1Y": "LIGHTS_DATA_5V",
                                                 "2OE": "5V_LIGHTS", "2A": "GND", "3OE": "5V_LIGHTS", "3A": "GND",
                                                 "4OE": "5V_LIGHTS", "4A": "GND", "VCC": "5V_LIGHTS", "GND": "GND"})
        sch.parts["U2"].value = "74AHCT125"
        sch.add("C_U2", "100 nF", "Capacitor 100 nF", **{"1": "5V_LIGHTS", "2": "GND"})
        sch.add("R_DATA", "330 ohm", "Resistor 330 ohm", **{"1": "LIGHTS_DATA_5V", "2": "DIN_0"})
        sch.add("C_BULK", "1000 uF 10 V", "Electrolytic capacitor 1000 uF", **{"+": "5V_LIGHTS", "-": "GND"})
        rail = next(r for r in d.rails if r.name.startswith("lights"))
        sch.add("PS2", "the lights' 5 V supply", rail.supply, **{"+": "5V_LIGHTS_JACK", "-": "GND"})
        sch.add("J2", "barrel jack, lights' 5 V", "DC barrel jack socket", **{"+": "5V_LIGHTS_JACK", "-": "GND"})
        sch.add("F1", "fuse, lights' 5 V", "Inline fuse holder", **{"1": "5V_LIGHTS_JACK", "2": "5V_LIGHTS"})
        for k, st in enumerate(lt.chain):
            sch.add(f"LED_{k}", "addressable LED" + (f" under {st}" if st else " (no station)"), "Addressable RGB LED",
                    DIN=f"DIN_{k}", DOUT=f"DIN_{k + 1}" if k + 1 < lt.count else "DOUT_LAST", VDD="5V_LIGHTS", GND="GND")
            sch.add(f"C_LED_{k}", "100 nF", "Capacitor 100 nF", **{"1": "5V_LIGHTS", "2": "GND"})
    return sch


def _chain(sch: Schematic, profile: Any, d: Any, cfg: Mapping[str, Any], pico_pin: Any) -> None:
    from .chain import SERIES_OHMS, chain_plan

    sr = cfg["shift_register"]
    sch.connect("U1", pico_pin(sr["load"]), "PL_PICO")
    sch.connect("U1", pico_pin(sr["clock"]), "CP_PICO")
    sch.connect("U1", pico_pin(sr["data"]), "Q7_0")
    sch.add("RS1", f"{SERIES_OHMS} ohm", f"Resistor {SERIES_OHMS} ohm", **{"1": "PL_PICO", "2": "PL"})
    sch.add("RS2", f"{SERIES_OHMS} ohm", f"Resistor {SERIES_OHMS} ohm", **{"1": "CP_PICO", "2": "CP"})
    by_channel = {ch: s for s, ch in profile.channels.items()}
    chips = d.chips_165
    plan = chain_plan(profile, d.pitch)
    after = plan.buffer_at if plan.buffer_at is not None else chips
    if plan.buffered:  # gates 1 and 2 re-drive PL and CP for the chips after chip ``after``; gates 3 and 4 unused
        _chip(sch, "U_RD", "74HC125", "74HC125", {"1OE": "GND", "1A": "PL", "1Y": "PL_B", "2OE": "GND", "2A": "CP",
                                                  "2Y": "CP_B", "3A": "GND", "3OE": "3V3", "4A": "GND", "4OE": "3V3",
                                                  "VCC": "3V3", "GND": "GND"})
        sch.add("C_U_RD", "100 nF", "Capacitor 100 nF", **{"1": "3V3", "2": "GND"})
    for k in range(chips):
        ref = f"SR{k}"
        load, clock = ("PL", "CP") if k <= after else ("PL_B", "CP_B")
        nets = {"PL": load, "CP": clock, "CE": "GND", "GND": "GND", "VCC": "3V3", "Q7": f"Q7_{k}",
                "DS": f"Q7_{k + 1}" if k + 1 < chips else "GND"}
        for letter in INPUT_NAMES:
            nets[letter] = f"IN_{k}{letter}"
        _chip(sch, ref, "74HC165", "74HC165", nets)
        sch.add(f"C_SR{k}", "100 nF", "Capacitor 100 nF", **{"1": "3V3", "2": "GND"})
        for i, letter in enumerate(INPUT_NAMES):
            sch.add(f"RP{k}_{letter}", "10 kOhm", "Resistor 10 kOhm", **{"1": "3V3", "2": f"IN_{k}{letter}"})
            s = by_channel.get(k * 8 + i)
            if s is not None:
                sch.add(f"SW_{s}", "reed switch", "Reed switch", **{"1": f"IN_{k}{letter}", "2": "GND"})


def _readers(sch: Schematic, profile: Any, d: Any, cfg: Mapping[str, Any], pico_pin: Any) -> None:
    rf = cfg["rfid"]
    for sig in ("sck", "mosi", "miso"):
        sch.connect("U1", pico_pin(rf[sig]), sig.upper())
    sel = rf["select"]
    from .chain import reader_stations

    names = reader_stations(profile) if d.readers > 1 else ["PAD"]
    dec = d.decoder
    hubs = dec.groups if dec is not None and dec.groups > 1 else 0  # hubs with their own SPI buffer
    power = "3V3" if d.readers == 1 else "3V3_READERS"
    for k in range(d.readers):
        spi = {s: (f"{s}_{k // 16}" if hubs else s) for s in ("SCK", "MOSI", "MISO")}
        sch.add(f"RD{k}", f"RC522 reader {k}" + (f" under {names[k]}" if d.readers > 1 else " (check-in pad)"), "RC522",
                GND="GND", SDA=f"CS_{k}", **spi, **{"3.3V": power, "RST": power})
    if sel["kind"] == "direct":
        for k, gp in enumerate(sel["pins"]):
            sch.connect("U1", pico_pin(gp), f"CS_{k}")
        return
    for i, gp in enumerate(sel["address"]):
        sch.connect("U1", pico_pin(gp), f"ADDR{i}")
    sch.connect("U1", pico_pin(sel["enable"]), "ENABLE")
    _reader_power(sch, d)

    def bypass(ref: str) -> None:
        sch.add(f"C_{ref}", "100 nF", "Capacitor 100 nF", **{"1": "3V3", "2": "GND"})

    if dec.groups == 0:
        nets = {"A": "ADDR0", "B": "ADDR1" if dec.address_bits > 1 else "GND", "C": "ADDR2" if dec.address_bits > 2 else "GND",
                "G2A": "ENABLE", "G2B": "GND", "G1": "3V3", "VCC": "3V3", "GND": "GND"}
        nets |= {f"Y{k}": f"CS_{k}" for k in range(d.readers)}
        _chip(sch, "DEC0", "74HC138", "74HC138", nets)
        bypass("DEC0")
        _hub_bulk(sch, 1)
        return
    for g in range(dec.groups):
        nets = {"A": "ADDR0", "B": "ADDR1", "C": "ADDR2", "D": "ADDR3", "G1": "ENABLE",
                "G2": f"GROUP_{g}" if dec.groups > 1 else "GND", "VCC": "3V3", "GND": "GND"}
        nets |= {f"Y{k}": f"CS_{g * 16 + k}" for k in range(16) if g * 16 + k < d.readers}
        _chip(sch, f"DEC{g}", "74HC154", "74HC154", nets)
        bypass(f"DEC{g}")
        if hubs:  # the hub's SPI buffer: SCK and MOSI out always, MISO back only while the hub is selected
            _chip(sch, f"BUF{g}", "74HC125", "74HC125", {
                "1A": "SCK", "1Y": f"SCK_{g}", "1OE": "GND", "2A": "MOSI", "2Y": f"MOSI_{g}", "2OE": "GND",
                "3A": f"MISO_{g}", "3Y": "MISO", "3OE": f"GROUP_{g}", "4A": "GND", "4OE": "3V3", "VCC": "3V3", "GND": "GND"})
            bypass(f"BUF{g}")
    _hub_bulk(sch, max(1, dec.groups))
    if dec.groups > 1:
        high = dec.address_bits - 4
        kind = dec.top
        ins = "ABC" if kind == "74HC138" else "ABCD"
        nets = {ins[i]: (f"ADDR{4 + i}" if i < high else "GND") for i in range(len(ins))}
        nets |= {f"Y{g}": f"GROUP_{g}" for g in range(dec.groups)}
        nets |= {"VCC": "3V3", "GND": "GND"}
        nets |= {"G1": "3V3", "G2A": "GND", "G2B": "GND"} if kind == "74HC138" else {"G1": "GND", "G2": "GND"}
        _chip(sch, "DEC_TOP", kind, kind, nets)
        bypass("DEC_TOP")


def _hub_bulk(sch: Schematic, hubs: int) -> None:
    """Each hub's 470 uF on the readers' 3.3 V, where its power wires arrive."""
    for g in range(hubs):
        sch.add(f"C_HUB{g}", "470 uF", "Electrolytic capacitor 470 uF", **{"+": "3V3_READERS", "-": "GND"})


def _reader_power(sch: Schematic, d: Any) -> None:
    """The readers' own 5 V supply, its barrel jack and fuse, and the buck converter to their 3.3 V."""
    five = next(r for r in d.rails if r.name.startswith("readers 5"))
    buck = next(r for r in d.rails if r.name.startswith("readers 3.3"))
    sch.add("PS3", "the readers' 5 V supply", five.supply, **{"+": "5V_READERS_JACK", "-": "GND"})
    sch.add("J3", "barrel jack, readers' 5 V", "DC barrel jack socket", **{"+": "5V_READERS_JACK", "-": "GND"})
    sch.add("F2", "fuse, readers' 5 V", "Inline fuse holder", **{"1": "5V_READERS_JACK", "2": "5V_READERS"})
    sch.add("BUCK1", "buck converter 5 V to 3.3 V", buck.supply, **{"IN+": "5V_READERS", "IN-": "GND",
                                                                    "OUT+": "3V3_READERS", "OUT-": "GND"})


# ---------------------------------------------------------------------------------------------------- drawing
def svg(sch: Schematic) -> str:
    """The schematic as an SVG page: each part a box with its pins, each pin a stub ending in its net's name."""
    cell_w, pin_h = 62.0, 4.2
    cols = 6
    x = y = 0.0
    row_h = 0.0
    body: list[str] = []
    for k, part in enumerate(sch.parts.values()):
        pins = list(part.pins.items())
        h = 10 + pin_h * max(1, len(pins))
        if k % cols == 0 and k:
            x, y, row_h = 0.0, y + row_h + 6, 0.0
        row_h = max(row_h, h)
        bx, by = 10 + x * cell_w, 24 + y
        body.append(f'<g class="part" data-ref={quoteattr(part.ref)} data-bom={quoteattr(part.bom)}>'
                    f'<rect x="{bx + 22:.1f}" y="{by:.1f}" width="22" height="{h:.1f}" fill="#ffffff" stroke="#000" '
                    f'stroke-width="0.3"/><text x="{bx + 33:.1f}" y="{by + 3.5:.1f}" font-size="2.4" text-anchor="middle">'
                    f'{escape(part.ref)}</text><text x="{bx + 33:.1f}" y="{by + 6.5:.1f}" font-size="1.6" '
                    f'text-anchor="middle">{escape(part.value[:22])}</text>')
        for i, (pin, net) in enumerate(sorted(pins, key=lambda p: (len(p[0]), p[0]))):
            py = by + 10 + i * pin_h
            body.append(f'<g class="pin" data-pin={quoteattr(pin)} data-net={quoteattr(net)}>'
                        f'<path d="M{bx + 22:.1f},{py:.1f}H{bx + 14:.1f}" stroke="#000" stroke-width="0.25"/>'
                        f'<text x="{bx + 21.5:.1f}" y="{py - 0.6:.1f}" font-size="1.5" text-anchor="end">{escape(pin)}</text>'
                        f'<text x="{bx + 13.5:.1f}" y="{py + 0.6:.1f}" font-size="1.8" text-anchor="end" fill="#a0001c">'
                        f'{escape(net)}</text></g>')
        body.append("</g>")
        x += 1
    w, h = 10 + cols * cell_w, 30 + y + row_h
    nets = "".join(f'<g class="net" data-net={quoteattr(n)} data-pins={quoteattr(" ".join(f"{r}.{p}" for r, p in sorted(m)))}/>'
                   for n, m in sorted(sch.nets.items()))
    return (f'<svg xmlns="http://www.w3.org/2000/svg" width="{w:.0f}mm" height="{h:.0f}mm" viewBox="0 0 {w:.0f} {h:.0f}" '
            f'font-family="sans-serif"><title>{escape(sch.title)}</title>'
            f'<text x="10" y="12" font-size="5">Schematic · {escape(sch.title)}</text>'
            f'<text x="10" y="18" font-size="2.6">Pins with the same red net name are joined. Generated by '
            f'`facedown print-board --schematic` from the profile; the wiring tables are made from the same design.</text>'
            f'<g class="netlist">{nets}</g>{"".join(body)}</svg>\n')
