"""Judges a clash: the outcome of one piece attacking another, from the game's clash table and its options."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .model import ClashTable, GameDef, PieceType


def resolve(table: ClashTable, pieces: Mapping[str, PieceType], attacker: str, defender: str, options: Mapping[str, Any]) -> str | None:
    """The outcome of ``attacker`` striking ``defender``: explicit cell, else first matching rule, else rank order.

    Returns None when nothing decides it (the loader rejects such a game file).
    """
    if not pieces[attacker].can_attack:
        return "illegal"
    cell = table.cells.get((attacker, defender))
    if cell is not None:
        return cell
    for rule in table.rules:
        if rule.matches(attacker, defender, options):
            return rule.outcome
    if table.by_rank:
        ra, rd = pieces[attacker].rank, pieces[defender].rank
        if ra is not None and rd is not None:
            if ra == rd:
                return "both"
            return "attacker" if ra < rd else "defender"
    return None


def clash_matrix(game: GameDef, options: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    """Every attacker against every defender, as {attacker: {defender: outcome}}; pieces that cannot attack give 'illegal'."""
    out: dict[str, dict[str, str]] = {}
    for a in game.pieces:
        row = out[a.id] = {}
        for d in game.pieces:
            outcome = resolve(game.clash, game.piece_by_id, a.id, d.id, options)
            if outcome is None:
                raise ValueError(f"{game.id}: no outcome for {a.id} attacking {d.id} with options {dict(options)}")
            row[d.id] = outcome
    return out
