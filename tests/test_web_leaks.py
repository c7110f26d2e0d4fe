"""Leak tests: in random games played physically on the simulated board, no response to a spectator or to the
other seat, over any route (pages, JSON state, SSE events, setups, replay before the end), carries a hidden rank."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from controller.rules.state import ALL
from controller.setups_store import SetupStore
from harness.web_game import Game, sse_events
from web_referee.app import create_app


def known_types(game: Game, audience: str, owner: str) -> set[str]:
    """Truth from the engine: the kinds of ``owner``'s pieces that ``audience`` has been shown (on the board now, or
    revealed by a ruling)."""
    st = game.table.state
    out = {p.type for p in st.board.values() if p.owner == owner and (p.public or audience in p.known_to)}
    for r in st.history:
        out |= {rv.type for rv in r.reveals if rv.owner == owner and (ALL in rv.to or audience in rv.to)}
    return out


def hidden_uids(game: Game, audience: str) -> set[int]:
    return {p.uid for p in game.table.state.board.values()
            if p.owner != audience and not p.public and audience not in p.known_to}


def walk(obj: Any):  # noqa: ANN201
    if isinstance(obj, dict):
        yield obj
        for v in obj.values():
            yield from walk(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from walk(v)


def assert_no_leak(game: Game, audience: str, payload: Any, where: str) -> None:
    sides = game.table.game.sides
    others = [s for s in sides if s != audience]
    hidden = hidden_uids(game, audience)
    allowed = {o: known_types(game, audience, o) for o in others}
    for d in walk(payload):
        assert "placement" not in d and "deployments" not in d, f"{where}: a deployment reached {audience}"
        if d.get("uid") in hidden:
            assert "piece" not in d, f"{where}: {audience} got hidden piece {d}"
        for owner_key, piece_key in (("owner", "piece"), ("side", "piece"), ("defender_side", "defender_piece"),
                                     ("player", "piece"), ("defender", "defender_piece")):
            owner = d.get(owner_key)
            if owner in others and piece_key in d:
                assert d[piece_key] in allowed[owner], f"{where}: {audience} learned {owner}'s {d[piece_key]} ({d})"


def check_all_routes(game: Game, client, audience: str, key: str) -> None:  # noqa: ANN001
    page = client.get("/" if audience == "spectator" else f"/seat/{key}")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    pieces = game.table.game.pieces
    assert not any(re.search(rf"\b{re.escape(p.id)}\b", html) for p in pieces if len(p.id) > 3), "a piece id in the page"
    state = client.get(f"/api/{key}/state").get_json()
    assert_no_leak(game, audience, {k: v for k, v in state.items() if k != "setup"}, "state")
    if audience == "spectator":
        assert all("piece" not in p or p["public"] for p in state["view"]["pieces"]) or game.table.state.options.get("reveal") == "open"
    last = game.session.log[-1].seq
    for ev in sse_events(client, f"/api/{key}/events", last):
        assert_no_leak(game, audience, ev, f"event {ev['seq']} {ev['event']}")
    if game.table.state.phase != "over":
        assert client.get(f"/api/{key}/replay").status_code == 409
        assert client.get(f"/api/{key}/record.txt").status_code == 409
    assert client.get(f"/api/{key}/qr/red.svg").status_code == 403
    if audience != "spectator":
        text = json.dumps(client.get(f"/api/{key}/setups").get_json())
        assert all(s["side"] == audience for s in json.loads(text)["setups"])


@pytest.mark.parametrize(("game_id", "seed", "options"), [
    ("luzhanqi", 1, None), ("luzhanqi", 2, {"reveal": "silent"}), ("stratego", 3, None), ("stratego", 4, {"reveal": "silent"}),
    ("lattaque", 5, None),
])
def test_no_hidden_rank_reaches_the_spectator_or_the_other_seat(tmp_path: Path, game_id: str, seed: int, options) -> None:  # noqa: ANN001
    game = Game(game_id, tmp_path, options=options, seed=seed)
    store = SetupStore(tmp_path / "setups")
    app = create_app(game.table, setups=store, keepalive_s=0.02)
    client = app.test_client()
    red, blue = game.table.game.sides[:2]
    red_placement = game.deploy(red)
    store.save(game.table.game, red, "mine", red_placement)
    # during setup: red's deployment is registered, blue's is not
    check_all_routes(game, client, "spectator", "public")
    check_all_routes(game, client, blue, game.table.tokens[blue])
    game.start()
    for ply in range(60):
        if not game.random_move():
            break
        if ply % 7 == 0:
            check_all_routes(game, client, "spectator", "public")
            check_all_routes(game, client, blue, game.table.tokens[blue])
            check_all_routes(game, client, red, game.table.tokens[red])
    assert game.table.state.ply > 0
    check_all_routes(game, client, "spectator", "public")
    check_all_routes(game, client, blue, game.table.tokens[blue])
    check_all_routes(game, client, red, game.table.tokens[red])
