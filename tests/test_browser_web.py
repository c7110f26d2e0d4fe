"""Browser tests of the web referee in a real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright):
a seat joins through its token link and does a guided setup on the simulated board, two seats play, a spectator
page follows live, the arbiter ends the game and the replay steps. Fails (never skips) under CI without a browser."""

from __future__ import annotations

import os
import random
import re
import time
from pathlib import Path

import pytest

from controller.referee.table import open_table
from controller.rules import load_game
from controller.rules.deploy import random_deployment
from controller.sensing.sim import SimBoard
from controller.setups_store import SetupStore

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]


def _missing(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"browser tests need a browser under CI: {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser():  # noqa: ANN201
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is not installed (pip install playwright)")
    if not Path(CHROMIUM).exists():
        _missing(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def served(tmp_path: Path):  # noqa: ANN201
    from web_referee.server import WebServer

    board = SimBoard(load_game("luzhanqi").station_ids, settle_ms=20)
    table = open_table("luzhanqi", board=board, board_kind="sim", journal_path=tmp_path / "j.sqlite", resume=False)
    table.start()
    server = WebServer(table, host="127.0.0.1", port=0, threads=16, setups=SetupStore(tmp_path / "setups"))
    server.start()
    yield table, f"http://127.0.0.1:{server.port}"
    server.stop()
    table.stop()


def _wait(cond, timeout: float = 5.0, what: str = "condition") -> None:  # noqa: ANN001
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


def _page(browser, url: str, errors: list[str]):  # noqa: ANN001, ANN202
    page = browser.new_page(viewport={"width": 420, "height": 900})
    page.on("console", lambda m: errors.append(f"{url}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"{url}: {e}"))
    page.goto(url)
    return page


def _click_station(page, station: str) -> None:  # noqa: ANN001
    """Tap a station where it is drawn (the board is redrawn on each update, so aim by position)."""
    box = None
    for _ in range(20):  # the element may be replaced by a redraw between finding it and measuring it
        box = page.locator(f'#board g.station[data-station="{station}"] rect.hit').bounding_box()
        if box:
            break
        time.sleep(0.02)
    assert box, f"station {station} is not drawn"
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)


def _move(page, table, frm: str, to: str) -> None:  # noqa: ANN001
    """The player on ``page`` lifts the piece from ``frm`` and puts it on the empty ``to``, by clicking."""
    ply = table.state.ply
    _click_station(page, frm)
    _wait(lambda: frm not in table.board.raw_occupied(), what=f"lift {frm}")
    _click_station(page, to)
    _wait(lambda: table.state.ply == ply + 1, what=f"ruling on {frm}-{to}")


def test_guided_setup_play_spectate_end_and_replay(browser, served) -> None:  # noqa: ANN001
    from playwright.sync_api import expect

    table, base = served
    errors: list[str] = []
    spectator = _page(browser, base + "/", errors)
    red = _page(browser, f"{base}/seat/{table.tokens['red']}", errors)
    red.wait_for_selector("#setup-prompt:has-text('Place your')")
    assert "Setup" in spectator.inner_text("#banner")

    # guided setup: the page names one piece at a time; the board (sim clicks) says where it went
    total = sum(p.count for p in table.game.pieces)
    for i in range(total):
        current = red.get_attribute(".pick.current", "data-piece")
        station = red.get_attribute("#board g.station.allowed", "data-station")
        assert current and station, red.inner_text("#setup-prompt")
        _click_station(red, station)
        expect(red.locator("#board g.piece.planned")).to_have_count(i + 1)
        planned = red.get_attribute(f'#board g.piece.planned[data-station="{station}"]', "data-piece")
        assert planned == current
    red.wait_for_selector("#setup-submit:not([disabled])")
    assert red.inner_text("#setup-problems").strip() == ""
    red.click("#lang")
    assert "司令" in (red.text_content("#board") or "")
    red.click("#setup-submit")
    red.wait_for_selector("#setup-prompt:has-text('registered')")
    assert "red" in table.state.deployments
    spectator.wait_for_selector("#banner:has-text('Red ✓')")

    # blue deploys through the engine's random deployment and lays its pieces on the board
    blue_setup = random_deployment(table.game, "blue", random.Random(3), table.state.options)
    assert table.session.register_setup("blue", blue_setup) == []
    for s in blue_setup:
        table.board.place(s)
    _wait(lambda: table.session.status["turn"] == "red" and not table.session.status["waiting_for_board"], what="play to start")
    blue = _page(browser, f"{base}/seat/{table.tokens['blue']}", errors)
    red.wait_for_selector("#banner:has-text('your move')")
    # each seat sees its own side at the bottom of the board
    for page, side in ((red, "red"), (blue, "blue")):
        expect(page.locator(f"#board g.piece.side-{side}[data-piece]")).to_have_count(25)  # wait for the page to draw them
        ys = page.evaluate("""side => [...document.querySelectorAll('#board g.piece')].map(g => [g.classList.contains('side-' + side),
            g.transform.baseVal.consolidate().matrix.f])""", side)
        own = [y for mine, y in ys if mine]
        other = [y for mine, y in ys if not mine]
        assert min(own) > max(other), f"{side}'s pieces are not at the bottom"
        assert page.locator(f"#board g.piece.side-{side}[data-piece]").count() == 25
        assert page.locator("#board g.piece[data-piece]").count() == 25  # the enemy's ranks stay hidden

    # two seats play a short game on the simulated board, by clicks
    rng = random.Random(5)
    for _ply in range(4):
        side = table.state.turn
        moves = [m for m in table.state.legal_moves() if m[1] not in table.session.expected_board()]
        frm, to = rng.choice(moves)
        _move(red if side == "red" else blue, table, frm, to)
        spectator.wait_for_selector(f"#verdict:has-text('{to}')")
    spectator.wait_for_selector(f"#banner:has-text('ply {table.state.ply}')")
    assert spectator.locator("#board g.piece[data-piece]").count() == 0  # a spectator never sees a rank
    assert spectator.locator("#log li").count() >= 4  # the events arrived live, without a reload

    # the arbiter ends the game: a draw
    arb = _page(browser, f"{base}/arbiter/{table.tokens['arbiter']}", errors)
    arb.wait_for_selector("#links img")
    arb.select_option("#arb-winner", "")
    arb.fill("#arb-reason", "agreed in the browser test")
    arb.click("#arb-end")
    spectator.wait_for_selector("#banner:has-text('Game over: draw')")

    # after the game: full reveal and the step-through replay
    spectator.click("#replay-open")
    spectator.wait_for_selector("#replay-step:has-text('Step 1 of 5')")
    assert spectator.locator("#board g.piece[data-piece]").count() == 50
    spectator.click("#replay-next")
    text = spectator.inner_text("#replay-step")
    assert re.search(r"Step 2 of 5: Red's \S+", text), text
    spectator.click("#replay-next")
    assert "Step 3 of 5: Blue's" in spectator.inner_text("#replay-step")
    record = spectator.get_attribute("#record", "href")
    assert record and record.endswith("/record.txt")
    assert not errors, errors


def test_a_seat_is_asked_privately_and_fires_its_aa_gun(browser, tmp_path: Path) -> None:  # noqa: ANN001
    """Land-sea-air chess with ``reactions: ask``: Red's fighter stops within reach of Blue's AA gun; only Blue's page
    shows "Your AA Gun at m7 may fire at the aircraft at f7: [Fire] [Hold]"; Blue taps Fire and the referee asks the
    table to take the fighter off. The river is drawn as water with white sea lines; shore lines have their own style."""
    from test_sanjunqi_physical import RED, _turned

    from web_referee.server import WebServer

    board = SimBoard(load_game("sanjunqi").station_ids, settle_ms=20)
    table = open_table("sanjunqi", board=board, board_kind="sim", journal_path=tmp_path / "j.sqlite", resume=False,
                       options={"reactions": "ask"})
    blue_setup = {_turned()[s]: p for s, p in RED.items()}
    assert table.session.register_setup("red", RED) == [] and table.session.register_setup("blue", blue_setup) == []
    for s in (*RED, *blue_setup):
        board.place(s)
    table.start()
    server = WebServer(table, host="127.0.0.1", port=0, threads=16, setups=SetupStore(tmp_path / "setups"))
    server.start()
    base = f"http://127.0.0.1:{server.port}"
    try:
        _wait(lambda: table.session.status["turn"] == "red" and not table.session.status["waiting_for_board"], what="play to start")
        errors: list[str] = []
        blue = _page(browser, f"{base}/seat/{table.tokens['blue']}", errors)
        red = _page(browser, f"{base}/seat/{table.tokens['red']}", errors)
        blue.wait_for_selector("#banner:has-text('Red to move')")
        # the board: a band of water under the river, white sea lines on it, shore lines styled apart from roads
        styles = blue.evaluate("""() => {
            const s = (q) => getComputedStyle(document.querySelector(q)).stroke;
            return {band: document.querySelectorAll('#board rect.water-band').length, sea: s('#board polyline.line-sea.on-water'),
                    shore: s('#board polyline.line-shore'), road: s('#board polyline.line-road')};
        }""")
        assert styles["band"] == 1 and styles["sea"] == "rgb(244, 249, 255)", styles
        assert styles["shore"] not in (styles["road"], "rgb(119, 119, 119)"), styles
        blue.wait_for_selector("#reactions label:has-text('react automatically')")  # the standing choice, no offer yet
        assert blue.locator("#offers li").count() == 0
        # Red's fighter flies a7 -> f7, within two steps of Blue's AA gun on m7
        board.lift("a7")
        _wait(lambda: "a7" not in table.board.raw_occupied(), what="lift a7")
        board.place("f7")
        _wait(lambda: table.state.ply == 1, what="the flight's ruling")
        offer = blue.locator("#offers li.offer")
        offer.wait_for()
        assert offer.inner_text().startswith("Your AA Gun at m7 may fire at the aircraft at f7")
        assert red.locator("#offers li").count() == 0
        assert not blue.is_checked("#react-auto")
        blue.click("#offers li.offer button.react-yes")
        _wait(lambda: "f7" not in table.state.board, what="the AA gun to fire")
        blue.wait_for_selector("#guidance:has-text(\"f7: take Red's piece off\")")
        red.wait_for_selector("#guidance:has-text(\"f7: take Red's piece off\")")
        assert blue.locator("#offers li").count() == 0
        assert table.state.board["m7"].public
        assert not errors, errors
    finally:
        server.stop()
        table.stop()
