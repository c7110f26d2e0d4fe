"""The scanner's brain, hardware-free: debounces scans, reads tags, speaks the line protocol (see PROTOCOL.md).

MicroPython-compatible. It is given a ``sensor`` (``scan_into(bytearray)``, or None in pure RFID mode), an
optional ``rfid`` (fd_mfrc522.MFRC522: ``read(k)`` -> UID length, bytes in ``uid``) and a ``write(text)`` for
output lines; fd_board.py supplies the real ones, self-checks and tests supply pure ones. The steady loop (no
change on the board) allocates nothing; tag reads are interleaved with scanning in slices of ``slice_ms``.
"""

# ruff: noqa: UP031  (%-formatting is deliberate: MicroPython supports it fully, cheaply)

import fd_debounce
import fd_lights
import fd_proto

FW_VERSION = "2.0.0"
CONFIG_FORMAT = 2
SCANNERS = ("matrix", "shift_register")
SENSING = ("reed", "rfid", "hybrid", "checkin")
MAX_COMMAND = 120
OUT_BEHIND = 256  # queued output bytes beyond which tag reads wait
OUT_US_PER_BYTE = 80  # what a queued byte costs to hand to USB on the Pico (one poll and one write)
HB_CLEAR_MS = 60  # tag reads wait this long before each heartbeat
HB_MARGIN_MS = 40  # heartbeats aim this much (at most 1/25) under heartbeat_ms, the longest gap the host may see


def _int(cfg, key, default, low, high, problems, where=""):
    v = cfg.get(key, default)
    if not isinstance(v, int) or isinstance(v, bool) or not low <= v <= high:
        problems.append("%s%s must be a whole number from %d to %d, not %r" % (where, key, low, high, v))
        return default
    return v


def _pins(v):
    return isinstance(v, list) and len(v) > 0 and all(isinstance(p, int) and p >= 0 for p in v)


def _check_rfid(cfg, sensing, problems):
    r = cfg.get("rfid")
    if not isinstance(r, dict):
        problems.append("sensing %s needs an 'rfid' block (firmware/CONFIG.md)" % sensing)
        return None
    if "cs" in r or "cs595" in r:
        problems.append("rfid 'cs'/'cs595' (one pin or a 74HC595 chain per reader) is gone: use 'select' with a "
                        "decoder (firmware/CONFIG.md)")
    for key in ("sck", "mosi", "miso"):
        if not isinstance(r.get(key), int):
            problems.append("rfid needs the '%s' pin" % key)
    readers = _int(r, "readers", 0, 1, 256, problems, "rfid.")
    sel = r.get("select")
    if not isinstance(sel, dict):
        problems.append("rfid needs 'select': {'kind': 'decoder', 'address': [...], 'enable': PIN} or "
                        "{'kind': 'direct', 'pins': [...]}")
    elif sel.get("kind") == "decoder":
        if not _pins(sel.get("address")) or not isinstance(sel.get("enable"), int):
            problems.append("rfid.select decoder needs 'address' (pins, lowest bit first) and 'enable'")
        elif readers > (1 << len(sel["address"])):
            problems.append("rfid.readers is %d but %d address lines select at most %d" % (
                readers, len(sel["address"]), 1 << len(sel["address"])))
    elif sel.get("kind") == "direct":
        if not _pins(sel.get("pins")):
            problems.append("rfid.select direct needs 'pins'")
        elif len(sel["pins"]) != readers:
            problems.append("rfid.readers is %d but select lists %d pins" % (readers, len(sel["pins"])))
    else:
        problems.append("rfid.select kind must be decoder or direct, not %r" % (sel.get("kind"),))
    _int(r, "timeout_us", 1000, 200, 50000, problems, "rfid.")
    _int(r, "field_us", 1000, 0, 20000, problems, "rfid.")
    _int(r, "slice_ms", 6, 1, 100, problems, "rfid.")
    _int(r, "absent_reads", 2, 1, 10, problems, "rfid.")
    if sensing == "checkin" and readers != 1:
        problems.append("sensing checkin uses one reader (the pad), rfid.readers is %d" % readers)
    return readers


