"""The game session: owns one refereed game, judges each recognized action, journals it and publishes the rulings.

Data flows one way: snapshots in (``on_snapshot``), rulings out (``subscribe``). The session asks the rules engine
to judge, records accepted moves in the journal, and tells the recognizer which board to expect next.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from controller.rules import SPECTATOR, GameState, Move, Result, Ruling, redact_ruling
from controller.rules import reactions as _reactions
from controller.rules.errors import RulesError, SetupProblem
from controller.rules.say import Say, is_say, note, say
from controller.rules.state import ALL
from controller.rules.views import refusal_for
from controller.sensing.base import Snapshot

from .recognizer import (
    AttackAction,
    FixupDone,
    Idle,
    Mismatch,
    MoveAction,
    Occupant,
    Recognizer,
    Waiting,
)
from .steps import diff_step, fixup_steps, game_over_event, out_notice, ruling_say, step


class ReactionRefused(ValueError):
    """A seat's answer to a reaction offer, or its standing choice, that the session refuses; nothing changed.
    ``status`` is the HTTP status a web page should answer with (409: the offer or the game moved on)."""

    def __init__(self, message: str, status: int = 409) -> None:
        super().__init__(message)
        self.status = status


class JournalWriter(Protocol):
    """What the session needs of a journal: append one event of a game."""

    def append(self, game_id: int, kind: str, data: dict[str, Any]) -> int: ...


class ClockHook(Protocol):
    """A game clock the session journals (the club's ClockKeeper): pressed with each accepted move, read with each
    arbiter action, so a resumed game's clock goes on from the journal."""

    def press(self, mover: str, to: str | None) -> dict[str, float]:
        """``mover`` has moved; ``to``'s time runs (None: the game is over). Each side's seconds left after it."""
        ...

    def reading(self) -> dict[str, float]:
        """Each side's seconds left now."""
        ...


@dataclass(frozen=True)
class Published:
    """One event as the session publishes it: a sequence number, the public part, and the full ruling if any.

    ``public`` is what anyone at the table may know (the spectator's view); outputs entitled to more build it from
    ``ruling`` through the rules layer's redaction function, never from game state.
    """

    seq: int
    public: dict[str, Any]
    ruling: Ruling | None = None
    audience: tuple[str, ...] = ()  # non-empty: only these seats (and the arbiter) may receive it
    # what only some may know, for views.refusal_for to hand out: a refused move's detailed reason
    detail: dict[str, Any] | None = None

    def for_role(self, role: str) -> dict[str, Any]:
        """The public part as ``role`` may receive it: a refusal's detailed reason only for the mover and the
        arbiter (views.refusal_for decides); the caller checks the audience first."""
        out = dict(self.public)
        if self.detail is not None and "reason" in self.detail:
            reason = refusal_for(self.detail["reason"], str(out.get("from")), str(out.get("player")), role)
            out["reason"] = reason
            out["say"] = say("event.illegal", player=out.get("player"), reason=reason)
        return out


@dataclass
class _Status:
    paused: bool = False
    mismatch: tuple | None = None
    waiting_for_board: bool = False
    pending_setups: dict[str, dict[str, str]] = field(default_factory=dict)
    board_diff: tuple = ()
    fixup_asked: bool = False  # the last ruling or refusal asked the players to change the board


class Session:
    """One refereed game on one board."""

    def __init__(
        self,
        state: GameState,
        *,
        journal: JournalWriter | None = None,
        game_id: int | None = None,
        use_tags: bool = False,
        uid_tags: Mapping[int, str] | None = None,
        tag_pieces: Mapping[str, tuple[str, str]] | None = None,
    ) -> None:
        self.state = state
        self.game = state.game
        self.journal = journal
        self.game_id = game_id
        self.use_tags = use_tags
        self.uid_tags: dict[int, str] = dict(uid_tags or {})
        # RFID boards: tag uid -> (side, piece id), from `facedown tags enroll`; setups are then read off the board
        self.tag_pieces: dict[str, tuple[str, str]] = {t.upper(): v for t, v in (tag_pieces or {}).items()}
        self._setup_seen: dict[str, tuple] = {}
        self.log: list[Published] = []
        self._subscribers: list[Callable[[Published], None]] = []
        self._occupancy_watchers: list[Callable[[frozenset[str]], None]] = []
        self._lock = threading.RLock()
        self._status = _Status()
        self.snapshot: Snapshot | None = None
        self.snapshot_at: float | None = None  # wall-clock time (time.time) of the latest snapshot
        self.clock: ClockHook | None = None  # a game clock whose readings are journaled with moves and arbiter actions
        self.recognizer = Recognizer({}, state.turn, use_tags=use_tags)
        self._offers_told: dict[int, _reactions.Offer] = {}  # open reaction offers already told to their seats
        # guided setup: each seat's private order of pieces, random per seat and game (see guided_order)
        self.setup_rng = random.Random()
        self._guided: dict[str, list[str]] = {}
        if state.phase != "setup":
            self._expect_whole_board("event.resumed_board")
            self._tell_offers("reaction.closed_resumed")

    # ------------------------------------------------------------------ publishing
    def subscribe(self, fn: Callable[[Published], None]) -> None:
        """Call ``fn`` with every event published from now on (in order, from the referee's thread)."""
        self._subscribers.append(fn)

    def watch_occupancy(self, fn: Callable[[frozenset[str]], None]) -> None:
        """Call ``fn`` with the occupied stations each time a settled reading changes them during play (the board
        page's live "in hand"; setup readings are published as ``board`` events)."""
        self._occupancy_watchers.append(fn)

    @property
    def lock(self) -> threading.RLock:
        """Hold this to read the state, status and log consistently from another thread (the web page's)."""
        return self._lock

    def since(self, seq: int) -> list[Published]:
        """Every event published after sequence number ``seq`` (0: all), read safely from any thread."""
        with self._lock:
            return self.log[max(seq, 0):]

    def notice(self, message: Say | str, **extra: Any) -> Published:
        """Publish a public notice (a clock running low...): announcers say it, pages show it, the club bus carries it.
        ``message`` is a message object (a person's own words become ``notice.text``); ``extra`` must be public too
        (the notice goes to everyone)."""
        with self._lock:
            said = message if is_say(message) else say("notice.text", text=str(message))
            return self._publish({"event": "notice", "say": said, **extra})

    def publish(self, public: dict[str, Any], audience: tuple[str, ...] = ()) -> Published:
        """Publish an event made beside the session (a computer seat's instruction) to the log and every subscriber,
        in order with the session's own. ``public`` must be public, unless ``audience`` limits it to some seats."""
        with self._lock:
            return self._publish(dict(public), audience=audience)

    def _publish(self, public: dict[str, Any], ruling: Ruling | None = None, audience: tuple[str, ...] = (),
                 detail: dict[str, Any] | None = None) -> Published:
        event = Published(len(self.log) + 1, public, ruling, audience, detail)
        self.log.append(event)
        for fn in list(self._subscribers):
            fn(event)
        return event

    def _journal(self, kind: str, data: dict[str, Any]) -> None:
        if self.journal is not None and self.game_id is not None:
            self.journal.append(self.game_id, kind, data)

    def _arbiter(self, data: dict[str, Any]) -> None:
        """Journal an arbiter action, with the clock's reading when the game is on a clock."""
        if self.clock is not None:
            data = {**data, "clock": self.clock.reading()}
        self._journal("arbiter", data)

    # ------------------------------------------------------------------ expected boards
    def expected_board(self) -> dict[str, Occupant]:
        """What the referee believes stands on the table now."""
        return {s: Occupant(p.owner, p.uid, self.uid_tags.get(p.uid)) for s, p in self.state.board.items()}

    def _expect_whole_board(self, why: str) -> None:
        """Ask for the whole board as the referee expects it (``why``: a ``setup.*``/``event.*`` code)."""
        target = self.expected_board()
        self.recognizer.expect(target, self.state.turn, involved=None)
        self._status.waiting_for_board = True
        self._status.board_diff = ()
        self._publish({"event": "fixup", "steps": [], "say": say(why)})
        self._feed()

    def _feed(self) -> None:
        """Show the recognizer the latest board reading again (after it was told what to expect)."""
        if self.snapshot is not None:
            self._handle(self.recognizer.feed(self.snapshot))

    def _settle(self, steps: list[dict[str, Any]], *, result: Result | None = None, target: Mapping[str, Occupant] | None = None,
                involved: frozenset[str] | None = None, must_lift: frozenset[str] = frozenset(), journal_result: bool = True,
                asked: bool | None = None) -> None:
        """After the engine changed the game: publish the fix-up ``steps`` the players must make, the result if the
        game is over (journaled unless the caller's event already holds it), then tell the recognizer which board
        to expect next (``target``: default the referee's board) and show it the latest reading. ``asked``: did
        this ask the players to change the board (default: are there steps)."""
        self._status.fixup_asked = bool(steps) if asked is None else asked
        if steps:
            self._publish({"event": "fixup", "steps": steps, "say": say("event.fixup", steps=[x["say"] for x in steps])})
        if result is not None:
            if journal_result:
                self._journal("result", result.to_json())
            self._publish(game_over_event(result))
        if target is None and involved is None:
            return
        self.recognizer.expect(self.expected_board() if target is None else dict(target), self.state.turn,
                               involved=involved, must_lift=must_lift)
        self._feed()

    @property
    def status(self) -> dict[str, Any]:
        """A small public summary: phase, whose turn, paused, waiting for the board, last mismatch."""
        st = self.state
        return {
            "game": self.game.id,
            "phase": st.phase,
            "turn": st.turn if st.phase == "play" else None,
            "ply": st.ply,
            "paused": self._status.paused,
            "waiting_for_board": self._status.waiting_for_board,
            "mismatch": [d.to_json() for d in self._status.mismatch] if self._status.mismatch else None,
            "setups": sorted(set(st.deployments) | set(self._status.pending_setups)),
            "result": st.result.to_json() if st.result else None,
        }

    # ------------------------------------------------------------------ setup
    def register_setup(self, side: str, placement: Mapping[str, str]) -> list[SetupProblem]:
        """Register ``side``'s deployment; returns every problem (empty when accepted). Play starts once all are in
        and the board's occupancy matches."""
        from controller.rules.setup import check_deployment

        with self._lock:
            if self.state.phase != "setup":
                return [SetupProblem(None, "the game has already started", say("setup.already_started"))]
            if side in self.state.deployments:
                return [SetupProblem(None, f"{side} has already deployed", say("setup.already_deployed", side=side))]
            problems = check_deployment(self.game, side, placement, self.state.options)
            if problems:
                self._publish({"event": "setup", "player": side, "status": "rejected", "problems": [p.to_json() for p in problems],
                               "say": say("setup.rejected", player=side, count=len(problems))}, audience=(side,))
                return problems
            self._journal("deploy", {"side": side, "placement": dict(placement)})
            self.state.deploy(side, placement)
            self._publish({"event": "setup", "player": side, "status": "registered", "say": say("setup.registered", player=side)})
            if self.state.phase != "setup":
                self._expect_whole_board("setup.lay_out")
            return []

    def guided_order(self, side: str) -> list[str]:
        """The order in which ``side``'s seat is asked for its pieces in guided setup (one piece id per piece): a
        fresh random order per seat and game, completable under the setup constraints, built once and told only
        to that seat (never published)."""
        from controller.rules.deploy import guided_order

        with self._lock:
            if side not in self.game.sides:
                raise ValueError(f"no seat {side!r}; sides are {', '.join(self.game.sides)}")
            if side not in self._guided:
                self._guided[side] = guided_order(self.game, side, self.setup_rng, self.state.options)
            return list(self._guided[side])

    # ------------------------------------------------------------------ snapshots in
    def on_snapshot(self, snap: Snapshot) -> None:
        """A settled board reading from the sensing backend."""
        with self._lock:
            before = self.snapshot
            self.snapshot = snap
            self.snapshot_at = time.time()
            if self.state.phase == "setup":
                self._publish({"event": "board", "occupied": sorted(snap.occupied)})
                if self.tag_pieces:
                    self._read_setups_from_tags(snap)
                return
            if before is None or before.occupied != snap.occupied:
                # the seats' pages show a lifted piece "in hand" at once (occupancy only, which everyone at the table
                # sees); not an event of the game, so it is neither logged nor numbered
                for fn in list(self._occupancy_watchers):
                    fn(frozenset(snap.occupied))
            if self._status.paused:
                return
            self._handle(self.recognizer.feed(snap))

    def _read_setups_from_tags(self, snap: Snapshot) -> None:
        """RFID boards read each side's deployment off the board: once a side's whole army stands in its area, it
        is registered (or its problems are told to that seat once)."""
        army = sum(p.count for p in self.game.pieces)
        zones = self.game.setup.zones[self.game.setup.deploy_zone]
        for side in self.game.sides:
            if side in self.state.deployments:
                continue
            placement = {}
            for station, tag in snap.tags.items():
                who = self.tag_pieces.get(tag.upper())
                if who is not None and who[0] == side and station in zones[side]:
                    placement[station] = who[1]
            if len(placement) < army:
                continue
            key = tuple(sorted(placement.items()))
            if self._setup_seen.get(side) == key:
                continue
            self._setup_seen[side] = key
            self.register_setup(side, placement)  # registers it, or tells that seat every problem

    def _bind_tags(self) -> None:
        """Once the board matches, learn which tag each piece carries (setups entered by hand or file), so every
        later move is checked for identity."""
        if not self.use_tags or self.snapshot is None:
            return
        for station, piece in self.state.board.items():
            tag = self.snapshot.tag(station)
            if tag is not None and piece.uid not in self.uid_tags:
                self.uid_tags[piece.uid] = tag
        self.recognizer.expected = self.expected_board()

    def _handle(self, action: object) -> None:
        if isinstance(action, Mismatch):
            key = action.differences
            if key != self._status.mismatch:
                self._status.mismatch = key
                steps = [diff_step(d, mismatch=True) for d in key]
                self._publish({"event": "mismatch", "stations": [d.to_json() for d in key], "steps": steps,
                               "say": say("event.mismatch", steps=[x["say"] for x in steps])})
            return
        if isinstance(action, Waiting) and self._status.waiting_for_board and action.differences != self._status.board_diff:
            # laying out a setup, or resuming: say exactly which stations still differ
            self._status.board_diff = action.differences
            self._publish({"event": "fixup", "steps": [diff_step(d) for d in action.differences],
                           "say": say("event.board_differs", count=len(action.differences))})
        if isinstance(action, Waiting | Idle):
            if self._status.mismatch is not None:
                self._status.mismatch = None
                self._publish({"event": "notice", "say": say("notice.board_explainable")})
            return
        self._status.mismatch = None
        if isinstance(action, FixupDone):
            was_waiting = self._status.waiting_for_board
            self._status.waiting_for_board = False
            self._status.board_diff = ()
            if was_waiting:
                self._bind_tags()
            if self._status.fixup_asked or was_waiting:
                self._publish({"event": "fixup_done", "say": say("event.fixup_done")})
            self._status.fixup_asked = False
            if self.state.phase == "play":
                kind = "start" if was_waiting and self.state.ply == 0 else "turn"
                self._publish({"event": kind, "player": self.state.turn, "say": say(f"event.{kind}", player=self.state.turn)})
            return
        if isinstance(action, MoveAction | AttackAction):
            self._judge(action)

    def _judge(self, action: MoveAction | AttackAction) -> None:
        st = self.state
        if st.phase != "play":
            return
        before = self.expected_board()
        move = Move(action.frm, action.to)
        side = st.turn
        spec = st.legal_spec(move)  # one pass of the move generator; a refused move pays for its reason
        reason = None if spec is not None else st.why_illegal(move) or say("reason.not_legal", **{"from": move.frm, "to": move.to})
        if reason is not None:
            self._journal("illegal", {"side": side, "from": move.frm, "to": move.to, "reason": reason})
            public_reason = refusal_for(reason, move.frm, side, SPECTATOR)
            self._publish({"event": "illegal", "player": side, "from": move.frm, "to": move.to, "reason": public_reason,
                           "say": say("event.illegal", player=side, reason=public_reason)}, detail={"reason": reason})
            self._settle([], target=before, involved=frozenset({move.frm, move.to}), asked=True)
            return
        # write-ahead: the move is journaled before the engine's state moves on, so a journal that cannot take it
        # leaves the game as it was (the journal and memory always agree)
        data: dict[str, Any] = {"side": side, "from": move.frm, "to": move.to}
        if self.clock is not None:  # the press is journaled with the move: a resumed game's clock goes on from here
            ahead = st.copy()
            ahead.apply(move)  # look-ahead on a copy: whose time runs next
            data["clock"] = self.clock.press(side, ahead.turn if ahead.phase == "play" else None)
        self._journal("move", data)
        ruling = st.apply(move, spec=spec)  # judged legal above, on this very position
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
        self._publish(event, ruling)
        # every seat that goes out is announced, the last one before the game ends too (with more than two seats the
        # game can end because of it); only pieces standing on the board are named for clearing, never the pieces
        # of the clash itself (in a hand) or the station the winner now holds
        in_clash = (ruling.mover_uid, ruling.defender_uid)
        for out_side, why in ruling.out if ruling.result is None or len(self.game.sides) > 2 else ():
            self._publish(out_notice(out_side, why, [r for r in ruling.removed if r.owner == out_side and r.uid not in in_clash]))
        self._tell_offers("reaction.closed_moved_on", mover=side)
        # the board as the players' hands left it, and the board the ruling asks for
        physical = dict(before)
        mover = physical.pop(move.frm)
        physical[move.to] = mover
        target = self.expected_board()
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
        if ruling.kind == "attack" and ruling.outcome in ("attacker", "defender") and st.options.get("winner_face_up"):
            winner_uid = ruling.mover_uid if ruling.outcome == "attacker" else ruling.defender_uid
            at = next((s for s, o in target.items() if o.uid == winner_uid), None)
            who = ruling.side if ruling.outcome == "attacker" else ruling.defender_side
            if at is not None and who is not None:
                steps.append(step(at, "face_up", who))
        self._settle(steps, result=ruling.result, target=target, involved=frozenset(involved), must_lift=must_lift)

    # ------------------------------------------------------------------ optional reactions (reactions: ask)
    def _tell_offers(self, why: str, mover: str | None = None) -> None:
        """Tell each seat privately of its reaction offers that opened, and of those that closed (``why``: a
        ``reaction.closed_*`` code)."""
        st = self.state
        now = {o.id: o for o in _reactions.offers(st)} if st.phase == "play" else {}
        for oid, old in self._offers_told.items():
            if now.get(oid) != old:
                reason = say("reaction.closed_you_moved" if mover == old.side else why)
                self._publish({"event": "offer_closed", "offer": oid, "player": old.side, "reason": reason,
                               "say": say("reaction.offer_closed", station=old.guard, at=old.target, reason=reason)},
                              audience=(old.side,))
        for oid, o in now.items():
            if self._offers_told.get(oid) != o:
                told = _reactions.offer_view(st, o)
                self._publish({"event": "offer", "player": o.side, "offer": told,
                               "say": say("reaction.offer_open", offer=told["say"])}, audience=(o.side,))
        self._offers_told = now

    def answer_reaction(self, side: str, offer_id: int, accept: bool, *, target: str | None = None) -> dict[str, Any]:
        """``side`` takes (``accept``) or declines its open reaction offer ``offer_id`` (``target``: the station the
        seat was told, checked when given). Journaled, applied by the engine, the outcome published (public if the
        guard acted, else only to the seat) with the fix-ups it asks for. Raises ReactionRefused if the offer is not
        open for this seat: the same answer whether it lapsed, was answered or is another seat's, so probing offer
        numbers tells a seat nothing."""
        with self._lock:
            st = self.state
            if st.phase != "play":
                raise ReactionRefused("the game is not in play")
            if self._status.paused:
                raise ReactionRefused("the game is paused: answer when the arbiter resumes it")
            offer = next((o for o in _reactions.offers(st, side) if o.id == offer_id), None)
            if offer is None or (target is not None and offer.target != target):
                raise ReactionRefused(f"you have no open reaction offer {offer_id}: it lapsed with a move, was answered "
                                      f"already, or its aircraft is gone")
            self._journal("reaction", {"action": "answer", "side": side, "offer": offer_id, "accept": accept})
            before = self.expected_board()
            told = _reactions.offer_view(st, offer)
            try:
                done = _reactions.answer(st, side, offer_id, accept)
            except RulesError as exc:  # pragma: no cover - checked above, under the lock
                raise ReactionRefused(str(exc)) from None
            self._offers_told.pop(offer_id, None)
            acted = bool(done.removed or done.reveals or done.notices)
            public_notices = [m for to, m in done.notices if to == ALL]
            if acted:
                self._publish({
                    "event": "notice", "player": side, "reaction": offer.reaction, "from": offer.guard, "to": offer.target,
                    "say": say("event.notices", notices=public_notices) if public_notices
                    else say("reaction.reacts", player=side, station=offer.guard),
                    "notices": public_notices,
                    "reveals": [{"station": r.station, "owner": r.owner, "piece": r.type} for r in done.reveals if ALL in r.to],
                    "removed": [{"station": r.station, "owner": r.owner} for r in done.removed],
                })
                for to, m in done.notices:
                    if to != ALL:
                        self._publish({"event": "notice", "say": m}, audience=(to,))
            else:
                what = (say("reaction.held", owner=side, piece=told["guard_piece"], station=offer.guard, at=offer.target)
                        if not accept and told["guard_piece"] else say("reaction.nothing"))
                self._publish({"event": "reaction", "player": side, "offer": offer_id, "accepted": accept, "say": what},
                              audience=(side,))
            self._tell_offers("reaction.closed_aircraft_down")
            target_board = self.expected_board()
            changed = {s for s in set(before) | set(target_board) if before.get(s) != target_board.get(s)}
            if changed:
                steps = fixup_steps(before, target_board, changed, Occupant(side, -1))
                waiting = self.recognizer.fixup_target()
                involved = self.recognizer.fixup_involved()
                must_lift = frozenset(waiting[1] & set(target_board)) if waiting else frozenset()
                self._settle(steps, target=target_board, must_lift=must_lift, asked=True,
                             involved=None if involved is None else frozenset(involved | changed))
            return {"offer": offer_id, "accepted": accept, "acted": acted}

    def set_react_automatically(self, side: str, on: bool) -> None:
        """``side``'s standing choice: take its optional reactions at once without being asked (``on``), or be
        asked. Journaled; open offers stay open. Raises ReactionRefused if the game does not ask."""
        with self._lock:
            st = self.state
            if side not in self.game.sides:
                raise ReactionRefused(f"no seat {side!r}", 400)
            if not _reactions.asks(st):
                raise ReactionRefused("this game takes every reaction at once (option reactions: automatic)")
            if st.phase == "over":
                raise ReactionRefused("the game is over")
            if _reactions.auto(st, side) == on:
                return
            self._journal("reaction", {"action": "auto", "side": side, "auto": on})
            _reactions.set_auto(st, side, on)
            self._publish({"event": "auto_react", "player": side, "on": on,
                           "say": say("reaction.auto_on" if on else "reaction.auto_off")}, audience=(side,))

    # ------------------------------------------------------------------ arbiter
    def pause(self) -> None:
        with self._lock:
            if self._status.paused:
                return
            self._status.paused = True
            self._arbiter({"action": "pause"})
            self._publish({"event": "paused", "say": say("event.paused")})

    def resume(self) -> None:
        with self._lock:
            if not self._status.paused:
                return
            self._status.paused = False
            self._arbiter({"action": "resume"})
            self._publish({"event": "resumed", "say": say("event.resumed")})
            if self.state.phase == "play":
                self._expect_whole_board("event.resumed_board")

    def end(self, winners: tuple[str, ...] | list[str], reason: Say | str) -> None:
        """The arbiter ends the game with this result (empty winners: a draw); ``reason`` a ``verdict.*`` message
        object, or the arbiter's own words (kept as ``verdict.arbiter``). Journaled first, then ended by the engine."""
        with self._lock:
            if self.state.phase == "over":
                return
            unknown = [w for w in winners if w not in self.game.sides]
            if unknown:
                raise ValueError(f"unknown side(s) {unknown}; sides are {', '.join(self.game.sides)}")
            result = Result(tuple(winners), note(reason))
            self._arbiter({"action": "end", "result": result.to_json()})
            self.state.end(result.winners, result.reason)
            self._settle([], result=self.state.result, journal_result=False)
            self._tell_offers("reaction.closed_game_over")

    def put_out(self, side: str, reason: Say | str) -> None:
        """The arbiter puts ``side`` out of the game (a club's time rule; ``reason`` a message object or the
        arbiter's own words): journaled, then the engine rules on it and the referee says which stations to clear
        and whose turn it is. Raises ValueError if the game is not in play or the side is out."""
        with self._lock:
            st = self.state
            if st.phase != "play":
                raise ValueError("the game is not in play")
            if side not in self.game.sides:
                raise ValueError(f"{self.game.id} has no side {side!r}; sides are {', '.join(self.game.sides)}")
            if side in st.out:
                raise ValueError(f"{side} is already out")
            why = note(reason)
            self._arbiter({"action": "out", "side": side, "reason": why})
            elim = st.put_out(side, why)
            for out_side, out_why in elim.out if elim.result is None or len(self.game.sides) > 2 else ():
                self._publish(out_notice(out_side, out_why, [r for r in elim.removed if r.owner == out_side]))
            self._tell_offers("reaction.closed_side_out")
            steps = [step(r.station, "remove", r.owner) for r in elim.removed]
            self._settle(steps, result=elim.result, involved=frozenset(r.station for r in elim.removed))

    def undo(self, rebuild: Callable[[], GameState]) -> None:
        """Take back the last ruling: journaled (never erased); ``rebuild`` replays the journal into a new state."""
        with self._lock:
            if not self.state.history:
                raise ValueError("there is no ruling to undo")
            self._arbiter({"action": "undo"})
            self.state = rebuild()
            self._publish({"event": "undo", "ply": self.state.ply, "turn": self.state.turn,
                           "say": say("event.undo", ply=self.state.ply, player=self.state.turn)})
            self._expect_whole_board("event.undo_board")
            self._tell_offers("reaction.closed_undo")
