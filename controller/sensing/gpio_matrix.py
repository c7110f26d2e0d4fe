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
from typing import Any

from .base import Debouncer, Snapshot
from .profile import Profile


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
            by_row.setdefault(row, []).append((self._columns[col], station))
        #: The scan plan: for each row with stations, its device and the (column device, station) crossings on it.
        self._plan: tuple[tuple[Any, tuple[tuple[Any, str], ...]], ...] = tuple(
            (self._rows[row], tuple(cells)) for row, cells in sorted(by_row.items())
        )
        t_ms = self._now_ms()
        self._raw = self._read()
        self._debouncer = Debouncer(self.stations, profile.settle_ms, {s: (True, None) for s in self._raw}, t_ms)

    def _now_ms(self) -> int:
        return round((self._clock() - self._t0) * 1000)

    def _read(self) -> frozenset[str]:
        """One pass over the matrix: the stations whose switch is closed right now (no debouncing)."""
        occupied: list[str] = []
        for row, cells in self._plan:
            row.on()
            try:
                for column, station in cells:
                    if column.is_active:
                        occupied.append(station)
            finally:
                row.off()
        return frozenset(occupied)

    def _scan(self, t_ms: int) -> Snapshot | None:
        raw = self._read()
        changed = raw.symmetric_difference(self._raw)
        self._raw = raw
        return self._debouncer.feed(t_ms, {s: (s in raw, None) for s in changed})

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
        """Scan every scan period, calling ``on_snapshot`` for each newly settled snapshot, until stop()."""
        if self._closed:
            raise RuntimeError(f"the GPIO matrix board of {self.profile.file} is closed")
        period = self.profile.scan_period_ms / 1000
        due = self._clock()
        while not self._stopping.is_set():
            with self._lock:
                if self._closed:
                    break
                snapshot = self._scan(self._now_ms())
            if snapshot is not None:
                on_snapshot(snapshot)
            due += period
            delay = due - self._clock()
            if delay < 0:  # fell behind (a slow callback): carry on from now rather than scanning in a burst
                due -= delay
                delay = 0
            self._stopping.wait(delay)

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
