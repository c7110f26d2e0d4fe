"""The console announcer: one plain English line per public event, written to a text stream."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Mapping
from typing import Any, TextIO

from .events import EventError, check_event, unknown_kind

log = logging.getLogger(__name__)

#: What each attack outcome means at the table.
OUTCOME_TEXT = {
    "attacker": "attacker survives",
    "defender": "defender survives",
    "both": "both removed",
    "bounce": "no effect",
}

FOUND_TEXT = {
    "empty": "is empty",
    "occupied": "is occupied",
    "wrong piece": "holds the wrong piece",
}


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


def _piece(game: Any, event: Mapping[str, Any], key: str) -> str:
    """`` Marshal (元帥)`` when the event made the piece public, else nothing."""
    if event.get(key) is None:
        return ""
    name, zh = piece_names(game, event[key])
    return f" {name} ({zh})" if zh else f" {name}"


def _fixup_step(step: Mapping[str, Any]) -> str:
    station, do = step["station"], str(step["do"])
    if do == "remove":
        return f"take the piece off {station}"
    if do == "put back":
        return f"put the piece back on {station}"
    if do.startswith("return to "):
        return f"move the piece on {station} back to {do.removeprefix('return to ')}"
    return f"{station}: {do}"


def _revealed(event: Mapping[str, Any], game: Any) -> str:
    """`` Revealed: Blue Flag (军旗) at a1.`` for pieces the rules showed to everyone, and any public notices."""
    text = ""
    reveals = event.get("reveals") or []
    if reveals:
        shown = []
        for r in reveals:
            name, zh = piece_names(game, r["piece"])
            shown.append(f"{side_name(r['owner'])} {name}{f' ({zh})' if zh else ''} at {r['station']}")
        text += f" Revealed: {'; '.join(shown)}."
    for notice in event.get("notices") or []:
        text += f" {notice}"
    return text


def describe(event: Mapping[str, Any], game: Any = None) -> str | None:
    """One human line for a public event (None for setup-phase board readings, which would be noise).

    Piece names appear only when the event carries them.
    """
    kind = check_event(event)
    line = _describe(kind, event, game)
    if line is not None and kind in ("move", "attack"):
        line += _revealed(event, game)
    return line


def _describe(kind: str, event: Mapping[str, Any], game: Any) -> str | None:
    if kind in ("fault", "link"):  # the referee's health: words from the message catalog
        from controller.messages import render

        return render(event["say"], "en", game)
    who = side_name(event["player"]) if "player" in event else ""
    if kind == "start":
        return f"Game starts: {who} to move."
    if kind == "turn":
        return f"{who} to move."
    if kind == "move":
        return f"{who} {event['from']}→{event['to']}."
    if kind == "attack":
        defender = side_name(event["defender"])
        attacker_piece = _piece(game, event, "piece")
        defender_piece = _piece(game, event, "defender_piece")
        outcome = event["outcome"]
        consequence = {
            "attacker": f"{defender}'s{defender_piece or ' piece'} removed",
            "defender": f"{who}'s{attacker_piece or ' piece'} removed",
            "both": "both pieces leave the board",
            "bounce": "both pieces go back",
        }[outcome]
        target = f"{defender}{defender_piece}" if defender_piece else defender
        return (f"{who}{attacker_piece} {event['from']}→{event['to']} attacks {target}: "
                f"{OUTCOME_TEXT[outcome]} ({consequence}).")
    if kind == "illegal":
        reason = f": {event['reason']}" if event.get("reason") else ""
        return f"Illegal move by {who} {event['from']}→{event['to']}{reason}. Put the piece back on {event['from']}."
    if kind == "mismatch":
        parts = []
        for entry in event["stations"]:
            expected = entry.get("expected")
            should = f"should hold a {side_name(expected)} piece" if expected else "should be empty"
            found = FOUND_TEXT.get(entry["found"], f"is {entry['found']}")
            parts.append(f"{entry['station']} {should} but {found}")
        message = f" {event['message']}" if event.get("message") else ""
        return f"Board mismatch: {'; '.join(parts) or 'no station given'}.{message}"
    if kind == "fixup":
        if not event["steps"]:
            return f"Set the board as the referee expects: {event.get('message') or 'see the screen'}."
        steps = "; ".join(_fixup_step(step) for step in event["steps"])
        return f"Fix the board: {steps}."
    if kind == "fixup_done":
        return "Board fixed; play on."
    if kind == "game_over":
        winners = [side_name(w) for w in event["winners"]]
        reason = f" ({event['reason']})" if event.get("reason") else ""
        if not winners:
            return f"Game over: draw{reason}."
        verb = "wins" if len(winners) == 1 else "win"
        return f"Game over: {' and '.join(winners)} {verb}{reason}."
    if kind == "paused":
        return "Game paused."
    if kind == "resumed":
        return "Game resumed."
    if kind == "setup":
        return f"{who}'s deployment {event['status']}."
    if kind == "board":
        return None
    if kind == "undo":
        turn = f" {side_name(event['turn'])} to move." if event["turn"] else ""
        return f"The arbiter took back the last ruling.{turn}"
    return f"Notice: {event['message']}"


class ConsoleAnnouncer:
    """Writes :func:`describe` of each event as one line to ``stream`` (stdout by default)."""

    def __init__(self, stream: TextIO | None = None, *, game: Any = None) -> None:
        self.stream = stream if stream is not None else sys.stdout
        self.game = game
        self._lock = threading.Lock()
        self._closed = False
        self._unknown: set[str] = set()

    def announce(self, event: dict) -> None:
        if self._closed:
            raise RuntimeError("console announcer is closed")
        if unknown_kind(event, self._unknown, log):
            return
        line = describe(event, self.game)
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
