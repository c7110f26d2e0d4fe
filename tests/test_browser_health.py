"""The referee's health in a real headless Chromium: the banner every page shows when the referee stops, and a
page whose live stream was refused (503) reconnects by itself once a slot is free."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from browser_support import chromium, open_page
from browser_support import wait as _wait

from controller.referee.journal import JournalError
from controller.referee.table import open_table
from controller.rules import load_game
from controller.sensing.sim import SimBoard
from controller.setups_store import SetupStore


@pytest.fixture(scope="module")
def browser():  # noqa: ANN201
    with chromium() as b:
        yield b


def _page(browser, url: str, errors: list[str]):  # noqa: ANN001, ANN202
    return open_page(browser, url, errors)


@pytest.fixture
def served(tmp_path: Path):  # noqa: ANN201
    from web_referee.server import WebServer

    board = SimBoard(load_game("stratego").station_ids, settle_ms=20)
    table = open_table("stratego", board=board, board_kind="sim", journal_path=tmp_path / "j.sqlite", resume=False)
    table.start()
    server = WebServer(table, host="127.0.0.1", port=0, setups=SetupStore(tmp_path / "setups"), spectator_streams=1)
    server.start()
    yield table, server
    server.stop()
    table.stop()


def test_every_page_shows_the_stopped_referee(browser, served) -> None:  # noqa: ANN001
    table, server = served
    base = f"http://127.0.0.1:{server.port}"
    errors: list[str] = []
    pages = [_page(browser, f"{base}/seat/{table.tokens['red']}", errors),
             _page(browser, f"{base}/arbiter/{table.tokens['arbiter']}", errors)]
    for page in pages:
        page.wait_for_selector("#board g.station")
        assert page.locator("#health").is_hidden()
    table.supervisor.fail(JournalError("disk full"), "journal")
    for page in pages:
        page.wait_for_selector("#health.fault", state="visible", timeout=5000)
        assert "The referee has stopped: it cannot save the game" in page.locator("#health").inner_text()
        page.wait_for_selector("#log li.ev-fault", timeout=5000)  # and the event log says it in words
        assert "The referee has stopped" in page.locator("#log li.ev-fault").first.inner_text()
    page = pages[0]
    page.locator("#lang").select_option("zh-Hans")
    _wait(lambda: "裁判已停止" in page.locator("#health").inner_text(), what="the banner in Chinese")
    for p in pages:
        p.close()
    assert not [e for e in errors if "503" not in e], errors


def test_a_refused_live_stream_reconnects_by_itself(browser, served) -> None:  # noqa: ANN001
    table, server = served
    # another client holds the only spectator stream
    hog = socket.create_connection(("127.0.0.1", server.port), source_address=("127.0.0.1", 0))
    hog.sendall(b"GET /api/public/events HTTP/1.1\r\nHost: x\r\n\r\n")
    assert hog.recv(4096).startswith(b"HTTP/1.1 200")
    errors: list[str] = []
    page = _page(browser, f"http://127.0.0.1:{server.port}/", errors)
    page.wait_for_selector("#board g.station")
    time.sleep(1.5)
    assert page.locator("#live.on").count() == 0  # refused: 503
    hog.close()  # the slot frees within a second, and the page tries again by itself
    page.wait_for_selector("#live.on", timeout=15000)
    table.session.pause()
    _wait(lambda: page.evaluate("document.body.getAttribute('data-seq')") is not None, what="a live event")
    page.close()
