"""One source of truth for a build: for every shipped profile, and for every game in every build, the bill of
materials, the wiring tables and the scanner's config.json (format 2, firmware/CONFIG.md) are made from the profile
and agree with each other; `facedown firmware config|flash|profile` write and check what they say."""

from __future__ import annotations

import json
import math
import os
import re
import sys
from pathlib import Path

import pytest

from controller.cli import main
from controller.hardware import bom, build, wiring
from controller.hardware import chain as runs_of
from controller.hardware.build import (
    BUILDS,
    BuildError,
    config_json,
    design,
    firmware_config,
    profile_for,
    profile_text,
)
from controller.hardware.chain import reader_stations
from controller.rules import game_ids, load_game
from controller.sensing.profile import find_profile, parse_profile, profile_ids

ROOT = Path(__file__).resolve().parent.parent
FIRMWARE = ROOT / "firmware"


def all_profiles() -> list:
    """Every shipped profile, and the profile every game gets in every build that fits it."""
    out = [find_profile(pid) for pid in profile_ids()]
    for g in game_ids():
        for b in BUILDS:
            try:
                out.append(profile_for(g, b))
            except BuildError:
                assert b == "reed-gpio"
    return out


PROFILES = all_profiles()


def table_rows(markdown: str, first_cell: str) -> list[list[str]]:
    """The cells of every Markdown table row whose first cell matches ``first_cell`` (a regular expression)."""
    rows = []
    for line in markdown.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if re.fullmatch(first_cell, cells[0]):
                rows.append(cells)
    return rows


def config_pins(cfg: dict) -> list[int]:
    pins: list[int] = []
    if "matrix" in cfg:
        pins += cfg["matrix"]["rows"] + cfg["matrix"]["cols"]
    if "shift_register" in cfg:
        pins += [cfg["shift_register"][k] for k in ("load", "clock", "data")]
    if "rfid" in cfg:
        r = cfg["rfid"]
        pins += [r["sck"], r["mosi"], r["miso"]]
        sel = r["select"]
        pins += sel["pins"] if sel["kind"] == "direct" else [*sel["address"], sel["enable"]]
    if "lights" in cfg:
        pins.append(cfg["lights"]["pin"])
    return pins


