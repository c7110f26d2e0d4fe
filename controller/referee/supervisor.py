"""The referee's supervisor: an unexpected error stops ruling *visibly*, and the sensor link's health is told.

A thread that dies quietly is the worst failure a table can have: the page lives on, the players move, and
nothing is judged. So every way into the game goes through here:
- the board thread (``run_board``): snapshots are judged inside a guard; an exception from sensing, recognition,
  judging or the journal becomes a **fault**;
- the journal (``WatchedJournal``): a write that fails, from any thread (the web's arbiter actions too), is a
  fault, and so is a background sync that failed;
- a watcher thread: a board thread that ended on its own, and the link status of the sensing backend
  (connected / resyncing since T / lost since T), announced when lost and when back.

A fault is structured (a ``fault.*`` code and parameters): it is published once as a public ``fault`` event (the
buzzer's fault pattern, the voice, the console, the club feed), it is in every role's state (the page's banner),
snapshots are no longer judged, and ``failed`` is set so that `facedown play` exits non-zero and systemd
(``Restart=on-failure``) restarts it: the game resumes from the journal, which never runs ahead of what was
ruled. Where recovery is safe it happens without a fault (a scanner that sends nonsense is resynced by the
serial link itself).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from controller.sensing.base import LinkStatus, link_status_of

from .journal import JournalError

log = logging.getLogger(__name__)

#: What the page, voice and feed call each kind of fault (keys of the message catalogs).
FAULT_CODES = ("fault.journal", "fault.sensing", "fault.referee")
#: The exit status of a referee stopped by a fault (not 0: systemd's Restart=on-failure restarts it; not 2: that
#: is a refused command line).
FAULT_EXIT = 3


@dataclass(frozen=True)
class Fault:
    """Why the referee stopped: a catalog code, its parameters, where it happened and when (Unix time)."""

    code: str
    params: dict[str, Any] = field(default_factory=dict)
    where: str = ""
    since: float = 0.0

    def say(self) -> dict[str, Any]:
        """The message for players: "the referee has stopped: <why>"."""
        return {"code": "fault.stopped", "params": {"why": {"code": self.code, "params": dict(self.params)}}}

    def to_json(self) -> dict[str, Any]:
        return {"code": self.code, "where": self.where, "since": self.since, "say": self.say()}


def classify(exc: BaseException, where: str) -> str:
    """The fault code for an exception raised in ``where`` (``board``, ``judge``, ``journal``, ``web``)."""
    if isinstance(exc, JournalError) or where == "journal":
        return "fault.journal"
    if where == "board":
        return "fault.sensing"
    return "fault.referee"


class WatchedJournal:
    """The session's journal, watched: a write that fails is a fault (whichever thread wrote), then re-raised so
    that the caller's own write-ahead handling still sees it."""

    def __init__(self, journal: Any, supervisor: Supervisor) -> None:
        self._journal = journal
        self._supervisor = supervisor

    def append(self, game_id: int, kind: str, data: dict[str, Any]) -> int:
        try:
            return self._journal.append(game_id, kind, data)
        except Exception as exc:
            self._supervisor.fail(exc, "journal")
            raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._journal, name)


