"""The game clock on the board page, in a real headless Chromium: both sides' time shows, the side to move's runs
down live, and it moves to the other side after a ruling. Fails (never skips) under CI without a browser."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from browser_support import chromium, open_page, tap_and_settle, wait

from controller.club.clock import parse_time_control
from controller.club.keeper import ClockKeeper
from controller.referee.table import open_table
from controller.rules import load_game
from controller.rules.deploy import random_deployment
from controller.sensing.sim import SimBoard


@pytest.fixture(scope="module")
def browser():  # noqa: ANN201
    with chromium() as b:
        yield b


@pytest.fixture
def clocked(tmp_path: Path):  # noqa: ANN201
    from web_referee.server import WebServer

    board = SimBoard(load_game("luzhanqi").station_ids, settle_ms=20)
    table = open_table("luzhanqi", board=board, board_kind="sim", journal_path=tmp_path / "j.sqlite", resume=False)
    table.clock = ClockKeeper(table.session, parse_time_control("5+0"))
    table.start()
    server = WebServer(table, host="127.0.0.1", port=0, threads=16)
    server.start()
    yield table, f"http://127.0.0.1:{server.port}"
    server.stop()
    table.stop()


def _seconds(text: str, side: str) -> int:
    m = re.search(rf"{side} (\d+):(\d\d)", text)
    assert m, text
    return int(m.group(1)) * 60 + int(m.group(2))


def test_the_clock_shows_and_runs_for_the_side_to_move(browser, clocked) -> None:  # noqa: ANN001
    table, base = clocked
    rng = random.Random(8)
    for side in table.game.sides:
        placement = random_deployment(table.game, side, rng)
        assert table.session.register_setup(side, placement) == []
        for s in placement:
            table.board.place(s)
    wait(lambda: table.session.status["turn"] == "red" and not table.session.status["waiting_for_board"], what="play")
    errors: list[str] = []
    red = open_page(browser, f"{base}/seat/{table.tokens['red']}", errors)
    red.wait_for_selector("#clock:not([hidden]) .side.running")
    assert "Red" in red.inner_text("#clock .side.running")
    first = _seconds(red.inner_text("#clock"), "Red")
    red.wait_for_timeout(2200)
    assert _seconds(red.inner_text("#clock"), "Red") < first  # it runs down on the page
    assert _seconds(red.inner_text("#clock"), "Blue") == 300
    frm, to = next(m for m in table.state.legal_moves() if m.to not in table.state.board)
    ply = table.state.ply
    tap_and_settle(red, table, frm)
    tap_and_settle(red, table, to)
    wait(lambda: table.state.ply == ply + 1, what="the ruling")
    red.wait_for_selector("#clock .side.running.side-blue")
    assert errors == []
