"""Guided setup that reveals nothing: each seat is asked for its pieces in a fresh random order of its own, always
completable under the game's setup rules, told only to that seat; nothing the other seats or the spectator receive
while a seat deploys pairs a station with a rank."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from controller.referee.session import Session
from controller.rules import game_ids, load_game, new_game
from controller.rules.deploy import allowed_stations, completable, guided_order
from controller.rules.setup import check_deployment
from harness.web_game import Game, sse_events
from web_referee.app import create_app


@pytest.mark.parametrize("game_id", game_ids())
def test_every_guided_order_is_the_whole_army_and_can_be_completed(game_id: str) -> None:
    game = load_game(game_id)
    opts = game.resolve_options(None)
    side = game.sides[-1]
    for seed in range(3):
        order = guided_order(game, side, random.Random(seed), opts)
        assert Counter(order) == Counter({p.id: p.count for p in game.pieces})
        # a seat that follows the order, each piece on a station of its choice that keeps the rest placeable,
        # always ends with a deployment the rules accept
        rng = random.Random(100 + seed)
        placement: dict[str, str] = {}
        for pid in order:
            spots = [s for s in allowed_stations(game, side, pid, opts) if s not in placement
                     and completable(game, side, {**placement, s: pid}, opts)]
            assert spots, f"{game_id}: nowhere left for {pid} after {len(placement)} pieces"
            placement[rng.choice(spots)] = pid
        assert check_deployment(game, side, placement, opts) == []


def test_completable_sees_a_dead_end():
    game = load_game("luzhanqi")
    opts = game.resolve_options(None)
    hqs = [s for s in allowed_stations(game, "red", "flag", opts)]
    assert len(hqs) == 2
    # both headquarters taken by other pieces: the flag has nowhere to go
    blocked = {hqs[0]: "mine", hqs[1]: "mine"}
    assert completable(game, "red", {hqs[0]: "mine"}, opts)
    assert not completable(game, "red", blocked, opts)


def test_twenty_fresh_games_do_not_always_start_with_the_same_piece() -> None:
    # each session draws its own order from a fresh random source (random.Random() seeded by the OS): twenty games
    # opening with the same piece has odds below 0.2**19 for Stratego's army (8 scouts of 40 the likeliest opener)
    firsts = [Session(new_game("stratego")).guided_order("red")[0] for _ in range(20)]
    assert len(set(firsts)) > 1, firsts
    session = Session(new_game("stratego"))
    assert session.guided_order("red") == session.guided_order("red")  # stable within a game
    with pytest.raises(ValueError, match="no seat 'green'"):
        session.guided_order("green")


def _no_rank_at_a_station(payload: object, pieces: set[str], where: str) -> None:
    """No piece id of the deploying seat's army anywhere in ``payload``: nothing to pair with the stations filling."""
    text = json.dumps(payload)
    assert "guided_order" not in text, f"{where}: another seat's guided order"
    found = [p for p in pieces if f'"{p}"' in text]
    assert not found, f"{where}: piece ids {found} in {text[:300]}"


@pytest.mark.parametrize("game_id", ["luzhanqi", "stratego"])
def test_the_order_reaches_only_its_seat_and_placing_pieces_tells_others_nothing(tmp_path: Path, game_id: str) -> None:
    game = Game(game_id, tmp_path, seed=5)
    app = create_app(game.table, keepalive_s=0.02)
    client = app.test_client()
    red, blue = game.table.game.sides[:2]
    tokens = game.table.tokens
    red_state = client.get(f"/api/{tokens[red]}/state").get_json()
    order = red_state["setup"]["guided_order"]
    assert Counter(order) == Counter({p.id: p.count for p in game.table.game.pieces})
    blue_order = client.get(f"/api/{tokens[blue]}/state").get_json()["setup"]["guided_order"]
    assert Counter(blue_order) == Counter(order)
    # red places its pieces on the board in its order, on stations of its choice; blue and the spectator watch
    opts = game.table.state.options
    rng = random.Random(7)
    placement: dict[str, str] = {}
    for pid in order:
        spots = [s for s in allowed_stations(game.table.game, red, pid, opts) if s not in placement
                 and completable(game.table.game, red, {**placement, s: pid}, opts)]
        station = rng.choice(spots)
        placement[station] = pid
        game.toggle(station)
    assert game.session.register_setup(red, placement) == []
    pieces = {p.id for p in game.table.game.pieces}
    last = game.session.log[-1].seq
    for role, key in ((blue, tokens[blue]), ("spectator", "public")):
        state = client.get(f"/api/{key}/state").get_json()
        own = state.pop("setup", None)  # blue's own setup help names its own pieces, never red's stations
        if own is not None:
            assert set(own["zone"]).isdisjoint(placement) and own["guided_order"] == blue_order
        state.pop("options", None)
        _no_rank_at_a_station(state, pieces, f"{role} state")
        events = sse_events(client, f"/api/{key}/events", last)
        assert any(e["event"] == "board" for e in events)
        for e in events:  # a pushed state is the role's own (web_referee.payloads.pushed_event): its own setup help
            pushed = e.get("state") or {}
            own = pushed.pop("setup", None)
            if own is not None:
                assert role == blue and own["guided_order"] == blue_order
            pushed.pop("options", None)
        _no_rank_at_a_station(events, pieces, f"{role} events")
    # red's own page keeps its order; after deploying it is no longer asked
    assert client.get(f"/api/{tokens[red]}/state").get_json()["setup"]["guided_order"] == []
