"""A family's first game against the computer, in a real headless Chromium, for every game (issue 37): Red is a
person whose seat page is open on a 390 x 844 phone and on a 1280 x 800 desktop, every other side a computer seat.

After each of the computer's instructions, on both pages (and the arbiter's): the instructed move's from and to
stations are marked (in the station lights' role colours, with an arrow) in the very task that handles the event
bringing the instruction (the time from the event reaching the page to the marks, performance.now in the page, is
printed for the README's table, not asserted: it depends on the machine's load; the 100 ms target is met in the
event's own task); the pinned box at the top and the marked stations are inside the first screen (from element
boxes, the board's own scrolled window included), with the cue at each edge the board goes on beyond, and on a phone the board below the pinned box and the
log below the board; the banner says the move in the page's words, "attack" when it is one; the steps of the
computer's move tick as the board does them. After each ruling the fix-up's stations and the pinned checklist are on
the first screen too, the checklist ticks step by step and each station's badge numbers its first step still to do.
Half-way through laying out the checklist counts the pieces in place, asks for the computer's pieces as its tokens,
and its next station is on the first screen; laying out is one progress line in the log ending at "laid out N of N",
never called a mismatch. A spectator who opens the page mid-game sees the game's history, then the computer's moves
and the fix-ups as the seats do; pages in Simplified and Traditional Chinese show no English word (the game's name
included) and no character of the other script (the pieces' faces included). In Stratego a wrong token lifted on
the computer's turn is flagged at once on the board, in the banner and by a published event the voice says."""

from __future__ import annotations

import os
import random
import time
from pathlib import Path
from typing import Any

import pytest
from browser_support import DESKTOP, PHONE, choose, chromium, english_words, open_page, served, wait
from zh_script import SIMPLIFIED_ONLY, TRADITIONAL_ONLY

from benchmarks.seeded_games import fixup_stations
from controller.announce.voice import phrase
from controller.bots.simple import RandomBot
from controller.referee.computer_seat import ComputerSeat
from controller.rules import game_ids
from controller.rules.deploy import random_deployment

GAMES = [g for g in game_ids() if g in {"dover_patrol", "lattaque", "luzhanqi", "navy_cn", "navy_tw", "sanjunqi", "siguo",
                                        "stratego", "stratego_barrage"}]
INSTRUCTIONS = 2  # computer moves per game (few: the suite's time stays modest)
#: with FACEDOWN_SHOTS=DIR: the docs' pictures, (game, page, what): the computer's move, laying out half-way
SHOTS = {("stratego", "phone", "computer"), ("stratego", "desktop", "computer"), ("stratego", "phone", "layout"),
         ("luzhanqi", "phone", "computer"), ("luzhanqi", "desktop", "computer")}
SHOT: set[tuple[str, str, str]] = set()  # the pictures taken

#: in every page: when each bot move event arrived (its SSE message) and when its from/to marks were on the board
WATCH = """
window.__ins = {};
(() => {
  const ES = window.EventSource;
  window.EventSource = function (url, opts) {
    const es = new ES(url, opts);
    // registered before the page's own handler, so it runs first: t0 is the message's arrival
    es.addEventListener("message", (m) => {
      let ev; try { ev = JSON.parse(m.data); } catch (e) { return; }
      if (ev.event === "bot" && ev.kind === "move" && !ev.again && !(ev.seq in window.__ins))
        window.__ins[ev.seq] = {from: ev.from, to: ev.to, t0: performance.now(), t1: null, t2: null, sync: null};
      const ins = ev.state && ev.state.instruction;
      // the message that brings the instruction in its state: once its task is over (every listener, the page's
      // own included, has run), the marks must be on the board: drawn in that task, on any machine
      if (ins) setTimeout(() => {
        for (const w of Object.values(window.__ins))
          if (w.sync === null && w.from === ins.from && w.to === ins.to) w.sync = !!marked(w);
      }, 0);
    });
    return es;
  };
  window.EventSource.prototype = ES.prototype;
  const marked = (w) => {
    const f = document.querySelector(`#board g.station.ins-from[data-station="${w.from}"]`);
    const t = document.querySelector(`#board g.station.ins-to[data-station="${w.to}"]`);
    const a = document.querySelector(`#board g.arrows line.arrow[data-from="${w.from}"][data-to="${w.to}"]`);
    return f && t && a;
  };
  const check = () => {
    for (const w of Object.values(window.__ins)) if (w.t1 === null && marked(w)) {
      w.t1 = performance.now();
      requestAnimationFrame(() => { w.t2 = performance.now(); });
    }
  };
  document.addEventListener("DOMContentLoaded", () => {
    new MutationObserver(check).observe(document.getElementById("board"), {subtree: true, attributes: true, childList: true});
  });
})();
"""

