"""Game clocks: the pure clock (increments, per-move limits, pause, flags, low-time warnings, parsing), and the
keeper that follows a real session: it switches on each ruling, freezes on pause, announces low time and ends the
game by the club's rule when a flag falls."""

from __future__ import annotations

from pathlib import Path

import pytest

from controller.club.clock import ClockError, GameClock, TimeControl, format_left, parse_time_control
from controller.club.keeper import ClockKeeper
from harness.web_game import Game


def test_parse_time_controls() -> None:
    assert parse_time_control("15+10") == TimeControl(base_s=900, increment_s=10)
    assert parse_time_control("90s+5").base_s == 90
    assert parse_time_control("30").increment_s == 0
    assert parse_time_control("move:60").per_move_s == 60
    assert parse_time_control("15+10").describe() == "15 min + 10 s"
    for bad in ("", "fast", "0", "move:0", "15+-3"):
        with pytest.raises(ClockError, match="not understood|positive"):
            parse_time_control(bad)


def test_bank_with_increment_runs_one_side_at_a_time() -> None:
    c = GameClock(parse_time_control("1+5"), ("red", "blue"))
    c.start("red", 100.0)
    assert c.left("red", 110.0) == 50.0 and c.left("blue", 110.0) == 60.0
    c.switch("red", "blue", 120.0)  # red used 20 s, gets 5 back
    assert c.left("red", 200.0) == 45.0
    assert c.left("blue", 130.0) == 50.0
    assert c.flag(179.0) is None and c.flag(180.0) == "blue"
    assert c.to_json(130.0)["running"] == "blue"


def test_per_move_limit_resets_each_move() -> None:
    c = GameClock(parse_time_control("move:30"), ("red", "blue"))
    c.start("red", 0.0)
    c.switch("red", "blue", 25.0)
    assert c.left("red", 25.0) == 30.0 and c.left("blue", 40.0) == 15.0
    c.switch("blue", "red", 50.0)
    assert c.flag(79.0) is None and c.flag(80.5) == "red"


def test_pause_freezes_and_stop_is_final() -> None:
    c = GameClock(parse_time_control("1"), ("red", "blue"))
    c.start("red", 0.0)
    c.pause(10.0)
    assert c.left("red", 500.0) == 50.0 and c.flag(500.0) is None
    c.resume(500.0)
    assert c.left("red", 510.0) == 40.0
    c.stop(520.0)
    c.switch("red", "blue", 530.0)
    assert c.left("red", 999.0) == 30.0 and c.left("blue", 999.0) == 60.0


def test_low_time_warnings_once_per_crossing() -> None:
    c = GameClock(TimeControl(base_s=120, increment_s=60, warn_s=(60, 10)), ("red", "blue"))
    c.start("red", 0.0)
    assert c.warnings(50.0) == []
    assert c.warnings(61.0) == [("red", 60)]
    assert c.warnings(62.0) == []
    assert c.warnings(111.0) == [("red", 10)]
    c.switch("red", "blue", 112.0)  # +60 lifts red above 60 s again: the warnings may be said again
    c.switch("blue", "red", 113.0)
    assert c.warnings(120.0) == [] and c.warnings(125.0) == [("red", 60)]
    assert format_left(9.46) == "0:09.5" and format_left(61) == "1:01"


class FakeTime:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_keeper_follows_the_session_and_a_flag_fall_ends_the_game(tmp_path: Path) -> None:
    g = Game("stratego", tmp_path)
    now = FakeTime()
    keeper = ClockKeeper(g.session, TimeControl(base_s=120, increment_s=2, warn_s=(60,)), now=now)
    g.table.clock = keeper
    g.start()
    first = g.table.state.turn
    assert keeper.to_json()["running"] == first
    now.t += 30
    assert g.random_move()
    second = g.table.state.turn
    j = keeper.to_json()
    assert j["running"] == second and j["left"][first] == 92.0
    g.session.pause()
    now.t += 1000
    keeper.tick()
    assert g.table.state.phase == "play" and keeper.to_json()["left"][second] == 120.0
    g.session.resume()
    g.lay_out()
    now.t += 61
    keeper.tick()
    notices = [e.public for e in g.session.log if e.public.get("event") == "notice" and e.public.get("clock")]
    assert notices and notices[-1]["clock"] == second
    assert notices[-1]["say"] == {"code": "notice.clock_low", "params": {"side": second, "seconds": 60}}
    now.t += 60
    keeper.tick()
    st = g.table.state
    assert st.phase == "over" and st.result is not None
    assert st.result.winners == (first,) and st.result.reason == {"code": "verdict.time_out", "params": {"side": second}}
    over = g.session.log[-1].public
    assert over["event"] == "game_over" and over["winners"] == [first]
    assert keeper.to_json()["stopped"]


