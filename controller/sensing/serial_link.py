"""The serial scanner backend: a USB microcontroller scans the board and reports over the line protocol of
firmware/PROTOCOL.md; this turns its lines into snapshots, and never reports a board it has not confirmed.

``LinkState`` is the pure protocol state machine (lines in; requests and snapshots out); ``SerialScannerBoard``
adds the port: finding it by USB VID/PID, reading, writing, and reconnecting with backoff after an unplug.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from . import scanner_protocol as sp
from .base import Snapshot

log = logging.getLogger("facedown.sensing.serial")

#: MicroPython on a Raspberry Pi Pico enumerates as 2E8A:0005.
PICO_MICROPYTHON_VID = 0x2E8A
PICO_MICROPYTHON_PID = 0x0005
#: How long a read waits for a byte before the loop checks heartbeats and stop (a byte ends the wait at once).
READ_TIMEOUT_S = 0.25

Channel = int | tuple[int, int]


def _short(line: str, limit: int = 80) -> str:
    return repr(line if len(line) <= limit else line[:limit] + "...")


class LinkState:
    """What the host knows of the scanner's board, from its lines alone.

    ``known`` is true only between a full snapshot and the first sign that a line was lost or corrupted (a
    sequence gap, a bad checksum, a heartbeat whose state checksum differs, a reboot, silence). While not
    known, no snapshot is reported and a full snapshot is requested; when it comes, the board is known again.
    """

    def __init__(self, stations: Iterable[str], channels: Mapping[str, Channel], *, where: str = "scanner") -> None:
        self.stations = tuple(stations)
        missing = [s for s in self.stations if s not in channels]
        if missing:
            raise ValueError(f"no channel for stations {', '.join(missing)}")
        self.channels = {s: channels[s] for s in self.stations}
        self.where = where
        self.hello: dict[str, str] | None = None
        self.config: dict[str, Any] | None = None
        self.index: dict[str, int] = {}
        self.known = False
        self.status = "waiting for the scanner"
        self.boot: str | None = None
        self.seq = 0
        self.occ: list[bool] = []
        self.tags: dict[int, str] = {}
        self.last: tuple[frozenset[str], tuple[tuple[str, str], ...]] | None = None
        self.errors: list[str] = []  # ERR messages from the scanner, newest last (bounded)
        self.on_tap: Callable[[str], None] | None = None  # called with the UID of each check-in pad tap
        self.early_tap: tuple[str | None, str] | None = None  # (boot, uid) of a pad tap heard before any HELLO

    # -- state changes --------------------------------------------------------------------------------------
    def lose(self, reason: str) -> list[str]:
        """Forget the board (it may have changed unseen) and ask for a full snapshot."""
        if self.known:
            log.warning("%s: board no longer known: %s; waiting for a full snapshot", self.where, reason)
        self.known = False
        self.status = f"resyncing: {reason}"
        return ["SNAP?"] if self.hello is not None else ["HELLO?", "SNAP?"]

    def disconnected(self, reason: str) -> None:
        if self.known:
            log.warning("%s: link lost: %s", self.where, reason)
        self.known = False
        self.hello = None
        self.boot = None
        self.status = f"sensor link lost: {reason}"

    def _map(self, fields: dict[str, str]) -> str | None:
        """Resolve each station's channel to an index of the scanner's channels; a message if the profile does not fit."""
        n = int(fields["n"])
        cols = int(fields["cols"]) if "cols" in fields else None
        index: dict[str, int] = {}
        for s, ch in self.channels.items():
            if isinstance(ch, tuple):
                if cols is None:
                    return f"station {s} is on matrix crossing {ch} but the scanner is not a matrix"
                i = ch[0] * cols + ch[1]
            else:
                i = ch
            if not 0 <= i < n:
                return f"station {s} is on channel {ch} but the scanner has channels 0..{n - 1}"
            index[s] = i
        self.index = index
        return None

    # -- input ----------------------------------------------------------------------------------------------
    def on_line(self, line: str, t_ms: int) -> tuple[list[str], Snapshot | None]:
        """Handle one line from the scanner: the commands to send back, and a new snapshot if the board changed."""
        if not line.strip():
            return [], None
        body = sp.unframe(line)
        if body is None:
            if sp.has_checksum(line.strip()):
                log.warning("%s: line with a wrong checksum: %s", self.where, _short(line))
                return self.lose("corrupted line"), None
            log.info("%s: ignored a line outside the protocol: %s", self.where, _short(line))
            return [], None
        try:
            kind, f = sp.parse(body)
            return self._message(kind, f, t_ms)
        except (sp.ProtocolError, ValueError, KeyError, IndexError) as exc:  # nonsense from the scanner: resync
            log.warning("%s: cannot understand %s: %s", self.where, _short(line), exc)
            return self.lose("unreadable message"), None

    def _message(self, kind: str, f: dict[str, str], t_ms: int) -> tuple[list[str], Snapshot | None]:
        if kind == "HELLO":
            major = int(f["proto"])
            if major != sp.PROTO_VERSION:
                self.hello = None
                self.known = False
                self.status = f"scanner speaks protocol {major}; this referee speaks {sp.PROTO_VERSION}"
                log.error("%s: %s", self.where, self.status)
                return [], None
            problem = self._map(f)
            if problem:
                self.hello = None
                self.known = False
                self.status = f"profile does not fit the scanner: {problem}"
                log.error("%s: %s", self.where, self.status)
                return [], None
            if self.hello is not None and f["b"] == self.boot and _shape(f) == _shape(self.hello):
                self.hello = f  # an answer to HELLO?: same boot, same channels, nothing was missed
                return [], None
            if self.hello is not None and f["b"] == self.boot:
                log.warning("%s: scanner changed its channels without restarting (%s -> %s)", self.where,
                            _shape(self.hello), _shape(f))
            if self.boot is not None and f["b"] != self.boot:
                log.warning("%s: scanner restarted (boot %s -> %s)", self.where, self.boot, f["b"])
            self.hello = f
            self.boot = f["b"]
            early, self.early_tap = self.early_tap, None
            if early is not None and early[0] == self.boot and self.on_tap is not None:
                self.on_tap(early[1])  # tapped while the referee was still connecting: the same boot, so it stands
            return self.lose("scanner said hello"), None
        if kind == "ERR":
            msg = f"{f.get('code', '?')}: {f.get('msg', '').replace('_', ' ')}"
            log.warning("%s: scanner reports %s", self.where, msg)
            self.errors = (self.errors + [msg])[-20:]
            return [], None
        if kind == "TAP":
            # a tag tapped on the check-in pad (firmware sensing "checkin"); counted per boot in k=
            if self.on_tap is None:
                return [], None
            if self.boot is None:
                # before the scanner's HELLO (a piece tapped while the referee connects): kept until the HELLO says
                # which boot this is, so the tapped piece is not lost (the last tap wins, as on the pad)
                self.early_tap = (f.get("b"), f["uid"])
            elif f.get("b") == self.boot:
                self.on_tap(f["uid"])
            else:
                log.warning("%s: a check-in pad tap from boot %s, the scanner is boot %s: ignored (tap the piece "
                            "again)", self.where, f.get("b"), self.boot)
            return [], None
        if kind == "CFG":
            from controller.textfiles import parse_json

            self.config = parse_json(f["json"], "the scanner's CFG")  # bounded nesting: a ValueError, never a crash
            return [], None
        if kind not in ("SNAP", "CHG", "HB"):
            log.info("%s: ignored message of unknown kind %s", self.where, kind)
            return [], None
        if self.hello is None:
            return ([], None) if kind != "SNAP" else (["HELLO?", "SNAP?"], None)
        if f["b"] != self.boot:
            log.warning("%s: %s from boot %s, expected boot %s", self.where, kind, f["b"], self.boot)
            self.hello = None
            return self.lose("scanner restarted"), None
        seq = int(f["seq"])
        n = int(self.hello["n"])
        if kind != "SNAP" and len(self.occ) != n:  # a board read for another channel count: only a SNAP can fix it
            return self.lose("channel count changed"), None
        if kind == "SNAP":
            self.occ = sp.occ_from_hex(f["occ"], n)
            tags = sp.tags_from_text(f["tags"])
            if any(not 0 <= i < n or not self.occ[i] for i in tags):
                raise sp.ProtocolError("a tag on a channel that is empty or does not exist")
            self.tags = tags
            self.seq = seq
            if not self.known:
                log.info("%s: board known (seq %d)", self.where, seq)
            self.known = True
            self.status = "ok"
            return [], self._snapshot(t_ms)
        if not self.known:
            return [], None
        if kind == "CHG":
            if seq <= self.seq:
                log.debug("%s: duplicate change seq %d ignored", self.where, seq)
                return [], None
            if seq != self.seq + 1:
                log.warning("%s: change seq %d after %d: %d lost", self.where, seq, self.seq, seq - self.seq - 1)
                return self.lose("lost change events"), None
            for ch, occupied, uid in sp.changes_from_text(f["c"]):
                if not 0 <= ch < n:
                    raise sp.ProtocolError(f"change on channel {ch}, the scanner has {n}")
                self.occ[ch] = occupied
                if occupied and uid:
                    self.tags[ch] = uid
                else:
                    self.tags.pop(ch, None)
            self.seq = seq
            return [], self._snapshot(t_ms)
        # HB
        if seq != self.seq:
            log.warning("%s: heartbeat at seq %d, host has %d", self.where, seq, self.seq)
            return self.lose("lost change events"), None
        if f["sum"] != sp.state_sum(self.occ, self.tags):
            log.warning("%s: heartbeat state checksum %s differs from the host's board", self.where, f["sum"])
            return self.lose("state checksum mismatch"), None
        return [], None

    def _snapshot(self, t_ms: int) -> Snapshot | None:
        occupied = frozenset(s for s, i in self.index.items() if self.occ[i])
        tags = {s: self.tags[i] for s, i in self.index.items() if i in self.tags}
        key = (occupied, tuple(sorted(tags.items())))
        if key == self.last:
            return None
        self.last = key
        return Snapshot(t_ms, occupied, tags)


def _shape(hello: Mapping[str, str]) -> tuple[str | None, str | None]:
    """What a HELLO says about the scanner's channels: their count and, for a matrix, its columns."""
    return hello.get("n"), hello.get("cols")