#: the pinned box and these stations inside the first screen: the viewport, and the board's scrolled window for the
#: stations (a station scrolled out of the board's window is not on screen even if its box is)
ON_SCREEN = """(stations) => {
  const vw = window.innerWidth, vh = window.innerHeight;
  const inside = (b, c) => b.left >= c.left - 1 && b.top >= c.top - 1 && b.right <= c.right + 1 && b.bottom <= c.bottom + 1;
  const screen = {left: 0, top: 0, right: vw, bottom: vh};
  const now = document.getElementById("now").getBoundingClientRect();
  const w = document.getElementById("board-wrap").getBoundingClientRect();
  const win = {left: Math.max(0, w.left), top: Math.max(0, w.top), right: Math.min(vw, w.right), bottom: Math.min(vh, w.bottom)};
  const out = [];
  if (!inside(now, screen)) out.push(`pinned box ${Math.round(now.top)}..${Math.round(now.bottom)} of ${vh}`);
  for (const st of stations) {
    const r = document.querySelector(`#board g.station[data-station="${st}"] rect.hit`);
    const b = r.getBoundingClientRect();
    if (!inside(b, win)) out.push(`${st} at ${Math.round(b.left)},${Math.round(b.top)} outside ${JSON.stringify(win)}`);
  }
  // where the board goes on beyond its window, the cue at that edge is shown, on the first screen
  const wrap = document.getElementById("board-wrap");
  const more = {left: wrap.scrollLeft > 2, right: wrap.scrollLeft < wrap.scrollWidth - wrap.clientWidth - 2,
                up: wrap.scrollTop > 2, down: wrap.scrollTop < wrap.scrollHeight - wrap.clientHeight - 2};
  for (const [edge, beyond] of Object.entries(more)) {
    const cue = document.querySelector(`#board-frame .cue-${edge}`);
    const shown = getComputedStyle(cue).display !== "none" && inside(cue.getBoundingClientRect(), screen);
    if (beyond !== shown) out.push(`the board ${beyond ? "goes on" : "ends"} ${edge} but its cue is ${shown ? "shown" : "not shown"}`);
  }
  // one column (a phone): the pinned box, then the board, the log last
  if (vw < 1000) {
    const log = document.getElementById("log").getBoundingClientRect();
    if (now.bottom > w.top + 1 || log.top < w.bottom - 1) out.push(`order: pinned ..${Math.round(now.bottom)}, board ${Math.round(w.top)}..${Math.round(w.bottom)}, log ${Math.round(log.top)}..`);
  }
  return out;
}"""

#: the badge on each station of the checklist is the number of its first step still to do (a piece off a7 and back
#: on: 1, then 2), a tick once all its steps are done
BADGES = """() => {
  const want = {};
  for (const li of document.querySelectorAll("#fix-list li[data-station]")) {
    const st = li.dataset.station, todo = li.classList.contains("todo");
    if (!(st in want) || (want[st] === "✓" && todo)) want[st] = todo ? li.querySelector(".tick").textContent : "✓";
  }
  const out = [];
  for (const [st, text] of Object.entries(want)) {
    const b = document.querySelector(`#board g.badge[data-station="${st}"]`);
    if (!b || b.textContent !== text) out.push(`${st}: badge ${b ? b.textContent : "none"}, its first step to do ${text}`);
  }
  return out;
}"""


