"""The schematic generated from each profile: its nets say what the wiring tables say (read back from their Markdown),
its SVG carries exactly those nets, and the BOM buys every part it uses."""

from __future__ import annotations

import dataclasses
import math
import re
import sys
from collections import Counter

import pytest

from controller.cli import main
from controller.hardware import bom
from controller.hardware.build import BUILDS, BuildError, profile_for
from controller.hardware.chain import PIN_165
from controller.hardware.schematic import PINS, schematic, svg
from controller.hardware.wiring import profile_wiring
from controller.rules import game_ids
from controller.sensing.profile import find_profile, profile_ids


def _rows(table: str) -> list[list[str]]:
    return [[c.strip() for c in line.strip().strip("|").split("|")] for line in table.splitlines()
            if line.startswith("|") and not line.startswith("|---")]


def _facts_from_tables(profile) -> set[tuple]:  # noqa: ANN001
    """What the wiring tables say, as (kind, ...) facts."""
    text = profile_wiring(profile)
    rows = _rows(text)
    facts: set[tuple] = set()
    signal_pin: dict[str, str] = {}
    for r in rows:
        if len(r) == 4 and re.fullmatch(r"GP\d+", r[2]):  # the Pico's pin table
            signal_pin[r[0]] = r[3]
        if len(r) == 3 and re.fullmatch(r"GPIO\d+", r[1]):  # buzzer and LEDs on the Pi
            facts.add(("pi", r[0].split(" (")[0], r[2]))
        if len(r) == 4 and re.fullmatch(r"[RC]\d+", r[0]) and re.fullmatch(r"GPIO\d+", r[1]):  # a Pi matrix line
            facts |= {("line", r[0], "J1", r[2], s) for s in r[3].split(", ")}
    for what, pin in signal_pin.items():
        m = re.match(r"matrix (row|column) ([RC]\d+)", what)
        if m:
            facts.add(("pico", m.group(2), pin))
        for key, net in (("74HC165 PL", "PL"), ("74HC165 CP", "CP"), ("74HC165 Q7 of the first chip", "Q7_0"),
                         ("MFRC522 SCK", "SCK"), ("MOSI", "MOSI"), ("MISO", "MISO"), ("station lights", "LIGHTS_DATA_3V3"),
                         ("decoder enable", "ENABLE")):
            if what.startswith(key) or (key in ("MOSI", "MISO") and what.startswith(f"MFRC522 {key}")):
                facts.add(("pico", net, pin))
        m = re.match(r"decoder address bit (\d+)", what)
        if m:
            facts.add(("pico", f"ADDR{m.group(1)}", pin))
        m = re.match(r"MFRC522 SDA \(chip select\) of reader (\d+)", what)
        if m:
            facts.add(("pico", f"CS_{m.group(1)}", pin))
    grid_cols: list[str] = []
    for r in rows:
        if len(r) > 2 and r[0] == "row" and r[1] == "Pico GP":
            grid_cols = [c.split(" ")[0] for c in r[2:]]
        elif grid_cols and re.fullmatch(r"R\d+", r[0]) and r[1].startswith("GP") and len(r) == len(grid_cols) + 2:
            for c, s in zip(grid_cols, r[2:], strict=True):
                if s != "-":
                    facts |= {("station", s, r[0]), ("station", s, c)}
        if len(r) == 9 and r[0].isdigit():  # a 74HC165's eight inputs
            facts |= {("input", int(r[0]), letter, s) for letter, s in zip("ABCDEFGH", r[1:], strict=True) if s != "spare"}
        if len(r) == 4 and r[0].isdigit() and r[2].startswith("Y"):  # reader k on decoder output
            facts.add(("reader", int(r[0]), r[1], r[2], r[3]))
        m = re.fullmatch(r"(\d+)-(\d+)", r[0]) if len(r) == 2 else None
        if m:
            for k, s in zip(range(int(m.group(1)), int(m.group(2)) + 1), r[1].split(", "), strict=True):
                facts.add(("led", k, s))
    m = re.search(r"a 74HC125 at chip (\d+) re-drives PL and CP for chips (\d+)-(\d+) \(chips 0-(\d+) take them", text)
    if m:
        facts |= {("redriven", k) for k in range(int(m.group(2)), int(m.group(3)) + 1)}
        facts |= {("from the pico", k) for k in range(int(m.group(4)) + 1)}
        tied = text[m.end():].split(")")[0]
        for names, to in re.findall(r"(?:unused )?([0-9A-Z/]+) to (ground|3\.3 V)", tied):
            facts |= {("tied", "U_RD", n, {"ground": "GND", "3.3 V": "3V3"}[to]) for n in names.split("/")}
    elif re.search(r"74HC165 chain", text):
        facts |= {("from the pico", k) for k in range(len([r for r in rows if len(r) == 9 and r[0].isdigit()]))}
    m = re.search(r"-> 74AHCT125 in a DIP-14 socket \((.*?)\) -> 1Y \(pin 3\)", text)
    if m:
        inside = m.group(1)
        for name, pin, to in re.findall(r"(\w+) pin (\d+)( in| to ground| to 5 V|[;,)]|$)", inside):
            net = {" to ground": "GND", " to 5 V": "5V_LIGHTS", " in": "LIGHTS_DATA_3V3"}.get(to, name)
            facts.add(("buffer pin", name, pin, net))
        for names, pins, to in re.findall(r"((?:\w+, )*\w+) \(pins ([\d, ]+)\) to (ground|5 V)", inside):
            for name, pin in zip(names.split(", "), pins.split(", "), strict=True):
                facts.add(("buffer pin", name, pin, {"ground": "GND", "5 V": "5V_LIGHTS"}[to]))
        facts.add(("buffer pin", "1Y", "3", "LIGHTS_DATA_5V"))
    return facts


