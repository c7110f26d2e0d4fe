"""The scanner's brain, hardware-free: debounces scans, reads tags, speaks the line protocol (see PROTOCOL.md).

MicroPython-compatible. It is given a ``sensor`` (``scan()`` -> list of booleans per channel, or None in pure
RFID mode), an optional ``rfid`` (``read(channel)`` -> uid hex or None) and a ``write(text)`` for output lines;
fd_board.py supplies the real ones, self-checks and tests supply pure ones.
"""

# ruff: noqa: UP031  (%-formatting is deliberate: MicroPython supports it fully, cheaply)

import fd_proto

FW_VERSION = "1.0.0"
SCANNERS = ("matrix", "shift_register")
SENSING = ("reed", "rfid", "hybrid")
MAX_COMMAND = 120


def check_config(cfg):
    """Every problem of a configuration dict, as a list of messages (empty when it is usable)."""
    problems = []
    sensing = cfg.get("sensing", "reed")
    if sensing not in SENSING:
        problems.append("sensing must be one of reed, rfid, hybrid, not %r" % (sensing,))
    if sensing in ("reed", "hybrid"):
        scanner = cfg.get("scanner")
        if scanner == "matrix":
            m = cfg.get("matrix") or {}
            if not m.get("rows") or not m.get("cols"):
                problems.append("matrix needs non-empty 'rows' and 'cols' pin lists")
        elif scanner == "shift_register":
            s = cfg.get("shift_register") or {}
            for key in ("load", "clock", "data", "count"):
                if key not in s:
                    problems.append("shift_register needs '%s'" % key)
        else:
            problems.append("scanner must be matrix or shift_register, not %r" % (scanner,))
    if sensing in ("rfid", "hybrid"):
        r = cfg.get("rfid") or {}
        if "cs" not in r and "cs595" not in r:
            problems.append("rfid needs 'cs' (a pin per reader) or 'cs595' (data, clock, latch, count)")
    for key in ("settle_ms", "scan_period_ms", "heartbeat_ms"):
        v = cfg.get(key, 1)
        if not isinstance(v, int) or v < 0:
            problems.append("%s must be a whole number of milliseconds" % key)
    return problems


def channel_count(cfg):
    sensing = cfg.get("sensing", "reed")
    if sensing == "rfid":
        r = cfg["rfid"]
        return len(r["cs"]) if "cs" in r else r["cs595"]["count"]
    if cfg["scanner"] == "matrix":
        return len(cfg["matrix"]["rows"]) * len(cfg["matrix"]["cols"])
    return cfg["shift_register"]["count"]


