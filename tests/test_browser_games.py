"""Every game's board page on a 390 x 844 phone and a 1280 x 800 desktop, in a real headless Chromium: the seat's
own side at the bottom, every station at least 44 CSS px at the working zoom (four-player Junqi and land-sea-air
chess included), no piece label cut in English or Chinese, axe-core clean, the desktop board filling its column, and
a short game by taps with the verdict shown. (Luzhanqi's long game is in test_browser_web.py.)

With FACEDOWN_SHOTS=DIR set, each game's seat page is saved as DIR/page-<game>-phone.png (the README's pictures)."""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest
from browser_support import (
    DESKTOP,
    HOME_VIEW,
    axe_violations,
    chromium,
    cut_labels,
    open_page,
    own_side_at_bottom,
    seen_all,
    served,
    tap_and_settle,
    tap_targets,
    wait,
)

from controller.rules.deploy import random_deployment

GAMES = ("stratego", "stratego_barrage", "lattaque", "dover_patrol", "navy_cn", "navy_tw", "sanjunqi", "siguo")


@pytest.fixture(scope="module")
def browser():  # noqa: ANN201
    with chromium() as b:
        yield b


def _deploy_all(table) -> None:  # noqa: ANN001
    rng = random.Random(11)
    for side in table.game.sides:
        placement = random_deployment(table.game, side, rng, table.state.options)
        assert table.session.register_setup(side, placement) == [], side
        for s in placement:
            table.board.place(s)
    wait(lambda: table.state.phase == "play" and not table.session.status["waiting_for_board"], timeout=10, what="play")


def _one_ply(pages: dict, open_seat, table, rng: random.Random, attack: bool) -> None:  # noqa: ANN001
    """The side to move plays one move (an attack when asked and there is one) by taps on its own page, then does
    the fix-up the referee asks for."""
    from physical import fixup_stations

    side = table.state.turn
    page = pages.get(side) or pages.setdefault(side, open_seat(side))
    moves = []
    for m in table.state.legal_moves():
        trial = table.state.copy()
        if trial.apply(m).result is None:
            moves.append(m)
    attacks = [m for m in moves if m[1] in table.state.board]
    frm, to = rng.choice(attacks if attack and attacks else moves)
    before = {s: p.uid for s, p in table.state.board.items()}
    ply = table.state.ply
    tap_and_settle(page, table, frm)
    if to in table.state.board:
        tap_and_settle(page, table, to)
    tap_and_settle(page, table, to)
    wait(lambda: table.state.ply > ply, what=f"{side}'s ruling on {frm}-{to}")
    lifts, places = fixup_stations(before, frm, to, table.state)
    for s in (*lifts, *places):
        tap_and_settle(page, table, s)
    wait(lambda: not table.session.status["waiting_for_board"] and not table.session.status["mismatch"], what="the board to match")
    seen_all(page, table, side)
    assert page.locator("#verdict").is_visible()


@pytest.mark.parametrize("game", GAMES)
def test_every_board_is_playable_on_a_phone(browser, tmp_path: Path, game: str) -> None:  # noqa: ANN001
    errors: list[str] = []
    with served(game, tmp_path) as (table, base):
        _deploy_all(table)

        def open_seat(side: str, **kw):  # noqa: ANN202, ANN003
            return open_page(browser, f"{base}/seat/{table.tokens[side]}", errors, **kw)

        red = open_seat("red", axe=True)
        assert own_side_at_bottom(red, "red")
        sizes = tap_targets(red)
        assert min(sizes) >= 44, f"{game}: stations of {min(sizes):.1f} px at the working zoom"
        assert not cut_labels(red), cut_labels(red)
        assert not axe_violations(red), axe_violations(red)
        pages = {"red": red}
        rng = random.Random(5)
        for n in range(2):
            _one_ply(pages, open_seat, table, rng, attack=n == 1)
        seen_all(red, table, "red")
        if os.environ.get("FACEDOWN_SHOTS"):
            red.evaluate(HOME_VIEW)
            red.screenshot(path=str(Path(os.environ["FACEDOWN_SHOTS"]) / f"page-{game}-phone.png"))
        # the same seat in Traditional Chinese: names fit their pieces, stations keep their size
        zh = open_seat("red", lang="zh-Hant")
        assert not cut_labels(zh), cut_labels(zh)
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

