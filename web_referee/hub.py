"""Live updates: fans the session's published events out to Server-Sent Event streams, one bounded queue per client.

The session calls ``Hub.publish`` from the referee's thread, which only puts the event on each client's queue and
never waits: a client whose queue is full is dropped (its stream ends, the browser reconnects and catches up from
the session log with ``Last-Event-ID``). Redaction for the client's role happens in the client's own thread.
"""

from __future__ import annotations

import json
import queue
import threading
from collections.abc import Callable, Iterator
from typing import Any

from controller.referee.session import Published, Session
from controller.rules import SPECTATOR

_CLOSE = object()  # put on a queue to end its stream (server stopping)


class Occupancy(frozenset):
    """A settled reading's occupied stations during play, for the seats' and arbiter's pages (not a logged event)."""


class Client:
    """One open event stream: its role, its queue and whether the hub gave up on it."""

    def __init__(self, role: str, maxsize: int) -> None:
        self.role = role
        self.queue: queue.Queue[Any] = queue.Queue(maxsize=maxsize)
        self.dropped = False


class Hub:
    """Every open event stream of one table."""

    def __init__(self, session: Session, *, queue_size: int = 256, max_clients: int = 40) -> None:
        self.session = session
        self.queue_size = queue_size
        self.max_clients = max_clients
        self._clients: set[Client] = set()
        self._lock = threading.Lock()
        self.dropped_total = 0
        session.subscribe(self.publish)
        watch = getattr(session, "watch_occupancy", None)
        if watch is not None:
            watch(self.occupancy)

    @property
    def client_count(self) -> int:
        with self._lock:
            return len(self._clients)

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
        with self._lock:
            clients = [c for c in self._clients if c.role != SPECTATOR]
        for c in clients:
            try:
                c.queue.put_nowait(item)
            except queue.Full:
                pass

    def _forget(self, client: Client) -> None:
        with self._lock:
            if client in self._clients:
                self._clients.discard(client)
                if client.dropped:
                    self.dropped_total += 1

    def open(self, role: str, after: int) -> tuple[Client, list[Published]] | None:
        """Register a stream for ``role`` and return it with every event after seq ``after`` (the catch-up);
        None when the hub already serves its maximum of streams."""
        with self._lock:
            if len(self._clients) >= self.max_clients:
                return None
        client = Client(role, self.queue_size)
        with self.session.lock:  # nothing is published between reading the backlog and joining
            backlog = self.session.since(after)
            with self._lock:
                self._clients.add(client)
        return client, backlog

    def close_all(self) -> None:
        """End every stream (the server is stopping)."""
        with self._lock:
            clients = list(self._clients)
            self._clients.clear()
        for c in clients:
            c.dropped = True
            try:
                c.queue.put_nowait(_CLOSE)
            except queue.Full:
                pass

    def stream(self, client: Client, backlog: list[Published], after: int,
               encode: Callable[[Published, str], dict[str, Any] | None], *, keepalive_s: float = 15.0) -> Iterator[str]:
        """The text of one SSE stream: the catch-up, then live events, with a comment line as keepalive."""
        last = after
        try:
            yield "retry: 2000\n\n"
            for ev in backlog:
                msg = _frame(ev, client.role, encode)
                last = ev.seq
                if msg:
                    yield msg
            while not client.dropped:
                try:
                    ev = client.queue.get(timeout=keepalive_s)
                except queue.Empty:
                    yield ": keepalive\n\n"
                    continue
                if ev is _CLOSE:
                    break
                if isinstance(ev, Occupancy):  # no id: it is not an event of the game, and a reconnect need not replay it
                    yield f"data: {json.dumps({'event': 'board', 'occupied': sorted(ev), 'live': True}, separators=(',', ':'))}\n\n"
                    continue
                if ev.seq <= last:
                    continue
                last = ev.seq
                msg = _frame(ev, client.role, encode)
                if msg:
                    yield msg
        finally:
            self._forget(client)


def _frame(ev: Published, role: str, encode: Callable[[Published, str], dict[str, Any] | None]) -> str | None:
    data = encode(ev, role)
    if data is None:
        return None
    return f"id: {ev.seq}\ndata: {json.dumps(data, ensure_ascii=False, separators=(',', ':'))}\n\n"