def _facts_from_schematic(profile) -> set[tuple]:  # noqa: ANN001
    sch = schematic(profile)
    nets, parts = sch.nets, sch.parts
    facts: set[tuple] = set()
    pi_names = {"BUZZER": "buzzer +", **{f"LED_{n.upper()}": f"LED {n}" for n in profile.pins.leds}}
    if profile.lights is not None and profile.lights.kind == "gpio":
        pi_names |= {f"LIGHT_{st}": st for st in profile.lights.pins}
    for net, what in pi_names.items():
        facts |= {("pi", what, pin) for ref, pin in nets.get(net, ()) if ref == "J1"}
    for net, members in nets.items():
        if re.fullmatch(r"[RC]\d+", net):
            for ref, pin in members:
                if ref == "J1":
                    stations = sorted(r.split("_", 1)[1] for r, p in members if (r.startswith("D_") and p == "K")
                                      or (r.startswith("SW_") and p == "1"))
                    facts |= {("line", net, "J1", pin, s) for s in stations}
                if ref == "U1":
                    facts.add(("pico", net, pin))
            for ref, p in members:
                if profile.scanner is not None and ((ref.startswith("D_") and p == "K") or (ref.startswith("SW_") and p == "1")):
                    facts.add(("station", ref[2:] if ref.startswith("D_") else ref[3:], net))
    for net in ("PL", "CP", "Q7_0", "SCK", "MOSI", "MISO", "LIGHTS_DATA_3V3", "ENABLE", *(f"ADDR{i}" for i in range(8))):
        here = net if net not in ("PL", "CP") else f"{net}_PICO"
        facts |= {("pico", net, pin) for ref, pin in nets.get(here, ()) if ref == "U1"}
    for net, members in nets.items():
        m = re.fullmatch(r"CS_(\d+)", net)
        if m and any(ref == "U1" for ref, _ in members):
            facts |= {("pico", net, pin) for ref, pin in members if ref == "U1"}
        if m and not any(ref == "U1" for ref, _ in members):
            k = int(m.group(1))
            station = parts[f"RD{k}"].value.split(" under ")[1]
            for ref, pin in members:
                if ref.startswith("DEC"):
                    kind = parts[ref].value
                    out = next(n for n, p in PINS[kind].items() if str(p) == pin)
                    chip = "138" if kind == "74HC138" else f"154#{int(ref[3:])}"
                    facts.add(("reader", k, chip, out, station))
        m = re.fullmatch(r"IN_(\d+)([A-H])", net)
        if m:
            k, letter = int(m.group(1)), m.group(2)
            assert (f"SR{k}", str(PIN_165[letter])) in members, f"{net} not on its chip's pin"
            facts |= {("input", k, letter, ref[3:]) for ref, p in members if ref.startswith("SW_")}
    for ref, part in parts.items():
        m = re.fullmatch(r"LED_(\d+)", ref)
        if m:
            facts.add(("led", int(m.group(1)), part.value.split(" under ")[1] if " under " in part.value else "(none)"))
    if "PL" in nets:  # every chip on the load and clock lines, through the series resistors (and the re-driver)
        for ref, part in parts.items():
            if part.value == "74HC165":
                load, clock = part.pins["1"], part.pins["2"]
                assert (load, clock) in (("PL", "CP"), ("PL_B", "CP_B")), (ref, load, clock)
                facts.add(("redriven" if load == "PL_B" else "from the pico", int(ref[2:])))
        assert ("RS1", "1") in nets["PL_PICO"] and ("RS1", "2") in nets["PL"]
    if "U_RD" in parts:
        rd = parts["U_RD"].pins
        assert (rd["2"], rd["3"], rd["5"], rd["6"]) == ("PL", "PL_B", "CP", "CP_B"), rd
        by_number = {str(n): name for name, n in PINS["74HC125"].items()}
        facts |= {("tied", "U_RD", by_number[pin], net) for pin, net in rd.items() if net in ("GND", "3V3")
                  and by_number[pin] not in ("GND", "VCC")}
    if "U2" in parts:
        by_number = {str(n): name for name, n in PINS["74HC125"].items()}
        facts |= {("buffer pin", by_number[pin], pin, net) for pin, net in parts["U2"].pins.items()
                  if by_number[pin] not in ("2Y", "3Y", "4Y")}
    return facts


