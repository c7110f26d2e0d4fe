"""One physical table: the session with its sensing backend, journal, announcers and access tokens, wired together."""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.rules import GameDef, GameState, load_game, new_game

from .session import Published, Session

log = logging.getLogger(__name__)

ROLES_EXTRA = ("arbiter",)


def key_path_of(journal_path: Path) -> Path:
    return journal_path.with_name(journal_path.name + ".key")


def table_key(journal_path: Path) -> bytes:
    """The secret that seat and arbiter tokens of this journal's games derive from (created once, mode 600).

    It is made with the journal's first game, so it also marks a journal that must hold games (see
    ``check_not_emptied``)."""
    key_path = key_path_of(journal_path)
    try:
        data = key_path.read_bytes()
        if len(data) >= 32:
            from .journal import secure_file

            secure_file(key_path)
            return data
    except FileNotFoundError:
        pass
    key = secrets.token_bytes(32)
    key_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(key_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key)
    return key


def derive_tokens(key: bytes, game_id: int, roles: Sequence[str]) -> dict[str, str]:
    """Unguessable per-game tokens, one per role; the same after a restart, so phones keep their links."""
    return {r: hmac.new(key, f"{game_id}:{r}".encode(), hashlib.sha256).hexdigest()[:24] for r in roles}


@dataclass
class Table:
    """Everything one table runs. ``board`` is a SensingBackend (SimBoard, GpioMatrixBoard, SerialScannerBoard)."""

    session: Session
    board: Any
    tokens: dict[str, str]
    journal: Any = None
    game_id: int | None = None
    board_kind: str = "sim"
    profile: Any = None
    announcers: list[Any] = field(default_factory=list)
    clock: Any = None  # a club ClockKeeper when the game is played on the clock (pages show it)
    remote: Any = None  # a remote seat (controller.remote.seat) whose host referees: the page's asks go to it
    journal_lock: Any = None  # the JournalLock this process holds on the journal, released by stop()
    supervisor: Any = None  # the Supervisor that stops the referee visibly on an unexpected error (start() makes one)
    #: Seats a bot plays {side: bot name}: they have no token, so no link, page, QR code or API route opens their view
    computers: dict[str, str] = field(default_factory=dict)
    _started: bool = False


    @property
    def game(self) -> GameDef:
        return self.session.game

    @property
    def state(self) -> GameState:
        return self.session.state

    def view(self, role: str) -> Any:
        """The read model for ``role`` (a ``TableView``): the session's, with this table's clock and health."""
        return self.session.view(role, {
            # the game clock, when the club plays on one: each side's time left and whose is running (public)
            "clock": self.clock.to_json() if self.clock is not None else None,
            # a remote seat: the game's id and what its page may ask the host (pause, resume, resign)
            "remote": self.remote.page_info() if self.remote is not None else None,
            # the referee's health, for every role: why it stopped (or None), and the link to the board's sensors
            **self.health(),
        })

    def health(self) -> dict[str, Any]:
        """``fault`` (None, or why the referee stopped) and ``link`` (connected / resyncing / lost, since when)."""
        sup = self.supervisor
        if sup is None:
            return {"fault": None, "link": {"status": "connected", "since": None,
                                            "say": {"code": "link.connected", "params": {}}}}
        return {"fault": sup.fault_json(), "link": sup.link_json()}

    def role_for_token(self, token: str | None) -> str | None:
        """The role ("red", "arbiter"...) a token belongs to, compared in constant time; None if it is not one."""
        if not token or not token.isascii():  # tokens are hex: anything else is no token (and compare_digest wants ASCII)
            return None
        for role, t in self.tokens.items():
            if hmac.compare_digest(t, token):
                return role
        return None

    def add_announcer(self, announcer: Any) -> None:
        self.announcers.append(announcer)

        def forward(ev: Published) -> None:
            if ev.audience:
                return  # private to a seat: never said aloud
            try:
                announcer.announce(ev.public)
            except Exception:  # an announcer must never stop the referee
                log.exception("announcer %r failed", announcer)

        self.session.subscribe(forward)

    def supervise(self) -> Any:
        """The table's Supervisor (made once): it watches the journal from now on, and ``start`` runs the board
        thread under it."""
        if self.supervisor is None:
            from .supervisor import Supervisor

            self.supervisor = Supervisor(self)
        return self.supervisor

    def start(self) -> None:
        """Start reading the board in a background thread, supervised: an unexpected error stops ruling visibly."""
        if self._started:
            return
        self._started = True
        self.supervise().start()
        if self.clock is not None:
            self.clock.start()

    def stop(self) -> None:
        if self.clock is not None:
            self.clock.stop()
        self.board.stop()
        if self.supervisor is not None:
            self.supervisor.stop()
        for a in self.announcers:
            try:
                a.close()
            except Exception:
                log.exception("closing announcer %r failed", a)
        if self.journal is not None:
            try:
                self.journal.close()
            except Exception:  # a failed last sync is already a fault; the lock must still go
                log.exception("closing the journal failed")
        if self.journal_lock is not None:
            self.journal_lock.release()

    def rebuild(self) -> GameState:
        """The game rebuilt from its journal (for undo and resume)."""
        from .gamefile import journaled
        from .replay import rebuild

        if self.journal is None or self.game_id is None:
            raise RuntimeError("this table keeps no journal, so it cannot rebuild its game")
        return rebuild(self.journal.events(self.game_id), journaled(self.journal, self.game_id))


