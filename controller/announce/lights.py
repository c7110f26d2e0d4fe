"""Optional status LEDs: one per side lit while it is that side's turn, and an alert LED while the board needs attention."""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from .events import EventError, check_event, unknown_kind

log = logging.getLogger(__name__)


class LightsAnnouncer:
    """Drives status LEDs from public events.

    ``sides`` maps each side to its LED's pin, e.g. ``{"red": "GPIO23", "blue": "GPIO24"}``; ``alert``
    is an optional pin for an LED that lights on an illegal move or board mismatch and goes out when the
    board is fixed or play goes on. At game over the winners' LEDs stay lit (all of them on a draw).
    Setting an LED is instant, so this announcer needs no worker thread.
    """

    def __init__(self, sides: Mapping[str, int | str], *, alert: int | str | None = None,
                 pin_factory: Any = None) -> None:
        from gpiozero import LED

        if not sides:
            raise ValueError("LightsAnnouncer needs at least one side LED, e.g. {'red': 'GPIO23'}")
        self.leds: dict[str, Any] = {}
        self.alert: Any = None
        try:
            for side, pin in sides.items():
                self.leds[side] = LED(pin, pin_factory=pin_factory)
            if alert is not None:
                self.alert = LED(alert, pin_factory=pin_factory)
        except Exception:
            self.close()
            raise
        self._current: str | None = None
        self._unknown: set[str] = set()

    def announce(self, event: dict) -> None:
        if unknown_kind(event, self._unknown, log):
            return
        kind = check_event(event)
        if kind in ("start", "turn"):
            self._light_turn(event["player"])
            self._set_alert(False)
        elif kind in ("illegal", "mismatch"):
            self._set_alert(True)
        elif kind in ("move", "attack", "fixup_done"):
            self._set_alert(False)
        elif kind == "paused":
            for led in self.leds.values():
                led.off()
        elif kind == "undo" and event["turn"] in self.leds:
            self._light_turn(event["turn"])
        elif kind == "resumed" and self._current is not None:
            self._light_turn(self._current)
        elif kind == "game_over":
            self._current = None
            winners = set(event["winners"]) or set(self.leds)
            for side, led in self.leds.items():
                led.value = side in winners
            self._set_alert(False)

    def close(self) -> None:
        for led in self.leds.values():
            led.close()
        if self.alert is not None:
            self.alert.close()

    def _light_turn(self, player: str) -> None:
        if player not in self.leds:
            raise EventError(f"no LED for side {player!r}; LEDs are wired for {', '.join(self.leds)}")
        self._current = player
        for side, led in self.leds.items():
            led.value = side == player

    def _set_alert(self, on: bool) -> None:
        if self.alert is not None:
            self.alert.value = on