def _every_build() -> list:
    """The shipped profiles, and the profile `facedown firmware profile GAME --build B` writes for every game and build
    that has none shipped (the BOM's totals table prices those too)."""
    out = [find_profile(p) for p in profile_ids()]
    for g in game_ids():
        for build in BUILDS:
            try:
                prof = profile_for(g, build)
            except BuildError:
                continue
            if str(prof.file).startswith("generated/"):
                out.append(prof)
    return out


@pytest.mark.parametrize("profile", _every_build(), ids=lambda p: f"{p.id}-{p.file.rsplit('/', 1)[-1]}")
def test_the_schematics_nets_equal_the_wiring_tables(profile) -> None:  # noqa: ANN001
    tables, drawn = _facts_from_tables(profile), _facts_from_schematic(profile)
    assert tables, "the tables were read"
    assert tables == drawn, (sorted(tables - drawn)[:8], sorted(drawn - tables)[:8])


def test_gpio_station_lights_are_on_the_schematic_and_in_the_bom() -> None:
    import dataclasses

    from controller.sensing.profile import Lights

    prof = find_profile("luzhanqi")
    lit = dataclasses.replace(prof, lights=Lights(kind="gpio", pins={"A0": 14, "A1": 15}))
    assert _facts_from_tables(lit) == _facts_from_schematic(lit)
    assert ("J1", "8") in schematic(lit).nets["LIGHT_A0"]
    used = Counter(part.bom for part in schematic(lit).parts.values())
    bill = bom.bill_for(lit)
    assert all(sum(ln.quantity for ln in bill.lines if ln.part.name.startswith(p)) >= n for p, n in used.items())


def _bought(bill, prefix: str) -> list:  # noqa: ANN001
    return [line for line in bill.lines if line.part.name.startswith(prefix)]


@pytest.mark.parametrize("profile", _every_build(), ids=lambda p: f"{p.id}-{p.file.rsplit('/', 1)[-1]}")
def test_the_schematic_and_the_bom_list_the_same_parts(profile) -> None:  # noqa: ANN001
    """Both ways: each part the schematic draws is bought (as many, plus the stated spares), and each part of the
    circuit the BOM buys is drawn: wire, boards, sockets and holders are the only lines left off."""
    bill = bom.bill_for(profile)
    used = Counter(part.bom for part in schematic(profile).parts.values())
    for prefix, count in used.items():
        lines = _bought(bill, prefix)
        assert lines, f"{profile.id}: the schematic uses {count} x {prefix!r}, the BOM has none"
        assert all(ln.part.drawn for ln in lines), f"{prefix!r} matches a line the BOM says is not drawn"
        spare = max(ln.part.spare for ln in lines)
        want = math.ceil(round(count * (1 + spare), 6))
        assert sum(ln.quantity for ln in lines) == want, f"{profile.id}: {count} x {prefix!r} drawn, BOM {lines}"
    for line in bill.lines:
        if line.part.drawn:
            assert any(line.part.name.startswith(p) for p in used), f"{profile.id}: the BOM buys {line.part.name!r}, " \
                                                                     "the schematic never draws it"


