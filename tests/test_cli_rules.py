"""`facedown rules GAME [--json]` through the real CLI entry point: the JSON contract's shape, the human table,
options and errors."""

from __future__ import annotations

import json

import pytest

from controller.cli import main
from controller.commands.rules import contract


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("game", ["stratego", "lattaque", "luzhanqi"])
def test_json_contract_shape(capsys: pytest.CaptureFixture[str], game: str) -> None:
    code, out, _ = run(capsys, "rules", game, "--json")
    assert code == 0
    doc = json.loads(out)
    assert set(doc) == {"game", "pieces", "clash", "effects"} and doc["game"] == game
    assert doc["effects"] == {}  # these games have no effect that changes a clash's outcome
    ids = [p["id"] for p in doc["pieces"]]
    for p in doc["pieces"]:
        assert set(p) == {"id", "name", "zh", "zh_hans", "count", "movable", "can_attack"}
        assert isinstance(p["count"], int) and p["count"] >= 1
        assert isinstance(p["movable"], bool) and isinstance(p["can_attack"], bool)
    assert list(doc["clash"]) == ids
    for attacker, row in doc["clash"].items():
        assert list(row) == ids, attacker
        assert set(row.values()) <= {"attacker", "defender", "both", "bounce", "illegal"}
    assert doc == contract(game)
    assert "斥候" in out or game == "luzhanqi"  # zh written as is, not as \\u escapes


def test_json_with_an_option(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules", "lattaque", "--json", "-o", "spy_as_stratego=true")
    assert code == 0
    assert json.loads(out)["clash"]["general"]["spy"] == "attacker"
    code, out, _ = run(capsys, "rules", "lattaque", "--json")
    assert json.loads(out)["clash"]["general"]["spy"] == "defender"


def test_human_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "rules", "stratego", "-o", "two_squares=3")
    assert code == 0
    assert out.startswith("Stratego (西洋陸軍棋)")
    lines = out.splitlines()
    spy = next(ln for ln in lines if ln.rstrip().endswith("間諜 Spy"))
    cells = spy.split()[1:13]  # row 10 (spy) against pieces 1..12
    assert cells[0] == "A" and cells[1] == "D" and cells[9] == "=" and cells[10] == "D" and cells[11] == "A"
    flag = next(ln for ln in lines if ln.rstrip().endswith("軍旗 Flag"))
    assert flag.split()[1:13] == ["-"] * 12
    assert "two_squares = 5  [set to 3]" in out


def test_unknown_game_and_bad_option_fail_cleanly(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "rules", "chess")
    assert code == 2 and "no game 'chess'" in err and "stratego" in err
    code, _, err = run(capsys, "rules", "stratego", "-o", "two_squares=4")
    assert code == 2 and "two_squares" in err
    code, _, err = run(capsys, "rules", "stratego", "-o", "nonsense")
    assert code == 2 and "NAME=VALUE" in err
    code, _, err = run(capsys, "rules", "stratego", "-o", "castling=true")
    assert code == 2 and "no option 'castling'" in err


def test_a_game_file_path(capsys: pytest.CaptureFixture[str], tmp_path) -> None:  # type: ignore[no-untyped-def]
    from controller.rules import GAMES_DIR

    path = tmp_path / "mine.yaml"
    path.write_text((GAMES_DIR / "stratego.yaml").read_text(encoding="utf-8").replace("id: stratego", "id: mine"),
                    encoding="utf-8")
    code, out, _ = run(capsys, "rules", str(path), "--json")
    assert code == 0 and json.loads(out)["game"] == "mine"
    bad = tmp_path / "bad.yaml"
    bad.write_text("format: 1\nid: bad\n", encoding="utf-8")
    code, _, err = run(capsys, "rules", str(bad))
    assert code == 2 and "bad.yaml" in err and "required key is missing" in err
