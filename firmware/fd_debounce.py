"""Per-channel debouncing on the scanner: a channel's value changes only after reading the same for settle_ms.

Hardware-free and MicroPython-compatible, and allocation-free in the steady loop: raw and settled values are
bytearrays (1 = closed), change lists are written into a preallocated list. A scan like the last one costs one
comparison in C, plus a look at the channels still settling. Times are tick counts; ``diff`` is the wrap-safe
subtraction (time.ticks_diff on the device).
"""


def _plain_diff(a, b):
    return a - b


class Debouncer:
    def __init__(self, n, settle_ms, now=0, diff=None):
        self.n = n
        self.settle_ms = settle_ms
        self.diff = diff or _plain_diff
        self.settled = bytearray(n)
        self.raw = bytearray(n)
        self.since = [now] * n
        self.changed = [0] * n  # channels whose settled value changed in the last update: changed[:count]
        self.waiting = []  # channels whose raw value differs from the settled one, ascending
        self.unsettled = 0  # how many: len(waiting)

    def update(self, now, raw):
        """Record a full scan (bytearray) taken at ``now``; return how many channels' settled value changed (their
        numbers, ascending, are ``changed[:count]``).

        Only a scan that differs from the last one is walked channel by channel (one comparison in C tells); the
        scans while a change settles look at the waiting channels alone, so the pass that reports a change costs
        the same whatever the number of channels."""
        last = self.raw
        if raw == last:
            if not self.unsettled:
                return 0  # the steady board: one comparison in C, nothing to do
        else:
            settled = self.settled
            since = self.since
            waiting = []
            for i in range(self.n):
                v = raw[i]
                if v != last[i]:
                    last[i] = v
                    since[i] = now
                if v != settled[i]:
                    waiting.append(i)
            self.waiting = waiting
        return self._settle(now)

    def _settle(self, now):
        count = 0
        keep = 0
        waiting = self.waiting
        settled = self.settled
        last = self.raw
        since = self.since
        settle_ms = self.settle_ms
        diff = self.diff
        for i in waiting:
            if diff(now, since[i]) >= settle_ms:
                settled[i] = last[i]
                self.changed[count] = i
                count += 1
            else:
                waiting[keep] = i
                keep += 1
        if count:
            del waiting[keep:]
        self.unsettled = keep
        return count

    def pending(self):
        return self.unsettled > 0


def selfcheck():
    """Bounce is ignored, a held change settles after settle_ms; returns the number of checks passed."""
    n = 0
    d = Debouncer(3, 20, now=0)
    assert d.update(0, bytearray([0, 0, 0])) == 0
    assert d.update(5, bytearray([1, 0, 0])) == 0
    assert d.update(10, bytearray([0, 0, 0])) == 0
    assert d.update(30, bytearray([0, 0, 0])) == 0
    n += 1
    assert d.update(40, bytearray([1, 0, 1])) == 0
    assert d.update(59, bytearray([1, 0, 1])) == 0
    assert d.update(60, bytearray([1, 0, 1])) == 2 and d.changed[:2] == [0, 2]
    assert d.settled == bytearray([1, 0, 1])
    n += 1
    assert not d.pending()
    d.update(70, bytearray([1, 1, 1]))
    assert d.pending()
    n += 1

    def wrap(a, b):
        return ((a - b + 512) & 1023) - 512

    w = Debouncer(1, 20, now=1015, diff=wrap)
    w.update(1015, bytearray([1]))
    assert w.update(1020, bytearray([1])) == 0
    assert w.update(11, bytearray([1])) == 1
    n += 1
    return n
