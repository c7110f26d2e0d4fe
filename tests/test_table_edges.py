"""Four-seat and Dover Patrol play at the edges, at the table (simulated board, recognizer, session): an attack on an
ally is refused as illegal in either lift order, a seat that goes out has exactly the stations to clear named, every
elimination is announced (the last one before the end of the game included), and a dropped flag whose base squares
are both taken is set down on the nearest free square of its base."""

from __future__ import annotations

import json
from typing import Any

import pytest
from test_rules_helpers import position

from benchmarks.seeded_games import play_physically
from controller.referee.session import Session
from controller.rules import GameState
from controller.sensing.sim import SimBoard


class Table:
    """A session over a position, with the simulated board laid out as the engine's board."""

    def __init__(self, state: GameState) -> None:
        self.state = state
        self.board = SimBoard(state.game.station_ids, settle_ms=20, clock=lambda: 0.0)
        self.session = Session(state)
        self.events: list[dict[str, Any]] = []
        self.published: list[Any] = []
        self.session.subscribe(lambda ev: (self.events.append(ev.public), self.published.append(ev)))
        self.t = 0
        self.board.fill({s: None for s in state.board}, self.t)
        self.tick()
        assert self.kinds()[-1] in ("start", "turn"), self.events

    def tick(self) -> None:
        self.t += 30
        snap = self.board.tick(self.t)
        if snap is not None:
            self.session.on_snapshot(snap)

    def do(self, kind: str, station: str) -> None:
        self.t += 30
        self.board.place(station, self.t) if kind == "place" else self.board.lift(station, self.t)
        self.tick()

    def kinds(self) -> list[str]:
        return [e["event"] for e in self.events]

    def since(self, n: int) -> list[dict[str, Any]]:
        return self.events[n:]


# Red (with Green) against Blue (with Purple); the turn goes red -> blue -> green -> purple.
ALLY_POSITION = {"SA1": ("red", "flag"), "NA1": ("green", "flag"), "EA1": ("blue", "flag"), "WA1": ("purple", "flag"),
                 "SE2": ("red", "commander"), "SE3": ("green", "captain"), "EE2": ("blue", "captain"),
                 "WE2": ("purple", "captain"), "NE2": ("green", "major")}


@pytest.mark.parametrize("ally_first", [False, True], ids=["own-piece-lifted-first", "ally-piece-lifted-first"])
def test_putting_your_piece_on_an_allys_station_is_refused_as_illegal_in_either_lift_order(ally_first: bool) -> None:
    state = position("siguo", ALLY_POSITION, turn="red")
    t = Table(state)
    n = len(t.events)
    for kind, station in ([("lift", "SE3"), ("lift", "SE2")] if ally_first else [("lift", "SE2"), ("lift", "SE3")]):
        t.do(kind, station)
    t.do("place", "SE3")
    new = t.since(n)
    assert [e["event"] for e in new if e["event"] in ("illegal", "mismatch", "attack", "move")] == ["illegal"], new
    refusal = next(e for e in new if e["event"] == "illegal")
    assert (refusal["player"], refusal["from"], refusal["to"]) == ("red", "SE2", "SE3")
    # the mover's seat hears why; the others only that the move is not allowed
    told = next(ev for ev in t.published[n:] if ev.public["event"] == "illegal")
    assert told.for_role("red")["reason"]["code"] == "reason.ally_piece", told.for_role("red")
    assert told.for_role("green")["reason"]["code"] == refusal["reason"]["code"] == "reason.not_allowed"
    assert state.ply == 0 and state.turn == "red" and state.board["SE3"].owner == "green"
    # put both back: the referee is satisfied and Red moves on
    n = len(t.events)
    t.do("lift", "SE3")
    t.do("place", "SE2")
    t.do("place", "SE3")
    assert [e["event"] for e in t.since(n)][-2:] == ["fixup_done", "turn"]
    assert not [e for e in t.since(n) if e["event"] == "mismatch"]


def _clear_lists(events: list[dict[str, Any]], side: str) -> list[list[str]]:
    return [e["clear"] for e in events if e["event"] == "notice" and e.get("out") == side]


