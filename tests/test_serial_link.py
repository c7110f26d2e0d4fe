"""The serial scanner backend: the protocol state machine directly, then the real firmware behind a real pty,
opened with pyserial, through unplugs, noise, dropped and doubled lines and reboots."""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path

import pytest
from serial.tools.list_ports_common import ListPortInfo

from controller.sensing.base import Snapshot
from controller.sensing.serial_link import LinkState, SerialScannerBoard, find_port
from harness.firmware_standin.runner import FirmwareOnPty, World, fd_proto

STATIONS = [f"s{i}" for i in range(12)]
MATRIX = {s: (i // 4, i % 4) for i, s in enumerate(STATIONS)}


def line(body: str) -> str:
    return fd_proto.frame(body).strip()


def hello(boot: str = "00AA", n: int = 12) -> str:
    return line(f"HELLO proto=1 fw=1.0.0 board=t b={boot} n={n} scanner=matrix sensing=reed rows=3 cols=4 caps=snap")


def known_link() -> LinkState:
    link = LinkState(STATIONS, MATRIX)
    link.on_line(hello(), 0)
    reqs, snap = link.on_line(line("SNAP b=00AA seq=4 occ=100 tags=-"), 1)
    assert link.known and snap == Snapshot(1, frozenset({"s0"}), {})
    return link


# -- the state machine ---------------------------------------------------------------------------------------
def test_change_in_sequence_is_reported_and_duplicate_ignored():
    link = known_link()
    reqs, snap = link.on_line(line("CHG b=00AA seq=5 c=5+,0-"), 2)
    assert snap == Snapshot(2, frozenset({"s5"}), {}) and reqs == []
    assert link.on_line(line("CHG b=00AA seq=5 c=5+,0-"), 3) == ([], None)
    assert link.known


def test_sequence_gap_loses_the_board_until_a_full_snapshot():
    link = known_link()
    reqs, snap = link.on_line(line("CHG b=00AA seq=7 c=5+"), 2)
    assert (reqs, snap, link.known) == (["SNAP?"], None, False)
    assert link.on_line(line("CHG b=00AA seq=8 c=6+"), 3) == ([], None)  # nothing while unknown
    _, snap = link.on_line(line("SNAP b=00AA seq=8 occ=060 tags=-"), 4)
    assert link.known and snap == Snapshot(4, frozenset({"s5", "s6"}), {})


def test_heartbeat_checks_sequence_and_whole_state():
    link = known_link()
    good = fd_proto.state_sum([True] + [False] * 11, {})
    assert link.on_line(line(f"HB b=00AA seq=4 sum={good}"), 2) == ([], None) and link.known
    assert link.on_line(line("HB b=00AA seq=4 sum=0000"), 3)[0] == ["SNAP?"] and not link.known
    link = known_link()
    assert link.on_line(line(f"HB b=00AA seq=5 sum={good}"), 3)[0] == ["SNAP?"] and not link.known


def test_corrupt_line_resyncs_but_foreign_text_is_only_logged(caplog):
    caplog.set_level(logging.INFO, "facedown.sensing.serial")
    link = known_link()
    assert link.on_line("MicroPython v1.23.0 on 2024-06-02; Raspberry Pi Pico with RP2040", 2) == ([], None)
    assert link.known and "outside the protocol" in caplog.text
    bad = line("CHG b=00AA seq=5 c=5+").replace("5+", "7+")
    assert link.on_line(bad, 3) == (["SNAP?"], None) and not link.known
    assert "wrong checksum" in caplog.text


def test_another_boot_means_the_scanner_restarted():
    link = known_link()
    assert link.on_line(line("CHG b=0BBB seq=1 c=5+"), 2)[1] is None and not link.known
    link = known_link()
    link.on_line(hello("0CCC"), 2)
    assert not link.known


def test_a_pad_tap_heard_before_the_hello_is_kept_for_the_same_boot(caplog):
    """A piece tapped on the check-in pad while the referee is still connecting (its TAP arrives before the
    scanner's HELLO) is not lost: the HELLO of the same boot lets it stand; a TAP of another boot is said and dropped
    (under load in CI, the first piece of a setup lost its tag this way and the army never registered)."""
    taps: list[str] = []
    link = LinkState(STATIONS, MATRIX)
    link.on_tap = taps.append
    assert link.on_line(line("TAP b=00AA k=1 uid=04A1B2C3"), 0) == ([], None) and taps == []
    link.on_line(hello(), 1)
    assert taps == ["04A1B2C3"]
    link.on_line(line("TAP b=00AA k=2 uid=04D4E5F6"), 2)
    assert taps == ["04A1B2C3", "04D4E5F6"]
    stale = LinkState(STATIONS, MATRIX)
    stale.on_tap = taps.append
    stale.on_line(line("TAP b=0BBB k=1 uid=04000001"), 0)
    stale.on_line(hello(), 1)
    with caplog.at_level(logging.WARNING, logger="facedown.sensing.serial"):
        stale.on_line(line("TAP b=0BBB k=2 uid=04000002"), 2)
    assert taps == ["04A1B2C3", "04D4E5F6"]
    assert "pad tap from boot 0BBB" in caplog.text and "tap the piece again" in caplog.text


def test_profile_that_does_not_fit_the_scanner_is_refused():
    link = LinkState(STATIONS, {**MATRIX, "s11": 40})
    link.on_line(hello(), 0)
    link.on_line(line("SNAP b=00AA seq=0 occ=000 tags=-"), 1)
    assert not link.known and "s11" in link.status and "0..11" in link.status


def test_find_port_by_usb_id():
    ports = []
    for dev, vid, pid in (("/dev/ttyUSB0", 0x0403, 0x6001), ("/dev/ttyACM1", 0x2E8A, 0x0005), ("/dev/ttyACM0", 0x2E8A, 0x000A)):
        p = ListPortInfo(dev, skip_link_detection=True)
        p.vid, p.pid = vid, pid
        ports.append(p)
    assert find_port(ports, 0x2E8A, 0x0005) == "/dev/ttyACM1"
    assert find_port(ports, 0x2E8A) == "/dev/ttyACM0"
    assert find_port(ports, 0x1234) is None


# -- the real firmware on a pty ------------------------------------------------------------------------------
CFG = {"format": 2, "channels": 12, "board": "test", "sensing": "reed", "scanner": "matrix", "settle_ms": 10, "scan_period_ms": 2,
       "heartbeat_ms": 150, "matrix": {"rows": [0, 1, 2], "cols": [3, 4, 5, 6]}}


class Rig:
    def __init__(self, tmp: Path, cfg: dict = CFG, channels=None) -> None:
        self.world = World()
        m = cfg.get("matrix")
        if m:
            self.world.matrix(m["rows"], m["cols"])
        self.fw = FirmwareOnPty(cfg, self.world, tmp / "ttyACM0")
        self.fw.plug()
        self.board = SerialScannerBoard(STATIONS, channels or MATRIX, port=str(tmp / "ttyACM0"),
                                        heartbeat_timeout_s=0.6, resync_every_s=0.2, backoff_s=(0.05, 0.2))
        self.snaps: list[Snapshot] = []
        self.unknown_snaps: list[Snapshot] = []

        def record(s: Snapshot) -> None:
            if not self.board.known:
                self.unknown_snaps.append(s)
            self.snaps.append(s)

        self.thread = threading.Thread(target=self.board.run, args=(record,), daemon=True)
        self.thread.start()
        assert self.board.wait_known(5), self.board.status

    def until(self, cond, timeout: float = 5.0) -> None:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if cond():
                return
            time.sleep(0.01)
        raise AssertionError(f"timed out; status {self.board.status!r}, snaps {self.snaps[-3:]}")

    def occupied(self) -> frozenset[str]:
        return self.snaps[-1].occupied if self.snaps else frozenset()

    def close(self) -> None:
        self.board.stop()
        self.thread.join(5)
        self.fw.close()
        assert self.fw.crashed is None, self.fw.crashed
        assert self.unknown_snaps == []


@pytest.fixture
def rig(tmp_path):
    r = Rig(tmp_path)
    yield r
    r.close()


def test_pieces_placed_and_lifted_reach_the_host(rig):
    rig.world.place(5)
    rig.until(lambda: rig.occupied() == {"s5"})
    rig.world.place(0)
    rig.world.lift(5)
    rig.until(lambda: rig.occupied() == {"s0"})
    assert rig.board.current().occupied == {"s0"}


def test_unplug_and_replug(rig):
    rig.world.place(1)
    rig.until(lambda: rig.occupied() == {"s1"})
    rig.fw.unplug()
    rig.until(lambda: not rig.board.known)
    assert "lost" in rig.board.status
    rig.world.place(2)  # moved while unplugged
    n = len(rig.snaps)
    time.sleep(0.2)
    assert len(rig.snaps) == n  # nothing reported while the scanner is away
    rig.fw.replug(boot_id=0x2002)
    rig.until(lambda: rig.board.known and rig.occupied() == {"s1", "s2"})
    assert rig.board.reconnects >= 1


def test_garbage_bytes_are_skipped(rig, caplog):
    caplog.set_level(logging.INFO, "facedown.sensing.serial")
    rig.fw.raw(b"\x00\xff\xfe junk\r\n>>> \nTraceback (most recent call last):\n")
    rig.world.place(3)
    rig.until(lambda: rig.occupied() == {"s3"})
    rig.fw.raw(b"\x13\x37noise without end" * 300)  # longer than any line: dropped, then resync
    rig.fw.raw(b"\n")
    rig.world.place(4)
    rig.until(lambda: rig.board.known and rig.occupied() == {"s3", "s4"})
    assert "outside the protocol" in caplog.text


def test_dropped_change_is_caught_and_resynced(rig):
    drop = {"n": 1}

    def lose_one_chg(text: str) -> list[str]:
        if text.startswith("CHG") and drop["n"]:
            drop["n"] -= 1
            return []
        return [text]

    rig.fw.filter = lose_one_chg
    rig.world.place(7)
    end = time.monotonic() + 5
    while drop["n"]:  # the change was found and its CHG lost on the way (looked at every millisecond)
        assert time.monotonic() < end, "the firmware never sent the change"
        time.sleep(0.001)
    assert "s7" not in rig.occupied()  # the host cannot know yet (until the next heartbeat, up to 150 ms later)
    rig.until(lambda: rig.board.known and rig.occupied() == {"s7"})  # heartbeat exposes it; SNAP? repairs it


def test_duplicated_lines_change_nothing(rig):
    rig.fw.filter = lambda text: [text, text]
    rig.world.place(8)
    rig.until(lambda: rig.occupied() == {"s8"})
    rig.world.lift(8)
    rig.until(lambda: rig.occupied() == frozenset())
    assert [s.occupied for s in rig.snaps[-2:]] == [{"s8"}, frozenset()]


def test_corrupted_change_resyncs(rig):
    flip = {"n": 1}

    def corrupt(text: str) -> list[str]:
        if text.startswith("CHG") and flip["n"]:
            flip["n"] -= 1
            return [text.replace("c=", "c=1")]
        return [text]

    rig.fw.filter = corrupt
    rig.world.place(9)
    rig.until(lambda: rig.board.known and rig.occupied() == {"s9"})


def test_scanner_reboot_mid_run(rig):
    rig.world.place(10)
    rig.until(lambda: rig.occupied() == {"s10"})
    lost = threading.Event()
    orig = rig.fw.filter

    def watch(text: str) -> list[str]:
        if not rig.board.known:
            lost.set()
        return orig(text)

    rig.fw.filter = watch
    rig.world.place(11)
    rig.fw.reboot(boot_id=0x3003)
    rig.until(lambda: rig.board.known and rig.occupied() == {"s10", "s11"})
    assert rig.board.link.boot == "3003"


def test_hybrid_tags_over_the_pty(tmp_path):
    from harness.firmware_standin.runner import Card, MFRC522Chip

    cfg = {"format": 2, "channels": 16, "board": "h", "sensing": "hybrid", "scanner": "shift_register", "settle_ms": 5,
           "scan_period_ms": 2, "heartbeat_ms": 150, "shift_register": {"load": 20, "clock": 21, "data": 22, "count": 16},
           "rfid": {"spi": 0, "sck": 18, "mosi": 19, "miso": 16, "readers": 12, "field_us": 0,
                    "select": {"kind": "direct", "pins": list(range(30, 42))}}}
    chips = [MFRC522Chip() for _ in range(12)]
    world = World()
    world.shift_register(20, 21, 22, 16)
    world.rfid_direct(list(range(30, 42)), chips)
    r = Rig.__new__(Rig)
    r.world = world
    r.fw = FirmwareOnPty(cfg, world, tmp_path / "ttyACM0")
    r.fw.plug()
    r.board = SerialScannerBoard(STATIONS, {s: i for i, s in enumerate(STATIONS)}, port=str(tmp_path / "ttyACM0"),
                                 heartbeat_timeout_s=0.6)
    r.snaps, r.unknown_snaps = [], []
    r.thread = threading.Thread(target=r.board.run, args=(r.snaps.append,), daemon=True)
    r.thread.start()
    try:
        assert r.board.wait_known(5)
        chips[6].card = Card(bytes.fromhex("04A1B2C3D4E5F6"))
        world.place(6)
        r.until(lambda: r.snaps and r.snaps[-1].tags == {"s6": "04A1B2C3D4E5F6"})
        assert r.snaps[-1].occupied == {"s6"}
    finally:
        r.close()
