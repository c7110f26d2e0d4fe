"""Helpers for the browser tests (real headless Chromium driven by Playwright): a served table on the simulated board,
pages at a phone or desktop size in a chosen language, taps on stations with the time until the page shows them,
and the page checks every board must pass (tap targets, labels that fit, axe-core)."""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from controller.referee.table import open_table
from controller.rules import load_game
from controller.sensing.sim import SimBoard
from controller.setups_store import SetupStore

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
        "--disable-sync", "--no-first-run"]
AXE = Path(__file__).parent / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 800}
TAP_MS = 100  # a tapped station shows its new state within this (issue 18's bound)

# Watches one station's DOM state (occupancy shown, piece in hand, marks, the piece drawn on it): armed before a tap,
# it records the time from the click to the first frame where that state differs.
TAP_WATCH = """
window.__tapWatch = null;
document.addEventListener("click", (e) => {
  const w = window.__tapWatch;
  if (!w || w.t0 !== null) return;
  w.t0 = performance.now();
  const g = e.target.closest && e.target.closest("g.station");
  w.hit = g ? g.getAttribute("data-station") : null;
}, true);
// after the station's own handler (the click bubbles up to the document): has its state already changed, in the same
// task as the tap, before any answer from the referee?
document.addEventListener("click", () => { const w = window.__tapWatch; if (w && w.sync === null) w.sync = window.__stationSig(w.station) !== w.before; });
window.__stationSig = (st) => {
  const g = document.querySelector(`#board g.station[data-station="${st}"]`);
  const p = document.querySelector(`#board g.pieces g.piece[data-station="${st}"]`);
  return [g && g.getAttribute("data-occupied"), g && g.getAttribute("data-hand"), g && g.getAttribute("data-marks"),
          p ? p.getAttribute("class") + "|" + (p.getAttribute("data-piece") || "") : "-"].join(";");
};
window.__armTap = (st) => {
  const w = {station: st, before: window.__stationSig(st), t0: null, dt: null, sync: null, hit: null};
  window.__tapWatch = w;
  const poll = () => {
    if (w.t0 !== null && window.__stationSig(st) !== w.before) { w.dt = performance.now() - w.t0; return; }
    if (w.t0 === null || performance.now() - w.t0 < 3000) requestAnimationFrame(poll);
  };
  requestAnimationFrame(poll);
};
// scroll a station's tap area into view and say where it is (null: not drawn yet); ``arm``: watch it for the next tap
window.__aimAt = (st, arm) => {
  const r = document.querySelector(`#board g.station[data-station="${st}"] rect.hit`);
  if (!r) return null;
  r.scrollIntoView({block: "center", inline: "center"});
  const b = r.getBoundingClientRect();
  if (!b.width || !b.height) return null;
  if (arm) window.__armTap(st);
  return {x: b.x, y: b.y, width: b.width, height: b.height};
};
// the fix-up checklist's number of steps left to do, each time it changes (0: no list shown)
window.__fixTodo = [];
document.addEventListener("DOMContentLoaded", () => {
  const box = document.getElementById("guidance");
  if (!box) return;
  const note = () => {
    const n = box.hidden ? 0 : box.querySelectorAll("#fix-list li.todo").length;
    if (window.__fixTodo[window.__fixTodo.length - 1] !== n) window.__fixTodo.push(n);
  };
  new MutationObserver(note).observe(box, {subtree: true, childList: true, attributes: true, attributeFilter: ["hidden", "class"]});
});
"""


#: scroll a page back to how it opens: the top of the page, a zoomed board on the viewer's own side
HOME_VIEW = """() => { window.scrollTo(0, 0); const w = document.getElementById('board-wrap');
    w.scrollTop = w.scrollHeight; w.scrollLeft = (w.scrollWidth - w.clientWidth) / 2; }"""


def missing(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"browser tests need a browser under CI: {reason}")
    pytest.skip(reason)


