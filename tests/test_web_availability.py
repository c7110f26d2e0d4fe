"""The people at the table keep their pages on a busy LAN (issue 16): event streams reserved per token, the
spectators' cap apart and split per address, closed streams freed at once, slow-header and idle floods from
another address held off (a real waitress server on 127.0.0.1, the flood in its own process), and clear refusals
(non-ASCII tokens, a stopped referee, a port in use)."""

from __future__ import annotations

import json
import logging
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from controller.setups_store import SetupStore
from harness.web_game import Game
from web_referee.app import create_app
from web_referee.hub import Hub
from web_referee.server import WebServer, WebServerError

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def game(tmp_path: Path) -> Game:
    return Game("stratego", tmp_path)


def test_seats_are_never_refused_and_spectators_are_capped_per_address(game: Game) -> None:
    hub = Hub(game.session, max_clients=4, per_role=2, per_address=2)
    assert hub.open("spectator", 0, "10.0.0.9") and hub.open("spectator", 0, "10.0.0.9")
    assert hub.open("spectator", 0, "10.0.0.9") is None  # this laptop has its share
    assert hub.open("spectator", 0, "10.0.0.7") and hub.open("spectator", 0, "10.0.0.7")
    assert hub.open("spectator", 0, "10.0.0.8") is None  # the spectators' cap
    first, _ = hub.open("red", 0, "10.0.0.2")
    second, _ = hub.open("red", 0, "10.0.0.2")
    third, _ = hub.open("red", 0, "10.0.0.2")  # a phone reconnecting: its oldest stream makes way
    assert first.dropped and not second.dropped and not third.dropped
    assert hub.open("blue", 0, "10.0.0.3") and hub.open("arbiter", 0, "10.0.0.4")
    assert hub.count("red") == 2 and hub.count("spectator") == 4


def test_a_page_that_outlived_a_restart_catches_up_from_the_new_log(game: Game) -> None:
    hub = Hub(game.session)
    game.session.pause()
    game.session.resume()
    last = game.session.log[-1].seq
    client, backlog = hub.open("spectator", last + 500)  # its Last-Event-ID is from the previous run
    assert client.after == 0 and [e.seq for e in backlog] == [e.seq for e in game.session.log]


def test_a_non_ascii_token_is_403_without_a_traceback(game: Game, tmp_path: Path, caplog) -> None:  # noqa: ANN001
    app = create_app(game.table, setups=SetupStore(tmp_path / "setups"))
    client = app.test_client()
    with caplog.at_level(logging.ERROR):
        for path in ("/api/%C3%A9/state", "/seat/%C3%A9", "/arbiter/%E2%98%83", "/api/%F0%9F%98%80/events"):
            r = client.get(path)
            assert r.status_code == 403, path
        r = client.post(f"/api/{game.table.tokens['red']}/setup/check", json={"placement": {}},
                        headers={"X-CSRF-Token": "\u00e9t\u00e9"})
        assert r.status_code == 403
    assert not [rec for rec in caplog.records if rec.levelno >= logging.ERROR]


def test_a_stopped_referee_is_in_every_state_and_refuses_actions(game: Game, tmp_path: Path) -> None:
    import re

    from controller.referee.journal import JournalError

    app = create_app(game.table, setups=SetupStore(tmp_path / "setups"))
    client = app.test_client()
    sup = game.table.supervise()
    sup.fail(JournalError("disk full"), "journal")
    for key in ("public", game.table.tokens["red"], game.table.tokens["arbiter"]):
        st = client.get(f"/api/{key}/state").get_json()
        assert st["fault"]["say"] == {"code": "fault.stopped", "params": {"why": {"code": "fault.journal", "params": {}}}}
        assert st["link"]["status"] == "connected"
    html = client.get(f"/arbiter/{game.table.tokens['arbiter']}").get_data(as_text=True)
    assert 'id="health"' in html
    csrf = re.search(r'name="facedown-csrf" content="([0-9a-f]+)"', html).group(1)
    r = client.post(f"/api/{game.table.tokens['arbiter']}/arbiter/pause", json={}, headers={"X-CSRF-Token": csrf})
    assert r.status_code == 503 and r.get_json()["fault"]["code"] == "fault.journal"
    words = client.get("/i18n/zh-Hant.json").get_json()
    assert words["fault.journal"] and client.get("/i18n/xx.json").status_code == 404


# ---------------------------------------------------------------------------------------------- a real server
@pytest.fixture
def served(game: Game, tmp_path: Path):  # noqa: ANN201
    server = WebServer(game.table, host="127.0.0.1", port=0, setups=SetupStore(tmp_path / "setups"),
                       keepalive_s=15.0, spectator_streams=12, per_address=40, header_timeout_s=3.0)
    server.start()
    yield server
    server.stop()


