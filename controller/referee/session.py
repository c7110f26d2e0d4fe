"""The game session: owns one refereed game, judges each recognized action, journals it and publishes the rulings.

Data flows one way: snapshots in (``on_snapshot``), rulings out (``subscribe``). The session asks the rules engine
to judge, records accepted moves in the journal, and tells the recognizer which board to expect next.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from controller.rules import SPECTATOR, GameState, IllegalMoveError, Move, Ruling, redact_ruling
from controller.rules import reactions as _reactions
from controller.rules.errors import RulesError, SetupProblem
from controller.rules.state import ALL
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
        self._lock = threading.RLock()
        self._status = _Status()
        self.snapshot: Snapshot | None = None
        self.snapshot_at: float | None = None  # wall-clock time (time.time) of the latest snapshot
        self.clock: ClockHook | None = None  # a game clock whose readings are journaled with moves and arbiter actions
        allies = {s: frozenset(o for g in self.game.alliances if s in g for o in g if o != s) for s in self.game.sides}
        self.recognizer = Recognizer({}, state.turn, allies, use_tags=use_tags)
        self._offers_told: dict[int, _reactions.Offer] = {}  # open reaction offers already told to their seats
        if state.phase != "setup":
            self._expect_whole_board("resumed: put the board as the referee expects it")
            self._tell_offers("the game was resumed")

    # ------------------------------------------------------------------ publishing
    def subscribe(self, fn: Callable[[Published], None]) -> None:
        """Call ``fn`` with every event published from now on (in order, from the referee's thread)."""
        self._subscribers.append(fn)

    @property
    def lock(self) -> threading.RLock:
        """Hold this to read the state, status and log consistently from another thread (the web page's)."""
        return self._lock

    def since(self, seq: int) -> list[Published]:
        """Every event published after sequence number ``seq`` (0: all), read safely from any thread."""
        with self._lock:
            return self.log[max(seq, 0):]

    def notice(self, message: str, **extra: Any) -> Published:
        """Publish a public notice (a clock running low...): announcers say it, pages show it, the club bus carries it.
        ``extra`` must be public too (the notice goes to everyone)."""
        with self._lock:
            return self._publish({"event": "notice", "message": message, **extra})

    def publish(self, public: dict[str, Any], audience: tuple[str, ...] = ()) -> Published:
        """Publish an event made beside the session (a computer seat's instruction) to the log and every subscriber,
        in order with the session's own. ``public`` must be public, unless ``audience`` limits it to some seats."""
        with self._lock:
            return self._publish(dict(public), audience=audience)

    def _publish(self, public: dict[str, Any], ruling: Ruling | None = None, audience: tuple[str, ...] = ()) -> Published:
        event = Published(len(self.log) + 1, public, ruling, audience)
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

    def _expect_whole_board(self, message: str) -> None:
        target = self.expected_board()
        self.recognizer.expect(target, self.state.turn, involved=None)
        self._status.waiting_for_board = True
        self._status.board_diff = ()
        self._publish({"event": "fixup", "steps": [], "message": message})
        if self.snapshot is not None:
            self._handle(self.recognizer.feed(self.snapshot))

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
                return [SetupProblem(None, "the game has already started")]
            if side in self.state.deployments:
                return [SetupProblem(None, f"{side} has already deployed")]
            problems = check_deployment(self.game, side, placement, self.state.options)
            if problems:
                self._publish({"event": "setup", "player": side, "status": "rejected", "problems": [p.to_json() for p in problems]}, audience=(side,))
                return problems
            self._journal("deploy", {"side": side, "placement": dict(placement)})
            self.state.deploy(side, placement)
            self._publish({"event": "setup", "player": side, "status": "registered"})
            if self.state.phase != "setup":
                self._expect_whole_board("lay out both deployments; play starts when the board matches")
            return []

    # ------------------------------------------------------------------ snapshots in
    def on_snapshot(self, snap: Snapshot) -> None:
        """A settled board reading from the sensing backend."""
        with self._lock:
            self.snapshot = snap
            self.snapshot_at = time.time()
            if self.state.phase == "setup":
                self._publish({"event": "board", "occupied": sorted(snap.occupied)})
                if self.tag_pieces:
                    self._read_setups_from_tags(snap)
                return
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
                self._publish({
                    "event": "mismatch",
                    "stations": [d.to_json() for d in key],
                    "message": _mismatch_message(key),
                })
            return
        if isinstance(action, Waiting) and self._status.waiting_for_board and action.differences != self._status.board_diff:
            # laying out a setup, or resuming: say exactly which stations still differ
            self._status.board_diff = action.differences
            self._publish({"event": "fixup", "steps": [_diff_step(d) for d in action.differences],
                           "message": f"{len(action.differences)} station(s) differ from the referee's board"})
        if isinstance(action, Waiting | Idle):
            if self._status.mismatch is not None:
                self._status.mismatch = None
                self._publish({"event": "notice", "message": "the board is explainable again"})
            return
        self._status.mismatch = None
        if isinstance(action, FixupDone):
            was_waiting = self._status.waiting_for_board
            self._status.waiting_for_board = False
            self._status.board_diff = ()
            if was_waiting:
                self._bind_tags()
            if self._status.fixup_asked or was_waiting:
                self._publish({"event": "fixup_done"})
            self._status.fixup_asked = False
            if self.state.phase == "play":
                self._publish({"event": "start" if was_waiting and self.state.ply == 0 else "turn", "player": self.state.turn})
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
        try:
            ruling = st.apply(move)  # judged once; a refused move changes nothing
        except IllegalMoveError as exc:
            reason = exc.reason
            self._journal("illegal", {"side": side, "from": move.frm, "to": move.to, "reason": reason})
            self._publish({"event": "illegal", "player": side, "from": move.frm, "to": move.to, "reason": reason,
                           "message": f"illegal: {reason}; put the piece back on {move.frm}"})
            self._status.fixup_asked = True
            self.recognizer.expect(before, side, involved=frozenset({move.frm, move.to}))
            if self.snapshot is not None:
                self._handle(self.recognizer.feed(self.snapshot))
            return
        data: dict[str, Any] = {"side": side, "from": move.frm, "to": move.to}
        if self.clock is not None:  # the press is journaled with the move: a resumed game's clock goes on from here
            data["clock"] = self.clock.press(side, st.turn if st.phase == "play" else None)
        self._journal("move", data)
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
        self._publish(event, ruling)
        for out_side, why in ruling.out if ruling.result is None else ():
            self._publish(_out_notice(out_side, why, [r for r in ruling.removed if r.owner == out_side]))
        self._tell_offers("a move was made without answering", mover=side)
        # the board as the players' hands left it, and the board the ruling asks for
        physical = dict(before)
        mover = physical.pop(move.frm)
        physical[move.to] = mover
        target = self.expected_board()
        involved = {s for s in set(physical) | set(target) if physical.get(s) != target.get(s)} | {move.frm, move.to}
        must_lift = frozenset(s for s in physical if s in target and physical[s].uid != target[s].uid)
        steps = _fixup_steps(physical, target, involved, mover)
        defender_gone = any(r.uid == ruling.defender_uid for r in ruling.removed)
        if ruling.kind == "attack" and ruling.outcome in ("attacker", "both") and defender_gone:
            steps.append({"station": move.to, "do": f"{_owner_name(ruling.defender_side)}'s piece in hand leaves the game"})
        elif ruling.kind == "attack" and ruling.defender_uid not in {o.uid for o in target.values()} and not defender_gone:
            # a hook kept it in play off the board (a flag now riding on its taker): the notices say where it goes
            said = "; ".join(public["notices"]) or "the referee says where it goes"
            steps.append({"station": move.to, "do": f"{_owner_name(ruling.defender_side)}'s piece in hand stays in play: {said}"})
        if ruling.kind == "attack" and ruling.outcome in ("attacker", "defender") and st.options.get("winner_face_up"):
            winner_uid = ruling.mover_uid if ruling.outcome == "attacker" else ruling.defender_uid
            at = next((s for s, o in target.items() if o.uid == winner_uid), None)
            if at is not None:
                who = ruling.side if ruling.outcome == "attacker" else ruling.defender_side
                steps.append({"station": at, "do": f"lay {_owner_name(who)}'s winning piece face-up (the game's rule)"})
        self._status.fixup_asked = bool(steps)
        if steps:
            self._publish({"event": "fixup", "steps": steps, "message": "; ".join(f"{x['station']}: {x['do']}" for x in steps)})
        if ruling.result is not None:
            self._journal("result", ruling.result.to_json())
            self._publish({"event": "game_over", "winner": ruling.result.winners[0] if len(ruling.result.winners) == 1 else None,
                           "winners": list(ruling.result.winners), "reason": ruling.result.reason})
        self.recognizer.expect(target, st.turn, involved=frozenset(involved), must_lift=must_lift)
        if self.snapshot is not None:
            self._handle(self.recognizer.feed(self.snapshot))

    # ------------------------------------------------------------------ optional reactions (reactions: ask)
    def _tell_offers(self, why: str, mover: str | None = None) -> None:
        """Tell each seat privately of its reaction offers that opened, and of those that closed (``why``)."""
        st = self.state
        now = {o.id: o for o in _reactions.offers(st)} if st.phase == "play" else {}
        for oid, old in self._offers_told.items():
            if now.get(oid) != old:
                reason = "you moved without answering" if mover == old.side else why
                self._publish({"event": "offer_closed", "offer": oid, "player": old.side,
                               "message": f"the chance to react from {old.guard} at {old.target} has passed: {reason}"},
                              audience=(old.side,))
        for oid, o in now.items():
            if self._offers_told.get(oid) != o:
                told = _reactions.offer_view(st, o)
                self._publish({"event": "offer", "player": o.side, "offer": told,
                               "message": f"{told['text']}: answer on your page before you move"}, audience=(o.side,))
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
                    "message": "; ".join(public_notices) or f"{_owner_name(side)} reacts from {offer.guard}",
                    "notices": public_notices,
                    "reveals": [{"station": r.station, "owner": r.owner, "piece": r.type} for r in done.reveals if ALL in r.to],
                    "removed": [{"station": r.station, "owner": r.owner} for r in done.removed],
                })
                for to, m in done.notices:
                    if to != ALL:
                        self._publish({"event": "notice", "message": m}, audience=(to,))
            else:
                name = self.game.piece_by_id[told["guard_piece"]].name if told["guard_piece"] else "piece"
                what = (f"you hold fire: your {name} at {offer.guard} stays hidden and the aircraft at {offer.target} stays"
                        if not accept else "nothing to react to: the guard or the aircraft has moved on")
                self._publish({"event": "reaction", "player": side, "offer": offer_id, "accepted": accept, "message": what},
                              audience=(side,))
            self._tell_offers("the aircraft is down")
            target_board = self.expected_board()
            changed = {s for s in set(before) | set(target_board) if before.get(s) != target_board.get(s)}
            if changed:
                steps = _fixup_steps(before, target_board, changed, Occupant(side, -1))
                self._status.fixup_asked = True
                self._publish({"event": "fixup", "steps": steps, "message": "; ".join(f"{x['station']}: {x['do']}" for x in steps)})
                waiting = self.recognizer.fixup_target()
                involved = self.recognizer.fixup_involved()
                must_lift = frozenset(waiting[1] & set(target_board)) if waiting else frozenset()
                self.recognizer.expect(target_board, st.turn, involved=None if involved is None else frozenset(involved | changed),
                                       must_lift=must_lift)
                if self.snapshot is not None:
                    self._handle(self.recognizer.feed(self.snapshot))
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
                           "message": "your optional reactions are taken at once from the next move" if on
                           else "you are asked before each optional reaction"}, audience=(side,))

    # ------------------------------------------------------------------ arbiter
    def pause(self) -> None:
        with self._lock:
            if self._status.paused:
                return
            self._status.paused = True
            self._arbiter({"action": "pause"})
            self._publish({"event": "paused"})

    def resume(self) -> None:
        with self._lock:
            if not self._status.paused:
                return
            self._status.paused = False
            self._arbiter({"action": "resume"})
            self._publish({"event": "resumed"})
            if self.state.phase == "play":
                self._expect_whole_board("resumed: the board must match before play goes on")

    def end(self, winners: tuple[str, ...] | list[str], reason: str) -> None:
        """The arbiter ends the game with this result (empty winners: a draw)."""
        from controller.rules.state import Result

        with self._lock:
            if self.state.phase == "over":
                return
            unknown = [w for w in winners if w not in self.game.sides]
            if unknown:
                raise ValueError(f"unknown side(s) {unknown}; sides are {', '.join(self.game.sides)}")
            result = Result(tuple(winners), reason)
            self._arbiter({"action": "end", "result": result.to_json()})
            self.state.result = result
            self.state.phase = "over"
            self._publish({"event": "game_over", "winner": winners[0] if len(winners) == 1 else None,
                           "winners": list(winners), "reason": reason})
            self._tell_offers("the game is over")

    def put_out(self, side: str, reason: str) -> None:
        """The arbiter puts ``side`` out of the game (a club's time rule): journaled, then the referee says which
        stations to clear and whose turn it is. Raises ValueError if the game is not in play or the side is out."""
        from controller.rules import RulesError

        with self._lock:
            st = self.state
            if st.phase != "play":
                raise ValueError("the game is not in play")
            try:
                elim = st.put_out(side, reason)
            except RulesError as exc:
                raise ValueError(str(exc)) from None
            self._arbiter({"action": "out", "side": side, "reason": reason})
            for out_side, why in elim.out if elim.result is None else ():
                self._publish(_out_notice(out_side, why, [r for r in elim.removed if r.owner == out_side]))
            self._tell_offers(f"{_owner_name(side)} was put out")
            steps = [{"station": r.station, "do": f"take {_owner_name(r.owner)}'s piece off: it leaves the game"} for r in elim.removed]
            self._status.fixup_asked = bool(steps)
            if steps:
                self._publish({"event": "fixup", "steps": steps, "message": "; ".join(f"{x['station']}: {x['do']}" for x in steps)})
            if elim.result is not None:
                self._journal("result", elim.result.to_json())
                self._publish({"event": "game_over", "winner": elim.result.winners[0] if len(elim.result.winners) == 1 else None,
                               "winners": list(elim.result.winners), "reason": elim.result.reason})
            self.recognizer.expect(self.expected_board(), st.turn, involved=frozenset(r.station for r in elim.removed))
            if self.snapshot is not None:
                self._handle(self.recognizer.feed(self.snapshot))

    def undo(self, rebuild: Callable[[], GameState]) -> None:
        """Take back the last ruling: journaled (never erased); ``rebuild`` replays the journal into a new state."""
        with self._lock:
            if not self.state.history:
                raise ValueError("there is no ruling to undo")
            self._arbiter({"action": "undo"})
            self.state = rebuild()
            self._publish({"event": "undo", "ply": self.state.ply, "turn": self.state.turn})
            self._expect_whole_board("undo: put the board back as it was before the last ruling")
            self._tell_offers("the arbiter took back the move")