def test_keeper_draw_rule_and_the_page_shows_the_clock(tmp_path: Path) -> None:
    from web_referee.payloads import state_for

    g = Game("stratego", tmp_path)
    now = FakeTime()
    g.table.clock = ClockKeeper(g.session, parse_time_control("move:10"), flag_rule="draw", now=now)
    g.start()
    assert state_for(g.table, "red")["clock"]["control"]["per_move_s"] == 10
    now.t += 11
    g.table.clock.tick()
    assert g.table.state.result is not None and g.table.state.result.winners == ()
    with pytest.raises(ClockError, match="flag rule"):
        ClockKeeper(g.session, parse_time_control("5"), flag_rule="sudden")


def test_clock_readings_are_journaled_and_a_resumed_game_goes_on_from_them(tmp_path: Path) -> None:
    from controller.club.keeper import journaled_clock
    from controller.referee.journal import EventError, check_event
    from controller.referee.replay import last_clock
    from controller.referee.table import open_table
    from controller.sensing.sim import SimBoard

    g = Game("stratego", tmp_path)
    now = FakeTime()
    keeper = ClockKeeper(g.session, parse_time_control("2+3"), now=now)
    g.table.clock = keeper
    g.start()
    first = g.table.state.turn
    shown = []
    for spent in (7.25, 11.5, 4.0, 20.125):
        now.t += spent
        assert g.random_move()
        shown.append(keeper.to_json()["left"])
    moves = [e.data for e in g.table.journal.events(g.table.game_id) if e.kind == "move"]
    assert [m["clock"] for m in moves] == [{s: pytest.approx(v, abs=0.05) for s, v in j.items()} for j in shown]
    # the first mover used 7.25 s and got 3 s back; the second 11.5 s and 3 s back
    second = next(s for s in g.table.game.sides if s != first)
    assert moves[0]["clock"] == {first: 120 - 7.25 + 3, second: 120.0}
    assert moves[1]["clock"] == {first: 115.75, second: 120 - 11.5 + 3}
    g.session.pause()
    now.t += 5000  # a paused clock does not run
    g.session.resume()
    now.t += 9.5  # the side to move thinks 9.5 s, and then the power goes
    last = last_clock(g.table.journal.events(g.table.game_id))
    assert last == moves[-1]["clock"]  # pause and resume journaled the same reading
    g.table.journal.close()
    g.table.journal_lock.release()  # the process is gone, and the kernel drops its lock on the journal

    # the Pi comes back: the game is rebuilt from the journal and its clocks go on from the last reading; the
    # 9.5 s between that reading and the power cut are charged to nobody
    board = SimBoard(g.table.game.station_ids)
    table = open_table("stratego", board=board, board_kind="sim", journal_path=tmp_path / "journal.sqlite")
    try:
        assert table.game_id == g.table.game_id and table.state.ply == 4
        later = FakeTime()
        later.t = 50.0  # a fresh monotonic clock after the reboot
        resumed = ClockKeeper(table.session, parse_time_control("2+3"), now=later, readings=journaled_clock(table))
        j = resumed.to_json()
        assert j["left"] == {s: round(v, 1) for s, v in last.items()} and j["running"] == table.state.turn
        later.t += 10  # and it runs again for the side to move
        assert resumed.to_json()["left"][table.state.turn] == round(last[table.state.turn] - 10, 1)
        # an undo journals the clock as it stands (the move is handed back, the time is not)
        table.session.undo(table.rebuild)
        undo = table.journal.events(table.game_id)[-1]
        assert undo.kind == "arbiter" and undo.data["action"] == "undo"
        assert journaled_clock(table) == undo.data["clock"] == {s: pytest.approx(v, abs=1e-6) for s, v in resumed.reading().items()}
    finally:
        table.stop()
    # a game without a clock journals none; a malformed reading is refused before anything is written
    assert journaled_clock(Game("stratego", tmp_path / "plain").table) is None
    for bad in ({}, {"red": -1}, {"red": "10"}, {"red": True}, [1]):
        with pytest.raises(EventError, match="clock"):
            check_event("move", {"side": "red", "from": "a1", "to": "a2", "clock": bad})
