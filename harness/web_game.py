"""For the web tests and benchmarks: a table on a simulated board with a hand-driven clock, played physically (lift and
place, settled snapshot by snapshot), and an event-stream reader for the Flask test client."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from controller.referee.table import Table, open_table
from controller.rules import load_game
from controller.rules.deploy import random_deployment
from controller.sensing.sim import SimBoard


class Clock:
    """A clock the test moves by hand, so the simulated board's debounce settles when told."""

    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class Game:
    """A table whose simulated board the test drives synchronously (no board thread)."""

    def __init__(self, game: str, tmp_path: Path, options: dict[str, Any] | None = None, seed: int = 1) -> None:
        self.clock = Clock()
        self.board = SimBoard(load_game(game).station_ids, clock=self.clock)
        self.table: Table = open_table(game, board=self.board, board_kind="sim", journal_path=tmp_path / "journal.sqlite",
                                       options=options, resume=False)
        self.rng = random.Random(seed)

    @property
    def session(self):  # noqa: ANN201
        return self.table.session

    def settle(self) -> None:
        self.clock.t += 0.1
        snap = self.board.tick()
        if snap is not None:
            self.session.on_snapshot(snap)

    def toggle(self, station: str) -> None:
        self.board.toggle(station)
        self.settle()

    def deploy(self, side: str) -> dict[str, str]:
        placement = random_deployment(self.table.game, side, self.rng, self.table.state.options)
        assert self.session.register_setup(side, placement) == []
        return placement

    def lay_out(self) -> None:
        """Do what the referee asks: make the board hold exactly the expected stations."""
        for _ in range(3):
            expected = set(self.session.expected_board())
            actual = set(self.board.raw_occupied())
            for s in sorted(actual - expected):
                self.board.lift(s)
                self.settle()
            for s in sorted(expected - actual):
                self.board.place(s)
                self.settle()
            if expected != set(self.board.raw_occupied()):
                continue
            if not self.session.recognizer.fixing:
                return
            # a piece replaced by another (the defender put back): its station must be seen empty once
            steps = next((e.public.get("steps", []) for e in reversed(self.session.log) if e.public.get("event") == "fixup"), [])
            for step in steps:
                if step["station"] in expected:
                    self.board.lift(step["station"])
                    self.settle()
                    self.board.place(step["station"])
                    self.settle()

    def start(self) -> None:
        for side in self.table.game.sides:
            if side not in self.table.state.deployments:
                self.deploy(side)
        self.lay_out()
        assert self.table.state.phase == "play"

    def move(self, frm: str, to: str) -> None:
        occupied = to in self.session.expected_board()
        self.board.lift(frm)
        self.settle()
        if occupied:
            self.board.lift(to)
            self.settle()
        self.board.place(to)
        self.settle()
        self.lay_out()

    def random_move(self) -> bool:
        st = self.table.state
        if st.phase != "play":
            return False
        moves = st.legal_moves()
        if not moves:
            return False
        frm, to = self.rng.choice(moves)
        ply = st.ply
        self.move(frm, to)
        assert self.table.state.ply == ply + 1 or self.table.state.phase == "over", "the referee did not judge the move"
        return True


def sse_events(client: Any, url: str, until_seq: int, headers: dict[str, str] | None = None,
               stop_at_keepalive: bool = True) -> list[dict[str, Any]]:
    """Read an event stream from the Flask test client until the event numbered ``until_seq`` (or a keepalive
    after the catch-up when nothing that high is for this role); the parsed events in order (live readings, which
    carry no number, are left out)."""
    resp = client.get(url, headers=headers or {}, buffered=False)
    assert resp.status_code == 200, resp.get_data(as_text=True)
    assert resp.mimetype == "text/event-stream"
    out: list[dict[str, Any]] = []
    try:
        for chunk in resp.response:
            text = chunk.decode() if isinstance(chunk, bytes) else chunk
            if text.startswith(": keepalive"):
                if stop_at_keepalive:
                    break
                continue
            for block in text.split("\n\n"):
                fields = dict(line.split(": ", 1) for line in block.splitlines() if ": " in line and not line.startswith(":"))
                if "data" in fields and "id" not in fields:
                    continue  # a live reading (the board as read now), not a numbered event of the game
                if "data" in fields:
                    ev = json.loads(fields["data"])
                    assert int(fields["id"]) == ev["seq"]
                    out.append(ev)
            if out and out[-1]["seq"] >= until_seq:
                break
    finally:
        resp.close()
    return out
