"""In a real headless Chromium, a seat fills its deployment with the Random button, lays it out on the simulated
board and submits it. Fails (never skips) under CI without a browser."""

from __future__ import annotations

from playwright.sync_api import expect

from tests.test_browser_web import _page, _wait, browser, served  # noqa: F401  (fixtures)


def test_random_button_fills_a_valid_deployment(browser, served) -> None:  # noqa: F811
    table, base = served
    errors: list[str] = []
    red = _page(browser, f"{base}/seat/{table.tokens['red']}", errors)
    red.wait_for_selector("#setup-prompt:has-text('Place your')")
    red.click("#setup-random")
    expect(red.locator("#board g.piece.planned")).to_have_count(25)
    red.wait_for_selector("#setup-submit:not([disabled])")
    red.click("#setup-layout")
    _wait(lambda: len(table.board.raw_occupied()) == 25, what="the simulated board to hold red's army")
    red.click("#setup-submit")
    red.wait_for_selector("#setup-prompt:has-text('registered')")
    assert "red" in table.state.deployments
    assert errors == []
