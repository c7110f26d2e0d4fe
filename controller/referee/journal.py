"""The game journal: every game's events, appended one committed transaction at a time to an SQLite file.

A game is rebuilt by replaying its events (controller.referee.replay), so the journal is the referee's memory
across a power cut. Events are never updated or deleted: triggers in the file itself refuse it.

>>> import tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as d, Journal(pathlib.Path(d) / "j.sqlite") as j:
...     gid = j.new_game("stratego", {}, board="sim")
...     _ = j.append(gid, "move", {"side": "red", "from": "a4", "to": "a5"})
...     [e.kind for e in j.events(gid)]
['game', 'move']

Durability: WAL mode with ``synchronous=FULL``. In WAL mode NORMAL only syncs at checkpoints, so a power cut
(the Pi's plug pulled, a flat battery) can lose the last few committed transactions even though the file stays
consistent; a move the buzzer has already announced must not vanish, so every commit is fsynced. The price is
one fsync per event, a few milliseconds on an SD card, against human moves seconds apart.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: "FDJN" in the SQLite header's application id field: marks the file as a FaceDown journal.
APPLICATION_ID = 0x46444A4E
SCHEMA_VERSION = 2  # 2: the `reaction` kind (a seat's answer to an optional reaction, its standing choice)

KINDS = ("game", "deploy", "move", "illegal", "arbiter", "result", "reaction")
ARBITER_ACTIONS = ("pause", "resume", "end", "undo", "out")
REACTION_ACTIONS = ("answer", "auto")

_SQLITE_MAGIC = b"SQLite format 3\x00"

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS games (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    game    TEXT NOT NULL,
    started REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    seq     INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id INTEGER NOT NULL REFERENCES games(id),
    kind    TEXT NOT NULL CHECK (kind IN ({", ".join(repr(k) for k in KINDS)})),
    data    TEXT NOT NULL,
    time    REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS events_by_game ON events(game_id, seq);
CREATE TRIGGER IF NOT EXISTS events_no_update BEFORE UPDATE ON events
    BEGIN SELECT RAISE(ABORT, 'FaceDown journal events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS events_no_delete BEFORE DELETE ON events
    BEGIN SELECT RAISE(ABORT, 'FaceDown journal events are append-only'); END;
CREATE TRIGGER IF NOT EXISTS games_no_update BEFORE UPDATE ON games
    BEGIN SELECT RAISE(ABORT, 'FaceDown journal games are append-only'); END;
CREATE TRIGGER IF NOT EXISTS games_no_delete BEFORE DELETE ON games
    BEGIN SELECT RAISE(ABORT, 'FaceDown journal games are append-only'); END;
"""


class JournalError(Exception):
    """The journal file is missing, not a FaceDown journal, corrupt, or has no such game; names the file."""


class EventError(JournalError, ValueError):
    """An event handed to the journal has an unknown kind or data of the wrong shape; nothing was written."""


@dataclass(frozen=True)
class Event:
    """One journaled event: its journal-wide sequence number, kind, data and wall-clock time (Unix seconds)."""

    seq: int
    kind: str
    data: dict[str, Any]
    time: float


@dataclass(frozen=True)
class GameSummary:
    """One game as `facedown record list` shows it; ``moves`` counts accepted moves less those taken back."""

    id: int
    game: str
    started: float
    finished: float | None
    result: dict[str, Any] | None
    moves: int


