"""Bots playing each other through the rules engine: one game (``play_game``) and a match of many (``Match``).

Each bot sees only its seat's view and its seat's redaction of each ruling. A bot that fails - crashes, breaks the
protocol, answers too late, deploys wrongly, or keeps answering moves the referee refuses - loses that game (in a
game of more than two sides it is put out and the game goes on), and the game records why. A game that reaches the
ply cap is a draw.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.rules import GameState, IllegalMoveError, new_game, redact_ruling, view
from controller.rules.setup import check_deployment

from .base import Bot, BotError

#: Called with (state, side, the view given to that side's bot, the redacted ruling given with it or None).
Watch = Callable[[GameState, str, dict[str, Any], "dict[str, Any] | None"], None]

#: How many refused moves in one turn a bot may answer before it loses the game.
MAX_REFUSALS = 3
#: How far past its budget an in-process bot may answer (external ones are cut off at their deadline).
LATE_MS = 2000.0


def _guarded(name: str, side: str, fn: Callable[..., Any], *args: Any) -> Any:
    """Call a bot; any failure but BotError (a bug in an in-process bot) becomes a BotError 'crashed'."""
    try:
        return fn(*args)
    except BotError:
        raise
    except Exception as exc:  # a bot's own bug must cost it the game, not the match
        raise BotError("crashed", f"{name} ({side}) failed: {type(exc).__name__}: {exc}") from exc


@dataclass
class GameRecord:
    """How one game between bots went."""

    seats: dict[str, str]  # side -> bot name
    winners: tuple[str, ...] = ()
    reason: str = ""
    plies: int = 0
    think_ms: dict[str, list[float]] = field(default_factory=dict)  # side -> milliseconds per move (wall clock)
    cpu_ms: dict[str, list[float]] = field(default_factory=dict)  # side -> this thread's CPU milliseconds per move
    failures: list[dict[str, str]] = field(default_factory=list)  # {"side", "why", "message"}
    #: Every answer to a 'go' for a move, in order: {"ply", "side", "from", "to", "ms", "cpu_ms"}; a refused one
    #: has "refused": true, a turn that failed (a time-out, a crash) has "failed": why and no from/to.
    moves: list[dict[str, Any]] = field(default_factory=list)
    time_ms: dict[str, float] = field(default_factory=dict)  # side -> the budget given with each of its 'go'

    @property
    def draw(self) -> bool:
        return not self.winners

    def to_json(self) -> dict[str, Any]:
        think = {s: {"moves": len(ms), "ms_p50": round(percentile(ms, 0.5), 2), "ms_p99": round(percentile(ms, 0.99), 2),
                     "cpu_ms_p50": round(percentile(self.cpu_ms.get(s, []), 0.5), 2),
                     "cpu_ms_p99": round(percentile(self.cpu_ms.get(s, []), 0.99), 2)}
                 for s, ms in self.think_ms.items()}
        return {"seats": self.seats, "winners": list(self.winners), "draw": self.draw, "reason": self.reason,
                "plies": self.plies, "failures": self.failures, "time_ms": self.time_ms, "think": think,
                "moves": self.moves}


def _fail(st: GameState, record: GameRecord, side: str, exc: BotError) -> None:
    record.failures.append({"side": side, "why": exc.why, "message": str(exc)})
    if st.phase == "play" and side not in st.out:
        st.put_out(side, f"bot failed: {exc.why}")


def play_game(game: str, bots: Mapping[str, Bot], names: Mapping[str, str], *, seed: int = 0, max_plies: int = 3000,
              time_ms: float | Mapping[str, float] = 1000.0, options: Mapping[str, Any] | None = None,
              clock: Callable[[], float] = time.perf_counter, watch: Watch | None = None) -> GameRecord:
    """Play one game: ``bots`` maps every side to its bot (``names`` to the name shown). Bots are closed by the
    caller. ``time_ms`` is the time budget given with each 'go' (one for every side, or side -> its own).
    ``watch`` is called with every view (and redacted ruling) handed to a bot, and the state it came from (for
    audits: what did each bot get to see?)."""
    st = new_game(game, options)
    sides = st.game.sides
    budget = {s: float(time_ms) for s in sides} if isinstance(time_ms, int | float) else {s: float(time_ms[s]) for s in sides}
    record = GameRecord(seats={s: names[s] for s in sides}, think_ms={s: [] for s in sides}, cpu_ms={s: [] for s in sides},
                        time_ms=budget)
    failed_setup: dict[str, BotError] = {}
    for i, side in enumerate(sides):
        try:
            _guarded(names[side], side, bots[side].new_game, game, side, st.options, seed * 31 + i)
            placement = _guarded(names[side], side, bots[side].choose_setup, view(st, side), budget[side])
            problems = check_deployment(st.game, side, placement, st.options)
            if problems:
                raise BotError("bad_setup", f"{names[side]} ({side}) deployed wrongly: "
                               + "; ".join(f"{p.station or '-'}: {p.message}" for p in problems[:3]))
            st.deploy(side, placement)
        except BotError as exc:
            failed_setup[side] = exc
    if failed_setup:
        for side, exc in failed_setup.items():
            record.failures.append({"side": side, "why": exc.why, "message": str(exc)})
        record.winners = tuple(s for s in sides if s not in failed_setup and len(failed_setup) < len(sides))
        record.reason = "bot failed at setup"
        return record
    for side in sides:
        _tell(bots, st, side, None, record, watch)
    refusals = 0
    while st.phase == "play" and st.ply < max_plies:
        side = st.turn
        try:
            seen = view(st, side)
            if watch is not None:
                watch(st, side, seen, None)
            t0, c0 = clock(), time.thread_time()
            try:
                frm, to = _guarded(names[side], side, bots[side].choose_move, seen, budget[side])
            except BotError as exc:  # the time it took still counts: a time-out keeps the figures of its seat
                _timed(record, side, st.ply + 1, clock() - t0, time.thread_time() - c0, failed=exc.why)
                raise
            took = _timed(record, side, st.ply + 1, clock() - t0, time.thread_time() - c0, frm=frm, to=to)
            if took > budget[side] + LATE_MS:
                record.moves[-1]["failed"] = "timeout"
                raise BotError("timeout", f"{names[side]} ({side}) took {took:.0f} ms for a move; its budget was "
                               f"{budget[side]:.0f} ms")
            try:
                ruling = st.apply((frm, to))
            except IllegalMoveError:
                record.moves[-1]["refused"] = True
                refusals += 1
                if refusals >= MAX_REFUSALS:
                    raise BotError("illegal", f"{names[side]} ({side}) answered {MAX_REFUSALS} refused moves in a row, "
                                   f"the last {frm}-{to}") from None
                bots[side].refused(frm, to)
                continue
        except BotError as exc:
            _fail(st, record, side, exc)
            refusals = 0
            for s in sides:
                _tell(bots, st, s, None, record, watch)
            continue
        refusals = 0
        for s in sides:
            _tell(bots, st, s, redact_ruling(ruling, s), record, watch)
    record.plies = st.ply
    if st.result is not None:
        record.winners, record.reason = st.result.winners, st.result.reason
    else:
        record.reason = f"ply cap ({max_plies})"
    for side in sides:
        if any(f["side"] == side for f in record.failures):
            continue
        try:
            _guarded(names[side], side, bots[side].game_over, st.result.to_json() if st.result else None)
        except BotError as exc:
            record.failures.append({"side": side, "why": exc.why, "message": str(exc)})
    return record


def _timed(record: GameRecord, side: str, ply: int, wall_s: float, cpu_s: float, **what: Any) -> float:
    """Keep one answer's think time (wall and CPU, in ms) in ``record``, with its move; returns the wall ms."""
    took, cpu = wall_s * 1000.0, cpu_s * 1000.0
    record.think_ms[side].append(took)
    record.cpu_ms[side].append(cpu)
    record.moves.append({"ply": ply, "side": side, **{"from" if k == "frm" else k: v for k, v in what.items()},
                         "ms": round(took, 2), "cpu_ms": round(cpu, 2)})
    return took


