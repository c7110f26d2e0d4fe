"""Stand-in for MicroPython's `machine` module under CPython: Pin, SPI and reset, wired to the installed World."""

from __future__ import annotations

from world import current


class Pin:
    IN = 0
    OUT = 1
    PULL_UP = 1
    PULL_DOWN = 2

    def __init__(self, id: int, mode: int = -1, pull: int = -1, *, value: int | None = None) -> None:
        self.id = id
        self.mode = mode
        if value is not None:
            current().write(id, value)

    def value(self, v: int | None = None) -> int | None:
        if v is None:
            return current().read(self.id)
        current().write(self.id, 1 if v else 0)
        return None

    def __call__(self, v: int | None = None) -> int | None:
        return self.value(v)


class SPI:
    def __init__(self, id: int, baudrate: int = 1000000, *, polarity: int = 0, phase: int = 0,
                 sck: Pin | None = None, mosi: Pin | None = None, miso: Pin | None = None) -> None:
        self.id = id

    def write(self, buf: bytes) -> None:
        chip = current().spi_target()
        if chip is not None:
            chip.transaction(bytes(buf))

    def write_readinto(self, out: bytes, into: bytearray) -> None:
        chip = current().spi_target()
        got = chip.transaction(bytes(out)) if chip is not None else b"\xff" * len(out)
        into[:] = got


class WDT:
    """The watchdog: the stand-in counts feeds (hangs and resets are tested on the emulated chip)."""

    def __init__(self, id: int = 0, timeout: int = 5000) -> None:
        self.timeout = timeout
        self.feeds = 0

    def feed(self) -> None:
        self.feeds += 1


class ResetRequested(Exception):
    """Raised by reset(): the firmware asked to reboot; the test harness restarts it."""


def reset() -> None:
    raise ResetRequested()
