"""The read model of a table: what one role sees and what the players must do now, built by the referee from its
own state (the recognizer's target, the pending fix-up, the instruction it gave), never from the event log.

Pages, the pushed state, console, voice, lights and the club feed render a :class:`TableView`; none of them
re-derives game state. ``build`` runs under the session's lock, so every part of one view belongs to one moment.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from controller.rules import ARBITER, redact_ruling, view
from controller.rules.say import say
from controller.sensing.base import Snapshot

from .recognizer import Difference, Occupant
from .steps import diff_step

if TYPE_CHECKING:
    from .session import Session

#: step actions the board cannot sense (a piece kept in a hand, a piece turned face up): shown, never ticked
UNSENSED = ("keep_in_hand", "face_up")
#: step actions that take a piece off its station (the rest put one there)
TAKES_OFF = ("remove", "take_off", "return")
#: the board before its first reading: nothing seen on it yet
NO_READING = Snapshot(0, frozenset())


@dataclass(frozen=True)
class TableView:
    """One role's view of the table at one moment (see the module docstring). ``to_json`` is what pages receive."""

    role: str
    seq: int
    status: dict[str, Any]
    board: dict[str, Any]
    last_ruling: dict[str, Any] | None
    pending: dict[str, Any] | None  # the fix-up the referee waits for, each step with ``done``
    mismatch: dict[str, Any] | None  # the stations the referee cannot explain, with the steps that settle them
    instruction: dict[str, Any] | None  # the move the table must make for a computer (or remote) seat
    occupied: list[str]
    expected: list[str]
    reactions: dict[str, Any] | None = None
    setup: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # clock, fault, link: the table's, added by its owner

    @property
    def guidance(self) -> dict[str, Any] | None:
        """What the players must do with the board first: settle the mismatch, else the pending fix-up."""
        if self.mismatch is not None:
            return {"kind": "mismatch", **self.mismatch}
        return self.pending

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "role": self.role, "seq": self.seq, "status": self.status, "view": self.board,
            "last_ruling": self.last_ruling, "guidance": self.guidance, "pending": self.pending,
            "mismatch": self.mismatch, "instruction": self.instruction, "occupied": self.occupied,
            "expected": self.expected, **self.extra,
        }
        if self.reactions is not None:
            out["reactions"] = self.reactions
        if self.setup is not None:
            out["setup"] = self.setup
        return out


def station_matches(station: str, target: Mapping[str, Occupant], snap: Snapshot, use_tags: bool) -> bool:
    """Does ``station`` hold what ``target`` asks (occupancy, and the tag where tags are read)?"""
    want = target.get(station)
    if want is None:
        return station not in snap.occupied
    if station not in snap.occupied:
        return False
    return not (use_tags and want.tag is not None and snap.tag(station) != want.tag)


def step_done(st: Mapping[str, Any], target: Mapping[str, Occupant], left_to_lift: frozenset[str],
              snap: Snapshot | None, use_tags: bool) -> bool:
    """Has the board done this step yet? A piece taken off is done once its station was seen empty (or stands
    empty); a piece put on once its station holds what the target asks and was emptied first where one piece
    replaces another; steps the board cannot sense are never ticked."""
    station = st.get("station")
    if snap is None or station is None or st.get("action") in UNSENSED:
        return False
    if st.get("action") in TAKES_OFF:
        off = station not in snap.occupied or (station in target and station not in left_to_lift)
        to = st.get("to")
        return off and (to is None or station_matches(to, target, snap, use_tags))
    return station_matches(station, target, snap, use_tags) and station not in left_to_lift


def _differences(target: Mapping[str, Occupant], involved: frozenset[str] | None, snap: Snapshot | None,
                 use_tags: bool) -> list[Difference]:
    snap = snap or NO_READING
    where = set(target) | set(snap.occupied) if involved is None else set(involved)
    out = []
    for s in sorted(where):
        if station_matches(s, target, snap, use_tags):
            continue
        want = target.get(s)
        found = "empty" if s not in snap.occupied else "occupied" if want is None else "wrong piece"
        out.append(Difference(s, None if want is None else want.owner, found))
    return out