def test_a_seat_knocked_out_by_losing_its_flag_is_told_to_clear_its_pieces_but_not_the_winners_station() -> None:
    # Red's commander on WA0 takes Purple's flag on WA1: Purple is out, its two other pieces leave the board; WA1 now
    # holds Red's commander, which must not be named for clearing.
    state = position("siguo", {"SA1": ("red", "flag"), "NA1": ("green", "flag"), "EA1": ("blue", "flag"),
                               "WA1": ("purple", "flag"), "WA0": ("red", "commander"), "WE2": ("purple", "captain"),
                               "WE3": ("purple", "major"), "EE2": ("blue", "captain"), "NE2": ("green", "major")},
                     turn="red", options={"out_pieces": "removed"})
    t = Table(state)
    n = len(t.events)
    t.do("lift", "WA0")
    t.do("lift", "WA1")
    t.do("place", "WA1")
    new = t.since(n)
    attack = next(e for e in new if e["event"] == "attack")
    assert attack["outcome"] == "attacker" and state.board["WA1"].owner == "red"
    assert _clear_lists(new, "purple") == [["WE2", "WE3"]]
    assert "game_over" not in [e["event"] for e in new]


def test_the_last_elimination_is_announced_before_the_game_ends() -> None:
    # Purple is already out; Blue has only its flag and a mine (neither ever moves). After Red's move Blue cannot
    # move: Blue is out, which ends the game for Red and Green; the notice comes before game_over.
    state = position("siguo", {"SA1": ("red", "flag"), "NA1": ("green", "flag"), "EA1": ("blue", "flag"),
                               "EA3": ("blue", "mine"), "SE2": ("red", "commander"), "NE2": ("green", "major")},
                     turn="red", options={"out_pieces": "removed"})
    state.out["purple"] = "Flag lost"
    t = Table(state)
    n = len(t.events)
    frm, to = next(m for m in state.legal_moves() if m.to not in state.board)
    t.do("lift", frm)
    t.do("place", to)
    new = t.since(n)
    kinds = [e["event"] for e in new]
    assert "game_over" in kinds, new
    assert state.result is not None and set(state.result.winners) == {"red", "green"}
    notices = [i for i, e in enumerate(new) if e["event"] == "notice" and e.get("out") == "blue"]
    assert notices and notices[0] < kinds.index("game_over"), new
    # the game is over: whatever is named for clearing is Blue's own pieces, nothing else
    assert len(_clear_lists(new, "blue")) == 1 and set(_clear_lists(new, "blue")[0]) <= {"EA1", "EA3"}


def test_dover_a_dropped_flag_with_both_base_squares_taken_is_set_down_near_its_base_at_the_table() -> None:
    state = position("dover_patrol", {"g11": ("red", "destroyer"), "g12": ("blue", "flag"), "h12": ("blue", "mine"),
                                      "a1": ("red", "flag"), "f12": ("blue", "patrol_boat"), "e7": ("blue", "destroyer")})
    t = Table(state)
    moves = [("g11", "g12"), ("f12", "g12"), ("g11", "g10"), ("e7", "e6"), ("g10", "f10"), ("e6", "e7"), ("f10", "f9"),
             ("e7", "e6"), ("f9", "f8"), ("e6", "e7"), ("f8", "f7")]
    for frm, to in moves:
        n = len(t.events)
        play_physically(state.copy(), frm, to, t.do)  # the engine's copy says what to do at the table
        assert [e["event"] for e in t.since(n) if e["event"] in ("move", "attack", "illegal", "mismatch")][:1] in (["move"], ["attack"])
    n = len(t.events)
    play_physically(state.copy(), "e7", "f7", t.do)  # destroyer against destroyer: both sink, the flag goes home
    new = t.since(n)
    attack = next(e for e in new if e["event"] == "attack")
    assert attack["outcome"] == "both"
    assert state.board["g11"].type == "flag" and state.board["g11"].owner == "blue"
    assert "f7" not in state.board
    assert any("g11" in json.dumps(e, ensure_ascii=False) for e in new if e["event"] in ("attack", "fixup")), new
    assert new[-1]["event"] in ("turn", "fixup_done") and not [e for e in new if e["event"] == "mismatch"]
