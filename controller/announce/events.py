"""The public event contract announcers consume: which kinds exist, which keys each needs, and checking one."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

#: Every public event kind, with the keys it must carry (optional keys such as ``ply`` are not listed).
REQUIRED_KEYS: dict[str, tuple[str, ...]] = {
    "start": ("player",),
    "turn": ("player",),
    "move": ("player", "from", "to"),
    "attack": ("player", "from", "to", "outcome", "defender"),
    "illegal": ("player", "from", "to"),
    "mismatch": ("stations",),
    "fixup": ("steps",),
    "fixup_done": (),
    "game_over": ("winners",),
    "paused": (),
    "resumed": (),
    "notice": ("message",),
}

#: The outcomes a public attack event may carry (an illegal attack is an ``illegal`` event instead).
ATTACK_OUTCOMES = ("attacker", "defender", "both", "bounce")


class EventError(ValueError):
    """A published event does not have the shape the announcers were promised."""


def check_event(event: Mapping[str, Any]) -> str:
    """The kind of a well-formed public event; raises :class:`EventError` saying what is wrong otherwise."""
    if not isinstance(event, Mapping):
        raise EventError(f"an event must be a dict, got {type(event).__name__}")
    kind = event.get("event")
    if kind not in REQUIRED_KEYS:
        raise EventError(f"unknown event kind {kind!r}; known kinds: {', '.join(REQUIRED_KEYS)}")
    missing = [key for key in REQUIRED_KEYS[kind] if key not in event]
    if missing:
        raise EventError(f"{kind!r} event lacks {', '.join(repr(k) for k in missing)}: {dict(event)!r}")
    if kind == "attack" and event["outcome"] not in ATTACK_OUTCOMES:
        raise EventError(
            f"attack outcome {event['outcome']!r} is not one of {', '.join(ATTACK_OUTCOMES)}"
        )
    if kind == "mismatch":
        _check_entries(event["stations"], kind, ("station", "found"))
    if kind == "fixup":
        _check_entries(event["steps"], kind, ("station", "do"))
    if kind == "game_over" and (
        not isinstance(event["winners"], list | tuple) or not all(isinstance(w, str) for w in event["winners"])
    ):
        raise EventError(f"game_over winners must be a list of side names, got {event['winners']!r}")
    return kind


def _check_entries(entries: Any, kind: str, keys: tuple[str, ...]) -> None:
    if not isinstance(entries, list | tuple):
        raise EventError(f"{kind!r} event needs a list of entries, got {entries!r}")
    for entry in entries:
        if not isinstance(entry, Mapping) or any(key not in entry for key in keys):
            raise EventError(f"each {kind!r} entry needs {', '.join(keys)}; got {entry!r}")