def check_config(cfg):
    """Every problem of a configuration dict, as a list of messages (empty when it is usable)."""
    if not isinstance(cfg, dict):
        return ["config.json must hold a JSON object"]
    problems = []
    fmt = cfg.get("format")
    if fmt != CONFIG_FORMAT:
        problems.append("config format is %r, this firmware reads format %d: regenerate it with 'facedown firmware "
                        "config PROFILE' (firmware/CONFIG.md)" % (fmt, CONFIG_FORMAT))
        return problems
    sensing = cfg.get("sensing", "reed")
    if sensing not in SENSING:
        problems.append("sensing must be one of reed, rfid, hybrid, checkin, not %r" % (sensing,))
        return problems
    yields = None
    what = ""
    if sensing != "rfid":
        scanner = cfg.get("scanner")
        if scanner == "matrix":
            m = cfg.get("matrix") or {}
            if not _pins(m.get("rows")) or not _pins(m.get("cols")):
                problems.append("matrix needs non-empty 'rows' and 'cols' pin lists")
            else:
                yields = len(m["rows"]) * len(m["cols"])
                what = "the matrix has %d x %d = %d crossings" % (len(m["rows"]), len(m["cols"]), yields)
        elif scanner == "shift_register":
            s = cfg.get("shift_register") or {}
            for key in ("load", "clock", "data"):
                if not isinstance(s.get(key), int):
                    problems.append("shift_register needs the '%s' pin" % key)
            count = _int(s, "count", 0, 8, 512, problems, "shift_register.")
            if count % 8:
                problems.append("shift_register.count is %d: a 74HC165 chain has 8 inputs per chip" % count)
            yields = count
            what = "shift_register.count is %d" % count
        else:
            problems.append("scanner must be matrix or shift_register, not %r" % (scanner,))
    if sensing in ("rfid", "hybrid", "checkin"):
        readers = _check_rfid(cfg, sensing, problems)
        if sensing == "rfid":
            yields = readers
            what = "rfid.readers is %d" % readers
        elif sensing == "hybrid":
            chans = (cfg.get("rfid") or {}).get("channels")
            if chans is not None and (not isinstance(chans, list) or len(chans) != readers):
                problems.append("rfid.channels must list one channel per reader (%d)" % readers)
    n = cfg.get("channels")
    if not isinstance(n, int) or n < 1:
        problems.append("'channels' (how many channels the host's profile expects) is missing")
    elif yields is not None and yields != n:
        problems.append("channels is %d but %s" % (n, what))
    if sensing == "hybrid" and isinstance(n, int):
        chans = (cfg.get("rfid") or {}).get("channels")
        if isinstance(chans, list) and any(not isinstance(c, int) or not 0 <= c < n for c in chans):
            problems.append("rfid.channels must be channels 0..%d" % (n - 1))
    _int(cfg, "settle_ms", 30, 0, 1000, problems)
    _int(cfg, "scan_period_ms", 5, 1, 1000, problems)
    _int(cfg, "heartbeat_ms", 1000, 50, 1000, problems)
    wd = _int(cfg, "watchdog_ms", 2000, 0, 8000, problems)
    if 0 < wd < 200:
        problems.append("watchdog_ms must be 0 (off) or at least 200")
    _int(cfg, "out_buffer", 2048, 256, 16384, problems)
    _int(cfg, "report_mem_ms", 0, 0, 3600000, problems)
    _int(cfg, "tag_wait_ms", 300, 0, 5000, problems)
    _int(cfg, "tag_retry_ms", 250, 0, 5000, problems)
    if sensing == "checkin":
        _int(cfg.get("checkin") or {}, "poll_ms", 100, 10, 2000, problems, "checkin.")
    problems += fd_lights.check(cfg, n if isinstance(n, int) and n > 0 else None)
    return problems


def channel_count(cfg):
    return cfg["channels"]


