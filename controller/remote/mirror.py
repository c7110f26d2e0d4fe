"""A remote seat's mirror of the game: a GameState rebuilt from the seat's redacted view alone (its own pieces
and whatever it was shown; every other piece an anonymous token of its owner), so the seat's local referee can
recognise moves, ask for fix-ups and render its pages without ever holding what it may not know."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.referee.recognizer import Occupant
from controller.rules import GameDef, GameState, Result
from controller.rules.base import Piece
from controller.rules.reactions import mirror_offers

#: the kind a mirror gives a piece its seat may not know (never shown: the view leaves unknown kinds out)
HIDDEN = "?"


def mirror_state(game: GameDef, seen: Mapping[str, Any], seat: str) -> GameState:
    """The game as ``seat`` may know it, from its view (``controller.rules.view(state, seat)``)."""
    st = GameState(game, seen.get("options") or {})
    st.phase = str(seen["phase"])
    st.ply = int(seen["ply"])
    if seen.get("turn"):
        st.turn = str(seen["turn"])
    for entry in seen.get("pieces", []):
        piece = Piece(int(entry["uid"]), str(entry.get("piece") or HIDDEN), str(entry["owner"]))
        piece.public = bool(entry.get("public"))
        if "piece" in entry:
            piece.known_to = frozenset({piece.owner, seat})
        st.board[str(entry["station"])] = piece
    st.out = dict(seen.get("out") or {})
    result = seen.get("result")
    if result:
        st.result = Result(tuple(result["winners"]), result["reason"])
    if "offers" in seen:  # reactions: ask: this seat's open offers as the host told them
        mirror_offers(st, seat, seen["offers"], bool(seen.get("react_automatically")))
    return st


def occupants(target: Mapping[str, Any]) -> dict[str, Occupant]:
    """A board sent as ``{station: [owner, uid]}`` (public: owners and opaque ids)."""
    return {s: Occupant(str(o), int(u)) for s, (o, u) in target.items()}


def view_board(seen: Mapping[str, Any]) -> dict[str, Occupant]:
    """The board a view shows (each piece's station, owner and opaque id): after a ruling, the board it asks for."""
    return {str(e["station"]): Occupant(str(e["owner"]), int(e["uid"])) for e in seen.get("pieces", [])}


def wire_board(board: Mapping[str, Occupant]) -> dict[str, list[Any]]:
    return {s: [o.owner, o.uid] for s, o in board.items()}


__all__ = ["HIDDEN", "mirror_state", "occupants", "view_board", "wire_board"]
