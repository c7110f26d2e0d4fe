"""Club results counted only when verified, through a real Mosquitto broker: a table's signed result counts; a forged
result (no record, a key the club never enrolled, a record changed after signing, a result the record does not
replay to), a replayed one (the same signed record sent again for another game, or published by another table) and
a table nobody enrolled are shown as unverified, with why, and kept out of the standings and the CSV."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from controller.club.broker import parse_broker, result_topic
from controller.club.bus import TableBus
from controller.club.enrolled import Enrolment
from controller.club.results import ResultBook, ResultError
from controller.referee.signing import pack, public_key, unpack
from harness.broker import Mosquitto, wait_for
from harness.web_game import Game
from web_referee.club import ClubState, create_club_app


class Publisher:
    """A raw MQTT client writing result topics as a table (or an impostor with its broker login) would."""

    def __init__(self, port: int) -> None:
        import paho.mqtt.client as mqtt

        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"mallory-{time.monotonic_ns()}")
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def result(self, table: str, key: str, data: dict[str, Any]) -> None:
        self.client.publish(result_topic(table, key), json.dumps({**data, "table": table, "game_key": key}), qos=1,
                            retain=True).wait_for_publish(5)

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def why(club: ClubState, table: str, key: str) -> str:
    for r, reason in club.results.unverified():
        if r.key == (table, key):
            return reason
    return ""


def test_only_verified_results_count(broker: Mosquitto, dashboard: ClubState, tmp_path: Path) -> None:
    club = dashboard
    enrolment = Enrolment(tmp_path / "club-tables.json")
    # table-7: a real table, enrolled with the key `facedown table key` prints, playing and ending a game
    d7 = tmp_path / "table-7"
    d7.mkdir()
    g = Game("stratego", d7, seed=2)
    enrolment.enroll("table-7", public_key(d7 / "journal.sqlite"))
    # table-8: Mallory's table, enrolled with its own key; she never plays
    d8 = tmp_path / "table-8"
    d8.mkdir()
    enrolment.enroll("table-8", public_key(d8 / "journal.sqlite"))
    bus = TableBus(g.table, parse_broker(broker.url), "table-7", players={"red": "Ann", "blue": "Bo"})
    bus.start()
    mallory = Publisher(broker.port)
    try:
        g.start()
        for _ in range(6):
            g.random_move()
        g.session.end(("red",), "blue resigned")
        wait_for(lambda: len(club.results.all()) == 1, what="table-7's signed result")
        [counted] = club.results.all()
        assert counted.table == "table-7" and counted.winners == ("red",) and counted.record
        key7 = counted.game_key
        message = dict(bus.results[key7])
        record = unpack(message["record"])

        # forged: 200 results table-8 never played, on its own topic, with no signed record
        plain = {k: v for k, v in message.items() if k != "record"}
        for n in range(200):
            mallory.result("table-8", f"{n + 1}-forged", {**plain, "players": {"red": "Mallory", "blue": f"victim {n}"}})
        wait_for(lambda: len(club.results.unverified()) == 200, what="the forged results, unverified")
        assert "no signed record came with it" in why(club, "table-8", "1-forged")
        # forged: a record signed by a key the club never enrolled for table-8 (her own laptop's)
        laptop = tmp_path / "laptop"
        laptop.mkdir()
        other = Game("stratego", laptop, seed=3)
        other.start()
        other.random_move()
        other.session.end(("red",), "blue resigned")
        from controller.referee.signing import make_record

        mine = make_record(other.table.journal, other.table.game_id)
        mallory.result("table-8", f"{other.table.game_id}-laptop", {**plain, "record": pack(mine),
                                                                    "plies": other.table.state.ply})
        wait_for(lambda: why(club, "table-8", f"{other.table.game_id}-laptop"), what="the laptop's record")
        assert "not by the key given" in why(club, "table-8", f"{other.table.game_id}-laptop")
        # forged: table-7's record with the winner changed after it was signed
        changed = {**record, "result": {**record["result"], "winners": ["blue"]}}
        mallory.result("table-7", key7.replace(key7.split("-")[0], "9", 1), {**plain, "winners": ["blue"], "record": pack(changed)})
        # replayed: table-7's valid record published by table-8 as its own
        mallory.result("table-8", key7, {**message, "players": {"red": "Mallory", "blue": "Bo"}})
        # replayed: the same signed record sent again by table-7 as another game of the same number
        again = f"{key7.split('-')[0]}-again"
        mallory.result("table-7", again, message)
        # the genuine record with the reason reworded: counted, with the record's reason
        mallory.result("table-7", key7, {**message, "reason": "blue was disqualified for cheating"})
        wait_for(lambda: why(club, "table-7", key7) == "" and club.results.all()[0].reason == "blue resigned",
                 what="the record's reason kept")
        # a result the record does not replay to: the record is genuine, the winners are not
        lied = f"{key7.split('-')[0]}-lied"
        mallory.result("table-7", lied, {**message, "winners": ["blue"]})
        nine = key7.replace(key7.split("-")[0], "9", 1)
        wait_for(lambda: all(why(club, t, k) for t, k in (("table-7", nine), ("table-8", key7), ("table-7", again),
                                                         ("table-7", lied))), what="every replayed and forged result")
        assert "damaged" in why(club, "table-7", nine) or "signature does not match" in why(club, "table-7", nine)
        assert "not by the key given" in why(club, "table-8", key7)
        assert "already counted as table-7's game" in why(club, "table-7", again)
        assert "it replays to red, the result says blue" in why(club, "table-7", lied)
        [kept] = club.results.all()  # the reworded reason (published before these) did not change the counted one
        assert kept.reason == "blue resigned" and kept.players == {"red": "Ann", "blue": "Bo"}

        # a table nobody enrolled: unverified until the club enrolls it, then counted
        d9 = tmp_path / "table-9"
        d9.mkdir()
        g9 = Game("stratego", d9, seed=4)
        bus9 = TableBus(g9.table, parse_broker(broker.url), "table-9", players={"red": "Cy", "blue": "Di"})
        bus9.start()
        try:
            g9.start()
            for _ in range(3):
                g9.random_move()
            g9.session.end((), "draw agreed")
            wait_for(lambda: bool(bus9.results), what="table-9's result")
            [key9] = bus9.results
            wait_for(lambda: "not enrolled" in why(club, "table-9", key9), what="table-9's result, unverified")
            enrolment.enroll("table-9", public_key(d9 / "journal.sqlite"))
            client = create_club_app(club).test_client()
            wait_for(lambda: len(client.get("/api/club").get_json()["results"]) == 2, what="table-9 counted once enrolled")
        finally:
            bus9.stop()

        # the standings and the CSV hold the two verified games only; the page lists the rest with why
        st = club.results.standings()["stratego"]
        assert {s.player for s in st} == {"Ann", "Bo", "Cy", "Di"} and not any("Mallory" in s.player for s in st)
        csv_text = client.get("/results.csv").get_data(as_text=True)
        assert csv_text.count("\n") == 3 and "Mallory" not in csv_text and "table-8" not in csv_text
        snap = client.get("/api/club").get_json()
        assert len(snap["unverified"]) == 200 + 5 and all(u["why"] for u in snap["unverified"])
        # the results file keeps the counted ones only, and they come back counted
        assert {r.table for r in ResultBook(tmp_path / "results.jsonl").all()} == {"table-7", "table-9"}
    finally:
        mallory.stop()
        bus.stop()


def test_enroll_refuses_what_is_not_a_key(tmp_path: Path) -> None:
    enrolment = Enrolment(tmp_path / "t.json")
    with pytest.raises(ResultError, match="not a table's public key"):
        enrolment.enroll("table-1", "ed25519:c2hvcnQ=")
    with pytest.raises(ResultError, match="table 'a/b'"):
        enrolment.enroll("a/b", "ed25519:" + "A" * 43 + "=")
    key = public_key(tmp_path / "journal.sqlite")
    assert enrolment.enroll("table-1", key) is None
    assert Enrolment(tmp_path / "t.json").tables() == {"table-1": key}
