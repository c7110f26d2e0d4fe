"""Every game but Luzhanqi (whose long game is in test_browser_web.py) played by scripted newcomers in a real headless
Chromium, one seat's page on a 390 x 844 phone and the other's on a 1280 x 800 desktop (four-player Junqi: two of
each), swapped from game to game:

- each seat deploys through its own page on the simulated board: the guided prompts tap by tap or the Random button,
  laid out before submitting or submitted first (the submit lays out), Red or Blue first: every order is covered;
- then 20 plies by taps on the seats' pages, attacks first when there are any (else a move towards the enemy), each
  clash's verdict naming the survivor on every seat's page, and the fix-ups the referee asks for done from the
  checklist until it empties;
- every tap shows its station's new state at once (in the tap's own task; the times are printed), each seat's own
  side is at the bottom, every station is at least 44 CSS px at the working zoom, no piece label is cut in English or
  Traditional Chinese, axe-core finds nothing serious, and a desktop spectator's board fills its column.

With FACEDOWN_SHOTS=DIR set, each game's phone seat page is saved as DIR/page-<game>-phone.png (the README's
pictures)."""

from __future__ import annotations

import importlib
import os
import random
from pathlib import Path
from types import SimpleNamespace
from typing import NamedTuple

import pytest
from browser_support import (
    DESKTOP,
    HOME_VIEW,
    PHONE,
    axe_violations,
    check_tap_times,
    choose,
    chromium,
    clipped_text,
    cut_labels,
    open_page,
    own_side_at_bottom,
    paint_times,
    percentile,
    play_move,
    seen_all,
    served,
    set_up_on_page,
    tap,
    tap_and_settle,
    tap_targets,
    wait,
)

# the seat routes' module (the package's name ``seat`` is its blueprint)
seat_routes = importlib.import_module("web_referee.blueprints.seat")

PLIES = 20


class Seat(NamedTuple):
    side: str
    viewport: dict[str, int]
    guided: bool  # the page's prompts tap by tap, else the Random button
    submit_first: bool  # Submit at once (it lays out), else Lay out, then Submit


#: the seats of each game in the order they submit: who is on a phone, who taps the guided setup, who lays out before
#: submitting (across the games every combination, Red or Blue first)
PLANS: dict[str, tuple[Seat, ...]] = {
    "stratego": (Seat("blue", DESKTOP, False, True), Seat("red", PHONE, True, False)),
    "stratego_barrage": (Seat("red", DESKTOP, True, True), Seat("blue", PHONE, False, False)),
    "lattaque": (Seat("red", PHONE, False, False), Seat("blue", DESKTOP, True, True)),
    "dover_patrol": (Seat("blue", PHONE, True, False), Seat("red", DESKTOP, False, True)),
    "navy_cn": (Seat("blue", DESKTOP, True, True), Seat("red", PHONE, False, False)),
    "navy_tw": (Seat("red", DESKTOP, False, True), Seat("blue", PHONE, True, False)),
    "sanjunqi": (Seat("blue", PHONE, False, False), Seat("red", DESKTOP, True, True)),
    "siguo": (Seat("green", PHONE, True, False), Seat("red", DESKTOP, False, True),
              Seat("purple", PHONE, False, False), Seat("blue", DESKTOP, True, True)),
}
SEED = 1  # the guided orders, the Random button's deployments and the scripted players' moves


@pytest.fixture(scope="module")
def browser():  # noqa: ANN201
    with chromium() as b:
        yield b


@pytest.fixture(scope="module")
def figures():  # noqa: ANN201
    """Tap feedback and redraw times over every game of the module, printed at its end."""
    got: dict[str, list[float]] = {"taps": [], "redraw": []}
    yield got
    if got["taps"]:
        print(f"\nall games: tap feedback p50 {percentile(got['taps'], .5):.0f} ms, p99 {percentile(got['taps'], .99):.0f} ms "
              f"over {len(got['taps'])} taps; redraw after an event p50 {percentile(got['redraw'], .5):.1f} ms, "
              f"p99 {percentile(got['redraw'], .99):.1f} ms over {len(got['redraw'])} events")


