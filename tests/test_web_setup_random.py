"""A seat can start its deployment from a random valid one (nothing is registered until it submits)."""

from __future__ import annotations

from pathlib import Path

from test_web_api import csrf_of, post

from controller.rules.setup import check_deployment
from harness.web_game import Game
from web_referee.app import create_app


def test_random_deployment_for_a_seat(tmp_path: Path) -> None:
    game = Game("luzhanqi", tmp_path)
    app = create_app(game.table, keepalive_s=0.05)
    app.testing = True
    client = app.test_client()
    red = game.table.tokens["red"]
    csrf = csrf_of(client, f"/seat/{red}")
    r = post(client, red, "/setup/random", {}, csrf)
    assert r.status_code == 200
    placement = r.get_json()["placement"]
    assert check_deployment(game.table.game, "red", placement, game.table.state.options) == []
    assert "red" not in game.table.state.deployments  # only a proposal
    assert post(client, "public", "/setup/random", {}, "").status_code == 403
    assert post(client, red, "/setup/random", {}, "forged").status_code == 403
    r2 = post(client, red, "/setup", {"placement": placement}, csrf)
    assert r2.status_code == 200 and "red" in game.table.state.deployments
