"""The referee's loop for one game: each settled board reading is recognized, judged by the rules engine, journaled
and published, and the recognizer is told which board to expect next.

Data flows one way: snapshots in (``on_snapshot``), rulings out (``subscribe``), and the read model (``view``) for
whoever asks what a role sees and what the players must do now. The jobs around the loop have their own modules:
setup (``setup_desk``), optional reactions (``reaction_desk``), the arbiter's actions (``arbiter_desk``) and the
shaping of a ruling into an event and a fix-up plan (``ruling_plan``); this class keeps the state they share.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from controller.rules import SPECTATOR, GameState, Move, Result, Ruling
from controller.rules.errors import SetupProblem
from controller.rules.say import Say, is_say, say
from controller.rules.views import refusal_for
from controller.sensing.base import Snapshot

from . import table_view
from .arbiter_desk import ArbiterDesk
from .reaction_desk import ReactionDesk, ReactionRefused
from .recognizer import (
    AttackAction,
    Difference,
    FixupDone,
    Idle,
    Mismatch,
    MoveAction,
    Occupant,
    Recognizer,
    Waiting,
)
from .ruling_plan import plan_ruling
from .setup_desk import SetupDesk
from .steps import diff_step, game_over_event


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


@dataclass(frozen=True)
class Pending:
    """A fix-up the referee waits for: ``kind`` ``fixup`` (a ruling's or a reaction's steps), ``illegal`` (a refused
    move to put back), ``layout`` (a setup being laid out) or ``board`` (the whole board, after a resume or an
    undo); the steps it asked for (empty: every station that differs) and its words."""

    kind: str
    steps: list[dict[str, Any]]
    say: Say


@dataclass(frozen=True)
class Instruction:
    """The move the table must make for a seat no one at this board plays (a computer seat): ``event`` is the
    public event that told it, said again when a mismatch settles; ``on_wrong`` hears any other move of that side."""

    side: str
    move: Move
    event: dict[str, Any]
    on_wrong: Callable[[str, Move], None] | None = None


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
        self._occupants: dict[int, Occupant] = {}  # uid -> the Occupant expected_board made for it
        self.log: list[Published] = []
        self._forgotten = 0  # events let go from the front of the log (forget): the log holds seq forgotten+1...
        self._subscribers: list[Callable[[Published], None]] = []
        self._occupancy_watchers: list[Callable[[frozenset[str]], None]] = []
        self._lock = threading.RLock()
        self.snapshot: Snapshot | None = None
        self.snapshot_at: float | None = None  # wall-clock time (time.time) of the latest snapshot
        self.clock: ClockHook | None = None  # a game clock whose readings are journaled with moves and arbiter actions
        self.recognizer = Recognizer({}, state.turn, use_tags=use_tags)
        self.pending: Pending | None = None  # the fix-up the recognizer waits for, as the players were asked it
        self.mismatch: tuple[Difference, ...] | None = None  # what the recognizer cannot explain now
        self._paused = False
        self._waiting_for_board = False  # the whole board is awaited (laying out, resuming, after an undo)
        self._board_diff: tuple[Difference, ...] = ()
        self._instructions: dict[str, Instruction] = {}
        #: a remote seat's mirror (controller.remote): a recognized move is handed to this instead of judged here
        #: (the host judges it); it answers False when the move cannot be taken now, which is then a mismatch
        self.judge_remotely: Callable[[str, Move], bool] | None = None
        self.last_plan: Any = None  # the latest ruling's plan (event, notices, fix-up), as published
        self.computer_sides: set[str] = set()  # the sides a computer seat plays (their tokens are all alike)
        self._wrong_lifted: frozenset[str] = frozenset()  # tokens lifted that the instructed move does not touch
        #: stations a strike that must not be made now left holding the striker, a piece of another side than the one
        #: expected there (station -> that side): a reed switch reads it as the piece expected, so it is kept here
        #: until the station is seen empty
        self._wrong_pieces: dict[str, str] = {}
        self._layout_said: tuple[int, tuple[str, ...]] | None = None  # the layout progress last published
        self.setup_desk = SetupDesk(self, tag_pieces)
        self.reactions = ReactionDesk(self)
        self.arbiter = ArbiterDesk(self)
        if state.phase != "setup":
            self.expect_whole_board("event.resumed_board")
            self.tell_offers("reaction.closed_resumed")

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
        """Hold this to read the state and log consistently from another thread (prefer :meth:`view`)."""
        return self._lock

    def since(self, seq: int) -> list[Published]:
        """Every event published after sequence number ``seq`` (0: all), read safely from any thread."""
        with self._lock:
            return self.log[max(seq - self._forgotten, 0):]

    def forget(self, keep: int) -> None:
        """Let go of all but the latest ``keep`` events of the log (a remote game's host, which serves no page from
        it: its seats got them as messages, and its journal has the game); numbering goes on."""
        with self._lock:
            drop = len(self.log) - keep
            if drop > 0:
                del self.log[:drop]
                self._forgotten += drop

    def notice(self, message: Say | str, **extra: Any) -> Published:
        """Publish a public notice (a clock running low...): announcers say it, pages show it, the club bus carries it.
        ``message`` is a message object (a person's own words become ``notice.text``); ``extra`` must be public too
        (the notice goes to everyone)."""
        said = message if is_say(message) else say("notice.text", text=str(message))
        published = self.announce({"event": "notice", "say": said, **extra})
        assert published is not None
        return published

    def announce(self, public: dict[str, Any], audience: tuple[str, ...] = (), *, ruling: Ruling | None = None,
                 detail: dict[str, Any] | None = None, lock_timeout: float | None = None) -> Published | None:
        """Publish an event to the log and every subscriber, in order. ``public`` must be public, unless ``audience``
        limits it to some seats (and the arbiter); ``ruling`` is the full ruling an entitled output redacts for
        itself; ``detail`` what only some may know (a refused move's reason). With ``lock_timeout`` it gives up
        (None) if another thread holds the game that long (the supervisor telling a fault)."""
        if not self._lock.acquire(timeout=-1 if lock_timeout is None else lock_timeout):
            return None
        try:
            event = Published(self._forgotten + len(self.log) + 1, dict(public), ruling, audience, detail)
            self.log.append(event)
            for fn in list(self._subscribers):
                fn(event)
            return event
        finally:
            self._lock.release()

    def record(self, kind: str, data: dict[str, Any]) -> None:
        """Journal one event of this game (write-ahead: before the game changes)."""
        if self.journal is not None and self.game_id is not None:
            self.journal.append(self.game_id, kind, data)

    def record_arbiter(self, data: dict[str, Any]) -> None:
        """Journal an arbiter action, with the clock's reading when the game is on a clock."""
        if self.clock is not None:
            data = {**data, "clock": self.clock.reading()}
        self.record("arbiter", data)

    # ------------------------------------------------------------------ the read model
    def view(self, role: str, extra: Mapping[str, Any] | None = None) -> table_view.TableView:
        """What ``role`` sees and what the players must do now, built under the lock (``extra``: the table's
        clock and health, public)."""
        return table_view.build(self, role, extra)

    def guidance(self) -> dict[str, Any]:
        """The part of the read model that says what the table must do now, cheap enough for every event (the
        lights'): phase, the pending fix-up with each step's ``done``, the mismatch, the instructed move."""
        with self._lock:
            return {"phase": self.state.phase, "pending": table_view.pending_view(self),
                    "mismatch": table_view.mismatch_view(self), "instruction": self.instruction_view()}

    def instruction_view(self) -> dict[str, Any] | None:
        """The move the table must make now for the side to move, if someone else decides it (public: it was
        told to the whole table)."""
        st = self.state
        ins = self._instructions.get(st.turn) if st.phase == "play" else None
        if ins is None:
            return None
        return {"player": ins.side, "from": ins.move.frm, "to": ins.move.to, "attack": ins.move.to in st.board,
                "by": ins.event.get("event", "bot")}

    @property
    def status(self) -> dict[str, Any]:
        """A small public summary: phase, whose turn, paused, waiting for the board, last mismatch."""
        st = self.state
        return {
            "game": self.game.id,
            "phase": st.phase,
            "turn": st.turn if st.phase == "play" else None,
            "ply": st.ply,
            "paused": self._paused,
            "waiting_for_board": self._waiting_for_board,
            "mismatch": [d.to_json() for d in self.mismatch] if self.mismatch else None,
            "setups": sorted(st.deployments),
            "computers": sorted(self.computer_sides),
            "result": st.result.to_json() if st.result else None,
        }

    # ------------------------------------------------------------------ what the desks share
    @property
    def paused(self) -> bool:
        return self._paused

    def set_paused(self, paused: bool) -> None:
        self._paused = paused

    def replace_state(self, state: GameState) -> None:
        """Play on from ``state`` (the journal replayed after an undo); every instruction given lapses."""
        self.state = state
        self._instructions.clear()

    def tell_offers(self, why: str, mover: str | None = None) -> None:
        self.reactions.tell_offers(why, mover)

    def expected_board(self) -> dict[str, Occupant]:
        """What the referee believes stands on the table now (each piece's Occupant made once and kept while its
        owner and tag stay the same: a remote game's host asks this twice a move for each game)."""
        made = self._occupants
        tags = self.uid_tags
        out = {}
        for s, p in self.state.board.items():
            occ = made.get(p.uid)
            tag = tags.get(p.uid)
            if occ is None or occ.owner != p.owner or occ.tag != tag:
                occ = made[p.uid] = Occupant(p.owner, p.uid, tag)
            out[s] = occ
        return out

    def expect_whole_board(self, why: str) -> None:
        """Ask for the whole board as the referee expects it (``why``: a ``setup.*``/``event.*`` code)."""
        self.recognizer.expect(self.expected_board(), self.state.turn, involved=None)
        self._waiting_for_board = True
        self._board_diff = ()
        self._layout_said = None
        self.pending = Pending("layout" if why == "setup.lay_out" else "board", [], say(why))
        self.announce({"event": "fixup", "steps": [], "say": say(why)})
        self._feed()

    def settle(self, steps: list[dict[str, Any]], *, result: Result | None = None,
               target: Mapping[str, Occupant] | None = None, involved: frozenset[str] | None = None,
               must_lift: frozenset[str] = frozenset(), journal_result: bool = True, asked: bool | None = None,
               kind: str = "fixup") -> None:
        """After the engine changed the game: publish the fix-up ``steps`` the players must make, the result if the
        game is over (journaled unless the caller's event already holds it), then tell the recognizer which board
        to expect next (``target``: default the referee's board) and show it the latest reading. ``asked``: did
        this ask the players to change the board (default: are there steps); ``kind`` the pending fix-up's kind."""
        asked = bool(steps) if asked is None else asked
        self._wrong_pieces.clear()  # the engine changed the game: the board it now expects is the one to make
        words = say("event.fixup", steps=[x["say"] for x in steps])
        if steps:
            self.announce({"event": "fixup", "steps": steps, "say": words})
        if result is not None:
            if journal_result:
                self.record("result", result.to_json())
            self.announce(game_over_event(result))
        if target is None and involved is None:
            if steps:
                self.pending = Pending(kind, steps, words)
            return
        self.pending = Pending(kind, steps, words) if asked else None
        self.recognizer.expect(self.expected_board() if target is None else dict(target), self.state.turn,
                               involved=involved, must_lift=must_lift)
        self._feed()

    def _feed(self) -> None:
        """Show the recognizer the latest board reading again (after it was told what to expect)."""
        if self.snapshot is not None:
            self._handle(self.recognizer.feed(self.snapshot))

    # ------------------------------------------------------------------ instructed moves (computer seats)
    def instruct(self, side: str, move: Move, event: dict[str, Any], *,
                 on_wrong: Callable[[str, Move], None] | None = None) -> None:
        """The table must make ``move`` for ``side`` (a seat no one at this board plays): ``event`` (public) tells
        it, now and again after a mismatch settles; any other move of ``side`` is a mismatch (nothing is judged) and
        ``on_wrong`` hears it. The instruction lapses when ``side``'s move is judged."""
        with self._lock:
            self._instructions[side] = Instruction(side, Move(*move), dict(event), on_wrong)
            self.announce(event)

    def clear_instruction(self, side: str) -> None:
        with self._lock:
            self._instructions.pop(side, None)

    def instruction(self, side: str) -> Move | None:
        with self._lock:
            ins = self._instructions.get(side)
            return None if ins is None else ins.move

    # ------------------------------------------------------------------ setup (the setup desk's)
    def register_setup(self, side: str, placement: Mapping[str, str]) -> list[SetupProblem]:
        """Register ``side``'s deployment; returns every problem (empty when accepted)."""
        return self.setup_desk.register(side, placement)

    def guided_order(self, side: str) -> list[str]:
        """``side``'s private guided-setup order (see :meth:`SetupDesk.guided_order`)."""
        return self.setup_desk.guided_order(side)

    @property
    def setup_rng(self) -> Any:
        return self.setup_desk.rng

    @setup_rng.setter
    def setup_rng(self, rng: Any) -> None:
        self.setup_desk.rng = rng

    # ------------------------------------------------------------------ reactions (the reaction desk's)
    def answer_reaction(self, side: str, offer_id: int, accept: bool, *, target: str | None = None) -> dict[str, Any]:
        """``side`` takes or declines its open reaction offer (see :meth:`ReactionDesk.answer`)."""
        return self.reactions.answer(side, offer_id, accept, target=target)

    def set_react_automatically(self, side: str, on: bool) -> None:
        """``side``'s standing choice for its optional reactions (see :meth:`ReactionDesk.set_automatic`)."""
        self.reactions.set_automatic(side, on)

    # ------------------------------------------------------------------ arbiter (the arbiter desk's)
    def pause(self) -> None:
        self.arbiter.pause()

    def resume(self) -> None:
        self.arbiter.resume()

    def end(self, winners: tuple[str, ...] | list[str], reason: Say | str) -> None:
        """End the game with this result (see :meth:`ArbiterDesk.end`)."""
        self.arbiter.end(winners, reason)

    def put_out(self, side: str, reason: Say | str) -> None:
        """Put ``side`` out of the game (see :meth:`ArbiterDesk.put_out`)."""
        self.arbiter.put_out(side, reason)

    def undo(self, rebuild: Callable[[], GameState]) -> None:
        """Take back the last ruling (see :meth:`ArbiterDesk.undo`)."""
        self.arbiter.undo(rebuild)

    # ------------------------------------------------------------------ snapshots in: the loop
    def on_snapshot(self, snap: Snapshot) -> None:
        """A settled board reading from the sensing backend."""
        with self._lock:
            before = self.snapshot
            self.snapshot = snap
            self.snapshot_at = time.time()
            if self.state.phase == "setup":
                self.announce({"event": "board", "occupied": sorted(snap.occupied)})
                self.setup_desk.read_tags(snap)
                return
            if not self._paused:
                self._handle(self.recognizer.feed(snap))
                self._check_lifts(snap)
            if before is None or before.occupied != snap.occupied:
                # the seats' pages show a lifted piece "in hand" at once (occupancy only, which everyone at the table
                # sees); not an event of the game, so it is neither logged nor numbered. Told after the reading is
                # judged, so the fix-up the watchers read with it (pages, lights) is the one this reading left: told
                # before, its steps mixed the new reading with the recognizer's old target and a page's checklist
                # could tick a step, lose it and tick it again
                for fn in list(self._occupancy_watchers):
                    fn(frozenset(snap.occupied))

    def _check_lifts(self, snap: Snapshot) -> None:
        """During an instructed move: a token lifted that the move does not touch is said at once (a ``bot`` event,
        ``kind: wrong_lift``), once per lift, before it is put down anywhere (issue 37)."""
        ins = self._instructions.get(self.state.turn) if self.state.phase == "play" else None
        if ins is None or self.pending is not None or self._waiting_for_board:
            self._wrong_lifted = frozenset()
            return
        lifted = frozenset(s for s in self.state.board if s not in snap.occupied and s not in (ins.move.frm, ins.move.to))
        new, self._wrong_lifted = sorted(lifted - self._wrong_lifted), lifted
        if new:
            fields = {"from": ins.move.frm, "to": ins.move.to, "attack": ins.move.to in self.state.board}
            code = "bot.wrong_lift_attack" if fields["attack"] else "bot.wrong_lift"
            self.announce({"event": "bot", "kind": "wrong_lift", "player": ins.side, "stations": new, **fields,
                           "say": say(code, player=ins.side, stations=new, **fields)})

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
        if isinstance(action, MoveAction | AttackAction):
            action = self._check_instructed(action)
        if self._wrong_pieces:
            action = self._with_wrong_pieces(action)
        if isinstance(action, Mismatch):
            key = action.differences
            if key != self.mismatch:
                self.mismatch = key
                steps = [diff_step(d, mismatch=True) for d in key]
                self.announce({"event": "mismatch", "stations": [d.to_json() for d in key], "steps": steps,
                               "say": say("event.mismatch", steps=[x["say"] for x in steps])})
            return
        if isinstance(action, Waiting) and self._waiting_for_board and action.differences != self._board_diff:
            self._board_diff = action.differences
            if self.pending is not None and self.pending.kind == "layout":
                self._layout_progress(action.differences)
            else:
                # resuming, after an undo: say exactly which stations still differ
                self.announce({"event": "fixup", "steps": [diff_step(d) for d in action.differences],
                               "say": say("event.board_differs", count=len(action.differences))})
        if isinstance(action, Waiting | Idle):
            if self.mismatch is not None:
                self.mismatch = None
                self.announce({"event": "notice", "say": say("notice.board_explainable")})
                self._remind()
            return
        self.mismatch = None
        if isinstance(action, FixupDone):
            was_waiting = self._waiting_for_board
            laid_out = was_waiting and self.pending is not None and self.pending.kind == "layout"
            if laid_out and self._layout_said:
                self._layout_progress((), final=True)  # the progress line ends at "laid out 40 of 40"
            self._waiting_for_board = False
            self._board_diff = ()
            if was_waiting:
                self._bind_tags()
            if self.pending is not None or was_waiting:
                # a board just laid out was never "fixed": it is complete, and the start line follows
                self.announce({"event": "fixup_done", "say": say("event.layout_done" if laid_out else "event.fixup_done")})
            self.pending = None
            if self.state.phase == "play":
                kind = "start" if was_waiting and self.state.ply == 0 else "turn"
                self.announce({"event": kind, "player": self.state.turn, "say": say(f"event.{kind}", player=self.state.turn)})
            return
        if isinstance(action, MoveAction | AttackAction):
            if self.judge_remotely is None:
                self._judge(action)
            elif not self.judge_remotely(self.recognizer.side, Move(action.frm, action.to)):
                self._handle(self._as_mismatch(action))

    def judge_reported(self, frm: str, to: str) -> None:
        """Judge a move a remote board reported (the host of a remote game has no board of its own): exactly as a
        recognized move, journaled, published and settled."""
        with self._lock:
            self._judge(MoveAction(frm, to))

    def _as_mismatch(self, action: MoveAction | AttackAction) -> Mismatch:
        """The stations a move that must not be made now leaves differing from the board the referee expects. A
        strike's target holds the striker now: remembered until that station is seen empty (``_with_wrong_pieces``)."""
        side = self.recognizer.side
        diffs = [Difference(action.frm, side, "empty")]
        if isinstance(action, MoveAction):
            diffs.append(Difference(action.to, None, "occupied"))
        else:
            owner = self.recognizer.expected[action.to].owner
            self._wrong_pieces[action.to] = owner
            diffs.append(Difference(action.to, owner, "wrong piece"))
        return Mismatch(tuple(sorted(diffs, key=lambda d: d.station)))

    def _with_wrong_pieces(self, action: object) -> object:
        """While a station holds a piece a wrong strike left there (``_as_mismatch``) and the board still differs
        elsewhere, that station stays on the checklist: a stray hand in the middle of the fix-up (the reading then is
        a piece in hand, or two, which alone is no mismatch) had dropped it, and every page showed no checklist at
        all while the referee still waited. The station is forgotten once it is seen empty (the wrong piece came
        off), and once every switch reads as expected: a reed switch cannot tell the wrong piece from the right one,
        and two stray lifts put back own piece last read exactly as a wrong strike undone (the table is trusted
        then, as before)."""
        snap = self.snapshot
        if snap is not None:
            for station in [s for s in self._wrong_pieces if s not in snap.occupied]:
                del self._wrong_pieces[station]
        if isinstance(action, Idle | FixupDone):
            self._wrong_pieces.clear()
        if not self._wrong_pieces or snap is None:
            return action
        expected = self.recognizer.expected
        if isinstance(action, Mismatch):
            diffs = {d.station: d for d in action.differences}
        else:
            diffs = {s: Difference(s, occ.owner, "empty") for s, occ in expected.items() if s not in snap.occupied}
            diffs.update({s: Difference(s, None, "occupied") for s in snap.occupied if s not in expected})
        for station, owner in self._wrong_pieces.items():
            diffs[station] = Difference(station, owner, "wrong piece")
        return Mismatch(tuple(d for _, d in sorted(diffs.items())))

    def _layout_progress(self, differences: tuple[Difference, ...], *, final: bool = False) -> None:
        """Laying out the armies: one progress line ("laid out 30 of 40") each ten pieces, and whenever a piece
        stands where none belongs - never one event per piece, and never called a mismatch (issue 37). The
        ``final`` line (the board matches) is said unless it was the last one said."""
        total = len(self.state.board)
        done = total - sum(1 for d in differences if d.expected is not None)
        strays = tuple(sorted(d.station for d in differences if d.expected is None))
        said = self._layout_said
        if said is not None and (said == (done, strays) or (not final and said[0] // 10 == done // 10 and said[1] == strays)):
            return
        self._layout_said = (done, strays)
        words = (say("event.laid_out_strays", done=done, total=total, stations=list(strays)) if strays
                 else say("event.laid_out", done=done, total=total))
        self.announce({"event": "fixup", "kind": "layout", "progress": {"done": done, "total": total},
                       "steps": [diff_step(d) for d in differences if d.expected is None], "say": words})

    def _check_instructed(self, action: MoveAction | AttackAction) -> MoveAction | AttackAction | Mismatch:
        """A move of an instructed side other than the instructed one is a mismatch, not an action to judge."""
        side = self.recognizer.side
        ins = self._instructions.get(side)
        if ins is None or (action.frm, action.to) == (ins.move.frm, ins.move.to):
            return action
        if ins.on_wrong is not None:
            ins.on_wrong(side, Move(action.frm, action.to))
        return self._as_mismatch(action)

    def _remind(self) -> None:
        """A mismatch settled: say again what the table must still do (the fix-up's steps left, or the instructed
        move), so the console and voice say it once more and no page loses it."""
        pending = table_view.pending_view(self)
        if pending is not None and pending["left"]:
            todo = [{k: v for k, v in s.items() if k != "done"} for s in pending["steps"] if not s["done"]]
            self.announce({"event": "fixup", "steps": todo, "say": pending["say"], "again": True})
            return
        ins = self._instructions.get(self.state.turn) if self.state.phase == "play" and pending is None else None
        if ins is not None:
            self.announce({**ins.event, "again": True})

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
            self.record("illegal", {"side": side, "from": move.frm, "to": move.to, "reason": reason})
            public_reason = refusal_for(reason, move.frm, side, SPECTATOR)
            self.announce({"event": "illegal", "player": side, "from": move.frm, "to": move.to, "reason": public_reason,
                           "say": say("event.illegal", player=side, reason=public_reason)}, detail={"reason": reason})
            self.settle([], target=before, involved=frozenset({move.frm, move.to}), asked=True, kind="illegal")
            return
        # write-ahead: the move is journaled before the engine's state moves on, so a journal that cannot take it
        # leaves the game as it was (the journal and memory always agree)
        data: dict[str, Any] = {"side": side, "from": move.frm, "to": move.to}
        if self.clock is not None:  # the press is journaled with the move: a resumed game's clock goes on from here
            ahead = st.copy()
            ahead.apply(move)  # look-ahead on a copy: whose time runs next
            data["clock"] = self.clock.press(side, ahead.turn if ahead.phase == "play" else None)
        self.record("move", data)
        ruling = st.apply(move, spec=spec)  # judged legal above, on this very position
        self._instructions.pop(side, None)
        plan = plan_ruling(before, self.expected_board(), ruling, move, side, st)
        self.last_plan = plan  # a remote game's host sends it on to the seats
        self.announce(plan.event, ruling=ruling)
        for notice in plan.notices:
            self.announce(notice)
        self.tell_offers("reaction.closed_moved_on", mover=side)
        fx = plan.fixup
        assert fx is not None
        self.settle(fx.steps, result=ruling.result, target=fx.target, involved=fx.involved, must_lift=fx.must_lift)


__all__ = ["ClockHook", "Instruction", "JournalWriter", "Pending", "Published", "ReactionRefused", "Session"]