def test_the_two_way_check_fails_on_a_part_left_off_either_side(monkeypatch) -> None:  # noqa: ANN001
    """A schematic without the LED data re-driver, or a BOM without its 100 nF, is caught."""
    from controller.hardware import schematic as sch_mod

    profile = find_profile("stratego-pico")
    real = sch_mod.schematic

    def without_buffer(p):  # noqa: ANN001, ANN202
        sch = real(p)
        del sch.parts["U2"]
        return sch

    monkeypatch.setattr(sys.modules[__name__], "schematic", without_buffer)
    with pytest.raises(AssertionError, match="never draws it"):
        test_the_schematic_and_the_bom_list_the_same_parts(profile)
    monkeypatch.setattr(sys.modules[__name__], "schematic", real)
    bill = bom.bill_for(profile)
    short = dataclasses.replace(bill, lines=tuple(ln for ln in bill.lines if "74AHCT125's VCC" not in ln.part.name))
    monkeypatch.setattr(bom, "bill_for", lambda p: short)
    with pytest.raises(AssertionError, match="Capacitor 100 nF"):
        test_the_schematic_and_the_bom_list_the_same_parts(profile)


@pytest.mark.parametrize("pid", ["stratego-pico", "siguo", "luzhanqi-rfid"])
def test_the_builds_support_parts_are_drawn(pid: str) -> None:
    """What the builds lean on is on the page: the lights' buffer with its 100 nF and tied gates, the chain's
    re-driver, each hub's decoder, buffer and bulk capacitor, every chip's 100 nF, and each supply with its fuse."""
    sch = schematic(find_profile(pid))
    chips = [r for r, p in sch.parts.items() if p.value.startswith("74")]
    assert chips and all(f"C_{r}" in sch.parts for r in chips), [r for r in chips if f"C_{r}" not in sch.parts]
    for ref in chips:  # no floating input on any logic chip
        kind = "74HC125" if sch.parts[ref].value == "74AHCT125" else sch.parts[ref].value
        inputs = {"74HC125": ("1A", "2A", "3A", "4A", "1OE", "2OE", "3OE", "4OE"), "74HC165": ("PL", "CP", "CE", "DS"),
                  "74HC154": ("A", "B", "C", "D", "G1", "G2"), "74HC138": ("A", "B", "C", "G1", "G2A", "G2B")}[kind]
        assert all(str(PINS[kind][i]) in sch.parts[ref].pins for i in inputs), (ref, sch.parts[ref].pins)
    supplies = [r for r in sch.parts if r.startswith("PS") and r != "PS1"]
    assert bool(supplies) == (pid != "siguo"), "lights and readers have a supply of their own; siguo's chain runs on the Pico's 3.3 V"
    fused = {net for r, p in sch.parts.items() if r.startswith("F") for net in p.pins.values()}
    assert all(sch.parts[r].pins["+"] in fused for r in supplies), "each supply of its own goes through a fuse"
    if pid == "stratego-pico":
        u2 = sch.parts["U2"].pins
        assert u2["2"] == "LIGHTS_DATA_3V3" and u2["1"] == "GND" and {u2[p] for p in ("5", "9", "12")} == {"GND"}
        assert {u2[p] for p in ("4", "10", "13")} == {"5V_LIGHTS"}
    if pid == "siguo":
        assert "U_RD" in sch.parts and ("SR16", "1") in sch.nets["PL_B"] and ("SR0", "1") in sch.nets["PL"]
    if pid == "luzhanqi-rfid":
        assert {f"BUF{g}" for g in range(4)} <= set(sch.parts) and "BUCK1" in sch.parts
        assert sum(1 for r in sch.parts if r.startswith("C_HUB")) == 4
        assert sch.parts["RD17"].pins["SCK"] == "SCK_1" and ("BUF1", "3") in sch.nets["SCK_1"]


def test_the_svg_carries_every_net_and_pin_and_the_command_writes_it(tmp_path, capsys) -> None:  # noqa: ANN001
    profile = find_profile("siguo")
    sch = schematic(profile)
    page = svg(sch)
    drawn = {m.group(1): set(m.group(2).split()) for m in re.finditer(r'<g class="net" data-net="([^"]+)" data-pins="([^"]*)"/>', page)}
    assert drawn == {n: {f"{r}.{p}" for r, p in members} for n, members in sch.nets.items()}
    assert page.count('<g class="pin"') == sum(len(p.pins) for p in sch.parts.values())
    out = tmp_path / "sch.svg"
    assert main(["print-board", "--profile", "siguo", "--schematic", "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == page and "314 parts" in capsys.readouterr().out
    assert main(["print-board", "siguo", "--no-profile", "--schematic", "--out", str(out)]) == 2
