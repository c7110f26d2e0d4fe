"""`facedown play --board serial` with a check-in pad profile, as a user runs it: a separate process reads the
scanner firmware (its real code, behind a real pseudo terminal) with one RFID reader as the pad; each player taps a
piece on the pad and puts it down, the referee reads both Barrage setups off the pad and starts the game, and the
spectators' live stream never names a piece nor a tag."""

from __future__ import annotations

import http.client
import json
import random
import socket
import time
from pathlib import Path

import pytest
import yaml
from cli_process import Cli

from controller.cli import main
from controller.rules import load_game
from controller.rules.deploy import random_deployment
from harness.firmware_standin.runner import Card, FirmwareOnPty, MFRC522Chip, World

ROOT = Path(__file__).resolve().parent.parent
CFG = {"format": 2, "channels": 100, "board": "pad", "sensing": "checkin", "scanner": "matrix", "settle_ms": 10,
       "scan_period_ms": 2, "heartbeat_ms": 150, "checkin": {"poll_ms": 20},
       "matrix": {"rows": list(range(10)), "cols": list(range(10, 20))},
       "rfid": {"spi": 0, "sck": 28, "mosi": 27, "miso": 26, "readers": 1, "field_us": 0,
                "select": {"kind": "direct", "pins": [21]}}}


def _pad_profile(tmp_path: Path, stations: list[str]) -> Path:
    profile = tmp_path / "pad.yaml"
    profile.write_text(yaml.safe_dump({
        "format": 1, "game": "stratego_barrage", "sensing": "checkin", "settle_ms": 20, "scan_period_ms": 5,
        "scanner": {"kind": "matrix", "port": None, "usb_vid": 0x2E8A, "usb_pid": 0x0005},
        "channels": {s: i for i, s in enumerate(stations)},
    }))
    return profile


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _spectator_events(port: int, seconds: float = 1.5) -> list[dict]:
    """What a spectator's page receives on its live stream (the backlog, then whatever comes within ``seconds``)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=seconds)
    out: list[dict] = []
    try:
        conn.request("GET", "/api/public/events?after=0")
        resp = conn.getresponse()
        assert resp.status == 200, resp.status
        while True:
            line = resp.readline()
            if not line:
                break
            if line.startswith(b"data:"):
                out.append(json.loads(line[5:]))
    except TimeoutError:
        pass
    finally:
        conn.close()
    return out


def _pad_board(tmp_path: Path) -> tuple[World, MFRC522Chip, Path, FirmwareOnPty]:
    """The reed matrix with its check-in pad, the firmware's real code running it behind a real pty."""
    world = World()
    world.matrix(CFG["matrix"]["rows"], CFG["matrix"]["cols"])
    pad = MFRC522Chip()
    world.rfid_direct([21], [pad])
    port = tmp_path / "ttyACM0"
    return world, pad, port, FirmwareOnPty(CFG, world, port).plug()


def test_a_setup_tapped_on_the_pad_starts_the_game_and_spectators_learn_no_piece(tmp_path: Path) -> None:
    game = load_game("stratego_barrage")
    stations = list(game.station_ids)
    profile = _pad_profile(tmp_path, stations)
    rng = random.Random(7)
    setups = {side: random_deployment(game, side, rng) for side in game.sides}
    uid = {(side, st): bytes([0x04, k, i, 0xC0, 0xFF, 0xEE, 0x01]) for k, side in enumerate(game.sides)
           for i, st in enumerate(sorted(setups[side]))}
    copies: dict[tuple[str, str], int] = {}
    tags = {}
    for (side, st), u in uid.items():
        piece = setups[side][st]
        copies[(side, piece)] = copies.get((side, piece), 0) + 1
        tags[u.hex().upper()] = {"side": side, "piece": piece, "copy": copies[(side, piece)]}
    tag_map = tmp_path / "tags.json"
    tag_map.write_text(json.dumps({"game": "stratego_barrage", "tags": tags}))

    world, pad, port, fw = _pad_board(tmp_path)
    web = _free_port()
    ready = tmp_path / "ready"
    cli = Cli(["play", "--board", "serial", "--profile", str(profile), "--port-path", str(port), "--tag-map", str(tag_map),
               "--host", "127.0.0.1", "--port", str(web), "--announce", "console", "--journal", str(tmp_path / "j.sqlite"),
               "--ready-file", str(ready)], env={"XDG_DATA_HOME": str(tmp_path / "data")})
    lines, wait_until = cli.lines, cli.wait_until

    try:
        wait_until(ready.exists, "the referee ready", timeout=15)
        # a player taps once the referee has the board (the page says so): what the scanner sends before the
        # referee opens the port is gone (opening a serial port empties its input), a tap with it
        wait_until(lambda: any("board known" in line for line in lines), "the referee to know the board")
        # each side in turn: tap a piece on the pad (the firmware reports TAP), lift it off the pad, put it down
        for side in game.sides:
            for st in rng.sample(sorted(setups[side]), len(setups[side])):
                u = uid[(side, st)]
                pad.card = Card(u)
                wait_until(lambda u=u: any(line.startswith("TAP ") and u.hex().upper() in line.upper() for line in fw.sent),
                           f"the pad's TAP of {u.hex()}")
                pad.card = None
                changes = sum(line.startswith("CHG ") for line in fw.sent)
                world.place(stations.index(st))
                wait_until(lambda n=changes: sum(line.startswith("CHG ") for line in fw.sent) > n, f"the reeds' report of {st}")
                time.sleep(0.15)  # a player's pace between putting one piece down and tapping the next
        wait_until(lambda: any("to move" in line for line in lines), "the game start on the console")
        events = _spectator_events(web)
        kinds = [e.get("event") for e in events]
        assert "start" in kinds, kinds
        assert [e.get("player") for e in events if e.get("event") == "setup" and e.get("status") == "registered"] \
            == list(game.sides), kinds  # both setups read off the pad, none entered anywhere
        text = json.dumps(events)
        for p in game.pieces:  # no piece of either army is named to a spectator, nor any tag
            assert f'"{p.id}"' not in text, p.id
        assert not any(u.hex().upper() in text.upper() for u in uid.values())
        assert fw.crashed is None
    finally:
        try:
            status = cli.stop()
        finally:
            fw.close()
    assert status == 0, cli.output
    console = "".join(lines)
    assert not any(u.hex().upper() in console.upper() for u in uid.values())


