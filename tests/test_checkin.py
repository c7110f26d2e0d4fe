"""The check-in pad on the host: taps bound to the next station that becomes occupied, the setup read off the board
by the session, nothing published about which piece went where; and TAP lines from the firmware (stand-in) through
the real serial backend."""

from __future__ import annotations

import json
import random
import threading
import time
from pathlib import Path

from controller.referee.checkin import CheckIn, CheckInBoard
from controller.referee.session import Session
from controller.rules import new_game
from controller.rules.deploy import random_deployment
from controller.sensing.base import Snapshot
from controller.sensing.serial_link import SerialScannerBoard
from harness.firmware_standin.runner import Card, FirmwareOnPty, MFRC522Chip, World


def snap(t: int, *occupied: str) -> Snapshot:
    return Snapshot(t, frozenset(occupied))


def test_a_tap_binds_to_the_next_station_that_becomes_occupied() -> None:
    c = CheckIn()
    c.tap("04aa")
    assert c.enrich(snap(1)).tags == {}  # nothing placed yet: the tap is held
    assert c.enrich(snap(2, "a1")).tags == {"a1": "04AA"}
    assert c.enrich(snap(3, "a1", "b1")).tags == {"a1": "04AA"}  # no tap held: b1 stays without a tag
    c.tap("04BB")
    c.tap("04CC")  # changed mind before placing: the latest tap counts
    assert c.enrich(snap(4, "a1", "b1", "c1")).tags == {"a1": "04AA", "c1": "04CC"}


def test_two_stations_at_once_bind_neither_and_say_so() -> None:
    c = CheckIn()
    c.tap("04AA")
    assert c.enrich(snap(1, "a1", "b1")).tags == {}
    assert c.problems == [{"code": "checkin.ambiguous", "stations": ["a1", "b1"]}]
    assert c.held is None


def test_a_piece_moved_during_setup_keeps_its_tag() -> None:
    c = CheckIn()
    c.tap("04AA")
    c.enrich(snap(1, "a1"))
    assert c.enrich(snap(2)).tags == {}  # lifted: its tag is in hand
    assert c.enrich(snap(3, "d4")).tags == {"d4": "04AA"}  # put down elsewhere: the tag goes with it
    c.tap("04AA")  # tapped again and put on a third station: one piece, one station
    assert c.enrich(snap(4, "d4", "e5")).tags == {"e5": "04AA"}


def _barrage_setup(seed: int) -> tuple:
    state = new_game("stratego_barrage")
    rng = random.Random(seed)
    placements = {side: random_deployment(state.game, side, rng) for side in state.game.sides}
    uid = {(side, st): f"04{k:02X}{i:02X}C0FFEE00" for k, side in enumerate(placements)
           for i, st in enumerate(sorted(placements[side]))}
    tag_pieces = {uid[(side, st)]: (side, placements[side][st]) for side, st in uid}
    return state, placements, uid, tag_pieces, rng


def test_the_session_reads_a_whole_setup_from_pad_taps_and_publishes_no_piece() -> None:
    state, placements, uid, tag_pieces, rng = _barrage_setup(4)
    session = Session(state, tag_pieces=tag_pieces)
    events: list[dict] = []
    session.subscribe(lambda ev: events.append(ev.public))
    c = CheckIn()
    occupied: set[str] = set()
    t = 0
    for side in state.game.sides:
        for st in rng.sample(sorted(placements[side]), len(placements[side])):
            c.tap(uid[(side, st)])
            occupied.add(st)
            t += 1
            session.on_snapshot(c.enrich(Snapshot(t, frozenset(occupied))))
    assert state.deployments == placements and state.phase == "play"
    text = json.dumps(events)
    assert not any(u in text for u in uid.values())
    assert not any(f'"{p}"' in text for pl in placements.values() for p in pl.values())


def test_tap_lines_from_the_firmware_reach_the_binding_over_a_pty(tmp_path: Path) -> None:
    cfg = {"format": 2, "channels": 100, "board": "pad", "sensing": "checkin", "scanner": "matrix", "settle_ms": 10,
           "scan_period_ms": 2, "heartbeat_ms": 150, "checkin": {"poll_ms": 20},
           "matrix": {"rows": list(range(10)), "cols": list(range(10, 20))},
           "rfid": {"spi": 0, "sck": 28, "mosi": 27, "miso": 26, "readers": 1, "field_us": 0,
                    "select": {"kind": "direct", "pins": [21]}}}
    world = World()
    world.matrix(cfg["matrix"]["rows"], cfg["matrix"]["cols"])
    pad = MFRC522Chip()
    world.rfid_direct([21], [pad])
    fw = FirmwareOnPty(cfg, world, tmp_path / "ttyACM0").plug()
    stations = [f"s{i}" for i in range(100)]
    board = CheckInBoard(SerialScannerBoard(stations, {s: i for i, s in enumerate(stations)},
                                            port=str(tmp_path / "ttyACM0"), heartbeat_timeout_s=0.6))
    snaps: list[Snapshot] = []
    thread = threading.Thread(target=board.run, args=(snaps.append,), daemon=True)
    thread.start()
    try:
        assert board.wait_known(5), board.status
        pad.card = Card(bytes.fromhex("04A1B2C3D4E5F6"))
        end = time.monotonic() + 5
        while board.checkin.held is None:
            assert time.monotonic() < end, "no TAP reached the host"
            time.sleep(0.01)
        pad.card = None
        world.place(42)
        end = time.monotonic() + 5
        while not (snaps and snaps[-1].tags == {"s42": "04A1B2C3D4E5F6"}):
            assert time.monotonic() < end, snaps[-1:]
            time.sleep(0.01)
        assert fw.crashed is None
    finally:
        board.stop()
        thread.join(5)
        fw.close()