def flip(table: Any, station: str) -> None:
    """Lift or put down the piece on ``station`` of the simulated board and wait until the referee read it."""
    was = station in table.board.raw_occupied()
    table.board.toggle(station)
    wait(lambda: table.session.snapshot is not None and (station in table.session.snapshot.occupied) != was,
         what=f"the referee to read {station}")


def on_screen(page: Any, stations: list[str]) -> list[str]:
    return page.evaluate(ON_SCREEN, stations)


def ticks(page: Any) -> tuple[int, int]:
    """The pinned checklist's steps (done, to do)."""
    return (page.locator("#fix-list li.done").count(), page.locator("#fix-list li.todo").count())


def settled(page: Any, table: Any) -> None:
    """The page has had the referee's latest state and reading."""
    seq = table.session.log[-1].seq
    page.wait_for_function("seq => Number(document.body.getAttribute('data-state-seq') || 0) >= seq", arg=seq)


def do_fixup(table: Any, pages: dict[str, Any], before: dict[str, int], frm: str, to: str, report: list[str]) -> None:
    """The ruling's fix-up, step by step: its stations and the checklist are on each page's first screen, and each
    step ticks as the board does it."""
    lifts, places = fixup_stations(before, frm, to, table.state)
    stations = [*lifts, *places]
    if not stations:
        wait(lambda: table.session.pending is None, what="no fix-up")
        return
    for name, page in pages.items():
        page.wait_for_selector("#guidance:not([hidden]) #fix-list li[data-station]")
        page.wait_for_function("() => document.body.getAttribute('data-focus') !== null")
        problems = on_screen(page, sorted(set(stations)))
        assert not problems, (name, problems, page.inner_text("#guidance"))
        assert not page.evaluate(BADGES), (name, page.evaluate(BADGES), page.inner_text("#guidance"))
    ticked = 0
    for s in stations:
        flip(table, s)
        pending = table.view(table.game.sides[0]).pending
        if pending is None:
            break
        # each page ticks the steps the referee says the board has done, as it does them
        n = sum(1 for st in pending["steps"] if st["done"] and st.get("action") != "none")
        ticked = max(ticked, n)
        for name, page in pages.items():
            page.wait_for_function("n => document.querySelectorAll('#fix-list li.done').length >= n", arg=n)
            assert not page.evaluate(BADGES), (name, page.evaluate(BADGES), page.inner_text("#guidance"))
    report.append(f"ticked {ticked} of the fix-up's steps before its end")
    wait(lambda: table.session.pending is None and not table.session.status["mismatch"], what="the fix-up done")
    report.append(f"fix-up {stations}")


def laying_out(game: str, pages: dict[str, Any], human: str, owner: dict[str, str], left: list[str], done: int,
               total: int) -> None:
    """Half-way through laying out: each page's pinned checklist counts the pieces in place ("15 of 40"), asks for
    the computer's pieces as its tokens and for the person's as pieces, never says mismatch, and the next station to
    fill is on the first screen."""
    for name, page in pages.items():
        title = page.evaluate("p => FD.t('page.fix.layout_count', p)", {"done": done, "total": total})
        page.wait_for_function("t => document.getElementById('guidance-title').textContent === t", arg=title)
        assert page.get_attribute("#guidance", "class") == "kind-layout", (name, page.inner_text("#guidance"))
        banner = page.evaluate("() => FD.t('page.banner.layout')")
        assert page.inner_text("#banner") == banner, (name, page.inner_text("#banner"))
        for st in {owner[s]: s for s in left}.values():  # a station still to fill of each side
            key = "page.fix.put" if owner[st] == human else "page.fix.token"
            want = page.evaluate("([k, p]) => FD.t(k, p)", [key, {"side": owner[st], "station": st}])
            got = page.inner_text(f'#fix-list li[data-station="{st}"] span:last-child')
            assert got == want, (name, st, got, want)
        assert page.locator("#fix-list li.done").count() == done, (name, page.inner_text("#guidance"))
        page.wait_for_function("() => (document.body.getAttribute('data-focus') || '') !== ''")
        focus = page.get_attribute("body", "data-focus").split()
        assert len(focus) == 1 and focus[0] in left, (name, focus)  # the next station to fill, one at a time
        problems = on_screen(page, focus)
        assert not problems, (name, problems)
        shoot(page, game, name, "layout")  # the docs' picture: laying out, half-way


