"""Results and standings of a club's games: every finished game once (by table and game), kept in an append-only
JSON-lines file when given one, with standings per game kind (wins, draws, losses, points) and a CSV export.

Results arrive from the broker, so each one is checked before it counts: a malformed result is refused with a
message saying what is wrong, and never disturbs the results already kept."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.errors import FaceDownError

from .broker import check_table_name

CSV_FIELDS = ("ended_at", "table", "game", "game_key", "players", "winners", "reason", "plies")


class ResultError(FaceDownError, ValueError):
    """A result that cannot be counted."""


@dataclass(frozen=True)
class Result:
    """One finished game at one table."""

    table: str
    game_key: str
    game: str
    sides: tuple[str, ...]
    players: dict[str, str]
    winners: tuple[str, ...]
    reason: str
    plies: int
    ended_at: float

    @property
    def key(self) -> tuple[str, str]:
        return (self.table, self.game_key)

    def player(self, side: str) -> str:
        """Who played ``side``: the name the table gave, else the side and table (``Red at table-3``)."""
        return self.players.get(side) or f"{side.capitalize()} at {self.table}"

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table, "game_key": self.game_key, "game": self.game, "sides": list(self.sides),
                "players": dict(self.players), "winners": list(self.winners), "reason": self.reason,
                "plies": self.plies, "ended_at": self.ended_at}


def result_from_json(data: Any) -> Result:
    """A :class:`Result` from its JSON form; raises :class:`ResultError` naming the first bad field."""
    if not isinstance(data, Mapping):
        raise ResultError(f"a result must be a JSON object, got {type(data).__name__}")

    def text(name: str, limit: int = 200) -> str:
        v = data.get(name)
        if not isinstance(v, str) or not v or len(v) > limit:
            raise ResultError(f"result field {name!r} must be a non-empty string of at most {limit} characters")
        return v

    try:
        table = check_table_name(data.get("table"))  # type: ignore[arg-type]
    except ValueError as exc:
        raise ResultError(f"result field 'table': {exc}") from None
    sides = data.get("sides")
    if not isinstance(sides, list) or not sides or not all(isinstance(s, str) and 0 < len(s) <= 40 for s in sides):
        raise ResultError("result field 'sides' must be a list of side names")
    winners = data.get("winners")
    if not isinstance(winners, list) or not all(w in sides for w in winners):
        raise ResultError(f"result field 'winners' must list sides of the game ({', '.join(sides)}); empty for a draw")
    players = data.get("players") or {}
    if not isinstance(players, Mapping) or not all(k in sides and isinstance(v, str) and len(v) <= 60 for k, v in players.items()):
        raise ResultError("result field 'players' must map sides to names")
    plies, ended = data.get("plies", 0), data.get("ended_at", 0)
    if not isinstance(plies, int) or isinstance(plies, bool) or plies < 0:
        raise ResultError("result field 'plies' must be a whole number")
    if not isinstance(ended, int | float) or isinstance(ended, bool):
        raise ResultError("result field 'ended_at' must be a time in seconds")
    reason = data.get("reason", "")
    if not isinstance(reason, str):
        raise ResultError("result field 'reason' must be a sentence")
    return Result(table, text("game_key", 64), text("game", 64), tuple(sides), {k: v for k, v in players.items() if v},
                  tuple(winners), reason[:200], plies, float(ended))


@dataclass
class Standing:
    """One player's record in one game kind."""

    player: str
    played: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0

    @property
    def points(self) -> float:
        return self.wins + 0.5 * self.draws

    def to_json(self) -> dict[str, Any]:
        return {"player": self.player, "played": self.played, "wins": self.wins, "draws": self.draws,
                "losses": self.losses, "points": self.points}


class ResultBook:
    """Every result the club has seen, once each; thread-safe. ``path``: a JSON-lines file kept across restarts."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else None
        self._results: dict[tuple[str, str], Result] = {}
        self._lock = threading.Lock()
        if self.path is not None and self.path.exists():
            for n, line in enumerate(self.path.read_text(encoding="utf-8").splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    r = result_from_json(json.loads(line))
                except (ValueError, ResultError) as exc:
                    raise ResultError(f"{self.path}:{n}: {exc}") from None
                self._results[r.key] = r

    def add(self, result: Result) -> bool:
        """Count ``result``; False if that exact result was already counted (a retained message seen again)."""
        with self._lock:
            if self._results.get(result.key) == result:
                return False
            self._results[result.key] = result  # a later word on the same game (an arbiter's correction) replaces it
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(result.to_json(), ensure_ascii=False) + "\n")
            return True

    def all(self) -> list[Result]:
        """Every result, oldest first."""
        with self._lock:
            return sorted(self._results.values(), key=lambda r: (r.ended_at, r.table))

    def standings(self) -> dict[str, list[Standing]]:
        """Per game kind, every player's wins, draws and losses, best first (points, then wins, then name)."""
        return standings(self.all())

    def csv(self) -> str:
        """Every result as CSV (one row per game), for the club's spreadsheet."""
        return results_csv(self.all())


def standings(results: Iterable[Result]) -> dict[str, list[Standing]]:
    """Standings per game kind from ``results``: a win for each winner, a loss for each other side, a draw for all
    sides when there is no winner."""
    table: dict[str, dict[str, Standing]] = {}
    for r in results:
        rows = table.setdefault(r.game, {})
        for side in r.sides:
            name = r.player(side)
            s = rows.setdefault(name, Standing(name))
            s.played += 1
            if not r.winners:
                s.draws += 1
            elif side in r.winners:
                s.wins += 1
            else:
                s.losses += 1
    return {game: sorted(rows.values(), key=lambda s: (-s.points, -s.wins, s.player.lower())) for game, rows in sorted(table.items())}


def results_csv(results: Iterable[Result]) -> str:
    """CSV text: ended_at (ISO, UTC), table, game, game_key, players (side=name; ...), winners, reason, plies."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_FIELDS)
    for r in results:
        ended = dt.datetime.fromtimestamp(r.ended_at, dt.UTC).isoformat(timespec="seconds")
        players = "; ".join(f"{s}={r.player(s)}" for s in r.sides)
        w.writerow([ended, r.table, r.game, r.game_key, _cell(players), _cell(" ".join(r.winners) or "draw"), _cell(r.reason), r.plies])
    return out.getvalue()


def _cell(text: str) -> str:
    """Keep a spreadsheet from reading a cell as a formula (names come from the tables)."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text