class Device:
    """State and protocol of one scanner board. Call ``start`` once, then ``feed`` with host bytes and ``tick``."""

    def __init__(self, cfg, sensor, write, rfid=None, boot_id=0, diff=None, now=0):
        self.cfg = cfg
        self.sensing = cfg.get("sensing", "reed")
        self.sensor = sensor
        self.rfid = rfid
        self.write = write
        self.boot = "%04X" % (boot_id & 0xFFFF)
        self.diff = diff or (lambda a, b: a - b)
        self.n = channel_count(cfg)
        self.settle_ms = cfg.get("settle_ms", 30)
        self.heartbeat_ms = cfg.get("heartbeat_ms", 1000)
        self.tag_wait_ms = cfg.get("tag_wait_ms", 300)
        self.tag_retry_ms = cfg.get("tag_retry_ms", 250)
        initial = None if self.sensing == "rfid" else False
        import fd_debounce

        self.deb = fd_debounce.Debouncer(self.n, self.settle_ms, now=now, initial=initial, diff=self.diff)
        self.occ = [False] * self.n
        self.tags = {}
        self.seq = 0
        self.last_hb = now
        self.inbuf = b""
        self.waiting = {}  # hybrid: channel -> deadline tick for its tag read before reporting without a tag
        self.retry = {}  # hybrid: channel -> next retry tick for an occupied channel whose tag was not read
        self.scans = 0

    # -- output -------------------------------------------------------------------------------------------
    def send(self, body):
        self.write(fd_proto.frame(body))

    def hello(self):
        body = "HELLO proto=%d fw=%s board=%s b=%s n=%d scanner=%s sensing=%s" % (
            fd_proto.PROTO_VERSION, FW_VERSION, self.cfg.get("board", "facedown"), self.boot, self.n,
            self.cfg.get("scanner", "none") if self.sensing != "rfid" else "none", self.sensing)
        if self.sensing != "rfid" and self.cfg.get("scanner") == "matrix":
            body += " rows=%d cols=%d" % (len(self.cfg["matrix"]["rows"]), len(self.cfg["matrix"]["cols"]))
        caps = "snap,chg,hb,cfg"
        if self.rfid is not None:
            caps += ",tags"
        self.send(body + " caps=" + caps)

    def snapshot(self):
        self.send("SNAP b=%s seq=%d %s" % (self.boot, self.seq, fd_proto.state_text(self.occ, self.tags)))

    def heartbeat(self):
        self.send("HB b=%s seq=%d sum=%s" % (self.boot, self.seq, fd_proto.state_sum(self.occ, self.tags)))

    def error(self, code, msg):
        self.send("ERR b=%s code=%s msg=%s" % (self.boot, code, msg.replace(" ", "_")))

    def config(self):
        import json

        self.send("CFG b=%s json=%s" % (self.boot, json.dumps(self.cfg).replace(" ", "")))

    def start(self, now):
        self.last_hb = now
        self.hello()
        self.snapshot()

    # -- input --------------------------------------------------------------------------------------------
    def feed(self, data):
        """Bytes from the host; complete lines are handled, the rest kept until its newline arrives."""
        self.inbuf += data
        while True:
            nl = self.inbuf.find(b"\n")
            if nl < 0:
                break
            line = self.inbuf[:nl]
            self.inbuf = self.inbuf[nl + 1:]
            self.command(line)
        if len(self.inbuf) > MAX_COMMAND:
            self.inbuf = b""
            self.error("toolong", "command longer than %d bytes dropped" % MAX_COMMAND)

    def command(self, raw):
        try:
            text = raw.decode()
        except Exception:
            self.error("garbled", "command is not text")
            return
        text = text.strip()
        if not text:
            return
        body = fd_proto.unframe(text)
        if body is None:
            self.error("checksum", "command without a valid checksum")
            return
        cmd = body.split(" ")[0]
        if cmd == "SNAP?":
            self.snapshot()
        elif cmd == "HELLO?":
            self.hello()
        elif cmd == "CFG?":
            self.config()
        elif cmd == "HB?":
            self.heartbeat()
        else:
            self.error("unknown", "unknown command " + cmd[:20])

    # -- scanning -----------------------------------------------------------------------------------------
    def _emit(self, changes):
        if not changes:
            return
        for ch, occupied, uid in changes:
            self.occ[ch] = occupied
            if occupied and uid:
                self.tags[ch] = uid
            elif ch in self.tags:
                del self.tags[ch]
        self.seq += 1
        self.send("CHG b=%s seq=%d c=%s" % (self.boot, self.seq, fd_proto.changes_text(changes)))

    def _read_tag(self, ch):
        try:
            return self.rfid.read(ch)
        except Exception as e:  # a reader that fails must not stop the scanner
            self.error("rfid", "reader %d: %s" % (ch, e))
            return None

    def tick(self, now):
        """One scan: debounce, read tags where needed, emit change events and the heartbeat."""
        self.scans += 1
        changes = []
        if self.sensing == "rfid":
            raw = [self._read_tag(ch) for ch in range(self.n)]
            for ch in self.deb.update(now, raw):
                uid = self.deb.settled[ch]
                changes.append((ch, uid is not None, uid))
        else:
            raw = self.sensor.scan()
            for ch in self.deb.update(now, raw):
                if not self.deb.settled[ch]:
                    self.waiting.pop(ch, None)
                    self.retry.pop(ch, None)
                    changes.append((ch, False, None))
                elif self.sensing == "hybrid":
                    self.waiting[ch] = now + self.tag_wait_ms
                else:
                    changes.append((ch, True, None))
            if self.sensing == "hybrid":
                changes += self._hybrid_tags(now)
        self._emit(changes)
        if self.diff(now, self.last_hb) >= self.heartbeat_ms:
            self.last_hb = now
            self.heartbeat()

    def _hybrid_tags(self, now):
        changes = []
        for ch in sorted(self.retry):
            if self.diff(now, self.retry[ch]) >= 0:
                uid = self._read_tag(ch)
                if uid is not None:
                    del self.retry[ch]
                    changes.append((ch, True, uid))
                else:
                    self.retry[ch] = now + self.tag_retry_ms
        for ch in sorted(self.waiting):
            uid = self._read_tag(ch)
            if uid is not None:
                del self.waiting[ch]
                changes.append((ch, True, uid))
            elif self.diff(now, self.waiting[ch]) >= 0:
                del self.waiting[ch]
                self.retry[ch] = now + self.tag_retry_ms
                changes.append((ch, True, None))
                self.error("notag", "channel %d occupied but no tag read" % ch)
        return changes


