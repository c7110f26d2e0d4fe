"""Words for players, made at the edge: one catalog per language renders a message object ``{"code", "params"}``.

The catalogs (``catalogs/en.json``, ``zh-Hans.json``, ``zh-Hant.json``) are flat ``{key: template}`` objects with
the same keys. Parameters are rendered by name: ``piece``/``*_piece`` as the piece's name in that language,
``player``/``side``/``owner``/``by``/``winner``/``*_side`` as the ``side.<id>`` entry, ``stations`` as a list of
labels, a nested message object (or a list of them) recursively; anything else as it is.

>>> render({"code": "fault.stopped", "params": {"why": {"code": "fault.journal", "params": {}}}}, "en")[:45]
'The referee has stopped: it cannot save the g'
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

LANGUAGES = ("en", "zh-Hans", "zh-Hant")
_SIDE_PARAMS = ("player", "side", "owner", "by", "winner")
_PIECE_NAME = {"en": "name", "zh-Hant": "zh", "zh-Hans": "zh_hans"}


@cache
def catalog(lang: str) -> dict[str, str]:
    """The catalog of one language (KeyError for a language we do not ship)."""
    if lang not in LANGUAGES:
        raise KeyError(f"no catalog for language {lang!r}: expected one of {', '.join(LANGUAGES)}")
    text = resources.files("controller.messages").joinpath("catalogs", f"{lang}.json").read_text(encoding="utf-8")
    return json.loads(text)


def is_say(value: Any) -> bool:
    return isinstance(value, dict) and isinstance(value.get("code"), str)


def render(say: dict[str, Any], lang: str, game: Any = None) -> str:
    """The words of one message object in ``lang`` (KeyError if its code is missing from the catalog)."""
    cat = catalog(lang)
    template = cat[say["code"]]
    params = {k: _param(k, v, lang, game) for k, v in (say.get("params") or {}).items()}
    return template.format(**params)


def _param(name: str, value: Any, lang: str, game: Any) -> str:
    cat = catalog(lang)
    if is_say(value):
        return render(value, lang, game)
    if isinstance(value, list):
        return cat["list.sep"].join(_param(name, v, lang, game) for v in value)
    if value is None:
        return ""
    if (name in _SIDE_PARAMS or name.endswith("_side")) and isinstance(value, str):
        return cat[f"side.{value}"]
    if (name == "piece" or name.endswith("_piece")) and isinstance(value, str) and game is not None:
        piece = next((p for p in game.pieces if p.id == value), None)
        if piece is not None:
            return str(getattr(piece, _PIECE_NAME[lang], None) or piece.name)
    return str(value)
