"""The public event contract announcers consume: which kinds exist, which keys each needs, and checking one."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from controller.errors import FaceDownError
from controller.rules.say import Say, is_say, say

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
    "notice": ("say",),
    # also published by the session: a seat's deployment accepted, the board's occupancy during setup,
    # and an arbiter's undo
    "setup": ("player", "status"),
    "board": (),
    "undo": ("turn",),
    # the referee's health (controller.referee.supervisor): it stopped, or the sensor link was lost / is back
    "fault": ("say",),
    "link": ("status", "say"),
    # a computer seat (controller.referee.computer_seat): where to put its tokens, which token to move where, a
    # move carried out wrongly, the bot stopped; read aloud and printed so the human at the board can act on it
    "bot": ("kind", "player", "say"),
}

#: The outcomes a public attack event may carry (an illegal attack is an ``illegal`` event instead).
ATTACK_OUTCOMES = ("attacker", "defender", "both", "bounce")


class EventError(FaceDownError, ValueError):
    """A published event does not have the shape the announcers were promised."""


class UnknownEventError(EventError):
    """A published event is of a kind the announcers do not know (announcers log it once and carry on)."""


def check_event(event: Mapping[str, Any]) -> str:
    """The kind of a well-formed public event; raises :class:`EventError` saying what is wrong otherwise."""
    if not isinstance(event, Mapping):
        raise EventError(f"an event must be a dict, got {type(event).__name__}")
    kind = event.get("event")
    if kind not in REQUIRED_KEYS:
        raise UnknownEventError(f"unknown event kind {kind!r}; known kinds: {', '.join(REQUIRED_KEYS)}")
    missing = [key for key in REQUIRED_KEYS[kind] if key not in event]
    if missing:
        raise EventError(f"{kind!r} event lacks {', '.join(repr(k) for k in missing)}: {dict(event)!r}")
    if kind == "attack" and event["outcome"] not in ATTACK_OUTCOMES:
        raise EventError(
            f"attack outcome {event['outcome']!r} is not one of {', '.join(ATTACK_OUTCOMES)}"
        )
    for key in ("reveals",):
        if key in event:
            _check_entries(event[key], kind, ("station", "owner", "piece"))
    if kind == "mismatch":
        _check_entries(event["stations"], kind, ("station", "found"))
    if kind == "fixup":
        _check_entries(event["steps"], kind, ("station", "action"))
    if kind == "game_over" and (
        not isinstance(event["winners"], list | tuple) or not all(isinstance(w, str) for w in event["winners"])
    ):
        raise EventError(f"game_over winners must be a list of side names, got {event['winners']!r}")
    return kind


def unknown_kind(event: Any, seen: set[str], log: logging.Logger) -> bool:
    """True if ``event`` is of a kind announcers do not know; logs a warning the first time each kind is met.

    Announcers skip such events rather than fail, so a new kind of event never silences a table; a
    malformed event of a known kind still raises.
    """
    kind = event.get("event") if isinstance(event, Mapping) else None
    if isinstance(event, Mapping) and kind in REQUIRED_KEYS:
        return False
    label = repr(kind)
    if label not in seen:
        seen.add(label)
        log.warning("ignoring events of unknown kind %s (known: %s)", label, ", ".join(REQUIRED_KEYS))
    return True


def _check_entries(entries: Any, kind: str, keys: tuple[str, ...]) -> None:
    if not isinstance(entries, list | tuple):
        raise EventError(f"{kind!r} event needs a list of entries, got {entries!r}")
    for entry in entries:
        if not isinstance(entry, Mapping) or any(key not in entry for key in keys):
            raise EventError(f"each {kind!r} entry needs {', '.join(keys)}; got {entry!r}")


def event_say(event: Mapping[str, Any]) -> Say:
    """The message object of a public event: its own ``say``, else one built from its structured fields (events
    made by hand, or by an older publisher). Announcers render only this: the public form, never a private reason."""
    if is_say(event.get("say")):
        return event["say"]
    kind = event.get("event")
    ends = {"from": event.get("from"), "to": event.get("to")}
    if kind in ("start", "turn"):
        return say(f"event.{kind}", player=event.get("player"))
    if kind == "move":
        return say("event.move_hidden", player=event.get("player"), **ends)
    if kind == "attack":
        from controller.referee.steps import attack_say

        return attack_say(event)
    if kind == "illegal":
        return say("event.illegal", player=event.get("player"), reason=say("reason.not_allowed", station=event.get("from")))
    if kind == "mismatch":
        return say("event.mismatch_stations", stations=[e.get("station") for e in event.get("stations", [])])
    if kind == "fixup":
        steps = [s["say"] for s in event.get("steps", []) if is_say(s.get("say"))]
        return say("event.fixup", steps=steps) if steps else say("event.set_board")
    if kind == "game_over":
        winners = list(event.get("winners") or [])
        reason = event.get("reason") if is_say(event.get("reason")) else say("verdict.unsaid")
        if not winners:
            return say("event.game_over_draw", reason=reason)
        return say("event.game_over", winners=[say(f"side.{w}") for w in winners], reason=reason)
    if kind == "setup":
        return say("setup.registered" if event.get("status") == "registered" else "setup.rejected", player=event.get("player"), count=0)
    if kind == "undo":
        return say("event.undo", player=event.get("turn"), ply=event.get("ply", ""))
    return say(f"event.{kind}")
