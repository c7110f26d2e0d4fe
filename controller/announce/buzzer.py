"""The buzzer announcer: plays each verdict's pattern on a GPIO buzzer from a background thread."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from .events import unknown_kind
from .patterns import DEFAULT_SIDES, PATTERNS, Pattern, pattern_for
from .worker import PlayQueue

#: The default buzzer pin (BCM numbering); GPIO18 can carry hardware PWM.
DEFAULT_PIN = "GPIO18"

log = logging.getLogger(__name__)


class BuzzerAnnouncer:
    """Announces public events on a buzzer.

    With ``tonal=True`` (a *passive* piezo) it plays each pattern's pitches through gpiozero's
    ``TonalBuzzer``; with ``tonal=False`` (an *active* buzzer, which has one fixed pitch) it plays the
    rhythm only through ``Buzzer``. Patterns are queued and played in order by a worker thread, so
    ``announce`` returns at once; ``sleep`` is how the worker waits out a note (tests pass a fake).
    """

    def __init__(
        self,
        pin: int | str = DEFAULT_PIN,
        *,
        tonal: bool = True,
        pin_factory: Any = None,
        sleep: Callable[[float], None] = time.sleep,
        sides: Sequence[str] = DEFAULT_SIDES,
        maxsize: int = 16,
    ) -> None:
        self.tonal = tonal
        self.sides = tuple(sides)
        self._sleep = sleep
        if tonal:
            from gpiozero import TonalBuzzer
            from gpiozero.exc import PinPWMUnsupported
            from gpiozero.tones import Tone

            try:
                # A5 +/- 2 octaves: 220 Hz to 3520 Hz, room around every pitch the patterns use.
                self.device: Any = TonalBuzzer(pin, mid_tone=Tone("A5"), octaves=2, pin_factory=pin_factory)
            except PinPWMUnsupported as exc:
                raise ValueError(
                    f"pin {pin!r} cannot do PWM, which a tonal buzzer needs; use a PWM-capable pin factory "
                    f"(lgpio on a Pi) or tonal=False for an active buzzer"
                ) from exc
            low, high = self.device.min_tone.frequency, self.device.max_tone.frequency
            for pattern in PATTERNS.values():
                for freq, _ in pattern.notes:
                    if freq is not None and not low <= freq <= high:
                        self.device.close()
                        raise ValueError(f"pattern {pattern.name!r} uses {freq} Hz, outside the buzzer's "
                                         f"{low:.0f}-{high:.0f} Hz")
        else:
            from gpiozero import Buzzer

            self.device = Buzzer(pin, pin_factory=pin_factory)
        self._unknown: set[str] = set()
        self._queue: PlayQueue[Pattern] = PlayQueue("buzzer", self._play, maxsize=maxsize)

    def announce(self, event: dict) -> None:
        """Queue the pattern for ``event`` (nothing for quiet or unknown kinds); raises EventError if malformed."""
        if unknown_kind(event, self._unknown, log):
            return
        pattern = pattern_for(event, self.sides)
        if pattern is not None:
            self.play(pattern)

    def play(self, pattern: Pattern) -> None:
        """Queue one pattern, e.g. to let a club hear them all."""
        self._queue.submit(pattern)

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until every queued pattern has played; False if ``timeout`` seconds passed first."""
        return self._queue.flush(timeout)

    @property
    def dropped(self) -> int:
        """How many queued patterns were dropped because the queue overflowed."""
        return self._queue.dropped

    def close(self) -> None:
        """Stop playing (queued patterns are discarded), silence the buzzer and release its pin."""
        if self._queue.closed:
            return
        self._queue.close()
        self.device.close()

    def _play(self, pattern: Pattern) -> None:
        try:
            for freq, ms in pattern.notes:
                if freq is None:
                    self._silence()
                elif self.tonal:
                    from gpiozero.tones import Tone

                    self.device.play(Tone.from_frequency(freq))
                else:
                    self.device.on()
                self._sleep(ms / 1000)
        finally:
            if not self.device.closed:
                self._silence()

    def _silence(self) -> None:
        if self.tonal:
            self.device.stop()
        else:
            self.device.off()
