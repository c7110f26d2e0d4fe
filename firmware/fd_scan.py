"""Scan logic over abstract pins: a reed matrix, a 74HC165 shift-register chain, and RFID reader chip selects.

Hardware-free and MicroPython-compatible: a "pin" is anything with ``value()`` / ``value(v)`` (machine.Pin on
the device, a small pure object in self-checks). A scanner fills a preallocated bytearray, 1 = switch closed,
indexed by channel number, so the steady scan loop allocates nothing.
"""


class MatrixScanner:
    """Rows driven one at a time, columns read; channel = row * ncols + col. Diodes in series with each reed.

    ``active_low``: a driven row is pulled low and a closed reed pulls its column low against a pull-up.
    ``delay_us``: optional callable(us) to let the lines settle after driving a row.
    """

    def __init__(self, rows, cols, active_low=True, delay_us=None, settle_us=10, read_word=None, col_gpios=None):
        self.rows = rows
        self.cols = cols
        self.on = 0 if active_low else 1
        self.off = 1 - self.on
        self.delay_us = delay_us
        self.settle_us = settle_us
        self.n = len(rows) * len(cols)
        # On the device, ``read_word()`` reads every GPIO input at once (SIO GPIO_IN): a row whose columns read
        # the same as last time needs no per-column work at all.
        self.read_word = read_word
        self.col_mask = [1 << g for g in col_gpios] if col_gpios else None
        self.word = [-1] * len(rows)
        for r in rows:
            r.value(self.off)

    def scan_into(self, out):
        """Fill ``out`` (a bytearray of n, kept between scans) with 1 for each closed crossing."""
        on = self.on
        off = self.off
        delay = self.delay_us
        settle_us = self.settle_us
        read_word = self.read_word
        words = self.word
        col_mask = self.col_mask
        ncols = len(self.cols)
        i = 0
        row = 0
        for r in self.rows:
            r.value(on)
            if delay:
                delay(settle_us)
            if read_word is not None:
                w = read_word()
                if w != words[row]:
                    words[row] = w
                    for m in col_mask:
                        out[i] = 1 if bool(w & m) == bool(on) else 0
                        i += 1
                else:
                    i += ncols
            else:
                for c in self.cols:
                    out[i] = 1 if c.value() == on else 0
                    i += 1
            r.value(off)
            row += 1

    def scan(self):
        out = bytearray(self.n)
        self.scan_into(out)
        return [b == 1 for b in out]


class ShiftRegisterScanner:
    """A chain of 74HC165 parallel-in/serial-out registers.

    Channel = chip * 8 + input (A=0 .. H=7); chip 0 is the one whose Q7 goes to the microcontroller.
    PL (load) low latches the inputs; each rising CP edge shifts the next bit onto Q7, H first.
    ``active_low``: a closed reed pulls its input low against a pull-up. The last chip's serial input DS is tied
    to ground, so bits clocked past the end of the chain read 0 (see ``chips_found``).
    """

    def __init__(self, load, clock, data, count, active_low=True):
        self.load = load
        self.clock = clock
        self.data = data
        self.n = count
        self.chips = (count + 7) // 8
        self.closed = 0 if active_low else 1
        load.value(1)
        clock.value(0)

    def scan_into(self, out):
        load = self.load
        clock = self.clock
        data = self.data
        closed = self.closed
        n = self.n
        load.value(0)
        load.value(1)
        for chip in range(self.chips):
            base = chip * 8 + 7
            for j in range(8):
                ch = base - j
                if ch < n:
                    out[ch] = 1 if data.value() == closed else 0
                clock.value(1)
                clock.value(0)

    def scan(self):
        out = bytearray(self.n)
        self.scan_into(out)
        return [b == 1 for b in out]

    def chips_found(self, extra=8):
        """Count the chips actually on the chain: latch, clock out ``chips + extra`` chips' worth of bits and find
        where the all-zero tail (DS of the last chip tied to ground) begins. Returns (chips, certain): ``chips`` is
        None if no zero tail was seen (the chain is longer, or DS is not grounded); ``certain`` is False when the
        count may be fooled by a chip whose eight inputs are all closed (only the inputs' 1s are unambiguous)."""
        total = self.chips + extra
        blocks = []
        self.load.value(0)
        self.load.value(1)
        for _ in range(total):
            ones = 0
            for _ in range(8):
                ones += self.data.value()
                self.clock.value(1)
                self.clock.value(0)
            blocks.append(ones)
        if self.closed == 1:  # active high inputs: an open input reads 0, the tail is ambiguous
            return None, False
        tail = total
        while tail > 0 and blocks[tail - 1] == 0:
            tail -= 1
        if tail == total:
            return None, True
        return tail, tail >= self.chips