def find_port(ports: Sequence[Any], vid: int, pid: int | None = None) -> str | None:
    """The device of the first port (pyserial ListPortInfo) with this USB vendor id (and product id, if given)."""
    for p in sorted(ports, key=lambda p: p.device):
        if p.vid == vid and (pid is None or p.pid == pid):
            return p.device
    return None


class SerialScannerBoard:
    """A SensingBackend reading a FaceDown scanner on a serial port (normally the Pico's /dev/ttyACM0).

    ``channels`` maps each station to a scanner channel (int) or a matrix crossing (row, col). With no ``port``
    the scanner is found by USB ``vid``/``pid`` (default: MicroPython on a Pico). ``known`` and ``status`` say
    whether the board is confirmed; while it is not, nothing is reported.
    """

    def __init__(self, stations: Iterable[str], channels: Mapping[str, Channel], *, port: str | None = None,
                 baudrate: int = 115200, vid: int | None = None, pid: int | None = None,
                 heartbeat_timeout_s: float = 3.5, resync_every_s: float = 1.0,
                 backoff_s: tuple[float, float] = (0.25, 4.0), clock: Callable[[], float] = time.monotonic) -> None:
        self.stations = tuple(stations)
        self.port = port
        self.baudrate = baudrate
        self.vid = PICO_MICROPYTHON_VID if vid is None and port is None else vid
        self.pid = PICO_MICROPYTHON_PID if pid is None and port is None and vid is None else pid
        self.heartbeat_timeout_s = heartbeat_timeout_s
        self.resync_every_s = resync_every_s
        self.backoff_s = backoff_s
        self._clock = clock
        self._t0 = clock()
        self.link = LinkState(self.stations, channels, where=port or "scanner")
        self.link.status = "connecting"
        self._current = Snapshot(0, frozenset(), {})
        self._stop = threading.Event()
        self._known_event = threading.Event()
        self._ser: Any = None
        self._wlock = threading.Lock()
        self.reconnects = 0

    # -- status -----------------------------------------------------------------------------------------------
    @property
    def known(self) -> bool:
        return self.link.known

    @property
    def on_tap(self) -> Callable[[str], None] | None:
        """Called (from the reading thread, in line order) with the UID of each tag tapped on a check-in pad."""
        return self.link.on_tap

    @on_tap.setter
    def on_tap(self, fn: Callable[[str], None] | None) -> None:
        self.link.on_tap = fn

    @property
    def status(self) -> str:
        """'ok', or why the board is not known (for the session to show: sensor link lost, waiting)."""
        return self.link.status

    def link_state(self) -> str:
        """``connected`` (the board is confirmed), ``lost`` (no port, or it went away) or ``resyncing``."""
        if self.link.known:
            return "connected"
        if self._ser is None or self.link.status.startswith("sensor link lost"):
            return "lost"
        return "resyncing"

    def current(self) -> Snapshot:
        """The last confirmed snapshot (check ``known`` for whether it is still confirmed)."""
        return self._current

    def wait_known(self, timeout: float) -> bool:
        """Block until the board is known (or the timeout passes); True if it is."""
        end = time.monotonic() + timeout
        while not self._stop.is_set():
            if self.link.known:
                return True
            left = end - time.monotonic()
            if left <= 0:
                return False
            self._known_event.wait(min(left, 0.05))
        return self.link.known

    def _now_ms(self) -> int:
        return int((self._clock() - self._t0) * 1000)

    # -- port -------------------------------------------------------------------------------------------------
    def _find(self) -> str | None:
        if self.port is not None:
            return self.port
        from serial.tools import list_ports

        return find_port(list_ports.comports(), self.vid, self.pid)  # type: ignore[arg-type]

    def _open(self) -> bool:
        import serial

        dev = self._find()
        if dev is None:
            self.link.status = f"sensor link lost: no scanner with USB id {self.vid:04X}:{(self.pid or 0):04X} found"
            return False
        try:
            # a read returns as soon as a byte comes; its timeout only paces the heartbeat and stop checks (4 a second,
            # not 20: an idle board costs the Pi next to nothing)
            self._ser = serial.Serial(dev, self.baudrate, timeout=READ_TIMEOUT_S, write_timeout=1)
        except (serial.SerialException, OSError) as exc:
            self.link.status = f"sensor link lost: cannot open {dev}: {exc}"
            return False
        self.link.where = dev
        self.link.status = "waiting for the scanner"
        log.info("%s: opened", dev)
        self._send(["HELLO?", "SNAP?"])
        return True

    def _close(self) -> None:
        ser, self._ser = self._ser, None
        if ser is not None:
            try:
                ser.close()
            except Exception:  # noqa: BLE001 - closing a port that vanished may fail in many ways
                pass

    def _send(self, commands: list[str]) -> None:
        if not commands or self._ser is None:
            return
        with self._wlock:
            self._ser.write(b"".join(sp.frame(c) for c in commands))

    def request(self, command: str) -> None:
        """Send one command (e.g. 'CFG?') to the scanner if connected."""
        self._send([command])

    # -- loop -------------------------------------------------------------------------------------------------
    def run(self, on_snapshot: Callable[[Snapshot], None]) -> None:
        import serial

        self._stop.clear()
        delay = self.backoff_s[0]
        splitter = sp.LineSplitter()
        while not self._stop.is_set():
            if self._ser is None:
                if not self._open():
                    self._stop.wait(delay)
                    delay = min(delay * 2, self.backoff_s[1])
                    continue
                delay = self.backoff_s[0]
                splitter = sp.LineSplitter()
                last_line = last_ask = self._clock()
            try:
                data = self._ser.read(self._ser.in_waiting or 1)
                now = self._clock()
                if data:
                    for line in splitter.feed(data):
                        last_line = now
                        requests, snap = self.link.on_line(line, self._now_ms())
                        if requests:
                            last_ask = now
                        self._send(requests)
                        if snap is not None:
                            self._current = snap
                            on_snapshot(snap)
                    if splitter.dropped:
                        log.warning("%s: dropped %d bytes of noise without a line end", self.link.where, splitter.dropped)
                        splitter.dropped = 0
                        self._send(self.link.lose("noise on the line"))
                if self.link.known:
                    self._known_event.set()
                else:
                    self._known_event.clear()
                silent = now - last_line
                if silent > 3 * self.heartbeat_timeout_s:
                    raise serial.SerialException(f"nothing heard for {silent:.1f} s")
                if silent > self.heartbeat_timeout_s and self.link.known:
                    self._send(self.link.lose(f"no heartbeat for {silent:.1f} s"))
                    last_ask = now
                if not self.link.known and now - last_ask > self.resync_every_s:
                    self._send(["HELLO?", "SNAP?"] if self.link.hello is None else ["SNAP?"])
                    last_ask = now
            except (serial.SerialException, OSError) as exc:
                self.link.disconnected(str(exc) or type(exc).__name__)
                self._known_event.clear()
                self._close()
                self.reconnects += 1
                self._stop.wait(delay)
        self._close()

    def stop(self) -> None:
        self._stop.set()
