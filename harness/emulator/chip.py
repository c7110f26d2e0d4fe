"""The scanner firmware on an emulated RP2040, its USB serial port on a real pseudo terminal.

``EmulatedScanner`` builds a LittleFS image of ``firmware/`` (unmodified; only config.json is the build's own),
starts ``board.mjs`` under Node (rp2040js from tests/node_modules, MicroPython's UF2 and the bootrom from the
repository's own kit, harness/emulator/kit/), bridges the chip's USB CDC bytes to a pty whose slave end is
reachable at ``port`` (the host opens it like /dev/ttyACM0), and lets a test act on the world in emulated time:
magnets placed, lifted, bouncing and slid; tags laid on readers; the host not reading; the SPI bus hanging.
Lines from the chip are kept with the emulated time (ns) at which the USB host received them.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import shutil
import subprocess
import termios
import threading
import time
import tty
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
FIRMWARE = ROOT / "firmware"
NODE_MODULES = ROOT / "tests" / "node_modules"
UF2_NAME = "micropython-v1.28.0-RPI_PICO.uf2"
BOOTROM_NAME = "bootrom-b1.mjs"
#: MicroPython v1.28.0 RPI_PICO: the LittleFS filesystem's geometry.
FS_BLOCK_SIZE, FS_BLOCK_COUNT, FS_PROG_SIZE = 4096, 352, 256


#: The RP2040 kit the repository carries (README.md there: what, where from, licences).
KIT = HERE / "kit"


def kit_dir() -> Path | None:
    """The RP2040 kit (UF2 + bootrom): $FACEDOWN_RP2040 when set (another build to try), else harness/emulator/kit."""
    env = os.environ.get("FACEDOWN_RP2040")
    kit = Path(env) if env else KIT
    if (kit / UF2_NAME).is_file() and (kit / BOOTROM_NAME).is_file():
        return kit
    return None


def rp2040js_entry() -> Path:
    """rp2040js's ES module entry in tests/node_modules (its package.json's "module"): the emulator scripts import it
    by path, since Node looks for packages only beside and above the importing script."""
    pkg = NODE_MODULES / "rp2040js"
    return pkg / json.loads((pkg / "package.json").read_text())["module"]


def missing_tools() -> str | None:
    """Why the emulated chip cannot run here, or None when it can."""
    if shutil.which("node") is None:
        return "needs Node.js (node) to run rp2040js"
    if not (NODE_MODULES / "rp2040js" / "package.json").is_file():
        return "needs rp2040js: npm install --prefix tests (tests/package.json)"
    if kit_dir() is None:
        return (f"needs the RP2040 kit ({UF2_NAME}, {BOOTROM_NAME}) in {os.environ.get('FACEDOWN_RP2040') or KIT}")
    try:
        import littlefs  # noqa: F401
    except ImportError:
        return "needs littlefs-python (pip install -e '.[test]')"
    return None


def fs_image(files: dict[str, bytes]) -> bytes:
    """A LittleFS image of the Pico's filesystem holding ``files`` at its root."""
    from littlefs import LittleFS

    fs = LittleFS(block_size=FS_BLOCK_SIZE, block_count=FS_BLOCK_COUNT, prog_size=FS_PROG_SIZE)
    for name, data in files.items():
        with fs.open(name, "wb") as fh:
            fh.write(data)
    return bytes(fs.context.buffer)


def firmware_files(cfg: dict[str, Any] | str) -> dict[str, bytes]:
    """firmware/ as shipped (every .py), with this build's config.json (a str is written as is: a broken config)."""
    files = {p.name: p.read_bytes() for p in sorted(FIRMWARE.glob("*.py")) if p.name != "selfcheck.py"}
    files["config.json"] = (cfg if isinstance(cfg, str) else json.dumps(cfg)).encode()
    return files


def _check_uids(uids: list[str]) -> None:
    for u in uids:
        if len(bytes.fromhex(u)) not in (4, 7, 10):
            raise ValueError(f"ISO 14443A UIDs are 4, 7 or 10 bytes, not {u!r}")


class Line:
    """A line from the chip: ``t`` when its last byte reached the USB host, ``t0`` when its first did (ns)."""

    __slots__ = ("t", "t0", "text")

    def __init__(self, t: int, text: str, t0: int | None = None) -> None:
        self.t = t
        self.t0 = t if t0 is None else t0
        self.text = text

    def __repr__(self) -> str:
        return f"Line({self.t / 1e6:.1f} ms, {self.text!r})"


