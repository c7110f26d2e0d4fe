"""One physical table: the session with its sensing backend, journal, announcers and access tokens, wired together."""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.rules import GameDef, GameState, load_game, new_game

from .session import Published, Session

log = logging.getLogger(__name__)

ROLES_EXTRA = ("arbiter",)


def table_key(journal_path: Path) -> bytes:
    """The secret that seat and arbiter tokens of this journal's games derive from (created once, mode 600)."""
    key_path = journal_path.with_name(journal_path.name + ".key")
    try:
        data = key_path.read_bytes()
        if len(data) >= 32:
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
    _thread: threading.Thread | None = None

    @property
    def game(self) -> GameDef:
        return self.session.game

    @property
    def state(self) -> GameState:
        return self.session.state

    def role_for_token(self, token: str | None) -> str | None:
        """The role ("red", "arbiter"...) a token belongs to, compared in constant time; None if it is not one."""
        if not token:
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

    def start(self) -> None:
        """Start reading the board in a background thread."""
        if self._thread is not None:
            return
        self.session.on_snapshot(self.board.current())
        self._thread = threading.Thread(target=self.board.run, args=(self.session.on_snapshot,), name="facedown-board", daemon=True)
        self._thread.start()
        if self.clock is not None:
            self.clock.start()

    def stop(self) -> None:
        if self.clock is not None:
            self.clock.stop()
        self.board.stop()
        if self._thread is not None:
            self._thread.join(timeout=2)
        for a in self.announcers:
            try:
                a.close()
            except Exception:
                log.exception("closing announcer %r failed", a)
        if self.journal is not None:
            self.journal.close()

    def rebuild(self) -> GameState:
        """The game rebuilt from its journal (for undo and resume)."""
        from .gamefile import journaled
        from .replay import rebuild

        if self.journal is None or self.game_id is None:
            raise RuntimeError("this table keeps no journal, so it cannot rebuild its game")
        return rebuild(self.journal.events(self.game_id), journaled(self.journal, self.game_id))


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
) -> Table:
    """A table for ``game``: resumes the journal's unfinished game of the same kind, or starts a new one."""
    from .gamefile import journaled, keep
    from .journal import Journal, default_path
    from .replay import rebuild

    path = Path(journal_path) if journal_path else default_path()
    journal = Journal(path)
    state: GameState | None = None
    game_id = None
    if resume:
        unfinished = journal.unfinished()
        if unfinished is not None:
            events = journal.events(unfinished)
            if events and events[0].data.get("game") == load_game(game).id:
                state = rebuild(events, journaled(journal, unfinished))
                game_id = unfinished
                if state.phase == "over" and state.result is not None:
                    # the process died between the game-ending move and its result: record it, start afresh
                    journal.append(game_id, "result", state.result.to_json())
                    state, game_id = None, None
                else:
                    log.info("resuming game %s of %s at ply %s", game_id, state.game.id, state.ply)
    if state is None:
        state = new_game(game, dict(options or {}))
        # journal the full option set, so a later change of a game file's defaults cannot change the replay
        game_id = journal.new_game(state.game.id, dict(state.options), board=board_kind,
                                   profile=str(getattr(profile, "file", "") or "") or None, seats=dict(seats or {}))
        keep(journal, game_id, state.game)
    session = Session(state, journal=journal, game_id=game_id, use_tags=use_tags, tag_pieces=tag_pieces)
    roles = (*state.game.sides, *ROLES_EXTRA)
    tokens = derive_tokens(table_key(path), int(game_id or 0), roles)
    return Table(session=session, board=board, tokens=tokens, journal=journal, game_id=game_id, board_kind=board_kind, profile=profile)
