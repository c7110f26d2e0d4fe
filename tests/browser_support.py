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
from typing import Any

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
def served(game: str, tmp: Path, **options: Any) -> Iterator[tuple[Any, str]]:
    """A table of ``game`` on the simulated board with its web referee on a free loopback port."""
    from web_referee.server import WebServer

    board = SimBoard(load_game(game).station_ids, settle_ms=20)
    table = open_table(game, board=board, board_kind="sim", journal_path=tmp / f"{game}.sqlite", resume=False,
                       options=options or None)
    table.start()
    server = WebServer(table, host="127.0.0.1", port=0, threads=24, setups=SetupStore(tmp / "setups"))
    server.start()
    try:
        yield table, f"http://127.0.0.1:{server.port}"
    finally:
        server.stop()
        table.stop()


def wait(cond: Callable[[], Any], timeout: float = 5.0, what: str = "condition") -> Any:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        v = cond()
        if v:
            return v
        time.sleep(0.01)
    raise AssertionError(f"timed out waiting for {what}")


def open_page(browser: Any, url: str, errors: list[str], *, viewport: dict[str, int] = PHONE, lang: str = "en",
              axe: bool = False) -> Any:
    """A page in its own context (its own language choice); ``axe`` lets axe-core in past the page's CSP."""
    ctx = browser.new_context(viewport=viewport, bypass_csp=axe, device_scale_factor=1)
    ctx.add_init_script(f"try {{ localStorage.setItem('facedown-lang', {json.dumps(lang)}); }} catch (e) {{}}")
    ctx.add_init_script(TAP_WATCH)
    page = ctx.new_page()
    page.on("console", lambda m: errors.append(f"{url}: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(f"{url}: {e}"))
    page.goto(url)
    page.wait_for_selector("body[data-ready]", state="attached")
    return page


def station_box(page: Any, station: str) -> dict[str, float]:
    box = None
    for _ in range(50):
        page.evaluate("""st => { const g = document.querySelector(`#board g.station[data-station="${st}"] rect.hit`);
                                 if (g) g.scrollIntoView({block: "center", inline: "center"}); }""", station)
        box = page.locator(f'#board g.station[data-station="{station}"] rect.hit').bounding_box()
        if box:
            break
        time.sleep(0.02)
    assert box, f"station {station} is not drawn"
    return box


def tap(page: Any, station: str) -> float:
    """Tap a station where it is drawn, like a finger; the ms until the page showed the station's new state. The
    station's state must change in the tap's own task, before any answer from the referee (an invariant that holds on
    any machine; the time is printed by the tests, and measured by benchmarks/web_paint.py)."""
    box = station_box(page, station)
    page.evaluate("st => window.__armTap(st)", station)
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.wait_for_function("() => window.__tapWatch && window.__tapWatch.dt !== null", timeout=3000)
    watch = page.evaluate("() => window.__tapWatch")
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