class EmulatedScanner:
    """One scanner board: the emulated chip running firmware/, its world, and its USB port on a pty at ``port``."""

    def __init__(self, cfg: dict[str, Any], workdir: Path, *, chain_chips: int | None = None,
                 missing_readers: Iterable[int] = (), tag_powerup_us: int = 800) -> None:
        self.cfg = cfg
        self.workdir = Path(workdir)
        self.port = self.workdir / "ttyACM0"
        self.chain_chips = chain_chips
        self.missing_readers = list(missing_readers)
        self.tag_powerup_us = tag_powerup_us
        self.lines: list[Line] = []
        self.events: list[dict[str, Any]] = []
        self.stderr: list[str] = []
        self._partial = b""
        self._partial_t0 = 0
        self._replies: dict[int, dict[str, Any]] = {}
        self._next_id = 0
        self._cv = threading.Condition()
        self._proc: subprocess.Popen[bytes] | None = None
        self._master = self._slave = -1
        self._stop = threading.Event()
        self._threads: list[threading.Thread] = []
        self.tapped: list[bytes] = []  # host -> chip bytes, for the record

    # -- life cycle -------------------------------------------------------------------------------------------
    def start(self) -> EmulatedScanner:
        kit = kit_dir()
        assert kit is not None, missing_tools()
        self.workdir.mkdir(parents=True, exist_ok=True)
        image = self.workdir / "fs.img"
        image.write_bytes(fs_image(firmware_files(self.cfg)))
        spec = {"uf2": str(kit / UF2_NAME), "bootrom": str(kit / BOOTROM_NAME), "image": str(image),
                "rp2040js": str(rp2040js_entry()),
                "config": self.cfg if isinstance(self.cfg, dict) else {}, "chain_chips": self.chain_chips,
                "missing_readers": self.missing_readers, "tag_powerup_us": self.tag_powerup_us}
        (self.workdir / "spec.json").write_text(json.dumps(spec))
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)  # like the Pico's CDC ACM port: no echo, no newline translation
        os.set_blocking(self._master, False)
        if self.port.is_symlink() or self.port.exists():
            self.port.unlink()
        self.port.symlink_to(os.ttyname(self._slave))
        self._proc = subprocess.Popen(["node", str(HERE / "board.mjs"), str(self.workdir / "spec.json")],
                                      stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      cwd=str(HERE))
        for target in (self._read_board, self._read_pty, self._read_stderr):
            t = threading.Thread(target=target, daemon=True, name=target.__name__)
            t.start()
            self._threads.append(t)
        return self

    def close(self) -> None:
        self._stop.set()
        if self._proc is not None and self._proc.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                self._send({"op": "quit"})
            try:
                self._proc.wait(5)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait(5)
        for fd in (self._master, self._slave):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = -1
        if self.port.is_symlink():
            self.port.unlink()

    def flush_port(self) -> None:
        """Drop bytes waiting in the pty for a host that is not there (before a new host opens it)."""
        termios.tcflush(self._slave, termios.TCIOFLUSH)

    # -- plumbing ---------------------------------------------------------------------------------------------
    def _send(self, msg: dict[str, Any]) -> None:
        assert self._proc is not None and self._proc.stdin is not None
        self._proc.stdin.write((json.dumps(msg) + "\n").encode())
        self._proc.stdin.flush()

    def _read_board(self) -> None:
        assert self._proc is not None and self._proc.stdout is not None
        for raw in self._proc.stdout:
            ev = json.loads(raw)
            kind = ev["ev"]
            if kind == "serial":
                data = bytes.fromhex(ev["hex"])
                with contextlib.suppress(BlockingIOError, OSError):
                    os.write(self._master, data)  # nobody reading the pty: the bytes go, like on a real port
                if not self._partial:
                    self._partial_t0 = ev["t"]
                self._partial += data
                with self._cv:
                    while b"\n" in self._partial:
                        line, self._partial = self._partial.split(b"\n", 1)
                        self.lines.append(Line(ev["t"], line.decode("latin-1").rstrip("\r"), self._partial_t0))
                        self._partial_t0 = ev["t"]
                    self._cv.notify_all()
            elif kind == "reply":
                with self._cv:
                    self._replies[ev["id"]] = ev
                    self._cv.notify_all()
            else:
                with self._cv:
                    if kind == "reset":
                        self._partial = b""  # the USB link went down with the chip: a half-sent line is gone
                    self.events.append(ev)
                    self._cv.notify_all()
        with self._cv:
            self._cv.notify_all()

    def _read_pty(self) -> None:
        while not self._stop.is_set():
            try:
                r, _, _ = select.select([self._master], [], [], 0.05)
            except (OSError, ValueError):
                return
            if not r:
                continue
            try:
                data = os.read(self._master, 4096)
            except BlockingIOError:
                continue
            except OSError:
                time.sleep(0.02)
                continue
            if data:
                self.tapped.append(data)
                with contextlib.suppress(OSError, ValueError):
                    self._send({"op": "rx", "hex": data.hex()})

    def _read_stderr(self) -> None:
        assert self._proc is not None and self._proc.stderr is not None
        for raw in self._proc.stderr:
            self.stderr.append(raw.decode("utf-8", "replace").rstrip())

    def request(self, op: str, timeout: float = 60.0, **fields: Any) -> dict[str, Any]:
        """Send a command to the world and wait for its reply (emulated time ``t`` included)."""
        with self._cv:
            self._next_id += 1
            rid = self._next_id
        self._send({"op": op, "id": rid, **fields})
        end = time.monotonic() + timeout
        with self._cv:
            while rid not in self._replies:
                left = end - time.monotonic()
                if left <= 0 or (self._proc is not None and self._proc.poll() is not None):
                    raise AssertionError(f"the emulated board did not answer {op!r}: {self.stderr[-5:]}")
                self._cv.wait(min(left, 0.2))
            return self._replies.pop(rid)

    # -- the world --------------------------------------------------------------------------------------------
    def now(self) -> int:
        """Emulated time, ns."""
        return int(self.request("time")["t"])

    def steps(self, steps: list[tuple[Any, ...]]) -> int:
        """Act in emulated time: (delay_us after the previous step, "place"|"lift", channel) or (delay_us, "tag",
        reader, [uid, ...]); returns the emulated time of the last step."""
        for s in steps:
            if s[1] == "tag":
                _check_uids(s[3])
        return int(self.request("steps", steps=[list(s) for s in steps])["applied"])

    def place(self, *channels: int) -> int:
        return self.steps([(0, "place", c) for c in channels])

    def lift(self, *channels: int) -> int:
        return self.steps([(0, "lift", c) for c in channels])

    def bounce(self, channel: int, end: str = "place", times: int = 6, every_us: int = 1500) -> int:
        """A magnet arriving (or leaving) with its contact chattering ``times`` times before it rests."""
        other = "lift" if end == "place" else "place"
        seq = [(0 if i == 0 else every_us, end if i % 2 == 0 else other, channel) for i in range(times)]
        return self.steps(seq + [(every_us, end, channel)])

    def slide(self, path: list[int], dwell_us: int = 4000) -> int:
        """A piece slid across the board: each channel on the way closes briefly, the last one stays closed."""
        seq: list[tuple[int, str, int]] = []
        for i, ch in enumerate(path):
            seq.append((0 if i == 0 else dwell_us // 2, "place", ch))
            if i > 0:
                seq.append((dwell_us // 2, "lift", path[i - 1]))
        return self.steps(seq)

    def tags(self, on_readers: dict[int, list[str]]) -> int:
        """What lies in each reader's field from now on (a list of UIDs in hex; two for a collision)."""
        for uids in on_readers.values():
            _check_uids(uids)
        return int(self.request("tags", tags={str(k): v for k, v in on_readers.items()})["t"])

    def stall(self, on: bool) -> int:
        """The host keeps the port open but stops reading (on) / reads again (off)."""
        return int(self.request("stall", on=on)["t"])

    def hang(self) -> int:
        """The SPI bus stops finishing transfers: the scan loop hangs until the watchdog resets the chip."""
        return int(self.request("hang")["t"])

    def led_edges(self) -> list[tuple[int, int]]:
        """The station lights' data pin since the last call: (emulated ns, level) at every change."""
        return [(int(t), int(v)) for t, v in self.request("leds")["edges"]]

    def stats(self, reset: bool = False) -> dict[str, Any]:
        return self.request("stats", reset=reset)

    # -- the chip's lines -------------------------------------------------------------------------------------
    def send(self, body: str) -> None:
        """A command line to the chip, as the host would send it (not through the pty)."""
        from controller.sensing.scanner_protocol import frame

        self._send({"op": "rx", "hex": frame(body).hex()})

    def wait_line(self, pred: Callable[[str], bool], since: int = 0, timeout: float = 60.0) -> Line:
        """The first line from index ``since`` on that ``pred`` accepts (waiting up to ``timeout`` s of wall time)."""
        end = time.monotonic() + timeout
        with self._cv:
            i = since
            while True:
                while i < len(self.lines):
                    if pred(self.lines[i].text):
                        return self.lines[i]
                    i += 1
                left = end - time.monotonic()
                if left <= 0 or (self._proc is not None and self._proc.poll() is not None):
                    tail = [x.text for x in self.lines[-8:]]
                    raise AssertionError(f"no such line from the chip; last lines {tail}; board: {self.stderr[-5:]}")
                self._cv.wait(min(left, 0.2))

    def wait_event(self, kind: str, since: int = 0, timeout: float = 60.0) -> dict[str, Any]:
        end = time.monotonic() + timeout
        with self._cv:
            while True:
                for ev in self.events[since:]:
                    if ev["ev"] == kind:
                        return ev
                left = end - time.monotonic()
                if left <= 0:
                    raise AssertionError(f"no {kind} event; events {self.events[-5:]}")
                self._cv.wait(min(left, 0.2))

    def mark(self) -> int:
        """Index of the next line: pass as ``since`` to wait for lines after now."""
        with self._cv:
            return len(self.lines)


# -- WS2812 ---------------------------------------------------------------------------------------------------------
#: WS2812B timing (datasheet, with its tolerances): a 0 is high 220-380 ns (up to 550 with the older part's
#: +-150 ns), a 1 high 580-1000 ns; a bit is about 1.25 us; the chain latches after the line is low for > 50 us
#: (280 us for newer parts, so the firmware never sends two frames closer than that).
T0H_NS = (200, 550)
T1H_NS = (580, 1000)
BIT_MAX_NS = 5000  # a low longer than this inside a frame is a broken stream, not a bit
RESET_NS = 50_000


class WS2812Error(AssertionError):
    pass


def ws2812_frames(edges: list[tuple[int, int]], now_ns: int) -> list[dict[str, Any]]:
    """Decode a WS2812 data line from its level changes [(ns, level)] into frames: each frame is
    ``{"start", "end", "leds": [(r, g, b), ...], "high0", "high1", "gap"}`` (the widths seen, ns; ``gap``: the low
    before the frame). A frame ends when the line stays low > 50 us (the latch); the last one only if it has by
    ``now_ns``. Raises WS2812Error on a pulse that is neither a 0 nor a 1, a stray low inside a frame, or a frame
    that is not whole 24-bit words."""
    frames: list[dict[str, Any]] = []
    bits: list[int] = []
    high0: list[int] = []
    high1: list[int] = []
    start = last_fall = None
    gap = None
    i = 0
    if edges and edges[0][1] == 0:
        i = 1  # the line was high when watching began: skip to its first rise
    prev_fall = None

    def close(end: int) -> None:
        if len(bits) % 24:
            raise WS2812Error(f"frame at {start} ns has {len(bits)} bits, not whole GRB words")
        leds = []
        for k in range(0, len(bits), 24):
            v = int("".join(map(str, bits[k:k + 24])), 2)
            leds.append(((v >> 8) & 255, (v >> 16) & 255, v & 255))
        frames.append({"start": start, "end": end, "leds": leds, "high0": (min(high0, default=0), max(high0, default=0)),
                       "high1": (min(high1, default=0), max(high1, default=0)), "gap": gap})

    while i + 1 < len(edges):
        (rise, a), (fall, b) = edges[i], edges[i + 1]
        assert a == 1 and b == 0, edges[i:i + 2]
        if last_fall is not None and rise - last_fall > RESET_NS:
            close(last_fall)
            bits, high0, high1 = [], [], []
            start = None
        elif last_fall is not None and rise - last_fall > BIT_MAX_NS:
            raise WS2812Error(f"low for {rise - last_fall} ns inside a frame at {rise} ns: neither a bit nor a latch")
        if start is None:
            start = rise
            gap = None if prev_fall is None else rise - prev_fall
        width = fall - rise
        if T0H_NS[0] <= width <= T0H_NS[1]:
            bits.append(0)
            high0.append(width)
        elif T1H_NS[0] <= width <= T1H_NS[1]:
            bits.append(1)
            high1.append(width)
        else:
            raise WS2812Error(f"a high pulse of {width} ns at {rise} ns is neither a 0 nor a 1")
        last_fall = prev_fall = fall
        i += 2
    if start is not None and last_fall is not None and now_ns - last_fall > RESET_NS:
        close(last_fall)
    return frames