def _verified_events(journal: Any, game_id: int, repair: bool) -> list[Any]:
    """The unfinished game's events, checked against its chain; with ``repair``, a damaged game goes on from its last
    intact event (journaled as the arbiter's repair) instead of raising ChainError."""
    from .journal import ChainError

    try:
        return journal.events(game_id)
    except ChainError as exc:
        if not repair:
            raise
        log.warning("%s; the arbiter goes on from the last intact event", exc)
        journal.repair(game_id)
        return journal.events(game_id)


def check_not_emptied(journal_path: Path) -> None:
    """Refuse a journal that is missing or empty although its key file shows games were played on it: a truncated
    or replaced file (a full SD card, a bad copy) must be reported, never silently replaced by a new game 1."""
    from .journal import JournalError

    key = key_path_of(journal_path)
    if not key.exists():
        return
    try:
        size = journal_path.stat().st_size
    except FileNotFoundError:
        size = None
    if size is None or size == 0:
        what = "is missing" if size is None else "is empty (0 bytes)"
        raise JournalError(f"{journal_path}: the journal {what}, but its key file {key} shows games were played on it; "
                           f"restore the journal from a backup, or move {key.name} away to start a fresh journal")


def open_table(
    game: str,
    *,
    board: Any,
    board_kind: str,
    journal_path: str | Path | None,
    options: Mapping[str, Any] | None = None,
    resume: bool = True,
    profile: Any = None,
    seats: Mapping[str, str] | None = None,
    use_tags: bool = False,
    tag_pieces: Mapping[str, tuple[str, str]] | None = None,
    computers: Mapping[str, str] | None = None,
    repair: bool = False,
) -> Table:
    """A table for ``game``: resumes the journal's unfinished game of the same kind, or starts a new one.

    ``computers`` {side: bot name} are the seats a bot plays. They get no token (a request with the token such a seat
    would have is refused like any unknown one), now and whenever the game is resumed: the journal's game event
    keeps them, so a seat the computer played never gets a link in that game, even if the referee is restarted
    without ``--seat``. The arbiter's view keeps showing every piece.

    The journal is locked for this process first (JournalBusy if another referee holds it: nothing is touched),
    and a journal emptied since its games were played is refused (JournalError). An unfinished game whose journal
    does not verify (a damaged event) is never resumed silently: ChainError names the event, unless ``repair`` (the
    arbiter's choice) journals going on from the last intact event."""
    from .gamefile import file_of, journaled
    from .journal import Journal, JournalLock, default_path
    from .replay import rebuild

    path = Path(journal_path) if journal_path else default_path()
    lock = JournalLock(path)
    try:
        check_not_emptied(path)
        journal = Journal(path, durability="deferred")
    except BaseException:
        lock.release()
        raise
    try:  # a journal that does not resume (damaged, not replaying) is closed and unlocked: nothing holds it
        state: GameState | None = None
        game_id = None
        computers = dict(computers or {})
        if resume:
            unfinished = journal.unfinished()
            if unfinished is not None and journal.summary(unfinished).game == load_game(game).id:
                events = _verified_events(journal, unfinished, repair)
                if events and events[0].data.get("game") == load_game(game).id:
                    state = rebuild(events, journaled(journal, unfinished))
                    game_id = unfinished
                    computers = {**dict(events[0].data.get("computers") or {}), **computers}
                    if state.phase == "over" and state.result is not None:
                        # the process died between the game-ending move and its result: record it, start afresh
                        journal.append(game_id, "result", state.result.to_json())
                        state, game_id = None, None
                    else:
                        log.info("resuming game %s of %s at ply %s", game_id, state.game.id, state.ply)
        if state is None:
            state = new_game(game, dict(options or {}))
            # journal the full option set, so a later change of a game file's defaults cannot change the replay
            computers = {side: name for side, name in computers.items() if side in state.game.sides}
            game_id = journal.new_game(state.game.id, dict(state.options), board=board_kind,
                                       profile=str(getattr(profile, "file", "") or "") or None, seats=dict(seats or {}),
                                       computers=computers, game_file=file_of(state.game))
    except BaseException:
        journal.close()
        lock.release()
        raise
    session = Session(state, journal=journal, game_id=game_id, use_tags=use_tags, tag_pieces=tag_pieces)
    roles = (*(s for s in state.game.sides if s not in computers), *ROLES_EXTRA)
    tokens = derive_tokens(table_key(path), int(game_id or 0), roles)
    from .signing_key import signing_seed

    signing_seed(path)  # the table's record-signing key, made at its first start (no crypto library loaded here)
    return Table(session=session, board=board, tokens=tokens, journal=journal, game_id=game_id, board_kind=board_kind,
                 profile=profile, journal_lock=lock, computers=computers)
