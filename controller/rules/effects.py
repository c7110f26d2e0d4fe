"""General clash effects beyond the five outcomes: where a clash happens (proxy ranks that hold only on some kinds
of station), strikes that cannot be answered, strike-and-return, pieces pushed one step away, and a defender shown
to the attacking side only. ``GameState.apply`` calls ``clash_outcome`` before and ``after_clash`` after it
resolves a clash; games that use none of these features see no change.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .base import ALL, Pending, Piece, Reveal
from .clash import decide
from .model import ClashRule, GameDef, MoveSpec
from .say import say

if TYPE_CHECKING:
    from .state import GameState


@lru_cache(maxsize=256)
def open_stations(game: GameDef, piece: str) -> dict[str, bool] | None:
    """Station -> may ``piece`` enter or cross it, when some station kind is closed to it (``closed_to``); None when
    none is (then passability alone decides)."""
    if not any(piece in k.closed_to for k in game.station_kinds.values()):
        return None
    return {s.id: game.station_kinds[s.kind].passable and piece not in game.station_kinds[s.kind].closed_to for s in game.stations}


@lru_cache(maxsize=64)
def _located(game: GameDef) -> bool:
    return any(fa.at is not None for fa in game.clash.fights_as)


def clash_rule(state: GameState, attacker: str, defender: str, at: str | None, *, striking: bool = False) -> tuple[str | None, ClashRule | None]:
    """The outcome and deciding rule of ``attacker`` striking ``defender`` on ``at`` (a station id, None: anywhere)."""
    kind = state.topo.kind_of[at].id if at is not None else None
    return decide(state.game.clash, state.game.piece_by_id, attacker, defender, state.options, kind, striking=striking)


def clash_outcome(state: GameState, to: str, mover: Piece, defender: Piece, spec: MoveSpec, outcome: str) -> str:
    """The outcome of this very clash: proxy ranks that depend on the station ``to`` are applied (the matrix assumes
    they hold), and a ``spared`` move (a bombardment) cannot be answered: a stronger target just stays (bounce) and
    a target that would take the striker with it goes alone (attacker)."""
    frm = station_of(state, mover)
    if frm is not None and intercepted(state, frm, to, mover, spec):
        return "bounce"
    if _located(state.game):
        outcome = clash_rule(state, mover.type, defender.type, to)[0] or outcome
    if spec.spared:
        outcome = spared_outcome(outcome)
    return outcome


def spared_outcome(outcome: str) -> str:
    """The outcome of a ``spared`` strike (a bombardment the target cannot answer): a stronger target just stays
    (bounce) and one that would take the striker with it goes alone (attacker)."""
    return {"defender": "bounce", "both": "attacker"}.get(outcome, outcome)


def clash_effects(game: GameDef, options: Mapping[str, Any]) -> dict[str, dict[str, list[dict[str, Any]]]]:
    """Where the engine's outcome of a clash is not just the clash matrix's: {attacker: {defender: [effect, ...]}}
    for every pair some effect changes, judged by the functions ``GameState.apply`` uses (``decide`` on each kind
    of station, ``spared_outcome``, the deciding rule's push and reveal, strike-and-return). Each effect is a dict:
    ``{"effect": "at", "station_kind", "outcome"}`` (a proxy rank that holds only there), ``{"effect": "spared",
    "outcome", "along", "max_steps"}`` (that way of attacking cannot be answered), ``{"effect": "returns", "along",
    "max_steps"}`` (the striker goes back to its station), ``{"effect": "push", "piece": "attacker"|"defender"}``
    (that piece moves one step away), ``{"effect": "shows_defender"}`` (shown to the attacking side only)."""
    out: dict[str, dict[str, list[dict[str, Any]]]] = {}
    kinds = sorted({s.kind for s in game.stations})
    for a in game.pieces:
        if not a.can_attack:
            continue
        for d in game.pieces:
            base, rule = decide(game.clash, game.piece_by_id, a.id, d.id, options)
            if base in (None, "illegal"):
                continue
            found: list[dict[str, Any]] = []
            for kind in kinds:
                here = decide(game.clash, game.piece_by_id, a.id, d.id, options, kind)[0]
                if here is not None and here != base:
                    found.append({"effect": "at", "station_kind": kind, "outcome": here})
            for spec in a.moves:
                if not spec.attack or not spec.when.holds(options):
                    continue
                way = {"along": sorted(spec.along), "max_steps": spec.max_steps}
                if spec.spared and spared_outcome(base) != base:
                    found.append({"effect": "spared", "outcome": spared_outcome(base), **way})
                if spec.returns and base in ("attacker", "bounce"):
                    found.append({"effect": "returns", **way})
            if rule is not None and rule.push in ("attacker", "defender"):
                found.append({"effect": "push", "piece": rule.push})
            if rule is not None and rule.show:
                found.append({"effect": "shows_defender"})
            if found:
                out.setdefault(a.id, {})[d.id] = found
    return out


def after_clash(state: GameState, frm: str, to: str, mover: Piece, defender: Piece, spec: MoveSpec, outcome: str, pend: Pending) -> None:
    """Effects after the board has been changed by ``outcome``: strike-and-return, the deciding rule's push and
    one-seat reveal."""
    board = state.board
    if spec.returns and board.get(to) is mover and frm not in board:
        del board[to]
        board[frm] = mover
        pend.notices.append((ALL, say("notice.strike_and_return", **{"from": frm, "to": to})))
    rule = clash_rule(state, mover.type, defender.type, to)[1]
    if rule is None or (outcome == "bounce" and intercepted(state, frm, to, mover, spec)):
        return
    if rule.show and board.get(to) is defender:
        defender.known_to = defender.known_to | {mover.owner}
        pend.reveals.append(Reveal(to, defender.uid, defender.owner, defender.type, (mover.owner,)))
        pend.notices.append((mover.owner, say("notice.recon_found", piece=defender.type, **{"from": frm, "to": to})))
    if rule.push == "defender":
        at = station_of(state, defender)
        if at is not None:
            push(state, defender, at, away_from=frm, pend=pend)
    elif rule.push == "attacker":
        at = station_of(state, mover)
        if at is not None and at != to and to not in _neighbours(state, mover.type)[at]:
            push(state, mover, at, away_from=None, near=to, pend=pend)


def intercepted(state: GameState, frm: str, to: str, mover: Piece, spec: MoveSpec) -> bool:
    """Did a hook (a reaction: guns under an aircraft's flight) stop the mover before it reached ``to``?"""
    return any(h.intercepts(state, frm, to, mover, spec) for h in state.hooks)


def station_of(state: GameState, piece: Piece) -> str | None:
    """Where ``piece`` stands now, or None if it is off the board."""
    return next((s for s, p in state.board.items() if p is piece), None)


def _neighbours(state: GameState, piece: str) -> dict[str, tuple[str, ...]]:
    kinds = frozenset(k for spec in state.game.piece_by_id[piece].moves for k in spec.along)
    return state.topo.neighbours(kinds)


def step_choices(state: GameState, piece: Piece, around: str) -> list[str]:
    """The empty stations one step from ``around`` along the lines ``piece`` moves on, where it may stand."""
    ok = open_stations(state.game, piece.type) or state.topo.passable
    return [n for n in _neighbours(state, piece.type)[around] if n not in state.board and ok[n]]


def push(state: GameState, piece: Piece, at: str, *, away_from: str | None, pend: Pending, near: str | None = None,
         choice: str | None = None) -> str | None:
    """Move ``piece`` from ``at`` one step away: to ``choice`` if given and allowed, else the empty station next to
    ``near`` (default ``at``) farthest from ``away_from`` (or nearest to ``at`` when ``away_from`` is None), first
    in board order on a tie. Returns where it went, or None when every station around is taken (it stays)."""
    around = near or at
    options = [s for s in step_choices(state, piece, around) if s != at]
    if not options:
        pend.notices.append((ALL, say("notice.push_blocked", station=at)))
        return None
    order = {s: i for i, s in enumerate(state.game.station_ids)}
    if choice in options:
        dest = choice
    else:
        ref = state.game.station_by_id[away_from or at]

        def dist(s: str) -> float:
            st = state.game.station_by_id[s]
            return math.hypot(st.x - ref.x, st.y - ref.y)

        dest = min(options, key=lambda s: (-dist(s) if away_from else dist(s), order[s]))
    del state.board[at]
    state.board[dest] = piece
    pend.notices.append((ALL, say("notice.pushed", station=at, to=dest)))
    return dest