def shoot(page: Any, game: str, name: str, what: str) -> None:
    """With FACEDOWN_SHOTS=DIR, the first screen of the pages in SHOTS is saved as DIR/page-WHAT-GAME-NAME.png."""
    if os.environ.get("FACEDOWN_SHOTS") and (game, name, what) in SHOTS - SHOT:
        SHOT.add((game, name, what))
        page.screenshot(path=str(Path(os.environ["FACEDOWN_SHOTS"]) / f"page-{what}-{game}-{name}.png"))


def human_move(table: Any, pages: dict[str, Any], rng: random.Random, report: list[str]) -> None:
    frm, to = choose(table, rng, prefer_attack=True, approach=True)
    before = {s: p.uid for s, p in table.state.board.items()}
    ply = table.state.ply
    flip(table, frm)
    if to in table.state.board:
        flip(table, to)
    flip(table, to)
    wait(lambda: table.state.ply == ply + 1, what=f"the ruling on {frm}-{to}")
    do_fixup(table, pages, before, frm, to, report)


def computer_move(table: Any, pages: dict[str, Any], report: list[str], marks_ms: list[float], *, wrong: bool) -> None:
    side = table.state.turn
    move = wait(lambda: table.session.instruction(side), what=f"{side}'s instruction")
    frm, to = move.frm, move.to
    attack = to in table.state.board
    [seq] = [e.seq for e in table.session.log if e.public.get("event") == "bot" and e.public.get("kind") == "move"
             and not e.public.get("again")][-1:]
    seats = {k: v for k, v in pages.items() if k != "spectator"}  # a spectator's page gets no live readings
    for name, page in pages.items():
        if name in ("spectator", "arbiter"):  # checked, not timed (the spectator's event may predate its page)
            page.wait_for_selector(f'#board g.arrows line.arrow[data-from="{frm}"][data-to="{to}"]', state="attached")
            assert page.locator(f'#board g.station.ins-from[data-station="{frm}"]').count() == 1
            assert page.locator(f'#board g.station.ins-to[data-station="{to}"]').count() == 1
        else:
            w = page.wait_for_function("seq => { const w = window.__ins[seq]; return w && w.t2 !== null && w.sync !== null && w; }",
                                       arg=seq).json_value()
            assert (w["from"], w["to"]) == (frm, to)
            assert w["sync"], f"{name}: the computer's move was not on the board when its event had been handled"
            marks_ms.append(w["t1"] - w["t0"])
        banner = page.locator("#banner")
        assert "computer" in (banner.get_attribute("class") or ""), (name, banner.inner_text())
        # the banner says the move in the page's words, and says "attack" when it is one
        said = page.evaluate("([key, p]) => FD.t(key, p)", ["page.banner.computer_attack" if attack else "page.banner.computer",
                                                            {"player": side, "from": frm, "to": to}])
        assert banner.inner_text() == said, (name, banner.inner_text(), said)
        problems = on_screen(page, [frm, to])
        assert not problems, (name, problems)
        assert ticks(page) == (0, 3 if attack else 2), (name, page.inner_text("#guidance"))
        shoot(page, table.game.id, name, "computer")  # the docs' picture: the computer's move
    if wrong:
        # a token the move does not touch, lifted by mistake: flagged at once, on the board, in the banner, by voice
        stray = next(s for s in sorted(table.state.board) if s not in (frm, to))
        heard = len(table.session.log)
        flip(table, stray)
        for page in seats.values():
            page.wait_for_selector(f'#board g.station.mismatch[data-station="{stray}"]')
            page.wait_for_selector("#banner.computer.wrong")
        said = [e.public for e in table.session.log[heard:] if e.public.get("kind") == "wrong_lift"]
        assert said and said[0]["stations"] == [stray], said
        for lang in ("en", "zh"):  # what the voice says, in each of its languages: the token, and the move to make
            words = phrase(said[0], lang, table.game)
            assert stray.upper() in words.upper().replace(" ", "") and frm.upper() in words.upper().replace(" ", ""), words
        flip(table, stray)
        for page in seats.values():
            page.wait_for_selector("#banner.computer:not(.wrong)")
        report.append(f"wrong lift {stray} flagged")
    before = {s: p.uid for s, p in table.state.board.items()}
    ply = table.state.ply
    flip(table, frm)
    for page in seats.values():
        page.wait_for_function("() => document.querySelectorAll('#fix-list li.done').length >= 1")
    if attack:
        flip(table, to)
        for page in seats.values():
            page.wait_for_function("() => document.querySelectorAll('#fix-list li.done').length >= 2")
    flip(table, to)
    wait(lambda: table.state.ply == ply + 1, what=f"the ruling on the computer's {frm}-{to}")
    report.append(f"{side} (computer) {frm}-{to}")
    do_fixup(table, pages, before, frm, to, report)


