"""The shipped games' JSON mirrors (controller/rules/mirror.py): each matches its YAML file, a game read through its
mirror is the game its YAML makes, and a changed or foreign file is always read as YAML."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from controller.docreader import load_yaml
from controller.rules import load_game
from controller.rules.catalog import PACKAGE_GAMES
from controller.rules.loader import load_game_file, parse_game
from controller.rules.mirror import MIRRORS, mirror_path, mirrored

ROOT = Path(__file__).resolve().parent.parent
GAMES = sorted(PACKAGE_GAMES.glob("*.yaml"))


def test_every_shipped_game_has_a_mirror_made_from_its_current_file() -> None:
    out = subprocess.run([sys.executable, str(ROOT / "tools" / "mirror_games.py"), "--check"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert sorted(p.stem for p in MIRRORS.glob("*.json")) == sorted(p.stem for p in GAMES)


@pytest.mark.parametrize("path", GAMES, ids=lambda p: p.stem)
def test_a_game_read_through_its_mirror_is_the_game_its_yaml_makes(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert mirrored(path, text) == load_yaml(text)
    assert repr(load_game_file(path)) == repr(parse_game(text, str(path)))


def test_a_changed_file_is_read_as_yaml_not_from_its_stale_mirror() -> None:
    path = PACKAGE_GAMES / "stratego.yaml"
    text = path.read_text(encoding="utf-8")
    assert mirrored(path, text) is not None
    changed = text.replace("name: Stratego", "name: Stratego (house rules)", 1)
    assert changed != text and mirrored(path, changed) is None


def test_a_game_file_outside_the_package_is_never_mirrored(tmp_path: Path) -> None:
    (tmp_path / "parsed").mkdir()
    copy = tmp_path / "stratego.yaml"
    shutil.copy(PACKAGE_GAMES / "stratego.yaml", copy)
    # a mirror beside a user's file (even a well-made one) is not read: its YAML gets every document check
    shutil.copy(MIRRORS / "stratego.json", tmp_path / "parsed" / "stratego.json")
    assert mirror_path(copy) is None and mirrored(copy, copy.read_text(encoding="utf-8")) is None
    doc = json.loads((MIRRORS / "stratego.json").read_text(encoding="utf-8"))
    assert doc["document"]["id"] == "stratego"
    assert load_game(str(copy)).name == load_game("stratego").name
