"""Serial scanner figures: magnet placed -> snapshot on the host over a real pty (p50/p99), and the size and
host-side handling time of a full 100-station snapshot. Run: ./dev bench serial [N].

The magnet -> snapshot figure uses the shipped Stratego profile's settle and scan period (40 ms / 10 ms, read from
hardware/profiles/stratego.yaml) and is the whole wait: settle + the scan phase (0 to one period) + the line over the
pty; the part beyond the settle time is printed beside it. A settle of 0 isolates the scan phase and the link.

Leaves out: the referee and everything after the snapshot (see e2e.py), USB CDC (a pty here), reed bounce (the
simulated reeds switch cleanly) and the firmware's speed on a real RP2040 (CPython runs it here, in a thread of this
process; e2e.py runs it in its own process).
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

# This file is named like pyserial's package: keep its folder off the path so `import serial` finds pyserial.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.sensing.serial_link import LinkState, SerialScannerBoard  # noqa: E402
from harness.firmware_standin.runner import FirmwareOnPty, World, fd_proto  # noqa: E402


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def latency(n: int, settle_ms: int, scan_ms: int) -> list[float]:
    rows, cols = list(range(10)), list(range(10, 20))
    cfg = {"format": 2, "channels": 100, "board": "bench", "sensing": "reed", "scanner": "matrix", "settle_ms": settle_ms,
           "scan_period_ms": scan_ms,
           "heartbeat_ms": 1000, "matrix": {"rows": rows, "cols": cols}}
    world = World()
    world.matrix(rows, cols)
    tmp = Path(tempfile.mkdtemp())
    fw = FirmwareOnPty(cfg, world, tmp / "ttyACM0").plug()
    stations = [f"s{i}" for i in range(100)]
    board = SerialScannerBoard(stations, {s: i for i, s in enumerate(stations)}, port=str(tmp / "ttyACM0"))
    got = threading.Event()
    board_thread = threading.Thread(target=board.run, args=(lambda s: got.set(),), daemon=True)
    board_thread.start()
    assert board.wait_known(5), board.status
    out = []
    for i in range(n):
        got.clear()
        ch = i % 100
        t0 = time.perf_counter()
        (world.lift if ch in world.closed else world.place)(ch)
        if not got.wait(2):
            raise SystemExit(f"no snapshot for change {i}: {board.status}")
        out.append((time.perf_counter() - t0) * 1000)
        time.sleep(0.003 + (i * 7919 % 100) / 10000)  # puts the next change at any phase of the scan
    board.stop()
    board_thread.join(5)
    fw.close()
    return out


def snapshot_size() -> None:
    occ = [True] * 100
    plain = fd_proto.frame("SNAP b=1A2B seq=123456 " + fd_proto.state_text(occ, {}))
    tags = {i: "04%012X" % (0xA1B2C3D4E500 + i) for i in range(80)}
    tagged = fd_proto.frame("SNAP b=1A2B seq=123456 " + fd_proto.state_text(occ, tags))
    print(f"full snapshot, 100 stations, occupancy only: {len(plain)} bytes "
          f"({len(plain) * 10 / 115200 * 1000:.2f} ms of wire at 115200 baud; USB CDC is faster)")
    print(f"full snapshot, 100 stations, 80 7-byte tags: {len(tagged)} bytes")
    stations = [f"s{i}" for i in range(100)]
    for name, line in (("occupancy only", plain), ("80 tags", tagged)):
        times = []
        for k in range(300):
            link = LinkState(stations, {s: i for i, s in enumerate(stations)})
            link.on_line(fd_proto.frame("HELLO proto=1 fw=1 board=b b=1A2B n=100 scanner=matrix sensing=reed").strip(), 0)
            t0 = time.perf_counter()
            link.on_line(line.strip(), k)
            times.append((time.perf_counter() - t0) * 1e6)
        print(f"host handles a full snapshot ({name}): p50 {pct(times, 50):.0f} us, p99 {pct(times, 99):.0f} us")


def main() -> None:
    from controller.sensing.profile import find_profile

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 300
    profile = find_profile("stratego")
    scan = profile.scan_period_ms
    for settle in (0, profile.settle_ms):
        xs = latency(n, settle, scan)
        beyond = [x - settle for x in xs]
        print(f"magnet -> host snapshot over pty, settle {settle} ms, scan {scan} ms, {n} changes: "
              f"p50 {pct(xs, 50):.1f} ms, p99 {pct(xs, 99):.1f} ms, max {max(xs):.1f} ms, mean {statistics.mean(xs):.1f} ms"
              f" (beyond the settle time: p50 {pct(beyond, 50):.1f}, p99 {pct(beyond, 99):.1f} ms; the scan phase alone"
              f" is 0-{scan} ms)")
    snapshot_size()
    print("left out: the referee after the snapshot (e2e.py), USB, reed bounce, the RP2040's own speed")


if __name__ == "__main__":
    main()
