"""Results and standings: wins, draws and losses per game kind, one count per game however often a retained result
is heard, a CSV a spreadsheet cannot mistake for formulas, a results file that survives a restart, and malformed
results refused with the field that is wrong."""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest

from controller.club.results import ResultBook, ResultError, result_from_json


def res(table: str, key: str, winners: list[str], players: dict[str, str], game: str = "stratego", t: float = 1.0) -> dict:
    """A result as the book keeps a verified one (``record``: its signed record's chain head)."""
    import hashlib

    return {"table": table, "game_key": key, "game": game, "sides": ["red", "blue"], "players": players,
            "winners": winners, "reason": "flag taken" if winners else "draw agreed", "plies": 40, "ended_at": t,
            "record": hashlib.sha256(f"{table}/{key}".encode()).hexdigest()}


def test_standings_per_game_and_duplicates_count_once(tmp_path: Path) -> None:
    book = ResultBook(tmp_path / "r.jsonl")
    assert book.add(result_from_json(res("t1", "1-a", ["red"], {"red": "Ann", "blue": "Bo"}, t=1)))
    assert not book.add(result_from_json(res("t1", "1-a", ["red"], {"red": "Ann", "blue": "Bo"}, t=1)))  # heard again
    book.add(result_from_json(res("t2", "1-b", [], {"red": "Bo", "blue": "Cy"}, t=2)))
    book.add(result_from_json(res("t3", "1-c", ["blue"], {"red": "Cy", "blue": "Ann"}, t=3)))
    book.add(result_from_json(res("t4", "1-d", ["red"], {}, game="luzhanqi", t=4)))
    st = book.standings()
    rows = {s.player: s.to_json() for s in st["stratego"]}
    assert rows["Ann"] == {"player": "Ann", "played": 2, "wins": 2, "draws": 0, "losses": 0, "points": 2.0}
    assert rows["Bo"]["draws"] == 1 and rows["Bo"]["losses"] == 1 and rows["Cy"]["points"] == 0.5
    assert [s.player for s in st["stratego"]] == ["Ann", "Bo", "Cy"]  # points, then wins, then name
    assert [s.player for s in st["luzhanqi"]] == ["Red at t4", "Blue at t4"]
    reloaded = ResultBook(tmp_path / "r.jsonl")
    assert [r.key for r in reloaded.all()] == [r.key for r in book.all()]


def test_csv_export_is_spreadsheet_safe() -> None:
    book = ResultBook()
    book.add(result_from_json({**res("t1", "9-z", ["blue"], {"red": "Ann", "blue": "Bo"}), "reason": "=HYPERLINK(1)"}))
    rows = list(csv.reader(io.StringIO(book.csv())))
    assert rows[0] == ["ended_at", "table", "game", "game_key", "players", "winners", "reason", "plies"]
    assert rows[1][1:4] == ["t1", "stratego", "9-z"] and rows[1][5] == "blue" and rows[1][7] == "40"
    assert rows[1][4] == "red=Ann; blue=Bo" and rows[1][6] == "'=HYPERLINK(1)"


@pytest.mark.parametrize("change, field", [({"table": "a/b"}, "table"), ({"winners": ["green"]}, "winners"),
                                           ({"sides": "red"}, "sides"), ({"plies": -1}, "plies"), ({"game_key": ""}, "game_key"),
                                           ({"players": {"green": "x"}}, "players")])
def test_malformed_results_are_refused(change: dict, field: str) -> None:
    with pytest.raises(ResultError, match=field):
        result_from_json({**res("t1", "1", ["red"], {}), **change})


def test_a_corrupt_results_file_names_its_line(tmp_path: Path) -> None:
    p = tmp_path / "r.jsonl"
    p.write_text('{"table": "t1"}\n')
    with pytest.raises(ResultError, match=r"r.jsonl:1"):
        ResultBook(p)
