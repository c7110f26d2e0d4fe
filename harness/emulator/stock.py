"""The firmware in stock rp2040js beside harness/emulator/board.mjs: the same image, the same world, rp2040js's own run
loop and USB host (stock.mjs), so the project's harness cannot drift from the emulator it is built on unnoticed.

``run_stock`` boots once, makes every change of a schedule in emulated time and returns what happened; ``probe``
runs a MicroPython snippet as main.py in either harness and returns its ``PROBE`` line (how fast the same code runs
in each). Both need what chip.py needs (Node, tests/node_modules, the RP2040 kit, littlefs-python).
"""

from __future__ import annotations

import json
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .chip import (
    BOOTROM_NAME,
    HERE,
    UF2_NAME,
    firmware_files,
    fs_image,
    kit_dir,
    missing_tools,
    rp2040js_entry,
)

MS = 1_000_000


@dataclass
class Change:
    """One change of the world and its CHG line: emulated ns."""

    action: str
    channel: int
    at: int  # the magnet moved
    t0: int  # the CHG line's first byte reached the USB host
    t: int  # its last byte did
    scans: list[int]  # starts of the scans since ``at`` (row 0 driven), up to the line's last byte

    @property
    def first_ms(self) -> float:
        return (self.t0 - self.at) / MS

    @property
    def last_ms(self) -> float:
        return (self.t - self.at) / MS

    def reporting_scan(self) -> int:
        """The start of the scan whose pass sent the line (the last one begun before its first byte)."""
        return max(s for s in self.scans if s <= self.t0)


@dataclass
class StockRun:
    changes: list[Change]
    lines: list[dict[str, Any]]
    scans: int = 0
    span_ns: int = 0
    wall_s: float = 0.0
    stderr: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def scans_per_s(self) -> float:
        return (self.scans - 1) / (self.span_ns / 1e9) if self.span_ns else 0.0


def _spec(cfg: dict[str, Any], image: bytes, work: Path, **extra: Any) -> Path:
    kit = kit_dir()
    assert kit is not None, missing_tools()
    (work / "fs.img").write_bytes(image)
    spec = {"uf2": str(kit / UF2_NAME), "bootrom": str(kit / BOOTROM_NAME), "image": str(work / "fs.img"),
            "rp2040js": str(rp2040js_entry()),
            "config": cfg, **extra}
    path = work / "spec.json"
    path.write_text(json.dumps(spec))
    return path


def run_stock(cfg: dict[str, Any], changes: list[tuple[int, str, int]], scan_ms: int = 1000,
              timeout_s: float = 600.0) -> StockRun:
    """Boot firmware/ with ``cfg`` (a reed matrix) in stock rp2040js; after SNAP, make each change (delay_us after the
    previous change's CHG, "place"|"lift", channel) and wait for its CHG; then count scans for ``scan_ms``."""
    import time

    with tempfile.TemporaryDirectory() as tmp:
        spec = _spec(cfg, fs_image(firmware_files(cfg)), Path(tmp), changes=[list(c) for c in changes],
                     scan_ms=scan_ms)
        wall = time.monotonic()
        proc = subprocess.run(["node", str(HERE / "stock.mjs"), str(spec)], capture_output=True, text=True,
                              cwd=str(HERE), timeout=timeout_s, check=False)
    run = StockRun([], [], wall_s=time.monotonic() - wall, stderr=proc.stderr)
    for raw in proc.stdout.splitlines():
        ev = json.loads(raw)
        if ev["ev"] == "line":
            run.lines.append(ev)
        elif ev["ev"] == "change":
            run.changes.append(Change(ev["action"], ev["ch"], ev["at"], ev["t0"], ev["t"], ev["scans"]))
        elif ev["ev"] == "done":
            run.scans, run.span_ns = ev["scans"], ev["span"]
            run.extra = {"empty_outs": ev["empty_outs"], "ins": ev["ins"], "over_ms": scan_ms}
    if proc.returncode != 0 or len(run.changes) != len(changes):
        raise AssertionError(f"stock rp2040js run ended early (exit {proc.returncode}): {proc.stderr[-600:]}; "
                             f"last lines {[x['text'] for x in run.lines[-5:]]}")
    return run


