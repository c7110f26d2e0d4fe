"""Runs the real firmware (firmware/fd_board.run) in a thread under CPython, behind a real pseudo terminal.

The stand-in `machine` and `utime` modules in this folder come first on sys.path, then firmware/. The host side
opens ``port`` (a symlink to the pty's slave end, like /dev/ttyACM0) with pyserial. Faults are made here:
unplug/replug (the terminal closes; a new one appears at the same path), reboot, noise, dropped and doubled lines.
"""

from __future__ import annotations

import os
import sys
import threading
import tty
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
FIRMWARE = HERE.parent.parent / "firmware"
for p in (str(FIRMWARE), str(HERE)):
    if p not in sys.path:
        sys.path.insert(0, p)

import fd_board  # noqa: E402  (needs the paths above)
import fd_debounce  # noqa: E402
import fd_device  # noqa: E402
import fd_lights  # noqa: E402
import fd_mfrc522  # noqa: E402
import fd_proto  # noqa: E402
import fd_scan  # noqa: E402
import machine  # noqa: E402
import world as world_mod  # noqa: E402

__all__ = ["Card", "FirmwareOnPty", "MFRC522Chip", "World", "fd_board", "fd_debounce", "fd_device", "fd_lights", "fd_mfrc522",
           "fd_proto", "fd_scan", "machine", "world_mod"]

World = world_mod.World
Card = world_mod.Card
MFRC522Chip = world_mod.MFRC522Chip


class FirmwareOnPty:
    """One scanner board: the firmware running on a pty whose slave is reachable at ``port``."""

    def __init__(self, cfg: dict, world: World, port: Path, boot_id: int = 0x1001) -> None:
        self.cfg = cfg
        self.world = world
        self.port = port
        self.boot_id = boot_id
        self.master: int | None = None
        self.slave: int | None = None
        self.thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._wlock = threading.Lock()
        #: Every line the firmware wrote goes through this: return the lines to really send (drop, double, alter).
        self.filter: Callable[[str], list[str]] = lambda line: [line]
        self.sent: list[str] = []
        self.crashed: BaseException | None = None

    # -- life cycle -------------------------------------------------------------------------------------------
    def plug(self) -> FirmwareOnPty:
        world_mod.install(self.world)
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)  # as the Pico's CDC ACM port: no echo, no newline translation
        os.set_blocking(self.master, False)
        tmp = self.port.with_suffix(".new")
        if tmp.exists() or tmp.is_symlink():
            tmp.unlink()
        tmp.symlink_to(os.ttyname(self.slave))
        tmp.replace(self.port)
        self._start()
        return self

    def _start(self) -> None:
        self._stop.clear()
        inp = open(self.master, "rb", buffering=0, closefd=False)  # noqa: SIM115 - lives as long as the thread

        def main() -> None:
            try:
                fd_board.run(self.cfg, inp, self._write, stop=self._stop.is_set, boot_id=self.boot_id,
                             led_put=self.world.put_leds)
            except machine.ResetRequested:
                pass
            except BaseException as exc:  # noqa: BLE001 - the test asserts on it
                self.crashed = exc

        self.thread = threading.Thread(target=main, name="firmware", daemon=True)
        self.thread.start()

    def _halt(self) -> None:
        self._stop.set()
        if self.thread is not None:
            self.thread.join(5)
            assert not self.thread.is_alive(), "firmware thread did not stop"
        self.thread = None

    def unplug(self) -> None:
        """The USB cable comes out: the firmware stops and the terminal goes away."""
        self._halt()
        for fd in (self.master, self.slave):
            if fd is not None:
                os.close(fd)
        self.master = self.slave = None
        if self.port.is_symlink():
            self.port.unlink()

    def replug(self, boot_id: int | None = None) -> None:
        if boot_id is not None:
            self.boot_id = boot_id
        self.plug()

    def reboot(self, boot_id: int) -> None:
        """A soft reset: same terminal, the firmware starts over with a new boot id and sequence 0."""
        self._halt()
        self.boot_id = boot_id
        self._start()

    def close(self) -> None:
        if self.master is not None:
            self.unplug()

    # -- the wire ---------------------------------------------------------------------------------------------
    def _write(self, text: str) -> None:
        for line in self.filter(text):
            self.sent.append(line)
            self.raw(line.encode())

    def raw(self, data: bytes) -> None:
        """Bytes onto the wire as if the device sent them (noise, a boot banner...)."""
        with self._wlock:
            if self.master is None:
                return
            try:
                os.write(self.master, data)
            except BlockingIOError:
                pass  # nobody reading: a real CDC port drops it too