class Device:
    """State and protocol of one scanner board. Call ``start`` once, then ``feed`` with host bytes and ``tick``.

    ``clock()`` gives the current tick (ms) for RFID time slices; ``mem``/``collect`` (gc.mem_free/gc.collect)
    let each heartbeat say how much the loop allocated since the last one.
    """

    def __init__(self, cfg, sensor, write, rfid=None, boot_id=0, diff=None, now=0, clock=None, mem=None,
                 collect=None, reset_cause="power", missing=(), lights=None):
        self.cfg = cfg
        self.lights = lights  # fd_lights.Lights, or None when the board has no station lights
        self.lit_wait = False
        self.sensing = cfg.get("sensing", "reed")
        self.sensor = sensor
        self.rfid = rfid
        self.write = write
        self.boot = "%04X" % (boot_id & 0xFFFF)
        self.diff = diff or (lambda a, b: a - b)
        self.clock = clock
        self.mem = mem
        self.collect = collect
        self.reset_cause = reset_cause
        self.n = cfg["channels"]
        self.settle_ms = cfg.get("settle_ms", 30)
        self.heartbeat_ms = cfg.get("heartbeat_ms", 1000)
        self.period = cfg.get("scan_period_ms", 5)
        self.hb_margin = min(HB_MARGIN_MS, self.heartbeat_ms // 25)
        self.last_tick = now
        self.tag_wait_ms = cfg.get("tag_wait_ms", 300)
        self.tag_retry_ms = cfg.get("tag_retry_ms", 250)
        r = cfg.get("rfid") or {}
        self.slice_ms = r.get("slice_ms", 6)
        self.absent_reads = r.get("absent_reads", 2)
        self.readers = r.get("readers", 0)
        self.missing = set(missing)
        self.deb = fd_debounce.Debouncer(self.n, self.settle_ms, now=now, diff=self.diff)
        self.raw = bytearray(self.n)
        self.occ = bytearray(self.n)
        self.tags = {}
        self.seq = 0
        self.sum = None  # the heartbeat's state checksum, computed once per change
        self.last_hb = now
        self.inbuf = b""
        # hybrid: the reader of each channel, channels waiting for their first tag read, retries
        self.reader_of = [-1] * self.n
        if self.sensing == "hybrid":
            chans = r.get("channels") or list(range(self.readers))
            for k in range(len(chans)):
                self.reader_of[chans[k]] = k
        self.waiting = {}  # channel -> deadline tick for its tag read before reporting without a tag
        self.retry = {}  # channel -> next retry tick for an occupied channel whose tag was not read
        # rfid survey: next reader, misses in a row per reader, and how long the last full pass took
        self.next_reader = 0
        self.misses = bytearray(self.readers if self.sensing == "rfid" else 0)
        self.survey_start = now
        self.survey_ms = -1
        self.collided = bytearray(self.n)
        self.held = None  # survey changes not yet sent: channel -> change
        self.held_since = now
        self.hold_ms = 60
        # check-in pad
        self.pad_poll = (cfg.get("checkin") or {}).get("poll_ms", 100)
        self.pad_due = now
        self.pad_uid = None
        self.pad_misses = 0
        self.taps = 0
        self.scans = 0
        self.scans_at_hb = 0
        self.queued = None  # callable: bytes of output waiting for USB (None: output is never queued)
        self.report_mem_ms = cfg.get("report_mem_ms", 0)
        self.mem_due = now
        self.free_after = mem() if mem and self.report_mem_ms else 0

    # -- output -------------------------------------------------------------------------------------------
    def send(self, body):
        self.write(fd_proto.frame(body))

    def hello(self):
        body = "HELLO proto=%d fw=%s board=%s profile=%s b=%s n=%d scanner=%s sensing=%s" % (
            fd_proto.PROTO_VERSION, FW_VERSION, self.cfg.get("board", "facedown"), self.cfg.get("profile", "-"),
            self.boot, self.n, self.cfg.get("scanner", "none") if self.sensing != "rfid" else "none", self.sensing)
        if self.sensor is not None and self.cfg.get("scanner") == "matrix":
            body += " rows=%d cols=%d" % (len(self.cfg["matrix"]["rows"]), len(self.cfg["matrix"]["cols"]))
        caps = "snap,chg,hb,cfg"
        if self.sensing in ("rfid", "hybrid"):
            caps += ",tags"
        if self.sensing == "checkin":
            caps += ",tap"
        if self.lights is not None:
            caps += ",lit"
        self.send(body + " reset=" + self.reset_cause + " caps=" + caps)

    def snapshot(self):
        self.send("SNAP b=%s seq=%d %s" % (self.boot, self.seq, fd_proto.state_text(self.occ, self.tags)))

    def heartbeat(self, now):
        if self.sum is None:
            self.sum = fd_proto.state_sum(self.occ, self.tags)  # ~3 ms on the Pico: only after a change
        body = "HB b=%s seq=%d sum=%s scans=%d" % (self.boot, self.seq, self.sum, self.scans - self.scans_at_hb)
        if self.survey_ms >= 0:
            body += " survey=%d" % self.survey_ms
        measure = self.mem is not None and self.report_mem_ms and self.diff(now, self.mem_due) >= 0
        if measure:
            free = self.mem()  # walks the heap: ~9 ms on the Pico, so only every report_mem_ms
            body += " mem=%d alloc=%d" % (free, self.free_after - free)
        self.scans_at_hb = self.scans
        self.send(body)
        if measure:
            # ~9 ms for the collection and ~9 ms for the count on a Pico. Otherwise nothing is collected by hand:
            # the steady loop allocates a few hundred bytes a second (heartbeats), so MicroPython's own collection
            # runs once every several minutes.
            self.collect()
            self.mem_due = now + self.report_mem_ms - self.heartbeat_ms // 2
            self.free_after = self.mem()

    def error(self, code, msg):
        self.send("ERR b=%s code=%s msg=%s" % (self.boot, code, msg.replace(" ", "_")))

    def config(self):
        import json

        self.send("CFG b=%s json=%s" % (self.boot, json.dumps(self.cfg).replace(" ", "")))

    def start(self, now):
        self.last_hb = now
        self.hello()
        self.snapshot()
        for k in sorted(self.missing):
            self.error("rfid", "reader %d does not answer" % k)

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
            self.heartbeat(self.last_hb)
        elif cmd == "LIT":
            self.lit(body)
        else:
            self.error("unknown", "unknown command " + cmd[:20])

    def lit(self, body):
        """`LIT all=CODE CODE=CH,CH...`: station colours; shown by the next pass (one chain write per pass)."""
        if self.lights is None:
            self.error("garbled", "LIT but config.json has no lights")
            return
        try:
            fields = fd_proto.parse(body)[1]
        except ValueError:
            self.error("garbled", "LIT fields are key=value")
            return
        why = self.lights.apply(fields)
        self.lit_wait = True
        if why is not None:
            self.error("garbled", "LIT " + why)

    # -- scanning -----------------------------------------------------------------------------------------
    def _emit(self, changes):
        for ch, occupied, uid in changes:
            self.occ[ch] = 1 if occupied else 0
            if occupied and uid:
                self.tags[ch] = uid
            elif ch in self.tags:
                del self.tags[ch]
        self.seq += 1
        self.sum = None
        self.send("CHG b=%s seq=%d c=%s" % (self.boot, self.seq, fd_proto.changes_text(changes)))

    def _read(self, k):
        """Reader k's answer (see MFRC522.read); a reader that raises must not stop the scanner."""
        if k in self.missing:
            return 0
        try:
            return self.rfid.read(k)
        except Exception as e:
            self.error("rfid", "reader %d: %s" % (k, e))
            return -2

    def _uid(self, got):
        import fd_mfrc522

        return fd_mfrc522.to_hex(self.rfid.uid, got)

    def _time_left(self, start):
        if self.clock is None:
            return True
        return self.diff(self.clock(), start) < self.slice_ms

    def tick(self, now):
        """One pass: scan and debounce, read tags where needed (at most ``slice_ms``), emit change events and
        the heartbeat."""
        self.scans += 1
        changes = None
        if self.sensor is not None:
            self.sensor.scan_into(self.raw)
            deb = self.deb
            for j in range(deb.update(now, self.raw)):
                ch = deb.changed[j]
                if not deb.settled[ch]:
                    if self.waiting:
                        self.waiting.pop(ch, None)
                    if self.retry:
                        self.retry.pop(ch, None)
                    changes = (changes or []) + [(ch, False, None)]
                elif self.reader_of[ch] >= 0:
                    self.waiting[ch] = now + self.tag_wait_ms
                else:
                    changes = (changes or []) + [(ch, True, None)]
        # when the next heartbeat is due: heartbeat_ms is the longest gap the host may see, so aim a margin under
        # it, a pass earlier (the next pass would be late; passes are longer while tags are read), and earlier by
        # the time the queued output needs to go out
        gap = self.diff(now, self.last_tick)
        self.last_tick = now
        queued = self.queued() if self.queued is not None else 0
        due = (self.heartbeat_ms - self.hb_margin - (gap if gap > self.period else self.period)
               - queued * OUT_US_PER_BYTE // 1000)
        real = self.clock() if self.clock is not None else now  # heartbeats keep wall time, not pass stamps
        since_hb = self.diff(real, self.last_hb)
        if queued > OUT_BEHIND or since_hb >= due - HB_CLEAR_MS:
            # output is behind, or a heartbeat is near: no tag reads this pass (reeds are still scanned and
            # debounced), so USB catches up and the heartbeat goes out on time, not behind a burst of tag events
            pass
        elif self.sensing == "hybrid" and (self.waiting or self.retry):
            changes = self._hybrid_tags(now, changes)
        elif self.sensing == "rfid":
            changes = self._held(now, self._survey(now, None))
        elif self.sensing == "checkin" and self.diff(now, self.pad_due) >= 0:
            self.pad_due = now + self.pad_poll
            self._pad()
        if changes:
            self._emit(changes)
        elif self.sum is None and due - HB_CLEAR_MS <= since_hb < due - self.period:
            # the heartbeat's state checksum (~1 ms on the Pico for reeds, ~15 ms with 100 tags) in a quiet pass just
            # before the heartbeat's (these read no tags): the pass that writes the heartbeat stays short and the
            # scan keeps its period, and a burst of changes does not compute it once per change
            self.sum = fd_proto.state_sum(self.occ, self.tags)
        if self.lights is not None and self.lights.dirty:
            if self.lit_wait:
                self.lit_wait = False  # this pass parsed a LIT (~6 ms): the chain is written (~4 ms) by the next one
            else:
                self.lights.show()  # one write of the whole chain, only after a colour changed
        if since_hb >= due:
            self.last_hb = real
            self.heartbeat(now)

    def _hybrid_tags(self, now, changes):
        # retries first: a channel that just gave up waiting is retried from the next pass on, not in this one
        start = self.clock() if self.clock else now
        for ch in sorted(self.retry):
            if not self._time_left(start):
                return changes
            if self.diff(now, self.retry[ch]) >= 0:
                got = self._read(self.reader_of[ch])
                if got > 0:
                    del self.retry[ch]
                    changes = (changes or []) + [(ch, True, self._uid(got))]
                else:
                    self.retry[ch] = now + self.tag_retry_ms
        for ch in sorted(self.waiting):
            if not self._time_left(start):
                return changes
            got = self._read(self.reader_of[ch])
            if got > 0:
                del self.waiting[ch]
                changes = (changes or []) + [(ch, True, self._uid(got))]
            elif self.diff(now, self.waiting[ch]) >= 0:
                del self.waiting[ch]
                self.retry[ch] = now + self.tag_retry_ms
                changes = (changes or []) + [(ch, True, None)]
                if got == -1:
                    self.error("collision", "channel %d: two or more tags in the reader's field" % ch)
                else:
                    self.error("notag", "channel %d occupied but no tag read" % ch)
        return changes

    def _held(self, now, found):
        """RFID survey changes are gathered (one CHG for several, fewer bytes on the wire) and sent when six are
        waiting, the survey came round, or the oldest has waited ``hold_ms``."""
        if found:
            if not self.held:
                self.held = {}
                self.held_since = now
            for c in found:
                self.held[c[0]] = c
        if not self.held:
            return None
        if len(self.held) >= 6 or self.next_reader == 0 or self.diff(now, self.held_since) >= self.hold_ms:
            out = [self.held[ch] for ch in sorted(self.held)]
            self.held = None
            return out
        return None

    def _same_uid(self, ch, got):
        old = self.tags.get(ch)
        if old is None or len(old) != 2 * got:
            return False
        uid = self.rfid.uid
        hexd = "0123456789ABCDEF"
        for i in range(got):
            if old[2 * i] != hexd[uid[i] >> 4] or old[2 * i + 1] != hexd[uid[i] & 15]:
                return False
        return True

    def _survey(self, now, changes):
        """RFID mode: read readers round-robin for at most slice_ms; a tag counts on its first clean read, an
        absence after ``absent_reads`` misses in a row."""
        start = self.clock() if self.clock else now
        first = True
        while first or self._time_left(start):
            first = False
            k = self.next_reader
            ch = k
            got = self._read(k)
            if got > 0:
                self.misses[k] = 0
                self.collided[ch] = 0
                if not self.occ[ch] or not self._same_uid(ch, got):
                    changes = (changes or []) + [(ch, True, self._uid(got))]
            elif got == 0:
                if self.misses[k] < 255:
                    self.misses[k] += 1
                self.collided[ch] = 0
                if self.occ[ch] and self.misses[k] >= self.absent_reads:
                    changes = (changes or []) + [(ch, False, None)]
            elif got == -1:
                self.misses[k] = 0
                if not self.collided[ch]:
                    self.collided[ch] = 1
                    self.error("collision", "channel %d: two or more tags in the reader's field" % ch)
                    if not self.occ[ch] or ch in self.tags:
                        changes = (changes or []) + [(ch, True, None)]
            self.next_reader = k + 1
            if self.next_reader >= self.readers:
                self.next_reader = 0
                t = self.clock() if self.clock else now
                self.survey_ms = self.diff(t, self.survey_start)
                self.survey_start = t
        return changes

    def _pad(self):
        got = self._read(0)
        if got > 0:
            self.pad_misses = 0
            uid = self._uid(got)
            if uid != self.pad_uid:
                self.pad_uid = uid
                self.taps += 1
                self.send("TAP b=%s k=%d uid=%s" % (self.boot, self.taps, uid))
        elif got == 0:
            self.pad_misses += 1
            if self.pad_misses >= 2:
                self.pad_uid = None
        elif got == -1 and self.pad_uid != "*":
            self.pad_uid = "*"
            self.error("collision", "two or more tags on the check-in pad: tap one piece at a time")


class _Board:
    """A pure sensor and reader for the self-check."""

    def __init__(self, n):
        self.closed = bytearray(n)
        self.tag = {}
        self.uid = bytearray(10)

    def scan_into(self, out):
        for i in range(len(self.closed)):
            out[i] = self.closed[i]

    def read(self, k):
        t = self.tag.get(k)
        if t is None:
            return 0
        for i in range(len(t)):
            self.uid[i] = t[i]
        return len(t)


def selfcheck():
    n = 0
    out = []
    cfg = {"format": 2, "channels": 8, "board": "t", "scanner": "shift_register", "sensing": "hybrid",
           "settle_ms": 20, "heartbeat_ms": 1000, "tag_wait_ms": 100,
           "shift_register": {"load": 1, "clock": 2, "data": 3, "count": 8},
           "rfid": {"sck": 18, "mosi": 19, "miso": 16, "readers": 8,
                    "select": {"kind": "decoder", "address": [5, 6, 7], "enable": 8}}}
    assert check_config(cfg) == [], check_config(cfg)
    assert len(check_config({"format": 2, "scanner": "x", "sensing": "hybrid", "settle_ms": -1})) >= 3
    assert "format" in check_config({"scanner": "matrix"})[0]
    wrong = dict(cfg, channels=100)
    assert check_config(wrong) == ["channels is 100 but shift_register.count is 8"], check_config(wrong)
    n += 1
    b = _Board(8)
    d = Device(cfg, b, out.append, rfid=b, boot_id=0xBEEF)
    d.start(0)
    assert [fd_proto.parse(fd_proto.unframe(x))[0] for x in out] == ["HELLO", "SNAP"]
    n += 1
    del out[:]
    b.closed[2] = 1
    b.tag[2] = bytes([0x04, 0xAA, 0xBB, 0xCC])
    d.tick(10)
    d.tick(30)
    assert len(out) == 1
    kind, f = fd_proto.parse(fd_proto.unframe(out[0]))
    assert kind == "CHG" and f["seq"] == "1" and f["c"] == "2+04AABBCC" and f["b"] == "BEEF", out
    n += 1
    del out[:]
    b.closed[4] = 1
    d.tick(40)
    d.tick(60)
    d.tick(100)
    assert out == []
    d.tick(170)
    kinds = [fd_proto.parse(fd_proto.unframe(x))[0] for x in out]
    assert kinds == ["ERR", "CHG"], out
    del out[:]
    b.tag[4] = bytes([0x04, 0xDD, 0xEE, 0xFF])
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
