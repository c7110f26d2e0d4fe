"""The referee's reaction desk (``reactions: ask``): tells each seat privately of its optional reaction offers as
they open and close, takes a seat's answer or standing choice, and asks the table for the fix-ups a reaction makes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.errors import FaceDownError
from controller.rules import reactions as _reactions
from controller.rules.errors import RulesError
from controller.rules.say import say
from controller.rules.state import ALL

from .recognizer import Occupant
from .steps import fixup_steps

if TYPE_CHECKING:
    from .session import Session


class ReactionRefused(FaceDownError, ValueError):
    """A seat's answer to a reaction offer, or its standing choice, that the referee refuses; nothing changed.
    ``status`` is the HTTP status a web page should answer with (409: the offer or the game moved on)."""

    def __init__(self, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.status = status


def ask_changes(session: Session, steps: list[dict[str, Any]], target_board: dict[str, Occupant],
                changed: set[str]) -> None:
    """Ask the table for what a reaction changed (``steps``, to reach ``target_board``), beside any fix-up still
    under way (whose steps stay asked, but for the ``changed`` stations, whose steps are the reaction's now)."""
    waiting = session.recognizer.fixup_target()
    involved = session.recognizer.fixup_involved()
    must_lift = frozenset(waiting[1] & set(target_board)) if waiting else frozenset()
    if waiting and session.pending is not None:
        steps = [*(s for s in session.pending.steps if s.get("station") not in changed), *steps]
    session.settle(steps, target=target_board, must_lift=must_lift, asked=True,
                   involved=None if involved is None else frozenset(involved | changed))


class ReactionDesk:
    """Reactions for one session (see the module docstring); every method runs under the session's lock."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._told: dict[int, _reactions.Offer] = {}  # open reaction offers already told to their seats

    def tell_offers(self, why: str, mover: str | None = None) -> None:
        """Tell each seat privately of its reaction offers that opened, and of those that closed (``why``: a
        ``reaction.closed_*`` code)."""
        session = self.session
        st = session.state
        now = {o.id: o for o in _reactions.offers(st)} if st.phase == "play" else {}
        for oid, old in self._told.items():
            if now.get(oid) != old:
                reason = say("reaction.closed_you_moved" if mover == old.side else why)
                session.announce({"event": "offer_closed", "offer": oid, "player": old.side, "reason": reason,
                                  "say": say("reaction.offer_closed", station=old.guard, at=old.target, reason=reason)},
                                 audience=(old.side,))
        for oid, o in now.items():
            if self._told.get(oid) != o:
                told = _reactions.offer_view(st, o)
                session.announce({"event": "offer", "player": o.side, "offer": told,
                                  "say": say("reaction.offer_open", offer=told["say"])}, audience=(o.side,))
        self._told = now

    #: what a seat answering while the game is paused is told (who resumes it)
    resumed_by = "answer when the arbiter resumes it"

    def open_offer(self, side: str, offer_id: int, target: str | None) -> Any:
        """``side``'s open offer ``offer_id`` (its station ``target`` checked when given), the session's lock held;
        ReactionRefused if the game is not in play, is paused, or the offer is not open for this seat (the same
        answer whether it lapsed, was answered or is another seat's)."""
        st = self.session.state
        if st.phase != "play":
            raise ReactionRefused("the game is not in play")
        if self.session.paused:
            raise ReactionRefused(f"the game is paused: {self.resumed_by}")
        offer = next((o for o in _reactions.offers(st, side) if o.id == offer_id), None)
        if offer is None or (target is not None and offer.target != target):
            raise ReactionRefused(f"you have no open reaction offer {offer_id}: it lapsed with a move, was answered "
                                  f"already, or its aircraft is gone")
        return offer

    def answer(self, side: str, offer_id: int, accept: bool, *, target: str | None = None) -> dict[str, Any]:
        """``side`` takes (``accept``) or declines its open reaction offer ``offer_id`` (``target``: the station the
        seat was told, checked when given). Journaled, applied by the engine, the outcome published (public if the
        guard acted, else only to the seat) with the fix-ups it asks for. Raises ReactionRefused if the offer is not
        open for this seat: the same answer whether it lapsed, was answered or is another seat's, so probing offer
        numbers tells a seat nothing."""
        session = self.session
        with session.lock:
            st = session.state
            offer = self.open_offer(side, offer_id, target)
            session.record("reaction", {"action": "answer", "side": side, "offer": offer_id, "accept": accept})
            before = session.expected_board()
            told = _reactions.offer_view(st, offer)
            try:
                done = _reactions.answer(st, side, offer_id, accept)
            except RulesError as exc:  # pragma: no cover - checked above, under the lock
                raise ReactionRefused(str(exc)) from None
            self._told.pop(offer_id, None)
            acted = bool(done.removed or done.reveals or done.notices)
            public_notices = [m for to, m in done.notices if to == ALL]
            if acted:
                session.announce({
                    "event": "notice", "player": side, "reaction": offer.reaction, "from": offer.guard, "to": offer.target,
                    "say": say("event.notices", notices=public_notices) if public_notices
                    else say("reaction.reacts", player=side, station=offer.guard),
                    "notices": public_notices,
                    "reveals": [{"station": r.station, "owner": r.owner, "piece": r.type} for r in done.reveals if ALL in r.to],
                    "removed": [{"station": r.station, "owner": r.owner} for r in done.removed],
                })
                for to, m in done.notices:
                    if to != ALL:
                        session.announce({"event": "notice", "say": m}, audience=(to,))
            else:
                what = (say("reaction.held", owner=side, piece=told["guard_piece"], station=offer.guard, at=offer.target)
                        if not accept and told["guard_piece"] else say("reaction.nothing"))
                session.announce({"event": "reaction", "player": side, "offer": offer_id, "accepted": accept, "say": what},
                                 audience=(side,))
            self.tell_offers("reaction.closed_aircraft_down")
            target_board = session.expected_board()
            changed = {s for s in set(before) | set(target_board) if before.get(s) != target_board.get(s)}
            if changed:
                ask_changes(session, fixup_steps(before, target_board, changed, Occupant(side, -1)), target_board, changed)
            return {"offer": offer_id, "accepted": accept, "acted": acted}

    def set_automatic(self, side: str, on: bool) -> None:
        """``side``'s standing choice: take its optional reactions at once without being asked (``on``), or be
        asked. Journaled; open offers stay open. Raises ReactionRefused if the game does not ask."""
        session = self.session
        with session.lock:
            st = session.state
            if side not in session.game.sides:
                raise ReactionRefused(f"no seat {side!r}", 400)
            if not _reactions.asks(st):
                raise ReactionRefused("this game takes every reaction at once (option reactions: automatic)")
            if st.phase == "over":
                raise ReactionRefused("the game is over")
            if _reactions.auto(st, side) == on:
                return
            session.record("reaction", {"action": "auto", "side": side, "auto": on})
            _reactions.set_auto(st, side, on)
            session.announce({"event": "auto_react", "player": side, "on": on,
                              "say": say("reaction.auto_on" if on else "reaction.auto_off")}, audience=(side,))
