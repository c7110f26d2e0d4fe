"""Game files: the example in docs/game-format.md loads and plays, and broken files are rejected with the file,
the path inside the document and what was expected."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from test_rules_helpers import position

from controller.rules import GameFileError, SetupError, game_ids, load_game, new_game, parse_game

DOC = Path(__file__).resolve().parents[1] / "docs" / "game-format.md"


def doc_example() -> str:
    blocks = re.findall(r"```yaml\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    full = [b for b in blocks if b.startswith("format:")]
    assert len(full) == 1, "docs/game-format.md should hold exactly one complete example game"
    return full[0]


def test_the_documented_example_loads() -> None:
    game = parse_game(doc_example(), "game-format.md")
    assert game.id == "skirmish" and len(game.stations) == 12
    assert [p.id for p in game.pieces] == ["captain", "scout", "mine", "flag"]
    assert game.station_by_id["b4"].label == "Blue's fort"
    assert game.hooks == ("two_squares",)


def test_the_documented_example_plays() -> None:
    state = new_game(parse_game(doc_example(), "game-format.md"))
    with pytest.raises(SetupError) as info:
        state.deploy("red", {"a2": "flag", "b1": "mine", "c1": "captain", "a1": "scout"})
    assert {(p.station, p.message) for p in info.value.problems} == {
        ("a2", "the flag stands on the back row"),
        ("b1", "a mine may not stand in a fort"),
        (None, "Scout (斥候): 1 placed, 2 expected"),
    }
    state.deploy("red", {"a1": "flag", "b1": "scout", "c1": "mine", "a2": "captain", "c2": "scout"})
    state.deploy("blue", {"c4": "flag", "b4": "scout", "a4": "mine", "b3": "captain", "a3": "scout"})
    assert state.phase == "play"
    assert state.clash[("scout", "captain")] == "bounce"
    # c2 scout: c3 (dash_attack off: no attack at the end of a long move; c3 is empty) and b2 = 2 moves
    assert set(state.destinations("c2")) == {"c3", "b2"}
    state.apply(("a2", "b2"))
    ruling = state.apply(("a3", "a2"))  # blue scout to a2
    assert ruling.kind == "move"
    ruling = state.apply(("b2", "b3"))  # captains meet: both go
    assert ruling.outcome == "both" and "b3" not in state.board and "b2" not in state.board
    assert state.turn == "blue"


def test_the_documented_fort_shelters_from_all_but_scouts() -> None:
    game = parse_game(doc_example(), "game-format.md")
    pieces = {"a1": ("red", "flag"), "b3": ("red", "captain"), "a4": ("red", "scout"),
              "b4": ("blue", "scout"), "c4": ("blue", "flag")}
    state = position(game, pieces)
    assert "b4" not in state.destinations("b3")
    assert state.why_illegal(("b3", "b4")) == {"code": "reason.sheltered", "params": {"station": "b4", "where": {"code": "kind.fort", "params": {}}}}
    assert "b4" in state.destinations("a4")
    assert state.apply(("a4", "b4")).outcome == "both"  # equal ranks


def test_installed_games_load() -> None:
    assert set(game_ids()) >= {"stratego", "lattaque", "luzhanqi"}
    for gid in game_ids():
        assert load_game(gid).id == gid


def broken(edit) -> GameFileError:  # type: ignore[no-untyped-def]
    """Parse the documented example after ``edit`` changed its document; the error it raises."""
    doc = yaml.safe_load(doc_example())
    edit(doc)
    with pytest.raises(GameFileError) as info:
        parse_game(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False), "broken.yaml")
    err = info.value
    assert str(err) == f"broken.yaml: {err.where}: {err.expected}"
    return err


def _set(path: list, value: object):  # type: ignore[no-untyped-def]
    def edit(doc: dict) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]
        node[path[-1]] = value
    return edit


def _del(path: list):  # type: ignore[no-untyped-def]
    def edit(doc: dict) -> None:
        node = doc
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
    return edit


BREAKAGES = [
    # (how it is broken, the edit, the path reported, words of what was expected)
    ("zero count", _set(["pieces", 3, "count"], 0), "pieces[3].count", "at least 1"),
    ("count as text", _set(["pieces", 1, "count"], "two"), "pieces[1].count", "whole number"),
    ("missing name", _del(["name"]), "name", "required key is missing"),
    ("unknown top key", _set(["colour"], "red"), "colour", "unknown key"),
    ("wrong format", _set(["format"], 2), "format", "expected format 1"),
    ("unknown station kind", _set(["stations", 2], ["c1", 2, 0, "swamp"]), "stations[2].kind", "station_kinds"),
    ("duplicate station", _set(["stations", 1], ["a1", 1, 0]), "stations[1].id", "used twice"),
    ("line to nowhere", _set(["lines", 0, "path"], "a1 b1 z9"), "lines[0].path[2]", "declared station"),
    ("one-station line", _set(["lines", 1, "path"], "a2"), "lines[1].path", "at least two stations"),
    ("unknown line kind", _set(["movements", "step", 0, "along"], ["rail"]), "movements.step[0].along[0]", "line kind"),
    ("unknown movement", _set(["pieces", 0, "moves"], "gallop"), "pieces[0].moves", "movement named"),
    ("immobile attacker", _set(["pieces", 2, "can_attack"], True), "pieces[2].can_attack", "cannot move"),
    ("bad outcome", _set(["clash", "rules", 1, "outcome"], "draw"), "clash.rules[1].outcome", "an outcome"),
    ("unknown attacker", _set(["clash", "rules", 2, "attacker"], "dragon"), "clash.rules[2].attacker", "piece id"),
    ("table row for no piece", _set(["clash", "table", "knight"], {"flag": "attacker"}), "clash.table.knight", "attacking piece"),
    ("clash incomplete", _set(["clash", "rules"], []), "clash", "an outcome for"),
    ("undeclared option in if", _set(["clash", "rules", 0, "if"], {"mines": "both"}), "clash.rules[0].if", "declared option"),
    ("option value not a choice", _set(["clash", "rules", 0, "if"], {"mine_mode": "some"}), "clash.rules[0].if", "takes one of"),
    ("default not a choice", _set(["options", "mine_mode", "default"], "gone"), "options.mine_mode.default", "choices"),
    ("engine option of the wrong kind", _set(["options", "reveal"], {"default": "loud", "doc": "x"}), "options.reveal", "'open' or 'silent'"),
    ("unknown hook", _set(["hooks"], ["three_squares"]), "hooks[0]", "a rule hook"),
    ("deploy zone missing", _set(["setup", "deploy"], "front"), "setup.deploy", "a zone name"),
    ("zone for one side only", _set(["setup", "zones", "back"], {"red": ["a1"]}), "setup.zones.back.blue", "required"),
    ("army does not fit", _set(["pieces", 1, "count"], 5), "setup.zones.home.red", "room for the army"),
    ("constraint says nothing", _set(["setup", "constraints", 0], {"pieces": ["flag"]}), "setup.constraints[0]", "zone"),
    ("win capture everything", _set(["win", "capture"], "*"), "win.capture", "ids of the pieces"),
    ("one side", _set(["sides"], ["red"]), "sides", "at least two"),
    ("decision for no option", _set(["decisions", 0, "option"], "nothing"), "decisions[0].option", "declared option"),
    ("exact without a number", _set(["movements", "dash", 1, "exact"], True), "movements.dash[1].exact", "max_steps"),
    ("zone selector not a list", _set(["setup", "zones", "home", "red"], {"y": 0}), "setup.zones.home.red.y", "list"),
    ("shelter exception for no piece", _set(["station_kinds", "fort", "shelter_except"], {"attackers": ["dragon"]}),
     "station_kinds.fort.shelter_except.attackers[0]", "piece id"),
]


@pytest.mark.parametrize(("edit", "where", "words"), [b[1:] for b in BREAKAGES], ids=[b[0] for b in BREAKAGES])
def test_broken_files_are_rejected_with_their_place(edit, where: str, words: str) -> None:  # type: ignore[no-untyped-def]
    err = broken(edit)
    assert err.file == "broken.yaml"
    assert err.where == where
    assert words in err.expected


def test_yaml_syntax_error_gives_line_and_column() -> None:
    with pytest.raises(GameFileError) as info:
        parse_game("format: 1\nid: [oops\n", "bad.yaml")
    assert info.value.file == "bad.yaml"
    assert re.fullmatch(r"line \d+, column \d+", info.value.where)
    assert "valid YAML" in info.value.expected


def test_not_a_mapping_at_all() -> None:
    with pytest.raises(GameFileError) as info:
        parse_game("- just\n- a list\n", "list.yaml")
    assert (info.value.where, info.value.expected) == ("(top level)", "expected a mapping, got a list")


def test_missing_file_is_a_game_file_error(tmp_path: Path) -> None:
    from controller.rules import load_game_file

    with pytest.raises(GameFileError) as info:
        load_game_file(tmp_path / "nothing.yaml")
    assert info.value.where == "(file)" and "nothing.yaml" in info.value.file
