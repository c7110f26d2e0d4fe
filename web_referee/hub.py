"""Live updates: fans the session's published events out to Server-Sent Event streams, one bounded queue per client.

The session calls ``Hub.publish`` from the referee's thread, which only puts the event on each client's queue and
never waits: a client whose queue is full is dropped (its stream ends, the browser reconnects and catches up from
the session log with ``Last-Event-ID``). Redaction for the client's role happens in the client's own thread.

Streams for the people at the table are reserved: each seat and the arbiter may hold ``per_role`` streams of its
own (a new one past that closes the role's oldest: a phone that reconnects never waits for its dead stream), and
they never count against the spectators' cap (``max_clients``), which is also split per client address
(``per_address``) so that one laptop cannot take every spectator slot. A stream notices a closed connection within
``poll_s`` (the server's ``disconnected`` probe) and frees its slot at once.
"""

from __future__ import annotations

import json
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from controller.referee.session import Published, Session
from controller.rules import SPECTATOR

_CLOSE = object()  # put on a queue to end its stream (server stopping)




class Occupancy(frozenset):
    """A settled reading's occupied stations during play, for the seats' and arbiter's pages (not a logged event),
    with the pending fix-up as the referee's read model has it now (its steps' ``done`` follow the board)."""

    pending: dict[str, Any] | None = None
    read_at: int | None = None  # the reading's board time (ms): the page tells a tap's own reading from older ones


class Guidance:
    """The pending fix-up alone, for the spectator's page when a reading ticked a step (not a logged event)."""

    def __init__(self, pending: dict[str, Any] | None) -> None:
        self.pending = pending


class Client:
    """One open event stream: its role, client address, queue, and whether the hub gave up on it."""

    def __init__(self, role: str, maxsize: int, address: str | None = None) -> None:
        self.role = role
        self.address = address
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=maxsize)
        self.dropped = False
        self.opened = time.monotonic()
        self.after = 0  # the seq its stream catches up from (set by Hub.open)