class _Board:
    """A pure sensor and reader for the self-check."""

    def __init__(self, n):
        self.closed = [False] * n
        self.tag = {}

    def scan(self):
        return list(self.closed)

    def read(self, ch):
        return self.tag.get(ch)


def selfcheck():
    n = 0
    out = []
    cfg = {"board": "t", "scanner": "shift_register", "sensing": "hybrid", "settle_ms": 20, "heartbeat_ms": 1000,
           "tag_wait_ms": 100, "shift_register": {"load": 1, "clock": 2, "data": 3, "count": 6},
           "rfid": {"cs": [5, 6, 7, 8, 9, 10]}}
    assert check_config(cfg) == []
    assert len(check_config({"scanner": "x", "sensing": "hybrid", "settle_ms": -1})) == 3
    n += 1
    b = _Board(6)
    d = Device(cfg, b, out.append, rfid=b, boot_id=0xBEEF)
    d.start(0)
    assert [fd_proto.parse(fd_proto.unframe(x))[0] for x in out] == ["HELLO", "SNAP"]
    n += 1
    del out[:]
    b.closed[2] = True
    b.tag[2] = "04AABBCC"
    d.tick(10)
    d.tick(30)
    assert len(out) == 1
    kind, f = fd_proto.parse(fd_proto.unframe(out[0]))
    assert kind == "CHG" and f["seq"] == "1" and f["c"] == "2+04AABBCC" and f["b"] == "BEEF", out
    n += 1
    del out[:]
    b.closed[4] = True
    d.tick(40)
    d.tick(60)
    d.tick(100)
    assert out == []
    d.tick(170)
    kinds = [fd_proto.parse(fd_proto.unframe(x))[0] for x in out]
    assert kinds == ["ERR", "CHG"], out
    del out[:]
    b.tag[4] = "04DDEEFF"
    d.tick(500)
    assert fd_proto.parse(fd_proto.unframe(out[0]))[1]["c"] == "4+04DDEEFF"
    n += 1
    del out[:]
    d.tick(1000)
    kind, f = fd_proto.parse(fd_proto.unframe(out[0]))
    assert kind == "HB" and f["seq"] == "3" and f["sum"] == fd_proto.state_sum(d.occ, d.tags)
    n += 1
    del out[:]
    cmd = fd_proto.frame("SNAP?").encode()
    d.feed(cmd[:3])
    assert out == []
    d.feed(cmd[3:] + b"garbage\n")
    kinds = [fd_proto.parse(fd_proto.unframe(x))[0] for x in out]
    assert kinds == ["SNAP", "ERR"], out
    n += 1
    return n
