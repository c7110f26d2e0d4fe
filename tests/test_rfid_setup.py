"""RFID boards: each side's deployment is read off the board from enrolled tags, and every later move is checked
for the identity of the piece put down."""

from __future__ import annotations

import random

from controller.referee.session import Session
from controller.rules import new_game
from controller.rules.deploy import random_deployment
from controller.sensing.sim import SimBoard


def test_setups_are_read_from_the_tags_and_identities_checked() -> None:
    state = new_game("luzhanqi")
    rng = random.Random(5)
    placements = {side: random_deployment(state.game, side, rng) for side in state.game.sides}
    tag_of = {(side, st): f"{side[0].upper()}{i:02d}" for side, pl in placements.items() for i, st in enumerate(sorted(pl))}
    tag_pieces = {tag_of[(side, st)]: (side, piece) for side, pl in placements.items() for st, piece in pl.items()}
    session = Session(state, use_tags=True, tag_pieces=tag_pieces)
    events: list[dict] = []
    session.subscribe(lambda ev: events.append(ev.public))
    board = SimBoard(state.game.station_ids, settle_ms=20, clock=lambda: 0.0)
    # red lays out its army, then blue: nobody types a deployment in
    board.fill({st: tag_of[("red", st)] for st in placements["red"]}, 0)
    session.on_snapshot(board.tick(25))
    assert "red" in state.deployments and "blue" not in state.deployments
    t = 100
    for st in placements["blue"]:
        board.place(st, t, tag=tag_of[("blue", st)])
    session.on_snapshot(board.tick(t + 25))
    assert state.phase == "play"
    assert [e["event"] for e in events if e["event"] in ("setup", "start")] == ["setup", "setup", "start"]
    assert state.deployments["blue"] == placements["blue"]
    # a move with the piece's own tag is judged; the same move with another piece's tag is a mismatch
    frm, to = next(m for m in state.legal_moves() if m.to not in state.board)
    other = next(s for s, p in state.board.items() if p.owner == "red" and s != frm)
    t = 200
    board.lift(frm, t)
    session.on_snapshot(board.tick(t + 25))
    board.place(to, t + 50, tag=tag_of[("red", other)])
    session.on_snapshot(board.tick(t + 75))
    assert events[-1]["event"] == "mismatch" and state.ply == 0
    board.lift(to, t + 100)
    session.on_snapshot(board.tick(t + 125))
    board.place(to, t + 150, tag=tag_of[("red", frm)])
    session.on_snapshot(board.tick(t + 175))
    assert state.ply == 1 and any(e["event"] == "move" and e["to"] == to for e in events)


def test_an_rfid_setup_with_a_defect_is_told_to_that_seat() -> None:
    state = new_game("luzhanqi")
    rng = random.Random(6)
    placement = random_deployment(state.game, "red", rng)
    flag = next(s for s, p in placement.items() if p == "flag")
    free = next(s for s, p in placement.items() if state.game.station_by_id[s].kind == "normal" and p == "lieutenant")
    placement[free], placement[flag] = "flag", "lieutenant"  # the flag outside a headquarters
    tags = {st: f"T{i}" for i, st in enumerate(sorted(placement))}
    session = Session(state, use_tags=True, tag_pieces={tags[st]: ("red", p) for st, p in placement.items()})
    events = []
    session.subscribe(lambda ev: events.append(ev))
    board = SimBoard(state.game.station_ids, settle_ms=20, clock=lambda: 0.0)
    board.fill(tags, 0)
    session.on_snapshot(board.tick(25))
    rejected = [e for e in events if e.public["event"] == "setup" and e.public["status"] == "rejected"]
    assert len(rejected) == 1 and rejected[0].audience == ("red",)
    assert any(p["station"] == free for p in rejected[0].public["problems"])
    assert "red" not in state.deployments