class Hub:
    """Every open event stream of one table (see the module docstring for who may open how many)."""

    def __init__(self, session: Session, *, queue_size: int = 256, max_clients: int = 40, per_role: int = 4,
                 per_address: int | None = None, poll_s: float = 0.5) -> None:
        self.session = session
        self.queue_size = queue_size
        self.max_clients = max_clients
        self.per_role = per_role
        self.per_address = per_address if per_address is not None else max(1, max_clients // 4)
        self.poll_s = poll_s
        self._clients: set[Client] = set()
        self._lock = threading.Lock()
        self.dropped_total = 0
        #: (seq, role) -> the event's SSE text for that role: thirty spectators cost one redaction and one JSON
        #: encoding per event, not thirty. Only recent events are kept.
        self._frames: dict[tuple[int, str], str | None] = {}
        #: Held while an event is encoded: the thirty streams that wake together for one event wait for the first
        #: one's text instead of each encoding it again (which multiplied the work and the last stream's delay).
        self._encoding = threading.Lock()
        self._pending: dict[str, Any] | None = None  # the pending fix-up last pushed with a reading
        session.subscribe(self.publish)
        watch = getattr(session, "watch_occupancy", None)
        if watch is not None:
            watch(self.occupancy)

    @property
    def client_count(self) -> int:
        with self._lock:
            return len(self._clients)

    def count(self, role: str | None = None) -> int:
        """Open streams, of one role if given."""
        with self._lock:
            return sum(1 for c in self._clients if role is None or c.role == role)

    def publish(self, event: Published) -> None:
        """Called by the session for each event: queue it for every client, dropping any that cannot keep up."""
        with self._lock:
            clients = list(self._clients)
        for c in clients:
            try:
                c.queue.put_nowait(event)
            except queue.Full:
                c.dropped = True
                self._forget(c)

    def occupancy(self, occupied: frozenset[str]) -> None:
        """Called by the session when a reading changes the board during play: queue it for the pages that may move
        pieces (the seats and the arbiter), never waiting; a full queue just skips it (the next event catches up)."""
        item = Occupancy(occupied)
        guidance = getattr(self.session, "guidance", None)
        item.pending = guidance()["pending"] if guidance is not None else None
        item.read_at = _read_at(self.session)
        changed, self._pending = item.pending != self._pending, item.pending
        with self._lock:
            clients = list(self._clients)
        for c in clients:
            if c.role == SPECTATOR and not changed:
                continue
            try:
                c.queue.put_nowait(Guidance(item.pending) if c.role == SPECTATOR else item)
            except queue.Full:
                pass

    def _forget(self, client: Client) -> None:
        with self._lock:
            if client in self._clients:
                self._clients.discard(client)
                if client.dropped:
                    self.dropped_total += 1

    def open(self, role: str, after: int, address: str | None = None) -> tuple[Client, list[Published]] | None:
        """Register a stream for ``role`` and return it with every event after seq ``after`` (the catch-up);
        None when the spectators' cap (overall, or for this address) is reached. A seat or the arbiter is never
        refused: past ``per_role`` streams its oldest is closed. An ``after`` beyond the log (a page that lived
        through a referee restart) catches up from the start of this run's log."""
        evict: list[Client] = []
        with self._lock:
            if role == SPECTATOR:
                spectators = [c for c in self._clients if c.role == SPECTATOR]
                if len(spectators) >= self.max_clients:
                    return None
                if address is not None and sum(1 for c in spectators if c.address == address) >= self.per_address:
                    return None
            else:
                mine = sorted((c for c in self._clients if c.role == role), key=lambda c: c.opened)
                evict = mine[:max(0, len(mine) - self.per_role + 1)]
                for c in evict:
                    self._clients.discard(c)
        for c in evict:
            _end(c)
        client = Client(role, self.queue_size, address)
        with self.session.lock:  # nothing is published between reading the backlog and joining
            log = self.session.log
            if log and after > log[-1].seq or not log and after > 0:
                after = 0
            backlog = self.session.since(after)
            with self._lock:
                self._clients.add(client)
            first = self._live_now(role)
        if first is not None:
            # the readings between the page's first state and this stream are not numbered events (no backlog has
            # them): the stream starts with the board as read now, so a page opened mid-fix-up or mid-layout never
            # keeps a checklist older than the board
            client.queue.put_nowait(first)
        client.after = after
        return client, backlog

    def _live_now(self, role: str) -> Occupancy | Guidance | None:
        """The live item a new stream of ``role`` starts with (the session's lock held): the latest reading and
        the pending fix-up during play, for a spectator the pending fix-up alone; None before play or any reading."""
        snap = getattr(self.session, "snapshot", None)
        guidance = getattr(self.session, "guidance", None)
        if snap is None or guidance is None or self.session.state.phase == "setup":
            return None
        pending = guidance()["pending"]
        if role == SPECTATOR:
            return Guidance(pending)
        item = Occupancy(snap.occupied)
        item.pending = pending
        item.read_at = snap.t_ms
        return item

    def close_all(self) -> None:
        """End every stream (the server is stopping)."""
        with self._lock:
            clients = list(self._clients)
            self._clients.clear()
        for c in clients:
            _end(c)

    def stream(self, client: Client, backlog: list[Published], after: int,
               encode: Callable[[Published, str], dict[str, Any] | None], *, keepalive_s: float = 15.0,
               disconnected: Callable[[], bool] | None = None) -> Iterator[str]:
        """The text of one SSE stream: the catch-up, then live events, with a comment line as keepalive.
        ``disconnected`` (the server's probe) is asked every ``poll_s``: a closed connection ends the stream."""
        last = getattr(client, "after", after)
        quiet = 0.0
        try:
            yield "retry: 2000\n\n"
            for ev in backlog:
                msg = self._frame(ev, client.role, encode)
                last = ev.seq
                if msg:
                    yield msg
            while not client.dropped:
                try:
                    ev = client.queue.get(timeout=min(self.poll_s, keepalive_s))
                except queue.Empty:
                    if disconnected is not None and disconnected():
                        break
                    quiet += min(self.poll_s, keepalive_s)
                    if quiet >= keepalive_s:
                        quiet = 0.0
                        yield ": keepalive\n\n"
                    continue
                quiet = 0.0
                if ev is _CLOSE:
                    break
                if isinstance(ev, Occupancy):  # no id: it is not an event of the game, and a reconnect need not replay it
                    live = {"event": "board", "occupied": sorted(ev), "live": True, "pending": ev.pending,
                            "read_at": ev.read_at}
                    yield f"data: {json.dumps(live, ensure_ascii=False, separators=(',', ':'))}\n\n"
                    continue
                if isinstance(ev, Guidance):
                    live = {"event": "guidance", "live": True, "pending": ev.pending}
                    yield f"data: {json.dumps(live, ensure_ascii=False, separators=(',', ':'))}\n\n"
                    continue
                if ev.seq <= last:
                    continue
                last = ev.seq
                msg = self._frame(ev, client.role, encode)
                if msg:
                    yield msg
        finally:
            self._forget(client)

    def _frame(self, ev: Published, role: str, encode: Callable[[Published, str], dict[str, Any] | None]) -> str | None:
        key = (ev.seq, role)
        try:
            return self._frames[key]
        except KeyError:
            pass
        with self._encoding:
            try:
                return self._frames[key]  # another stream encoded it while this one waited
            except KeyError:
                pass
            msg = _frame(ev, role, encode)
            if len(self._frames) >= 256:  # an old event still being caught up with is simply encoded again
                self._frames.clear()
            self._frames[key] = msg
        return msg


def _read_at(session: Session) -> int | None:
    """The board time (ms) of the session's latest reading, None before any."""
    snap = getattr(session, "snapshot", None)
    return None if snap is None else snap.t_ms


def _end(client: Client) -> None:
    """Make a stream end at its next wake-up (the hub no longer serves it)."""
    client.dropped = True
    try:
        client.queue.put_nowait(_CLOSE)
    except queue.Full:
        pass


def _frame(ev: Published, role: str, encode: Callable[[Published, str], dict[str, Any] | None]) -> str | None:
    data = encode(ev, role)
    if data is None:
        return None
    return f"id: {ev.seq}\ndata: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n"
