"""Optional reactions in a remote game (land-sea-air chess, ``reactions: ask``), through a real Mosquitto: Red's
fighter flies within reach of Blue's AA gun on Red's board; Blue's board, once it has moved Red's token as told, is
asked privately (its page's offer comes from the host, which alone knows the pieces); Blue fires from its page, the
host judges it, and both boards are asked to take the aircraft off. Red never hears of the offer; no byte either
board receives names a kind it may not know; a restarted host replays the answer into the same messages."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_remote import Board, Phone, audit
from test_sanjunqi_physical import RED, _turned

from controller.club.broker import parse_broker
from controller.remote.host import RemoteHost
from controller.rules.reactions import offers
from harness.broker import Mosquitto, wait_for

BLUE = {_turned()[s]: p for s, p in RED.items()}
FLIGHT = ("a7", "f7")  # Red's fighter stops within two steps of Blue's AA gun on m7
GUARD, TARGET = "m7", "f7"


@pytest.fixture()
def broker(tmp_path: Path) -> Any:
    b = Mosquitto(tmp_path)
    b.start()
    yield b
    b.stop()


def test_blue_fires_at_reds_aircraft_from_its_page_in_a_remote_game(broker: Any, tmp_path: Path) -> None:
    host = RemoteHost("sanjunqi", parse_broker(broker.url), journal_path=tmp_path / "host.sqlite", game_id="r1",
                      options={"reactions": "ask"})
    host.start()
    codes = {s: str(c) for s, c in host.join_codes().items()}
    red, blue = (Board("sanjunqi", broker.url, codes[s], tmp_path) for s in ("red", "blue"))
    boards = {"red": red, "blue": blue}
    try:
        wait_for(lambda: red.seat.synced and blue.seat.synced, what="both seats synced")
        assert red.session.register_setup("red", RED) == []
        assert blue.session.register_setup("blue", BLUE) == []
        wait_for(lambda: red.session.state.phase == "play" and blue.session.state.phase == "play", what="the start")
        red.fix()
        blue.fix()
        assert host.session.state.turn == "red"
        page = Phone(blue)
        red_page = Phone(red)
        red.move(*FLIGHT)
        wait_for(lambda: red.session.state.ply == 1, what="red's ruling")
        red.fix()
        wait_for(lambda: blue.session.instruction("red") is not None, what="blue to be told red's flight")
        assert page.state()["reactions"]["offers"] == [], "an offer before the token has flown on blue's board"
        blue.move(*FLIGHT)
        blue.fix()
        [host_offer] = offers(host.session.state, "blue")
        wait_for(lambda: (page.state().get("reactions") or {}).get("offers"), what="blue's page to show the offer")
        [offer] = page.state()["reactions"]["offers"]
        assert (offer["id"], offer["guard"], offer["target"], offer["guard_piece"]) == (host_offer.id, GUARD, TARGET, "aa_gun")
        assert "fighter" not in json.dumps(offer), "the offer names the aircraft's kind"
        wait_for(lambda: any(e.public.get("event") == "offer" for e in blue.session.log), what="blue to be told privately")
        assert not red_page.state()["reactions"]["offers"]
        assert not any(e.public.get("event") == "offer" for e in red.session.log), "red heard of blue's offer"
        # a stale or foreign offer is refused on the board, nothing sent
        r = page.client.post(f"/api/{page.key}/reaction", json={"offer": offer["id"] + 7, "react": True},
                             headers={"X-CSRF-Token": page.csrf})
        assert r.status_code == 409
        page.post("/reaction", {"offer": offer["id"], "react": True, "target": TARGET})
        wait_for(lambda: TARGET not in host.session.state.board, what="the host to judge the shot")
        for b in boards.values():
            wait_for(lambda b=b: TARGET not in b.session.state.board, what=f"{b.name}'s board to hear the shot")
            steps = b.session.pending.steps if b.session.pending else []
            assert [(s["station"], s["action"], s["owner"]) for s in steps] == [(TARGET, "remove", "red")], steps
            b.fix()
            assert TARGET not in b.sim.raw_occupied() and b.session.pending is None
            gun = b.session.state.board[GUARD]
            assert gun.public and gun.type == "aa_gun"  # the gun fired: shown to everyone
        assert not (page.state().get("reactions") or {}).get("offers")
        # red was shown the gun that fired (checked, and entitled); blue was never shown red's aircraft's kind
        checked = {b.name: audit(b, host, p.pages) for b, p in ((red, red_page), (blue, page))}
        assert checked["red"] > 0
        # a restarted host replays the answer into the same messages
        outbox = {s: [json.loads(x.split(b"\n", 1)[1]) for x in host.messages(s)] for s in host.seats}
        host.stop()
        host = RemoteHost("sanjunqi", parse_broker(broker.url), journal_path=tmp_path / "host.sqlite", game_id="r1",
                          options={"reactions": "ask"})
        assert {s: [json.loads(x.split(b"\n", 1)[1]) for x in host.messages(s)] for s in host.seats} == outbox
        assert TARGET not in host.session.state.board
    finally:
        red.stop()
        blue.stop()
        host.stop()
