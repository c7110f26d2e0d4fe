"""Bills of materials: quantities follow each game's stations, matrix and pieces; the shipped CSVs equal the code."""

from __future__ import annotations

import csv
import io
import math

import pytest

from controller.cli import main
from controller.hardware import bom
from controller.rules import game_ids, load_game
from controller.sensing.profile import profile_ids


def qty(bill: bom.Bill, start: str) -> int:
    return next(line.quantity for line in bill.lines if line.part.name.startswith(start))


@pytest.mark.parametrize("game_id", [g for g in game_ids() if g in profile_ids()])  # a game needs no profile
def test_quantities_follow_the_station_count(game_id: str) -> None:
    game = load_game(game_id)
    n = len(game.stations)
    pieces = bom.piece_count(game)
    for build in bom.BUILDS:
        try:
            bill = bom.bill_of_materials(game_id, build)
        except bom.BomError as exc:
            assert build == "reed-gpio" and "choose reed-pico" in str(exc)
            continue
        assert bill.stations == n and bill.pieces == pieces
        assert bill.total == pytest.approx(sum(line.quantity * line.part.price for line in bill.lines), abs=0.011)
        if build.startswith("reed"):
            assert qty(bill, "Reed switch") == math.ceil(n * 1.1 - 1e-9)
            assert qty(bill, "Diode") == n
            assert qty(bill, "Neodymium") == pieces
            rows, cols = bill.matrix
            assert rows * cols >= n and qty(bill, "Solid hook-up wire") == rows + cols
        else:
            assert qty(bill, "MFRC522") == n and qty(bill, "74HC595") == math.ceil(n / 8)
            assert qty(bill, "NTAG213") == pieces


def test_more_stations_cost_more() -> None:
    small, big = bom.bill_of_materials("luzhanqi", "rfid-pico"), bom.bill_of_materials("stratego", "rfid-pico")
    assert big.stations > small.stations and big.total > small.total
    per_station = sum(line.part.price * line.part.each for line in big.lines if line.part.per == "station")
    assert per_station > 0


def test_gpio_matrix_comes_from_the_shipped_profile() -> None:
    assert bom.bill_of_materials("luzhanqi", "reed-gpio").matrix == (12, 5)
    assert bom.bill_of_materials("luzhanqi", "reed-pico").matrix == (8, 8)
    with pytest.raises(bom.BomError, match="26 pins"):
        bom.matrix_shape(200, bom.PICO_MATRIX_PINS)
    with pytest.raises(bom.BomError, match="build 'lego'"):
        bom.bill_of_materials("stratego", "lego")


@pytest.mark.parametrize("build", bom.BUILDS)
def test_shipped_csv_matches_the_code(build: str) -> None:
    path = bom.bom_dir() / f"{build}.csv"
    assert path.exists(), f"{path} is missing: run `facedown bom --sync-docs`"
    shipped = path.read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(shipped)))
    assert rows[0][:4] == ["part", "per", "each", "unit_price_usd"]
    assert set(rows[0][4:]) == set(game_ids()), f"{path} has other games than are installed: run `facedown bom --sync-docs`"
    assert shipped == bom.csv_text(build), f"{path} differs from controller/hardware/bom.py: run `facedown bom --sync-docs`"
    assert rows[-1][0] == "total_usd"


def test_command_prints_a_table_and_csv(capsys) -> None:  # noqa: ANN001
    assert main(["bom", "stratego", "--build", "reed-pico"]) == 0
    out = capsys.readouterr().out
    assert "100 stations" in out and "Raspberry Pi Pico" in out
    assert main(["bom", "stratego", "--build", "reed-gpio", "--csv"]) == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows[-1][-1] == f"{bom.bill_of_materials('stratego', 'reed-gpio').total:.2f}"
    assert main(["bom"]) == 2 and "name a game" in capsys.readouterr().err
