"""The schematic generated from each profile: its nets say what the wiring tables say (read back from their Markdown),
its SVG carries exactly those nets, and the BOM buys every part it uses."""

from __future__ import annotations

import re
from collections import Counter

import pytest

from controller.cli import main
from controller.hardware import bom
from controller.hardware.chain import PIN_165
from controller.hardware.schematic import PINS, schematic, svg
from controller.hardware.wiring import profile_wiring
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
                if ref.startswith("U") and ref != "U1":
                    kind = parts[ref].value
                    out = next(n for n, p in PINS[kind].items() if str(p) == pin)
                    chip = "138" if kind == "74HC138" else f"154#{int(ref[1:]) - 3}"
                    facts.add(("reader", k, chip, out, station))
        m = re.fullmatch(r"IN_(\d+)([A-H])", net)
        if m:
            k, letter = int(m.group(1)), m.group(2)
            assert (f"U{10 + k}", str(PIN_165[letter])) in members, f"{net} not on its chip's pin"
            facts |= {("input", k, letter, ref[3:]) for ref, p in members if ref.startswith("SW_")}
    for ref, part in parts.items():
        m = re.fullmatch(r"LED_(\d+)", ref)
        if m:
            facts.add(("led", int(m.group(1)), part.value.split(" under ")[1] if " under " in part.value else "(none)"))
    if "PL" in nets:  # every chip on the load and clock lines, through the series resistors
        chips = [r for r, p in parts.items() if p.value == "74HC165"]
        assert {(c, "1") for c in chips} <= nets["PL"] and {(c, "2") for c in chips} <= nets["CP"]
        assert ("RS1", "1") in nets["PL_PICO"] and ("RS1", "2") in nets["PL"]
    return facts


@pytest.mark.parametrize("pid", profile_ids())
def test_the_schematics_nets_equal_the_wiring_tables(pid: str) -> None:
    profile = find_profile(pid)
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


@pytest.mark.parametrize("pid", profile_ids())
def test_the_bom_buys_every_part_the_schematic_uses(pid: str) -> None:
    profile = find_profile(pid)
    bill = bom.bill_for(profile)
    used = Counter(part.bom for part in schematic(profile).parts.values())
    for prefix, count in used.items():
        have = sum(line.quantity for line in bill.lines if line.part.name.startswith(prefix))
        assert have >= count, f"{pid}: the schematic uses {count} x {prefix!r}, the BOM has {have}"


def test_the_svg_carries_every_net_and_pin_and_the_command_writes_it(tmp_path, capsys) -> None:  # noqa: ANN001
    profile = find_profile("siguo")
    sch = schematic(profile)
    page = svg(sch)
    drawn = {m.group(1): set(m.group(2).split()) for m in re.finditer(r'<g class="net" data-net="([^"]+)" data-pins="([^"]*)"/>', page)}
    assert drawn == {n: {f"{r}.{p}" for r, p in members} for n, members in sch.nets.items()}
    assert page.count('<g class="pin"') == sum(len(p.pins) for p in sch.parts.values())
    out = tmp_path / "sch.svg"
    assert main(["print-board", "--profile", "siguo", "--schematic", "--out", str(out)]) == 0
    assert out.read_text(encoding="utf-8") == page and "311 parts" in capsys.readouterr().out
    assert main(["print-board", "siguo", "--no-profile", "--schematic", "--out", str(out)]) == 2
