"""The sensing interface: a Snapshot of the whole board, and the Debouncer every scanning backend shares."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Protocol

#: A raw reading of one station: (occupied, tag id or None).
Reading = tuple[bool, str | None]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """The whole board at one instant, after debouncing: which stations are occupied, and tag ids where RFID is fitted."""

    t_ms: int
    occupied: frozenset[str]
    tags: Mapping[str, str] = field(default_factory=dict)

    def tag(self, station: str) -> str | None:
        return self.tags.get(station)


#: The health of the link to the board's sensors, as every role's state and page show it.
LINK_STATES = ("connected", "resyncing", "lost")


@dataclass(frozen=True, slots=True)
class LinkStatus:
    """Is the referee hearing the board? ``connected``; ``resyncing`` (readings came but the board is not confirmed:
    a corrupted or lost line, a scanner restart); ``lost`` (no scanner, or it fell silent). ``since``: Unix time the
    link left ``connected`` (None while connected)."""

    status: str
    since: float | None = None

    def to_json(self) -> dict[str, object]:
        return {"status": self.status, "since": self.since,
                "say": {"code": f"link.{self.status}", "params": {}}}


def link_status_of(board: object, now: float) -> LinkStatus:
    """The link status a sensing backend reports through its optional ``link_state()`` (one of LINK_STATES); a
    backend without one (the simulated board, the Pi's own GPIO pins) is always connected."""
    probe = getattr(board, "link_state", None)
    state = probe() if callable(probe) else "connected"
    if state not in LINK_STATES:
        raise ValueError(f"link state {state!r} is not one of {', '.join(LINK_STATES)}")
    return LinkStatus(state, None if state == "connected" else now)


class SensingBackend(Protocol):
    """A source of debounced snapshots. ``run`` calls ``on_snapshot`` for every settled change until ``stop``."""

    stations: tuple[str, ...]

    def current(self) -> Snapshot:
        """The latest settled snapshot."""
        ...

    def run(self, on_snapshot: Callable[[Snapshot], None]) -> None:
        """Block, reporting each new settled snapshot, until stop() is called."""
        ...

    def stop(self) -> None: ...


class Debouncer:
    """Turns raw readings into settled snapshots: a station changes only after it has read the same for ``settle_ms``.

    Pure: the caller supplies the time of every reading, so bounce and a piece slid over other stations can be
    replayed exactly in tests.
    """

    def __init__(self, stations: Iterable[str], settle_ms: int, initial: Mapping[str, Reading] | None = None, t_ms: int = 0) -> None:
        self.stations = tuple(stations)
        self.settle_ms = settle_ms
        init = dict(initial or {})
        self._settled: dict[str, Reading] = {s: init.get(s, (False, None)) for s in self.stations}
        self._raw: dict[str, Reading] = dict(self._settled)
        self._since: dict[str, int] = {s: t_ms for s in self.stations}
        self._snapshot = self._make(t_ms)

    def _make(self, t_ms: int) -> Snapshot:
        occ = frozenset(s for s, (o, _) in self._settled.items() if o)
        tags = {s: t for s, (o, t) in self._settled.items() if o and t is not None}
        return Snapshot(t_ms, occ, tags)

    @property
    def snapshot(self) -> Snapshot:
        return self._snapshot

    def feed(self, t_ms: int, readings: Mapping[str, Reading]) -> Snapshot | None:
        """Record raw readings taken at ``t_ms`` (only changed stations need be given); return a new snapshot if one settled."""
        for s, r in readings.items():
            if s not in self._raw:
                raise KeyError(f"no station {s!r} on this board")
            if r != self._raw[s]:
                self._raw[s] = r
                self._since[s] = t_ms
        return self.tick(t_ms)

    def tick(self, t_ms: int) -> Snapshot | None:
        """Advance the clock to ``t_ms``; return a new snapshot if any station settled to a new value."""
        changed = False
        for s, r in self._raw.items():
            if r != self._settled[s] and t_ms - self._since[s] >= self.settle_ms:
                self._settled[s] = r
                changed = True
        if changed:
            self._snapshot = self._make(t_ms)
            return self._snapshot
        return None

    def pending(self) -> bool:
        """Are some raw readings not yet settled?"""
        return any(r != self._settled[s] for s, r in self._raw.items())

    def next_settle_ms(self) -> int | None:
        """When the earliest unsettled station will settle if it stays as it is."""
        times = [self._since[s] + self.settle_ms for s, r in self._raw.items() if r != self._settled[s]]
        return min(times) if times else None
