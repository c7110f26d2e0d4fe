"""Senses the board from a reed-switch matrix wired to the Pi's GPIO: drive one row low, read the columns, debounce.

Wiring (one reed switch and one diode per station, anode on the column, cathode on the row): every row is an
output held high; the scan drives one row low at a time and reads every column with its pull-up, so a column
reads low exactly when the switch at that crossing is closed, i.e. a magnet is on the station. The diodes stop
ghosting when several switches are closed. Raw reads go through the shared ``Debouncer``: a station changes only
after it has read the same for the profile's settle time, so bounce and a piece slid across other stations never
reach the recognizer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from operator import attrgetter
from typing import Any

from .base import Debouncer, Snapshot
from .profile import Profile

_STATE = attrgetter("state")  # a gpiozero pin's level: 0 low, 1 high


class GpioMatrixBoard:
    """A SensingBackend over a Pi-driven reed matrix, as a hardware profile describes it.

    ``pin_factory`` is gpiozero's (None: gpiozero's default, chosen by GPIOZERO_PIN_FACTORY). ``clock`` returns
    seconds; the snapshots of ``run`` are stamped in ms since the board was built, as the simulated board's are.
    The board is read once on construction and that reading is the initial settled snapshot. ``stop()`` (or
    ``close()``, or leaving a ``with`` block) ends ``run`` and releases every pin.
    """

    def __init__(self, profile: Profile, *, pin_factory: Any = None, clock: Callable[[], float] = time.monotonic) -> None:
        if profile.scanner is not None:
            raise ValueError(f"{profile.file}: scanner: this profile is a USB scanner build; use the serial scanner backend, not the GPIO matrix")
        if profile.sensing != "reed":
            raise ValueError(f"{profile.file}: sensing: a GPIO reed matrix senses occupancy only ('reed'), got {profile.sensing!r}")
        from gpiozero import InputDevice, OutputDevice

        self.profile = profile
        self.stations: tuple[str, ...] = profile.stations
        self._clock = clock
        self._t0 = clock()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._closed = False
        self._rows: list[Any] = []
        self._columns: list[Any] = []
        try:
            for i, pin in enumerate(profile.pins.rows):
                where = f"pins.rows[{i}]"
                # active_high=False: on() drives the row low (active), off() holds it high (idle).
                self._rows.append(OutputDevice(pin, active_high=False, initial_value=False, pin_factory=pin_factory))
            for i, pin in enumerate(profile.pins.columns):
                where = f"pins.columns[{i}]"
                # pull_up=True: is_active is True when the column reads low, i.e. a closed switch on the active row.
                self._columns.append(InputDevice(pin, pull_up=True, pin_factory=pin_factory))
        except Exception as exc:
            exc.add_note(f"while claiming GPIO{pin} for {where} of {profile.file}")
            self._release()
            raise
        by_row: dict[int, list[tuple[Any, str]]] = {}
        for station, (row, col) in profile.channels.items():  # type: ignore[misc]  # a matrix build: (row, col)
            by_row.setdefault(row, []).append((self._columns[col].pin, station))
        #: The scan plan: for each row with stations, its pin, its column pins and the station at each crossing.
        #: The scan talks to gpiozero's pins (the ``Pin.state`` API every pin factory has), not its devices: a
        #: device's ``on()`` / ``is_active`` adds several Python calls and a lock per access, which at 100 scans a
        #: second of 120 accesses each was most of the loop's CPU.
        self._plan: tuple[tuple[Any, tuple[Any, ...], tuple[str, ...]], ...] = tuple(
            (self._rows[row].pin, tuple(pin for pin, _ in cells), tuple(st for _, st in cells))
            for row, cells in sorted(by_row.items())
        )
        t_ms = self._now_ms()
        self._row_reads: list[tuple[int, ...]] = [() for _ in self._plan]
        self._raw = self._read()
        self._debouncer = Debouncer(self.stations, profile.settle_ms, {s: (True, None) for s in self._raw}, t_ms)
        self._settle_due: int | None = None  # ms when the earliest unsettled change settles, None if none pending

    def _now_ms(self) -> int:
        return round((self._clock() - self._t0) * 1000)

    def _read(self) -> frozenset[str]:
        """One pass over the matrix: the stations whose switch is closed right now (no debouncing)."""
        self._read_changed()
        return frozenset(st for (_row, _cols, stations), reads in zip(self._plan, self._row_reads, strict=True)
                         for st, level in zip(stations, reads, strict=True) if not level)

    def _read_changed(self) -> list[tuple[str, bool]]:
        """Drive each row low in turn and read its columns (low: switch closed); (station, closed) for every
        crossing that reads differently from the last pass. A pass over a board where nothing moved costs one row
        write pair and one tuple of column reads per row, and nothing more."""
        changes: list[tuple[str, bool]] = []
        state = _STATE
        last = self._row_reads
        for i, (row, columns, stations) in enumerate(self._plan):
            row.state = 0  # drive the row low (active)
            try:
                reads = tuple(map(state, columns))
            finally:
                row.state = 1  # back to idle high
            before = last[i]
            if reads != before:
                last[i] = reads
                if before:
                    changes += [(st, not now) for st, now, was in zip(stations, reads, before, strict=True) if now != was]
        return changes

    def _scan(self, t_ms: int) -> Snapshot | None:
        changes = self._read_changed()
        if changes:
            self._raw = self._raw.symmetric_difference(st for st, _ in changes)
            snap = self._debouncer.feed(t_ms, {st: (closed, None) for st, closed in changes})
        elif self._settle_due is not None and t_ms >= self._settle_due:
            snap = self._debouncer.tick(t_ms)
        else:
            return None  # nothing moved and nothing is due to settle: the debouncer need not look
        self._settle_due = self._debouncer.next_settle_ms()
        return snap

    def scan_once(self, t_ms: int) -> Snapshot | None:
        """Read the whole matrix as at ``t_ms``; return a new snapshot if a station settled to a new state."""
        with self._lock:
            if self._closed:
                raise RuntimeError(f"the GPIO matrix board of {self.profile.file} is closed")
            return self._scan(t_ms)

    def current(self) -> Snapshot:
        """The latest settled snapshot."""
        return self._debouncer.snapshot

    def run(self, on_snapshot: Callable[[Snapshot], None]) -> None:
        """Scan every scan period, calling ``on_snapshot`` for each newly settled snapshot, until stop().

        While a change is settling, the loop also wakes exactly when it is due to settle (and reads the matrix
        again then), so a piece is reported ``settle_ms`` after the scan that first saw it, not up to a whole scan
        period later, as waiting for the next scan on the grid would make it."""
        if self._closed:
            raise RuntimeError(f"the GPIO matrix board of {self.profile.file} is closed")
        period = self.profile.scan_period_ms / 1000
        due = self._clock()
        while not self._stopping.is_set():
            with self._lock:
                if self._closed:
                    break
                snapshot = self._scan(self._now_ms())
                settle_due = self._settle_due
            if snapshot is not None:
                on_snapshot(snapshot)
            now = self._clock()
            if due <= now:
                due += period
                if due <= now:  # fell behind (a slow callback): carry on from now rather than scanning in a burst
                    due = now + period
            wake = due
            if settle_due is not None:
                # +0.5 ms: the scan then stamps the time in whole ms at or after the settle time, never just before
                wake = min(wake, max(now, self._t0 + (settle_due + 0.5) / 1000))
            # a plain sleep (at most one scan period): it costs the thread a fraction of what a timed wait on an
            # Event does, and stop() is seen within one period
            time.sleep(max(0.0, wake - now))

    def stop(self) -> None:
        """End run() (from any thread, or from inside on_snapshot) and release every pin; safe to call twice."""
        self._stopping.set()
        with self._lock:
            if not self._closed:
                self._closed = True
                self._release()

    close = stop

    @property
    def closed(self) -> bool:
        return self._closed

    def _release(self) -> None:
        for device in (*self._columns, *self._rows):
            device.close()
        self._columns.clear()
        self._rows.clear()

    def __enter__(self) -> GpioMatrixBoard:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