@pytest.mark.parametrize("profile", PROFILES, ids=lambda p: p.id)
def test_bom_wiring_and_firmware_config_agree(profile) -> None:  # noqa: ANN001
    bill = bom.bill_for(profile)
    d = bill.design
    table = wiring.profile_wiring(profile)
    assert bill.build == build.build_of(profile) == d.build
    if profile.scanner is None:
        with pytest.raises(BuildError, match="no scanner firmware"):
            firmware_config(d)
        rows, cols = profile.matrix_size
        assert len(table_rows(table, r"R\d+")) == rows and len(table_rows(table, r"C\d+")) == cols
        runs = runs_of.matrix_runs(profile, d.pitch)
        assert len(runs) == rows + cols and bom.qty(bill, "Diode") == len(profile.stations)
        assert bom.qty(bill, "Tinned copper wire") == math.ceil(sum(v for k, v in runs.items() if k[0] == "R") / 1000 * 1.1)
        assert bom.qty(bill, "Solid hook-up wire") == math.ceil(sum(v for k, v in runs.items() if k[0] == "C") / 1000 * 1.1)
        assert bom.qty(bill, "Raspberry Pi Pico") == 0
        return
    cfg = firmware_config(d)
    assert json.loads(config_json(cfg)) == cfg
    assert cfg["format"] == 2 and cfg["profile"] == profile.id and cfg["channels"] == profile.scanner.channel_count
    assert cfg["sensing"] == profile.sensing
    # the pins: the wiring table lists exactly the config's pins, none twice, all on the Pico's edge
    pins = config_pins(cfg)
    assert len(pins) == len(set(pins)), f"a Pico pin used twice: {sorted(pins)}"
    listed = [int(c[2][2:]) for c in table_rows(table, r".+") if re.fullmatch(r"GP\d+", c[2] if len(c) > 2 else "")]
    assert sorted(listed) == sorted(pins)
    assert all(wiring.pico_pin(p) for p in pins)
    # reeds: matrix or 74HC165 chain, in all three
    if "matrix" in cfg:
        rows, cols = len(cfg["matrix"]["rows"]), len(cfg["matrix"]["cols"])
        assert (rows, cols) == profile.scanner.matrix == bill.matrix and rows * cols == cfg["channels"]
        assert bom.qty(bill, "Diode") == len(profile.stations) and bom.qty(bill, "74HC165") == 0
        assert len(table_rows(table, r"R\d+")) == rows
    if "shift_register" in cfg:
        chips = cfg["shift_register"]["count"] // 8
        assert cfg["shift_register"]["count"] == cfg["channels"] == chips * 8
        assert bom.qty(bill, "74HC165") == chips and bom.qty(bill, "Resistor 10 kOhm") == chips * 8
        chain = table_rows(table, r"\d+")
        assert [int(r[0]) for r in chain if len(r) == 9] == list(range(chips)), "one wiring row per 74HC165"
        placed = [s for r in chain if len(r) == 9 for s in r[1:] if s != "spare"]
        assert sorted(placed) == sorted(profile.stations)
    assert ("scanner" in cfg) == (d.build != "rfid-pico")
    # readers: count, selection, module, pad
    readers = cfg.get("rfid", {}).get("readers", 0)
    assert readers == d.readers == bom.qty(bill, "RC522")
    assert ("checkin" in cfg) == (profile.sensing == "checkin") == (d.build == "reed-pico-pad")
    if readers > 1:
        sel = cfg["rfid"]["select"]
        assert sel["kind"] == "decoder" and len(sel["address"]) == d.decoder.address_bits and 2 ** len(sel["address"]) >= readers
        reader_rows = [r for r in table_rows(table, r"\d+") if len(r) == 4]
        assert [int(r[0]) for r in reader_rows] == list(range(readers))
        stations = reader_stations(profile)  # rfid-pico: reader k is channel k; hybrid: hubs chosen from the coordinates
        assert sorted(stations) == sorted(profile.stations) and [r[3] for r in reader_rows] == stations
        if d.build == "rfid-pico":
            assert [profile.channels[s] for s in stations] == list(range(readers))
        assert bom.qty(bill, "74HC154") == sum(n for c, n in d.decoder.chips.items() if c == "74HC154")
        if d.build == "hybrid-pico":
            assert cfg["rfid"]["channels"] == [profile.channels[s] for s in stations]
        else:
            assert "channels" not in cfg["rfid"] and readers == cfg["channels"]
    elif readers == 1:
        assert cfg["rfid"]["select"]["kind"] == "direct" and len(cfg["rfid"]["select"]["pins"]) == 1


def test_the_firmware_accepts_every_generated_config() -> None:
    """The firmware's own config check (firmware/fd_device.py, run under CPython) finds no problem in any config."""
    if not (FIRMWARE / "CONFIG.md").exists():
        if os.environ.get("CI"):
            pytest.fail("firmware/CONFIG.md is missing: the firmware in this checkout predates config format 2")
        pytest.skip("the firmware in this checkout predates config format 2 (firmware/CONFIG.md lands with the firmware "
                    "half of issue 17)")
    sys.path.insert(0, str(FIRMWARE))
    try:
        import fd_device  # type: ignore[import-not-found]

        for profile in PROFILES:
            if profile.scanner is not None:
                cfg = firmware_config(design(profile))
                assert fd_device.check_config(cfg) == [], (profile.id, cfg)
    finally:
        sys.path.remove(str(FIRMWARE))
        sys.modules.pop("fd_device", None)


