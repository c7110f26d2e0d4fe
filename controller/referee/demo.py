"""Demo players: play both sides of a game physically on the simulated board (random legal moves and the fix-ups
each ruling asks for), so a refereed game can be watched with no hardware and no one at the table."""

from __future__ import annotations

import random
import threading
import time

from controller.rules.deploy import random_deployment
from controller.sensing.sim import SimBoard

from .table import Table


class DemoPlayers:
    """A background thread that lays out random deployments, then moves pieces on a SimBoard like two players."""

    def __init__(self, table: Table, *, seed: int | None = None, pace_s: float = 0.8, sides: tuple[str, ...] | None = None) -> None:
        if not isinstance(table.board, SimBoard):
            raise ValueError("demo players need the simulated board (--board sim)")
        self.table = table
        self.board: SimBoard = table.board
        self.rng = random.Random(seed)
        self.pace_s = pace_s
        self.sides = sides or table.game.sides
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="facedown-demo", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)

    def _pause(self, factor: float = 1.0) -> bool:
        return self._stop.wait(self.pace_s * factor)

    def _run(self) -> None:
        session = self.table.session
        while not self._stop.is_set():
            with session.lock:
                state = session.state
                phase = state.phase
                status = session.status
            if phase == "setup":
                for side in self.table.game.sides:
                    if side in self.sides and side not in state.deployments:
                        session.register_setup(side, random_deployment(self.table.game, side, self.rng, state.options))
                if self._pause(0.5):
                    return
                continue
            if status["paused"]:
                if self._pause():
                    return
                continue
            expected = set(session.expected_board())
            actual = self.board.raw_occupied()
            pending = session.recognizer.fixup_target()  # the board the referee waits for, and the swaps still to make
            swaps = sorted(pending[1]) if pending else []
            if expected != actual or swaps:
                # do what the referee asks: take off what should not be there, swap pieces, put back what should
                for s in sorted(actual - expected) + swaps:
                    self.board.lift(s)
                    if self._pause(0.3):
                        return
                for s in sorted(expected - actual) + swaps:
                    self.board.place(s)
                    if self._pause(0.3):
                        return
                if self._pause():
                    return
                continue
            if phase != "play" or status["waiting_for_board"] or session.recognizer.fixing:
                if phase == "over":
                    return
                if self._pause(0.5):
                    return
                continue
            with session.lock:
                if state.turn not in self.sides:
                    moves = []
                else:
                    moves = state.legal_moves()
            if not moves:
                if self._pause():
                    return
                continue
            frm, to = self.rng.choice(moves)
            ply = state.ply
            self.board.lift(frm)
            if self._pause(0.4):
                return
            if to in expected:
                self.board.lift(to)
                if self._pause(0.4):
                    return
            self.board.place(to)
            deadline = time.monotonic() + 5
            while session.state.ply == ply and time.monotonic() < deadline:
                if self._pause(0.1):
                    return
            if self._pause():
                return
