"""The issue's newcomer in a real Chromium: Red attacks and loses, and before doing the fix-up a hand lifts an
unrelated piece and puts it back. While it is off, every page lists it first and the fix-up's own steps after it.
Once that mismatch settles, every page (phone and desktop seats, the spectator) shows the fix-up checklist again,
the banner says the board comes first, and the console and the voice say the steps left once more; the fix-up then
ticks off step by step and play goes on."""

from __future__ import annotations

import io
import random
from pathlib import Path

from browser_support import DESKTOP, PHONE, chromium, open_page, served, tap_and_settle, wait

from controller.announce.console import ConsoleAnnouncer
from controller.announce.voice import phrase
from controller.rules.deploy import random_deployment


def _swap(placement: dict[str, str], station: str, piece: str) -> dict[str, str]:
    """``placement`` with a ``piece`` on ``station`` (swapped with whatever piece was there)."""
    out = dict(placement)
    other = next(s for s, p in out.items() if p == piece)
    out[other], out[station] = out[station], piece
    return out


def test_a_stray_lift_during_a_fixup_keeps_the_checklist_on_every_page(tmp_path: Path) -> None:
    errors: list[str] = []
    with chromium() as browser, served("stratego", tmp_path) as (table, base):
        console = io.StringIO()
        table.add_announcer(ConsoleAnnouncer(console, game=table.game))
        said: list[dict] = []
        table.session.subscribe(lambda ev: said.append(ev.public) if not ev.audience else None)
        game, rng = table.game, random.Random(11)
        # Red's scout on a4 can run up the open a-file onto Blue's marshal on a7, and loses
        red = _swap(random_deployment(game, "red", rng, table.state.options), "a4", "scout")
        blue = _swap(random_deployment(game, "blue", rng, table.state.options), "a7", "marshal")
        assert table.session.register_setup("red", red) == [] and table.session.register_setup("blue", blue) == []
        for s in sorted(set(red) | set(blue)):
            table.board.place(s)
        wait(lambda: table.state.phase == "play" and not table.session.status["waiting_for_board"], what="play")
        assert table.state.turn == "red"
        pages = {
            "red": open_page(browser, f"{base}/seat/{table.tokens['red']}", errors, viewport=PHONE),
            "blue": open_page(browser, f"{base}/seat/{table.tokens['blue']}", errors, viewport=DESKTOP),
            "spectator": open_page(browser, f"{base}/", errors, viewport=DESKTOP),
        }
        phone = pages["red"]
        for s in ("a4", "a7", "a7"):  # lift the scout, lift the marshal, put the scout down on a7
            tap_and_settle(phone, table, s)
        wait(lambda: table.state.ply == 1, what="the ruling")
        assert table.state.history[-1].outcome == "defender"
        for page in pages.values():
            page.wait_for_selector('#guidance:not([hidden]) #fix-list li[data-station="a7"]')
        steps = [(s["station"], s["action"]) for s in table.view("spectator").pending["steps"]]
        assert steps == [("a7", "remove"), ("a7", "put_back")], steps

        # the stray hand: an unrelated Blue piece lifted and put back
        stray = "j10"
        tap_and_settle(phone, table, stray)
        wait(lambda: table.session.mismatch is not None, what="the mismatch")
        for name, page in pages.items():
            page.wait_for_selector(f'#fix-list li[data-station="{stray}"]')
            # the stray first, then the fix-up's own two steps still to do: the whole of what is left, on every page
            listed = page.eval_on_selector_all("#fix-list li.todo", "els => els.map(e => e.dataset.station)")
            assert listed == [stray, "a7", "a7"], (name, listed, page.inner_text("#guidance"))
        heard = len(said)
        tap_and_settle(phone, table, stray)
        wait(lambda: table.session.mismatch is None, what="the board explainable again")
        for name, page in pages.items():
            page.wait_for_selector('#guidance:not([hidden]) #fix-list li[data-station="a7"]')
            assert page.locator("#fix-list li.todo").count() == 2, (name, page.inner_text("#guidance"))
            assert "Fix the board first" in page.inner_text("#banner"), (name, page.inner_text("#banner"))
        again = [e for e in said[heard:] if e.get("event") == "fixup"]
        assert again and again[-1].get("again") and [s["station"] for s in again[-1]["steps"]] == ["a7", "a7"]
        spoken = phrase(again[-1], "en", game)
        assert spoken and "A7" in spoken.upper()
        assert console.getvalue().count("a7: take Red's piece off") >= 2, console.getvalue()  # said once more

        # the fix-up, step by step: the first step ticks as the referee sees a7 emptied
        tap_and_settle(phone, table, "a7")
        for page in pages.values():
            page.wait_for_selector('#fix-list li.done[data-station="a7"]')
        tap_and_settle(phone, table, "a7")
        wait(lambda: table.session.pending is None, what="the fix-up done")
        for name, page in pages.items():
            page.wait_for_selector("#guidance", state="hidden")
            page.wait_for_selector("#banner:has-text('Blue')")
            assert "Fix the board first" not in page.inner_text("#banner"), name
    assert not errors, errors
