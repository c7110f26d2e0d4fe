"""Game clocks: pure, the time is always passed in (seconds on a monotonic clock), nothing here reads it.

A :class:`TimeControl` is what the club chose for a game: a bank per player with an increment (``15+10``: fifteen
minutes each, ten seconds added after each move) or a fixed limit per move (``move:60``). A :class:`GameClock` runs
one side's time at a time; ``switch`` is the press after a move, ``pause``/``resume`` freeze it, ``flag`` says whose
time has run out and ``warnings`` says which low-time thresholds were crossed since it was last asked.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from controller.errors import FaceDownError

DEFAULT_WARN_S = (60.0, 10.0)


class ClockError(FaceDownError, ValueError):
    """A time control that cannot be understood."""


@dataclass(frozen=True)
class TimeControl:
    """Per-player time with an increment (``per_move_s`` None) or a fixed limit for every move (``per_move_s``)."""

    base_s: float = 0.0
    increment_s: float = 0.0
    per_move_s: float | None = None
    warn_s: tuple[float, ...] = DEFAULT_WARN_S

    def __post_init__(self) -> None:
        if self.per_move_s is None and self.base_s <= 0:
            raise ClockError("a clock needs a positive time per player")
        if self.per_move_s is not None and self.per_move_s <= 0:
            raise ClockError("a per-move limit must be positive")
        if self.increment_s < 0:
            raise ClockError("an increment cannot be negative")

    @property
    def start_s(self) -> float:
        """The time on each player's clock before the first move."""
        return self.per_move_s if self.per_move_s is not None else self.base_s

    def describe(self) -> str:
        """The control in the words a club uses (``15 min + 10 s``, ``60 s per move``)."""
        if self.per_move_s is not None:
            return f"{amount_words(self.per_move_s)} per move"
        return amount_words(self.base_s) + (f" + {amount_words(self.increment_s)}" if self.increment_s else "")

    def to_json(self) -> dict[str, Any]:
        return {"base_s": self.base_s, "increment_s": self.increment_s, "per_move_s": self.per_move_s, "text": self.describe()}


def amount_words(s: float) -> str:
    """An amount of time as said aloud: ``1 min``, ``90 s``."""
    if s >= 60 and s % 60 == 0:
        return f"{int(s // 60)} min"
    return f"{s:g} s"


_BANK = re.compile(r"^(\d+(?:\.\d+)?)(m|s)?(?:\+(\d+(?:\.\d+)?)s?)?$")
_MOVE = re.compile(r"^move:(\d+(?:\.\d+)?)s?$")


def parse_time_control(text: str, *, warn_s: Sequence[float] = DEFAULT_WARN_S) -> TimeControl:
    """``15+10`` (minutes + seconds increment), ``90s+5``, ``30`` (minutes, no increment) or ``move:60`` (seconds per
    move). Raises :class:`ClockError` saying what is accepted."""
    t = text.strip().lower().replace(" ", "")
    m = _MOVE.match(t)
    if m:
        return TimeControl(per_move_s=float(m.group(1)), warn_s=tuple(warn_s))
    m = _BANK.match(t)
    if m:
        base = float(m.group(1)) * (1 if m.group(2) == "s" else 60)
        try:
            return TimeControl(base_s=base, increment_s=float(m.group(3) or 0), warn_s=tuple(warn_s))
        except ClockError as exc:
            raise ClockError(f"clock {text!r}: {exc}") from None
    raise ClockError(f"clock {text!r} not understood: use MINUTES+INCREMENT_SECONDS (e.g. 15+10), 90s+5, or move:SECONDS (e.g. move:60)")


