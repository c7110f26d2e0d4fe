"""Which Chinese characters belong to one script only, for the tests that check a page or a name is written in the
script of its language: taken from the two catalogs (a character only one of them writes) and the game files'
piece names (each zh/zh_hans pair that differs), plus the Traditional/Simplified forms the game names use."""

from __future__ import annotations

import json
from pathlib import Path

import controller
from controller.rules import load_game

BUILTIN = sorted(p.stem for p in (Path(controller.__file__).parent / "rules" / "games").glob("*.yaml"))
CATALOGS = Path(controller.__file__).parent / "messages" / "catalogs"

#: the forms the game and piece names use, Traditional and Simplified in step (陸/陆, 國/国 ...)
_PAIRS = ("陸國戰電紀閃軍將帥師團營連長艦機場彈飛導衛驅掃魚潛擊輕輔鬥隊邏騎",
          "陆国战电纪闪军将帅师团营连长舰机场弹飞导卫驱扫鱼潜击轻辅斗队逻骑")


def catalog_text(lang: str) -> str:
    return "".join(json.loads((CATALOGS / f"{lang}.json").read_text(encoding="utf-8")).values())


def cjk(text: str) -> set[str]:
    return {c for c in text if "\u4e00" <= c <= "\u9fff"}


def _piece_pairs() -> set[tuple[str, str]]:
    return {(t, h) for g in BUILTIN for p in load_game(g).pieces
            if len(p.zh) == len(p.zh_hans) for t, h in zip(p.zh, p.zh_hans, strict=True) if t != h}


_HANT, _HANS = cjk(catalog_text("zh-Hant")), cjk(catalog_text("zh-Hans"))
_FORMS = {(t, h) for t, h in zip(*_PAIRS, strict=True) if t != h} | _piece_pairs()

#: characters only Traditional text writes: the Traditional catalog's own, and the Traditional form of each pair
TRADITIONAL_ONLY = (_HANT - _HANS) | {t for t, _ in _FORMS} | {"砲"}
#: characters only Simplified text writes: the Simplified form of each pair (the catalogs' difference alone is not
#: enough: a word one catalog uses and the other does not is not a script; so a form the Traditional catalog writes
#: too is left out)
SIMPLIFIED_ONLY = {h for _, h in _FORMS} - _HANT
