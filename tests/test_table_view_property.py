"""The read model under clumsy hands, in every game, on two paths: the page's own requests on the simulated board
(the Flask app), and `facedown script` (its `{"view": ROLE}` lines) driven line by line.

A player who only reads the page (its checklist, its mismatch list, the computer's instruction) plays random
games; at random moments a hand lifts an unrelated piece, lifts the wrong piece, changes its mind or knocks a piece
onto another station. After every settled reading: the read model, the recognizer and every role's page state
agree on what is pending; no step the referee waits for is missing from any page; every ruling was made on a board
that the ruled move explains. A page that dropped a step would leave the player stuck, so the game must go on.

More examples: FACEDOWN_PROPERTY_EXAMPLES=20 (default 2 a game).
"""

from __future__ import annotations

import io
import json
import os
import queue
import random
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.commands.script import run_script
from controller.referee.computer_seat import ComputerSeat
from controller.referee.table_view import TAKES_OFF, UNSENSED, station_matches
from controller.rules import ARBITER, SPECTATOR, game_ids
from controller.rules.deploy import random_deployment
from harness.web_game import Game
from web_referee.app import create_app

EXAMPLES = int(os.environ.get("FACEDOWN_PROPERTY_EXAMPLES", "2"))
GAMES = game_ids()
CLUMSY = 0.3  # how often the hand does something it was not asked


def _options(game: str) -> dict[str, Any] | None:
    return {"reactions": "ask"} if game == "sanjunqi" else None  # reaction offers open at random moments too


class WebPath:
    """A table on the simulated board with its web referee: the hand taps through the page's own requests and reads
    each role's page state from its own route."""

    def __init__(self, game: str, tmp: Path, rng: random.Random, computer: str | None) -> None:
        self.g = Game(game, tmp, options=_options(game), seed=rng.randrange(1 << 30))
        self.session = self.g.session
        self.game = self.g.table.game
        self.app = create_app(self.g.table, setups=_store(tmp), keepalive_s=0.05)
        self.client = self.app.test_client()
        self.roles = (*self.game.sides, SPECTATOR, ARBITER)
        self.keys = {r: self.g.table.tokens.get(r, "public") for r in self.roles}
        self.keys[SPECTATOR] = "public"
        ctx = self.app.extensions["facedown"]
        self.csrf = {r: ctx.roles.csrf(r) for r in self.roles if r != SPECTATOR}
        self.computer = None
        if computer is not None:
            from controller.bots.simple import RandomBot

            self.computer = ComputerSeat(self.session, computer, RandomBot(), seed=rng.randrange(1000))

    def deploy(self, side: str, placement: dict[str, str]) -> None:
        r = self.client.post(f"/api/{self.keys[side]}/setup", json={"placement": placement},
                             headers={"X-CSRF-Token": self.csrf[side]})
        assert r.status_code == 200, r.get_json()

    def toggle(self, station: str, role: str) -> None:
        r = self.client.post(f"/api/{self.keys[role]}/sim/toggle", json={"station": station},
                             headers={"X-CSRF-Token": self.csrf[role]})
        assert r.status_code == 200, r.get_json()
        self.g.settle()
        self.g.settle()

    def occupied(self) -> frozenset[str]:
        return self.g.board.raw_occupied()

    def pages(self) -> dict[str, dict[str, Any]]:
        out = {}
        for role in self.roles:
            r = self.client.get(f"/api/{self.keys[role]}/state")
            assert r.status_code == 200
            out[role] = r.get_json()
        return out

    def close(self) -> None:
        pass


