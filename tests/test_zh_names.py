"""Every name a page shows in Chinese, in both scripts (issue 37): each game's and each piece's Simplified name
(``zh_hans``) holds no character only Traditional text writes, its Traditional name (``zh``, the zh-Hant pages'
words) none only Simplified text writes; the game meta carries both, and the Stratego/L'Attaque scout is 斥候."""

from __future__ import annotations

import pytest
from zh_script import BUILTIN, SIMPLIFIED_ONLY, TRADITIONAL_ONLY, catalog_text, cjk

from controller.rules import load_game


def test_the_check_knows_both_scripts() -> None:
    assert len(cjk(catalog_text("zh-Hant")) - cjk(catalog_text("zh-Hans"))) > 50  # the catalogs differ in script
    for old in ("西洋陸軍棋", "陸軍棋", "四國軍棋", "二十一世紀海軍棋"):  # the names zh-Hans pages showed before
        assert set(old) & TRADITIONAL_ONLY, old
    for old in ("军长", "旗舰", "炸弹", "军旗", "驱除舰"):  # the names zh-Hant pages showed before
        assert set(old) & SIMPLIFIED_ONLY, old
    assert not SIMPLIFIED_ONLY & cjk(catalog_text("zh-Hant")) and not TRADITIONAL_ONLY & cjk(catalog_text("zh-Hans"))


@pytest.mark.parametrize("game_id", BUILTIN)
def test_every_name_is_written_in_each_script(game_id: str) -> None:
    from web_referee.payloads import game_meta

    game = load_game(game_id)
    labels = {f"station {s.id}": s.label for s in game.stations if s.label}
    hans = {"game": game.zh_hans, **{f"piece {p.id}": p.zh_hans for p in game.pieces}, **labels}
    hant = {"game": game.zh, **{f"piece {p.id}": p.zh for p in game.pieces}, **labels}
    bad = {k: v for k, v in hans.items() if set(v) & TRADITIONAL_ONLY}
    assert not bad, f"{game_id}: Traditional characters in Simplified names: {bad}"
    bad = {k: v for k, v in hant.items() if set(v) & SIMPLIFIED_ONLY}
    assert not bad, f"{game_id}: Simplified characters in Traditional names: {bad}"
    assert game.zh and game.zh_hans and game.zh_hans != game.name
    meta = game_meta(game)
    assert (meta["zh"], meta["zh_hans"]) == (game.zh, game.zh_hans)
    assert [(p["zh"], p["zh_hans"]) for p in meta["pieces"]] == [(p.zh, p.zh_hans) for p in game.pieces]


def test_the_scout_is_written_in_its_usual_form() -> None:
    for game_id in ("stratego", "stratego_barrage", "lattaque"):
        scout = next(p for p in load_game(game_id).pieces if p.id == "scout")
        assert (scout.zh, scout.zh_hans) == ("斥候", "斥候"), game_id
