"""The board page in a real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright), played as a newcomer
would: Red on a 390 x 844 phone does the guided setup, lays out and submits; Blue on a 1280 x 800 desktop submits
first and is laid out by the same flow; both play 20 moves with attacks and fix-ups by tapping the simulated board,
following the checklist; the arbiter takes a move back; a spectator follows; the replay steps. Every tap shows at
once; verdicts name the survivor; the checklist empties as the board matches. Fails (never skips) under CI without
a browser."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest
from browser_support import (
    DESKTOP,
    HOME_VIEW,
    PHONE,
    axe_violations,
    check_tap_times,
    choose,
    chromium,
    cut_labels,
    english_words,
    open_page,
    own_side_at_bottom,
    paint_times,
    percentile,
    play_move,
    seen_all,
    served,
    set_up_on_page,
    tap_and_settle,
    tap_targets,
    wait,
)

from controller.rules import load_game
from controller.sensing.sim import SimBoard
from controller.setups_store import SetupStore


def _deployed_and_laid_out(table: Any) -> None:
    """Both sides deployed at random (seeds 1 and 2) and laid out on the simulated board: play begins."""
    from controller.rules.deploy import random_deployment

    for side, seed in (("red", 1), ("blue", 2)):
        placement = random_deployment(table.game, side, random.Random(seed), table.state.options)
        assert table.session.register_setup(side, placement) == []
        for s in placement:
            table.board.place(s)
    wait(lambda: table.state.phase == "play" and not table.session.status["waiting_for_board"], what="play")


@pytest.fixture(scope="module")
def browser():  # noqa: ANN201
    with chromium() as b:
        yield b


def test_a_newcomer_sets_up_plays_twenty_moves_and_replays(browser, tmp_path: Path) -> None:  # noqa: ANN001
    errors: list[str] = []
    taps: list[float] = []
    with served("luzhanqi", tmp_path) as (table, base):
        red = open_page(browser, f"{base}/seat/{table.tokens['red']}", errors, viewport=PHONE)
        blue = open_page(browser, f"{base}/seat/{table.tokens['blue']}", errors, viewport=DESKTOP)
        spectator = open_page(browser, base + "/", errors, viewport=PHONE)
        assert "Setup" in spectator.inner_text("#banner")
        assert "Place your" in red.inner_text("#banner")  # the prompt stands above the board, where the taps are

        # Blue submits first: a random deployment, then one button that registers it and lays it out
        set_up_on_page(blue, table, "blue", guided=False, submit_first=True, taps=taps)
        blue.wait_for_selector("#setup-progress-text:has-text('25 of 25')")
        assert not blue.locator("#setup").is_hidden()  # the panel stays: registered, laid out, waiting for Red

        # Red: the guided setup by taps, laid out part-way (the board then follows the plan); every tap shows its
        # planned piece at once
        set_up_on_page(red, table, "red", guided=True, submit_first=False, taps=taps)
        wait(lambda: not table.session.status["waiting_for_board"] and table.state.phase == "play", what="play to start")
        red.wait_for_selector("#banner:has-text('Your move')")
        blue.wait_for_selector("#banner:has-text('Red to move')")
        assert "Lay out" not in red.inner_text("#banner")
        for page, side in ((red, "red"), (blue, "blue")):
            assert own_side_at_bottom(page, side), f"{side}'s pieces are not at the bottom"
            assert page.locator("#board g.piece[data-piece]").count() == 25  # the enemy's ranks stay hidden
        assert min(tap_targets(red)) >= 44
        assert not cut_labels(red) and not cut_labels(blue)

        # a newcomer tries to move a landmine: refused; the checklist says how to put it back
        mine = next(s for s, p in table.state.board.items() if p.owner == "red" and p.type == "mine")
        empty = next(n for n in table.game.station_ids if n not in table.state.board)  # a camp: mines never move
        taps.append(tap_and_settle(red, table, mine))
        taps.append(tap_and_settle(red, table, empty))
        red.wait_for_selector("#verdict.outcome-illegal")
        assert red.inner_text("#verdict-text") == f"Not allowed: Red, put the piece back on {mine}"
        red.wait_for_selector(f'#fix-list li[data-station="{mine}"]')
        taps.append(tap_and_settle(red, table, empty))
        taps.append(tap_and_settle(red, table, mine))
        wait(lambda: not table.session.status["mismatch"] and table.session.status["turn"] == "red", what="the mine back")
        red.wait_for_selector("#guidance", state="hidden")
        assert table.state.ply == 0

        # twenty moves with attacks and fix-ups, by taps on both seats' pages
        rng = random.Random(7)
        attacks = survivors = 0
        undone = False
        for n in range(20):
            side = table.state.turn
            page = red if side == "red" else blue
            frm, to = choose(table, rng, prefer_attack=n % 2 == 1)
            attack = to in table.state.board
            play_move(page, table, frm, to, taps)
            ruling = table.state.history[-1]
            seen_all(spectator, table, "spectator")
            if attack:
                attacks += 1
                if ruling.outcome in ("attacker", "defender"):
                    survivor = ruling.side if ruling.outcome == "attacker" else ruling.defender_side
                    survivors += 1
                    spectator.wait_for_selector(f"#verdict[data-survivor=\"{survivor}\"]", timeout=3000)
                    assert survivor.capitalize() in spectator.inner_text("#verdict-text")
                    # the survivor is marked on the board with an icon as well as a colour
                    assert red.locator(f'#board .flash-mark.survivor[data-station="{to}"] text').text_content() == "★"
            if not undone and not attack and n >= 10:
                # the arbiter takes the move back; the players restore the board from the checklist
                undone = True
                arb = open_page(browser, f"{base}/arbiter/{table.tokens['arbiter']}", errors, viewport=DESKTOP)
                assert arb.locator("#arb-out-row").is_hidden()  # two seats: no "put this seat out"
                ply = table.state.ply
                arb.click("#arb-undo")  # an undo cannot be taken back: the first tap asks for a second one
                arb.wait_for_selector("#arb-undo.confirming")
                assert table.state.ply == ply and "confirm" in arb.inner_text("#arb-undo")
                arb.click("#arb-undo")
                wait(lambda: table.session.status["waiting_for_board"], what="the undo")
                red.wait_for_selector("#guidance:not([hidden]) #fix-list li[data-station]")
                listed = red.eval_on_selector_all("#fix-list li.todo[data-station]", "els => els.map(e => e.dataset.station)")
                assert sorted(listed) == sorted({frm, to}), listed
                for s in (to, frm):
                    taps.append(tap_and_settle(red, table, s))
                    if not table.session.status["waiting_for_board"]:
                        break
                    assert red.locator(f'#fix-list li.done[data-station="{s}"]').count() == 1  # ticked off
                wait(lambda: not table.session.status["waiting_for_board"], what="the board restored")
                red.wait_for_selector("#guidance", state="hidden")
                arb.context.close()
        if os.environ.get("FACEDOWN_SHOTS"):  # the README's picture of a seat's page on a phone
            red.evaluate(HOME_VIEW)
            red.screenshot(path=str(Path(os.environ["FACEDOWN_SHOTS"]) / "page-luzhanqi-phone.png"))
        assert table.state.ply >= 19 and attacks >= 5 and survivors >= 1, (table.state.ply, attacks, survivors)
        # every tap changed its station in the tap's own task (tap() checks it); the times, for the record
        check_tap_times(taps)
        # the log numbers each event by its sequence number (not capped, not clipped)
        seqs = spectator.eval_on_selector_all("#log li", "els => els.map(e => e.value)")
        assert seqs[0] == max(seqs) > 60 and seqs == sorted(seqs, reverse=True)
        # a spectator sees no rank but those the rules made public (a lost commander shows its flag)
        assert spectator.locator("#board g.piece[data-piece]").count() == sum(p.public for p in table.state.board.values())
        paint = paint_times(spectator)
        print(f"\nredraw after an event (spectator, {len(paint['sync'])} events): p50 {percentile(paint['sync'], .5):.1f} ms, "
              f"p99 {percentile(paint['sync'], .99):.1f} ms; next frame p50 {percentile(paint['frame'], .5):.1f} ms; "
              f"tap feedback p50 {percentile(taps, .5):.0f} ms, max {max(taps):.0f} ms over {len(taps)} taps")

        # the end, and the replay: everything on the page describes the replayed step
        table.session.end((), "agreed in the browser test")
        spectator.wait_for_selector("#banner:has-text('Game over: draw')")
        spectator.click("#replay-open")
        spectator.wait_for_selector("#replay-bar:not([hidden])")
        assert spectator.locator("#board g.piece[data-piece]").count() == 50
        spectator.click("#replay-next")
        assert spectator.inner_text("#replay-step").startswith("Step 2 of")
        assert spectator.inner_text("#banner").startswith("Replay: step 2 of")
        assert "Red" in spectator.inner_text("#verdict-text")
        bar = spectator.locator("#replay-bar").bounding_box()
        assert bar and bar["height"] < 60  # one row on a phone
        spectator.click("#replay-live")
        assert spectator.inner_text("#banner").startswith("Game over")
        assert not errors, errors


def test_the_chinese_page_has_no_english_in_what_a_player_reads(browser, tmp_path: Path) -> None:  # noqa: ANN001
    """zh-Hans and zh-Hant pages: banner, verdict, checklist and log carry no English word (station names aside),
    and axe-core finds no serious or critical problem in either language."""
    errors: list[str] = []
    with served("stratego", tmp_path) as (table, base):
        _deployed_and_laid_out(table)
        labels = {s.id for s in table.game.stations} | {s.label for s in table.game.stations if s.label}
        pages = {lang: open_page(browser, f"{base}/seat/{table.tokens['red']}", errors, lang=lang, axe=True)
                 for lang in ("zh-Hans", "zh-Hant")}
        blue = open_page(browser, f"{base}/seat/{table.tokens['blue']}", errors, lang="zh-Hant")
        rng = random.Random(4)
        taps: list[float] = []
        for n in range(6):
            page = pages["zh-Hans"] if table.state.turn == "red" else blue
            frm, to = choose(table, rng, prefer_attack=n >= 2)
            play_move(page, table, frm, to, taps)
        for lang, page in pages.items():
            seen_all(page, table, "red")
            assert page.locator("#verdict").is_visible()
            words = english_words(page, ("#banner", "#verdict", "#guidance", "#log", "#setup", "header"), labels)
            assert not words, f"{lang}: English on the Chinese page: {words}"
            assert page.evaluate("() => document.documentElement.lang") == lang
            assert not axe_violations(page), axe_violations(page)
            assert not cut_labels(page)
        # a checklist on the Chinese pages: the arbiter takes the last move back; words and axe-core while it shows
        table.session.undo(table.rebuild)
        wait(lambda: table.session.status["waiting_for_board"], what="the undo")
        for lang, page in pages.items():
            page.wait_for_selector("#guidance:not([hidden]) #fix-list li[data-station]")
            words = english_words(page, ("#banner", "#guidance", "#log"), labels)
            assert not words, f"{lang}: English in the checklist: {words}"
            assert not axe_violations(page), axe_violations(page)
        expected = set(table.session.expected_board())
        for s in sorted(expected ^ set(table.board.raw_occupied())):
            tap_and_settle(pages["zh-Hans"], table, s)
        wait(lambda: not table.session.status["waiting_for_board"], what="the board restored")
        pages["zh-Hant"].wait_for_selector("#guidance", state="hidden")
        # the choice is remembered: a reload keeps the language
        pages["zh-Hant"].reload()
        pages["zh-Hant"].wait_for_selector("body[data-ready]", state="attached")
        assert pages["zh-Hant"].input_value("#lang") == "zh-Hant"
        # the English page is clean too, and switching language redraws the words at once
        en = open_page(browser, f"{base}/seat/{table.tokens['red']}", errors, lang="en", axe=True)
        assert not axe_violations(en), axe_violations(en)
        en.select_option("#lang", "zh-Hant")
        en.wait_for_selector("#banner:has-text('輪到')")
        assert not errors, errors


def test_the_guided_setup_follows_the_seats_private_order(browser, tmp_path: Path) -> None:  # noqa: ANN001
    """When the referee gives the seat a private order (``guided_order`` in its state), the page asks for the pieces
    in that order, not in its own."""
    import json

    errors: list[str] = []
    with served("luzhanqi", tmp_path) as (table, base):
        order = [p.id for p in reversed(table.game.pieces) for _ in range(p.count)]
        ctx = browser.new_context(viewport=PHONE)
        page = ctx.new_page()

        def with_order(route) -> None:  # noqa: ANN001
            resp = route.fetch()
            state = resp.json()
            state["setup"]["guided_order"] = order
            route.fulfill(response=resp, body=json.dumps(state))

        page.route("**/api/*/state", with_order)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(f"{base}/seat/{table.tokens['red']}")
        page.wait_for_selector("body[data-ready]", state="attached")
        assert page.get_attribute(".pick.current", "data-piece") == order[0]
        picks = page.eval_on_selector_all(".pick", "els => els.map(e => e.dataset.piece)")
        assert picks == list(dict.fromkeys(order))
        for expected in order[:3]:
            assert page.get_attribute(".pick.current", "data-piece") == expected
            page.locator("#board g.station.allowed rect.hit").first.click()
        ctx.close()
    assert not errors, errors


def test_a_seat_is_asked_privately_and_fires_its_aa_gun(browser, tmp_path: Path) -> None:  # noqa: ANN001
    """Land-sea-air chess with ``reactions: ask``: Red's fighter stops within reach of Blue's AA gun; only Blue's page
    shows the offer with its two buttons; Blue taps yes and the referee asks the table to take the fighter off. The
    river is drawn as water with white sea lines; shore lines have their own style."""
    from test_sanjunqi_physical import RED, _turned

    from controller.referee.table import open_table
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
        wait(lambda: table.session.status["turn"] == "red" and not table.session.status["waiting_for_board"], what="play to start")
        errors: list[str] = []
        blue = open_page(browser, f"{base}/seat/{table.tokens['blue']}", errors)
        red = open_page(browser, f"{base}/seat/{table.tokens['red']}", errors)
        blue.wait_for_selector("#banner:has-text('Red to move')")
        styles = blue.evaluate("""() => {
            const s = (q) => getComputedStyle(document.querySelector(q)).stroke;
            return {band: document.querySelectorAll('#board rect.water-band').length, sea: s('#board polyline.line-sea.on-water'),
                    shore: s('#board polyline.line-shore'), road: s('#board polyline.line-road')};
        }""")
        assert styles["band"] == 1 and styles["sea"] == "rgb(244, 249, 255)", styles
        assert styles["shore"] not in (styles["road"], "rgb(119, 119, 119)"), styles
        blue.wait_for_selector("#reactions label:has-text('react automatically')")
        assert blue.locator("#offers li").count() == 0
        board.lift("a7")
        wait(lambda: "a7" not in table.board.raw_occupied(), what="lift a7")
        board.place("f7")
        wait(lambda: table.state.ply == 1, what="the flight's ruling")
        offer = blue.locator("#offers li.offer")
        offer.wait_for()
        assert offer.inner_text().startswith("Your AA Gun at m7 may fire at the aircraft at f7")
        assert red.locator("#offers li").count() == 0
        blue.click("#offers li.offer button.react-yes")
        wait(lambda: "f7" not in table.state.board, what="the AA gun to fire")
        for page in (blue, red):  # the fix-up, on both seats' pages, with its station marked on the board
            page.wait_for_selector('#fix-list li[data-station="f7"]')
            assert page.locator('#board g.station.fix[data-station="f7"]').count() == 1
            assert page.locator('#board g.badge[data-station="f7"]').text_content() == "1"
        assert blue.locator("#offers li").count() == 0
        assert not errors, errors
    finally:
        server.stop()
        table.stop()


def test_fd_say_renders_message_objects_by_the_contract(browser, tmp_path: Path) -> None:  # noqa: ANN001
    """i18n.js turns {code, params} into words by each param's name: sides by their catalog name, pieces by their
    name in the page's script, stations as they are, nested messages and lists; a missing key is an error shown as
    the key, never English."""
    errors: list[str] = []
    with served("stratego", tmp_path) as (table, base):
        page = open_page(browser, base + "/", errors, lang="zh-Hant")
        say = """([code, params]) => FD.say({code, params})"""
        assert page.evaluate(say, ["page.verdict.attacker", {"side": "red", "station": "e6"}]) == "紅方在e6獲勝"
        assert page.evaluate(say, ["page.log.over_win", {"winners": ["red", "blue"]}]) == "對局結束：紅方、藍方獲勝"
        nested = {"code": "page.log.outcome.both", "params": {}}
        assert page.evaluate(say, ["page.illegal.reason", {"reason": nested}]) == "原因：雙方同歸於盡"
        assert page.evaluate(say, ["page.setup.count", {"piece": "marshal", "left": 1}]) == "元帥 ×1"
        # Simplified Chinese takes a piece's zh_hans (元帅, where zh-Hant reads 元帥)
        page.select_option("#lang", "zh-Hans")
        page.wait_for_function("() => FD.lang === 'zh-Hans'")
        assert page.evaluate(say, ["page.setup.count", {"piece": "marshal", "left": 2}]) == "元帅 ×2"
        assert not errors, errors
        assert page.evaluate(say, ["page.no_such_key", {}]) == "⟨page.no_such_key⟩"
        page.wait_for_timeout(50)
        assert any("no message page.no_such_key" in e for e in errors)


# The page's live stream held back (as a busy referee's stream thread lags its HTTP answers): while held, every message
# waits, then each is handled in its own task, in order. The answers to taps are counted once the page handled each.
SLOW_STREAM = """
(() => {
  const Real = window.EventSource;
  window.__sseHeld = null;
  window.__sseHold = () => { window.__sseHeld = window.__sseHeld || []; };
  window.__sseRelease = () => {
    const held = window.__sseHeld || [];
    window.__sseHeld = null;
    for (const [fn, m] of held) setTimeout(() => fn(m), 0);
  };
  window.EventSource = class extends Real {
    set onmessage(fn) { super.onmessage = (m) => { if (window.__sseHeld) window.__sseHeld.push([fn, m]); else fn(m); }; }
    get onmessage() { return super.onmessage; }
  };
  window.__tapAnswers = 0;
  const realFetch = window.fetch.bind(window);
  window.fetch = async (url, opts) => {
    const resp = await realFetch(url, opts);
    if (String(url).endsWith("/sim/toggle")) {
      const json = resp.json.bind(resp);
      resp.json = async () => { const v = await json(); setTimeout(() => { window.__tapAnswers++; }, 0); return v; };
    }
    return resp;
  };
})();
"""


def test_a_step_taken_off_and_put_back_stays_ticked_while_the_stream_lags(browser, tmp_path: Path) -> None:  # noqa: ANN001
    """A defender that wins is put back where the attacker stood: the same station is lifted, then filled. When the
    page's stream lags behind the referee's answers to those two taps, the answer to the second tap came while the
    page still held the reading from before the first (the attacker standing there: the same as the tap) and took it
    for the tap's confirmation: the tap's tick was dropped and the step, as that old reading left it, came back to
    do until the stream caught up (seen as "the checklist went [1, 0, 1, 0] (e6-e5)" on a loaded machine). A tap is
    confirmed only by a reading taken after it."""
    errors: list[str] = []
    with served("stratego", tmp_path) as (table, base):
        _deployed_and_laid_out(table)
        state = table.state

        def defender_wins(m: tuple[str, str]) -> bool:
            trial = state.copy()
            r = trial.apply(m)
            return m[1] in state.board and r.result is None and not r.out and trial.history[-1].outcome == "defender"

        frm, to = next(tuple(m) for m in state.legal_moves() if defender_wins(tuple(m)))
        page = open_page(browser, f"{base}/seat/{table.tokens['red']}", errors, init=SLOW_STREAM)
        for s in (frm, to, to):  # lift the attacker, lift the defender, put the attacker down
            tap_and_settle(page, table, s)
        wait(lambda: table.state.ply == 1, what=f"the ruling on {frm}-{to}")
        page.wait_for_selector(f"#guidance:not([hidden]) #fix-list li.todo[data-station='{to}']")
        page.wait_for_function("() => window.__tapAnswers >= 3")
        page.evaluate("() => { window.__fixTodo = []; window.__sseHold(); }")
        tap_and_settle(page, table, to)  # the attacker taken off
        tap_and_settle(page, table, to)  # the defender put back
        wait(lambda: not table.session.status["waiting_for_board"] and table.session.pending is None, what="the fix-up")
        page.wait_for_function("() => window.__tapAnswers >= 5")  # both taps answered while the stream is held
        held = page.evaluate("() => window.__fixTodo")
        page.evaluate("() => window.__sseRelease()")
        page.wait_for_selector("#guidance", state="hidden")
        todo = page.evaluate("() => window.__fixTodo")
        assert todo[:len(held)] == held and todo[0] > 0, (held, todo)
        assert todo == sorted(todo, reverse=True) and todo[-1] == 0, f"the checklist went {todo} ({frm}-{to}; {held} before the stream caught up)"
        assert not errors, errors


def test_a_winner_sent_back_stays_ticked_while_the_stream_lags(browser, tmp_path: Path) -> None:  # noqa: ANN001
    """Dover Patrol sends a winning attacker back to its own square: the fix-up lifts it off the station it took and
    puts it down where it came from. When the page's stream lags, the reading of the lift reaches the page after the
    put-down was tapped and answered: that reading confirms the lift's tap but not the put-down's, and the step
    ("take it back to ...", whose tick waited on the lift's own tap) came back to do until the last reading (seen as
    "the checklist went [2, 0, 1, 0] (a6-a7)" on a loaded machine). The step stays ticked: its station was seen
    emptied during the fix-up and the piece stands where it goes."""
    from benchmarks.seeded_games import play_physically
    errors: list[str] = []
    with served("dover_patrol", tmp_path) as (table, base):
        _deployed_and_laid_out(table)

        def act(kind: str, station: str) -> None:
            (table.board.lift if kind == "lift" else table.board.place)(station)
            wait(lambda: table.session.snapshot is not None
                 and (station in table.session.snapshot.occupied) == (kind == "place"), what=f"the referee to read {station}")

        def attacker_wins(m: tuple[str, str]) -> bool:
            trial = table.state.copy()
            r = trial.apply(m)
            return m[1] in table.state.board and r.result is None and not r.out and trial.history[-1].outcome == "attacker"

        # quiet moves straight on the board, towards the enemy, until the side to move has an attack it wins
        rng = random.Random(5)
        for _ in range(300):
            win = next((tuple(m) for m in table.state.legal_moves() if attacker_wins(tuple(m))), None)
            if win is not None:
                break
            frm, to = choose(table, rng, prefer_attack=False, approach=True)
            ply = table.state.ply
            play_physically(table.state.copy(), frm, to, act)
            wait(lambda ply=ply: table.state.ply == ply + 1 and table.session.pending is None
                 and not table.session.status["waiting_for_board"], what=f"{frm}-{to} and its fix-up")
        assert win is not None, "no winning attack came within 300 plies"
        frm, to = win
        mover = table.state.turn
        page = open_page(browser, f"{base}/seat/{table.tokens[mover]}", errors, init=SLOW_STREAM)
        for s in (frm, to, to):  # lift the attacker, lift the defender, put the attacker down
            tap_and_settle(page, table, s)
        wait(lambda: table.session.pending is not None, what=f"the fix-up of {frm}-{to}")
        steps = [(s["station"], s["action"], s.get("to")) for s in table.view(mover).pending["steps"]]
        assert (to, "return", frm) in steps, steps
        page.wait_for_selector(f"#guidance:not([hidden]) #fix-list li.todo[data-station='{to}']")
        page.wait_for_function("() => window.__tapAnswers >= 3")
        page.evaluate("() => { window.__fixTodo = []; window.__sseHold(); }")
        tap_and_settle(page, table, to)  # the winner lifted off the station it took
        tap_and_settle(page, table, frm)  # and put down on its own square
        wait(lambda: table.session.pending is None and not table.session.status["waiting_for_board"], what="the fix-up")
        page.wait_for_function("() => window.__tapAnswers >= 5")  # both taps answered while the stream is held
        held = page.evaluate("() => window.__fixTodo")
        page.evaluate("() => window.__sseRelease()")
        page.wait_for_selector("#guidance", state="hidden")
        todo = page.evaluate("() => window.__fixTodo")
        assert held and held[-1] == 0, f"both taps tick both steps at once ({held})"
        assert todo == sorted(todo, reverse=True) and todo[-1] == 0, f"the checklist went {todo} ({frm}-{to}; {held} before the stream caught up)"
        assert not errors, errors
