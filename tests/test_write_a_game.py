"""docs/write-a-game.md, followed as a newcomer would: its YAML blocks, one after the other, are the game file; put
in a folder named by $FACEDOWN_GAMES_DIR it is listed with where it came from, explained, given a draft hardware
profile, played through `facedown script` into a journal, and shown from the journal after the file is deleted.
The loader's refusals the guide quotes are checked word for word."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from physical import random_game_script

from controller.cli import main
from controller.rules import GameFileError, UnknownGameError, load_game, parse_game
from controller.sensing.profile import parse_profile

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "write-a-game.md"


def guide_game_text() -> str:
    """The game file the guide builds: its ```yaml blocks in order."""
    blocks = re.findall(r"```yaml\n(.*?)```", GUIDE.read_text(encoding="utf-8"), flags=re.S)
    return "\n".join(b.rstrip("\n") for b in blocks) + "\n"


def test_the_guides_game_loads_as_written() -> None:
    game = parse_game(guide_game_text(), "write-a-game.md")
    assert game.id == "junqi_duel" and len(game.stations) == 30
    assert {s: sum(p.count for p in game.pieces) for s in game.sides} == {"red": 12, "blue": 12}
    assert game.hooks == ("reveal_flag_on_commander_loss",)


def test_the_refusals_the_guide_quotes() -> None:
    text = guide_game_text()
    guide = " ".join(GUIDE.read_text(encoding="utf-8").split())
    too_many = text.replace("{id: captain, name: Captain, zh: 連長, zh_hans: 连长, count: 2", "{id: captain, name: Captain, zh: 連長, zh_hans: 连长, count: 5")
    with pytest.raises(GameFileError) as err:
        parse_game(too_many, "junqi_duel.yaml")
    assert f"`{err.value.where}: {err.value.expected}`" in guide
    assert err.value.expected == "expected room for the army of 15 pieces; the zone has 15 stations, 1 of them must start empty (c2): 14 usable"
    overlap = text.replace("home: {red: {y: [0, 1, 2]}, blue: {y: [3, 4, 5]}}", "home: {red: {y: [0, 1, 2]}, blue: {y: [2, 3, 4, 5]}}")
    with pytest.raises(GameFileError, match=r"setup.zones.home: .*red's and blue's share 5 stations: a3, b3, c3, d3, e3"):
        parse_game(overlap, "junqi_duel.yaml")


def test_follow_the_guide(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    games = tmp_path / "my games"
    games.mkdir()
    path = games / "junqi_duel.yaml"
    path.write_text(guide_game_text(), encoding="utf-8")
    monkeypatch.setenv("FACEDOWN_GAMES_DIR", str(games))

    assert main(["games"]) == 0
    listed = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("junqi_duel ")]
    assert listed == [f"junqi_duel         Junqi Duel (軍棋對決): 2 sides, 12 pieces each, 30 stations [$FACEDOWN_GAMES_DIR: {path}]"]
    assert main(["rules", "junqi_duel"]) == 0
    assert "工兵" in capsys.readouterr().out

    # a draft profile the profile loader accepts, a channel for every station
    assert main(["profile", "new", "junqi_duel", "--out", str(tmp_path / "board.yaml")]) == 0
    profile = parse_profile((tmp_path / "board.yaml").read_text(encoding="utf-8"), "board.yaml")
    assert profile.game == "junqi_duel" and set(profile.channels) == set(load_game("junqi_duel").station_ids)
    assert main(["profile", "new", "junqi_duel", "--out", str(tmp_path / "board.yaml")]) == 2  # never overwrites
    capsys.readouterr()

    # played through `facedown script` into a journal, to the end
    script = random_game_script("junqi_duel", seed=3, max_plies=400)
    lines = tmp_path / "game.jsonl"
    lines.write_text("".join(json.dumps(x) + "\n" for x in script.lines), encoding="utf-8")
    journal = str(tmp_path / "journal.sqlite")
    assert main(["script", "junqi_duel", str(lines), "--journal", journal]) == 0
    events = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    plies = script.state.ply if script.state is not None else -1
    assert sum(e["event"] in ("move", "attack") for e in events) == plies and events[-1]["event"] == "game_over"

    # the file is gone: the game is no longer known, but its record still shows, from the journal's copy
    path.unlink()
    with pytest.raises(UnknownGameError):
        load_game("junqi_duel")
    assert main(["record", "show", "1", "--journal", journal]) == 0
    shown = capsys.readouterr().out.splitlines()
    assert shown[0].startswith("game 1: Junqi Duel, ") and len(shown) == 1 + plies
    assert main(["record", "export", "1", "--journal", journal]) == 0
    assert "Game:     Junqi Duel (junqi_duel), journal game 1" in capsys.readouterr().out