class Supervisor:
    """Supervises one table (see the module docstring). ``clock`` gives Unix time for the fault and link stamps;
    ``poll_s`` is how often the watcher looks: once a second tells a dead board thread, a failed background sync or a
    lost link within a second, and keeps an idle referee's wake-ups few (a Pi Zero's budget)."""

    def __init__(self, table: Any, *, clock: Callable[[], float] = time.time, poll_s: float = 1.0) -> None:
        self.table = table
        self.session = table.session
        self.board = table.board
        self._clock = clock
        self.poll_s = poll_s
        self.fault: Fault | None = None
        self.failed = threading.Event()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._board_thread: threading.Thread | None = None
        self._watcher: threading.Thread | None = None
        self.link: LinkStatus = link_status_of(self.board, clock())
        self._link_told_lost = False
        if self.session.journal is not None and not isinstance(self.session.journal, WatchedJournal):
            self.session.journal = WatchedJournal(self.session.journal, self)

    # ------------------------------------------------------------------ state for the pages
    def fault_json(self) -> dict[str, Any] | None:
        f = self.fault
        return None if f is None else f.to_json()

    def link_json(self) -> dict[str, Any]:
        return self.link.to_json()

    # ------------------------------------------------------------------ running
    def start(self) -> None:
        """Start the board thread (under guard) and the watcher; the first snapshot is judged here, guarded too."""
        if self._board_thread is not None:
            return
        self.on_snapshot(self.board.current())
        self._board_thread = threading.Thread(target=self.run_board, name="facedown-board", daemon=True)
        self._board_thread.start()
        self._watcher = threading.Thread(target=self._watch, name="facedown-supervisor", daemon=True)
        self._watcher.start()

    def stop(self) -> None:
        self._stopping.set()
        if self._board_thread is not None:
            self._board_thread.join(timeout=2)
        if self._watcher is not None:
            self._watcher.join(timeout=2)

    def run_board(self) -> None:
        """The board thread: the backend's loop, with any exception it lets out made a fault."""
        try:
            self.board.run(self.on_snapshot)
        except Exception as exc:  # noqa: BLE001 - every unexpected error must become a visible fault
            self.fail(exc, "board")

    def on_snapshot(self, snap: Any) -> None:
        """Judge one settled snapshot, unless the referee has stopped; any error becomes a fault."""
        if self.fault is not None:
            return
        try:
            self.session.on_snapshot(snap)
        except Exception as exc:  # noqa: BLE001 - see above
            self.fail(exc, "judge")

    def _watch(self) -> None:
        while not self._stopping.wait(self.poll_s) and self.fault is None:
            try:
                self.check()
            except Exception as exc:  # noqa: BLE001 - the watcher must not die silently either
                self.fail(exc, "watch")

    def check(self) -> None:
        """One look: the journal's background sync, the board thread, and the sensor link (called by the watcher)."""
        journal = self.table.journal
        if journal is not None and hasattr(journal, "check_durable"):
            try:
                journal.check_durable()
            except JournalError as exc:
                self.fail(exc, "journal")
                return
        t = self._board_thread
        if t is not None and not t.is_alive() and not self._stopping.is_set() and self.fault is None:
            self.fail(RuntimeError("the board's reading loop ended by itself"), "board")
            return
        self._update_link()

    def _update_link(self) -> None:
        now = self._clock()
        new = link_status_of(self.board, now)
        old = self.link
        if new.status == old.status:
            return
        since = now if new.status != "connected" else None
        self.link = LinkStatus(new.status, since)
        if new.status == "lost" and not self._link_told_lost:
            self._link_told_lost = True
            self._publish({"event": "link", "status": "lost", "since": since,
                           "say": {"code": "link.lost_notice", "params": {}}})
        elif new.status == "connected" and self._link_told_lost:
            self._link_told_lost = False
            self._publish({"event": "link", "status": "connected", "since": None,
                           "say": {"code": "link.back_notice", "params": {}}})

    # ------------------------------------------------------------------ failing
    def fail(self, exc: BaseException, where: str) -> None:
        """Stop ruling: record the first fault, log the traceback, tell everyone, and set ``failed``."""
        with self._lock:
            if self.fault is not None:
                return
            code = classify(exc, where)
            self.fault = Fault(code, {}, where, self._clock())
        log.error("the referee has stopped (%s in %s): %s", code, where, exc, exc_info=exc)
        self._publish({"event": "fault", **self.fault.to_json()})
        self.failed.set()

    def _publish(self, public: dict[str, Any]) -> None:
        """Publish a public health event through the session (pages, announcers and the club bus all subscribe)."""
        try:
            # a thread that holds the game forever must not hide the fault: the state still shows it
            if self.session.announce(public, lock_timeout=2.0) is None:
                log.error("could not publish %s: the session is locked", public.get("event"))
        except Exception:  # noqa: BLE001 - a failing subscriber must not hide the fault
            log.exception("publishing %s failed", public.get("event"))
