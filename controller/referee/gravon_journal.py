"""Gravon records into and out of the journal: a record replayed and journaled as a finished game, and a journaled
Stratego game written back as a Gravon record (the file side of Gravon is controller.records.gravon)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.records import RecordError
from controller.records.gravon import SIDES, TYPE_FOR_GAME, GravonGame, field_of, journal_events
from controller.rules import GameState, load_game

from .gamefile import file_of
from .journal import Event, Journal
from .replay import effective, rebuild


def import_game(journal: Journal, game: GravonGame, options: Mapping[str, Any] | None = None) -> int:
    """Write the record to the journal as a finished game once it replays (nothing is written if it does not).
    Returns the journal's game id. The moves go in as one transaction, so a long game imports in one fsync."""
    start, events = journal_events(game, options)
    gid = journal.new_game(start["game"], start["options"], board=start["board"], seats=start["seats"],
                           game_file=file_of(load_game(start["game"])))
    journal.append_many(gid, events)
    return gid


def export_game(events: list[Event], game_id: int | str = "") -> GravonGame:
    """The Gravon record of a journaled game (replayed first, so it is the game the referee saw)."""
    final = rebuild(events)
    where = f"game {game_id}" if game_id != "" else "the game"
    gtype = TYPE_FOR_GAME.get(final.game.id)
    if gtype is None:
        raise RecordError(f"{where} is {final.game.name}; Gravon records hold only {', '.join(TYPE_FOR_GAME)}")
    if final.result is None:
        raise RecordError(f"{where} is not finished; a Gravon record needs its result")
    moves = [(ev.data["from"], ev.data["to"]) for ev in effective(events) if ev.kind == "move"]
    start = events[0].data
    seats = start.get("seats") or {}
    players = (str(seats.get("red", "Player 1")), str(seats.get("blue", "Player 2")))
    ends = [ev for ev in effective(events) if ev.kind in ("result", "arbiter")]
    kept = ends[-1].data.get("gravon") if ends and ends[-1].kind == "result" else None
    if isinstance(kept, dict) and isinstance(kept.get("result"), int) and kept.get("winner") in (1, 2, 3):
        gtype = str(kept.get("type") or gtype)
        result_type, winner = int(kept["result"]), int(kept["winner"])
    else:
        result_type, winner = _gravon_result(final, bool(ends and ends[-1].kind == "arbiter"))
    spacer = str(kept.get("spacer", " ")) if isinstance(kept, dict) and not str(kept.get("spacer", " ")).strip() else " "
    return GravonGame(gtype, field_of(final.deployments), moves, players, result_type, winner, where, spacer)


def _gravon_result(state: GameState, by_arbiter: bool) -> tuple[int, int]:
    result = state.result
    assert result is not None
    winner = SIDES.index(result.winners[0]) + 1 if len(result.winners) == 1 and result.winners[0] in SIDES else 3
    code = result.reason.get("code")
    if by_arbiter:
        return (3 if winner != 3 else 4), winner
    if code == "verdict.piece_lost" and result.reason.get("params", {}).get("piece") == "flag":
        return 1, winner
    if code == "verdict.no_move":
        return 0, winner
    if code == "verdict.nobody_moves":
        return 2, 3
    return (3 if winner != 3 else 4), winner
