"""In a real headless Chromium, a seat fills its deployment with the Random button, lays it out on the simulated
board (with its progress shown) and submits it. Fails (never skips) under CI without a browser."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser_support import chromium, open_page, served, tap, wait
from playwright.sync_api import expect


@pytest.fixture(scope="module")
def browser():  # noqa: ANN201
    with chromium() as b:
        yield b


def test_random_button_fills_a_valid_deployment(browser, tmp_path: Path) -> None:  # noqa: ANN001
    errors: list[str] = []
    with served("luzhanqi", tmp_path) as (table, base):
        red = open_page(browser, f"{base}/seat/{table.tokens['red']}", errors)
        red.wait_for_selector("#setup-prompt:has-text('Place your')")
        # two sentences, each ended by its stop (issue 37: "… 40 pieces to go Tap a station …" ran them together)
        prompt = red.inner_text("#setup-prompt")
        assert re.fullmatch(r"Place your [A-Za-z ]+: \d+ left · 25 pieces to go\. Tap a station of your area \(green\)\.", prompt), prompt
        red.click("#setup-random")
        expect(red.locator("#board g.piece.planned")).to_have_count(25)
        red.wait_for_selector("#setup-submit:not([disabled])")
        red.click("#setup-layout")
        wait(lambda: len(table.board.raw_occupied()) == 25, what="the simulated board to hold red's army")
        red.wait_for_selector("#setup-progress-text:has-text('25 of 25')")
        expect(red.locator("#board g.piece.planned.placed")).to_have_count(25)
        red.click("#setup-submit")
        red.wait_for_selector("#setup-prompt:has-text('registered')")
        assert "red" in table.state.deployments
        assert red.inner_text("#setup-prompt").endswith("Waiting for Blue to deploy.")
        assert errors == []


def test_a_late_answer_about_an_unfinished_plan_does_not_hold_submit_disabled(browser, tmp_path: Path) -> None:  # noqa: ANN001
    """The page asks the referee about its plan a moment after each change, and on a loaded machine the answers can
    come back out of order: an unfinished plan's "pieces missing" landing after the finished plan's answer held
    Submit disabled for good (what fits a CI flake of the Stratego Barrage newcomers' test, Submit disabled after
    the last piece was placed). Here the answer about the plan with one piece taken back is held until the finished
    plan's answer is in: it comes last, and must neither disable Submit nor list its "piece missing"."""
    errors: list[str] = []
    with served("luzhanqi", tmp_path) as (table, base):
        red = open_page(browser, f"{base}/seat/{table.tokens['red']}", errors)
        held: list = []

        def hold_unfinished(route) -> None:  # noqa: ANN001
            if len(route.request.post_data_json["placement"]) < 25:
                held.append(route)
            else:
                route.continue_()

        red.route("**/api/*/setup/check", hold_unfinished)
        red.click("#setup-random")
        expect(red.locator("#board g.piece.planned")).to_have_count(25)
        red.wait_for_selector("#setup-submit:not([disabled])")
        station = red.get_attribute("#board g.piece.planned", "data-station")
        with red.expect_request("**/api/*/setup/check"):
            tap(red, station)  # a piece taken back: the plan is unfinished, its answer is held
        for _ in range(100):  # the route's handler runs while Playwright is waited on, not in a Python loop
            if held:
                break
            red.wait_for_timeout(50)
        assert len(held) == 1, "the unfinished plan's check was not held"
        expect(red.locator("#setup-submit")).to_be_disabled()
        with red.expect_response("**/api/*/setup/check") as finished:
            tap(red, station)  # the same piece put back: the plan is whole again, its answer comes at once
        assert finished.value.json() == {"problems": []}
        with red.expect_response("**/api/*/setup/check") as late:
            held.pop().continue_()
        assert late.value.json()["problems"], "the unfinished plan's answer names what is missing"
        red.wait_for_timeout(200)  # the late answer has been handled by the page
        expect(red.locator("#setup-submit")).to_be_enabled()
        assert red.inner_text("#setup-problems").strip() == ""
        red.click("#setup-submit", timeout=3000)
        red.wait_for_selector("#setup-prompt:has-text('registered')")
        assert "red" in table.state.deployments
        assert errors == []
