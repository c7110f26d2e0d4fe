"""Every name a page shows in Chinese, in both scripts (issue 37): each game's and each piece's Simplified name
(``zh_hans``) holds no character that only the Traditional catalog writes, the game meta carries both, and the
Stratego/L'Attaque scout is 斥候."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import controller
from controller.rules import load_game

BUILTIN = sorted(p.stem for p in (Path(controller.__file__).parent / "rules" / "games").glob("*.yaml"))
CATALOGS = Path(controller.__file__).parent / "messages" / "catalogs"


def _values(lang: str) -> str:
    return "".join(json.loads((CATALOGS / f"{lang}.json").read_text(encoding="utf-8")).values())


def _cjk(text: str) -> set[str]:
    return {c for c in text if "\u4e00" <= c <= "\u9fff"}


#: characters the Traditional catalog writes and the Simplified one never does, and the Traditional forms the game
#: files' names use (their pieces' zh/zh_hans pairs, and the forms of the game names: 陸 國 戰 電 紀 閃 軍)
TRADITIONAL_ONLY = (_cjk(_values("zh-Hant")) - _cjk(_values("zh-Hans"))) | set("陸國戰電紀閃軍將帥師團營連長艦機場彈飛導砲衛")
TRADITIONAL_ONLY |= {t for g in BUILTIN for p in load_game(g).pieces
                     if len(p.zh) == len(p.zh_hans) for t, h in zip(p.zh, p.zh_hans, strict=True) if t != h}


def test_the_check_knows_the_traditional_forms() -> None:
    assert len(_cjk(_values("zh-Hant")) - _cjk(_values("zh-Hans"))) > 50  # the catalogs differ in script
    for old in ("西洋陸軍棋", "陸軍棋", "四國軍棋", "二十一世紀海軍棋"):  # the names zh-Hans pages showed before
        assert set(old) & TRADITIONAL_ONLY, old


@pytest.mark.parametrize("game_id", BUILTIN)
def test_every_name_has_a_simplified_form(game_id: str) -> None:
    from web_referee.payloads import game_meta

    game = load_game(game_id)
    names = {"game": game.zh_hans, **{f"piece {p.id}": p.zh_hans for p in game.pieces}}
    names.update({f"station {s.id}": s.label for s in game.stations if s.label})
    bad = {k: v for k, v in names.items() if set(v) & TRADITIONAL_ONLY}
    assert not bad, f"{game_id}: Traditional characters in Simplified names: {bad}"
    assert game.zh and game.zh_hans and game.zh_hans != game.name
    meta = game_meta(game)
    assert (meta["zh"], meta["zh_hans"]) == (game.zh, game.zh_hans)


def test_the_scout_is_written_in_its_usual_form() -> None:
    for game_id in ("stratego", "stratego_barrage", "lattaque"):
        scout = next(p for p in load_game(game_id).pieces if p.id == "scout")
        assert (scout.zh, scout.zh_hans) == ("斥候", "斥候"), game_id
