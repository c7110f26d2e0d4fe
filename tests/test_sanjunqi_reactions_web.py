"""Optional reactions on the phone page (land-sea-air chess with option ``reactions: ask``, seed 003 s10/s18): the
owning seat alone is asked whether its AA gun fires; its answer is journaled, judged by the engine, announced and
replayed; an offer lapses when its seat moves; other roles, forged tokens and stale offers are refused; a seat may
choose to react automatically. Played physically on the simulated board through the Flask test client."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from test_sanjunqi_physical import RED, _turned
from test_web_api import csrf_of, post
from test_web_leaks import check_all_routes

from controller.messages import render
from controller.referee.journal import EventError, Journal, check_event
from controller.referee.replay import rebuild
from controller.referee.table import open_table
from controller.rules import ARBITER, view
from controller.rules.reactions import offers
from controller.setups_store import SetupStore
from harness.web_game import Game, sse_events
from web_referee.app import create_app

BLUE = {_turned()[s]: p for s, p in RED.items()}
# Red's fighter flies a7 -> f7 and stops within two steps of Blue's AA gun on m7: Blue is asked whether it fires.
FLIGHT = ("a7", "f7")
GUARD, TARGET = "m7", "f7"


def _game(tmp_path: Path, **options: object) -> Game:
    g = Game("sanjunqi", tmp_path, options={"reactions": "ask", **options})
    assert g.session.register_setup("red", RED) == []
    assert g.session.register_setup("blue", BLUE) == []
    g.lay_out()
    assert g.table.state.phase == "play" and g.table.state.turn == "red"
    return g


@pytest.fixture
def game(tmp_path: Path) -> Game:
    return _game(tmp_path)


@pytest.fixture
def client(game: Game, tmp_path: Path):  # noqa: ANN201
    app = create_app(game.table, setups=SetupStore(tmp_path / "setups"), keepalive_s=0.03)
    app.testing = True
    return app.test_client()


def _key(game: Game, role: str) -> str:
    return game.table.tokens[role]


def _answer(client, game: Game, side: str, body: dict):  # noqa: ANN001, ANN202
    return post(client, _key(game, side), "/reaction", body, csrf_of(client, f"/seat/{_key(game, side)}"))


def _quiet_move(game: Game) -> tuple[str, str]:
    """A move of the side to move that captures nothing, needs no fix-up and offers no reaction."""
    st = game.table.state
    for frm, to in st.legal_moves():
        if to in st.board:
            continue
        trial = st.copy()
        r = trial.apply((frm, to))
        if not r.removed and not r.reveals and not r.notices and not offers(trial) and to in trial.board and frm not in trial.board:
            return frm, to
    raise AssertionError("no quiet move")


def _journal_kinds(game: Game) -> list[str]:
    return [e.kind for e in game.table.journal.events(game.table.game_id)]


def test_the_offer_goes_only_to_its_owner_and_names_no_hidden_rank(game: Game, client) -> None:  # noqa: ANN001
    game.move(*FLIGHT)
    blue = client.get(f"/api/{_key(game, 'blue')}/state").get_json()
    [offer] = blue["reactions"]["offers"]
    assert (offer["guard"], offer["target"], offer["guard_piece"]) == (GUARD, TARGET, "aa_gun")
    assert offer["say"] == {"code": "reaction.fire_at_aircraft", "params": {"owner": "blue", "piece": "aa_gun", "station": GUARD, "at": TARGET}}
    assert render(offer["say"], "en", game.table.game) == f"Your AA Gun at {GUARD} may fire at the aircraft at {TARGET}"
    assert render(offer["say"], "zh-Hans", game.table.game) == f"你在 {GUARD} 的高射炮可以向 {TARGET} 的飞机开火"
    assert (render(offer["accept"], "en"), render(offer["decline"], "en")) == ("Fire", "Hold")
    assert blue["reactions"]["automatic"] is False
    # the target is only "the aircraft": which one (fighter or recon plane) blue has not been shown
    assert "fighter" not in json.dumps(offer) and "recon" not in json.dumps(offer)
    red = client.get(f"/api/{_key(game, 'red')}/state").get_json()
    assert red["reactions"]["offers"] == []
    spectator = client.get("/api/public/state").get_json()
    assert "reactions" not in spectator and "offers" not in spectator["view"]
    # the live streams: blue is told privately; red and the spectator never hear of it
    last = game.session.log[-1].seq
    flight = next(e.seq for e in game.session.log if e.ruling is not None)
    streams = {role: sse_events(client, f"/api/{key}/events?after={flight - 1}", last) for role, key in
               (("blue", _key(game, "blue")), ("red", _key(game, "red")), ("spectator", "public"))}
    told = [e for e in streams["blue"] if e["event"] == "offer"]
    assert [e["offer"]["id"] for e in told] == [offer["id"]] and told[0]["say"]["params"]["offer"] == offer["say"]
    for role in ("red", "spectator"):
        # each event's own fields; the role's pushed state (which names every occupied station, m7 included) must
        # carry no offer either
        heard = [e for e in streams[role] if "offer" in e or GUARD in json.dumps({k: v for k, v in e.items() if k != "state"})
                 or (e.get("state", {}).get("reactions") or {}).get("offers")]
        assert streams[role] and not heard, f"{role} heard of blue's offer: {heard}"
    for role, key in (("spectator", "public"), ("red", _key(game, "red")), ("blue", _key(game, "blue"))):
        check_all_routes(game, client, role, key)


def test_firing_takes_the_aircraft_off_publicly_with_a_fixup_and_replays(game: Game, client) -> None:  # noqa: ANN001
    game.move(*FLIGHT)
    [offer] = offers(game.table.state, "blue")
    r = _answer(client, game, "blue", {"offer": offer.id, "react": True, "target": TARGET})
    assert r.status_code == 200, r.get_json()
    assert r.get_json() == {"ok": True, "offer": offer.id, "accepted": True, "acted": True}
    st = game.table.state
    assert TARGET not in st.board and st.board[GUARD].type == "aa_gun" and st.board[GUARD].public
    assert st.turn == "blue" and offers(st) == []
    # the public outcome: the gun is shown to everyone, the aircraft's kind is not; the table is told to take it off
    notice = next(e.public for e in reversed(game.session.log) if e.public.get("reaction") == "aa_engage")
    assert notice["event"] == "notice" and notice["reveals"] == [{"station": GUARD, "owner": "blue", "piece": "aa_gun"}]
    assert notice["removed"] == [{"station": TARGET, "owner": "red"}]
    fixup = game.session.log[-1].public
    assert fixup["event"] == "fixup" and [(s["station"], s["action"], s["owner"]) for s in fixup["steps"]] == [(TARGET, "remove", "red")]
    spectator = client.get("/api/public/state").get_json()
    assert [{k: v for k, v in s.items() if k != "done"} for s in spectator["guidance"]["steps"]] == fixup["steps"]
    assert [s["done"] for s in spectator["guidance"]["steps"]] == [False]  # the aircraft still stands there
    assert {"station": GUARD, "owner": "blue", "piece": "aa_gun", "uid": st.board[GUARD].uid, "public": True} in spectator["view"]["pieces"]
    # the referee waits for the board, then blue moves on
    assert game.session.status["turn"] == "blue"
    game.lay_out()
    assert not game.session.recognizer.fixing and game.session.log[-1].public == {"event": "turn", "player": "blue", "say": {"code": "event.turn", "params": {"player": "blue"}}}
    game.move(*_quiet_move(game))
    assert game.table.state.ply == 2
    for role, key in (("spectator", "public"), ("red", _key(game, "red")), ("blue", _key(game, "blue"))):
        check_all_routes(game, client, role, key)
    # the journal holds the answer, and replaying it gives the same game
    events = game.table.journal.events(game.table.game_id)
    [answered] = [e for e in events if e.kind == "reaction"]
    assert answered.data == {"action": "answer", "side": "blue", "offer": offer.id, "accept": True}
    assert view(rebuild(events), ARBITER) == view(game.table.state, ARBITER)
    # without the answer the replay would differ: the answer is what removed the fighter
    without = rebuild([e for e in events if e.kind != "reaction"])
    assert TARGET in without.board
    record = client.get(f"/api/{game.table.tokens['arbiter']}/record.txt").get_data(as_text=True)
    assert f"Blue takes reaction offer {offer.id}" in record


def test_holding_is_private_and_journaled(game: Game, client) -> None:  # noqa: ANN001
    game.move(*FLIGHT)
    [offer] = offers(game.table.state, "blue")
    seq = game.session.log[-1].seq
    r = _answer(client, game, "blue", {"offer": offer.id, "react": False})
    assert r.status_code == 200 and r.get_json()["acted"] is False
    assert game.table.state.board[TARGET].owner == "red" and not game.table.state.board[GUARD].public
    new = game.session.since(seq)
    assert [(e.public["event"], e.audience) for e in new] == [("reaction", ("blue",))]
    assert new[0].public["say"] == {"code": "reaction.held", "params": {"owner": "blue", "piece": "aa_gun", "station": GUARD, "at": TARGET}}
    # the same offer cannot be answered twice
    again = _answer(client, game, "blue", {"offer": offer.id, "react": True})
    assert again.status_code == 409
    assert view(rebuild(game.table.journal.events(game.table.game_id)), ARBITER) == view(game.table.state, ARBITER)


def test_an_offer_lapses_when_its_seat_moves(game: Game, client) -> None:  # noqa: ANN001
    game.move(*FLIGHT)
    [offer] = offers(game.table.state, "blue")
    game.move(*_quiet_move(game))
    assert offers(game.table.state) == []
    closed = [e for e in game.session.log if e.public["event"] == "offer_closed"]
    assert [(e.public["offer"], e.audience) for e in closed] == [(offer.id, ("blue",))]
    assert closed[0].public["reason"] == {"code": "reaction.closed_you_moved", "params": {}}
    assert client.get(f"/api/{_key(game, 'blue')}/state").get_json()["reactions"]["offers"] == []
    r = _answer(client, game, "blue", {"offer": offer.id, "react": True})
    assert r.status_code == 409 and "no open reaction offer" in r.get_json()["error"]
    assert TARGET in game.table.state.board
    assert "reaction" not in _journal_kinds(game)  # a lapse is never journaled: replay lapses it again by itself
    replayed = rebuild(game.table.journal.events(game.table.game_id))
    assert offers(replayed) == [] and view(replayed, ARBITER) == view(game.table.state, ARBITER)


def test_other_roles_forged_tokens_and_bad_answers_are_refused(game: Game, client) -> None:  # noqa: ANN001
    game.move(*FLIGHT)
    [offer] = offers(game.table.state, "blue")
    blue, red, arb = _key(game, "blue"), _key(game, "red"), game.table.tokens["arbiter"]
    body = {"offer": offer.id, "react": True}
    # another seat: the same answer as for an offer that does not exist, so probing numbers tells red nothing
    r_red = _answer(client, game, "red", body)
    r_none = _answer(client, game, "red", {"offer": 999, "react": True})
    assert r_red.status_code == r_none.status_code == 409
    assert r_red.get_json()["error"].replace(str(offer.id), "N") == r_none.get_json()["error"].replace("999", "N")
    # the spectator and the arbiter are not seats
    assert post(client, "public", "/reaction", body, "x").status_code == 403
    r = post(client, arb, "/reaction", body, csrf_of(client, f"/arbiter/{arb}"))
    assert r.status_code == 403 and "seat" in r.get_json()["error"]
    # forged token, missing or wrong CSRF token, another seat's CSRF token, a cross-site request
    assert post(client, "0123456789abcdef01234567", "/reaction", body, "x").status_code == 403
    assert client.post(f"/api/{blue}/reaction", json=body).status_code == 403
    assert post(client, blue, "/reaction", body, csrf_of(client, f"/seat/{red}")).status_code == 403
    csrf = csrf_of(client, f"/seat/{blue}")
    assert post(client, blue, "/reaction", body, csrf, **{"Sec-Fetch-Site": "cross-site"}).status_code == 403
    # malformed answers
    for bad in ({"offer": str(offer.id), "react": True}, {"offer": offer.id, "react": "yes"}, {"offer": True, "react": True},
                {"react": True}, {"offer": offer.id, "react": True, "target": 7}):
        r = post(client, blue, "/reaction", bad, csrf)
        assert r.status_code == 400 and r.get_json()["error"], bad
    # a stale page naming another target
    r = post(client, blue, "/reaction", {**body, "target": "h4"}, csrf)
    assert r.status_code == 409
    # nothing changed: the offer is still open and still blue's, and nothing was journaled
    assert offers(game.table.state, "blue") == [offer] and TARGET in game.table.state.board
    assert "reaction" not in _journal_kinds(game)
    assert post(client, blue, "/reaction", body, csrf).status_code == 200


def test_react_automatically_is_a_journaled_standing_choice(game: Game, client) -> None:  # noqa: ANN001
    blue = _key(game, "blue")
    csrf = csrf_of(client, f"/seat/{blue}")
    r = post(client, blue, "/reaction/auto", {"on": True}, csrf)
    assert r.status_code == 200 and r.get_json() == {"ok": True, "automatic": True}
    assert client.get(f"/api/{blue}/state").get_json()["reactions"]["automatic"] is True
    assert client.get(f"/api/{_key(game, 'red')}/state").get_json()["reactions"]["automatic"] is False
    told = game.session.log[-1]
    assert told.public["event"] == "auto_react" and told.audience == ("blue",)
    assert post(client, blue, "/reaction/auto", {"on": "yes"}, csrf).status_code == 400
    assert post(client, "public", "/reaction/auto", {"on": True}, "x").status_code == 403
    # red's fighter stops in reach: blue's gun fires at once, in the move's own ruling; nobody is asked
    game.move(*FLIGHT)
    st = game.table.state
    assert offers(st) == [] and TARGET not in st.board
    ruling = next(e for e in reversed(game.session.log) if e.ruling is not None)
    assert any(n["code"] == "notice.engage" and n["params"]["at"] == TARGET for n in ruling.public["notices"])
    events = game.table.journal.events(game.table.game_id)
    assert [e.data for e in events if e.kind == "reaction"] == [{"action": "auto", "side": "blue", "auto": True}]
    assert view(rebuild(events), ARBITER) == view(st, ARBITER)
    # an undo takes the move back but keeps the standing choice
    game.session.undo(game.table.rebuild)
    assert game.table.state.ply == 0 and client.get(f"/api/{blue}/state").get_json()["reactions"]["automatic"] is True
    # switched off again: asked once more
    assert post(client, blue, "/reaction/auto", {"on": False}, csrf).status_code == 200
    game.lay_out()
    game.move(*FLIGHT)
    assert [o.target for o in offers(game.table.state, "blue")] == [TARGET]


def test_without_ask_there_is_nothing_to_answer(tmp_path: Path) -> None:
    g = _game(tmp_path, reactions="automatic")
    client = create_app(g.table, setups=SetupStore(tmp_path / "setups")).test_client()
    blue = _key(g, "blue")
    assert "reactions" not in client.get(f"/api/{blue}/state").get_json()
    r = post(client, blue, "/reaction/auto", {"on": True}, csrf_of(client, f"/seat/{blue}"))
    assert r.status_code == 409 and "automatic" in r.get_json()["error"]


def test_an_answer_survives_a_restart_and_an_undo_takes_it_back_with_its_move(game: Game, tmp_path: Path) -> None:
    game.move(*FLIGHT)
    [offer] = offers(game.table.state, "blue")
    game.session.answer_reaction("blue", offer.id, True)
    game.lay_out()
    after = view(game.table.state, ARBITER)
    # the referee restarts (a power cut): the journal rebuilds the same game
    game.table.journal.close()
    game.table.journal_lock.release()  # the process is gone, and the kernel drops its lock on the journal
    resumed = open_table("sanjunqi", board=game.board, board_kind="sim", journal_path=tmp_path / "journal.sqlite")
    try:
        assert resumed.game_id == game.table.game_id and view(resumed.state, ARBITER) == after
        # an undo takes back the flight and the shot with it: the fighter is back on a7, nobody is asked
        resumed.session.undo(resumed.rebuild)
        st = resumed.state
        assert st.ply == 0 and st.board["a7"].type == "fighter" and TARGET not in st.board and offers(st) == []
        assert not st.board[GUARD].public
    finally:
        resumed.journal.close()


def test_the_journal_checks_reaction_events_and_upgrades_an_older_journal(tmp_path: Path) -> None:
    check_event("reaction", {"action": "answer", "side": "blue", "offer": 1, "accept": False})
    check_event("reaction", {"action": "auto", "side": "blue", "auto": True})
    for bad in ({"action": "fire", "side": "blue"}, {"action": "answer", "side": "blue", "offer": "1", "accept": True},
                {"action": "answer", "side": "blue", "offer": 1}, {"action": "answer", "offer": 1, "accept": True},
                {"action": "answer", "side": "blue", "offer": True, "accept": True}, {"action": "auto", "side": "blue", "auto": 1}):
        with pytest.raises(EventError):
            check_event("reaction", bad)
    # a journal written before the reaction kind existed (schema 1: its events table refuses the kind)
    path = tmp_path / "old.sqlite"
    with Journal(path) as j:
        gid = j.new_game("sanjunqi", {"reactions": "ask"}, board="sim")
        j.append(gid, "deploy", {"side": "red", "placement": RED})
    db = sqlite3.connect(path)
    sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()[0]
    db.executescript("PRAGMA writable_schema = ON;")
    db.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'events'", (sql.replace(", 'reaction'", ""),))
    db.executescript("PRAGMA writable_schema = OFF; PRAGMA user_version = 1;")
    db.close()
    db = sqlite3.connect(path)
    with pytest.raises(sqlite3.IntegrityError):
        db.execute("INSERT INTO events (game_id, kind, data, time) VALUES (1, 'reaction', '{}', 0)")
    db.close()
    with Journal(path) as j:
        j.append(gid, "reaction", {"action": "auto", "side": "red", "auto": True})
        assert [(e.seq, e.kind) for e in j.events(gid)] == [(1, "game"), (2, "deploy"), (3, "reaction")]
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            j._db.execute("DELETE FROM events")
