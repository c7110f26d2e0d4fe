"""A whole refereed game through the real serial path: the firmware's own code behind a real pseudo terminal,
the host's pyserial backend, the recognizer and the session; rulings must be exactly the engine's."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from controller.referee.session import Session
from controller.rules import new_game
from controller.sensing.serial_link import SerialScannerBoard
from harness.firmware_standin.runner import FirmwareOnPty, World
from tests.physical import random_game_script

GAME = "luzhanqi"
KEYS = ("event", "from", "to", "player", "outcome")


def test_a_luzhanqi_game_over_the_scanner_link_gives_the_engines_rulings(tmp_path: Path) -> None:
    state = new_game(GAME)
    stations = state.game.station_ids  # 60 stations: a 12 x 5 reed matrix
    channels = {s: (i // 5, i % 5) for i, s in enumerate(stations)}
    cfg = {"format": 2, "channels": 60, "board": "test", "sensing": "reed", "scanner": "matrix", "settle_ms": 10, "scan_period_ms": 2,
           "heartbeat_ms": 150, "matrix": {"rows": list(range(12)), "cols": list(range(12, 17))}}
    world = World()
    world.matrix(cfg["matrix"]["rows"], cfg["matrix"]["cols"])
    fw = FirmwareOnPty(cfg, world, tmp_path / "ttyACM0")
    fw.plug()
    board = SerialScannerBoard(stations, channels, port=str(tmp_path / "ttyACM0"),
                               heartbeat_timeout_s=0.6, resync_every_s=0.2, backoff_s=(0.05, 0.2))
    session = Session(state)
    events: list[dict] = []
    session.subscribe(lambda ev: events.append(ev.public))
    thread = threading.Thread(target=board.run, args=(session.on_snapshot,), daemon=True)
    thread.start()
    try:
        assert board.wait_known(5), board.status
        script = random_game_script(GAME, 7, max_plies=30)
        raw: set[str] = set()

        def settle() -> None:
            end = time.monotonic() + 5
            while time.monotonic() < end:
                snap = session.snapshot
                if snap is not None and snap.occupied == raw:
                    return
                time.sleep(0.005)
            raise AssertionError(f"the host never saw {sorted(raw)}; link: {board.status}")

        for line in script.lines:
            if "setup" in line:
                assert session.register_setup(line["setup"], line["pieces"]) == []
                for s in line["pieces"]:
                    raw.add(s)
                    world.place(stations.index(s))
                settle()
            elif "lift" in line:
                raw.discard(line["lift"])
                world.lift(stations.index(line["lift"]))
                settle()
            elif "place" in line:
                raw.add(line["place"])
                world.place(stations.index(line["place"]))
                settle()
        time.sleep(0.05)
        got = [{k: e[k] for k in KEYS if k in e} for e in events if e["event"] in ("move", "attack", "illegal")]
        want = [{k: r[k] for k in KEYS if k in r} for r in script.rulings if r["event"] in ("move", "attack")]
        assert got == want
        assert not [e for e in events if e["event"] == "mismatch"]
        assert board.known
    finally:
        board.stop()
        thread.join(5)
        fw.close()