@pytest.fixture(scope="module")
def browser():  # noqa: ANN201
    with chromium() as b:
        yield b


@pytest.mark.parametrize("game", GAMES)
def test_a_first_game_against_the_computer(game: str, browser: Any, tmp_path: Path) -> None:
    errors: list[str] = []
    langs = ["en", "zh-Hans", "zh-Hant"]
    i = GAMES.index(game)
    lang_phone, lang_desk = langs[(i + 2) % 3], langs[i % 3]  # Stratego's phone in English, Luzhanqi's in both scripts
    rng = random.Random(37 + i)
    with served(game, tmp_path) as (table, base):
        human = table.game.sides[0]
        seats = [ComputerSeat(table.session, side, RandomBot(), seed=rng.randrange(1000)) for side in table.game.sides[1:]]
        assert table.session.register_setup(human, random_deployment(table.game, human, rng, table.state.options)) == []
        wait(lambda: table.state.phase == "play", what="every side deployed")
        url = f"{base}/seat/{table.tokens[human]}"
        pages = {"phone": open_page(browser, url, errors, viewport=PHONE, lang=lang_phone, init=WATCH),
                 "desktop": open_page(browser, url, errors, viewport=DESKTOP, lang=lang_desk, init=WATCH),
                 # the arbiter's page draws the computer's move and the checklists as the seat's does
                 "arbiter": open_page(browser, f"{base}/arbiter/{table.tokens['arbiter']}", errors, viewport=DESKTOP,
                                      lang=lang_phone, init=WATCH)}
        # laying out: one progress line in the log, a count in the checklist's title, never a mismatch
        order = sorted(table.state.board, key=table.game.station_ids.index)
        total = len(order)
        owner = {s: table.state.board[s].owner for s in order}
        for n, s in enumerate(order):
            table.board.place(s)
            if n % 10 == 9:
                time.sleep(0.05)
            if n + 1 == total // 2:
                wait(lambda s=s: table.session.snapshot is not None and s in table.session.snapshot.occupied, what=f"{s} read")
                laying_out(game, pages, human, owner, order[n + 1:], n + 1, total)
        wait(lambda: not table.session.status["waiting_for_board"], what="the board laid out")
        for name, page in pages.items():
            settled(page, table)
            assert page.locator("#log li.progress-line").count() <= 1, (name, page.inner_text("#log"))
            assert page.locator("#log li.ev-mismatch").count() == 0, (name, page.inner_text("#log"))
            line = page.evaluate("p => FD.t('event.laid_out', p)", {"done": total, "total": total})
            assert page.inner_text("#log li.progress-line") == line, (name, page.inner_text("#log"))
        laid = [e.public for e in table.session.log if e.public.get("kind") == "layout"]
        assert len(laid) <= len(table.state.board) // 10 + 3, len(laid)  # a line each ten pieces, not one a piece
        report: list[str] = []
        marks_ms: list[float] = []
        done = 0
        spectator = None
        while done < INSTRUCTIONS and table.state.phase == "play":
            if table.state.turn == human:
                human_move(table, pages, rng, report)
            else:
                computer_move(table, pages, report, marks_ms, wrong=game == "stratego" and done == 0)
                done += 1
            if spectator is None and table.state.ply >= 2:
                # opened mid-game: the history is there, as on the seats' pages
                spectator = open_page(browser, f"{base}/", errors, viewport=PHONE, lang=lang_phone)
                settled(spectator, table)
                spectator.wait_for_selector("#log li.ev-start")
                assert spectator.locator("#log li").count() >= 4, spectator.inner_text("#log")
                pages["spectator"] = spectator  # from now on the computer's moves and the fix-ups are on it too
        assert done == INSTRUCTIONS or table.state.phase == "over", report
        for name, page in pages.items():
            lang = page.evaluate("() => FD.lang")
            if lang == "en":
                continue
            settled(page, table)
            labels = {s.id for s in table.game.stations} | {s.label for s in table.game.stations if s.label}
            words = english_words(page, ("header", "#now", "#log", "#board-tools"), labels | {"FaceDown"})
            assert not words, (name, lang, words)
            # and in the page's own script, the pieces' faces on the board included
            text = page.evaluate("() => ['header', '#now', '#log', '#board'].map(s => document.querySelector(s).textContent).join(' ')")
            other = {c for c in text if c in (TRADITIONAL_ONLY if lang == "zh-Hans" else SIMPLIFIED_ONLY)}
            assert not other, (name, lang, sorted(other))
            assert page.inner_text("#game-name") == (table.game.zh_hans if lang == "zh-Hans" else table.game.zh)
        print(f"\n{game}: computer's marks after its instruction event, ms: {[round(x, 1) for x in marks_ms]}; {report}")
        # drawn in the event's own task (checked above: an invariant on any machine); how long it took depends on
        # the machine's load, so it is printed for the README's table and never asserted here
        assert marks_ms, "no computer move was marked"
        for s in seats:
            s.close()
    assert not errors, errors