def _tell(bots: Mapping[str, Bot], st: GameState, side: str, event: dict[str, Any] | None, record: GameRecord,
          watch: Watch | None) -> None:
    if any(f["side"] == side for f in record.failures):
        return  # a failed bot hears no more
    seen = view(st, side)
    if watch is not None:
        watch(st, side, seen, event)
    try:
        _guarded(record.seats[side], side, bots[side].observe, seen, event)
    except BotError as exc:
        _fail(st, record, side, exc)


def percentile(values: list[float], q: float) -> float:
    """The ``q`` quantile (0..1) of ``values`` by nearest rank; 0 for none."""
    if not values:
        return 0.0
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[k]


@dataclass
class Match:
    """Many games between named bots, seats swapped every other game; per-bot totals."""

    game: str
    seat_names: dict[str, str]  # side -> bot name as given for the first game
    records: list[GameRecord] = field(default_factory=list)

    def rotation(self, index: int) -> dict[str, str]:
        """Who sits where in game ``index``: as given, then turned one seat every game (two seats: swapped)."""
        sides = list(self.seat_names)
        names = [self.seat_names[s] for s in sides]
        k = index % len(sides)
        return {s: names[(i - k) % len(sides)] for i, s in enumerate(sides)}

    def origin(self, index: int) -> dict[str, str]:
        """Which seat's bot (as given for the first game) sits where in game ``index``: what follows a bot round the
        table, as its own time budget does."""
        sides = list(self.seat_names)
        k = index % len(sides)
        return {s: sides[(i - k) % len(sides)] for i, s in enumerate(sides)}

    def summary(self) -> dict[str, Any]:
        """Per bot name: wins, draws, losses, failures, think time p50/p99 (ms); plies per game."""
        per: dict[str, dict[str, Any]] = {}
        for name in dict.fromkeys(self.seat_names.values()):
            per[name] = {"wins": 0, "draws": 0, "losses": 0, "failures": 0, "think": []}
        for rec in self.records:
            for side, name in rec.seats.items():
                row = per[name]
                if rec.draw:
                    row["draws"] += 1
                elif side in rec.winners:
                    row["wins"] += 1
                else:
                    row["losses"] += 1
                row["failures"] += sum(1 for f in rec.failures if f["side"] == side)
                row["think"].extend(rec.think_ms.get(side, []))
        bots = {}
        for name, row in per.items():
            think = row.pop("think")
            bots[name] = {**row, "moves": len(think), "think_ms_p50": round(percentile(think, 0.5), 2),
                          "think_ms_p99": round(percentile(think, 0.99), 2)}
        plies = [r.plies for r in self.records]
        return {"game": self.game, "games": len(self.records), "bots": bots,
                "plies_mean": round(sum(plies) / len(plies), 1) if plies else 0,
                "plies_max": max(plies) if plies else 0}
