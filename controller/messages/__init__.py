"""Words for players, made at the edges: one catalog per language renders the message objects every module passes.

A message object is ``{"code": KEY, "params": {...}}`` (see ``controller.rules.say``). ``render`` looks ``KEY`` up in
the language's catalog (``catalogs/<lang>.json``: flat JSON, ``{param}`` placeholders) and turns each param into words
by its name: ``piece``/``*_piece`` -> the piece's name in that language (game file: ``name``, ``zh_hans``, ``zh``);
``player``/``side``/``owner``/``by``/``winner``/``*_side`` -> the ``side.<id>`` key; ``station``/``from``/``to``/
``*_station`` and ``stations`` -> station labels; a nested message object (or a list of them) -> rendered in turn,
lists joined with ``list.sep`` (clauses: message objects) or ``list.names_sep`` (names); anything else as is. A key missing from a catalog is an error, never a fallback.
"""

from __future__ import annotations

import json
import string
from collections.abc import Callable
from functools import lru_cache
from importlib import resources
from typing import Any

from controller.errors import FaceDownError
from controller.rules.model import GameDef
from controller.rules.say import Say, codes, is_say, say

LANGS = ("en", "zh-Hans", "zh-Hant")
LANGUAGES = LANGS  # the name the web app uses
SIDE_PARAMS = frozenset({"player", "side", "owner", "by", "winner"})
STATION_PARAMS = frozenset({"station", "from", "to", "at"})

__all__ = ["LANGS", "LANGUAGES", "MessageError", "Say", "catalog", "codes", "is_say", "piece_name", "refusal_words", "render", "say"]


class MessageError(FaceDownError, LookupError):
    """A message cannot be rendered: an unknown language, a code missing from a catalog, or a missing param."""


@lru_cache(maxsize=8)
def catalog(lang: str) -> dict[str, str]:
    """The catalog of ``lang`` (one of LANGS), read once from the package's data."""
    if lang not in LANGS:
        raise MessageError(f"unknown language {lang!r}: expected one of {', '.join(LANGS)}")
    text = resources.files(__package__).joinpath("catalogs", f"{lang}.json").read_text(encoding="utf-8")
    data = json.loads(text)
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise MessageError(f"catalogs/{lang}.json: expected a flat object of strings")
    return data


def placeholders(template: str) -> set[str]:
    """The ``{param}`` names a catalog template uses."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def piece_name(game: GameDef | None, piece: str, lang: str) -> str:
    """A piece type's name in ``lang`` (its id when no game is given or the game has no such piece)."""
    ptype = game.piece_by_id.get(piece) if game is not None else None
    if ptype is None:
        return piece
    if lang == "zh-Hans":
        return ptype.zh_hans or ptype.zh
    if lang == "zh-Hant":
        return ptype.zh
    return ptype.name


def _station(game: GameDef | None, station: Any, spoken: Callable[[str], str] | None = None) -> str:
    st = game.station_by_id.get(station) if game is not None and isinstance(station, str) else None
    label = str((getattr(st, "label", None) if st is not None else None) or station)
    return spoken(label) if spoken is not None else label


def _value(name: str, value: Any, lang: str, game: GameDef | None, spoken: Callable[[str], str] | None) -> str:
    words = catalog(lang)
    if is_say(value):
        return render(value, lang, game, station=spoken)
    if isinstance(value, list | tuple):
        # a list of message objects is a list of clauses (``list.sep``: "; ", "；"); a list of names, sides or
        # stations a list of names (``list.names_sep``: ", ", "、")
        if name == "stations":
            return words["list.names_sep"].join(_station(game, s, spoken) for s in value)
        sep = words["list.sep"] if value and all(is_say(v) for v in value) else words["list.names_sep"]
        return sep.join(_value(name, v, lang, game, spoken) for v in value)
    if value is None:
        return ""
    if name == "piece" or name.endswith("_piece"):
        return piece_name(game, str(value), lang)
    if name in SIDE_PARAMS or name.endswith("_side"):
        key = f"side.{value}"
        if key not in words:
            raise MessageError(f"catalogs/{lang}.json has no key {key!r}")
        return words[key]
    if name in STATION_PARAMS or name.endswith("_station"):
        return _station(game, value, spoken)
    return str(value)


def render(message: Say, lang: str, game: GameDef | None = None, *, station: Callable[[str], str] | None = None) -> str:
    """``message`` in words of ``lang`` (``en``, ``zh-Hans``, ``zh-Hant``), piece names from ``game``'s file;
    ``station``: how to write a station label (a voice spells it out), default as it is."""
    if not is_say(message):
        raise MessageError(f"not a message object: {message!r}")
    words = catalog(lang)
    code = message["code"]
    template = words.get(code)
    if template is None:
        raise MessageError(f"catalogs/{lang}.json has no key {code!r}")
    params = message.get("params") or {}
    values = {}
    for name in placeholders(template):
        if name not in params:
            raise MessageError(f"{code} in {lang} needs param {name!r}, the message has {sorted(params)}")
        values[name] = _value(name, params[name], lang, game, station)
    return template.format(**values)


def refusal_words(exc: Exception, game: GameDef | None = None, lang: str = "en") -> str:
    """An engine error for an operator's error message: an illegal move's reason in words, anything else as is."""
    reason = getattr(exc, "reason", None)
    return render(reason, lang, game) if is_say(reason) else str(exc)
