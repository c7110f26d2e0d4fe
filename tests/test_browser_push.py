"""What the board page lives on, without a browser: every role's live stream carries that role's redacted state with
the last event of each burst (so the page never fetches after an event), the state a page receives equals what
/state answers, a spectator's pushed state names no hidden rank, and during play the seats and the arbiter (not the
spectators) hear each change of occupancy, so a lift shows at once, without it becoming an event of the game."""

from __future__ import annotations

import json
from pathlib import Path

from controller.setups_store import SetupStore
from harness.web_game import Game, sse_events
from web_referee.app import create_app
from web_referee.payloads import may_receive


def _client(game: Game, tmp_path: Path):  # noqa: ANN202
    return create_app(game.table, setups=SetupStore(tmp_path / "setups"), keepalive_s=0.02).test_client()


def _key(game: Game, role: str) -> str:
    return "public" if role == "spectator" else game.table.tokens[role]


def test_each_burst_ends_with_the_roles_state(tmp_path: Path) -> None:
    game = Game("luzhanqi", tmp_path)
    game.start()
    for _ in range(6):
        game.random_move()
    client = _client(game, tmp_path)
    log = game.session.log
    for role in ("spectator", "red", "blue", "arbiter"):
        mine = [e for e in log if may_receive(e, role)]
        events = sse_events(client, f"/api/{_key(game, role)}/events?after=0", mine[-1].seq)
        assert [e["seq"] for e in events] == [e.seq for e in mine]
        with_state = [e for e in events if "state" in e]
        # the catch-up is one burst: one state, on its last event, equal to what /state says now
        assert [e["seq"] for e in with_state] == [mine[-1].seq], role
        state = with_state[0]["state"]
        now = client.get(f"/api/{_key(game, role)}/state").get_json()
        for s in (state, now):  # the arbiter's sensor age is read off the wall clock
            (s.get("sensors") or {}).pop("snapshot_age_s", None)
        assert state == now
        assert state["role"] == role and state["seq"] == log[-1].seq


def test_a_spectators_pushed_state_names_no_hidden_rank(tmp_path: Path) -> None:
    game = Game("luzhanqi", tmp_path, seed=3)
    game.start()
    for _ in range(10):
        game.random_move()
    client = _client(game, tmp_path)
    mine = [e for e in game.session.log if may_receive(e, "spectator")]
    events = sse_events(client, f"/api/public/events?after={mine[-4].seq}", mine[-1].seq)
    state = next(e["state"] for e in events if "state" in e)
    hidden = [p for p in state["view"]["pieces"] if not p.get("public")]
    assert hidden and all("piece" not in p for p in hidden)
    shown = {p["station"]: p.get("piece") for p in state["view"]["pieces"]}
    for station, piece in game.table.state.board.items():
        if not piece.public:
            assert shown[station] is None, station
    assert "setup" not in state and "sensors" not in state


def test_occupancy_streams_to_the_seats_and_the_arbiter_during_play(tmp_path: Path) -> None:
    """A lift during play reaches the seats' and arbiter's open streams at once, as occupancy only and without an
    event number (it is not an event of the game: the log, the journal and `facedown script` do not see it)."""
    import threading
    import time

    game = Game("stratego", tmp_path)
    game.start()
    frm = next(m[0] for m in game.table.state.legal_moves())
    app = create_app(game.table, setups=SetupStore(tmp_path / "setups"), keepalive_s=0.02)
    hub = app.extensions["facedown"].hub
    opened = {role: hub.open(role, game.session.log[-1].seq) for role in ("red", "arbiter", "spectator")}
    for client, _backlog in opened.values():
        client.queue.get_nowait()  # each stream starts with the board as read now (test_web_api); here: what a reading adds
    got: dict[str, list[str]] = {role: [] for role in opened}

    def read(role: str) -> None:
        client, backlog = opened[role]
        deadline = time.monotonic() + 1.5
        for chunk in hub.stream(client, backlog, game.session.log[-1].seq, lambda ev, who: {"seq": ev.seq}, keepalive_s=0.05):
            got[role].append(chunk)
            if chunk.startswith("data:") or time.monotonic() > deadline:
                break

    threads = [threading.Thread(target=read, args=(role,), daemon=True) for role in opened]
    for t in threads:
        t.start()
    log_before = len(game.session.log)
    game.board.lift(frm)
    game.settle()
    for t in threads:
        t.join(timeout=2)
    assert len(game.session.log) == log_before  # nothing logged
    for role in ("red", "arbiter"):
        frames = [c for c in got[role] if c.startswith("data:")]
        assert len(frames) == 1 and not any(c.startswith("id:") for c in got[role]), got[role]
        data = json.loads(frames[0][len("data: "):])
        assert data == {"event": "board", "occupied": sorted(game.board.raw_occupied()), "live": True, "pending": None,
                        "read_at": game.session.snapshot.t_ms}  # the reading's board time: a tap's own from older ones
        assert frm not in data["occupied"]
    assert not [c for c in got["spectator"] if c.startswith("data:")]  # no fix-up ticked: nothing for the spectator
    hub.close_all()
