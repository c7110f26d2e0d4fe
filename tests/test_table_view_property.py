"""The read model under clumsy hands, in every game, through the page's own requests on the simulated board.

A player who only reads the page (its checklist, its mismatch list, the computer's instruction) plays random
games; at random moments a hand lifts an unrelated piece, lifts the wrong piece, changes its mind or knocks a piece
onto another station. After every settled reading: the read model, the recognizer and every role's page state
agree on what is pending; no step the referee waits for is missing from any page; every ruling was made on a board
that the ruled move explains. A page that dropped a step would leave the player stuck, so the game must go on.

More examples: FACEDOWN_PROPERTY_EXAMPLES=20 (default 2 a game).
"""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_web_support import Game

from controller.referee.computer_seat import ComputerSeat
from controller.referee.table_view import TAKES_OFF, UNSENSED, station_matches
from controller.rules import ARBITER, SPECTATOR, game_ids
from controller.rules.deploy import random_deployment
from web_referee.app import create_app
from web_referee.payloads import state_for

EXAMPLES = int(os.environ.get("FACEDOWN_PROPERTY_EXAMPLES", "2"))
GAMES = game_ids()
CLUMSY = 0.3  # how often the hand does something it was not asked


class Table:
    """One game played physically through the page's requests, checked after every settled reading."""

    def __init__(self, game: str, tmp: Path, rng: random.Random, computer: str | None = None) -> None:
        options = {"reactions": "ask"} if game == "sanjunqi" else None
        self.g = Game(game, tmp, options=options, seed=rng.randrange(1 << 30))
        self.rng = rng
        self.session = self.g.session
        self.app = create_app(self.g.table, setups=_store(tmp), keepalive_s=0.05)
        self.client = self.app.test_client()
        self.roles = (*self.g.table.game.sides, SPECTATOR, ARBITER)
        self.keys = {r: self.g.table.tokens.get(r, "public") for r in self.roles}
        self.keys[SPECTATOR] = "public"
        ctx = self.app.extensions["facedown"]
        self.csrf = {r: ctx.roles.csrf(r) for r in self.roles if r != SPECTATOR}
        self.computer = None
        if computer is not None:
            from controller.bots.simple import RandomBot

            self.computer = ComputerSeat(self.session, computer, RandomBot(), seed=rng.randrange(1000))
        self.rulings: list[tuple[str, str, frozenset[str], frozenset[str]]] = []
        self._before: frozenset[str] = frozenset()
        self.session.subscribe(self._on_event)
        self.hand: list[str] = []  # the toggles of a move under way
        self.hand_from: str | None = None  # where that move started

    # ------------------------------------------------------------------ what the hand does
    def _on_event(self, ev: Any) -> None:
        if ev.ruling is not None and ev.public.get("event") in ("move", "attack"):
            snap = self.session.snapshot
            self.rulings.append((ev.public["from"], ev.public["to"], frozenset(snap.occupied), self._before))

    def toggle(self, station: str, role: str) -> None:
        self._before = frozenset(self.session.expected_board())
        r = self.client.post(f"/api/{self.keys[role]}/sim/toggle", json={"station": station},
                             headers={"X-CSRF-Token": self.csrf[role]})
        assert r.status_code == 200, r.get_json()
        self.g.settle()
        self.g.settle()
        self.check()

    def page(self, role: str) -> dict[str, Any]:
        r = self.client.get(f"/api/{self.keys[role]}/state")
        assert r.status_code == 200
        return r.get_json()

    def setup(self) -> None:
        for side in self.g.table.game.sides:
            if self.computer is not None and side == self.computer.seat:
                continue
            placement = random_deployment(self.g.table.game, side, self.rng, self.g.table.state.options)
            r = self.client.post(f"/api/{self.keys[side]}/setup", json={"placement": placement},
                                 headers={"X-CSRF-Token": self.csrf[side]})
            assert r.status_code == 200, r.get_json()

    def clumsy(self) -> None:
        """Something nobody asked for: a stray lift or put-down, a knocked piece, the wrong piece lifted."""
        occupied = sorted(self.g.board.raw_occupied())
        empty = sorted(set(self.g.table.game.station_ids) - set(occupied))
        who = self.rng.choice(self.g.table.game.sides)
        kind = self.rng.random()
        if kind < 0.5 and occupied:  # a stray lift (put back later, when the page says so)
            self.toggle(self.rng.choice(occupied), who)
        elif kind < 0.7 and occupied and empty:  # a knocked piece lands on another station
            self.toggle(self.rng.choice(occupied), who)
            self.toggle(self.rng.choice(empty), who)
        elif kind < 0.85 and self.hand_from:  # a change of mind: the piece in hand goes back where it was
            frm = self.hand_from
            if frm not in self.g.board.raw_occupied():
                self.toggle(frm, who)
            self.hand, self.hand_from = [], None
        elif empty:  # a piece put down on an empty station from nowhere
            self.toggle(self.rng.choice(empty), who)

    def follow(self) -> None:
        """Do the next thing the page asks: settle the mismatch, make the next fix-up step, or move."""
        st = self.g.table.state
        turn = st.turn
        page = self.page(turn if st.phase == "play" else SPECTATOR)
        guidance = page["guidance"]
        occupied = self.g.board.raw_occupied()
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
        instruction = page.get("instruction")
        if self.hand:
            self.toggle(self.hand.pop(0), turn)
            if not self.hand:
                self.hand_from = None
            return
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
        pages = {role: state_for(self.g.table, role) for role in self.roles}
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


def play(game: str, tmp: Path, seed: int, plies: int = 6, computer: str | None = None) -> Table:
    """Lay out and play until ``plies`` plies were judged (or the game ended), with a budget of hand actions that a
    game which got stuck runs out of."""
    t = Table(game, tmp, random.Random(seed), computer=computer)
    t.setup()
    budget = 6 * len(t.g.table.game.station_ids) + 60 * plies
    for _ in range(budget):
        if t.g.table.state.phase == "over" or t.g.table.state.ply >= plies:
            break
        if t.g.table.state.phase == "play" and t.rng.random() < CLUMSY:
            t.clumsy()
        else:
            t.follow()
    t.check_rulings()
    return t


@pytest.mark.parametrize("game", GAMES)
@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**31))
def test_clumsy_hands_never_lose_a_pending_step(game: str, seed: int, tmp_path_factory: pytest.TempPathFactory) -> None:
    t = play(game, tmp_path_factory.mktemp(game), seed)
    assert t.g.table.state.ply >= 6 or t.g.table.state.phase == "over", \
        f"the game got stuck at ply {t.g.table.state.ply}: {t.session.pending} {t.session.mismatch}"


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**31))
def test_clumsy_hands_beside_a_computer_seat(seed: int, tmp_path_factory: pytest.TempPathFactory) -> None:
    t = play("luzhanqi", tmp_path_factory.mktemp("computer"), seed, computer="blue")
    assert t.g.table.state.ply >= 6 or t.g.table.state.phase == "over"
