"""Per-channel debouncing on the scanner: a channel's value changes only after reading the same for settle_ms.

Hardware-free and MicroPython-compatible. Values may be booleans (reed switches) or tag uids (RFID), anything
comparable with ==. Times are tick counts; ``diff`` is the wrap-safe subtraction (time.ticks_diff on the device).
"""


def _plain_diff(a, b):
    return a - b


class Debouncer:
    def __init__(self, n, settle_ms, now=0, initial=None, diff=None):
        self.n = n
        self.settle_ms = settle_ms
        self.diff = diff or _plain_diff
        self.settled = [initial] * n
        self.raw = [initial] * n
        self.since = [now] * n

    def update(self, now, raw):
        """Record a full scan taken at ``now``; return the channels whose settled value changed, ascending."""
        changed = []
        settled = self.settled
        for i in range(self.n):
            v = raw[i]
            if v != self.raw[i]:
                self.raw[i] = v
                self.since[i] = now
            if v != settled[i] and self.diff(now, self.since[i]) >= self.settle_ms:
                settled[i] = v
                changed.append(i)
        return changed

    def pending(self):
        for i in range(self.n):
            if self.raw[i] != self.settled[i]:
                return True
        return False


def selfcheck():
    """Bounce is ignored, a held change settles after settle_ms; returns the number of checks passed."""
    n = 0
    d = Debouncer(3, 20, now=0, initial=False)
    assert d.update(0, [False, False, False]) == []
    assert d.update(5, [True, False, False]) == []
    assert d.update(10, [False, False, False]) == []
    assert d.update(30, [False, False, False]) == []
    n += 1
    assert d.update(40, [True, False, True]) == []
    assert d.update(59, [True, False, True]) == []
    assert d.update(60, [True, False, True]) == [0, 2]
    assert d.settled == [True, False, True]
    n += 1
    assert not d.pending()
    d.update(70, [True, True, True])
    assert d.pending()
    n += 1
    t = Debouncer(1, 10, now=0, initial=None)
    t.update(0, ["04AB"])
    assert t.update(10, ["04AB"]) == [0] and t.settled[0] == "04AB"
    n += 1

    def wrap(a, b):
        return ((a - b + 512) & 1023) - 512

    w = Debouncer(1, 20, now=1015, initial=False, diff=wrap)
    w.update(1015, [True])
    assert w.update(1020, [True]) == []
    assert w.update(11, [True]) == [0]
    n += 1
    return n