def default_path() -> Path:
    """``$XDG_DATA_HOME/facedown/journal.sqlite``, else ``~/.local/share/facedown/journal.sqlite``."""
    base = os.environ.get("XDG_DATA_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "facedown" / "journal.sqlite"


def _need(kind: str, data: Mapping[str, Any], key: str, typ: type | tuple[type, ...], what: str) -> Any:
    if key not in data:
        raise EventError(f"{kind} event: missing {key!r} ({what})")
    value = data[key]
    if not isinstance(value, typ) or isinstance(value, bool) and typ is not bool:
        raise EventError(f"{kind} event: {key!r} should be {what}, not {value!r}")
    return value


def _check_result(kind: str, result: Any) -> None:
    if not isinstance(result, Mapping):
        raise EventError(f"{kind} event: result should be a mapping with 'winners' and 'reason', not {result!r}")
    winners = _need(kind, result, "winners", list, "a list of sides (empty for a draw)")
    if not all(isinstance(w, str) for w in winners):
        raise EventError(f"{kind} event: 'winners' should list side names, not {winners!r}")
    _check_reason(kind, result)


def _check_reason(kind: str, data: Mapping[str, Any]) -> None:
    """A result's or an elimination's ``reason``: a message object ({"code": ..., "params": {...}}), or the
    sentence older journals hold."""
    if "reason" not in data:
        raise EventError(f"{kind} event: missing 'reason' (a message object)")
    reason = data["reason"]
    if isinstance(reason, str) or (isinstance(reason, Mapping) and isinstance(reason.get("code"), str)
                                   and isinstance(reason.get("params", {}), Mapping)):
        return
    raise EventError(f"{kind} event: 'reason' should be a message object, not {reason!r}")


def _check_clock(kind: str, data: Mapping[str, Any]) -> None:
    """The optional ``clock`` of a move or arbiter event: each side's seconds left on the game clock just then."""
    if "clock" not in data:
        return
    clock = data["clock"]
    if not isinstance(clock, Mapping) or not clock or not all(
            isinstance(k, str) and isinstance(v, int | float) and not isinstance(v, bool) and 0 <= v < 1e7
            for k, v in clock.items()):
        raise EventError(f"{kind} event: 'clock' should map each side to its seconds left (0 or more), not {clock!r}")


def check_event(kind: str, data: Any) -> None:
    """Raise EventError unless ``data`` has the shape the journal's event ``kind`` requires."""
    if kind not in KINDS:
        raise EventError(f"unknown event kind {kind!r}: expected one of {', '.join(KINDS)}")
    if not isinstance(data, Mapping):
        raise EventError(f"{kind} event: data should be a mapping, not {type(data).__name__}")
    if kind == "game":
        _need(kind, data, "game", str, "a game id")
        _need(kind, data, "options", Mapping, "a mapping of options")
        _need(kind, data, "board", str, "the board backend: sim, gpio or serial")
        if data.get("profile") is not None and not isinstance(data["profile"], str):
            raise EventError(f"game event: 'profile' should be a path or null, not {data['profile']!r}")
        if not isinstance(data.get("seats", {}), Mapping):
            raise EventError(f"game event: 'seats' should map sides to player names, not {data['seats']!r}")
    elif kind == "deploy":
        _need(kind, data, "side", str, "a side")
        placement = _need(kind, data, "placement", Mapping, "a mapping station -> piece id")
        if not all(isinstance(k, str) and isinstance(v, str) for k, v in placement.items()):
            raise EventError("deploy event: 'placement' should map station ids to piece ids")
    elif kind in ("move", "illegal"):
        _need(kind, data, "side", str, "a side")
        _need(kind, data, "from", str, "a station id")
        _need(kind, data, "to", str, "a station id")
        if kind == "move":
            _check_clock(kind, data)
    elif kind == "arbiter":
        action = data.get("action")
        if action not in ARBITER_ACTIONS:
            raise EventError(f"arbiter event: 'action' should be one of {', '.join(ARBITER_ACTIONS)}, not {action!r}")
        if action == "end":
            if "result" not in data:
                raise EventError("arbiter event: 'end' needs a 'result' with 'winners' and 'reason'")
            _check_result(kind, data["result"])
        if action == "out":
            _need(kind, data, "side", str, "the side the arbiter puts out")
            _check_reason(kind, data)
        _check_clock(kind, data)
    elif kind == "result":
        _check_result(kind, data)
    elif kind == "reaction":
        action = data.get("action")
        if action not in REACTION_ACTIONS:
            raise EventError(f"reaction event: 'action' should be one of {', '.join(REACTION_ACTIONS)}, not {action!r}")
        _need(kind, data, "side", str, "the seat that answers")
        if action == "answer":
            _need(kind, data, "offer", int, "the offer's number")
            _need(kind, data, "accept", bool, "true (react) or false (decline)")
        else:
            _need(kind, data, "auto", bool, "true (react without asking) or false (ask)")


def _encode(kind: str, data: Mapping[str, Any]) -> str:
    try:
        return json.dumps(data, ensure_ascii=False, sort_keys=True, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise EventError(f"{kind} event: data is not JSON: {exc}") from None


class Journal:
    """A FaceDown journal file, opened (or created) for reading and appending.

    ``create=False`` refuses to create a missing file (what read-only tools such as `facedown record` want).
    ``clock`` gives the wall-clock time stored with each event (Unix seconds).
    """

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True, clock: Callable[[], float] = time.time) -> None:
        self.path = Path(path)
        self._clock = clock
        self._lock = threading.Lock()
        if self.path.is_dir():
            raise JournalError(f"{self.path}: is a directory, not a FaceDown journal")
        exists = self.path.exists() and self.path.stat().st_size > 0
        if not exists and not create:
            raise JournalError(f"{self.path}: no journal here (no game has been recorded in it)")
        if exists:
            self._check_header()
        else:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                raise JournalError(f"{self.path}: cannot create the journal's folder: {exc.strerror}") from None
        try:
            self._db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None, check_same_thread=False)
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: cannot open the journal: {exc}") from None
        try:
            self._open()
        except sqlite3.DatabaseError as exc:
            self._db.close()
            raise JournalError(f"{self.path}: the journal is corrupt or not a FaceDown journal: {exc}") from None
        except JournalError:
            self._db.close()
            raise

    # ------------------------------------------------------------------ opening
    def _check_header(self) -> None:
        try:
            with self.path.open("rb") as f:
                head = f.read(len(_SQLITE_MAGIC))
        except OSError as exc:
            raise JournalError(f"{self.path}: cannot read the journal: {exc.strerror}") from None
        if head != _SQLITE_MAGIC:
            raise JournalError(f"{self.path}: not a FaceDown journal (not an SQLite database at all)")

    def _open(self) -> None:
        db = self._db
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if app_id == 0 and not tables:
            self._create_schema()
            tables = {"games", "events"}
        elif app_id != APPLICATION_ID:
            found = f"tables: {', '.join(sorted(tables))}" if tables else "no tables"
            raise JournalError(f"{self.path}: an SQLite database but not a FaceDown journal ({found})")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if version > SCHEMA_VERSION:
            raise JournalError(f"{self.path}: journal schema {version} is newer than this FaceDown understands ({SCHEMA_VERSION})")
        if not {"games", "events"} <= tables or version < 1:
            raise JournalError(f"{self.path}: a FaceDown journal without its tables (schema {version})")
        problems = [r[0] for r in db.execute("PRAGMA quick_check(5)")]
        if problems != ["ok"]:
            raise JournalError(f"{self.path}: the journal is corrupt: {'; '.join(problems)}")
        mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise JournalError(f"{self.path}: cannot use write-ahead logging here (journal mode stays {mode!r})")
        db.execute("PRAGMA synchronous = FULL")
        if version < SCHEMA_VERSION:
            self._upgrade(version)
        db.execute("PRAGMA foreign_keys = ON")

    def _create_schema(self) -> None:
        # statement by statement inside one transaction: executescript() would commit on its own
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            for statement in _split_sql(_SCHEMA):
                db.execute(statement)
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _upgrade(self, version: int) -> None:
        """Bring an older journal to this schema in one transaction. 1 -> 2: the events table's kind check gains
        ``reaction``; SQLite cannot alter a check, so the table is copied (every event and its number kept) into a
        new one with the new check, and its index and append-only triggers are made again."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            if version < 2:
                events = next(st for st in _split_sql(_SCHEMA) if st.startswith("CREATE TABLE IF NOT EXISTS events"))
                db.execute(events.replace("IF NOT EXISTS events", "events_upgrade", 1))
                db.execute("INSERT INTO events_upgrade (seq, game_id, kind, data, time) SELECT seq, game_id, kind, data, time FROM events")
                db.execute("DROP TABLE events")  # its index and triggers go with it
                db.execute("ALTER TABLE events_upgrade RENAME TO events")
                for statement in _split_sql(_SCHEMA):
                    if "ON events" in statement:
                        db.execute(statement)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    # ------------------------------------------------------------------ writing
    def new_game(
        self,
        game: str,
        options: Mapping[str, Any] | None = None,
        *,
        board: str,
        profile: str | None = None,
        seats: Mapping[str, str] | None = None,
    ) -> int:
        """Record a new game and its opening `game` event in one transaction; return the game's id."""
        data = {
            "game": game,
            "options": dict(options or {}),
            "profile": None if profile is None else str(profile),
            "board": board,
            "seats": dict(seats or {}),
        }
        check_event("game", data)
        text = _encode("game", data)
        with self._lock:
            now = self._clock()
            with self._transaction():
                cur = self._db.execute("INSERT INTO games (game, started) VALUES (?, ?)", (game, now))
                gid = int(cur.lastrowid or 0)
                self._db.execute("INSERT INTO events (game_id, kind, data, time) VALUES (?, 'game', ?, ?)", (gid, text, now))
        return gid

    def append(self, game_id: int, kind: str, data: Mapping[str, Any]) -> int:
        """Append one event to a game as its own committed transaction; return its journal-wide sequence number."""
        if kind == "game":
            raise EventError("a game event is written only by Journal.new_game")
        check_event(kind, data)
        text = _encode(kind, data)
        with self._lock:
            with self._transaction():
                self._require_game(game_id)
                cur = self._db.execute(
                    "INSERT INTO events (game_id, kind, data, time) VALUES (?, ?, ?, ?)", (game_id, kind, text, self._clock())
                )
        return int(cur.lastrowid or 0)

    def append_many(self, game_id: int, events: list[tuple[str, Mapping[str, Any]]]) -> list[int]:
        """Append several events in one committed transaction (all or none): for imports, where one fsync per
        event would make a long game slow to bring in. Every event is checked before anything is written."""
        texts = []
        for kind, data in events:
            if kind == "game":
                raise EventError("a game event is written only by Journal.new_game")
            check_event(kind, data)
            texts.append((kind, _encode(kind, data)))
        seqs = []
        with self._lock:
            with self._transaction():
                self._require_game(game_id)
                now = self._clock()
                for kind, text in texts:
                    cur = self._db.execute("INSERT INTO events (game_id, kind, data, time) VALUES (?, ?, ?, ?)", (game_id, kind, text, now))
                    seqs.append(int(cur.lastrowid or 0))
        return seqs

    def _transaction(self) -> _Transaction:
        return _Transaction(self)

    # ------------------------------------------------------------------ reading
    def _require_game(self, game_id: int) -> None:
        if isinstance(game_id, bool) or not isinstance(game_id, int):
            raise JournalError(f"{self.path}: game ids are whole numbers, not {game_id!r}")
        if self._db.execute("SELECT 1 FROM games WHERE id = ?", (game_id,)).fetchone() is None:
            raise JournalError(f"{self.path}: no game {game_id} in this journal")

    def events(self, game_id: int) -> list[Event]:
        """Every event of one game, oldest first."""
        with self._lock, self._reading():
            self._require_game(game_id)
            rows = self._db.execute(
                "SELECT seq, kind, data, time FROM events WHERE game_id = ? ORDER BY seq", (game_id,)
            ).fetchall()
        return [Event(seq, kind, self._decode(seq, data), time_) for seq, kind, data, time_ in rows]

    def _decode(self, seq: int, text: str) -> dict[str, Any]:
        try:
            data = json.loads(text)
        except (TypeError, ValueError) as exc:
            raise JournalError(f"{self.path}: event {seq} is corrupt (its data is not JSON: {exc})") from None
        if not isinstance(data, dict):
            raise JournalError(f"{self.path}: event {seq} is corrupt (its data is not a JSON object)")
        return data

    def games(self) -> list[GameSummary]:
        """A summary of every game in the journal, oldest first."""
        with self._lock, self._reading():
            games = self._db.execute("SELECT id, game, started FROM games ORDER BY id").fetchall()
            moves = dict(self._db.execute("SELECT game_id, COUNT(*) FROM events WHERE kind = 'move' GROUP BY game_id"))
            ends = self._db.execute(
                "SELECT game_id, seq, kind, data, time FROM events WHERE kind IN ('arbiter', 'result') ORDER BY seq"
            ).fetchall()
        state: dict[int, tuple[dict[str, Any] | None, float | None, int]] = {}
        for gid, seq, kind, text, when in ends:
            result, finished, undos = state.get(gid, (None, None, 0))
            data = self._decode(seq, text)
            if kind == "result":
                result, finished = data, when
            elif data.get("action") == "end":
                result, finished = data.get("result"), when
            elif data.get("action") == "undo":
                result, finished, undos = None, None, undos + 1
            state[gid] = (result, finished, undos)
        out = []
        for gid, game, started in games:
            result, finished, undos = state.get(gid, (None, None, 0))
            out.append(GameSummary(gid, game, started, finished, result, max(0, moves.get(gid, 0) - undos)))
        return out

    def summary(self, game_id: int) -> GameSummary:
        """The summary of one game; JournalError if the journal has no such game."""
        for g in self.games():
            if g.id == game_id:
                return g
        with self._lock, self._reading():
            self._require_game(game_id)
        raise AssertionError("unreachable")  # pragma: no cover

    def unfinished(self) -> int | None:
        """The id of the newest game without a result, or None."""
        for g in reversed(self.games()):
            if g.result is None:
                return g.id
        return None

    def _reading(self) -> _Reading:
        return _Reading(self)

    # ------------------------------------------------------------------ closing
    def close(self) -> None:
        """Close the file (the write-ahead log is checkpointed into it when the last reader closes)."""
        self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT around one write; rolls back and reports the file on an SQLite error."""

    def __init__(self, journal: Journal) -> None:
        self.j = journal

    def __enter__(self) -> None:
        try:
            self.j._db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise JournalError(f"{self.j.path}: cannot write to the journal: {exc}") from None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> bool:
        db = self.j._db
        if exc_type is None:
            try:
                db.execute("COMMIT")
                return False
            except sqlite3.Error as err:
                exc, exc_type = err, type(err)
        if db.in_transaction:
            db.execute("ROLLBACK")
        if isinstance(exc, sqlite3.Error):
            raise JournalError(f"{self.j.path}: cannot write to the journal: {exc}") from None
        return False


class _Reading:
    """Turns an SQLite error while reading into a JournalError naming the file."""

    def __init__(self, journal: Journal) -> None:
        self.j = journal

    def __enter__(self) -> None:
        return None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> bool:
        if isinstance(exc, sqlite3.Error):
            raise JournalError(f"{self.j.path}: cannot read the journal: {exc}") from None
        return False


def _split_sql(script: str) -> list[str]:
    """The statements of a schema script (triggers keep their inner ``;`` until their ``END;``)."""
    out: list[str] = []
    buf = ""
    for line in script.strip().splitlines():
        buf += line + "\n"
        if sqlite3.complete_statement(buf):
            out.append(buf.strip())
            buf = ""
    return out
