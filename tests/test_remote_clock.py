"""The host's game clock in a remote game, through a real Mosquitto: it starts once both boards are laid out, each
ruling presses it, it holds by the club's rule while a board's link is lost (the broker's last will says so) and
runs again when the board is back, a restarted host goes on from its journal with the same messages, and a flag
that falls ends the game on both boards; each board's pages show the host's reading and no byte names a hidden
kind."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from test_remote import Truth, audit, start_game

from controller.club.broker import parse_broker
from controller.club.clock import TimeControl
from controller.remote.host import SEAT_ASKS, RemoteHost
from controller.remote.protocol import RemoteError
from harness.broker import Mosquitto, wait_for


class FakeTime:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


@pytest.fixture()
def broker(tmp_path: Path) -> Any:
    b = Mosquitto(tmp_path)
    b.start()
    yield b
    b.stop()


def said(board: Any, code: str) -> list[dict[str, Any]]:
    return [e.public for e in board.session.log if (e.public.get("say") or {}).get("code") == code]


def lose_link(board: Any) -> None:
    """The board's link drops without a goodbye (Wi-Fi gone): its network thread stopped, its socket closed under it,
    so the broker publishes its last will."""
    client = board.seat.link.client
    client.loop_stop()
    sock = client.socket()
    assert sock is not None
    sock.close()


def test_the_hosts_clock_runs_holds_while_a_board_is_away_and_a_flag_ends_the_game(broker: Any, tmp_path: Path) -> None:
    now = FakeTime()
    control = TimeControl(base_s=100, increment_s=5, warn_s=())
    host, boards = start_game("stratego", broker, tmp_path, seed=6, clock=control, now=now)
    try:
        keeper = host.keeper
        first = host.session.state.turn
        # both boards laid out (start_game fixed them): the first side's time runs, and each board shows it
        wait_for(lambda: keeper.to_json()["running"] == first, what="the clock to start once both boards are laid out")
        for b in boards.values():
            wait_for(lambda b=b: (b.seat.table.view(b.name).extra["clock"] or {}).get("running") == first,
                     what=f"{b.name}'s page to show the running clock")
            assert said(b, "remote.clock_runs")
        truth = Truth(boards)
        rng = random.Random(2)
        now.t += 10
        truth.play(rng)  # the first side moves after 10 s: its increment, the other side's time runs
        second = host.session.state.turn
        assert keeper.to_json()["left"] == {first: 95.0, second: 100.0}
        for b in boards.values():
            wait_for(lambda b=b: b.seat.clock.to_json()["running"] == second, what=f"{b.name} to see the press")
            assert b.seat.clock.to_json()["left"][first] == 95.0

        # the side to move loses its link: the broker's last will tells the host, every clock stops
        away, other = boards[second], boards[first]
        lose_link(away)
        wait_for(lambda: second in host.away and keeper.to_json()["paused"], what="the host to hear the board is away")
        wait_for(lambda: said(other, "remote.away_held"), what="the other board to be told")
        wait_for(lambda: other.seat.clock.to_json()["paused"], what="the other board's clock to stop")
        now.t += 1000
        host.tick()
        assert host.session.state.phase == "play", "a side away lost on time"
        assert keeper.to_json()["left"][second] == 100.0
        away.seat.link.client.loop_start()  # the Wi-Fi is back: the board reconnects by itself
        wait_for(lambda: second not in host.away and not keeper.to_json()["paused"], what="the host to hear it is back")
        wait_for(lambda: said(other, "remote.back") and said(away, "remote.away_held"),
                 what="both boards to hear it (the one away once it is back)")
        now.t += 4
        assert keeper.to_json()["left"][second] == 96.0

        # the host restarts from its journal: the same numbered messages, the clock from its last reading
        outbox = {s: host.messages(s) for s in host.seats}
        host.stop()
        host = RemoteHost("stratego", parse_broker(broker.url), journal_path=tmp_path / "host.sqlite", game_id="t1",
                          clock=control, now=now)
        for s in host.seats:
            for i, (a, b) in enumerate(zip(host.messages(s), outbox[s], strict=True)):
                assert json.loads(a.split(b"\n", 1)[1]) == json.loads(b.split(b"\n", 1)[1]), (s, i)
        host.start()
        keeper = host.keeper
        assert keeper.to_json()["running"] == second and keeper.to_json()["left"][first] == 95.0
        truth.play(rng)
        assert keeper.to_json()["running"] == first

        # the flag falls: the game ends on the host and on both boards, the side out of time losing
        now.t += 96
        host.tick()
        st = host.session.state
        assert st.phase == "over" and st.result is not None and st.result.winners == (second,)
        assert st.result.reason == {"code": "verdict.time_out", "params": {"side": first}}
        for b in boards.values():
            wait_for(lambda b=b: b.session.state.phase == "over", what=f"{b.name}'s board to hear the flag")
            assert b.session.state.result.winners == (second,)
            assert any(e.public.get("event") == "game_over" for e in b.session.log)
            wait_for(lambda b=b: b.seat.clock.to_json()["stopped"], what=f"{b.name}'s clock to stop")
            wait_for(lambda b=b: b.seat.audit is not None, what=f"{b.name}'s post-game check")
            assert audit(b, host) > 0
        events = host.table.journal.events(host.table.game_id)
        assert [e.data["action"] for e in events if e.kind == "arbiter"] == ["away", "back", "end"]
    finally:
        for b in boards.values():
            b.stop()
        host.stop()


def test_the_club_rule_can_let_the_clocks_run_while_a_board_is_away(broker: Any, tmp_path: Path) -> None:
    now = FakeTime()
    host, boards = start_game("stratego", broker, tmp_path, seed=7, clock=TimeControl(base_s=30, warn_s=()), now=now,
                              away_rule="run")
    try:
        first = host.session.state.turn
        wait_for(lambda: host.keeper.to_json()["running"] == first, what="the clock to start")
        other = next(b for s, b in boards.items() if s != first)
        lose_link(boards[first])
        wait_for(lambda: said(other, "remote.away"), what="the other board to hear the side is away")
        assert not host.keeper.to_json()["paused"]
        now.t += 31
        host.tick()  # the club's rule: time runs on while away, so the absent side's flag falls
        assert host.session.state.result is not None and host.session.state.result.winners == (other.name,)
        wait_for(lambda: other.session.state.phase == "over", what="the other board to hear the flag")
    finally:
        for b in boards.values():
            b.stop()
        host.stop()
    with pytest.raises(RemoteError, match="away rule"):
        RemoteHost("stratego", parse_broker(broker.url), journal_path=tmp_path / "h2.sqlite", away_rule="sometimes")


def test_a_seat_pauses_resumes_and_resigns_from_its_page(broker: Any, tmp_path: Path) -> None:
    """The host is the arbiter: a seat's page asks it to pause (both boards and the clocks stop), either seat resumes,
    and a seat resigns; each journaled and replayed by a restarted host into the same messages."""
    from test_remote import Phone

    now = FakeTime()
    control = TimeControl(base_s=100, warn_s=())
    host, boards = start_game("stratego", broker, tmp_path, seed=8, clock=control, now=now)
    try:
        first = host.session.state.turn
        wait_for(lambda: host.keeper.to_json()["running"] == first, what="the clock to start")
        mover = boards[first]
        other = next(b for b in boards.values() if b is not mover)
        pages = {b.name: Phone(b) for b in boards.values()}
        assert pages[other.name].state()["remote"] == {"game": "t1", "asks": list(SEAT_ASKS), "undo": None}
        pages[other.name].post("/remote/pause", {})
        for b in boards.values():
            wait_for(lambda b=b: b.session.paused, what=f"{b.name}'s board to pause")
            assert pages[b.name].state()["status"]["paused"]
        assert host.session.paused and host.keeper.to_json()["paused"]
        now.t += 500
        host.tick()
        assert host.keeper.to_json()["left"][first] == 100.0
        # while paused, a move made on the board is not read (the board waits), so nothing is judged
        frm, to = next(m for m in host.session.state.legal_moves() if m[1] not in host.session.state.board)
        mover.move(frm, to)
        assert host.session.state.ply == 0
        mover.lift(to)
        mover.place(frm)
        r = pages[mover.name].client.post(f"/api/{pages[mover.name].key}/remote/pause", json={},
                                          headers={"X-CSRF-Token": pages[mover.name].csrf})
        assert r.status_code == 409 and "paused already" in r.get_json()["error"]
        pages[mover.name].post("/remote/resume", {})  # either seat may resume
        for b in boards.values():
            wait_for(lambda b=b: not b.session.paused, what=f"{b.name}'s board to resume")
            b.fix()  # the whole board is checked again after a pause
        assert not host.keeper.to_json()["paused"]
        truth = Truth(boards)
        truth.play(random.Random(4))
        assert host.session.state.ply == 1
        # a restarted host replays the pause and the resume into the same numbered messages
        outbox = {s: [json.loads(p.split(b"\n", 1)[1]) for p in host.messages(s)] for s in host.seats}
        host.stop()
        host = RemoteHost("stratego", parse_broker(broker.url), journal_path=tmp_path / "host.sqlite", game_id="t1",
                          clock=control, now=now)
        assert {s: [json.loads(p.split(b"\n", 1)[1]) for p in host.messages(s)] for s in host.seats} == outbox
        assert not host.session.paused
        host.start()
        loser = host.session.state.turn
        pages[loser].post("/remote/resign", {})
        for b in boards.values():
            wait_for(lambda b=b: b.session.state.phase == "over", what=f"{b.name}'s board to hear the resignation")
            res = b.session.state.result
            assert res is not None and res.winners == (next(s for s in boards if s != loser),)
            assert res.reason == {"code": "verdict.resigned", "params": {"side": loser}}
            assert audit(b, host, pages[b.name].pages) > 0
        assert host.keeper.to_json()["stopped"]
        assert [e.data["action"] for e in host.table.journal.events(host.table.game_id) if e.kind == "arbiter"] \
            == ["pause", "resume", "end"]
    finally:
        for b in boards.values():
            b.stop()
        host.stop()


def test_a_table_refereed_here_has_no_remote_asks(tmp_path: Path) -> None:
    """The asks route belongs to remote seats: a table whose referee is here says so (its arbiter pauses)."""
    from test_web_api import csrf_of, post

    from harness.web_game import Game
    from web_referee.app import create_app

    g = Game("stratego", tmp_path)
    client = create_app(g.table).test_client()
    key = g.table.tokens["red"]
    r = post(client, key, "/remote/pause", {}, csrf_of(client, f"/seat/{key}"))
    assert r.status_code == 404 and "its arbiter pauses the game" in r.get_json()["error"]
    assert client.get(f"/api/{key}/state").get_json()["remote"] is None
    assert not g.session.paused
