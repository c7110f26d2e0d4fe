"""The bot interface: what every computer player, built-in or external, answers to.

A bot is told about a new game (game id, seat, options), then sees the seat's redacted view after every event
(``controller.rules.view`` for its seat, with the seat's ``redact_ruling`` of the move when there was one), and is
asked to ``go``: for a deployment during setup, for a move on its turn. It never sees the game state. A move the
referee refuses is told back (``refused``) and the bot is asked again. Games with optional reactions may offer one
(``answer_offer``).
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any

from controller.errors import FaceDownError
from controller.rules import GameDef, load_game
from controller.rules.hooks import Run, TwoSquares
from controller.rules.state import GameState, Move

from .belief import Belief, Prior


class BotError(FaceDownError, RuntimeError):
    """A bot failed: it crashed, broke the protocol, answered too late or answered nonsense. ``why`` is a short
    code (``crashed``, ``timeout``, ``protocol``, ``illegal``, ``bad_setup``) and the message says what happened."""

    def __init__(self, why: str, message: str) -> None:
        super().__init__(message)
        self.why = why


class Bot(ABC):
    """A computer player. Subclasses answer ``choose_setup`` and ``choose_move``; the rest has sensible defaults."""

    name = "bot"

    @abstractmethod
    def new_game(self, game: str, seat: str, options: Mapping[str, Any], seed: int | None = None) -> None:
        """A new game begins: ``game`` is a game id (or game file path), ``seat`` the side this bot plays."""

    def observe(self, view: Mapping[str, Any], event: Mapping[str, Any] | None = None) -> None:
        """The seat's view after an event; ``event`` is the seat's redacted ruling when the event was a move."""
        return None  # optional: by default nothing to do

    @abstractmethod
    def choose_setup(self, view: Mapping[str, Any], time_ms: float) -> dict[str, str]:
        """This seat's deployment {station: piece id}."""

    @abstractmethod
    def choose_move(self, view: Mapping[str, Any], time_ms: float) -> tuple[str, str]:
        """This seat's move (from station, to station) in the position of ``view``, within ``time_ms``."""

    def refused(self, frm: str, to: str) -> None:
        """The referee refused the move ``frm``-``to``; the bot will be asked again."""
        return None  # optional: by default nothing to do

    def answer_offer(self, offer: Mapping[str, Any]) -> bool:
        """Take an optional reaction the rules offer this seat? (an offer names the guard and the target's station)"""
        return True

    def game_over(self, result: Mapping[str, Any] | None) -> None:
        """The game ended (``result`` as in a view), or was abandoned (None)."""
        return None  # optional: by default nothing to do

    def close(self) -> None:
        """Release what the bot holds (an external process)."""
        return None  # optional: by default nothing to do


class Player(Bot):
    """An in-process bot that keeps a ``Belief`` about the hidden pieces and a random source."""

    def __init__(self, level: int | None = None) -> None:
        self.level = level
        self.rng = random.Random()
        self.gdef: GameDef | None = None
        self.seat = ""
        self.belief: Belief | None = None
        self.forbidden: set[Move] = set()
        self.last_ply = -1
        self.run: Run | None = None  # this seat's shuttle so far, as the two-squares rule counts it

    def prior(self) -> Prior | None:
        return None

    def new_game(self, game: str, seat: str, options: Mapping[str, Any], seed: int | None = None) -> None:
        self.gdef = load_game(game)
        if seat not in self.gdef.sides:
            raise BotError("protocol", f"{self.gdef.id} has no seat {seat!r}; seats are {', '.join(self.gdef.sides)}")
        self.seat = seat
        self.options = dict(options)
        self.rng = random.Random(seed)
        self.belief = Belief(self.gdef, seat, options, self.prior())
        self.forbidden = set()
        self.run = None

    def observe(self, view: Mapping[str, Any], event: Mapping[str, Any] | None = None) -> None:
        b = self.belief
        assert b is not None, "new_game first"
        mine = event is not None and event.get("side") == self.seat and event.get("from") in b.where
        uid = b.where[event["from"]] if mine else None  # type: ignore[index]
        b.update(view, event)
        if mine:  # keep count of our own shuttle as the rule does: a guessed world has no history
            frm, to = event["from"], event["to"]  # type: ignore[index]
            self.run = TwoSquares.next_run(b.base, self.run, uid, frm, to, went=b.where.get(to) == uid)  # type: ignore[arg-type]

    def refused(self, frm: str, to: str) -> None:
        self.forbidden.add(Move(frm, to))
        if self.belief is not None:  # an attack refused because of what it attacked tells what that is not
            self.belief.refused(frm, to)

    def sync(self, view: Mapping[str, Any]) -> None:
        """Make sure the belief has taken in ``view`` (a host that sends views only with 'go' still works)."""
        assert self.belief is not None, "new_game first"
        ply = view.get("ply", -1)
        if ply != self.last_ply:
            self.forbidden = set()  # a refused move is refused for that turn only
            self.last_ply = ply
        if not self.belief.started or self.belief.where != {e["station"]: e["uid"] for e in view["pieces"]}:
            self.belief.update(view, None)

    def world(self, kinds: Mapping[int, str] | None = None) -> GameState:
        """A game state with the seat's pieces as they are and every hidden piece of the kind ``kinds`` gives it
        (a determinization), turn and sides out as the view says."""
        assert self.belief is not None
        return self.belief.scratch(self.belief.where, kinds or {})

    def legal(self, st: GameState) -> list[Move]:
        """The seat's moves in ``st`` the referee will take: not refused this turn, and not one the two-squares
        rule forbids. If only such moves are left, they are offered anyway (and the referee says no)."""
        moves = [m for m in st.legal_moves(self.seat) if m not in self.forbidden]
        return [m for m in moves if not self.shuttle_refused(st, m)] or moves

    def shuttle_refused(self, st: GameState, m: Move) -> bool:
        """Would the two-squares rule (option ``two_squares``) refuse ``m`` after this seat's own moves so far?"""
        limit = st.options.get("two_squares")
        run = self.run
        if not limit or run is None or run.length < limit or m.frm not in run.squares or m.to not in run.squares:
            return False
        p = st.board.get(m.frm)
        return p is not None and p.uid == run.uid

    def playable(self, tries: int = 8) -> tuple[GameState, list[Move]]:
        """A guessed world and the seat's legal moves in it. Where a guess leaves no move (an attack whose legality
        hangs on the hidden kind, a move refused this turn), other guesses are tried before giving up."""
        assert self.belief is not None
        st = self.world(self.belief.sample(self.rng))
        moves = self.legal(st)
        for _ in range(tries):
            if moves:
                break
            st = self.world(self.belief.sample(self.rng))
            moves = self.legal(st)
        return st, moves
