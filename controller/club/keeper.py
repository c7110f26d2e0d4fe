"""Keeps a table's game clock: follows the session's events (start, each ruling, pause, undo, game over) and ticks
in a background thread, saying low time aloud as a public notice and ending the game by the club's rule when a
flag falls. The clock itself (``clock.GameClock``) is pure; this is the only place that reads the time."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any

from controller.referee.session import Published, Session
from controller.rules.say import say

from .clock import ClockError, GameClock, TimeControl

log = logging.getLogger(__name__)

FLAG_RULES = ("loses", "draw")


class ClockKeeper:
    """One table's clock, kept in step with its session. ``flag_rule``: ``loses`` (the side whose time runs out loses)
    or ``draw``."""

    def __init__(self, session: Session, control: TimeControl, *, flag_rule: str = "loses", tick_s: float = 0.1,
                 now: Callable[[], float] = time.monotonic, readings: Mapping[str, float] | None = None) -> None:
        if flag_rule not in FLAG_RULES:
            raise ClockError(f"flag rule {flag_rule!r}: expected one of {', '.join(FLAG_RULES)}")
        self.session = session
        self.flag_rule = flag_rule
        self.tick_s = tick_s
        self.now = now
        self.clock = GameClock(control, tuple(session.game.sides))
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if readings:  # a resumed game: the journal's last reading (the time since then is charged to nobody)
            self.clock.restore(readings)
        with session.lock:
            st = session.state
            if st.phase == "play" and st.turn is not None and st.ply > 0:
                self.clock.start(st.turn, now())  # a resumed game: the side to move's time runs again
            if st.phase == "over":
                self.clock.stop(now())
            session.subscribe(self.on_event)
            session.clock = self  # each press and arbiter action journals the reading

    # ------------------------------------------------------------------ the session's hook (its lock held)
    def press(self, mover: str, to: str | None) -> dict[str, float]:
        """``mover`` has moved: its increment (or a fresh per-move limit), ``to``'s time runs (None: the game is
        over, the clock stops). Each side's seconds left just after the press, which the session journals."""
        now = self.now()
        with self._lock:
            if to is None:
                self.clock.stop(now)
            else:
                self.clock.switch(mover, to, now)
            return self._reading(now)

    def reading(self) -> dict[str, float]:
        """Each side's seconds left now."""
        with self._lock:
            return self._reading(self.now())

    def _reading(self, now: float) -> dict[str, float]:
        return {s: round(self.clock.left(s, now), 3) for s in self.clock.sides}

    # ------------------------------------------------------------------ the session's thread
    def on_event(self, ev: Published) -> None:
        """Move the clock with the game (called by the session, with its lock held); a ruling's press comes
        earlier, through :meth:`press`, so the journal has it with the move."""
        kind = ev.public.get("event")
        now = self.now()
        with self._lock:
            c = self.clock
            if kind in ("start", "turn") and c.running is None and ev.public.get("player"):
                c.start(ev.public["player"], now)
            elif kind == "undo" and ev.public.get("turn"):
                c.switch(None, ev.public["turn"], now)
            elif kind == "paused":
                c.pause(now)
            elif kind == "resumed":
                c.resume(now)
            elif kind == "game_over":
                c.stop(now)

    def to_json(self) -> dict[str, Any]:
        with self._lock:
            return self.clock.to_json(self.now())

    # ------------------------------------------------------------------ a remote game's host (no board of its own)
    def begin(self, side: str) -> bool:
        """Start ``side``'s time if no one's runs yet (a remote game: every board is laid out); False if it ran."""
        with self._lock:
            if self.clock.running is not None or self.clock.stopped:
                return False
            self.clock.start(side, self.now())
            return True

    def hold(self, on: bool) -> None:
        """Freeze (``on``) or run again every clock, by the club's rule while a side is away."""
        with self._lock:
            if on and not self.clock.paused:
                self.clock.pause(self.now())
            elif not on and self.clock.paused:
                self.clock.resume(self.now())

    # ------------------------------------------------------------------ the ticking thread
    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="facedown-clock", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

    def tick(self) -> None:
        """Look at the clock once: say newly crossed low-time thresholds, end the game if a flag fell."""
        session = self.session
        with session.lock:  # the session's lock first, then the clock's: the order the session's thread uses
            with self._lock:
                now = self.now()
                flagged = self.clock.flag(now)
                warnings = [] if flagged else self.clock.warnings(now)
                if flagged:
                    self.clock.stop(now)
            for side, threshold in warnings:
                session.notice(say("notice.clock_low", side=side, seconds=threshold), clock=side, left_s=threshold)
            if flagged and session.state.phase == "play":
                session.end(self.winners_after_flag(flagged), say("verdict.time_out", side=flagged))

    def winners_after_flag(self, flagged: str) -> tuple[str, ...]:
        """Who wins when ``flagged``'s time runs out, by the club's rule (allies of the flagged side lose with it)."""
        if self.flag_rule == "draw":
            return ()
        game = self.session.game
        losers = {flagged} | {o for g in game.alliances if flagged in g for o in g}
        return tuple(s for s in game.sides if s not in losers)

    def _run(self) -> None:
        while not self._stop.wait(self.tick_s):
            try:
                self.tick()
            except Exception:  # a clock fault must never stop the referee
                log.exception("the game clock failed")


def journaled_clock(table: Any) -> dict[str, float] | None:
    """The newest clock reading in ``table``'s journal for its game (None: a new game, or none on a clock): what a
    resumed game's :class:`ClockKeeper` starts from (``readings=``)."""
    from controller.referee.replay import last_clock

    if table.journal is None or table.game_id is None:
        return None
    return last_clock(table.journal.events(table.game_id))