class ScriptPath:
    """`facedown script` on its own thread, fed one line at a time: each line is processed (its events printed)
    before the hand writes the next, and each role's state is what the script prints for ``{"view": ROLE}``."""

    def __init__(self, game: str, tmp: Path, rng: random.Random, computer: str | None) -> None:
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.done = threading.Event()
        self.out = io.StringIO()
        self.read_to = 0
        self.failure: BaseException | None = None
        started = threading.Event()
        self.session: Any = None
        self.board: Any = None

        def on_session(session: Any, board: Any, computers: Any) -> None:
            self.session, self.board = session, board
            started.set()

        seats = {computer: "random"} if computer else None
        self.thread = threading.Thread(target=self._run, args=(game, on_session, seats, rng.randrange(1000)), daemon=True)
        self.thread.start()
        assert started.wait(30) and self.session is not None, self.failure
        self.game = self.session.game
        self.roles = (*self.game.sides, SPECTATOR, ARBITER)
        self.computer = type("Seat", (), {"seat": computer})() if computer else None
        self.now_lines = 0

    def _run(self, game: str, on_session: Any, seats: Any, seed: int) -> None:
        try:
            run_script(game, self._feed(), self.out, options=_options(game), everything=True, seats=seats, seed=seed,
                       on_session=on_session)
        except BaseException as exc:  # noqa: BLE001 - handed to the test's thread
            self.failure = exc
        finally:
            self.done.set()

    def _feed(self):  # noqa: ANN202 - the script's input, a line at a time
        while True:
            self.done.set()  # every line so far is processed: the hand may look
            line = self.lines.get()
            if line is None:
                return
            yield line

    def send(self, *items: dict[str, Any]) -> list[dict[str, Any]]:
        """Write these lines, wait until the script has processed them; what it printed meanwhile."""
        for item in items:
            self.done.clear()
            self.lines.put(json.dumps(item))
            assert self.done.wait(30), "the script did not answer"
            assert self.failure is None, self.failure
        text = self.out.getvalue()
        new, self.read_to = text[self.read_to:], len(text)
        return [json.loads(x) for x in new.splitlines() if x.strip()]

    def deploy(self, side: str, placement: dict[str, str]) -> None:
        self.send({"setup": side, "pieces": placement})
        # the script's setup line puts the pieces down at once; this hand lays them out itself, clumsily
        for station in placement:
            self.send({"lift": station})
        self.send({"tick_ms": 200})

    def toggle(self, station: str, role: str) -> None:
        self.send({"place" if station not in self.board.raw_occupied() else "lift": station}, {"tick_ms": 100})

    def occupied(self) -> frozenset[str]:
        return self.board.raw_occupied()

    def pages(self) -> dict[str, dict[str, Any]]:
        printed = self.send(*({"view": role} for role in self.roles))
        views = {x["view"]: x["state"] for x in printed if "view" in x}
        assert set(views) == set(self.roles), printed
        return views

    def close(self) -> None:
        self.lines.put(None)
        self.thread.join(30)
        assert self.failure is None, self.failure


class Hand:
    """A player who reads only the page (checklist, mismatch, instruction) and is sometimes clumsy; after every
    change the read model, the recognizer and every role's page are checked against each other."""

    def __init__(self, path: WebPath | ScriptPath, rng: random.Random) -> None:
        self.path = path
        self.rng = rng
        self.session = path.session
        self.rulings: list[tuple[str, str, frozenset[str], frozenset[str]]] = []
        self._before: frozenset[str] = frozenset()
        self.session.subscribe(self._on_event)
        self.hand: list[str] = []  # the toggles of a move under way
        self.hand_from: str | None = None  # where that move started
        self.last_pages: dict[str, dict[str, Any]] | None = None  # every role's page after the last change

    def _on_event(self, ev: Any) -> None:
        if ev.ruling is not None and ev.public.get("event") in ("move", "attack"):
            snap = self.session.snapshot
            self.rulings.append((ev.public["from"], ev.public["to"], frozenset(snap.occupied), self._before))

    def toggle(self, station: str, role: str) -> None:
        self._before = frozenset(self.session.expected_board())
        self.path.toggle(station, role)
        self.check()

    def setup(self) -> None:
        computer = self.path.computer.seat if self.path.computer is not None else None
        for side in self.path.game.sides:
            if side != computer:
                self.path.deploy(side, random_deployment(self.path.game, side, self.rng, self.session.state.options))

    def clumsy(self) -> None:
        """Something nobody asked for: a stray lift or put-down, a knocked piece, the wrong piece lifted."""
        occupied = sorted(self.path.occupied())
        empty = sorted(set(self.path.game.station_ids) - set(occupied))
        who = self.rng.choice(self.path.game.sides)
        kind = self.rng.random()
        if kind < 0.5 and occupied:  # a stray lift (put back later, when the page says so)
            self.toggle(self.rng.choice(occupied), who)
        elif kind < 0.7 and occupied and empty:  # a knocked piece lands on another station
            self.toggle(self.rng.choice(occupied), who)
            self.toggle(self.rng.choice(empty), who)
        elif kind < 0.85 and self.hand_from:  # a change of mind: the piece in hand goes back where it was
            if self.hand_from not in self.path.occupied():
                self.toggle(self.hand_from, who)
            self.hand, self.hand_from = [], None
        elif empty:  # a piece put down on an empty station from nowhere
            self.toggle(self.rng.choice(empty), who)

    def follow(self) -> None:
        """Do the next thing the page asks: settle the mismatch, make the next fix-up step, or move."""
        st = self.session.state
        turn = st.turn
        pages = self.last_pages if self.last_pages is not None else self.path.pages()
        page = pages[turn if st.phase == "play" else SPECTATOR]
        guidance = page["guidance"]
        occupied = self.path.occupied()
        if guidance is not None:
            self.hand, self.hand_from = [], None
            steps = [s for s in guidance["steps"] if not s.get("done") and s.get("station") and s["action"] not in UNSENSED]
            if not steps:
                # every sensed step done: a swap still to be seen (one piece replaces another) is what is left
                steps = [s for s in guidance["steps"] if s.get("station") and s["action"] not in UNSENSED]
            assert steps, f"the page asks for nothing the board can do, yet the referee waits: {guidance}"
            s = steps[0]
            station = s["station"]
            if s["action"] in TAKES_OFF and s.get("to") and station not in occupied:
                station = s["to"]  # the piece is in hand: put it where it goes
            self.toggle(station, s.get("by") or turn or ARBITER)
            return
        if st.phase != "play":
            return
        # a piece the page shows in hand that is no part of the move under way (a stray lift the referee reads as
        # the start of an attack, so it waits): put it back first, as a player who sees it marked would
        mine = set(self.hand) | ({self.hand_from} if self.hand_from else set())
        stray = sorted((set(page["expected"]) ^ set(page["occupied"])) - mine)
        if stray:
            self.toggle(stray[0], turn)
            return
        if self.hand:
            self.toggle(self.hand.pop(0), turn)
            if not self.hand:
                self.hand_from = None
            return
        instruction = page.get("instruction")
        if instruction is not None:
            frm, to = instruction["from"], instruction["to"]
        else:
            moves = st.legal_moves()
            if not moves:
                return
            frm, to = self.rng.choice(moves)
        self.hand = [frm, to, to] if to in st.board else [frm, to]
        self.hand_from = frm
        self.toggle(self.hand.pop(0), turn)

    # ------------------------------------------------------------------ what must hold
    def check(self) -> None:
        session = self.session
        awaited = session.recognizer.fixup_target()
        assert (awaited is not None) == (session.pending is not None), \
            f"the recognizer {'waits' if awaited else 'does not wait'} for a fix-up, the read model says {session.pending}"
        pages = self.last_pages = self.path.pages()
        for role, page in pages.items():
            g = page["guidance"]
            if session.mismatch:
                assert g is not None and g["kind"] == "mismatch", (role, g)
                assert {d["station"] for d in g["stations"]} == {d.station for d in session.mismatch}
            elif session.pending is not None:
                assert g is not None and g["kind"] == session.pending.kind, (role, g)
            else:
                assert g is None, (role, g)
            assert page["pending"] == pages[SPECTATOR]["pending"], f"{role}'s page and the spectator's disagree"
            assert page["instruction"] == pages[SPECTATOR]["instruction"], f"{role}'s page shows another move to make"
        if awaited is None:
            return
        target, left = awaited
        snap = session.snapshot
        involved = session.recognizer.fixup_involved()
        where = involved if involved else set(target) | set(snap.occupied)
        needed = {s for s in where if not station_matches(s, target, snap, session.use_tags)} | set(left)
        shown = set()
        for s in pages[SPECTATOR]["pending"]["steps"]:
            if not s["done"]:
                shown |= {s["station"], s.get("to")}
        missing = needed - shown
        assert not missing, f"the referee waits for {sorted(missing)}, no page asks for it: {pages[SPECTATOR]['pending']}"

    def check_rulings(self) -> None:
        for frm, to, occupied, before in self.rulings:
            explained = (before - {frm}) | {to}
            assert occupied == explained, f"{frm}-{to} was ruled on a board it does not explain: {sorted(occupied ^ explained)}"


