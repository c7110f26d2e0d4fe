"""A seat of a remote game played from a phone alone, through a real Mosquitto: `facedown host --phone SEAT` keeps
that seat's simulated board and serves its page, printing the link and QR codes (the join code's, the link's); and
a whole stretch of Stratego with Blue's page open in a real headless Chromium at a phone's size (deployed with the
page's own buttons, the tokens laid out and every move, attack and fix-up made by taps on the drawn board) against
Red's simulated board, with an audit of every byte the browser received (no kind of Red's it may not know)."""

from __future__ import annotations

import json
import random
import re
import urllib.request
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from browser_support import choose, chromium, open_page, tap_and_settle, wait
from cli_process import Cli
from test_remote import Board, audit

from controller.club.broker import parse_broker
from controller.commands.join import phone_seat
from controller.remote.host import RemoteHost
from controller.rules.deploy import random_deployment
from harness.broker import Mosquitto, free_port

# every text the page receives, its state and answers (fetch) and its live events (the event stream)
CAPTURE = """
window.__got = [];
(() => {
  const F = window.fetch;
  window.fetch = async (...a) => { const r = await F(...a); r.clone().text().then((t) => window.__got.push(t)); return r; };
  const E = window.EventSource;
  window.EventSource = class extends E {
    constructor(u, o) { super(u, o); this.addEventListener("message", (m) => window.__got.push(m.data)); }
  };
})();
"""


@pytest.fixture()
def broker(tmp_path: Path) -> Any:
    b = Mosquitto(tmp_path)
    b.start()
    yield b
    b.stop()


@pytest.fixture(scope="module")
def browser():  # noqa: ANN201
    with chromium() as b:
        yield b


def test_facedown_host_serves_a_phone_seat_and_prints_its_link_and_qr_codes(broker: Any, tmp_path: Path) -> None:
    from web_referee.qr import qr_text

    port = free_port()
    base = ["host", "stratego", "--broker", broker.url, "--game-id", "ph1", "--journal", str(tmp_path / "h.sqlite")]
    env = {"XDG_DATA_HOME": str(tmp_path / "data")}
    bad = Cli([*base, "--phone", "green"], env=env)
    assert bad.proc.wait(30) != 0 and "--phone green: stratego's seats are red, blue" in bad.output, bad.output
    proc = Cli([*base, "--phone", "blue", "--qr", "--web-host", "127.0.0.1", "--web-port", str(port), "--clock", "15+10",
                "--ready-file", str(tmp_path / "ready")], env=env)
    try:
        proc.wait_until(lambda: (tmp_path / "ready").exists(), "the host and blue's page", 30)
        out = proc.output
        code = re.search(r"red: facedown play stratego --remote \S+ --seat red --join (fdj1\.ph1\.red\.[0-9a-f]{32})", out)
        assert code, out
        assert qr_text(code.group(1)) in out, "red's join code has its QR code"
        assert "--seat blue" not in out, "blue plays from its phone: no board command for it"
        link = re.search(r"blue plays from a phone: open (http://127\.0\.0\.1:\d+/seat/[0-9a-f]+)", out)
        assert link, out
        assert qr_text(link.group(1)) in out, "blue's link has its QR code"
        html = urllib.request.urlopen(link.group(1), timeout=10).read().decode()
        assert 'name="facedown-csrf"' in html, "the link opens blue's seat page"
        api = link.group(1).replace("/seat/", "/api/") + "/state"
        state = json.loads(urllib.request.urlopen(api, timeout=10).read())
        assert state["status"]["phase"] == "setup"
        # the host's clock (--clock 15+10), shown on the page before play: not running yet
        proc.wait_until(lambda: json.loads(urllib.request.urlopen(api, timeout=10).read())["clock"] is not None,
                        "the host's clock on blue's page", 20)
        clock = json.loads(urllib.request.urlopen(api, timeout=10).read())["clock"]
        assert clock["control"]["base_s"] == 900 and clock["running"] is None and clock["left"]["red"] == 900
    finally:
        assert proc.stop() == 0