def test_the_shipped_config_is_generated() -> None:
    """firmware/config.json is what `facedown firmware config` writes for a shipped profile: the one it names, or (a
    default that names none, "-") one whose config it equals apart from the two names."""
    shipped = json.loads((FIRMWARE / "config.json").read_text(encoding="utf-8"))
    if shipped.get("format") != 2:
        if os.environ.get("CI") and (FIRMWARE / "CONFIG.md").exists():
            pytest.fail("firmware/config.json is not format 2 although the firmware reads format 2")
        pytest.skip("firmware/config.json is still format 1 (the firmware half of issue 17 replaces it)")
    if shipped.get("profile", "-") != "-":
        profile = find_profile(shipped["profile"])
        assert shipped == firmware_config(design(profile)), (
            f"firmware/config.json differs from its profile {profile.id}: run "
            f"`facedown firmware config {profile.id} --out firmware/config.json`")
        return
    def unnamed(cfg: dict) -> dict:
        return {k: v for k, v in cfg.items() if k not in ("board", "profile")}

    matches = [p.id for p in PROFILES[:len(profile_ids())] if p.scanner is not None
               and unnamed(firmware_config(design(p))) == unnamed(shipped)]
    assert matches, ("firmware/config.json matches no shipped profile's generated config: generate it, e.g. "
                     "`facedown firmware config stratego-pico --out firmware/config.json`")


def test_generated_profiles_are_valid_for_every_game_and_build() -> None:
    for g in game_ids():
        n = len(load_game(g).stations)
        for b in BUILDS:
            try:
                text = profile_text(g, b)
            except BuildError as exc:
                assert b == "reed-gpio" and n > 110 and "choose reed-pico" in str(exc)
                continue
            prof = parse_profile(text, f"{g}-{b}.yaml")
            assert build.build_of(prof) == b and prof.stations == load_game(g).station_ids


def test_too_many_lines_for_the_pico_is_refused() -> None:
    stations = load_game("siguo").station_ids
    text = ("format: 1\ngame: siguo\nsensing: checkin\nscanner: {kind: matrix, matrix: [11, 12]}\nchannels:\n"
            + "".join(f"  {s}: {i}\n" for i, s in enumerate(stations)))
    with pytest.raises(BuildError, match=r"11 x 12 matrix \(23 lines\) and a chip select need 24 Pico pins; 23 are free: use scanner kind shift_register"):
        design(parse_profile(text, "big.yaml"))


