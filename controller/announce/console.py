"""The console announcer: one line per public event, in English or Chinese, written to a text stream.

The line is the event's message object rendered from the catalog (``controller.messages``), then the pieces the
rules showed to everyone and the public notices. Only public events reach announcers, so nothing private is said.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable, Mapping
from typing import Any, TextIO

from controller.messages import LANGS, render
from controller.rules.say import is_say, say

from .events import EventError, check_event, event_say, unknown_kind

log = logging.getLogger(__name__)


def side_name(side: str) -> str:
    """A side as written in English: ``red`` -> ``Red``."""
    return side.replace("_", " ").capitalize()


def piece_names(game: Any, piece_id: str) -> tuple[str, str]:
    """The English and Chinese names of a piece id, from the game file when one is given."""
    if game is None:
        return piece_id, ""
    piece = game.piece_by_id.get(piece_id)
    if piece is None:
        raise EventError(f"event names piece {piece_id!r}, which game {game.id!r} does not have")
    return piece.name, piece.zh


def event_words(event: Mapping[str, Any], lang: str, game: Any = None, *, station: Callable[[str], str] | None = None) -> str | None:
    """The words for a public event in ``lang`` (None for setup-phase board readings): its message, then the pieces
    the rules showed to everyone and its public notices. Piece names appear only where the event carries them."""
    kind = check_event(event)
    if kind == "board":
        return None
    for r in event.get("reveals") or []:
        piece_names(game, r["piece"])  # an unknown piece is a malformed event
    parts = [render(event_say(event), lang, game, station=station)]
    if kind in ("move", "attack"):
        reveals = [_reveal(event, r) for r in event.get("reveals") or []]
        if reveals:
            parts.append(render(say("event.revealed", reveals=reveals), lang, game, station=station))
        parts += [render(n, lang, game, station=station) for n in event.get("notices") or [] if is_say(n)]
    return " ".join(parts) if lang == "en" else "".join(parts)


def _reveal(event: Mapping[str, Any], r: Mapping[str, Any]) -> Any:
    """One piece a ruling showed: the piece that moved is named by where it came from (a scout that attacked a4
    from a7 and lost never stood on a4), any other by its station."""
    mover = r.get("owner") == event.get("player") and r.get("station") in (event.get("from"), event.get("to"))
    if mover and event.get("from"):
        return say("event.reveal_mover", owner=r["owner"], piece=r["piece"], **{"from": event["from"]})
    return say("event.reveal", owner=r["owner"], piece=r["piece"], station=r["station"])


def describe(event: Mapping[str, Any], game: Any = None, lang: str = "en") -> str | None:
    """One line for a public event in ``lang`` (None for setup-phase board readings, which would be noise)."""
    return event_words(event, lang, game)


class ConsoleAnnouncer:
    """Writes :func:`describe` of each event as one line to ``stream`` (stdout by default), in ``lang``."""

    def __init__(self, stream: TextIO | None = None, *, game: Any = None, lang: str = "en") -> None:
        if lang not in LANGS:
            raise ValueError(f"console language must be one of {', '.join(LANGS)}, got {lang!r}")
        self.stream = stream if stream is not None else sys.stdout
        self.game = game
        self.lang = lang
        self._lock = threading.Lock()
        self._closed = False
        self._unknown: set[str] = set()

    def announce(self, event: dict) -> None:
        if self._closed:
            raise RuntimeError("console announcer is closed")
        if unknown_kind(event, self._unknown, log):
            return
        line = describe(event, self.game, self.lang)
        if line is None:
            return
        with self._lock:
            if self._closed:
                raise RuntimeError("console announcer is closed")
            self.stream.write(line + "\n")
            self.stream.flush()

    def close(self) -> None:
        """Stop announcing; the stream is the caller's and stays open."""
        with self._lock:
            self._closed = True