def pending_view(session: Session) -> dict[str, Any] | None:
    """The fix-up the referee waits for (from the recognizer's own target and must-lift stations), each step with
    ``done``; None when it waits for nothing."""
    pending = session.pending
    awaited = session.recognizer.fixup_target()
    if pending is None or awaited is None:
        return None
    target, left = awaited
    snap = session.snapshot
    involved = session.recognizer.fixup_involved() or None
    if pending.steps:
        steps = [{**s, "done": step_done(s, target, left, snap, session.use_tags)} for s in pending.steps]
        # a station the fix-up may change that differs in a way no step says (a stray piece put down there, a piece
        # of the fix-up knocked off): the step that makes it right, so no page leaves the players guessing
        asked = {x for s in steps if not s["done"] for x in (s.get("station"), s.get("to"))}
        steps += [{**diff_step(d, mismatch=True), "done": False}
                  for d in _differences(target, involved, snap, session.use_tags) if d.station not in asked]
    else:
        # laying out, resuming, or a refused move put back: every station that still differs, as a step
        steps = [{**diff_step(d, mismatch=pending.kind == "illegal"), "done": False}
                 for d in _differences(target, involved, snap, session.use_tags)]
    todo = [s for s in steps if not s["done"]]
    out: dict[str, Any] = {"kind": pending.kind, "steps": steps, "left": len(todo)}
    if pending.kind == "layout":
        # laying out the armies is progress, not a fault: how many pieces stand where they belong
        placed = sum(1 for s in target if station_matches(s, target, snap or NO_READING, session.use_tags))
        out["progress"] = {"done": placed, "total": len(target)}
        words = say("event.laid_out", done=placed, total=len(target))
    else:
        words = (say("event.fixup", steps=[s["say"] for s in todo]) if pending.steps and todo
                 else say("event.board_differs", count=len(todo)) if not pending.steps else pending.say)
    return {**out, "say": words}


def mismatch_view(session: Session) -> dict[str, Any] | None:
    """The stations the referee cannot explain now, and the steps that would settle them; None if it can."""
    differences = session.mismatch
    if not differences:
        return None
    steps = [diff_step(d, mismatch=True) for d in differences]
    return {"stations": [d.to_json() for d in differences], "steps": steps,
            "say": say("event.mismatch", steps=[x["say"] for x in steps])}


def build(session: Session, role: str, extra: Mapping[str, Any] | None = None) -> TableView:
    """``role``'s view of ``session`` now (``extra``: the table's clock and health, public)."""
    from controller.rules.deploy import allowed_stations

    with session.lock:
        st = session.state
        game = session.game
        status = session.status
        board = view(st, role)
        snap = session.snapshot
        reactions = None
        if role in game.sides and "offers" in board:
            # optional reactions (reactions: ask): this seat's own open offers and its standing choice
            reactions = {"offers": board["offers"], "automatic": board.get("react_automatically", False)}
        setup = None
        if role in game.sides and status["phase"] == "setup":
            deployed = role in st.deployments
            setup = {
                "deployed": deployed,
                "zone": sorted(game.setup.zones[game.setup.deploy_zone][role]),
                "allowed": {p.id: allowed_stations(game, role, p.id, st.options) for p in game.pieces},
                # the private, random order this seat is asked for its pieces in (never in another role's view)
                "guided_order": session.guided_order(role) if not deployed else [],
            }
        return TableView(
            role=role,
            seq=session.log[-1].seq if session.log else 0,
            status=status,
            board=board,
            last_ruling=redact_ruling(st.history[-1], role) if st.history else None,
            pending=pending_view(session),
            mismatch=mismatch_view(session),
            instruction=session.instruction_view(),
            occupied=sorted(snap.occupied) if snap is not None else [],
            expected=sorted(session.expected_board()),
            reactions=reactions,
            setup=setup,
            extra=dict(extra or {}),
        )


__all__ = ["ARBITER", "TableView", "build", "pending_view", "mismatch_view", "step_done", "station_matches"]