@contextmanager
def chromium() -> Iterator[Any]:
    """One headless Chromium for a test module."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright is not installed (pip install playwright)")
    if not Path(CHROMIUM).exists():
        missing(f"no Chromium at {CHROMIUM} (apt-get install chromium)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield b
        finally:
            b.close()


@contextmanager
def served(game: str, tmp: Path, *, tags: bool = False, **options: Any) -> Iterator[tuple[Any, str]]:
    """A table of ``game`` on the simulated board with its web referee on a free loopback port (``tags``: the
    referee reads each piece's tag, as with RFID readers fitted)."""
    from web_referee.server import WebServer

    board = SimBoard(load_game(game).station_ids, settle_ms=20)
    table = open_table(game, board=board, board_kind="sim", journal_path=tmp / f"{game}.sqlite", resume=False,
                       options=options or None, use_tags=tags)
    table.start()
    server = WebServer(table, host="127.0.0.1", port=0, threads=24, setups=SetupStore(tmp / "setups"))
    server.start()
    try:
        yield table, f"http://127.0.0.1:{server.port}"
    finally:
        server.stop()
        table.stop()


def wait(cond: Callable[[], Any], timeout: float = 20.0, what: str = "condition") -> Any:
    """Poll ``cond`` until it is true. The timeout is generous on purpose: under the whole suite on a 2-core CI
    machine (the emulator, Chromium and the referee's threads all busy) a ruling once took over 5 s; a wait that
    succeeds returns at once, so only a real failure pays for it."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what} ({timeout:g} s)")


def open_page(browser: Any, url: str, errors: list[str], *, viewport: dict[str, int] = PHONE, lang: str = "en",
              axe: bool = False, init: str = "") -> Any:
    """A page in its own context (its own language choice); ``axe`` lets axe-core in past the page's CSP; ``init``:
    a script of the test's own to run before the page's."""
    ctx = browser.new_context(viewport=viewport, bypass_csp=axe, device_scale_factor=1)
    ctx.add_init_script(f"try {{ localStorage.setItem('facedown-lang', {json.dumps(lang)}); }} catch (e) {{}}")
    ctx.add_init_script(TAP_WATCH)
    if init:
        ctx.add_init_script(init)
    page = ctx.new_page()
    page.on("console", lambda m: errors.append(f"{url}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"{url}: {e}"))
    page.goto(url)
    page.wait_for_selector("body[data-ready]", state="attached")
    return page


def station_box(page: Any, station: str, *, arm: bool = False) -> dict[str, float]:
    """Where ``station``'s tap area is on screen, scrolled into view (``arm``: and watch it for the next tap), in one
    call to the page."""
    for _ in range(50):
        box = page.evaluate("([st, arm]) => window.__aimAt(st, arm)", [station, arm])
        if box:
            return box
        time.sleep(0.02)
    raise AssertionError(f"station {station} is not drawn")


def tap(page: Any, station: str) -> float:
    """Tap a station where it is drawn, like a finger; the ms until the page showed the station's new state. The
    station's state must change in the tap's own task, before any answer from the referee (an invariant that holds on
    any machine; the time is printed by the tests, and measured by benchmarks/web_paint.py)."""
    box = station_box(page, station, arm=True)
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    watch = page.wait_for_function("() => window.__tapWatch && window.__tapWatch.dt !== null && window.__tapWatch",
                                   timeout=3000).json_value()
    assert watch["hit"] == station, f"the tap aimed at {station} landed on {watch['hit']} (did the board move?)"
    assert watch["sync"], f"tapping {station} changed nothing on the page until the referee answered"
    return float(watch["dt"])


def tap_and_settle(page: Any, table: Any, station: str) -> float:
    """Tap a station of the simulated board and wait until the referee has read the change."""
    was = station in table.board.raw_occupied()
    dt = tap(page, station)
    wait(lambda: (station in table.board.raw_occupied()) != was, what=f"the board to change at {station}")
    wait(lambda: table.session.snapshot is not None and (station in table.session.snapshot.occupied) != was,
         what=f"the referee to read {station}")
    return dt


def tap_targets(page: Any) -> list[float]:
    """The on-screen size (the smaller side, CSS px) of every station's tap area at the page's working zoom."""
    return page.evaluate("""() => [...document.querySelectorAll('#board g.station rect.hit')].map(r => {
        const b = r.getBoundingClientRect(); return Math.min(b.width, b.height); })""")


def cut_labels(page: Any) -> list[str]:
    """Piece labels wider than their piece face (nothing may be cut or overflow)."""
    return page.evaluate("""() => [...document.querySelectorAll('#board g.piece')].flatMap(g => {
        const r = g.querySelector('rect'), t = g.querySelector('text:not(.rank-mark):not(.hand-mark)');
        if (!r || !t || !t.textContent) return [];
        const w = t.getBBox().width, rw = r.getBBox().width;
        return w > rw - 2 ? [`${g.getAttribute('data-station')}: "${t.textContent}" ${w.toFixed(1)} > ${rw}`] : []; })""")


def clipped_text(page: Any) -> list[str]:
    """Words of the page around the board (header, banner, verdict, checklist, buttons, log) wider than their box
    and not scrollable: cut off, or spilling over their neighbours. Screen-reader-only text is left out."""
    return page.evaluate("""() => [...document.querySelectorAll('body *')].filter((e) => {
        if (e.children.length || !e.textContent.trim() || e.closest('#board-wrap, .sr-only') || !e.getClientRects().length) return false;
        const cs = getComputedStyle(e);
        return e.scrollWidth > e.clientWidth + 1 && e.clientWidth > 0 && !['auto', 'scroll'].includes(cs.overflowX);
    }).map((e) => `${e.tagName.toLowerCase()}${e.id ? '#' + e.id : ''}: "${e.textContent.trim().slice(0, 40)}" ${e.scrollWidth} > ${e.clientWidth}`)""")


def own_side_at_bottom(page: Any, side: str) -> bool:
    ys = page.evaluate("""side => [...document.querySelectorAll('#board g.piece')].map(g =>
        [g.getAttribute('data-owner') === side, g.transform.baseVal.consolidate().matrix.f])""", side)
    own = [y for mine, y in ys if mine]
    other = [y for mine, y in ys if not mine]
    return bool(own) and bool(other) and sum(own) / len(own) > sum(other) / len(other)


def axe_violations(page: Any) -> list[str]:
    """Serious and critical axe-core violations on the page as it is now."""
    if not AXE.exists():
        missing(f"axe-core is not installed ({AXE}): npm install --prefix tests")
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate("""async () => { const r = await axe.run(document, {resultTypes: ['violations']});
        return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical')
          .map(v => `${v.id} (${v.impact}): ${v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(', ')}`); }""")
    return list(result)


def english_words(page: Any, selectors: tuple[str, ...], allowed: set[str]) -> list[str]:
    """Latin-letter words in these parts of the page that are not station names (the language menu, which names each
    language in its own script, excluded)."""
    text = page.evaluate("""sels => sels.map(s => { const e = document.querySelector(s); if (!e || e.hidden) return '';
        const c = e.cloneNode(true); for (const l of c.querySelectorAll('#lang')) l.remove(); return c.textContent; }).join(' | ')""",
                         list(selectors))
    return [w for w in re.findall(r"[A-Za-z][A-Za-z0-9'-]*", text) if w not in allowed]


def seen_all(page: Any, table: Any, role: str) -> None:
    """Wait until ``page`` (of ``role``) has had the last event published for it, and the state that came with it."""
    from web_referee.payloads import may_receive

    seq = max((e.seq for e in table.session.log if may_receive(e, role)), default=0)
    page.wait_for_function("""seq => Number(document.body.getAttribute('data-seq') || 0) >= seq
                              && Number(document.body.getAttribute('data-state-seq') || 0) >= seq""", arg=seq)


def paint_times(page: Any) -> dict[str, list[float]]:
    return page.evaluate("() => window.FD_PAINT")


def percentile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def check_tap_times(taps: list[float], what: str = "") -> None:
    """Every tap changed its station in the tap's own task (tap() checks that, on any machine); on a machine shared
    with other work a few frames may still come late, so at most one tap in ten may reach TAP_MS."""
    slow = [round(t) for t in taps if t >= TAP_MS]
    assert len(slow) <= len(taps) // 10, f"{what}{len(slow)} of {len(taps)} taps took {TAP_MS} ms or more to show: {slow}"


# ---------------------------------------------------------------------- a newcomer's setup through the page

def set_up_on_page(page: Any, table: Any, side: str, *, guided: bool, submit_first: bool, taps: list[float]) -> None:
    """One seat deploys through its page on the simulated board, as a newcomer would. ``guided``: the page's prompts,
    a tap a piece (each tap shows its planned piece at once); else the Random button. ``submit_first``: Submit at once
    (the button registers the deployment and lays it out); else Lay out first (part-way through a guided setup: the
    board then follows each tap), wait until every piece stands, then Submit. Returns once the referee holds the
    deployment and the seat's pieces stand on the board."""
    total = sum(p.count for p in table.game.pieces)
    zone = set(table.game.setup.zones[table.game.setup.deploy_zone][side])
    if guided:
        assert page.locator("#setup-layout").is_hidden()  # nothing to lay out before a piece is placed
        for i in range(total):
            current = page.get_attribute(".pick.current", "data-piece")
            station = page.get_attribute("#board g.station.allowed", "data-station")
            assert current and station, page.inner_text("#setup-prompt")
            taps.append(tap(page, station))
            assert page.get_attribute(f'#board g.piece.planned[data-station="{station}"]', "data-piece") == current
            assert page.locator("#board g.piece.planned").count() == i + 1
            if i == min(4, total - 1) and not submit_first:  # lay out part-way, then keep placing
                page.click("#setup-layout")
    else:
        page.click("#setup-random")
        page.wait_for_function(f"() => document.querySelectorAll('#board g.piece.planned').length === {total}")
        if not submit_first:
            page.click("#setup-layout")
    page.wait_for_selector("#setup-submit:not([disabled])")
    assert page.inner_text("#setup-problems").strip() == ""
    if not submit_first:  # laid out before submitting: the progress says every piece stands
        page.wait_for_selector(f"#setup-progress-text:has-text('{total} of {total}')")
        placed = len(table.board.raw_occupied() & zone)
        assert placed == total, f"{side}: {placed} of {total} pieces laid out before submitting"
    assert page.inner_text("#setup-submit") == "Submit and lay out"
    page.click("#setup-submit")
    wait(lambda: side in table.state.deployments or table.state.phase != "setup", what=f"{side}'s deployment")
    wait(lambda: len(table.board.raw_occupied() & zone) == total, what=f"{side}'s pieces on the board")


# ---------------------------------------------------------------------- scripted play by taps

def quiet(table: Any, frm: str, to: str) -> bool:
    """Does the move leave the game running with every seat still in it (the scripted players end nothing early)?"""
    trial = table.state.copy()
    r = trial.apply((frm, to))
    return r.result is None and not r.out


def choose(table: Any, rng: Any, prefer_attack: bool, *, approach: bool = False) -> tuple[str, str]:
    """A quiet legal move for the side to move: an attack when asked and there is one; with ``approach``, otherwise a
    move that brings a piece nearest an enemy piece (so that clashes come within a few moves on large boards)."""
    state = table.state
    moves = [m for m in state.legal_moves() if quiet(table, *m)]
    assert moves, f"{state.turn} has no move that keeps the game going (ply {state.ply})"
    attacks = [m for m in moves if m[1] in state.board]
    if attacks and prefer_attack:
        return tuple(rng.choice(attacks))
    if not approach:
        return tuple(rng.choice(moves))
    at = {s.id: (s.x, s.y) for s in state.game.stations}
    foes = [at[s] for s, p in state.board.items() if state.enemies(state.turn, p.owner) and p.owner not in state.out]

    def gap(m: tuple[str, str]) -> float:
        x, y = at[m[1]]
        return min(((x - fx) ** 2 + (y - fy) ** 2 for fx, fy in foes), default=0.0)

    ranked = sorted(moves, key=gap)
    return tuple(rng.choice(ranked[:3]))


class Played(NamedTuple):
    ruling: Any  # the referee's ruling
    fixups: int  # taps the fix-up took
    todo: list[int]  # the checklist's steps left to do, as it changed (0: gone)
    steps: str  # the checklist's words when it appeared ("" if there was no fix-up)


def play_move(page: Any, table: Any, frm: str, to: str, taps: list[float]) -> Played:
    """The player on ``page`` moves or attacks by tapping (lift, lift the enemy, put down), then follows the fix-up
    checklist: each station it acts on is marked on the board and named by a step, the steps tick off (never come
    back) and the list empties as the board comes to match."""
    from benchmarks.seeded_games import fixup_stations

    page.evaluate("() => { window.__fixTodo = []; }")
    before = {s: p.uid for s, p in table.state.board.items()}
    ply = table.state.ply
    attack = to in table.state.board
    taps.append(tap_and_settle(page, table, frm))
    if attack:
        taps.append(tap_and_settle(page, table, to))
    taps.append(tap_and_settle(page, table, to))
    wait(lambda: table.state.ply == ply + 1, what=f"the ruling on {frm}-{to}")
    lifts, places = fixup_stations(before, frm, to, table.state)
    steps = ""
    if lifts or places:
        page.wait_for_selector("#guidance:not([hidden]) #fix-list li")
        listed = set(page.eval_on_selector_all("#fix-list li[data-station]", "els => els.map(e => e.dataset.station)"))
        marked = set(page.eval_on_selector_all("#board g.station.fix", "els => els.map(e => e.dataset.station)"))
        assert listed and set(lifts) | set(places) <= marked, (lifts, places, marked, page.inner_text("#guidance"))
        # a new list has nothing ticked yet, even the same steps as the last fix-up (the same attack made again)
        assert page.locator("#fix-list li.done").count() == 0, page.inner_text("#guidance")
        steps = page.inner_text("#fix-list")
    for s in (*lifts, *places):
        taps.append(tap_and_settle(page, table, s))
    wait(lambda: not table.session.status["waiting_for_board"] and not table.session.status["mismatch"], what="the board to match")
    page.wait_for_selector("#guidance", state="hidden")
    todo = page.evaluate("() => window.__fixTodo")
    while todo and todo[0] == 0:
        todo.pop(0)
    assert todo == sorted(todo, reverse=True) and (not todo or todo[-1] == 0), f"the checklist went {todo} ({frm}-{to})"
    return Played(table.state.history[-1], len(lifts) + len(places), todo, steps)
