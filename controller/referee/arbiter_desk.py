"""The arbiter's desk: pause and resume, end the game with a result, put a seat out, undo the last ruling; each
journaled (with the clock's reading) before the game changes, and each followed by what the table must do."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from controller.rules import GameState, Result
from controller.rules.say import Say, note, say

from .steps import out_notice, step

if TYPE_CHECKING:
    from .session import Session


class ArbiterDesk:
    """The arbiter's actions on one session (see the module docstring)."""

    def __init__(self, session: Session) -> None:
        self.session = session

    def pause(self) -> None:
        session = self.session
        with session.lock:
            if session.paused:
                return
            session.set_paused(True)
            session.record_arbiter({"action": "pause"})
            session.announce({"event": "paused", "say": say("event.paused")})

    def resume(self) -> None:
        session = self.session
        with session.lock:
            if not session.paused:
                return
            session.set_paused(False)
            session.record_arbiter({"action": "resume"})
            session.announce({"event": "resumed", "say": say("event.resumed")})
            if session.state.phase == "play":
                session.expect_whole_board("event.resumed_board")

    def end(self, winners: tuple[str, ...] | list[str], reason: Say | str) -> None:
        """End the game with this result (empty winners: a draw); ``reason`` a ``verdict.*`` message object, or the
        arbiter's own words (kept as ``verdict.arbiter``). Journaled first, then ended by the engine."""
        session = self.session
        with session.lock:
            if session.state.phase == "over":
                return
            unknown = [w for w in winners if w not in session.game.sides]
            if unknown:
                raise ValueError(f"unknown side(s) {unknown}; sides are {', '.join(session.game.sides)}")
            result = Result(tuple(winners), note(reason))
            session.record_arbiter({"action": "end", "result": result.to_json()})
            session.state.end(result.winners, result.reason)
            session.settle([], result=session.state.result, journal_result=False)
            session.tell_offers("reaction.closed_game_over")

    def put_out(self, side: str, reason: Say | str) -> None:
        """Put ``side`` out of the game (a club's time rule; ``reason`` a message object or the arbiter's own
        words): journaled, then the engine rules on it and the referee says which stations to clear and whose turn
        it is. Raises ValueError if the game is not in play or the side is out."""
        session = self.session
        with session.lock:
            st = session.state
            if st.phase != "play":
                raise ValueError("the game is not in play")
            if side not in session.game.sides:
                raise ValueError(f"{session.game.id} has no side {side!r}; sides are {', '.join(session.game.sides)}")
            if side in st.out:
                raise ValueError(f"{side} is already out")
            why = note(reason)
            session.record_arbiter({"action": "out", "side": side, "reason": why})
            elim = st.put_out(side, why)
            for out_side, out_why in elim.out if elim.result is None or len(session.game.sides) > 2 else ():
                session.announce(out_notice(out_side, out_why, [r for r in elim.removed if r.owner == out_side]))
            session.tell_offers("reaction.closed_side_out")
            steps = [step(r.station, "remove", r.owner) for r in elim.removed]
            session.settle(steps, result=elim.result, involved=frozenset(r.station for r in elim.removed))

    def undo(self, rebuild: Callable[[], GameState]) -> None:
        """Take back the last ruling: journaled (never erased); ``rebuild`` replays the journal into a new state."""
        session = self.session
        with session.lock:
            if not session.state.history:
                raise ValueError("there is no ruling to undo")
            session.record_arbiter({"action": "undo"})
            session.replace_state(rebuild())
            st = session.state
            session.announce({"event": "undo", "ply": st.ply, "turn": st.turn,
                              "say": say("event.undo", ply=st.ply, player=st.turn)})
            session.expect_whole_board("event.undo_board")
            session.tell_offers("reaction.closed_undo")
