"""The one redaction layer: builds what a seat, a spectator or the arbiter may know of the game and of each ruling."""

from __future__ import annotations

from typing import Any

from .base import ALL, Piece
from .hooks import Hook
from .reactions import asks, auto, offer_view, offers
from .say import Say, say
from .state import GameState, Ruling

SPECTATOR = "spectator"
ARBITER = "arbiter"


def audiences(state: GameState) -> tuple[str, ...]:
    """Every audience a game has: each side, the spectator and the arbiter."""
    return (*state.game.sides, SPECTATOR, ARBITER)


def _check(state: GameState, audience: str) -> None:
    if audience not in state.game.sides and audience not in (SPECTATOR, ARBITER):
        raise ValueError(f"unknown audience {audience!r}: expected a side ({', '.join(state.game.sides)}), {SPECTATOR!r} or {ARBITER!r}")


def may_know(state: GameState, piece: Piece, audience: str) -> bool:
    """May ``audience`` know what ``piece`` is?"""
    if audience == ARBITER or piece.public or state.phase == "over":
        return True
    if audience == SPECTATOR:
        return False
    if audience in piece.known_to:
        return True
    return bool(state.options.get("allies_see", False)) and state.game.ally(audience, piece.owner)


def view(state: GameState, audience: str) -> dict[str, Any]:
    """The game as ``audience`` may see it: every piece's station and owner, and its kind only where entitled."""
    _check(state, audience)
    pieces = []
    board = state.board
    # may_know, for every piece at once (a remote game's host builds two views a move)
    sees_all = audience == ARBITER or state.phase == "over"
    allies_see = audience != SPECTATOR and bool(state.options.get("allies_see", False))
    annotating = [h for h in state.hooks if type(h).annotate is not Hook.annotate]
    for station in state.game.station_ids:
        p = board.get(station)
        if p is None:
            continue
        entry: dict[str, Any] = {"station": station, "owner": p.owner, "uid": p.uid}
        if sees_all or p.public or (audience != SPECTATOR and (audience in p.known_to or (
                allies_see and state.game.ally(audience, p.owner)))):
            entry["piece"] = p.type
        entry["public"] = p.public
        for hook in annotating:
            entry.update(hook.annotate(state, station, p))
        pieces.append(entry)
    out = {
        "game": state.game.id,
        "audience": audience,
        "phase": state.phase,
        "turn": state.turn if state.phase == "play" else None,
        "ply": state.ply,
        "pieces": pieces,
        "out": dict(state.out),
        "result": state.result.to_json() if state.result else None,
        "options": dict(state.options),
    }
    out.update(_reaction_offers(state, audience))
    return out


def _reaction_offers(state: GameState, audience: str) -> dict[str, Any]:
    """A game that asks before optional reactions: a seat's own open offers and standing choice (the arbiter: every
    offer). An offer names the seat's own guard and only the target's station. The spectator gets nothing."""
    if audience == SPECTATOR or not asks(state):
        return {}
    mine = offers(state, None if audience == ARBITER else audience) if state.phase == "play" else []
    out: dict[str, Any] = {"offers": [offer_view(state, o) for o in mine]}
    if audience != ARBITER:
        out["react_automatically"] = auto(state, audience)
    return out


def _entitled_to_ruling_piece(ruling: Ruling, uid: int | None, owner: str | None, audience: str, over: bool) -> bool:
    if uid is None:
        return False
    if audience == ARBITER or over or audience == owner:
        return True
    if any(u == uid and (ALL in who or audience in who) for u, who in ruling.known):
        return True  # already known (face-up, revealed earlier or by this ruling)
    return any(r.uid == uid and (ALL in r.to or audience in r.to) for r in ruling.reveals)


def redact_ruling(ruling: Ruling, audience: str, *, game_over: bool = False) -> dict[str, Any]:
    """What ``audience`` may know of one ruling. ``game_over`` lifts all secrecy (the post-game reveal)."""
    out: dict[str, Any] = {
        "ply": ruling.ply,
        "side": ruling.side,
        "kind": ruling.kind,
        "from": ruling.frm,
        "to": ruling.to,
    }
    if _entitled_to_ruling_piece(ruling, ruling.mover_uid, ruling.side, audience, game_over):
        out["piece"] = ruling.mover_type
    if ruling.kind == "attack":
        out["outcome"] = ruling.outcome
        out["defender_side"] = ruling.defender_side
        if _entitled_to_ruling_piece(ruling, ruling.defender_uid, ruling.defender_side, audience, game_over):
            out["defender_piece"] = ruling.defender_type
    removed = []
    for r in ruling.removed:
        entry = {"station": r.station, "owner": r.owner}
        if _entitled_to_ruling_piece(ruling, r.uid, r.owner, audience, game_over):
            entry["piece"] = r.type
        removed.append(entry)
    out["removed"] = removed
    out["reveals"] = [
        {"station": r.station, "owner": r.owner, "piece": r.type}
        for r in ruling.reveals
        if audience == ARBITER or game_over or ALL in r.to or audience in r.to
    ]
    out["notices"] = [m for to, m in ruling.notices if to == ALL or to == audience or audience == ARBITER]
    out["out"] = [{"side": s, "reason": why} for s, why in ruling.out]
    out["result"] = ruling.result.to_json() if ruling.result else None
    out["next_turn"] = ruling.next_turn
    return out


def refusal_for(reason: Say, station: str, mover: str, audience: str) -> Say:
    """Why a move was refused, as ``audience`` may hear it: the detailed reason (it may name the mover's piece, or
    the rule it broke) goes to the mover's seat and the arbiter; every other seat, the spectator and everything
    public (voice, buzzer, lights, console, the club's feed) gets ``reason.not_allowed`` with the station to put the
    piece back on. The one place that decides it."""
    if audience == ARBITER or audience == mover:
        return reason
    return say("reason.not_allowed", station=station)