def _check_page(page, side: str, game: str) -> None:  # noqa: ANN001
    """What every seat's page must pass whatever its size."""
    assert own_side_at_bottom(page, side), f"{game}: {side}'s pieces are not at the bottom"
    sizes = tap_targets(page)
    assert min(sizes) >= 44, f"{game}: {side}'s stations of {min(sizes):.1f} px at the working zoom"
    assert not cut_labels(page), cut_labels(page)
    assert not clipped_text(page), clipped_text(page)
    assert not axe_violations(page), axe_violations(page)


def _check_verdict(pages: dict, table, ruling) -> bool:  # noqa: ANN001
    """After a clash, every seat's page shows the short verdict: the survivor named (and starred on the board), or
    both removed, or the bounce. True if there was a survivor."""
    survivor = {"attacker": ruling.side, "defender": ruling.defender_side}.get(ruling.outcome)
    for side, page in pages.items():
        seen_all(page, table, side)
        if survivor:
            page.wait_for_selector(f'#verdict[data-survivor="{survivor}"]', timeout=3000)
            assert survivor.capitalize() in page.inner_text("#verdict-text"), page.inner_text("#verdict-text")
        else:
            page.wait_for_selector(f"#verdict.outcome-{ruling.outcome}", timeout=3000)
        assert not cut_labels(page), cut_labels(page)  # ranks a clash made known fit too
        assert not clipped_text(page), clipped_text(page)
    mover = pages[ruling.side]
    if survivor:
        assert mover.locator(f'#board .flash-mark.survivor[data-station="{ruling.to}"] text').text_content() == "★"
    return bool(survivor)


@pytest.mark.parametrize("game", list(PLANS))
def test_newcomers_set_up_and_play_twenty_plies(browser, figures, monkeypatch, tmp_path: Path, game: str) -> None:  # noqa: ANN001
    seats = PLANS[game]
    errors: list[str] = []
    taps: list[float] = []
    with served(game, tmp_path) as (table, base):
        # the same game every run: the seats' private guided orders and the Random button's deployments from a seed
        table.session.setup_rng = random.Random(SEED)
        deployments = random.Random(SEED + 1)
        monkeypatch.setattr(seat_routes, "random", SimpleNamespace(SystemRandom=lambda: deployments))
        assert sorted(s.side for s in seats) == sorted(table.game.sides)
        pages = {s.side: open_page(browser, f"{base}/seat/{table.tokens[s.side]}", errors, viewport=s.viewport, axe=True)
                 for s in seats}
        for s in seats:
            set_up_on_page(pages[s.side], table, s.side, guided=s.guided, submit_first=s.submit_first, taps=taps)
        wait(lambda: table.state.phase == "play" and not table.session.status["waiting_for_board"], what="play")
        first = table.state.turn
        pages[first].wait_for_selector("#banner:has-text('Your move')")
        for s in seats:
            seen_all(pages[s.side], table, s.side)
            _check_page(pages[s.side], s.side, game)

        rng = random.Random(SEED)
        attacks = survivors = fixups = repeats = 0
        last_steps: dict[str, str] = {}
        for _ in range(PLIES):
            frm, to = choose(table, rng, prefer_attack=True, approach=True)
            ruling, fixed, todo, steps = play_move(pages[table.state.turn], table, frm, to, taps)
            fixups += fixed > 0
            repeats += bool(steps) and steps == last_steps.get(ruling.side)
            last_steps[ruling.side] = steps or last_steps.get(ruling.side, "")
            if ruling.kind == "attack":
                attacks += 1
                survivors += _check_verdict(pages, table, ruling)
        assert table.state.ply == PLIES and table.state.phase == "play"
        assert attacks >= 3 and survivors >= 1 and fixups >= 1, (attacks, survivors, fixups)
        check_tap_times(taps, f"{game}: ")
        redraw = [t for p in pages.values() for t in paint_times(p)["sync"]]
        print(f"\n{game}: {attacks} attacks, {fixups} fix-ups, {repeats} repeated; tap feedback p50 {percentile(taps, .5):.0f} ms, "
              f"max {max(taps):.0f} ms over {len(taps)} taps; redraw p50 {percentile(redraw, .5):.1f} ms")
        figures["taps"] += taps
        figures["redraw"] += redraw

        phone = next(s.side for s in seats if s.viewport == PHONE)
        if os.environ.get("FACEDOWN_SHOTS"):
            pages[phone].evaluate(HOME_VIEW)
            pages[phone].screenshot(path=str(Path(os.environ["FACEDOWN_SHOTS"]) / f"page-{game}-phone.png"))
        # the phone seat in Traditional Chinese: names fit their pieces, stations keep their size
        zh = open_page(browser, f"{base}/seat/{table.tokens[phone]}", errors, lang="zh-Hant")
        assert not cut_labels(zh), cut_labels(zh)
        assert not clipped_text(zh), clipped_text(zh)
        assert min(tap_targets(zh)) >= 44
        # a spectator on a desktop: the board fills the space it has (the whole width of its column, or the height
        # of the screen)
        desk = open_page(browser, base + "/", errors, viewport=DESKTOP)
        fill = desk.evaluate("""() => { const svg = document.getElementById('board').getBoundingClientRect();
            const col = document.getElementById('board-wrap').getBoundingClientRect();
            return Math.max(svg.width / col.width, svg.height / (window.innerHeight - col.top)); }""")
        assert fill > 0.85, f"{game}: the desktop board fills only {fill:.0%} of its space"
        for p in (*pages.values(), zh, desk):
            p.context.close()
    assert not errors, errors