def _store(tmp: Path) -> Any:
    from controller.setups_store import SetupStore

    return SetupStore(tmp / "setups")


def play(path_kind: type, game: str, tmp: Path, seed: int, plies: int = 6, computer: str | None = None) -> Hand:
    """Lay out and play until ``plies`` plies were judged (or the game ended), with a budget of hand actions that a
    game which got stuck runs out of."""
    rng = random.Random(seed)
    path = path_kind(game, tmp, rng, computer)
    hand = Hand(path, rng)
    try:
        hand.setup()
        budget = 6 * len(path.game.station_ids) + 60 * plies
        for _ in range(budget):
            st = hand.session.state
            if st.phase == "over" or st.ply >= plies:
                break
            if st.phase == "play" and rng.random() < CLUMSY:
                hand.clumsy()
            else:
                hand.follow()
        hand.check_rulings()
        st = hand.session.state
        assert st.ply >= plies or st.phase == "over", \
            f"the game got stuck at ply {st.ply}: {hand.session.pending} {hand.session.mismatch}"
    finally:
        path.close()
    return hand


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**31))
def test_clumsy_hands_never_lose_a_pending_step_on_the_page(game: str, seed: int,
                                                            tmp_path_factory: pytest.TempPathFactory) -> None:
    play(WebPath, game, tmp_path_factory.mktemp(game), seed)


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**31))
def test_clumsy_hands_never_lose_a_pending_step_in_the_script(game: str, seed: int,
                                                              tmp_path_factory: pytest.TempPathFactory) -> None:
    play(ScriptPath, game, tmp_path_factory.mktemp(game), seed)


@pytest.mark.parametrize("path_kind", [WebPath, ScriptPath], ids=["page", "script"])
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**31))
def test_clumsy_hands_beside_a_computer_seat(path_kind: type, seed: int, tmp_path_factory: pytest.TempPathFactory) -> None:
    play(path_kind, "luzhanqi", tmp_path_factory.mktemp("computer"), seed, computer="blue")