@dataclass
class GameClock:
    """Every side's remaining time; at most one side's clock runs at once."""

    control: TimeControl
    sides: tuple[str, ...]
    remaining: dict[str, float] = field(default_factory=dict)
    running: str | None = None  # the side whose time is running
    since: float | None = None  # when ``running`` last started (None while stopped or paused)
    paused: bool = False
    stopped: bool = False  # the game is over: the clock never runs again
    _warned: set[tuple[str, float]] = field(default_factory=set)

    def __post_init__(self) -> None:
        if not self.sides:
            raise ClockError("a clock needs at least one side")
        for s in self.sides:
            self.remaining.setdefault(s, self.control.start_s)

    # ------------------------------------------------------------------ reading
    def left(self, side: str, now: float) -> float:
        """Seconds ``side`` has left at ``now`` (never below zero)."""
        t = self.remaining[side]
        if side == self.running and self.since is not None:
            t -= max(0.0, now - self.since)
        return max(0.0, t)

    def flag(self, now: float) -> str | None:
        """The side whose time has run out, if any (only the running side's can)."""
        if self.running is not None and self.since is not None and self.left(self.running, now) <= 0:
            return self.running
        return None

    def warnings(self, now: float) -> list[tuple[str, float]]:
        """Low-time thresholds the running side crossed since last asked: ``(side, threshold)``, each said once per
        crossing (an increment that lifts the time above a threshold lets it be said again)."""
        side = self.running
        if side is None:
            return []
        left = self.left(side, now)
        out = []
        for w in sorted(self.control.warn_s, reverse=True):
            if w >= self.control.start_s:
                continue  # a threshold the clock starts below would be said at every move
            if left <= w and (side, w) not in self._warned:
                self._warned.add((side, w))
                out.append((side, w))
        # only the most urgent newly crossed threshold is worth saying
        return out[-1:]

    def to_json(self, now: float) -> dict[str, Any]:
        """What a page or the club dashboard shows: each side's time left, who is running, and since when."""
        return {
            "control": self.control.to_json(),
            "left": {s: round(self.left(s, now), 1) for s in self.sides},
            "running": self.running if self.since is not None else None,
            "paused": self.paused,
            "stopped": self.stopped,
        }

    # ------------------------------------------------------------------ changing
    def restore(self, left: Mapping[str, float]) -> None:
        """Set the time left of the sides ``left`` names (a journaled reading); a low-time warning already crossed
        is not said again."""
        for side, seconds in left.items():
            if side in self.remaining:
                self.remaining[side] = max(0.0, float(seconds))
        self._warned = {(s, w) for s in self.sides for w in self.control.warn_s if self.remaining[s] <= w}

    def start(self, side: str, now: float) -> None:
        """Start ``side``'s time (the game's first move is theirs)."""
        self._check(side)
        if self.stopped:
            return
        self._bank(now)
        self.running = side
        self.since = None if self.paused else now

    def switch(self, mover: str | None, to: str, now: float) -> None:
        """``mover`` finished a move (gets the increment, or a fresh per-move limit); ``to``'s time runs."""
        self._check(to)
        if self.stopped:
            return
        self._bank(now)
        if mover is not None:
            self._check(mover)
            if self.control.per_move_s is not None:
                self.remaining[mover] = self.control.per_move_s
            else:
                self.remaining[mover] += self.control.increment_s
            self._rearm(mover)
        if self.control.per_move_s is not None:
            self.remaining[to] = self.control.per_move_s
            self._rearm(to)
        self.running = to
        self.since = None if self.paused else now

    def pause(self, now: float) -> None:
        """Freeze every clock."""
        self._bank(now)
        self.paused = True

    def resume(self, now: float) -> None:
        """Run the side to move's time again."""
        self.paused = False
        if self.running is not None and not self.stopped:
            self.since = now

    def stop(self, now: float) -> None:
        """The game is over: freeze for good."""
        self._bank(now)
        self.stopped = True

    def _bank(self, now: float) -> None:
        if self.running is not None and self.since is not None:
            self.remaining[self.running] = self.left(self.running, now)
        self.since = None

    def _rearm(self, side: str) -> None:
        left = self.remaining[side]
        self._warned = {(s, w) for s, w in self._warned if s != side or left <= w}

    def _check(self, side: str) -> None:
        if side not in self.remaining:
            raise ClockError(f"unknown side {side!r}; sides are {', '.join(self.sides)}")


def format_left(seconds: float) -> str:
    """``12:05``, or ``0:09.4`` under ten seconds."""
    if seconds < 10:
        return f"0:{seconds:04.1f}"
    s = math.ceil(seconds)
    return f"{s // 60}:{s % 60:02d}"
