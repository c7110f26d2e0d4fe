"""Option-dependent piece counts (`counts:` in a game file), the engine feature Navy chess's three armies need,
tried on the documented example game so it is checked apart from any real game."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import yaml

from controller.commands.rules import contract
from controller.rules import GameFileError, new_game, parse_game
from controller.rules.deploy import random_deployment
from controller.rules.errors import SetupError

DOC = Path(__file__).resolve().parent.parent / "docs" / "game-format.md"


def _example(counts: list | None = None) -> dict:
    doc = yaml.safe_load(DOC.read_text(encoding="utf-8").split("```yaml\n")[1].split("```")[0])
    doc["options"]["army"] = {"default": "small", "choices": ["small", "big", "noscout"], "doc": "which army"}
    doc["pieces"][1]["counts"] = counts if counts is not None else [
        {"count": 3, "if": {"army": "big"}},
        {"count": 0, "if": {"army": "noscout"}},
    ]
    return doc


def _game(counts: list | None = None):  # type: ignore[no-untyped-def]
    return parse_game(yaml.safe_dump(_example(counts), allow_unicode=True, sort_keys=False), "army.yaml")


def test_an_option_changes_how_many_pieces_each_side_deploys() -> None:
    game = _game()
    assert new_game(game).game.piece_by_id["scout"].count == 2
    big = new_game(game, {"army": "big"})
    assert big.game.piece_by_id["scout"].count == 3
    for side in big.game.sides:
        big.deploy(side, random_deployment(big.game, side, random.Random(4), big.options))
    assert sum(p.type == "scout" for p in big.board.values()) == 6


def test_a_count_of_zero_leaves_the_piece_out_of_the_game() -> None:
    game = _game()
    state = new_game(game, {"army": "noscout"})
    assert "scout" not in state.game.piece_by_id
    with pytest.raises(SetupError) as info:
        state.deploy("red", {"a1": "captain", "b1": "mine", "a2": "flag", "b2": "scout"})
    assert any("unknown piece 'scout'" in str(p) for p in info.value.problems)
    assert new_game(game, {"army": "noscout"}).game is state.game  # one derived game per army, so one topology


def test_a_deployment_is_checked_against_the_counts_of_its_options() -> None:
    game = _game()
    state = new_game(game, {"army": "big"})
    with pytest.raises(SetupError) as info:
        state.deploy("red", {"a2": "captain", "c1": "mine", "a1": "flag", "b2": "scout", "c2": "scout"})
    assert [str(p) for p in info.value.problems] == ["Scout (斥候): 2 placed, 3 expected"]


def test_an_unconditional_entry_under_counts_is_rejected_with_its_path() -> None:
    with pytest.raises(GameFileError) as info:
        _game([{"count": 3}])
    assert info.value.where == "pieces[1].counts[0]"
    with pytest.raises(GameFileError) as info:
        _game([{"count": -1, "if": {"army": "big"}}])
    assert info.value.where == "pieces[1].counts[0].count"


def test_the_deploy_zone_must_hold_the_largest_army_any_option_gives() -> None:
    with pytest.raises(GameFileError) as info:
        _game([{"count": 9, "if": {"army": "big"}}])
    assert "room for the army of 12" in info.value.expected


def test_the_rules_contract_lists_the_pieces_of_the_chosen_army(tmp_path: Path) -> None:
    path = tmp_path / "army.yaml"
    path.write_text(yaml.safe_dump(_example(), allow_unicode=True, sort_keys=False), encoding="utf-8")
    assert {p["id"]: p["count"] for p in contract(str(path))["pieces"]}["scout"] == 2
    assert {p["id"]: p["count"] for p in contract(str(path), {"army": "big"})["pieces"]}["scout"] == 3
    doc = contract(str(path), {"army": "noscout"})
    assert "scout" not in {p["id"] for p in doc["pieces"]} and "scout" not in doc["clash"]