def test_the_arbiter_confirms_what_cannot_be_undone_in_the_pages_language(browser: Any, tmp_path: Path) -> None:
    """The arbiter's page in Simplified Chinese: the sensors line names the board's kind in Chinese; ending the game
    takes a second tap (the first only asks); the record downloads in the page's language, and in English."""
    errors: list[str] = []
    rng = random.Random(3)
    with served("stratego", tmp_path) as (table, base):
        for side in table.game.sides:
            assert table.session.register_setup(side, random_deployment(table.game, side, rng, table.state.options)) == []
        for s in table.state.board:
            table.board.place(s)
        wait(lambda: table.state.phase == "play" and not table.session.status["waiting_for_board"], what="play")
        arb = open_page(browser, f"{base}/arbiter/{table.tokens['arbiter']}", errors, viewport=PHONE, lang="zh-Hans")
        arb.wait_for_selector("#sensors:has-text('模拟棋盘')")
        labels = {s.id for s in table.game.stations}
        assert not english_words(arb, ("#arbiter",), labels | {"QR"}), arb.inner_text("#arbiter")
        arb.click("#arb-end")
        arb.wait_for_selector("#arb-end.confirming:has-text('再点一次确认')")
        time.sleep(0.3)
        assert table.state.phase == "play"  # one tap alone ends nothing
        arb.click("#arb-end")
        wait(lambda: table.state.phase == "over", what="the game ended")
        arb.wait_for_selector("#replay:not([hidden]) #record-en:not([hidden])")
        href = arb.get_attribute("#record", "href")
        assert href.endswith("lang=zh-Hans") and arb.inner_text("#record") == "下载棋谱"
        text = arb.context.request.get(base + href).text()
        assert "棋谱" in text and "裁判：结束对局" in text, text[:300]
        english = arb.context.request.get(base + arb.get_attribute("#record-en", "href")).text()
        assert english.startswith("FaceDown record: Stratego") and "arbiter: end" in english
    assert not errors, errors


