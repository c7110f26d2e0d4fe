"""Announcers: subscribers that tell the table each public event (buzzer, status LEDs, voice, console line).

Every announcer has ``announce(event: dict) -> None`` and ``close() -> None``; events are the session's
public events (see :mod:`controller.announce.events`), which never carry a hidden rank.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from controller.errors import FaceDownError

from .buzzer import DEFAULT_PIN, BuzzerAnnouncer
from .console import ConsoleAnnouncer, describe
from .events import EventError, check_event
from .lights import LightsAnnouncer
from .patterns import PATTERNS, Pattern, pattern_for
from .voice import EspeakMissingError, VoiceAnnouncer, available, phrase

__all__ = [
    "ANNOUNCER_NAMES", "DEFAULT_PIN", "PATTERNS", "Announcer", "AnnouncerChoiceError", "BuzzerAnnouncer", "ConsoleAnnouncer",
    "EspeakMissingError", "EventError", "LightsAnnouncer", "Pattern", "VoiceAnnouncer", "available",
    "check_event", "describe", "make_announcers", "pattern_for", "phrase",
]

#: The names :func:`make_announcers` understands.
ANNOUNCER_NAMES = ("console", "buzzer", "buzzer-plain", "lights", "voice-zh", "voice-en")


class AnnouncerChoiceError(FaceDownError, ValueError):
    """An announcer name that is not one of ANNOUNCER_NAMES, or one asked for without what it needs."""


class Announcer(Protocol):
    """What the session publishes public events to."""

    def announce(self, event: dict) -> None: ...

    def close(self) -> None: ...


def make_announcers(
    names: list[str],
    game: Any = None,
    *,
    pin: int | str = DEFAULT_PIN,
    pin_factory: Any = None,
    lights: Mapping[str, int | str] | None = None,
    alert: int | str | None = None,
    lang: str = "en",
) -> list[Announcer]:
    """Build announcers by name, in order.

    ``console``: a line per event on stdout; ``buzzer``: passive piezo on ``pin`` (pitches and rhythm);
    ``buzzer-plain``: active buzzer on ``pin`` (rhythm only); ``lights``: side LEDs on the ``lights``
    pins plus an optional ``alert`` LED; ``voice-zh`` / ``voice-en``: espeak-ng in Mandarin or English.
    ``lang``: the console's language (``en``, ``zh-Hans``, ``zh-Hant``).
    If one cannot be built, those already built are closed and the error is raised.
    """
    unknown = [name for name in names if name not in ANNOUNCER_NAMES]
    if unknown:
        raise AnnouncerChoiceError(f"unknown announcer {', '.join(map(repr, unknown))}; choose from "
                                   f"{', '.join(ANNOUNCER_NAMES)} (or none)")
    sides = tuple(game.sides) if game is not None else ("red", "blue")
    built: list[Announcer] = []
    try:
        for name in names:
            if name == "console":
                built.append(ConsoleAnnouncer(game=game, lang=lang))
            elif name in ("buzzer", "buzzer-plain"):
                built.append(BuzzerAnnouncer(pin, tonal=name == "buzzer", pin_factory=pin_factory, sides=sides))
            elif name == "lights":
                if not lights:
                    raise AnnouncerChoiceError("the 'lights' announcer needs lights={side: pin, ...}")
                built.append(LightsAnnouncer(lights, alert=alert, pin_factory=pin_factory))
            else:
                built.append(VoiceAnnouncer(name.removeprefix("voice-"), game=game))
    except Exception:
        for announcer in built:
            announcer.close()
        raise
    return built
