"""The game journal: every game's events, appended one committed transaction at a time to an SQLite file.

A game is rebuilt by replaying its events (controller.referee.replay), so the journal is the referee's memory
across a power cut. Events are never updated or deleted: triggers in the file itself refuse it.

Each event's SHA-256 is chained to the one before (the game's first to its game file's digest) and written in the
same transaction, with the game's head (controller.referee.chain). ``events`` checks a game's chain before handing
its events out: a damaged, changed or lost event raises :class:`ChainError` naming the game and event, and is never
replayed; ``repair`` journals the arbiter's decision to go on from the last intact event. Events written before the
chain (schema 2) have no digest: see controller.referee.chain for how they are treated.

>>> import tempfile, pathlib
>>> with tempfile.TemporaryDirectory() as d, Journal(pathlib.Path(d) / "j.sqlite") as j:
...     gid = j.new_game("stratego", {}, board="sim")
...     _ = j.append(gid, "move", {"side": "red", "from": "a4", "to": "a5"})
...     [e.kind for e in j.events(gid)]
['game', 'move']

Durability without the wait. A ruling the buzzer has announced must survive a power cut (the Pi's plug pulled,
a flat battery) once the players have acted on it. The journal runs SQLite in WAL mode:
- ``durability="deferred"`` (the referee's default): a commit only *writes* the event to the write-ahead log
  (``synchronous=NORMAL``: it survives the process being killed, since the bytes are in the kernel), and a
  syncer thread fsyncs the log at once, concurrently with the announcement. The next append waits for that
  fsync before it writes (a barrier, normally long done: moves come seconds apart). So the fsync is off the path
  from the settled board to the verdict, and no ruling is lost once the next move is accepted. Checkpoints (which
  fsync the database file too) also run in the syncer, on their own connection, never in the referee's thread.
  A failed fsync is kept and raised by the next append (and ``check_durable``): the referee then stops visibly.
- ``durability="full"``: every commit is fsynced before it returns (``synchronous=FULL``), for tools that write
  once and exit.

One writer per journal: ``JournalLock`` (an ``fcntl.flock`` on ``<journal>.lock``, held for the process's life)
refuses a second referee on the same file at once, naming the holder's pid. Journals are created mode 0600
(their write-ahead log and shared-memory files inherit it): they hold every hidden piece of every game.
"""

from __future__ import annotations

import errno
import fcntl
import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.errors import FaceDownError

from . import chain

#: "FDJN" in the SQLite header's application id field: marks the file as a FaceDown journal.
APPLICATION_ID = 0x46444A4E
# 2: the `reaction` kind (a seat's answer to an optional reaction, its standing choice)
# 3: each event's `digest`, chained to the one before (controller.referee.chain), and each game's chain head
SCHEMA_VERSION = 3

KINDS = ("game", "deploy", "move", "illegal", "arbiter", "result", "reaction")
#: away/back: a remote seat's board lost its link to the host, and came back (a record: the host's clocks hold by
#: the club's rule while a side is away)
#: ask_undo: a remote seat asking to take back the last ruling, or agreeing, or declining (a record: the undo that
#: follows once every seat agreed is journaled as ``undo``)
ARBITER_ACTIONS = ("pause", "resume", "end", "undo", "out", "repair", "away", "back", "ask_undo")
REACTION_ACTIONS = ("answer", "auto")

_SQLITE_MAGIC = b"SQLite format 3\x00"
# quick_check's words for a damaged value in a sound file (a row's type or check), which the chain then names
_ROW_PROBLEMS = ("CHECK constraint failed in", "NULL value in", "NUMERIC value in", "TEXT value in", "INTEGER value in",
                 "REAL value in", "BLOB value in")
_CHECKPOINT_EVERY = 200  # appends between background checkpoints (the WAL stays a few hundred kB at most)
DURABILITY = ("deferred", "full")

log = logging.getLogger(__name__)

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
    time    REAL NOT NULL,
    digest  TEXT
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