def _owner_name(side: str) -> str:
    return side.capitalize()


def _out_notice(side: str, why: str, removed: list[Any]) -> dict[str, Any]:
    """The public notice that a side is out (the game goes on); its pieces' stations, never their kinds."""
    stations = sorted(r.station for r in removed)
    clear = ": its pieces leave the board" if stations else ""
    return {"event": "notice", "message": f"{_owner_name(side)} is out ({why}){clear}", "out": side, "reason": why, "clear": stations}


def _mismatch_message(diffs: tuple) -> str:
    parts = []
    for d in diffs:
        if d.found == "empty":
            parts.append(f"put {_owner_name(d.expected)}'s piece back on {d.station}")
        elif d.found == "occupied":
            parts.append(f"take the piece off {d.station}")
        else:
            parts.append(f"{d.station} holds the wrong piece: put {_owner_name(d.expected)}'s piece there")
    return "board mismatch: " + "; ".join(parts)


def _diff_step(d: Any) -> dict[str, str]:
    if d.found == "empty":
        return {"station": d.station, "do": f"put {_owner_name(d.expected)}'s piece here"}
    if d.found == "occupied":
        return {"station": d.station, "do": "take the piece off"}
    return {"station": d.station, "do": f"wrong piece: put {_owner_name(d.expected)}'s expected piece here"}