class DecoderSelect:
    """Reader chip selects through a decoder tree (74HC138 / 74HC154): reader k is selected when the address
    lines carry k (bit i on ``address[i]``) and ``enable`` is low. Constant time per select, whatever the count."""

    def __init__(self, address, enable, count):
        self.address = address
        self.enable = enable
        self.count = count
        self.current = -1
        enable.value(1)

    def pick(self, k):
        """Put reader k's number on the address lines (nothing is selected until ``begin``)."""
        if k == self.current:
            return
        bit = 1
        for p in self.address:
            p.value(1 if k & bit else 0)
            bit <<= 1
        self.current = k

    def begin(self):
        self.enable.value(0)

    def end(self):
        self.enable.value(1)


class DirectSelect:
    """One GPIO per reader, active low."""

    def __init__(self, pins):
        self.pins = pins
        self.count = len(pins)
        self.pin = pins[0]
        for p in pins:
            p.value(1)

    def pick(self, k):
        self.pin = self.pins[k]

    def begin(self):
        self.pin.value(0)

    def end(self):
        self.pin.value(1)


class _Wire:
    """A pure pin for self-checks: remembers what was written, or reads through a function."""

    def __init__(self, read=None):
        self.v = 0
        self.read = read
        self.log = []

    def value(self, v=None):
        if v is None:
            return self.read() if self.read else self.v
        self.v = v
        self.log.append(v)


def selfcheck():
    n = 0
    closed = {(0, 1), (2, 0)}
    rows = [_Wire() for _ in range(3)]

    def col_reader(c):
        def read():
            for r in range(3):
                if rows[r].v == 0 and (r, c) in closed:
                    return 0
            return 1

        return read

    cols = [_Wire(col_reader(c)) for c in range(2)]
    m = MatrixScanner(rows, cols)
    got = m.scan()
    assert got == [False, True, False, False, True, False], got
    assert all(r.v == 1 for r in rows)
    n += 1

    inputs = [1] * 16
    inputs[3] = 0
    inputs[8 + 7] = 0
    state = {"reg": [], "pos": 0}
    load, clock = _Wire(), _Wire()

    def data_read():
        reg = state["reg"]
        return reg[state["pos"]] if state["pos"] < len(reg) else 0  # DS of the last chip grounded

    data = _Wire(data_read)
    s = ShiftRegisterScanner(load, clock, data, 12)
    # Emulate the chain: latch on load low, shift on clock rising.
    orig_load, orig_clock = load.value, clock.value

    def load_value(v=None):
        if v == 0:
            state["reg"] = [inputs[(k // 8) * 8 + 7 - (k % 8)] for k in range(16)]
            state["pos"] = 0
        return orig_load(v)

    def clock_value(v=None):
        if v == 1 and clock.v == 0:
            state["pos"] += 1
        return orig_clock(v)

    load.value, clock.value = load_value, clock_value
    got = s.scan()
    want = [False] * 12
    want[3] = True
    assert got == want, got
    assert s.chips_found() == (2, True)
    n += 1
    short = ShiftRegisterScanner(load, clock, data, 40)  # config says 5 chips, 2 are wired
    assert short.chips_found() == (2, False)
    long = ShiftRegisterScanner(load, clock, data, 4)  # config says 1 chip, the chain goes on
    inputs[8:16] = [1] * 8
    assert long.chips_found(extra=0) == (None, True)
    n += 1

    a = [_Wire() for _ in range(7)]
    en = _Wire()
    d = DecoderSelect(a, en, 100)
    d.pick(99)
    assert [p.v for p in a] == [1, 1, 0, 0, 0, 1, 1] and en.v == 1
    d.begin()
    assert en.v == 0
    d.end()
    before = len(a[0].log)
    d.pick(99)  # already on the lines: nothing to write
    assert len(a[0].log) == before
    n += 1
    return n
