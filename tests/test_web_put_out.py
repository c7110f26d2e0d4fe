"""The arbiter puts a seat out of a four-seat game from the web page (a club's time rule); two-seat games refuse it."""

from __future__ import annotations

from pathlib import Path

from test_web_api import csrf_of, post

from harness.web_game import Game
from web_referee.app import create_app


def _client(game: Game):  # noqa: ANN202
    app = create_app(game.table, keepalive_s=0.05)
    app.testing = True
    return app.test_client()


def test_arbiter_puts_a_seat_out_of_a_four_seat_game(tmp_path: Path) -> None:
    game = Game("siguo", tmp_path)
    game.start()
    client = _client(game)
    arb = game.table.tokens["arbiter"]
    csrf = csrf_of(client, f"/arbiter/{arb}")
    assert post(client, arb, "/arbiter/out", {"side": "orange"}, csrf).status_code == 400
    seat_csrf = csrf_of(client, f"/seat/{game.table.tokens['red']}")
    assert post(client, game.table.tokens["red"], "/arbiter/out", {"side": "blue"}, seat_csrf).status_code == 403
    r = post(client, arb, "/arbiter/out", {"side": "blue", "reason": "time"}, csrf)
    assert r.status_code == 200, r.get_json()
    state = game.table.state
    assert "blue" in state.out and not any(p.owner == "blue" for p in state.board.values())
    events = [e.public for e in game.table.session.log]
    assert any(e["event"] == "fixup" and e["steps"] for e in events)
    assert post(client, arb, "/arbiter/out", {"side": "blue"}, csrf).status_code == 409  # already out


def test_two_seat_games_end_instead(tmp_path: Path) -> None:
    game = Game("stratego", tmp_path)
    game.start()
    client = _client(game)
    arb = game.table.tokens["arbiter"]
    csrf = csrf_of(client, f"/arbiter/{arb}")
    assert post(client, arb, "/arbiter/out", {"side": "blue"}, csrf).status_code == 409
