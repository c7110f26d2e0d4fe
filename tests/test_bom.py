"""Bills of materials: counted from each profile's build design (74HC165 chains with their pull-ups, decoder trees for
readers, reader modules that fit the pitch, supplies sized for the worst case), and the shipped CSVs equal the code."""

from __future__ import annotations

import csv
import io
import math

import pytest

from controller.cli import main
from controller.hardware import bom
from controller.hardware.build import BUILDS, SUPPLY_HEADROOM, decoder_for
from controller.hardware.readers import RC522, required_pitch
from controller.rules import game_ids, load_game
from controller.sensing.profile import find_profile

qty = bom.qty


@pytest.mark.parametrize("game_id", game_ids())
def test_quantities_follow_the_design(game_id: str) -> None:
    game = load_game(game_id)
    n = len(game.stations)
    pieces = bom.piece_count(game)
    for build in BUILDS:
        try:
            bill = bom.bill_of_materials(game_id, build)
        except bom.BomError as exc:
            assert build == "reed-gpio" and "choose reed-pico" in str(exc)
            continue
        d = bill.design
        assert bill.build == build and bill.stations == n and bill.pieces == pieces
        assert bill.total == pytest.approx(sum(line.quantity * line.part.price for line in bill.lines), abs=0.011)
        if build != "rfid-pico":
            assert qty(bill, "Reed switch") == math.ceil(n * 1.1 - 1e-9) and qty(bill, "Neodymium") == pieces
        if d.chips_165:
            assert qty(bill, "74HC165") == d.chips_165 == d.channels // 8 and qty(bill, "Diode") == 0
            assert qty(bill, "Resistor 10 kOhm") == d.chips_165 * 8, "a pull-up on every 74HC165 input, spares too"
        elif build != "rfid-pico":
            rows, cols = bill.matrix
            assert rows * cols >= n and qty(bill, "Diode") == n
            assert qty(bill, "Tinned copper wire") > 0 and qty(bill, "Solid hook-up wire") > 0, "rows bare, columns insulated"
        readers = {"rfid-pico": n, "hybrid-pico": n, "reed-pico-pad": 1}.get(build, 0)
        assert qty(bill, "RC522") == readers and qty(bill, "NTAG213") == (pieces if readers else 0)
        if readers > 1:
            groups = math.ceil(n / 16)
            assert qty(bill, "74HC154") == groups + (1 if groups > 8 else 0)
            assert qty(bill, "74HC138") == (1 if 1 < groups <= 8 else 0)
            assert qty(bill, "Female-female jumper wires, ") == n, "a cable for every reader module"
            assert qty(bill, "74HC595") == 0, "no shift-register chip selects: 9 ms per register access"


def test_siguo_and_sanjunqi_list_their_74hc165_chains() -> None:
    """Their shipped profiles are 74HC165 chains: the reed-pico bill says so (it used to list a diode matrix)."""
    for game, chips in (("siguo", 17), ("sanjunqi", 12)):
        bill = bom.bill_of_materials(game, "reed-pico")
        assert bill.profile == game and qty(bill, "74HC165") == chips and qty(bill, "Resistor 10 kOhm") == chips * 8
        assert qty(bill, "Diode") == 0 and bill.matrix is None


def test_reader_modules_fit_their_pitch() -> None:
    for game_id in game_ids():
        game = load_game(game_id)
        for build in ("rfid-pico", "hybrid-pico"):
            d = bom.bill_of_materials(game_id, build).design
            assert d.module is RC522 and "60 x 40 mm" in d.module.name
            assert d.pitch >= d.required_pitch == required_pitch(game, RC522) > 40, "an RC522 does not fit the 40 mm reed pitch"
            assert "so they fit" in bom.fit_text(d)
    # a square grid needs the module's long side plus clearance: 60 + 3 mm
    assert required_pitch(load_game("stratego"), RC522) == 63.0


def test_supplies_are_sized_for_the_worst_case() -> None:
    for game_id in game_ids():
        for build in BUILDS:
            try:
                d = bom.bill_of_materials(game_id, build).design
            except bom.BomError:
                continue
            assert d.rails and d.rails[0].name == "Pi 5 V"
            for rail in d.rails:
                assert rail.typical_ma <= rail.worst_ma <= rail.supply_ma * SUPPLY_HEADROOM, (game_id, build, rail)
                assert rail.headroom_ok
                assert rail.worst_ma == pytest.approx(sum(p[2] for p in rail.parts), abs=0.2)
            if d.readers > 1:
                readers = next(r for r in d.rails if r.name == "readers 3.3 V")
                # all awake (antennas off) plus ONE antenna on at the transmitter's maximum: never every field at once
                assert readers.worst_ma == pytest.approx(d.readers * RC522.idle_max_ma + RC522.field_max_ma - RC522.idle_max_ma)
                assert readers.worst_ma < d.readers * RC522.field_ma, "antennas are on only while read"
    siguo = bom.bill_of_materials("siguo", "rfid-pico")
    assert qty(siguo, "Buck converter module 5 V to 3.3 V, 5 A") == 1, "129 readers need more than a 3 A buck"