def test_a_wrong_piece_is_drawn_as_unknown_not_as_the_referees(browser: Any, tmp_path: Path) -> None:
    """With tags read, a piece put down where another belongs: the checklist says the station holds the wrong
    piece, and the board draws an unknown piece there (marked), not the piece the referee expects; once the right
    piece is back, the referee's piece is drawn again."""
    errors: list[str] = []
    rng = random.Random(5)
    with served("stratego", tmp_path, tags=True) as (table, base):
        for side in table.game.sides:
            assert table.session.register_setup(side, random_deployment(table.game, side, rng, table.state.options)) == []
        for s in table.state.board:
            table.board.place(s, tag=f"T{s}")
        wait(lambda: table.state.phase == "play" and not table.session.status["waiting_for_board"], what="play")
        page = open_page(browser, f"{base}/seat/{table.tokens['red']}", errors, viewport=PHONE)
        st = "a1"
        piece = table.state.board[st].type
        page.wait_for_selector(f'#board g.piece[data-station="{st}"][data-piece="{piece}"]')
        table.board.lift(st)
        wait(lambda: st not in table.session.snapshot.occupied, what=f"{st} lifted")
        table.board.place(st, tag="Tb1")  # b1's piece, put down on a1
        wait(lambda: table.session.mismatch is not None, what="the mismatch")
        drawn = page.locator(f'#board g.piece[data-station="{st}"]')
        page.wait_for_selector(f'#board g.piece.wrong[data-station="{st}"]')
        assert drawn.count() == 1 and drawn.get_attribute("data-piece") is None and drawn.text_content() == "?"
        assert page.locator(f'#board g.station.mismatch[data-station="{st}"]').count() == 1
        assert "wrong piece" in page.inner_text(f'#fix-list li[data-station="{st}"]'), page.inner_text("#guidance")
        table.board.lift(st)
        table.board.place(st, tag=f"T{st}")
        wait(lambda: table.session.mismatch is None, what="the board explainable again")
        page.wait_for_selector(f'#board g.piece[data-station="{st}"][data-piece="{piece}"]')
        assert page.locator("#board g.piece.wrong").count() == 0
    assert not errors, errors


def test_putting_a_seat_out_takes_a_second_tap(browser: Any, tmp_path: Path) -> None:
    """Four-player Junqi: the arbiter's "put this seat out" cannot be taken back, so its first tap only asks."""
    errors: list[str] = []
    rng = random.Random(4)
    with served("siguo", tmp_path) as (table, base):
        for side in table.game.sides:
            assert table.session.register_setup(side, random_deployment(table.game, side, rng, table.state.options)) == []
        for s in table.state.board:
            table.board.place(s)
        wait(lambda: table.state.phase == "play" and not table.session.status["waiting_for_board"], what="play")
        arb = open_page(browser, f"{base}/arbiter/{table.tokens['arbiter']}", errors, viewport=PHONE, lang="zh-Hant")
        arb.wait_for_selector("#arb-out-row:not([hidden])")
        side = table.game.sides[2]
        arb.select_option("#arb-out-side", side)
        label = arb.inner_text("#arb-out")
        arb.click("#arb-out")
        arb.wait_for_selector("#arb-out.confirming:has-text('再點一次確認')")
        time.sleep(0.3)
        assert side not in table.state.out  # one tap alone puts nobody out
        arb.click("#arb-out")
        wait(lambda: side in table.state.out, what=f"{side} out")
        arb.wait_for_function("t => document.getElementById('arb-out').textContent === t", arg=label)
    assert not errors, errors
