"""`facedown play --board serial` as a user runs it: a separate process reads the scanner firmware (its real code,
behind a real pseudo terminal) through a scanner profile, lays out deployments from files and referees a move."""

from __future__ import annotations

import random
import time
from pathlib import Path

import yaml
from cli_process import Cli

from controller.rules import load_game, new_game
from controller.rules.deploy import random_deployment
from harness.firmware_standin.runner import FirmwareOnPty, World

ROOT = Path(__file__).resolve().parent.parent


def test_play_on_a_serial_scanner_referees_a_move(tmp_path: Path) -> None:
    game = load_game("luzhanqi")
    stations = list(game.station_ids)
    profile = tmp_path / "scanner.yaml"
    profile.write_text(yaml.safe_dump({
        "format": 1, "game": "luzhanqi", "sensing": "reed", "settle_ms": 20, "scan_period_ms": 5,
        "scanner": {"kind": "matrix", "port": None, "usb_vid": 0x2E8A, "usb_pid": 0x0005},
        "channels": {s: i for i, s in enumerate(stations)},
    }))
    cfg = {"format": 2, "channels": 60, "board": "test", "sensing": "reed", "scanner": "matrix", "settle_ms": 10, "scan_period_ms": 2,
           "heartbeat_ms": 150, "matrix": {"rows": list(range(12)), "cols": list(range(12, 17))}}
    world = World()
    world.matrix(cfg["matrix"]["rows"], cfg["matrix"]["cols"])
    port = tmp_path / "ttyACM0"
    fw = FirmwareOnPty(cfg, world, port)
    fw.plug()
    rng = random.Random(4)
    setups = {}
    for side in game.sides:
        setups[side] = random_deployment(game, side, rng)
        (tmp_path / f"{side}.yaml").write_text(yaml.safe_dump(setups[side]))
    for pl in setups.values():
        for s in pl:
            world.place(stations.index(s))
    cli = Cli(["play", "luzhanqi", "--board", "serial", "--profile", str(profile), "--port-path", str(port), "--no-web",
               "--announce", "console", "--journal", str(tmp_path / "j.sqlite"),
               "--setup", f"red={tmp_path / 'red.yaml'}", "--setup", f"blue={tmp_path / 'blue.yaml'}"],
              env={"XDG_DATA_HOME": str(tmp_path / "data")})

    def wait_for(text: str) -> None:
        cli.wait_for(text, timeout=15)

    try:
        wait_for("Red to move")
        state = new_game("luzhanqi")
        for side in game.sides:
            state.deploy(side, setups[side])
        frm, to = next(m for m in state.legal_moves() if m.to not in state.board)
        world.lift(stations.index(frm))
        time.sleep(0.2)
        world.place(stations.index(to))
        wait_for(f"Red: {frm} to {to}.")  # the console line of event.move_hidden
        wait_for("Blue to move")
    finally:
        try:
            status = cli.stop()
        finally:
            fw.close()
    assert status == 0, cli.output