def settled(session: Any, table: Any) -> str | None:
    """"done" once Blue's referee waits for nothing, "read" once it has read the board as it stands and still waits,
    else None. Under the session's lock: the recognizer is done a moment before the session has handled it (its
    "start" said, the pending fix-up cleared), and a read taken between the two saw a half-finished board."""
    with session.lock:
        if not session.recognizer.fixing and session.pending is None:
            return "done"
        snap = session.snapshot
        return "read" if snap is not None and set(snap.occupied) == set(table.board.raw_occupied()) else None


def browser_fix(page: Any, table: Any) -> None:
    """Tap what Blue's referee asks (the page lists it) until it waits for nothing: laying out, fix-ups."""
    session = table.session
    for _ in range(6):
        with session.lock:
            awaited = session.recognizer.fixup_target()
            want = set(awaited[0]) if awaited is not None else set(session.expected_board())
            left = awaited[1] if awaited is not None else frozenset()
        have = set(table.board.raw_occupied())
        todo = sorted(have - want) + sorted(want - have)
        if todo or left:
            page.wait_for_selector("#guidance:not([hidden]) #fix-list li")
        for s in todo:
            tap_and_settle(page, table, s)
        for s in sorted(left):  # one piece replaced by another: seen empty once
            if s in table.board.raw_occupied():
                tap_and_settle(page, table, s)
                tap_and_settle(page, table, s)
        if wait(lambda: settled(session, table), what="the read") == "done":
            return
    raise AssertionError(f"blue's board never matched: {session.view('blue').guidance}")