# the page's first answer to a tap on the simulated board is held back until the test lets it through
HOLD_FIRST_TAP_ANSWER = """
window.__held = null;
window.__heldDone = false;
const fetchAsIs = window.fetch;
window.fetch = (url, opts) => {
  const answer = fetchAsIs(url, opts);
  if (!String(url).endsWith("/sim/toggle") || window.__held) return answer;
  return new Promise((resolve) => {
    window.__held = () => answer.then((r) => {
      const read = r.json.bind(r);
      // once the page has read the answer, what it does with it runs before the next task: then say so
      r.json = () => read().then((v) => { setTimeout(() => { window.__heldDone = true; }, 0); return v; });
      resolve(r);
    });
  });
};
"""


def test_a_late_answer_to_a_tap_does_not_undo_the_next_tap(browser, tmp_path: Path) -> None:  # noqa: ANN001
    """Lift a piece and put it straight back: if the answer to the lift comes after the put-back (a busy phone or
    network), the station keeps showing the piece (it showed it lifted again, and the checklist unticked a step)."""
    from controller.rules.deploy import random_deployment

    errors: list[str] = []
    with served("stratego_barrage", tmp_path) as (table, base):
        for side in table.game.sides:
            placement = random_deployment(table.game, side, random.Random(SEED), table.state.options)
            assert table.session.register_setup(side, placement) == []
            for s in placement:
                table.board.place(s)
        wait(lambda: table.state.phase == "play" and not table.session.status["waiting_for_board"], what="play")
        page = open_page(browser, f"{base}/seat/{table.tokens['red']}", errors, init=HOLD_FIRST_TAP_ANSWER)
        station = next(s for s, p in table.state.board.items() if p.owner == "red")
        tap(page, station)  # lifted: shown at once, the referee's answer held back
        wait(lambda: station not in table.board.raw_occupied(), what="the lift")
        tap_and_settle(page, table, station)  # put back, answered
        page.wait_for_selector(f'#board g.station[data-station="{station}"][data-occupied="1"]')
        page.evaluate("() => window.__held()")
        page.wait_for_function("() => window.__heldDone")
        shown = page.eval_on_selector(f'#board g.station[data-station="{station}"]',
                                      "g => [g.getAttribute('data-occupied'), g.hasAttribute('data-hand')]")
        assert shown == ["1", False], f"the late answer to the lift showed {station} lifted again: {shown}"
        assert table.state.ply == 0 and not table.session.status["waiting_for_board"]
        page.context.close()
    assert not errors, errors