def test_decoder_tree_is_constant_width() -> None:
    assert decoder_for(1).address_bits == 1 and decoder_for(8).chips == {"74HC138": 1}
    assert decoder_for(16).chips == {"74HC154": 1} and decoder_for(16).address_bits == 4
    assert decoder_for(100).chips == {"74HC154": 7, "74HC138": 1} and decoder_for(100).address_bits == 7
    assert decoder_for(129).chips == {"74HC154": 10} and decoder_for(129).address_bits == 8
    assert decoder_for(100).output_of(37) == ("154#2", "Y5")
    for n in range(2, 257):
        dec = decoder_for(n)
        assert 2 ** dec.address_bits >= n and dec.address_bits <= 8
        assert len({dec.output_of(k) for k in range(n)}) == n, "every reader its own output"


def test_pad_build_is_the_cheapest_identity_build() -> None:
    for game_id in game_ids():
        pad = bom.bill_of_materials(game_id, "reed-pico-pad")
        rfid = bom.bill_of_materials(game_id, "rfid-pico")
        reed = bom.bill_of_materials(game_id, "reed-pico")
        assert qty(pad, "RC522") == 1 and pad.design.pitch == 40.0
        assert reed.total - reed.lights_cost < pad.total < rfid.total / 2, game_id  # sensing alone: lights are optional
        assert pad.design.rails[-1].name == "Pico 3.3 V", "one reader runs from the Pico's own 3.3 V"
    assert bom.bill_of_materials("stratego", "reed-pico-pad").profile == "stratego-pad"


def test_bill_of_a_profile_file(tmp_path) -> None:  # noqa: ANN001
    bill = bom.bill_for(find_profile("luzhanqi-rfid"))
    assert bill.build == "rfid-pico" and qty(bill, "RC522") == 60 and qty(bill, "74HC154") == 4
    with pytest.raises(bom.BomError, match="build 'lego'"):
        bom.bill_of_materials("stratego", "lego")


@pytest.mark.parametrize("build", BUILDS)
def test_shipped_csv_matches_the_code(build: str) -> None:
    path = bom.bom_dir() / f"{build}.csv"
    assert path.exists(), f"{path} is missing: run `facedown bom --sync-docs`"
    shipped = path.read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(shipped)))
    assert rows[0][:3] == ["part", "per", "unit_price_usd"]
    assert set(rows[0][3:]) == set(game_ids()), f"{path} has other games than are installed: run `facedown bom --sync-docs`"
    assert shipped == bom.csv_text(build), f"{path} differs from controller/hardware/bom.py: run `facedown bom --sync-docs`"
    assert rows[-1][0] == "total_usd"


def test_shipped_power_csv_matches_the_code() -> None:
    path = bom.bom_dir() / "power.csv"
    assert path.read_text(encoding="utf-8") == bom.power_csv_text(), "hardware/bom/power.csv is stale: run `facedown bom --sync-docs`"


def test_command_prints_a_table_and_csv(capsys) -> None:  # noqa: ANN001
    assert main(["bom", "stratego", "--build", "reed-pico"]) == 0
    out = capsys.readouterr().out
    assert "100 stations" in out and "Raspberry Pi Pico" in out and "Power budget" in out and "hobby-electronics shops" in out
    assert main(["bom", "stratego", "--build", "rfid-pico"]) == 0
    out = capsys.readouterr().out
    assert "60 x 40 mm" in out and "at least 63 mm" in out and "printed at 65 mm" in out and "readers 3.3 V" in out
    assert main(["bom", "stratego", "--build", "reed-gpio", "--csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[-1][-1] == f"{bom.bill_of_materials('stratego', 'reed-gpio').total:.2f}"
    assert main(["bom", "--profile", "siguo"]) == 0 and "17 x 74HC165 (136 inputs)" in capsys.readouterr().out
    assert main(["bom"]) == 2 and "name a game" in capsys.readouterr().err
    assert main(["bom", "siguo", "--build", "reed-gpio"]) == 2 and "choose reed-pico" in capsys.readouterr().err
