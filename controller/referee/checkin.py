"""The check-in pad: one RFID reader beside a reed board. A player taps a piece on the pad, then puts it down; the
tag read on the pad is bound to the next station that becomes occupied, so the board's snapshots carry the tags of a
whole setup and the session reads each side's deployment off them (Session's tag setup reading) with no phone entry.

For enrolment (`facedown tags enroll` with a check-in profile) ``PadReads`` reports the pad's taps alone, so a
tap on the pad is the read that teaches the tag map which tag is which piece.

Nothing here is published: which piece went where stays between the pad, this module and the session's private
setup check, so nobody at the table learns the order. Pure: taps and snapshots in, snapshots out, no I/O or clock.

Binding rules, as a player at the table would expect them:
- a tap is held until a station becomes occupied; a second tap before that replaces it (the player changed mind);
- exactly one newly occupied station takes the held tap; if several appear at once, none is bound (which one got
  the tapped piece is unknowable) and the tap is dropped: ``problems`` says so, and the player lifts and re-taps;
- a piece lifted from a bound station keeps its tag "in hand": if the next newly occupied station has no tap held,
  the piece just moved there (a setup being rearranged), and so does its tag;
- an occupied station with no tag is left without one: the session then sees an incomplete army, never a wrong one.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controller.sensing.base import Snapshot


@dataclass
class CheckIn:
    """Binds pad taps to stations; ``enrich`` turns each reed snapshot into one that carries the bound tags."""

    tag_at: dict[str, str] = field(default_factory=dict)
    held: str | None = None
    in_hand: list[str] = field(default_factory=list)
    problems: list[dict[str, Any]] = field(default_factory=list)  # structured, for the arbiter only
    _occupied: frozenset[str] = frozenset()

    def tap(self, uid: str) -> None:
        """A tag read on the pad (protocol ``TAP``)."""
        self.held = uid.upper()

    def enrich(self, snap: Snapshot) -> Snapshot:
        """The snapshot with the tags bound so far (its own tags, if it has any, win)."""
        arrived = sorted(snap.occupied - self._occupied)
        left = sorted(self._occupied - snap.occupied)
        for s in left:
            tag = self.tag_at.pop(s, None)
            if tag is not None:
                self.in_hand.append(tag)
        if len(arrived) == 1:
            station = arrived[0]
            if self.held is not None:
                self._bind(station, self.held)
                self.held = None
            elif self.in_hand:
                self._bind(station, self.in_hand.pop())
        elif len(arrived) > 1 and self.held is not None:
            self.problems = (self.problems + [{"code": "checkin.ambiguous", "stations": arrived}])[-20:]
            self.held = None
        self._occupied = snap.occupied
        tags = {s: t for s, t in self.tag_at.items() if s in snap.occupied}
        tags.update(snap.tags)
        return Snapshot(snap.t_ms, snap.occupied, tags)

    def _bind(self, station: str, tag: str) -> None:
        if tag in self.in_hand:
            self.in_hand.remove(tag)
        for s, t in list(self.tag_at.items()):
            if t == tag:  # the same piece cannot stand on two stations: the newer binding wins
                del self.tag_at[s]
        self.tag_at[station] = tag


class CheckInBoard:
    """A sensing backend with a check-in pad: wraps a reed backend that reports pad taps (SerialScannerBoard with
    ``on_tap``), and reports its snapshots with the bound tags."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.stations = inner.stations
        self.checkin = CheckIn()
        self._lock = threading.Lock()
        inner.on_tap = self.tap

    def tap(self, uid: str) -> None:
        with self._lock:
            self.checkin.tap(uid)

    def current(self) -> Snapshot:
        with self._lock:
            snap = self.inner.current()
            tags = {s: t for s, t in self.checkin.tag_at.items() if s in snap.occupied}
            return Snapshot(snap.t_ms, snap.occupied, {**tags, **snap.tags})

    def run(self, on_snapshot: Callable[[Snapshot], None]) -> None:
        def enriched(snap: Snapshot) -> None:
            with self._lock:
                out = self.checkin.enrich(snap)
            on_snapshot(out)

        self.inner.run(enriched)

    def stop(self) -> None:
        self.inner.stop()

    def __getattr__(self, name: str) -> Any:  # known, status, wait_known, link... of the wrapped backend
        return getattr(self.inner, name)


class PadReads:
    """The check-in pad alone, for enrolment (`facedown tags enroll` with a check-in profile): each tap is reported as
    a snapshot with the tag on a station named ``pad``, then one with the pad empty again, so the enrolment sees every
    tap as a new read (the reed matrix is not needed to learn which tag is which piece, and is ignored)."""

    STATION = "pad"
    where = "on the check-in pad"  # the enrolment's prompt: "place red's Marshal #1 on the check-in pad"

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.stations = [self.STATION]
        self._out: Callable[[Snapshot], None] | None = None
        self._reads = 0
        inner.on_tap = self.tap

    def tap(self, uid: str) -> None:
        out = self._out
        if out is None:
            return
        self._reads += 1
        out(Snapshot(self._reads, frozenset({self.STATION}), {self.STATION: uid.upper()}))
        out(Snapshot(self._reads, frozenset()))

    def current(self) -> Snapshot:
        return Snapshot(self._reads, frozenset())

    def run(self, on_snapshot: Callable[[Snapshot], None]) -> None:
        self._out = on_snapshot
        self.inner.run(lambda snap: None)  # the reeds' snapshots say nothing about which tag is which piece

    def stop(self) -> None:
        self.inner.stop()

    def __getattr__(self, name: str) -> Any:  # known, status, wait_known... of the wrapped backend
        return getattr(self.inner, name)