#: Each game's chain head: how many events it has and the newest one's digest (so an event lost from the end is
#: found). Rewritten in the same transaction as every append; never deleted.
_HEADS_SCHEMA = """
CREATE TABLE IF NOT EXISTS chain_heads (
    game_id INTEGER PRIMARY KEY REFERENCES games(id),
    events  INTEGER NOT NULL,
    digest  TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS chain_heads_no_delete BEFORE DELETE ON chain_heads
    BEGIN SELECT RAISE(ABORT, 'FaceDown journal chain heads are kept'); END;
"""


#: The game file each game was started from (``Journal.new_game(game_file=...)``); append-only too.
_GAME_FILES_SCHEMA = """
CREATE TABLE IF NOT EXISTS game_files (
    game_id INTEGER PRIMARY KEY REFERENCES games(id),
    file    TEXT NOT NULL,
    sha256  TEXT NOT NULL,
    text    TEXT NOT NULL
);
CREATE TRIGGER IF NOT EXISTS game_files_no_update BEFORE UPDATE ON game_files
    BEGIN SELECT RAISE(ABORT, 'FaceDown journal game files are append-only'); END;
CREATE TRIGGER IF NOT EXISTS game_files_no_delete BEFORE DELETE ON game_files
    BEGIN SELECT RAISE(ABORT, 'FaceDown journal game files are append-only'); END;
"""


@dataclass(frozen=True)
class GameFile:
    """The game file a journaled game was started from: where it was read, its SHA-256 and its text."""

    file: str
    sha256: str
    text: str


class JournalError(FaceDownError):
    """The journal file is missing, not a FaceDown journal, corrupt, or has no such game; names the file."""


class EventError(JournalError, ValueError):
    """An event handed to the journal has an unknown kind or data of the wrong shape; nothing was written."""


class ChainError(JournalError):
    """A game's events do not verify against its digest chain: an event was damaged, changed or lost.

    ``seq`` names the first event that fails (None: events are missing after the last one, or the game's head record
    is damaged); ``intact`` holds the game's events before it, which still verify (empty when its start is damaged).
    """

    def __init__(self, path: Path, game_id: int, seq: int | None, why: str, intact: list[Event],
                 chained: bool = True) -> None:
        self.path = path
        self.chained = chained  # False: an event journaled before the chain does not read (no repair can skip it)
        self.game_id = game_id
        self.seq = seq
        self.why = why
        self.intact = intact
        self.brief = (f"game {game_id}, event {seq} is damaged ({why})" if seq is not None
                      else f"game {game_id} is damaged ({why})")
        super().__init__(f"{path}: {self.brief}")

    @property
    def repairable(self) -> bool:
        """Can the game go on from its last intact event (its start itself is intact, and the chain can skip it)?"""
        return bool(self.intact) and self.chained


@dataclass(frozen=True)
class GameCheck:
    """What the chain says of one game: ``chained`` False for a game journaled before the chain (nothing proves it
    intact); ``damage`` the ChainError if it breaks; ``events`` the events that verify; ``head`` the newest digest
    (the whole game's, when intact); ``set_aside`` the damaged events an arbiter's repair set aside."""

    game_id: int
    chained: bool
    events: list[Event]
    damage: ChainError | None
    head: str
    set_aside: tuple[int, ...]
    root: str


class JournalBusy(JournalError):
    """Another process holds the journal (one writer per journal); ``pid`` is the holder's, if it wrote it."""

    def __init__(self, message: str, pid: int | None) -> None:
        super().__init__(message)
        self.pid = pid


