"""Scan logic over abstract pins: a reed matrix, a 74HC165 shift-register chain, and a 74HC595 chip-select chain.

Hardware-free and MicroPython-compatible: a "pin" is anything with ``value()`` / ``value(v)`` (machine.Pin on
the device, a small pure object in self-checks). Each scanner returns a list of booleans, True = switch closed,
indexed by channel number.
"""


class MatrixScanner:
    """Rows driven one at a time, columns read; channel = row * ncols + col. Diodes in series with each reed.

    ``active_low``: a driven row is pulled low and a closed reed pulls its column low against a pull-up.
    ``delay_us``: optional callable(us) to let the lines settle after driving a row.
    """

    def __init__(self, rows, cols, active_low=True, delay_us=None, settle_us=10):
        self.rows = rows
        self.cols = cols
        self.on = 0 if active_low else 1
        self.off = 1 - self.on
        self.delay_us = delay_us
        self.settle_us = settle_us
        self.n = len(rows) * len(cols)
        for r in rows:
            r.value(self.off)

    def scan(self):
        out = []
        on = self.on
        for r in self.rows:
            r.value(on)
            if self.delay_us:
                self.delay_us(self.settle_us)
            for c in self.cols:
                out.append(c.value() == on)
            r.value(self.off)
        return out


class ShiftRegisterScanner:
    """A chain of 74HC165 parallel-in/serial-out registers.

    Channel = chip * 8 + input (A=0 .. H=7); chip 0 is the one whose Q7 goes to the microcontroller.
    PL (load) low latches the inputs; each rising CP edge shifts the next bit onto Q7, H first.
    ``active_low``: a closed reed pulls its input low against a pull-up.
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

    def scan(self):
        self.load.value(0)
        self.load.value(1)
        bits = [False] * (self.chips * 8)
        closed = self.closed
        for k in range(self.chips * 8):
            bits[(k // 8) * 8 + 7 - (k % 8)] = self.data.value() == closed
            self.clock.value(1)
            self.clock.value(0)
        return bits[: self.n]


class ChipSelect595:
    """Chip selects through a chain of 74HC595: output k low selects reader k, all others high.

    Outputs QA..QH of chip 0 (the one fed by the microcontroller's data pin) are selects 0..7, chip 1 holds 8..15...
    """

    def __init__(self, data, clock, latch, count):
        self.data = data
        self.clock = clock
        self.latch = latch
        self.count = count
        self.chips = (count + 7) // 8
        self.current = -2
        self.select(None)

    def select(self, k):
        """Drive select k low (None: deselect all)."""
        want = -1 if k is None else k
        if want == self.current:
            return
        self.latch.value(0)
        # The first bit shifted ends up furthest down the chain: send the last chip's QH first.
        for bit in range(self.chips * 8 - 1, -1, -1):
            self.data.value(0 if bit == want else 1)
            self.clock.value(1)
            self.clock.value(0)
        self.latch.value(1)
        self.current = want


class DirectChipSelect:
    """One GPIO per reader, active low."""

    def __init__(self, pins):
        self.pins = pins
        self.count = len(pins)
        for p in pins:
            p.value(1)

    def select(self, k):
        for i in range(len(self.pins)):
            self.pins[i].value(0 if i == k else 1)


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
        return state["reg"][state["pos"]]

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
            state["pos"] = min(state["pos"] + 1, 15)
        return orig_clock(v)

    load.value, clock.value = load_value, clock_value
    got = s.scan()
    want = [False] * 12
    want[3] = True
    assert got == want, got
    n += 1

    d, c, la = _Wire(), _Wire(), _Wire()
    cs = ChipSelect595(d, c, la, 10)
    d.log[:] = []
    cs.select(9)
    assert len(d.log) == 16 and d.log[16 - 1 - 9] == 0 and sum(d.log) == 15
    n += 1
    return n
