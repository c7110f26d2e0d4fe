"""Wiring tables: generated from the profiles and the firmware config, right about header pins, and the copies in
hardware/README.md equal to the generator's output for every shipped profile."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.hardware import wiring
from controller.sensing.profile import default_profile, find_profile, parse_profile, profile_ids

README = Path(__file__).resolve().parent.parent / "hardware" / "README.md"


def test_readme_tables_match_the_generator() -> None:
    text = README.read_text(encoding="utf-8")
    blocks = wiring.readme_blocks(text)
    for pid in profile_ids():
        assert f"profile:{pid}" in blocks, f"hardware/README.md has no wiring table for profile {pid}: run `facedown bom --sync-docs`"
    assert "pico" in blocks and "bom-totals" in blocks
    assert wiring.refresh_readme(text) == text, "hardware/README.md's generated tables are stale: run `facedown bom --sync-docs`"


def test_every_station_and_line_is_in_its_profile_table() -> None:
    for pid in profile_ids():
        prof = find_profile(pid)
        table = wiring.profile_wiring(prof)
        if prof.scanner is None:
            for i, pin in enumerate(prof.pins.rows):
                assert f"| R{i} | GPIO{pin} | {wiring.header_pin(pin)} |" in table
            for i, pin in enumerate(prof.pins.columns):
                assert f"| C{i} | GPIO{pin} | {wiring.header_pin(pin)} |" in table
            rows = [ln for ln in table.splitlines() if ln.startswith("| R")]
            listed = [s for ln in rows for s in ln.split("|")[4].strip().split(", ")]
            assert sorted(listed) == sorted(prof.stations), f"{pid}: each station on exactly one row"


def test_header_pins_are_the_pi_layout() -> None:
    # spot checks against the 40-pin header: GPIO2 on pin 3, GPIO18 (PWM0) on pin 12, GPIO21 on pin 40
    assert (wiring.header_pin(2), wiring.header_pin(18), wiring.header_pin(21), wiring.header_pin(26)) == (3, 12, 40, 37)
    assert len(set(wiring.PI_HEADER_PIN.values())) == 28 and not set(wiring.PI_HEADER_PIN.values()) & set(wiring.PI_GROUND_PINS)
    assert (wiring.pico_pin(0), wiring.pico_pin(15), wiring.pico_pin(16), wiring.pico_pin(28)) == (1, 20, 21, 34)
    with pytest.raises(wiring.WiringError, match="GP25"):
        wiring.pico_pin(25)


def test_shift_register_profile_lists_each_chip() -> None:
    stations = default_profile("luzhanqi").stations
    text = ("format: 1\ngame: luzhanqi\nsensing: reed\nscanner: {kind: shift_register}\npins: {buzzer: 18}\n"
            "channels:\n" + "".join(f"  {s}: {i}\n" for i, s in enumerate(stations)))
    table = wiring.profile_wiring(parse_profile(text, "pico.yaml"))
    assert "| 0 | A0 | A1 | A2 | A3 | A4 | B0 | B1 | B2 |" in table
    assert "| 7 | L1 | L2 | L3 | L4 | spare | spare | spare | spare |" in table
    assert "| 74HC165 PL (load), all chips | shift_register | GP20 | 26 |" in table
    assert "8 x 74HC165 (64 channels, 4 spare)" in table
    assert "/dev/facedown-scanner" in table and "| buzzer + | GPIO18 | 12 |" in table


def test_reader_profile_lists_each_readers_decoder_output() -> None:
    table = wiring.profile_wiring(find_profile("luzhanqi-rfid"))
    assert "| 0 | 154#0 | Y0 | A0 |" in table and "| 37 | 154#2 | Y5 | H2 |" in table and "| 59 | 154#3 | Y11 | L4 |" in table
    assert "| decoder enable (low = the addressed reader selected) | rfid | GP6 | 9 |" in table
    assert "A 74HC138 chooses the hub: A, B on address bits 4-5 (C to ground)" in table
    assert "60 MFRC522 readers selected through 4 x 74HC154, 1 x 74HC138" in table


def test_pad_profile_has_its_chip_select() -> None:
    table = wiring.profile_wiring(find_profile("stratego-pad"))
    assert "| MFRC522 SDA (chip select) of reader 0 | rfid | GP26 | 31 |" in table
    assert "| R0 | GP0 | a1 | b1 |" in table and "Check-in pad" in table


def test_pico_table_follows_the_config() -> None:
    cfg = {"matrix": {"rows": [0, 1], "cols": [2]},
           "rfid": {"sck": 18, "mosi": 19, "miso": 16, "select": {"kind": "direct", "pins": [5, 6]}}}
    table = wiring.pico_wiring(cfg)
    assert "| matrix row R1 (diode cathodes) | matrix | GP1 | 2 |" in table
    assert "| MFRC522 SDA (chip select) of reader 1 | rfid | GP6 | 9 |" in table
    with pytest.raises(wiring.WiringError, match="GP24"):
        wiring.pico_wiring({"matrix": {"rows": [24], "cols": [2]}})


def test_unknown_block_is_refused() -> None:
    with pytest.raises(wiring.WiringError, match="generated:nonsense"):
        wiring.refresh_readme("<!-- generated:nonsense -->\nx\n<!-- /generated -->\n", {})
