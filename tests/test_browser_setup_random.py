"""In a real headless Chromium, a seat fills its deployment with the Random button, lays it out on the simulated
board (with its progress shown) and submits it. Fails (never skips) under CI without a browser."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from browser_support import chromium, open_page, served, wait
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
