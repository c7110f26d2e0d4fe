"""Judges a clash: the outcome of one piece attacking another, from the game's clash table and its options."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .model import ClashRule, ClashTable, GameDef, PieceType


def proxy(table: ClashTable, piece: str, other: str, options: Mapping[str, Any], at: str | None = None) -> str:
    """The piece ``piece`` fights as against ``other`` on a station of kind ``at`` (None: unknown, any kind matches):
    the first matching ``fights_as`` entry, else itself."""
    for fa in table.fights_as:
        if fa.piece == piece and (fa.against is None or other in fa.against) and (at is None or fa.at is None or at in fa.at) \
                and fa.when.holds(options):
            return fa.as_
    return piece


def decide(table: ClashTable, pieces: Mapping[str, PieceType], attacker: str, defender: str, options: Mapping[str, Any],
           at: str | None = None, *, striking: bool = False) -> tuple[str | None, ClashRule | None]:
    """The outcome of ``attacker`` striking ``defender`` on a station of kind ``at``, and the clash rule that gave it
    (for its effects: pushes, one-seat reveals). Proxies (``fights_as``) first, then explicit cell, first matching
    rule, rank order. ``striking``: judge a strike the piece makes as a reaction even though it cannot move."""
    if not striking and not pieces[attacker].can_attack:
        return "illegal", None
    a, d = proxy(table, attacker, defender, options, at), proxy(table, defender, attacker, options, at)
    cell = table.cells.get((a, d))
    if cell is not None:
        return cell, None
    for rule in table.rules:
        if rule.matches(a, d, options):
            return rule.outcome, rule
    if table.by_rank:
        ra, rd = pieces[a].rank, pieces[d].rank
        if ra is not None and rd is not None:
            if ra == rd:
                return "both", None
            return ("attacker" if ra < rd else "defender"), None
    return None, None


def resolve(table: ClashTable, pieces: Mapping[str, PieceType], attacker: str, defender: str, options: Mapping[str, Any]) -> str | None:
    """The outcome of ``attacker`` striking ``defender``: proxies, explicit cell, else first matching rule, else rank order.

    Returns None when nothing decides it (the loader rejects such a game file).
    """
    return decide(table, pieces, attacker, defender, options)[0]


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
