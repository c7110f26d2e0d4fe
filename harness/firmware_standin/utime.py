"""Stand-in for MicroPython's `utime` under CPython: ticks wrap at 2**30 ms like the RP2040 port's."""

from __future__ import annotations

import time

_PERIOD = 1 << 30
_OFFSET = int(time.monotonic() * 1000) - (_PERIOD - 5000)  # start 5 s before the wrap, so wrapping is exercised


def ticks_ms() -> int:
    return (int(time.monotonic() * 1000) - _OFFSET) % _PERIOD


def ticks_diff(a: int, b: int) -> int:
    return ((a - b + _PERIOD // 2) % _PERIOD) - _PERIOD // 2


def ticks_add(t: int, d: int) -> int:
    return (t + d) % _PERIOD


def sleep_ms(ms: int) -> None:
    time.sleep(ms / 1000)


def sleep_us(us: int) -> None:
    pass  # settling time of real wires; nothing to wait for here


def ticks_us() -> int:
    return int(time.monotonic() * 1_000_000) % _PERIOD
