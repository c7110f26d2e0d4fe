"""Fix-up steps and event lines as data: what the players must do with the board after a ruling or a refusal (step
objects: station, action, whose piece, who does it, where to, and a message object), and the message object of each
published event. No words here: the catalogs in ``controller.messages`` make them, per language, at the edges."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from controller.rules import Result
from controller.rules.say import Say, say

from .recognizer import Occupant

#: every step action (docs/messages.md says what each asks of the players)
ACTIONS = ("put_back", "place", "take_off", "wrong_piece", "return", "remove", "put_in_hand", "keep_in_hand", "face_up")


def step(station: str | None, action: str, owner: str | None, *, to: str | None = None, by: str | None = None) -> dict[str, Any]:
    """One fix-up step: what to do (``action``) with whose piece (``owner``) on ``station`` (and where to: ``to``),
    who should do it (``by``: the piece's owner unless said), and its words as a message object (``step.<action>``)."""
    if action not in ACTIONS:
        raise ValueError(f"unknown fix-up action {action!r}: expected one of {', '.join(ACTIONS)}")
    return {"station": station, "action": action, "owner": owner, "by": by or owner, "to": to,
            "say": say(f"step.{action}", station=station, owner=owner, to=to)}


def game_over_event(result: Result) -> dict[str, Any]:
    """The public ``game_over`` event of a result: winners, the verdict (a message object) and its line."""
    winners = list(result.winners)
    words = (say("event.game_over_draw", reason=result.reason) if not winners
             else say("event.game_over", winners=[say(f"side.{w}") for w in winners], reason=result.reason))
    return {"event": "game_over", "winner": winners[0] if len(winners) == 1 else None, "winners": winners,
            "reason": result.reason, "say": words}


def ruling_say(event: Mapping[str, Any]) -> Say:
    """The line of text of a public move or attack event (piece kinds only where the event itself names them)."""
    ends = {"from": event["from"], "to": event["to"]}
    if event["event"] == "move":
        return say("event.move" if "piece" in event else "event.move_hidden", player=event["player"], piece=event.get("piece"), **ends)
    return attack_say(event)


def attack_say(event: Mapping[str, Any]) -> Say:
    """The line of a public attack event: each side's piece named only where the event itself names it."""

    def who(side: Any, piece: Any) -> Say:
        return say("event.side_piece", side=side, piece=piece) if piece else say("event.side_only", side=side)

    return say("event.attack", attacker=who(event.get("player"), event.get("piece")),
               target=who(event.get("defender"), event.get("defender_piece")),
               outcome=say(f"verdict.outcome_{event.get('outcome')}"), **{"from": event.get("from"), "to": event.get("to")})


def out_notice(side: str, why: Say, removed: list[Any]) -> dict[str, Any]:
    """The public notice that a side is out (the game goes on); its pieces' stations, never their kinds."""
    stations = sorted(r.station for r in removed)
    words = say("notice.out_clear" if stations else "notice.out", side=side, reason=why, stations=stations or None)
    return {"event": "notice", "out": side, "reason": why, "clear": stations, "say": words}


def diff_step(d: Any, *, mismatch: bool = False) -> dict[str, Any]:
    """The step that makes one differing station right: put a piece there, take one off, or swap a wrong one."""
    if d.found == "empty":
        return step(d.station, "put_back" if mismatch else "place", d.expected)
    if d.found == "occupied":
        return step(d.station, "take_off", None)
    return step(d.station, "wrong_piece", d.expected)


def fixup_steps(physical: Mapping[str, Occupant], target: Mapping[str, Occupant], involved: set[str], mover: Occupant) -> list[dict[str, Any]]:
    steps = []
    target_at = {o.uid: s for s, o in target.items()}
    for s in sorted(involved):
        p, t = physical.get(s), target.get(s)
        if p == t:
            continue
        if p is not None:
            dest = target_at.get(p.uid)
            steps.append(step(s, "return", p.owner, to=dest) if dest else step(s, "remove", p.owner))
        if p is None and t is not None:
            if t.uid == mover.uid:
                continue  # said at the station it comes from
            if t.uid not in {o.uid for o in physical.values()}:
                # a piece in hand that the rules moved on (a submarine slipping one step away)
                steps.append(step(s, "put_in_hand", t.owner))
                continue
            steps.append(step(s, "put_back", t.owner))
        elif t is not None:
            steps.append(step(s, "put_back", t.owner))
    return steps
