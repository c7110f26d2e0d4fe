"""Scanner firmware figures on the emulated RP2040 (MicroPython v1.28.0 in rp2040js, harness/emulator/), per build:
boot to HELLO, magnet -> CHG latency, scans per second, heartbeat interval, tag-read time, full RFID survey time.

Every figure is EMULATED time (rp2040js counts the chip's cycles; it has not been calibrated against a real Pico,
so treat absolute times as good estimates and comparisons as solid). Needs what the emulated tests need: Node,
tests/node_modules (npm install --prefix tests), littlefs-python and the RP2040 kit (harness/emulator/kit/, or
$FACEDOWN_RP2040; without one of them the benchmark stops and says what is missing).
First, the two harnesses side by side on the shipped reed matrix: harness/emulator/board.mjs (the project's: its own
run loop for PIO on the emulated clock, a USB host that NAKs an OUT request while it has nothing to send, as a real
host does) and stock rp2040js 1.4.1 (harness/emulator/stock.mjs: its Simulator.execute and its USBCDC, which answers
every OUT request at once with an empty packet, ~35,000 a second, so the chip spends ~2/3 of its CPU on USB): the
same firmware and config, the same changes at uneven phases, magnet -> the CHG line's first and last byte at the
USB host; and how fast the same MicroPython loop runs in each (the speed probe), in stock rp2040js with no USB host
plugged in, and on a real Pico (a published oscilloscope figure for the same pin-toggling loop).

Run: python benchmarks/firmware.py [N changes per build, default 40] [--only harnesses|builds]. A few minutes.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from harness.emulator import stock  # noqa: E402
from harness.emulator.chip import FIRMWARE, EmulatedScanner, missing_tools  # noqa: E402

MS = 1_000_000
BUS = {"spi": 0, "sck": 18, "mosi": 19, "miso": 16, "baudrate": 4000000}
DECODER7 = {"kind": "decoder", "address": [2, 3, 4, 5, 6, 7, 8], "enable": 9}


def shipped() -> dict[str, Any]:
    return json.loads((FIRMWARE / "config.json").read_text())


BUILDS: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {
    "reed matrix 10x10 (shipped config)": (shipped(), {}),
    "74HC165 x17, 136 inputs (siguo)": ({"format": 2, "channels": 136, "sensing": "reed", "scanner": "shift_register",
                                         "settle_ms": 40, "scan_period_ms": 10, "heartbeat_ms": 1000,
                                         "shift_register": {"load": 20, "clock": 21, "data": 22, "count": 136}},
                                        {"chain_chips": 17}),
    "RFID per station, 100 readers": ({"format": 2, "channels": 100, "sensing": "rfid", "heartbeat_ms": 1000,
                                       "rfid": {**BUS, "readers": 100, "select": DECODER7}}, {}),
    "RFID check-in pad + reed matrix": ({**shipped(), "sensing": "checkin", "checkin": {"poll_ms": 100},
                                        "rfid": {**BUS, "readers": 1, "select": {"kind": "direct", "pins": [26]}}}, {}),
    "hybrid: 74HC165 x8 + 60 readers": ({"format": 2, "channels": 64, "sensing": "hybrid", "scanner": "shift_register",
                                         "settle_ms": 30, "scan_period_ms": 5, "heartbeat_ms": 1000,
                                         "shift_register": {"load": 20, "clock": 21, "data": 22, "count": 64},
                                         "rfid": {**BUS, "readers": 60,
                                                  "select": {"kind": "decoder", "address": [2, 3, 4, 5, 6, 7], "enable": 8}}},
                                        {"chain_chips": 8}),
}


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def fmt(xs: list[float], unit: str = "ms") -> str:
    if not xs:
        return "-"
    return f"p50 {pct(xs, 50):.1f} {unit}, p99 {pct(xs, 99):.1f} {unit} (n={len(xs)})"


def kind(text: str) -> str:
    return text.split(" ", 1)[0]


def wait_chg(chip: EmulatedScanner, mark: int, want: Callable[[str], bool]) -> Any:
    return chip.wait_line(lambda x: kind(x) == "CHG" and want(x), since=mark, timeout=300)


def ntag(i: int) -> str:
    return f"04{i:02X}A1B2C3D4{(i * 7) & 0xFF:02X}"


def measure(name: str, cfg: dict[str, Any], kw: dict[str, Any], n: int, work: Path) -> None:
    wall = time.monotonic()
    chip = EmulatedScanner(cfg, work / name.split()[0].replace(":", ""), **kw).start()
    try:
        hello = chip.wait_line(lambda x: kind(x) == "HELLO", timeout=300)
        print(f"\n{name}")
        print(f"  boot to HELLO: {hello.t / MS:.0f} ms")
        sensing = cfg["sensing"]
        latency: list[float] = []
        tag_reads: list[float] = []
        if sensing in ("reed", "checkin", "hybrid"):
            for i in range(n):
                ch = (i * 37) % 60
                mark = chip.mark()
                if sensing == "hybrid":
                    t = chip.steps([(0, "tag", ch, [ntag(ch)]), (0, "place", ch)])
                    line = wait_chg(chip, mark, lambda x, ch=ch: f"{ch}+{ntag(ch)}" in x)
                    tag_reads.append((line.t - t) / MS)
                else:
                    t = chip.place(ch)
                    line = wait_chg(chip, mark, lambda x, ch=ch: f"c={ch}+" in x or f",{ch}+" in x)
                latency.append((line.t0 - t) / MS)
                mark = chip.mark()
                if sensing == "hybrid":
                    chip.steps([(0, "lift", ch), (0, "tag", ch, [])])
                else:
                    chip.lift(ch)
                wait_chg(chip, mark, lambda x, ch=ch: f"{ch}-" in x)
            label = "magnet -> CHG with the tag (last byte)" if sensing == "hybrid" else "magnet -> CHG (first byte)"
            print(f"  {label}: {fmt(tag_reads if sensing == 'hybrid' else latency)}")
        if sensing == "checkin":
            taps = []
            for i in range(max(5, n // 4)):
                mark = chip.mark()
                t = chip.steps([(0, "tag", 0, [ntag(i)])])
                line = chip.wait_line(lambda x: kind(x) == "TAP", since=mark, timeout=300)
                taps.append((line.t - t) / MS)
                chip.steps([(0, "tag", 0, [])])
                chip.wait_line(lambda x: kind(x) == "HB", since=chip.mark(), timeout=300)
            print(f"  tag on the pad -> TAP line (poll 100 ms): {fmt(taps)}")
        if sensing == "rfid":
            mark = chip.mark()
            chip.wait_line(lambda x: kind(x) == "HB", since=mark, timeout=300)
            chip.wait_line(lambda x: kind(x) == "HB", since=chip.mark(), timeout=300)
            empty = [int(x.text.split("survey=")[1].split("*")[0].split(" ")[0]) for x in chip.lines[mark:]
                     if kind(x.text) == "HB" and "survey=" in x.text]
            print(f"  full survey, empty board: {empty[-1]} ms")
            for i in range(max(5, n // 4)):
                k = (i * 13) % 100
                mark = chip.mark()
                t = chip.tags({k: [ntag(k)]})
                line = wait_chg(chip, mark, lambda x, k=k: f"{k}+{ntag(k)}" in x)
                tag_reads.append((line.t - t) / MS)
                chip.tags({k: []})
                wait_chg(chip, chip.mark(), lambda x, k=k: f"{k}-" in x)
            print(f"  tag laid on a reader -> CHG with its UID (waits for the survey to come round): {fmt(tag_reads)}")
            mark = chip.mark()
            t = chip.tags({k: [ntag(k)] for k in range(100)})
            seen: set[int] = set()
            while len(seen) < 100:
                line = wait_chg(chip, mark, lambda x: True)
                mark = chip.lines.index(line) + 1
                seen |= {int(c.split("+")[0]) for c in line.text.split("c=")[1].split("*")[0].split(",") if "+" in c}
            print(f"  board full of 7-byte tags: all 100 reported after {(line.t - t) / MS:.0f} ms")
            chip.wait_line(lambda x: kind(x) == "HB", since=chip.mark(), timeout=300)
            chip.wait_line(lambda x: kind(x) == "HB", since=chip.mark(), timeout=300)
            full = [int(x.text.split("survey=")[1].split("*")[0].split(" ")[0]) for x in chip.lines
                    if kind(x.text) == "HB" and "survey=" in x.text]
            print(f"  full survey, 100 tags: {full[-1]} ms; one antenna on at a time: max {chip.stats()['max_fields']}")
        chip.stats(reset=True)
        start = chip.now()
        mark = chip.mark()
        while chip.now() < start + 2100 * MS:
            time.sleep(0.05)
        times = chip.stats()["scan_times"]
        gaps = [(b - a) / MS for a, b in zip(times, times[1:], strict=False)]
        if gaps:
            rate = 1000 / (sum(gaps) / len(gaps))
            print(f"  scans per second: {rate:.1f} (configured period {cfg.get('scan_period_ms', 5)} ms); "
                  f"gap between scans {fmt(gaps)}")
        hb = [x.t0 for x in chip.lines[mark:] if kind(x.text) == "HB"]
        hbg = [(b - a) / MS for a, b in zip(hb, hb[1:], strict=False)]
        print(f"  heartbeat interval: {fmt(hbg)}")
        print(f"  ({time.monotonic() - wall:.0f} s of wall time for this build)")
    finally:
        chip.close()


def spread(xs: list[float]) -> str:
    """min / p50 / p99 / max of emulated ms."""
    return f"min {min(xs):.1f}, p50 {pct(xs, 50):.1f}, p99 {pct(xs, 99):.1f}, max {max(xs):.1f} ms (n={len(xs)})"


def harnesses(pairs: int, work: Path) -> None:
    cfg = shipped()
    settle, period = cfg["settle_ms"], cfg["scan_period_ms"]
    plan = stock.schedule(pairs)
    print(f"\nreed matrix 10x10 (shipped config: settle {settle} ms, scan period {period} ms), {len(plan)} changes "
          f"({pairs} placements, {pairs} lifts) at uneven phases against the scan; target for the CHG line's last "
          f"byte at the host: settle + period + 10 = {settle + period + 10} ms")
    wall = time.monotonic()
    chip = EmulatedScanner(cfg, work / "harness-board").start()
    try:
        chip.wait_line(lambda x: kind(x) == "SNAP", timeout=300)
        ours = stock.run_board(chip, plan)
        chip.stats(reset=True)
        start = chip.now()
        while chip.now() < start + 1000 * MS:
            time.sleep(0.05)
        times = chip.stats()["scan_times"]
        our_rate = (len(times) - 1) / ((times[-1] - times[0]) / 1e9) if len(times) > 1 else 0.0
    finally:
        chip.close()
    run = stock.run_stock(cfg, plan, scan_ms=1000)
    for name, got, rate in (("board.mjs (project)", ours, our_rate), ("stock rp2040js", run.changes, run.scans_per_s)):
        print(f"  {name}: scans per second {rate:.1f} (configured {1000 / period:.0f})")
        for action in ("place", "lift"):
            these = [c for c in got if c.action == action]
            print(f"    {action:<5} magnet -> CHG first byte {spread([c.first_ms for c in these])}")
            print(f"    {'':<5} magnet -> CHG last byte  {spread([c.last_ms for c in these])}")
        print(f"    magnet -> start of the scan that reported it {spread([(c.reporting_scan() - c.at) / MS for c in got])}")
        print(f"    that scan's start -> the line's last byte   {spread([(c.t - c.reporting_scan()) / MS for c in got])}")
    empty = run.extra["empty_outs"] * 1000 / run.extra["over_ms"]
    print(f"  stock rp2040js's USB host answered {empty:,.0f} OUT requests a second with nothing (board.mjs: 0, it "
          "answers when it has bytes, as a real host does)")
    for name, on_stock in (("board.mjs (project)", False), ("stock rp2040js", True)):
        print(f"  speed probe, {name}: {stock.probe(stock.SPEED_PROBE, stock=on_stock)} (us per loop iteration, per "
              f"byte handed to USB); a pin toggled in a loop: {stock.toggle_khz(on_stock):.1f} kHz (a real Pico: "
              f"~{stock.TOGGLE_SILICON_KHZ} kHz)")
    print(f"  the same pin loop in stock rp2040js with no USB host plugged in: {stock.toggle_khz(True, host=False):.1f} "
          "kHz (its own run loop, nothing on USB: what board.mjs's run loop must match)")
    print(f"  ({time.monotonic() - wall:.0f} s of wall time for the comparison)")


def main() -> None:
    why = missing_tools()
    if why:
        raise SystemExit(f"benchmarks/firmware.py: {why}")
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else None
    if only is not None:
        args = [a for a in args if a != only]
    n = int(args[0]) if args else 40
    print("Scanner firmware on the emulated RP2040: every time below is emulated time (rp2040js), not wall time.")
    with tempfile.TemporaryDirectory() as tmp:
        if only in (None, "harnesses"):
            harnesses(max(4, n // 5), Path(tmp))
        if only in (None, "builds"):
            for name, (cfg, kw) in BUILDS.items():
                measure(name, cfg, kw, n, Path(tmp))


if __name__ == "__main__":
    main()
