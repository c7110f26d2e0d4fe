"""The simulated board: a virtual board in memory that tests, scripts and the web page drive by lifting and placing pieces.

It goes through the same Debouncer as real hardware, so from the snapshot on it is the same code path.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Mapping

from .base import Debouncer, Reading, Snapshot


class SimBoard:
    """A virtual board. Each lift/place is one raw sensor change at a time in ms (given, or the clock's now)."""

    def __init__(self, stations: Iterable[str], *, settle_ms: int = 30, clock: Callable[[], float] = time.monotonic) -> None:
        self.stations = tuple(stations)
        self._known = frozenset(self.stations)
        self.settle_ms = settle_ms
        self._clock = clock
        self._t0 = clock()
        self._debouncer = Debouncer(self.stations, settle_ms)
        self._raw: dict[str, Reading] = {s: (False, None) for s in self.stations}
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._wake = threading.Event()

    # ------------------------------------------------------------------ raw changes
    def now_ms(self) -> int:
        return int((self._clock() - self._t0) * 1000)

    def _check(self, station: str) -> None:
        if station not in self._known:
            raise KeyError(f"no station {station!r} on this board")

    def set_raw(self, station: str, reading: Reading, t_ms: int | None = None) -> Snapshot | None:
        self._check(station)
        with self._lock:
            t = self.now_ms() if t_ms is None else t_ms
            self._raw[station] = reading
            snap = self._debouncer.feed(t, {station: reading})
        self._wake.set()
        return snap

    def lift(self, station: str, t_ms: int | None = None) -> Snapshot | None:
        """A piece leaves ``station`` (the sensor opens)."""
        return self.set_raw(station, (False, None), t_ms)

    def place(self, station: str, t_ms: int | None = None, tag: str | None = None) -> Snapshot | None:
        """A piece is put on ``station`` (the sensor closes; ``tag`` is its RFID uid where fitted)."""
        return self.set_raw(station, (True, tag), t_ms)

    def toggle(self, station: str, t_ms: int | None = None) -> Snapshot | None:
        """Lift the piece if there is one, else place one (how the web page's clicks drive it)."""
        occupied = self._raw[station][0] if station in self._raw else False
        return self.lift(station, t_ms) if occupied else self.place(station, t_ms)

    def tap(self, station: str) -> tuple[bool, int]:
        """Toggle ``station`` as a tap on the web page does: whether it now holds a piece, and the board time (ms)
        from which every settled snapshot has read this tap (an earlier one may still show the station as it was)."""
        with self._lock:
            t = self.now_ms()
            self.toggle(station, t)
            return self._raw[station][0], t + self.settle_ms

    def fill(self, occupied: Mapping[str, str | None] | Iterable[str], t_ms: int | None = None) -> Snapshot | None:
        """Make the board hold exactly these stations (a setup put down at once); tags where given."""
        tags = occupied if isinstance(occupied, Mapping) else dict.fromkeys(occupied)
        for s in tags:
            self._check(s)
        with self._lock:
            t = self.now_ms() if t_ms is None else t_ms
            readings = {s: ((s in tags), tags.get(s)) for s in self.stations}
            self._raw.update(readings)
            snap = self._debouncer.feed(t, readings)
        self._wake.set()
        return snap

    def tick(self, t_ms: int | None = None) -> Snapshot | None:
        """Advance time; a snapshot if a change settled."""
        with self._lock:
            return self._debouncer.tick(self.now_ms() if t_ms is None else t_ms)

    def raw_occupied(self) -> frozenset[str]:
        with self._lock:
            return frozenset(s for s, (o, _) in self._raw.items() if o)

    # ------------------------------------------------------------------ SensingBackend
    def current(self) -> Snapshot:
        with self._lock:
            return self._debouncer.snapshot

    def run(self, on_snapshot: Callable[[Snapshot], None]) -> None:
        """Real-time mode (the web page's simulated board): settle changes by the clock and report them."""
        while not self._stop.is_set():
            with self._lock:
                due = self._debouncer.next_settle_ms()
                now = self.now_ms()
                snap = self._debouncer.tick(now) if due is not None and due <= now else None
            if snap is not None:
                on_snapshot(snap)
                continue
            # nothing settling: sleep until a station changes or the board stops (no idle wake-ups on a Pi)
            self._wake.wait(None if due is None else max(0.001, (due - now) / 1000))
            self._wake.clear()

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()
