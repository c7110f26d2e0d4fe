"""Games and hooks from outside the package: game files in $XDG_CONFIG_HOME/facedown/games and $FACEDOWN_GAMES_DIR
(listed with where they came from, shadowing, a broken file reported, not fatal), the game file kept in the journal
(replay uses the kept copy after the file changed), and a rule hook registered by a separate distribution through
the ``facedown.hooks`` entry points (the example of docs/game-format.md, installed as a .dist-info on sys.path)."""

from __future__ import annotations

import random
import re
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from test_write_a_game import guide_game_text

from controller.cli import main
from controller.referee.gamefile import file_of, journaled
from controller.referee.journal import Journal
from controller.referee.replay import rebuild
from controller.rules import RulesError, catalog, game_ids, load_game, new_game, parse_game
from controller.rules.deploy import random_deployment
from controller.rules.hooks import HOOKS

FORMAT_DOC = Path(__file__).resolve().parents[1] / "docs" / "game-format.md"


@pytest.fixture
def folders(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """(the user games folder under a fresh $XDG_CONFIG_HOME, a $FACEDOWN_GAMES_DIR folder), both empty."""
    user = tmp_path / "config" / "facedown" / "games"
    extra = tmp_path / "extra"
    user.mkdir(parents=True)
    extra.mkdir()
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("FACEDOWN_GAMES_DIR", str(extra))
    return user, extra


def test_games_from_every_folder_with_where_they_came_from(folders: tuple[Path, Path], capsys: pytest.CaptureFixture[str]) -> None:
    user, extra = folders
    text = guide_game_text()
    (user / "junqi_duel.yaml").write_text(text, encoding="utf-8")
    (extra / "duel_b.yaml").write_text(text.replace("id: junqi_duel", "id: duel_b"), encoding="utf-8")
    (user / "duel_b.yaml").write_text(text.replace("id: junqi_duel", "id: duel_b"), encoding="utf-8")  # shadowed
    (user / "stratego.yaml").write_text(text.replace("id: junqi_duel", "id: stratego"), encoding="utf-8")  # shadowed
    (user / "broken.yaml").write_text(text.replace("id: junqi_duel", "id: broken").replace("rank: 1,", "rank: one,"), encoding="utf-8")
    (user / "misnamed.yaml").write_text(text, encoding="utf-8")  # its id is junqi_duel, its name is not

    assert {"junqi_duel", "duel_b", "broken", "misnamed", "stratego"} <= set(game_ids())
    assert [src.origin for src in catalog.sources() if src.id in ("stratego", "duel_b", "junqi_duel")] == [
        "package", "$FACEDOWN_GAMES_DIR", "$XDG_CONFIG_HOME/facedown/games"]
    assert load_game("stratego").file.endswith("controller/rules/games/stratego.yaml")  # a package game is never replaced
    assert main(["games"]) == 1  # a game file that does not load is listed, and the status says so
    out = [ln for ln in capsys.readouterr().out.splitlines() if "[package]" not in ln]
    assert f"duel_b             Junqi Duel (軍棋對決): 2 sides, 12 pieces each, 30 stations [$FACEDOWN_GAMES_DIR: {extra / 'duel_b.yaml'}]" in out
    assert f"duel_b             (shadowed by {extra / 'duel_b.yaml'}) [$XDG_CONFIG_HOME/facedown/games: {user / 'duel_b.yaml'}]" in out
    assert f"stratego           (shadowed by {catalog.PACKAGE_GAMES / 'stratego.yaml'}) [$XDG_CONFIG_HOME/facedown/games: {user / 'stratego.yaml'}]" in out
    [broken] = [ln for ln in out if ln.startswith("broken ")]
    assert "does not load: " in broken and "pieces[0].rank" in broken
    [misnamed] = [ln for ln in out if ln.startswith("misnamed ")]
    assert "does not load: " in misnamed and "id: the file's name, 'misnamed' (got 'junqi_duel')" in misnamed
    assert any(ln.startswith("junqi_duel ") and ln.endswith(f"[$XDG_CONFIG_HOME/facedown/games: {user / 'junqi_duel.yaml'}]") for ln in out)


def test_a_changed_game_file_does_not_change_a_journaled_game(folders: tuple[Path, Path], tmp_path: Path) -> None:
    user, _ = folders
    path = user / "junqi_duel.yaml"
    path.write_text(guide_game_text(), encoding="utf-8")
    state = new_game("junqi_duel")
    rng = random.Random(4)
    with Journal(tmp_path / "j.sqlite") as j:
        gid = j.new_game("junqi_duel", dict(state.options), board="sim", game_file=file_of(state.game))
        for side in state.game.sides:
            placement = random_deployment(state.game, side, rng)
            state.deploy(side, placement)
            j.append(gid, "deploy", {"side": side, "placement": placement})
        for _ in range(30):
            if state.phase != "play":
                break
            side = state.turn
            frm, to = rng.choice(state.legal_moves())
            state.apply((frm, to))
            j.append(gid, "move", {"player": side, "side": side, "from": frm, "to": to})
        kept = j.game_file(gid)
        assert kept is not None and kept.text == path.read_text(encoding="utf-8") and kept.file == str(path)
        # the file changes under the journal: a different board would refuse these deployments
        path.write_text(guide_game_text().replace("home: {red: {y: [0, 1, 2]}", "home: {red: {y: [0, 1]}"), encoding="utf-8")
        with pytest.raises(Exception):  # noqa: B017 - by id, the changed file cannot take the journaled setup
            rebuild(j.events(gid))
        again = rebuild(j.events(gid), journaled(j, gid))
        assert again.ply == state.ply and {s: p.type for s, p in again.board.items()} == {s: p.type for s, p in state.board.items()}
    with sqlite3.connect(tmp_path / "j.sqlite") as db:  # the kept copy is append-only, like the events
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            db.execute("UPDATE game_files SET text = 'x'")


def test_a_journal_from_before_game_files_still_replays(tmp_path: Path) -> None:
    with Journal(tmp_path / "old.sqlite") as j:
        gid = j.new_game("stratego", {}, board="sim")
        assert j.game_file(gid) is None and journaled(j, gid) is None
        assert rebuild(j.events(gid)).game.id == "stratego"


# ---------------------------------------------------------------------------------------------------- hook plugins
def _doc_block(lang: str, marker: str) -> str:
    blocks = re.findall(rf"```{lang}\n(.*?)```", FORMAT_DOC.read_text(encoding="utf-8"), flags=re.S)
    return next(b for b in blocks if marker in b)


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A separate distribution, `mygames`, with the hook of docs/game-format.md, installed as its package and its
    .dist-info (what pip writes) in a folder on sys.path."""
    site = tmp_path / "site"
    (site / "mygames").mkdir(parents=True)
    (site / "mygames" / "__init__.py").write_text("", encoding="utf-8")
    (site / "mygames" / "hooks.py").write_text(_doc_block("python", "class NoRetreat"), encoding="utf-8")
    info = site / "mygames-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: mygames\nVersion: 0.1\n", encoding="utf-8")
    # the doc's pyproject lines, as the build backend writes them into entry_points.txt
    toml = _doc_block("toml", "facedown.hooks")
    points = [ln.replace('"', "") for ln in toml.splitlines() if "=" in ln and not ln.startswith(("#", "["))]
    (info / "entry_points.txt").write_text("[facedown.hooks]\n" + "\n".join(points) + "\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(site))
    HOOKS.refresh()
    yield site
    monkeypatch.undo()
    for name in [m for m in sys.modules if m == "mygames" or m.startswith("mygames.")]:
        del sys.modules[name]
    HOOKS.refresh()


def test_a_hook_from_another_distribution(plugin: Path) -> None:
    assert HOOKS.origin("no_retreat") == "mygames: mygames.hooks:NoRetreat"
    game = parse_game(guide_game_text().replace("hooks: [reveal_flag_on_commander_loss]", "hooks: [reveal_flag_on_commander_loss, no_retreat]"))
    state = new_game(game)
    rng = random.Random(1)
    for side in game.sides:
        state.deploy(side, random_deployment(game, side, rng))
    at = next(s for s, p in state.board.items() if p.owner == "red" and p.type == "lieutenant")
    lieutenant = state.board.pop(at)
    for s in ("b2", "b3"):
        state.board.pop(s, None)
    state.board["b3"] = lieutenant  # red to move, its lieutenant on b3 with b2 behind it empty
    frm, back = "b3", "b2"
    assert state.turn == "red" and state.why_illegal(("b3", "c3")) != "no retreat: pieces only go forward or sideways"
    assert state.why_illegal((frm, back)) == "no retreat: pieces only go forward or sideways"
    assert (frm, back) not in state.legal_moves()


def test_a_broken_or_clashing_plugin_is_named(plugin: Path) -> None:
    (plugin / "mygames" / "hooks.py").write_text("raise ImportError('no numpy here')\n", encoding="utf-8")
    HOOKS.refresh()
    game = parse_game(guide_game_text().replace("hooks: [reveal_flag_on_commander_loss]", "hooks: [no_retreat]"))  # the name is known
    with pytest.raises(RulesError, match=r"rule hook 'no_retreat' \(mygames: mygames.hooks:NoRetreat\) cannot be loaded: ImportError: no numpy here"):
        new_game(game)
    assert new_game("luzhanqi").game.id == "luzhanqi"  # other games are not stopped by it
    other = plugin / "other-0.1.dist-info"
    other.mkdir()
    (other / "METADATA").write_text("Metadata-Version: 2.1\nName: other\nVersion: 0.1\n", encoding="utf-8")
    (other / "entry_points.txt").write_text("[facedown.hooks]\ntwo_squares = other:TwoSquares\n", encoding="utf-8")
    HOOKS.refresh()
    with pytest.raises(RulesError, match=r"rule hook 'two_squares' is registered twice: by .* and by .*"):
        list(HOOKS)
    with pytest.raises(RulesError, match="registered twice"):
        parse_game(guide_game_text())


def test_the_web_replay_and_record_use_the_kept_game_file_after_the_file_is_gone(folders: tuple[Path, Path], tmp_path: Path) -> None:
    from controller.referee.table import open_table
    from controller.sensing.sim import SimBoard
    from web_referee import payloads

    _, extra = folders
    path = extra / "junqi_duel.yaml"
    path.write_text(guide_game_text(), encoding="utf-8")
    game = load_game("junqi_duel")
    table = open_table("junqi_duel", board=SimBoard(game.station_ids, settle_ms=20), board_kind="sim",
                       journal_path=tmp_path / "j.sqlite", resume=False)
    try:
        rng = random.Random(2)
        for side in game.sides:
            assert table.session.register_setup(side, random_deployment(table.game, side, rng)) == []
        path.unlink()  # the game file is gone, the journal kept its text
        steps = payloads.replay_for(table, "arbiter")["steps"]
        assert steps and steps[0]["ruling"] is None and len(steps[0]["view"]["pieces"]) == 24
        assert "Junqi Duel" in payloads.record_text(table)
    finally:
        table.stop()