def _get(url: str, timeout: float = 5.0) -> tuple[int, float]:
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            r.read()
            return r.status, time.perf_counter() - t0
    except urllib.error.HTTPError as e:
        return e.code, time.perf_counter() - t0


def _open_stream(port: int, key: str, source: str = "127.0.0.1") -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    s.sendall(f"GET /api/{key}/events HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    head = s.recv(4096)
    assert head.startswith(b"HTTP/1.1 200"), head[:60]
    return s


def test_a_closed_stream_frees_its_slot_within_a_second(served: WebServer) -> None:
    hub = served.hub
    socks = [_open_stream(served.port, "public") for _ in range(3)]
    assert hub.count("spectator") == 3
    for s in socks:
        s.close()
    t0 = time.monotonic()
    while hub.count("spectator") and time.monotonic() - t0 < 3:
        time.sleep(0.05)
    assert hub.count("spectator") == 0 and time.monotonic() - t0 < 1.5


def test_a_port_in_use_is_a_clear_error(served: WebServer, game: Game, tmp_path: Path) -> None:
    with pytest.raises(WebServerError) as err:
        WebServer(game.table, host="127.0.0.1", port=served.port, setups=SetupStore(tmp_path / "s2"))
    assert f"port {served.port}" in err.value.strerror and "already in use" in err.value.strerror


def test_floods_from_another_address_do_not_starve_the_seats(served: WebServer, game: Game) -> None:
    """300 slow-header connections and 40 spectator streams held from 127.0.0.2 (reopened whenever closed): the
    seat's page loads and a ruling reaches the seat's stream."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    flood = subprocess.Popen([sys.executable, "-m", "tests.flood", str(served.port), "--slow", "300", "--streams", "40",
                              "--seconds", "8", "--interval", "1", "--source", "127.0.0.2"],
                             stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)
    try:
        assert flood.stdout.readline().strip() == "ready"
        time.sleep(1.5)  # the flood is in place (and the server has cut what it will not hold)
        red = game.table.tokens["red"]
        base = f"http://127.0.0.1:{served.port}"
        for _ in range(5):
            status, _took = _get(f"{base}/seat/{red}")
            assert status == 200
            status, _took = _get(f"{base}/api/{red}/state")
            assert status == 200
        seat = _open_stream(served.port, red)
        seat.settimeout(5)
        got = threading.Event()

        def read() -> None:
            buf = b""
            while b'"paused"' not in buf:
                chunk = seat.recv(65536)
                if not chunk:
                    return
                buf += chunk
            got.set()

        threading.Thread(target=read, daemon=True).start()
        time.sleep(0.3)
        game.session.pause()
        assert got.wait(5), "the ruling did not reach the seat"
        seat.close()
        assert served.hub.count("spectator") <= served.hub.per_address  # one address holds only its share
    finally:
        out, _ = flood.communicate(timeout=30)
    stats = json.loads(out.strip().splitlines()[-1])
    assert stats["closed_by_server"] > 0  # the server cut the flood (per-address cap, header deadline, 503s)


def _closed_within(s: socket.socket, seconds: float, trickle: bytes | None = None) -> bool:
    """Does the server close ``s`` within ``seconds`` (while we send ``trickle`` every 0.5 s)?"""
    end = time.monotonic() + seconds
    s.settimeout(0.5)
    while time.monotonic() < end:
        try:
            if s.recv(4096) == b"":
                return True
        except TimeoutError:
            pass
        except OSError:
            return True
        if trickle:
            try:
                s.sendall(trickle)
            except OSError:
                return True
    return False


def test_slow_headers_idle_sockets_and_one_address_hogging_are_cut(served: WebServer) -> None:
    slow = socket.create_connection(("127.0.0.1", served.port), source_address=("127.0.0.3", 0))
    slow.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
    idle = socket.create_connection(("127.0.0.1", served.port), source_address=("127.0.0.4", 0))
    assert _closed_within(slow, 8, trickle=b"X-Slow: 1\r\n")  # header deadline 3 s (+ the 1 s check)
    assert _closed_within(idle, 8)
    slow.close()
    idle.close()
    hog = [socket.create_connection(("127.0.0.1", served.port), source_address=("127.0.0.5", 0)) for _ in range(40)]
    extra = socket.create_connection(("127.0.0.1", served.port), source_address=("127.0.0.5", 0))
    assert _closed_within(extra, 2)  # the 41st from that address is refused at once
    status, _ = _get(f"http://127.0.0.1:{served.port}/")  # others are served
    assert status == 200
    for s in (*hog, extra):
        s.close()
