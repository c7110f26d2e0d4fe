"""A computer seat at a real board: a bot plays one side, and the human at the table moves its tokens for it.

The computer's army stands on the board as anonymous tokens (blank pieces, or pieces whose faces the human never
looks at): the referee knows each token's identity from the bot's deployment. At setup the seat registers the bot's
deployment and tells the table which stations get a token (all alike, any order). On the computer's turn it asks
the bot for a move - the bot's input is only the seat's redacted view (``controller.rules.view`` for its seat, and
``redact_ruling`` of each ruling), never the game state - and tells the table which token to move where. The
session holds the instruction (``Session.instruct``): the recognizer's normal path sees the move done; any other
move of the computer's side is a mismatch (nothing is judged) and the instruction is said again once it settles;
the instructed move is then judged like any move, with the same rulings and fix-ups as between people.

Everything it says is a structured event ``{"event": "bot", "kind": ..., "player": SEAT, ..., "say": {...}}`` with
``bot.*`` message keys, published through the session so the pages, voice and console render it. A bot that fails
(crashes, hangs, keeps answering refused moves) is reported (``kind: failed``) and the seat stops playing by itself:
the arbiter can move for it by hand or end the game; nothing of the game is lost.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from controller.bots.base import Bot, BotError
from controller.rules import Move, redact_ruling, view
from controller.rules.views import ARBITER

from .session import Published, Session

log = logging.getLogger(__name__)

#: Refused moves in one turn before the bot is taken off the seat.
MAX_REFUSALS = 3


class ComputerSeat:
    """One side of a session played by ``bot`` (see the module docstring)."""

    def __init__(self, session: Session, seat: str, bot: Bot, *, name: str = "", seed: int | None = None,
                 time_ms: float = 30_000.0) -> None:
        if seat not in session.game.sides:
            raise ValueError(f"{session.game.id} has no seat {seat!r}; seats are {', '.join(session.game.sides)}")
        self.session = session
        self.seat = seat
        self.bot = bot
        self.name = name or bot.name
        self.time_ms = time_ms
        self.instructed_ply = -1
        self.refusals = 0
        self.failed: str | None = None
        self.inputs: list[tuple[dict[str, Any], dict[str, Any] | None]] = []  # what the bot was handed (audits)
        st = session.state
        with session.lock:
            session.computer_sides.add(seat)
            self._guard(lambda: bot.new_game(st.game.id, seat, st.options, seed))
            session.subscribe(self._on_event)
            if st.phase == "setup" and seat not in st.deployments and self.failed is None:
                self._deploy()
            elif st.phase == "play":
                self._hand(None)
                if st.turn == seat:
                    self._instruct()

    @property
    def instruction(self) -> Move | None:
        """The move the table was told to make for this seat and has not made yet (None: none)."""
        return self.session.instruction(self.seat)

    # ------------------------------------------------------------------ what the bot sees
    def _hand(self, event: dict[str, Any] | None) -> dict[str, Any]:
        seen = view(self.session.state, self.seat)
        self.inputs.append((seen, event))
        self._guard(lambda: self.bot.observe(seen, event))
        return seen

    def _guard(self, fn: Callable[[], Any]) -> Any:
        if self.failed is not None:
            return None
        try:
            return fn()
        except BotError as exc:
            self._fail(exc.why, str(exc))
        except Exception as exc:  # a bot's bug must not stop the referee
            self._fail("crashed", f"{type(exc).__name__}: {exc}")
        return None

    def _fail(self, why: str, detail: str) -> None:
        self.failed = why
        self.session.clear_instruction(self.seat)
        # the bot's own words (an exception, an external engine's message) may name its hidden pieces: they go to the
        # arbiter and the operator's log only; everyone else learns that it stopped and why, as a code
        log.warning("computer seat %s (%s) stopped (%s): %s", self.seat, self.name, why, detail)
        params = {"player": self.seat, "why": {"code": f"bot.why.{why}", "params": {}}, "bot": self.name}
        self.session.announce({"event": "bot", "kind": "failed", "player": self.seat, "why": why, "bot": self.name,
                              "say": {"code": "bot.failed", "params": params}})
        self.session.announce({"event": "bot", "kind": "failed_detail", "player": self.seat, "why": why,
                              "detail": detail[:200], "say": {"code": "bot.failed_detail",
                                                              "params": {"player": self.seat, "detail": detail[:200]}}},
                             audience=(ARBITER,))
        try:
            self.bot.close()
        except Exception:  # pragma: no cover - closing a broken bot is best effort
            pass

    def _say(self, kind: str, code: str, **fields: Any) -> None:
        params = {"player": self.seat, **fields}
        self.session.announce({"event": "bot", "kind": kind, "player": self.seat, **fields, "say": {"code": code, "params": params}})

    # ------------------------------------------------------------------ setup
    def _deploy(self) -> None:
        seen = view(self.session.state, self.seat)
        self.inputs.append((seen, None))
        placement = self._guard(lambda: self.bot.choose_setup(seen, self.time_ms))
        if placement is None:
            return
        problems = self.session.register_setup(self.seat, placement)
        if problems:
            self._fail("bad_setup", "; ".join(f"{p.station or '-'}: {p.message}" for p in problems[:3]))
            return
        stations = sorted(placement, key=self.session.game.station_ids.index)
        self._say("setup", "bot.setup", stations=stations, count=len(stations))

    # ------------------------------------------------------------------ play
    def _wrong_move(self, side: str, done: Move) -> None:
        want = self.instruction
        if want is None:
            return
        attack = want.to in self.session.state.board
        self._say("wrong_move", "bot.wrong_attack" if attack else "bot.wrong_move", attack=attack, **{"from": want.frm, "to": want.to, "done_from": done.frm, "done_to": done.to})

    def _instruct(self) -> None:
        st = self.session.state
        if self.failed is not None or st.phase != "play" or st.turn != self.seat:
            return
        chosen = self.instruction
        while chosen is None or self.instructed_ply != st.ply:
            seen = view(st, self.seat)
            self.inputs.append((seen, None))
            move = self._guard(lambda seen=seen: self.bot.choose_move(seen, self.time_ms))
            if move is None:
                return
            move = Move(*move)
            if st.why_illegal(move) is None:
                self.session.clear_instruction(self.seat)
                chosen = move
                self.instructed_ply = st.ply
                break
            # refused before anyone touches a token: the bot is told (no reason: as a seat is) and asked again
            self.refusals += 1
            if self.refusals >= MAX_REFUSALS:
                self._fail("illegal", f"{self.refusals} refused moves in a row, the last {move}")
                return
            self._guard(lambda m=move: self.bot.refused(m.frm, m.to))
        m = chosen
        attack = m.to in st.board
        fields = {"from": m.frm, "to": m.to, "attack": attack}
        event = {"event": "bot", "kind": "move", "player": self.seat, **fields,
                 "say": {"code": "bot.attack" if attack else "bot.move", "params": {"player": self.seat, **fields}}}
        # the session holds the instruction: any other move of this seat is a mismatch, the pages show it, and it
        # is said again when a mismatch settles
        self.session.instruct(self.seat, m, event, on_wrong=self._wrong_move)

    def _on_event(self, ev: Published) -> None:
        if self.failed is not None:
            return
        public = ev.public
        kind = public.get("event")
        if ev.ruling is not None:
            if ev.ruling.side == self.seat:
                self.refusals = 0
            self._hand(redact_ruling(ev.ruling, self.seat))
        elif kind == "start":
            self._hand(None)
        elif kind == "illegal" and public.get("player") == self.seat:
            self.refusals += 1
            refused = self.instruction
            self.session.clear_instruction(self.seat)
            if refused is not None:
                self._guard(lambda: self.bot.refused(refused.frm, refused.to))
            if self.refusals >= MAX_REFUSALS:
                self._fail("illegal", f"{self.refusals} refused moves in a row")
        elif kind in ("reaction", "undo", "paused", "resumed"):
            self._hand(None)
        elif kind == "game_over":
            self._guard(lambda: self.bot.game_over(self.session.state.result.to_json() if self.session.state.result else None))
            self.session.clear_instruction(self.seat)
        if kind in ("start", "turn") and public.get("player") == self.seat:
            self._instruct()

    def close(self) -> None:
        """Release the bot (an external program is told to quit)."""
        try:
            self.bot.close()
        except Exception:  # pragma: no cover
            pass