def test_a_phone_seat_in_chromium_plays_a_remote_game(broker: Any, browser: Any, tmp_path: Path) -> None:
    from controller.club.clock import TimeControl

    host = RemoteHost("stratego", parse_broker(broker.url), journal_path=tmp_path / "host.sqlite", game_id="ph2",
                      clock=TimeControl(base_s=1800, increment_s=5))
    host.start()
    codes = host.join_codes()
    red = Board("stratego", broker.url, str(codes["red"]), tmp_path)
    opened = phone_seat("stratego", parse_broker(broker.url), codes["blue"], web_host="127.0.0.1", port=0,
                        state_dir=tmp_path, keep_wire=True)
    assert opened is not None
    blue, server, link = opened
    table = blue.table
    errors: list[str] = []
    try:
        page = open_page(browser, link, errors, init=CAPTURE)
        wait(lambda: red.seat.synced and blue.synced, what="both seats synced")
        assert red.session.register_setup("red", random_deployment(red.session.game, "red", random.Random(4),
                                                                     red.session.state.options)) == []
        # Blue deploys with the page's own buttons: Random, then Submit and lay out (the page lays out its pieces)
        page.click("#setup-random")
        page.wait_for_function("() => document.querySelectorAll('#board g.piece.planned').length === 40")
        page.wait_for_selector("#setup-submit:not([disabled])")
        page.click("#setup-submit")
        wait(lambda: host.session.state.phase == "play", what="both deployments at the host")
        # each board is told of the start by its own message: Red's may come after Blue's, and a fix before it
        # would lay out nothing (Red's board would then wait for Blue's tokens, and the clock for Red, for ever)
        wait(lambda: table.state.phase == "play" and red.session.state.phase == "play", what="both boards to start")
        red.fix()
        assert red.seat.ready, "red's board laid out"
        browser_fix(page, table)  # Red's 40 tokens, tapped where the page asks
        assert table.session.pending is None
        # both boards laid out: the host's clock runs, and the page shows it
        page.wait_for_selector("#clock:not([hidden])")
        wait(lambda: host.keeper.to_json()["running"] == host.session.state.turn, what="the host's clock to start")
        assert "30:00" in page.inner_text("#clock") or "29:" in page.inner_text("#clock"), page.inner_text("#clock")
        rng = random.Random(3)
        attacks = 0
        for _ in range(40):
            st = host.session.state
            if st.phase != "play" or (st.ply >= 8 and attacks >= 2):
                break
            ply = st.ply
            # an attack when there is one, else a move towards the enemy, never one that ends the game (Blue's
            # army is the page's own Random, not seeded: wandering moves could leave the armies apart for 40 plies)
            frm, to = choose(SimpleNamespace(state=st), rng, prefer_attack=True, approach=True)
            attack = to in st.board
            attacks += attack
            if st.turn == "red":
                red.move(frm, to)
                wait(lambda ply=ply: red.session.state.ply == ply + 1, what="red's ruling")
                red.fix()
                # the page tells Blue Red's move, on the board and in words, and Blue makes it by taps
                wait(lambda: table.session.instruction("red") is not None, what="blue's page to be told red's move")
                page.wait_for_selector(f'#guidance:not([hidden]) #fix-list li.todo[data-station="{frm}"]')
                listed = page.eval_on_selector_all("#fix-list li[data-station]", "els => els.map(e => e.dataset.station)")
                assert listed[0] == frm and listed[-1] == to, (listed, frm, to)
                tap_and_settle(page, table, frm)
                if attack:
                    tap_and_settle(page, table, to)
                tap_and_settle(page, table, to)
                wait(lambda ply=ply: table.state.ply == ply + 1, what="blue's board to take red's move")
                browser_fix(page, table)
            else:
                tap_and_settle(page, table, frm)
                if attack:
                    tap_and_settle(page, table, to)
                tap_and_settle(page, table, to)
                wait(lambda ply=ply: table.state.ply == ply + 1, what="blue's ruling")
                browser_fix(page, table)
                wait(lambda: red.session.instruction("blue") is not None, what="red's board to be told")
                red.move(frm, to)
                red.fix()
            assert red.session.state.ply == table.state.ply == host.session.state.ply == ply + 1
        assert attacks >= 2, "too few attacks to test the fix-ups"
        truth = {s: p.owner for s, p in host.session.state.board.items()}
        assert {s: p.owner for s, p in table.state.board.items()} == truth
        page.wait_for_function(f"() => document.body.getAttribute('data-seq') === '{table.session.log[-1].seq}'")
        got = page.evaluate("() => window.__got")
        pages = []
        for text in got:
            try:
                data = json.loads(text)
            except ValueError:
                continue
            if isinstance(data, dict):
                pages.append(data)
        assert len(pages) > 20, f"the browser received too little to audit: {len(pages)}"

        class Seen:  # what audit() reads of a board: its seat, session and every message its link received
            name = "blue"
            seat = blue
            session = blue.session
            messages = Board.messages

        assert audit(Seen(), host, pages) > 0  # type: ignore[arg-type]
        assert audit(red, host) > 0

        # the page's own buttons: Pause stops both boards and the clocks, Resume goes on, Resign (tapped twice) ends it
        page.wait_for_selector("#remote:not([hidden])")
        page.click("#remote-pause")
        wait(lambda: host.session.paused and red.session.paused and table.session.paused, what="the pause everywhere")
        assert host.keeper.to_json()["paused"]
        page.wait_for_selector("#remote-resume:not([disabled])")
        page.click("#remote-resume")
        wait(lambda: not host.session.paused and not red.session.paused and not table.session.paused, what="the resume")
        red.fix()
        browser_fix(page, table)
        # Red asks to take back the last move: the page shows the ask with Agree and Decline; declined, then agreed
        ply = host.session.state.ply
        red.seat.ask("undo")
        page.wait_for_selector("#remote-undo-row:not([hidden]) #remote-undo-decline:not([disabled])")
        assert "red" in page.inner_text("#remote-undo-text").lower()
        assert page.is_disabled("#remote-undo")  # one ask at a time
        page.click("#remote-undo-decline")
        page.wait_for_selector("#remote-undo-row", state="hidden")
        assert host.session.state.ply == ply
        red.seat.ask("undo")
        page.wait_for_selector("#remote-undo-row:not([hidden]) #remote-undo-agree:not([disabled])")
        page.click("#remote-undo-agree")
        wait(lambda: host.session.state.ply == red.session.state.ply == table.state.ply == ply - 1, what="the undo on both")
        red.fix()
        browser_fix(page, table)
        assert {s: p.owner for s, p in table.state.board.items()} == {s: p.owner for s, p in host.session.state.board.items()}
        page.wait_for_selector("#remote-pause:not([disabled])")
        page.click("#remote-resign")
        assert host.session.state.phase == "play", "one tap resigned"
        page.click("#remote-resign")
        wait(lambda: red.session.state.phase == "over" and table.state.phase == "over", what="the resignation on both")
        assert host.session.state.result.winners == ("red",)
        assert not errors, errors
    finally:
        server.stop()
        blue.stop()
        table.stop()
        red.stop()
        host.stop()