def _fixup_steps(physical: Mapping[str, Occupant], target: Mapping[str, Occupant], involved: set[str], mover: Occupant) -> list[dict[str, str]]:
    steps = []
    target_at = {o.uid: s for s, o in target.items()}
    for s in sorted(involved):
        p, t = physical.get(s), target.get(s)
        if p == t:
            continue
        if p is not None and t is None:
            dest = target_at.get(p.uid)
            steps.append({"station": s, "do": f"return {_owner_name(p.owner)}'s piece to {dest}" if dest else f"take {_owner_name(p.owner)}'s piece off: it leaves the game"})
        elif p is None and t is not None:
            if t.uid == mover.uid:
                continue  # said at the station it comes from
            if t.uid not in {o.uid for o in physical.values()}:
                # a piece in hand that the rules moved on (a submarine slipping one step away)
                steps.append({"station": s, "do": f"put {_owner_name(t.owner)}'s piece in hand here"})
                continue
            steps.append({"station": s, "do": f"put {_owner_name(t.owner)}'s piece back"})
        elif p is not None and t is not None:
            dest = target_at.get(p.uid)
            first = f"return {_owner_name(p.owner)}'s piece to {dest}" if dest else f"take {_owner_name(p.owner)}'s piece off (it leaves the game)"
            steps.append({"station": s, "do": f"{first} and put {_owner_name(t.owner)}'s piece back"})
    return steps
