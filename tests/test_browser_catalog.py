"""The board page's words: the three catalogs (English, Simplified and Traditional Chinese) have the same keys and the
same placeholders, every ``page.*`` key the page's scripts, template and board drawing use is in all three, every
side of every game has a name, and the web app serves the catalogs at /i18n/<lang>.json."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import controller
from controller.rules import game_ids, load_game

ROOT = Path(__file__).resolve().parent.parent
CATALOGS = Path(controller.__file__).parent / "messages" / "catalogs"
LANGS = ("en", "zh-Hans", "zh-Hant")
PAGE_FILES = [*(ROOT / "web_referee" / "static").glob("*.js"), ROOT / "web_referee" / "templates" / "page.html",
              ROOT / "controller" / "board_svg.py"]


def _catalog(lang: str) -> dict[str, str]:
    return json.loads((CATALOGS / f"{lang}.json").read_text(encoding="utf-8"))


def test_the_three_catalogs_have_the_same_keys_and_placeholders() -> None:
    cats = {lang: _catalog(lang) for lang in LANGS}
    keys = set(cats["en"])
    for lang, cat in cats.items():
        assert set(cat) == keys, f"{lang}: missing {sorted(keys - set(cat))}, extra {sorted(set(cat) - keys)}"
        assert list(cat) == sorted(cat), f"{lang}.json: keys are not sorted"
        for key, text in cat.items():
            assert isinstance(text, str) and text, (lang, key)
            assert set(re.findall(r"\{(\w+)\}", text)) == set(re.findall(r"\{(\w+)\}", cats["en"][key])), (lang, key)


def test_every_page_key_in_use_is_in_every_catalog() -> None:
    used: set[str] = set()
    dynamic: set[str] = set()
    for f in PAGE_FILES:
        text = f.read_text(encoding="utf-8")
        used |= set(re.findall(r"""["'`](page\.[a-z0-9_.]+[a-z0-9_])["'`]""", text))
        dynamic |= set(re.findall(r"`(page\.[a-z0-9_.]+)\.\$\{", text))  # `page.log.outcome.${...}`
    assert len(used) > 100, sorted(used)
    for lang in LANGS:
        cat = _catalog(lang)
        missing = sorted(k for k in used if k not in cat)
        assert not missing, f"{lang}: {missing}"
        for prefix in dynamic:
            assert any(k.startswith(prefix + ".") for k in cat), (lang, prefix)
        # nothing in the catalog's page part is left unused (words no page shows drift out of date)
        unused = sorted(k for k in cat if k.startswith("page.") and k not in used
                        and not any(k.startswith(p + ".") for p in dynamic))
        assert not unused, f"{lang}: unused page keys {unused}"


@pytest.mark.parametrize("game", game_ids())
def test_every_side_has_a_name_in_every_language(game: str) -> None:
    for lang in LANGS:
        cat = _catalog(lang)
        for side in load_game(game).sides:
            assert f"side.{side}" in cat, (lang, game, side)


def test_the_catalogs_are_served(tmp_path: Path) -> None:
    from controller.setups_store import SetupStore
    from harness.web_game import Game
    from web_referee.app import create_app

    game = Game("stratego", tmp_path)
    client = create_app(game.table, setups=SetupStore(tmp_path / "setups")).test_client()
    for lang in LANGS:
        resp = client.get(f"/i18n/{lang}.json")
        assert resp.status_code == 200 and resp.mimetype == "application/json"
        assert resp.get_json() == _catalog(lang)
    bad = client.get("/i18n/fr.json")
    assert bad.status_code == 404 and "zh-Hans" in bad.get_json()["error"]
