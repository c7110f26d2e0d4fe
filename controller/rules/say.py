"""Message objects: what the engine and the referee say, as data ({"code": KEY, "params": {...}}), never as words.

Words are made at the edges from one catalog per language (``controller.messages``). Params are structured values
named by what they hold (``piece``: a piece type id, ``side``/``owner``/``by``: a side id, ``station``/``from``/``to``:
a station id, a nested message object...), so a renderer knows how to say each one in any language.
"""

from __future__ import annotations

from typing import Any

Say = dict[str, Any]


def say(code: str, **params: Any) -> Say:
    """A message object: the catalog key ``code`` and its parameters (None values are left out)."""
    return {"code": code, "params": {k: v for k, v in params.items() if v is not None}}


def is_say(value: Any) -> bool:
    """Is ``value`` a message object?"""
    return isinstance(value, dict) and isinstance(value.get("code"), str)


def note(text: str | Say) -> Say:
    """A person's own words (the arbiter's reason for ending a game) as a message object; message objects pass."""
    return text if is_say(text) else say("verdict.arbiter", note=str(text))


def codes(value: Any) -> set[str]:
    """Every message code in ``value`` (a message object, or any JSON-like structure holding some)."""
    found: set[str] = set()
    if isinstance(value, dict):
        if is_say(value):
            found.add(value["code"])
        for v in value.values():
            found |= codes(v)
    elif isinstance(value, list | tuple):
        for v in value:
            found |= codes(v)
    return found
