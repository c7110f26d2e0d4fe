"""Club play against a real Mosquitto broker: tables publish what spectators may know, the dashboard shows each
table's right state, a table killed with SIGKILL shows offline by its last will, a broker restarted mid-game loses
no result, nothing a subscriber hears carries a hidden rank, and malformed messages are refused, not applied."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from controller.announce import describe
from controller.club.broker import ClubError, parse_broker
from controller.club.bus import TableBus
from controller.club.enrolled import Enrolment
from controller.club.results import ResultBook
from controller.referee.signing import public_key
from controller.rules import SPECTATOR, view
from harness.broker import Mosquitto, Recorder, wait_for
from harness.web_game import Game
from web_referee.club import ClubListener, ClubState, create_club_app

ROOT = Path(__file__).resolve().parents[1]


def table_on_bus(tmp_path: Path, name: str, broker: Mosquitto, seed: int, **kw) -> tuple[Game, TableBus]:  # noqa: ANN003
    d = tmp_path / name
    d.mkdir()
    g = Game("stratego", d, seed=seed)
    # the club enrolls the table's key (what `facedown table key` prints), so its signed results count
    Enrolment(tmp_path / "club-tables.json").enroll(name, public_key(d / "journal.sqlite"))
    bus = TableBus(g.table, parse_broker(broker.url), name, players={"red": f"{name}-Ann", "blue": f"{name}-Bo"}, **kw)
    bus.start()
    return g, bus


def shows(state: ClubState, name: str, g: Game, *, events: bool = True) -> bool:
    t = state.table(name)
    if t is None or t["status"] is None:
        return False
    with g.session.lock:
        seq = g.session.log[-1].seq if g.session.log else 0
        ply = g.table.state.ply
    return t["status"]["seq"] == seq and t["status"]["ply"] == ply and (not events or t["seq"] == max(
        (e.seq for e in g.session.log if not e.audience), default=0))


def test_tables_at_once_on_one_dashboard_and_nothing_secret_leaves(broker: Mosquitto, dashboard: ClubState, tmp_path: Path) -> None:
    rec = Recorder(broker.port)
    tables = [table_on_bus(tmp_path, f"t{i}", broker, seed=i) for i in range(4)]
    errors: list[BaseException] = []

    def play(g: Game, moves: int) -> None:
        try:
            g.start()
            for _ in range(moves):
                if not g.random_move():
                    break
        except BaseException as exc:  # noqa: BLE001
            errors.append(exc)

    threads = [threading.Thread(target=play, args=(g, 6 + 3 * i)) for i, (g, _) in enumerate(tables)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert not errors, errors
    tables[0][0].session.end(("red",), "blue resigned")
    for i, (g, _bus) in enumerate(tables):
        wait_for(lambda g=g, i=i: shows(dashboard, f"t{i}", g), what=f"the dashboard to show t{i}")
        t = dashboard.table(f"t{i}")
        assert t is not None and t["online"] is True
        with g.session.lock:
            expected = view(g.table.state, SPECTATOR)["pieces"]
        assert t["status"]["view"]["pieces"] == expected
        assert t["status"]["players"] == {"red": f"t{i}-Ann", "blue": f"t{i}-Bo"}
    # the arbiter's ended game is a result, in the standings and the CSV
    wait_for(lambda: len(dashboard.results.all()) == 1, what="the result")
    rows = {s.player: s for s in dashboard.results.standings()["stratego"]}
    assert rows["t0-Ann"].wins == 1 and rows["t0-Bo"].losses == 1
    client = create_club_app(dashboard).test_client()
    csv_text = client.get("/results.csv").get_data(as_text=True)
    assert "t0,stratego" in csv_text and "blue resigned" in csv_text
    snap = client.get("/api/club").get_json()
    assert set(snap["names"]) == {"t0", "t1", "t2", "t3"} and snap["tables"]["t0"]["status"]["phase"] == "over"
    assert client.get("/table/t2").status_code == 200 and client.get("/table/nope").status_code == 404
    assert "<svg" in client.get("/api/board/stratego").get_json()["layer"] or "<g" in client.get("/api/board/stratego").get_json()["layer"]
    for _, bus in tables:
        bus.stop()
    rec.stop()
    # what a subscriber heard: events exactly the public part of audience-free events, status only spectator views
    by_table = {f"t{i}": g for i, (g, _) in enumerate(tables)}
    events = [(topic, data) for topic, data, _ in rec.messages if topic.endswith("/events")]
    assert events
    for topic, data in events:
        g = by_table[topic.split("/")[2]]
        published = g.session.log[data["seq"] - 1]
        assert not published.audience, "a private event left the table"
        assert {k: v for k, v in data.items() if k not in ("table", "seq", "text")} == published.public
        # and its words, the public form only, from the English catalog
        assert data["text"] == describe(published.public, g.table.game)
    for topic, data, _ in rec.messages:
        if topic.endswith("/status") and data and data["phase"] == "play":
            for p in data["view"]["pieces"]:
                assert "piece" not in p or p["public"], f"a hidden rank left the table: {p}"
            r = data["last_ruling"]
            if r and r["kind"] == "attack":
                assert set(r) >= {"outcome"}


def test_killed_table_shows_offline_by_its_last_will(broker: Mosquitto, dashboard: ClubState, tmp_path: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    cmd = [sys.executable, "-m", "controller.cli", "play", "--demo", "--no-web", "--new", "--announce", "none", "--pace", "0.05",
           "--journal", str(tmp_path / "j.sqlite"), "--club", broker.url, "--table", "doomed", "--clock", "30+0",
           "--player", "red=Ann"]
    child = subprocess.Popen(cmd, cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: (dashboard.table("doomed") or {}).get("online") is True and (dashboard.table("doomed") or {}).get("status") is not None,
                 timeout=20, what="the child table online")
        t = dashboard.table("doomed")
        assert t is not None and t["status"]["players"]["red"] == "Ann" and t["status"]["clock"]["control"]["base_s"] == 1800
        child.send_signal(signal.SIGKILL)
        child.wait(5)
        wait_for(lambda: (dashboard.table("doomed") or {}).get("online") is False, timeout=10, what="the last will")
        assert dashboard.table("doomed")["offline_reason"] == "lost"
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(5)


def test_broker_restart_mid_game_loses_no_result(broker: Mosquitto, dashboard: ClubState, tmp_path: Path) -> None:
    g, bus = table_on_bus(tmp_path, "hall", broker, seed=7)
    try:
        g.start()
        for _ in range(4):
            g.random_move()
        wait_for(lambda: shows(dashboard, "hall", g), what="the table before the restart")
        broker.stop()
        wait_for(lambda: not bus.connected, what="the table to notice the broker is gone")
        t0 = time.perf_counter()
        for _ in range(3):  # the table referees on while the broker is away, without waiting for it
            g.random_move()
        g.session.end(("blue",), "red's flag fell")
        assert time.perf_counter() - t0 < 5
        assert g.table.state.phase == "over"
        broker.start()  # a broker with no memory of retained messages: the table must say everything again
        wait_for(lambda: any(r.table == "hall" for r in dashboard.results.all()), timeout=20, what="the result after the restart")
        r = next(r for r in dashboard.results.all() if r.table == "hall")
        assert r.winners == ("blue",) and r.reason == "red's flag fell" and r.players["blue"] == "hall-Bo"
        # the retained status says where the game stands; events the table caught up with before the dashboard had
        # subscribed again are lost to it, since this broker forgot the dashboard's session (the persistent broker
        # of tests/test_club_delivery.py delivers them)
        wait_for(lambda: shows(dashboard, "hall", g, events=False), what="the status after the restart")
        # and a dashboard started afterwards still finds it, retained
        late = ClubState(enrolled=Enrolment(tmp_path / "club-tables.json"))
        listener = ClubListener(late, parse_broker(broker.url), client_id="late")
        listener.start()
        try:
            wait_for(lambda: len(late.results.all()) == 1 and late.table("hall") is not None, what="retained messages")
        finally:
            listener.stop()
    finally:
        bus.stop()
    # the results file keeps it across dashboard restarts
    assert [x.table for x in ResultBook(tmp_path / "results.jsonl").all()] == ["hall"]


def test_malformed_messages_are_refused_and_counted(broker: Mosquitto, dashboard: ClubState) -> None:
    import paho.mqtt.client as mqtt

    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="forger")
    c.connect("127.0.0.1", broker.port)
    c.loop_start()
    try:
        for topic, payload in [("facedown/tables/x/status", b"{not json"),
                               ("facedown/tables/x/status", b'{"table": "y", "game": "stratego"}'),
                               ("facedown/tables/x/events", b'[1, 2]'),
                               ("facedown/results/x/1", b'{"table": "x", "game_key": "1", "game": "stratego", "sides": ["red"], "winners": ["green"]}'),
                               ("facedown/tables/x/presence", b'{"table": "x", "online": "yes"}')]:
            c.publish(topic, payload, qos=1).wait_for_publish(5)
        wait_for(lambda: dashboard.rejected == 5, what="five refusals")
    finally:
        c.disconnect()
        c.loop_stop()
    assert dashboard.table("x") is None and dashboard.results.all() == []
    assert any("winners" in p for p in dashboard.problems)


def test_bad_broker_settings_say_what_is_wrong(tmp_path: Path) -> None:
    for url, msg in [("localhost", "expected mqtt://"), ("http://h", "scheme"), ("mqtt://", "no host"),
                     ("mqtt://h:99999", "Port"), ("mqtt://u:p@h", "do not put a login"), ("mqtt://h/x", "no path")]:
        with pytest.raises(ClubError, match=msg):
            parse_broker(url)
    with pytest.raises(ClubError, match="CA file only applies"):
        parse_broker("mqtt://h", ca_file=str(tmp_path))
    pw = tmp_path / "pw"
    pw.write_text("s3cret\n")
    b = parse_broker("mqtts://h", username="club", password_file=str(pw))
    assert b.port == 8883 and b.tls and b.password == "s3cret" and "s3cret" not in repr(b)
    r = subprocess.run([sys.executable, "-m", "controller.cli", "play", "--no-web", "--club", "mqtt://h", "--journal", str(tmp_path / "j")],
                       cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert r.returncode != 0 and "--club needs --table" in r.stderr


def test_play_without_club_never_imports_paho() -> None:
    code = "import sys, controller.cli as c; c.build_parser(); import controller.commands.play, controller.club.bus; print('paho' in sys.modules)"
    r = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert r.stdout.strip() == "False", r.stderr
