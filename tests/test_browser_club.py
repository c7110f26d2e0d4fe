"""The club dashboard page in a real headless Chromium (Debian's /usr/bin/chromium, through Playwright), against a
real Mosquitto: two tables in this process publish to it, the page lists both live (boards, turn, clocks, last
ruling) without a reload, and when one game ends it shows the result and the standings rows. Fails (never skips)
under CI without a browser or a broker."""

from __future__ import annotations

import json
from pathlib import Path

from browser_support import ARGS, CHROMIUM
from browser_support import missing as _missing

from controller.club.broker import parse_broker
from controller.club.bus import TableBus
from controller.club.clock import parse_time_control
from controller.club.enrolled import Enrolment
from controller.club.keeper import ClockKeeper
from controller.club.results import ResultBook
from controller.referee.signing import public_key
from harness.broker import Mosquitto
from harness.web_game import Game
from web_referee.club import ClubListener, ClubServer, ClubState


def test_dashboard_page_lists_tables_live_and_shows_result_and_standings(tmp_path: Path) -> None:
    try:
        from playwright.sync_api import expect, sync_playwright
    except ImportError:
        _missing("playwright is not installed (pip install playwright)")
    if not Path(CHROMIUM).exists():
        _missing(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    broker = Mosquitto(tmp_path)
    broker.start()
    address = parse_broker(broker.url)
    enrolled = Enrolment()
    state = ClubState(ResultBook(tmp_path / "results.jsonl"), enrolled=enrolled)
    listener = ClubListener(state, address, client_id="browser-dashboard")
    server = ClubServer(state, host="127.0.0.1", port=0, threads=8, broker_url=address.url())
    tables: list[tuple[Game, TableBus]] = []
    try:
        listener.start()
        assert listener.connected.wait(5)
        server.start()
        for i, (red, blue) in enumerate((("Ann", "Bo"), ("Cy", "Di"))):
            d = tmp_path / f"table-{i + 1}"
            d.mkdir()
            g = Game("stratego", d, seed=i + 1)
            enrolled.enroll(f"table-{i + 1}", public_key(d / "journal.sqlite"))  # its results count once verified
            keeper = ClockKeeper(g.session, parse_time_control("15+10"))
            g.table.clock = keeper
            bus = TableBus(g.table, address, f"table-{i + 1}", players={"red": red, "blue": blue}, clock=keeper)
            bus.start()
            tables.append((g, bus))
            g.start()
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
            try:
                page = browser.new_page()
                errors: list[str] = []
                page.on("pageerror", lambda e: errors.append(str(e)))
                page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
                page.goto(f"http://127.0.0.1:{server.port}/")
                one, two = page.locator("#table-table-1"), page.locator("#table-table-2")
                expect(one.locator(".state")).to_have_text("online", timeout=10_000)
                expect(two.locator(".state")).to_have_text("online", timeout=10_000)
                expect(page.locator("#live.on")).to_have_count(1)
                # both boards drawn as a spectator sees them: 80 pieces, no rank
                expect(one.locator("svg g.piece")).to_have_count(80)
                assert one.locator("svg g.piece[data-piece]").count() == 0
                expect(one.locator(".clocks span")).to_have_count(2)
                expect(one.locator('.clocks span[data-side="blue"]')).to_have_text("Bo 15:00")  # waiting
                expect(one.locator('.clocks span[data-side="red"].running')).to_contain_text("Ann 14:")  # counting down

                # a move at table 2 shows up live, without a reload
                g2 = tables[1][0]
                assert g2.random_move()
                expect(two).to_have_attribute("data-seq", str(g2.session.log[-1].seq), timeout=10_000)
                expect(two.locator(".ruling")).to_contain_text("Last ruling: Cy:")
                expect(two.locator(".turn")).to_contain_text("Di (Blue) to move · ply 1")

                # table 1's game ends: the result row and the standings appear live
                tables[0][0].session.end(("blue",), "red resigned")
                expect(one).to_have_attribute("data-phase", "over", timeout=10_000)
                expect(one.locator(".turn")).to_contain_text("Game over: Bo won (red resigned)")
                row = page.locator("#results tbody tr")
                expect(row).to_have_count(1)
                expect(row.locator("td").nth(1)).to_have_text("table-1")
                expect(row.locator("td").nth(4)).to_have_text("Bo won (red resigned)")
                standings = page.locator('#standings table[data-game="stratego"] tbody tr')
                expect(standings).to_have_count(2)
                cells = [[c.inner_text() for c in standings.nth(i).locator("td").all()] for i in range(2)]
                assert cells == [["Bo", "1", "1", "0", "0", "1"], ["Ann", "1", "0", "0", "1", "0"]]
                # a result with no signed record: listed as unverified, with why, out of the standings
                expect(page.locator("#unverified-wrap")).to_be_hidden()
                forged = {"table": "table-2", "game_key": "7-forged", "game": "stratego", "sides": ["red", "blue"],
                          "players": {"red": "Mallory", "blue": "Di"}, "winners": ["red"], "reason": "flag taken",
                          "plies": 40, "ended_at": 1.0}
                state.on_message("facedown/results/table-2/7-forged", json.dumps(forged).encode())
                unverified = page.locator("#unverified tbody tr")
                expect(unverified).to_have_count(1, timeout=10_000)
                expect(unverified.locator("td").nth(4)).to_contain_text("no signed record came with it")
                expect(standings).to_have_count(2)
                assert not errors, errors
            finally:
                browser.close()
    finally:
        for g, bus in tables:
            bus.stop()
            g.table.stop()
        server.stop()
        listener.stop()
        broker.stop()