def probe(source: str, stock: bool, timeout_s: float = 300.0, host: bool = True) -> str:
    """Run ``source`` as main.py (it must print a line starting 'PROBE ') in stock rp2040js or in board.mjs; the text
    after 'PROBE '. With ``host`` False (stock only) no USB host is plugged in and the answer is what the probe left in
    WATCHDOG SCRATCH1, as a decimal string."""
    cfg: dict[str, Any] = {"sensing": "rfid"}  # board.mjs then wires no world at all
    with tempfile.TemporaryDirectory() as tmp:
        spec = _spec(cfg, fs_image({"main.py": source.encode()}), Path(tmp), probe=True, host=host)
        if stock and not host:
            proc = subprocess.run(["node", str(HERE / "stock.mjs"), str(spec)], capture_output=True, text=True,
                                  cwd=str(HERE), timeout=timeout_s, check=False)
            for raw in proc.stdout.splitlines():
                ev = json.loads(raw)
                if ev["ev"] == "probe":
                    return str(ev["scratch1"])
            raise AssertionError(f"no probe result from stock rp2040js without a host: {proc.stderr[-600:]}")
        assert host, "board.mjs always has its USB host"
        if stock:
            proc = subprocess.run(["node", str(HERE / "stock.mjs"), str(spec)], capture_output=True, text=True,
                                  cwd=str(HERE), timeout=timeout_s, check=False)
            for raw in proc.stdout.splitlines():
                ev = json.loads(raw)
                if ev["ev"] == "line" and ev["text"].startswith("PROBE "):
                    return str(ev["text"][6:])
            raise AssertionError(f"no PROBE line from stock rp2040js: {proc.stderr[-600:]}")
        with subprocess.Popen(["node", str(HERE / "board.mjs"), str(spec)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=str(HERE)) as board:
            assert board.stdout is not None
            text = ""
            try:
                for raw in board.stdout:
                    ev = json.loads(raw)
                    if ev["ev"] == "serial":
                        text += bytes.fromhex(ev["hex"]).decode("latin-1")
                        for line in text.split("\n")[:-1]:
                            if line.startswith("PROBE "):
                                return line[6:].rstrip("\r")
            finally:
                board.kill()
        raise AssertionError("no PROBE line from board.mjs")


#: How fast the same MicroPython loop runs: microseconds per iteration of a plain loop, and per byte handed to USB.
SPEED_PROBE = """
import sys, select, utime
def loop(n):
    x = 0
    t = utime.ticks_us()
    for i in range(n):
        x += i
    return utime.ticks_diff(utime.ticks_us(), t) / n
def one_byte_writes(n):
    out = sys.stdout.buffer
    p = select.poll()
    p.register(out, select.POLLOUT)
    one = b"."
    t = utime.ticks_us()
    for _ in range(n):
        for _ in p.ipoll(0):
            break
        out.write(one)
    return utime.ticks_diff(utime.ticks_us(), t) / n
utime.sleep_ms(300)
a = loop(2000)
b = one_byte_writes(40)
utime.sleep_ms(50)
sys.stdout.write("\\nPROBE loop_us=%.2f byte_us=%.1f\\n" % (a, b))
utime.sleep_ms(1000)
"""


#: The same code as a published measurement on a real Pico: MicroPython toggling one pin in a loop at module level,
#: ~63 kHz on an oscilloscope (elektronik-labor.de, "RPi Pico - Need for Speed"); here as on/off cycles per ms.
TOGGLE_PROBE = """
import sys, utime, machine
p = machine.Pin(1, machine.Pin.OUT)
utime.sleep_ms(300)
n = 3000
t = utime.ticks_us()
while n:
    p.value(1)
    p.value(0)
    n -= 1
a = utime.ticks_diff(utime.ticks_us(), t)
machine.mem32[0x40058010] = 3000000000 // a  # WATCHDOG SCRATCH1: cycles per second, for a run with no host
utime.sleep_ms(20)
sys.stdout.write("\\nPROBE %.1f\\n" % (3000000 / a))
utime.sleep_ms(500)
"""
#: What a real Pico does with that loop (kHz), from the measurement above.
TOGGLE_SILICON_KHZ = 63


def toggle_khz(stock_: bool, host: bool = True) -> float:
    """Pin on/off cycles per ms of that loop in stock rp2040js (with its USB host or none) or in board.mjs."""
    got = probe(TOGGLE_PROBE, stock=stock_, host=host)
    return float(got) if host else int(got) / 1000


def schedule(pairs: int, channels: int = 100) -> list[tuple[int, str, int]]:
    """``pairs`` placements and lifts at uneven phases against the scan period: each change 40-45 ms (in uneven
    steps) after the previous one's CHG line, on channels spread over the board."""
    out: list[tuple[int, str, int]] = []
    for i in range(pairs):
        ch = (i * 37 + 11) % channels
        out.append((40_000 + (i * 1370) % 5000, "place", ch))
        out.append((40_000 + (i * 2290 + 700) % 5000, "lift", ch))
    return out


def run_board(chip: Any, changes: list[tuple[int, str, int]]) -> list[Change]:
    """The same schedule on the project's harness (an EmulatedScanner already past its boot lines)."""
    got: list[Change] = []
    for delay_us, action, ch in changes:
        chip.stats(reset=True)
        mark = chip.mark()
        at = chip.steps([(delay_us, action, ch)])
        want = f"{ch}{'+' if action == 'place' else '-'}"
        line = chip.wait_line(lambda x, w=want: x.startswith("CHG ") and w in x.split(" c=")[1].split("*")[0].split(","),
                              since=mark)
        scans = [s for s in chip.stats(reset=True)["scan_times"] if at <= s <= line.t]
        got.append(Change(action, ch, at, line.t0, line.t, scans))
    return got
