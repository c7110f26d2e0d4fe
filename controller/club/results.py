"""Results and standings of a club's games: every finished game once (by table and game), kept in an append-only
JSON-lines file when given one, with standings per game kind (wins, draws, losses, points) and a CSV export.

Results arrive from the broker, so each one is checked before it counts: a malformed result is refused with a
message saying what is wrong, and never disturbs the results already kept. A well-formed result counts only when it is
*verified* (:func:`verified_result`): it carries the game's signed record, signed by the key the club enrolled for
that table, and the record replays through the engine to that result; any other result is kept aside as unverified,
with why, and left out of the standings and the CSV. A signed record counts once: the same record sent again for
another game or table is unverified."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from controller.errors import FaceDownError
from controller.textfiles import parse_json

from .broker import check_table_name

if TYPE_CHECKING:
    from .enrolled import Enrolment

RECORD_LIMIT = 8 * 1024 * 1024  # a signed record unpacked (a 5,000-ply game is ~0.6 MB without its digests)
CSV_FIELDS = ("ended_at", "table", "game", "game_key", "players", "winners", "reason", "plies")


#: The longest line of the results file read back (a result and its record's reference are far smaller).
MAX_LINE = 8 * 1024 * 1024


class ResultError(FaceDownError, ValueError):
    """A result that cannot be counted."""


class Unverified(ResultError):
    """A well-formed result that is not counted: ``result`` is what the table said, ``why`` why it is not trusted."""

    def __init__(self, result: Result, why: str) -> None:
        super().__init__(why)
        self.result = result
        self.why = why


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
    record: str = ""  # the verified signed record's chain head ("" for a result not verified)

    @property
    def key(self) -> tuple[str, str]:
        return (self.table, self.game_key)

    def player(self, side: str) -> str:
        """Who played ``side``: the name the table gave, else the side and table (``Red at table-3``)."""
        return self.players.get(side) or f"{side.capitalize()} at {self.table}"

    def to_json(self) -> dict[str, Any]:
        return {"table": self.table, "game_key": self.game_key, "game": self.game, "sides": list(self.sides),
                "players": dict(self.players), "winners": list(self.winners), "reason": self.reason,
                "plies": self.plies, "ended_at": self.ended_at, **({"record": self.record} if self.record else {})}


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
    record = data.get("record", "")
    head = record if isinstance(record, str) and len(record) == 64 else ""  # a kept line's verified record
    return Result(table, text("game_key", 64), text("game", 64), tuple(sides), {k: v for k, v in players.items() if v},
                  tuple(winners), reason[:200], plies, float(ended), head)


def verified_result(data: Mapping[str, Any], enrolment: Enrolment) -> Result:
    """The result a table published, verified: ResultError if it is malformed, :class:`Unverified` (with the result
    and why) unless its signed record is signed by the table's enrolled key and replays to exactly this result.
    The counted result's players are the signed record's seats (the message's names fill only sides it leaves empty),
    and its reason the record's (the message's words if they are the record's reason in one of the catalogs)."""
    from controller.referee.signing import SignedRecordError, parse_key, unpack, verify_record

    result = replace(result_from_json(data), record="")
    packed = data.get("record")
    if packed is None:
        why = data.get("record_error")
        raise Unverified(result, f"no signed record came with it ({str(why)[:200]})" if why else
                         "no signed record came with it (a table before FaceDown signed its records?)")
    key = enrolment.key(result.table)
    if key is None:
        raise Unverified(result, f"table {result.table} is not enrolled: `facedown club enroll {result.table} KEY` "
                                 "with the key `facedown table key` prints on that table")
    try:
        ok = verify_record(unpack(packed, RECORD_LIMIT), parse_key(key), where=f"{result.table}'s signed record")
    except SignedRecordError as exc:
        raise Unverified(result, str(exc)) from None
    said = result.game_key.split("-", 1)[0]
    problems = []
    if ok.game != result.game:
        problems.append(f"it is a record of {ok.game}, the result says {result.game}")
    if said != str(ok.journal_game):
        problems.append(f"it is the table's game {ok.journal_game}, the result names game {said}")
    if tuple(ok.sides) != result.sides:
        problems.append(f"its sides are {', '.join(ok.sides)}, the result says {', '.join(result.sides)}")
    if sorted(ok.result.get("winners") or []) != sorted(result.winners):
        problems.append(f"it replays to {', '.join(ok.result.get('winners') or []) or 'a draw'}, the result says "
                        f"{', '.join(result.winners) or 'a draw'}")
    if ok.plies != result.plies:
        problems.append(f"it replays in {ok.plies} plies, the result says {result.plies}")
    if problems:
        raise Unverified(result, "the signed record does not match the result: " + "; ".join(problems))
    players = {**result.players, **{s: n for s, n in ok.seats.items() if n and s in result.sides}}
    # the reason is the record's, in the words the table chose among the catalogs (else English)
    reason = result.reason if result.reason in ok.reasons or not ok.reasons else ok.reasons[0][:200]
    return replace(result, players=players, reason=reason, record=ok.head)


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
        self._by_record: dict[str, tuple[str, str]] = {}  # a verified record's head -> the game it counted for
        self._unverified: dict[tuple[str, str], tuple[Result, str]] = {}
        self._lock = threading.Lock()
        if self.path is not None and self.path.exists():
            for n, line in self._lines():
                if not line.strip():
                    continue
                try:
                    r = result_from_json(parse_json(line, f"{self.path}:{n}"))
                except (ValueError, ResultError) as exc:
                    raise ResultError(f"{self.path}:{n}: {exc}") from None
                if not r.record:  # kept by a dashboard that did not verify results yet
                    self._results.pop(r.key, None)
                    self._unverified[r.key] = (r, "kept before the club verified results (no signed record)")
                    continue
                self._unverified.pop(r.key, None)
                self._results[r.key] = r
                self._by_record[r.record] = r.key

    def _lines(self) -> Iterator[tuple[int, str]]:
        """The results file a line at a time, each line bounded (a result with its signed record packs to at most
        ``MAX_LINE``): the file may grow with the club's season, never one line past reason."""
        from controller.textfiles import InputFileError, bounded_lines

        assert self.path is not None
        if not self.path.is_file():  # a FIFO or a device would block or never end
            raise ResultError(f"{self.path}: the results file is not a regular file")
        try:
            with self.path.open("rb") as f:
                yield from bounded_lines(f, str(self.path), "results file", MAX_LINE)
        except InputFileError as exc:
            raise ResultError(str(exc)) from None
        except OSError as exc:
            raise ResultError(f"{self.path}: cannot read the results ({exc.strerror or exc})") from None

    def add(self, result: Result) -> bool:
        """Count a verified ``result``; False if that exact result was already counted (a retained message seen
        again). Unverified if its signed record already counted for another game (a replayed record)."""
        with self._lock:
            if self._results.get(result.key) == result:
                return False
            if result.record:
                other = self._by_record.get(result.record)
                if other is not None and other != result.key:
                    raise Unverified(result, f"the same signed record already counted as {other[0]}'s game {other[1]}: "
                                             "a record counts once")
                self._by_record[result.record] = result.key
            self._unverified.pop(result.key, None)
            self._results[result.key] = result  # a later word on the same game (an arbiter's correction) replaces it
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(result.to_json(), ensure_ascii=False) + "\n")
            return True

    def set_unverified(self, result: Result, why: str) -> bool:
        """Keep ``result`` aside as unverified, with why (it is never counted); False if it was already so. A game
        whose counted result is followed by an unverified word keeps its counted result."""
        with self._lock:
            if self._unverified.get(result.key) == (result, why):
                return False
            self._unverified[result.key] = (result, why)
            return True

    def unverified(self) -> list[tuple[Result, str]]:
        """Every result not counted, with why, oldest first."""
        with self._lock:
            return sorted(self._unverified.values(), key=lambda rw: (rw[0].ended_at, rw[0].table))

    def all(self) -> list[Result]:
        """Every counted (verified) result, oldest first."""
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