def test_a_checkin_profile_needs_the_serial_board_and_enrolled_tags(tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.delenv("FACEDOWN_DATA_DIR", raising=False)
    profile = _pad_profile(tmp_path, list(load_game("stratego_barrage").station_ids))
    for board in ("sim", "gpio"):
        assert main(["play", "--board", board, "--profile", str(profile), "--no-web"]) == 2
        err = capsys.readouterr().err
        assert "check-in pad profile" in err and "--board serial" in err and f"not --board {board}" in err
    with pytest.raises(SystemExit) as exc:
        main(["play", "--board", "serial", "--profile", str(profile), "--no-web", "--port-path", str(tmp_path / "nope")])
    assert "no RFID tags enrolled for stratego_barrage" in str(exc.value)
    assert f"facedown tags enroll stratego_barrage --profile {profile}" in str(exc.value)


def test_enrolment_with_a_checkin_profile_reads_pad_taps(tmp_path: Path) -> None:
    """`facedown tags enroll` with the pad profile: each tap on the pad is the read (no piece is put on the board);
    a tag tapped twice is refused and the same piece asked for again; every piece gets its tag and the map is saved."""
    game = load_game("stratego_barrage")
    profile = _pad_profile(tmp_path, list(game.station_ids))
    world, pad, port, fw = _pad_board(tmp_path)
    tag_map = tmp_path / "tags.json"
    cli = Cli(["tags", "enroll", "stratego_barrage", "--profile", str(profile), "--port", str(port), "--map", str(tag_map)],
              env={"XDG_DATA_HOME": str(tmp_path / "data")})
    wait_for = cli.wait_for

    def tap(u: bytes) -> None:
        taps = sum(line.startswith("TAP ") for line in fw.sent)
        pad.card = Card(u)
        end = time.monotonic() + 5
        while sum(line.startswith("TAP ") for line in fw.sent) == taps:
            assert time.monotonic() < end, "the pad never read the tag"
            time.sleep(0.01)
        pad.card = None

    names = {p.id: p.name for p in game.pieces}
    order = [(side, p.id, c) for side in game.sides for p in game.pieces for c in range(1, p.count + 1)]
    try:
        for i, (side, piece, c) in enumerate(order):
            prompt = f"place {side}'s {names[piece]} #{c} on the check-in pad"
            wait_for(prompt)
            if i == 1:  # the first piece's tag again: refused, the same piece asked for again
                # off the pad for a few of its reads, so the same tag counts as a new tap (waiting on the reads, not
                # on the clock: a loaded machine may poll the pad later than every 100 ms)
                polled = pad.transceives
                cli.wait_until(lambda polled=polled: pad.transceives >= polled + 6, "the pad polled without a tag")
                tap(bytes([0x04, 0, 0, 0xC0, 0xFF, 0xEE, 0x02]))
                wait_for("is already enrolled as red's marshal #1; take it off and place red's General #1")
            tap(bytes([0x04, 0, i, 0xC0, 0xFF, 0xEE, 0x02]))
        status = cli.proc.wait(10)
    finally:
        try:
            cli.stop()
        finally:
            fw.close()
    assert status == 0, cli.output
    doc = json.loads(tag_map.read_text())
    got = {uid: (e["side"], e["piece"], e["copy"]) for uid, e in doc["tags"].items()}
    assert got == {bytes([0x04, 0, i, 0xC0, 0xFF, 0xEE, 0x02]).hex().upper(): entry for i, entry in enumerate(order)}
    assert "0 pieces still without a tag" in cli.output