def test_firmware_config_command(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    out = tmp_path / "cfg" / "config.json"
    assert main(["firmware", "config", "siguo", "--out", str(out)]) == 0
    cfg = json.loads(out.read_text())
    assert cfg["shift_register"]["count"] == 136 and cfg["channels"] == 136 and cfg["profile"] == "siguo"
    assert "wrote" in capsys.readouterr().out
    assert main(["firmware", "config", "luzhanqi-rfid", "--out", "-"]) == 0
    cfg = json.loads(capsys.readouterr().out)
    assert cfg["rfid"]["select"] == {"kind": "decoder", "address": [0, 1, 2, 3, 4, 5], "enable": 6} and cfg["rfid"]["readers"] == 60
    assert main(["firmware", "config", "stratego", "--out", "-"]) == 2
    assert "no scanner firmware" in capsys.readouterr().err
    assert main(["firmware", "config", "nonesuch"]) == 2
    assert "shipped profiles" in capsys.readouterr().err


def test_firmware_flash_needs_a_pico_and_mpremote(tmp_path: Path, capsys, monkeypatch) -> None:  # noqa: ANN001
    from controller.hardware.usb import scanners

    if scanners(0x2E8A, 0x0005):
        pytest.skip("a Pico is plugged into this machine; the no-Pico message cannot be shown")
    assert main(["firmware", "flash", "siguo"]) == 2
    assert "no Pico attached" in capsys.readouterr().err
    assert main(["firmware", "flash", "siguo", "--port", str(tmp_path / "ttyACM9")]) == 2
    assert "no such device" in capsys.readouterr().err
    # a real serial device node (a pseudo terminal) passes the port check; then mpremote must be there
    master, slave = os.openpty()
    try:
        port = os.ttyname(slave)
        assert main(["firmware", "flash", "stratego-pad", "--port", port, "--dry-run"]) == 0
        out = capsys.readouterr().out
        cmd = next(line for line in out.splitlines() if line.startswith("would run: "))
        assert f"connect {port} cp " in cmd and cmd.endswith(":config.json + reset")
        for f in ("fd_device.py", "fd_board.py", "main.py"):
            assert f"/firmware/{f}" in cmd
        assert json.loads(out[out.index("{"):]) == firmware_config(design(find_profile("stratego-pad")))
        monkeypatch.setenv("PATH", str(tmp_path))
        from controller.commands.firmware import mpremote_command

        if mpremote_command() is not None:
            pytest.skip("mpremote is installed beside this Python; the missing-tool message cannot be shown")
        assert main(["firmware", "flash", "stratego-pad", "--port", port]) == 2
        assert "mpremote is not installed: pip install 'facedown[flash]'" in capsys.readouterr().err
    finally:
        os.close(master)
        os.close(slave)


def test_firmware_profile_command(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    out = tmp_path / "mine.yaml"
    assert main(["firmware", "profile", "luzhanqi", "--build", "reed-pico-pad", "--out", str(out)]) == 0
    prof = find_profile(out)
    # the board's own grid (12 rows of 5, as the shipped GPIO profile wires it), not the squarest 6 x 10 in game order
    assert prof.sensing == "checkin" and prof.scanner.matrix == (12, 5)
    shipped = find_profile("luzhanqi").channels

    def lines(at: dict, k: int) -> set:  # noqa: ANN001 - the stations of each row (k=0) or column (k=1)
        return {frozenset(s for s in at if at[s][k] == v) for v in {rc[k] for rc in at.values()}}

    made = {s: divmod(ch, 5) for s, ch in prof.channels.items()}
    assert lines(made, 0) == lines(shipped, 0) and lines(made, 1) == lines(shipped, 1)
    assert main(["bom", "--profile", str(out)]) == 0 and "check-in pad" in capsys.readouterr().out
    assert main(["firmware", "profile", "siguo", "--build", "reed-gpio"]) == 2
    assert "choose reed-pico" in capsys.readouterr().err


# -- station lights ---------------------------------------------------------------------------------------------------
def test_station_lights_reach_the_config_the_bom_and_the_wiring() -> None:
    prof = find_profile("stratego-pico")
    d = design(prof)
    cfg = firmware_config(d)
    lt = cfg["lights"]
    assert (lt["pin"], lt["count"], lt["brightness"]) == (28, 100, 64)
    assert lt["order"][:12] == [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 19, 18]  # the chain snakes back along row 2
    assert sorted(lt["order"]) == list(range(100))
    bill = bom.bill_for(prof)
    rail = next(r for r in d.rails if r.name.startswith("lights"))
    assert rail.worst_ma == round(100 * 1.0 + 100 * 60 * 64 / 255, 1) and rail.headroom_ok
    assert bom.qty(bill, "Addressable RGB LED") == 100 and bom.qty(bill, "74AHCT125") == 1
    assert bom.qty(bill, "Electrolytic capacitor 1000 uF") == 1 and bom.qty(bill, rail.supply) == 1
    assert 0 < bill.lights_cost < bill.total
    table = wiring.profile_wiring(prof)
    assert "| station lights: WS2812 data" in table and "| GP28 | 34 |" in table
    assert "| 10-19 | j2, i2, h2, g2, f2, e2, d2, c2, b2, a2 |" in table


def test_a_lights_pin_the_build_already_uses_is_refused_with_the_free_pins() -> None:
    text = (ROOT / "hardware" / "profiles" / "stratego-pico.yaml").read_text(encoding="utf-8").replace("pin: 28", "pin: 17")
    with pytest.raises(BuildError, match=r"lights.pin: GP17 already carries matrix_cols in this build; free Pico pins: "
                                         r"GP26, GP27, GP28"):
        design(parse_profile(text, "lit.yaml"))