class JournalLock:
    """An exclusive lock on one journal for the life of the process that plays on it.

    ``fcntl.flock`` on ``<journal>.lock`` (created mode 0600, never deleted: deleting a lock file races with the
    next taker). The kernel drops the lock when the process dies however it dies, so a crash never leaves the
    journal locked. The holder writes its pid into the file so that a refused second referee can name it.
    """

    def __init__(self, journal_path: str | os.PathLike[str]) -> None:
        self._fd: int | None = None
        self.journal_path = Path(journal_path)
        self.path = self.journal_path.with_name(self.journal_path.name + ".lock")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise JournalError(f"{self.path}: cannot create the journal's lock file: {exc.strerror}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            holder = _read_pid(fd)
            os.close(fd)
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise JournalError(f"{self.path}: cannot lock the journal: {exc.strerror}") from None
            who = f"pid {holder}" if holder is not None else "another process"
            raise JournalBusy(f"{self.journal_path}: already in use by another FaceDown referee ({who}); stop it first "
                              "(e.g. `sudo systemctl stop facedown`) or give this one its own --journal", holder) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Unlock (closing the file drops the flock)."""
        fd, self._fd = self._fd, None
        if fd is not None:
            os.close(fd)

    def __enter__(self) -> JournalLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()

    def __del__(self) -> None:  # a table dropped without stop() (tests, a failed start) must not keep its lock
        self.release()


def _read_pid(fd: int) -> int | None:
    try:
        text = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


def secure_file(path: Path) -> None:
    """Make ``path`` readable by its owner only (journals and keys hold hidden pieces); other owners' files are left."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return
    if st.st_uid == os.getuid() and st.st_mode & 0o077:
        path.chmod(0o600)


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
        if not isinstance(data.get("computers", {}), Mapping):
            raise EventError(f"game event: 'computers' should map sides to bot names, not {data['computers']!r}")
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
        if action == "repair":
            _need(kind, data, "after", int, "the seq of the last intact event the game goes on from")
            aside = _need(kind, data, "set_aside", list, "the seqs of the damaged events set aside")
            if not all(isinstance(n, int) and not isinstance(n, bool) for n in aside):
                raise EventError(f"arbiter event: 'set_aside' should list event numbers, not {aside!r}")
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


def _as_time(value: Any) -> float:
    """A stored event time; NaN (which no digest was made from) when the stored value is damaged."""
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _decoded(text: str) -> dict[str, Any] | None:
    """An event's data read back, or None if it is not a JSON object (a damaged event)."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError, RecursionError):
        return None
    return data if isinstance(data, dict) else None


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

    def __init__(self, path: str | os.PathLike[str], *, create: bool = True, clock: Callable[[], float] = time.time,
                 durability: str = "full") -> None:
        if durability not in DURABILITY:
            raise ValueError(f"durability should be one of {', '.join(DURABILITY)}, not {durability!r}")
        self.path = Path(path)
        self._clock = clock
        self._lock = threading.Lock()
        self.durability = durability
        self._syncer: _Syncer | None = None
        if self.path.is_dir():
            raise JournalError(f"{self.path}: is a directory, not a FaceDown journal")
        exists = self.path.exists() and self.path.stat().st_size > 0
        if not exists and not create:
            raise JournalError(f"{self.path}: no journal here (no game has been recorded in it)")
        if exists:
            self._check_header()
            for suffix in ("", "-wal", "-shm"):
                secure_file(self.path.with_name(self.path.name + suffix))
        else:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                # created 0600 before SQLite opens it: its -wal and -shm files take the same mode
                os.close(os.open(self.path, os.O_WRONLY | os.O_CREAT, 0o600))
                secure_file(self.path)
            except OSError as exc:
                raise JournalError(f"{self.path}: cannot create the journal: {exc.strerror}") from None
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
            if not all(p.startswith(_ROW_PROBLEMS) for p in problems):
                raise JournalError(f"{self.path}: the journal is corrupt: {'; '.join(problems)}")
            # the file's structure is sound, only some rows' values are damaged: each game's chain names its own
            log.warning("%s: damaged rows (%s); the digest chain names the events", self.path, "; ".join(problems))
        mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if str(mode).lower() != "wal":
            raise JournalError(f"{self.path}: cannot use write-ahead logging here (journal mode stays {mode!r})")
        if self.durability == "full":
            db.execute("PRAGMA synchronous = FULL")
        else:
            # commits only write the log; the syncer fsyncs it and checkpoints on its own connection
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA wal_autocheckpoint = 0")
        if version < SCHEMA_VERSION:
            self._upgrade(version)
        db.execute("PRAGMA foreign_keys = ON")

    def _create_schema(self) -> None:
        # statement by statement inside one transaction: executescript() would commit on its own
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            for statement in _split_sql(_SCHEMA + _GAME_FILES_SCHEMA + _HEADS_SCHEMA):
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
        new one with the new check, and its index and append-only triggers are made again. 2 -> 3: events gain
        their ``digest`` column (NULL for every event written before: see controller.referee.chain for how such
        events are treated) and the ``chain_heads`` table is made; no event is rewritten."""
        db = self._db
        db.execute("BEGIN IMMEDIATE")
        try:
            columns = {r[1] for r in db.execute("PRAGMA table_info(events)")}
            if version < 2:
                events = next(st for st in _split_sql(_SCHEMA) if st.startswith("CREATE TABLE IF NOT EXISTS events"))
                db.execute(events.replace("IF NOT EXISTS events", "events_upgrade", 1))
                kept = "seq, game_id, kind, data, time" + (", digest" if "digest" in columns else "")
                db.execute(f"INSERT INTO events_upgrade ({kept}) SELECT {kept} FROM events")
                db.execute("DROP TABLE events")  # its index and triggers go with it
                db.execute("ALTER TABLE events_upgrade RENAME TO events")
                for statement in _split_sql(_SCHEMA):
                    if "ON events" in statement:
                        db.execute(statement)
            elif "digest" not in columns:
                db.execute("ALTER TABLE events ADD COLUMN digest TEXT")
            for statement in _split_sql(_GAME_FILES_SCHEMA + _HEADS_SCHEMA):
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
        computers: Mapping[str, str] | None = None,
        game_file: tuple[str, str] | None = None,
    ) -> int:
        """Record a new game and its opening `game` event in one transaction; return the game's id. ``computers``:
        the seats a bot plays {side: bot name} (kept only when there are any: such a seat never gets a link).

        ``game_file``: ``(where it was read, its text)``, kept with the game (so it can be shown, replayed and
        resumed after the file moved or changed) in the same transaction; the game's chain starts at its digest."""
        data = {
            "game": game,
            "options": dict(options or {}),
            "profile": None if profile is None else str(profile),
            "board": board,
            "seats": dict(seats or {}),
        }
        if computers:
            data["computers"] = dict(computers)
        check_event("game", data)
        text = _encode("game", data)
        file_sha = None
        if game_file is not None:
            if not game_file[1]:
                raise EventError(f"{game}: no game file text to keep")
            file_sha = hashlib.sha256(game_file[1].encode("utf-8")).hexdigest()
        with self._lock:
            self._before_write()
            now = float(self._clock())
            with self._transaction():
                cur = self._db.execute("INSERT INTO games (game, started) VALUES (?, ?)", (game, now))
                gid = int(cur.lastrowid or 0)
                if game_file is not None:
                    self._db.execute("INSERT INTO game_files (game_id, file, sha256, text) VALUES (?, ?, ?, ?)",
                                     (gid, game_file[0], file_sha, game_file[1]))
                digest = chain.link(chain.root(gid, game, now, file_sha), "game", now, text)
                self._db.execute("INSERT INTO events (game_id, kind, data, time, digest) VALUES (?, 'game', ?, ?, ?)",
                                 (gid, text, now, digest))
                self._db.execute("INSERT INTO chain_heads (game_id, events, digest) VALUES (?, 1, ?)", (gid, digest))
            self._after_write()
        return gid

    def append(self, game_id: int, kind: str, data: Mapping[str, Any]) -> int:
        """Append one event to a game as its own committed transaction; return its journal-wide sequence number.

        The event's digest is chained to the game's newest one and the game's head moves on in the same transaction."""
        if kind == "game":
            raise EventError("a game event is written only by Journal.new_game")
        check_event(kind, data)
        text = _encode(kind, data)
        with self._lock:
            self._before_write()
            with self._transaction():
                seq = self._insert(game_id, [(kind, text)], float(self._clock()))[0]
            self._after_write()
        return seq

    def append_many(self, game_id: int, events: list[tuple[str, Mapping[str, Any]]]) -> list[int]:
        """Append several events in one committed transaction (all or none): for imports, where one fsync per
        event would make a long game slow to bring in. Every event is checked before anything is written."""
        texts = []
        for kind, data in events:
            if kind == "game":
                raise EventError("a game event is written only by Journal.new_game")
            check_event(kind, data)
            texts.append((kind, _encode(kind, data)))
        with self._lock:
            self._before_write()
            with self._transaction():
                seqs = self._insert(game_id, texts, float(self._clock()))
            self._after_write()
        return seqs

    def _insert(self, game_id: int, texts: list[tuple[str, str]], now: float) -> list[int]:
        """Insert events chained onto the game's head and move the head on (inside the caller's transaction)."""
        count, prev = self._head(game_id)
        seqs = []
        for kind, text in texts:
            prev = chain.link(prev, kind, now, text)
            cur = self._db.execute("INSERT INTO events (game_id, kind, data, time, digest) VALUES (?, ?, ?, ?, ?)",
                                   (game_id, kind, text, now, prev))
            seqs.append(int(cur.lastrowid or 0))
        self._db.execute("INSERT INTO chain_heads (game_id, events, digest) VALUES (?, ?, ?) ON CONFLICT(game_id) "
                         "DO UPDATE SET events = excluded.events, digest = excluded.digest",
                         (game_id, count + len(texts), prev))
        return seqs

    def _head(self, game_id: int) -> tuple[int, str]:
        """The game's event count and newest digest. A game journaled before the chain has no head yet: its events
        are walked once, and the first event chained after them seals them."""
        if isinstance(game_id, int) and not isinstance(game_id, bool):
            row = self._db.execute("SELECT events, digest FROM chain_heads WHERE game_id = ?", (game_id,)).fetchone()
            if row is not None:
                return int(row[0]), str(row[1])
        self._require_game(game_id)
        rows, start, _ = self._chain_rows(game_id)
        walked = chain.walk(rows, start, None)
        if walked.chained or walked.damage is not None:
            raise self._chain_error(game_id, walked, rows)
        return len(rows), walked.head

    def _transaction(self) -> _Transaction:
        return _Transaction(self._db, self.path)

    # ------------------------------------------------------------------ durability
    def _before_write(self) -> None:
        """The barrier: the previous commit is on the disk before anything new is written (deferred mode)."""
        if self._syncer is not None:
            self._syncer.wait()

    def _after_write(self) -> None:
        if self.durability == "deferred":
            if self._syncer is None:
                self._syncer = _Syncer(self.path)
            self._syncer.request()

    def wait_durable(self, timeout: float | None = None) -> bool:
        """Block until every committed event is fsynced; True when it is. Raises JournalError if a sync failed."""
        return True if self._syncer is None else self._syncer.wait(timeout)

    def check_durable(self) -> None:
        """Raise JournalError if the background sync has failed (the disk refused: full, read-only, gone)."""
        if self._syncer is not None:
            self._syncer.check()

    # ------------------------------------------------------------------ reading
    def _require_game(self, game_id: int) -> None:
        if isinstance(game_id, bool) or not isinstance(game_id, int):
            raise JournalError(f"{self.path}: game ids are whole numbers, not {game_id!r}")
        if self._db.execute("SELECT 1 FROM games WHERE id = ?", (game_id,)).fetchone() is None:
            raise JournalError(f"{self.path}: no game {game_id} in this journal")

    def events(self, game_id: int) -> list[Event]:
        """Every event of one game, oldest first, checked against the game's digest chain: a damaged, changed or
        lost event raises :class:`ChainError` naming it (never replayed silently). Events an arbiter's repair set
        aside are left out."""
        found = self.check(game_id)
        if found.damage is not None:
            raise found.damage
        return found.events

    def check(self, game_id: int) -> GameCheck:
        """The chain's word on one game (no exception for damage: see :class:`GameCheck`)."""
        with self._lock, self._reading():
            self._require_game(game_id)
            rows, start, head = self._chain_rows(game_id)
        walked = chain.walk(rows, start, head)
        events, damage = self._intact_events(game_id, walked, rows)
        return GameCheck(game_id, walked.chained, events, damage, walked.head, tuple(walked.set_aside), start)

    def orphans(self) -> list[int]:
        """Events that name no game of the journal (a damaged game number), by seq."""
        with self._lock, self._reading():
            return [int(r[0]) for r in self._db.execute(
                "SELECT seq FROM events WHERE game_id NOT IN (SELECT id FROM games) ORDER BY seq")]

    def chain_rows(self, game_id: int) -> tuple[list[chain.Row], str, float]:
        """Every stored row of one game as the chain sees it (set-aside ones too), its game id and start time: what
        a signed record carries so that anyone can walk the chain again."""
        with self._lock, self._reading():
            self._require_game(game_id)
            rows, _, _ = self._chain_rows(game_id)
            game, started = self._db.execute("SELECT game, started FROM games WHERE id = ?", (game_id,)).fetchone()
        return rows, str(game), _as_time(started)

    def _chain_rows(self, game_id: int) -> tuple[list[chain.Row], str, tuple[int, str] | None]:
        """The game's stored rows, its chain root and its head (None if the journal keeps none for it)."""
        db = self._db
        rows = [chain.Row(int(seq), str(kind), _as_time(when), str(data), digest if isinstance(digest, str) else None)
                for seq, kind, data, when, digest in db.execute(
                    "SELECT seq, kind, data, time, digest FROM events WHERE game_id = ? ORDER BY seq", (game_id,))]
        game, started = db.execute("SELECT game, started FROM games WHERE id = ?", (game_id,)).fetchone()
        sha = db.execute("SELECT sha256 FROM game_files WHERE game_id = ?", (game_id,)).fetchone()
        head = db.execute("SELECT events, digest FROM chain_heads WHERE game_id = ?", (game_id,)).fetchone()
        start = chain.root(game_id, str(game), _as_time(started), str(sha[0]) if sha else None)
        if head is not None and not (isinstance(head[0], int) and isinstance(head[1], str)):
            head = (-1, "")  # a damaged head matches no game
        return rows, start, (int(head[0]), str(head[1])) if head else None

    def _intact_events(self, game_id: int, walked: chain.Walk, rows: list[chain.Row]) -> tuple[list[Event], ChainError | None]:
        events: list[Event] = []
        for row in walked.intact:
            data = _decoded(row.data)
            if data is None or row.kind not in KINDS:  # only an event written before the chain can get here
                return events, ChainError(self.path, game_id, row.seq, "its data does not read; it was journaled "
                                          "before FaceDown chained its events", events, chained=False)
            events.append(Event(row.seq, row.kind, data, row.time))
        if walked.damage is None:
            return events, None
        if walked.damage.seq is not None:  # the events the walk kept are those before the break
            events = [e for e in events if e.seq < walked.damage.seq]
        return events, ChainError(self.path, game_id, walked.damage.seq, walked.damage.why, events)

    def _chain_error(self, game_id: int, walked: chain.Walk, rows: list[chain.Row]) -> ChainError:
        _, damage = self._intact_events(game_id, walked, rows)
        if damage is not None:
            return damage
        return ChainError(self.path, game_id, None, "its newest event has no head record", [])

    def repair(self, game_id: int) -> int:
        """The arbiter's decision to go on from the last intact event of a damaged game: journal an arbiter
        ``repair`` event chained onto that event, setting every event from the damage on aside (they are kept in
        the file, never replayed). Returns its seq; JournalError if the game is intact or its start is damaged."""
        with self._lock:
            self._before_write()
            with self._transaction():
                self._require_game(game_id)
                rows, start, head = self._chain_rows(game_id)
                walked = chain.walk(rows, start, head)
                damage = self._intact_events(game_id, walked, rows)[1]
                if damage is None:
                    raise JournalError(f"{self.path}: game {game_id} is intact: there is nothing to repair")
                if not damage.repairable:
                    what = "its start is damaged" if damage.chained else "nothing chains past it"
                    raise JournalError(f"{damage}; {what}, so it cannot go on: start another game")
                last = damage.intact[-1].seq
                aside = [r.seq for r in rows if r.seq > last and r.seq not in walked.set_aside]
                data = {"action": "repair", "after": last, "set_aside": aside, "reason": damage.why}
                text = _encode("arbiter", data)
                now = float(self._clock())
                digest = chain.link(walked.head, "arbiter", now, text)
                cur = self._db.execute("INSERT INTO events (game_id, kind, data, time, digest) VALUES (?, 'arbiter', ?, ?, ?)",
                                       (game_id, text, now, digest))
                self._db.execute("INSERT INTO chain_heads (game_id, events, digest) VALUES (?, ?, ?) ON CONFLICT(game_id) "
                                 "DO UPDATE SET events = excluded.events, digest = excluded.digest", (game_id, len(rows) + 1, digest))
            self._after_write()
        log.info("%s: game %s goes on from event %s (arbiter's repair; set aside: %s)", self.path, game_id, last, aside)
        return int(cur.lastrowid or 0)

    def _decode(self, seq: int, text: str) -> dict[str, Any]:
        data = _decoded(text)
        if data is None:
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
        decoded = [(gid, seq, kind, _decoded(text), when) for gid, seq, kind, text, when in ends]
        aside = {n for _, _, kind, data, _ in decoded if data is not None and data.get("action") == "repair"
                 for n in data.get("set_aside") or () if isinstance(n, int)}
        for gid, seq, kind, data, when in decoded:
            if data is None or seq in aside:  # damaged (record verify names it) or set aside by an arbiter's repair
                continue
            result, finished, undos = state.get(gid, (None, None, 0))
            if kind == "result":
                result, finished = data, when
            elif data.get("action") == "end":
                result, finished = data.get("result"), when
            elif data.get("action") == "undo":
                result, finished, undos = None, None, undos + 1
            state[gid] = (result, finished, undos)
        if aside:  # moves an arbiter's repair set aside are not the game's
            with self._lock, self._reading():
                marks = ", ".join("?" * len(aside))
                for gid, n in self._db.execute(f"SELECT game_id, COUNT(*) FROM events WHERE kind = 'move' AND seq IN ({marks}) "
                                               "GROUP BY game_id", sorted(aside)):
                    moves[gid] = moves.get(gid, 0) - n
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

    # ------------------------------------------------------------------ game files
    def game_file(self, game_id: int) -> GameFile | None:
        """The game file text kept for a game, or None (a game journaled before FaceDown kept them)."""
        with self._lock, self._reading():
            self._require_game(game_id)
            row = self._db.execute("SELECT file, sha256, text FROM game_files WHERE game_id = ?", (game_id,)).fetchone()
        if row is None:
            return None
        file, digest, text = row
        if hashlib.sha256(text.encode("utf-8")).hexdigest() != digest:
            raise JournalError(f"{self.path}: the game file kept for game {game_id} is corrupt (its checksum does not match)")
        return GameFile(file, digest, text)

    def limit_cache(self, kib: int) -> None:
        """Keep at most ``kib`` KiB of the file's pages in this connection's cache (SQLite's default is 2 MiB, and a
        long game's journal fills it: a host of many games keeps a small one each, the OS caches the file anyway)."""
        if kib < 1:
            raise JournalError(f"{self.path}: a page cache of {kib} KiB: expected at least 1")
        self._db.execute(f"PRAGMA cache_size = -{int(kib)}")

    # ------------------------------------------------------------------ closing
    def close(self) -> None:
        """Close the file after the last sync (the write-ahead log is checkpointed into it when the last reader closes)."""
        syncer, self._syncer = self._syncer, None
        try:
            if syncer is not None:
                syncer.close()
        finally:
            self._db.close()

    def __enter__(self) -> Journal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class _Syncer:
    """The background fsync of a deferred-durability journal's write-ahead log, and its checkpoints.

    ``request`` (after a commit) asks for a sync and returns at once; ``wait`` blocks until every requested sync
    is done. fsync is per file, not per descriptor, so our own read-only descriptor of the ``-wal`` file flushes
    the frames SQLite wrote through its own. A failure is kept: every later ``wait`` raises it.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.wal = path.with_name(path.name + "-wal")
        self._cond = threading.Condition()
        self._asked = 0  # sync requests so far
        self._done = 0  # requests covered by a finished fsync
        self._error: str | None = None
        self._closing = False
        self._since_checkpoint = 0
        self._fd: int | None = None
        self._thread = threading.Thread(target=self._run, name="facedown-journal-sync", daemon=True)
        self._thread.start()

    def request(self) -> None:
        with self._cond:
            self._asked += 1
            self._cond.notify_all()

    def wait(self, timeout: float | None = None) -> bool:
        with self._cond:
            ok = self._cond.wait_for(lambda: self._done >= self._asked or self._error is not None, timeout)
            self.check()
            return ok

    def check(self) -> None:
        if self._error is not None:
            raise JournalError(f"{self.path}: cannot make the journal durable: {self._error}")

    def close(self) -> None:
        with self._cond:
            self._closing = True
            self._cond.notify_all()
        self._thread.join(timeout=30)
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self.check()

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._asked > self._done or self._closing)
                if self._asked <= self._done and self._closing:
                    return
                target = self._asked
            try:
                self._sync()
                self._since_checkpoint += 1
                if self._since_checkpoint >= _CHECKPOINT_EVERY:
                    self._since_checkpoint = 0
                    self._checkpoint()
                error = None
            except OSError as exc:
                error = exc.strerror or str(exc)
            except sqlite3.Error as exc:
                error = str(exc)
            with self._cond:
                if error is not None:
                    log.error("%s: journal sync failed: %s", self.path, error)
                    self._error = error
                    self._cond.notify_all()
                    return
                self._done = target
                self._cond.notify_all()

    def _sync(self) -> None:
        if self._fd is None:
            self._fd = os.open(self.wal, os.O_RDONLY)
            _fsync_dir(self.wal.parent)  # the log's directory entry, once
        os.fsync(self._fd)

    def _checkpoint(self) -> None:
        """Copy the log into the database file (fsyncing both) on a connection of our own, never blocking writers."""
        db = sqlite3.connect(self.path, timeout=10.0, isolation_level=None)
        try:
            db.execute("PRAGMA synchronous = FULL")
            db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        finally:
            db.close()


def _fsync_dir(folder: Path) -> None:
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class _Transaction:
    """BEGIN IMMEDIATE ... COMMIT around one write; rolls back and reports the file on an SQLite error."""

    def __init__(self, db: sqlite3.Connection, path: Path) -> None:
        self.db = db
        self.path = path

    def __enter__(self) -> None:
        try:
            self.db.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise JournalError(f"{self.path}: cannot write to the journal: {exc}") from None

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: object) -> bool:
        db = self.db
        if exc_type is None:
            try:
                db.execute("COMMIT")
                return False
            except sqlite3.Error as err:
                exc, exc_type = err, type(err)
        if db.in_transaction:
            db.execute("ROLLBACK")
        if isinstance(exc, sqlite3.Error):
            raise JournalError(f"{self.path}: cannot write to the journal: {exc}") from None
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
