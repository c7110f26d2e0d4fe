"""The shaping of one judged move into what the referee publishes and waits for: the public event, the notices of
seats that went out, and the fix-up plan (the steps, the board to reach, the stations that may change meanwhile and
those that must be seen empty once). Pure: it reads the ruling and the boards, and touches nothing."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from controller.rules import SPECTATOR, GameState, Move, Ruling, redact_ruling

from .recognizer import Occupant
from .steps import fixup_steps, out_notice, ruling_say, step


@dataclass(frozen=True)
class FixupPlan:
    """What the players must do with the board after a ruling, and how the recognizer knows it is done."""

    steps: list[dict[str, Any]]
    target: dict[str, Occupant]
    involved: frozenset[str]
    must_lift: frozenset[str] = frozenset()


@dataclass(frozen=True)
class RulingPlan:
    """One accepted move, shaped: the public event, the out notices to publish after it, and the fix-up plan."""

    event: dict[str, Any]
    notices: list[dict[str, Any]] = field(default_factory=list)
    fixup: FixupPlan | None = None


def ruling_event(ruling: Ruling, move: Move, side: str) -> dict[str, Any]:
    """The public event of a ruling (the spectator's part of it: piece kinds only where the game reveals them)."""
    public = redact_ruling(ruling, SPECTATOR)
    event: dict[str, Any] = {"event": ruling.kind, "player": side, "from": move.frm, "to": move.to, "ply": ruling.ply}
    if ruling.kind == "attack":
        event["outcome"] = ruling.outcome
        event["defender"] = ruling.defender_side
    for key in ("piece", "defender_piece"):
        if key in public:
            event[key] = public[key]
    if public["reveals"]:
        event["reveals"] = public["reveals"]
    if public["notices"]:
        event["notices"] = public["notices"]
    event["say"] = ruling_say(event)
    return event


def plan_ruling(before: Mapping[str, Occupant], target: Mapping[str, Occupant], ruling: Ruling, move: Move,
                side: str, state: GameState) -> RulingPlan:
    """Shape ``ruling`` (``side`` played ``move``; ``before`` was the board before it, ``target`` the referee's
    board after it, ``state`` the game after it) into its event, notices and fix-up plan."""
    # every seat that goes out is announced, the last one before the game ends too (with more than two seats the
    # game can end because of it); only pieces standing on the board are named for clearing, never the pieces
    # of the clash itself (in a hand) or the station the winner now holds
    in_clash = (ruling.mover_uid, ruling.defender_uid)
    notices = [out_notice(out_side, why, [r for r in ruling.removed if r.owner == out_side and r.uid not in in_clash])
               for out_side, why in (ruling.out if ruling.result is None or len(state.game.sides) > 2 else ())]
    # the board as the players' hands left it, and the board the ruling asks for
    physical = dict(before)
    mover = physical.pop(move.frm)
    physical[move.to] = mover
    target = dict(target)
    involved = {s for s in set(physical) | set(target) if physical.get(s) != target.get(s)} | {move.frm, move.to}
    must_lift = frozenset(s for s in physical if s in target and physical[s].uid != target[s].uid)
    steps = fixup_steps(physical, target, involved, mover)
    # the defender's piece is in the attacker's hand (DESIGN's attack convention): when it leaves the game that is
    # what the verdict already says, and no step asks for it (a step is a change to the board, ticked off as the
    # board matches); only a piece a hook keeps in play off the board is a step, addressed to the hand holding it
    defender_gone = any(r.uid == ruling.defender_uid for r in ruling.removed)
    if ruling.kind == "attack" and ruling.defender_side is not None and not defender_gone \
            and ruling.defender_uid not in {o.uid for o in target.values()}:
        # a flag now riding on its taker: the notices say where it goes
        steps.append(step(None, "keep_in_hand", ruling.defender_side, by=side))
    if ruling.kind == "attack" and ruling.outcome in ("attacker", "defender") and state.options.get("winner_face_up"):
        winner_uid = ruling.mover_uid if ruling.outcome == "attacker" else ruling.defender_uid
        at = next((s for s, o in target.items() if o.uid == winner_uid), None)
        who = ruling.side if ruling.outcome == "attacker" else ruling.defender_side
        if at is not None and who is not None:
            steps.append(step(at, "face_up", who))
    return RulingPlan(ruling_event(ruling, move, side), notices,
                      FixupPlan(steps, target, frozenset(involved), must_lift))
