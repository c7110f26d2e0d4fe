"""The electrical world behind the `machine` stand-in: reed switches, 74HC165/74HC595 chains and MFRC522 chips.

Tests describe the board (which channels hold a magnet, which tag lies on which reader); the stand-in pins
and SPI bus read and drive this model exactly as the real parts would answer the firmware.
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class World:
    """Everything the firmware's pins can see. One per test; installed with ``install``."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.levels: dict[int, int] = {}  # what each output pin drives
        self.readers: dict[int, Callable[[], int]] = {}  # input pins computed from the model
        self.on_write: dict[int, Callable[[int], None]] = {}
        self.closed: set[int] = set()  # channels whose reed switch a magnet closes
        self.spi_target: Callable[[], MFRC522Chip | None] = lambda: None
        self.led_frames: list[list[int]] = []  # every write of the station lights' chain: 0x00GGRRBB per LED

    def put_leds(self, words: object) -> None:
        """The firmware's LED seam: on the Pico these words go to the WS2812 PIO program; here they are kept."""
        with self.lock:
            self.led_frames.append([int(w) for w in words])  # type: ignore[attr-defined]

    # -- wiring ---------------------------------------------------------------------------------------------
    def matrix(self, rows: list[int], cols: list[int], *, cut_rows: tuple[int, ...] = (), cut_cols: tuple[int, ...] = (),
               shorted_cols: tuple[int, ...] = ()) -> None:
        """Reeds with diodes between each row and column; a driven-low row pulls a closed switch's column low.
        Wiring faults: a row or column wire cut at the connector (its crossings never reach the pin), columns shorted
        together (one pulled low pulls the others)."""
        def natural(ci: int) -> int:
            if ci in cut_cols:
                return 1
            for ri, rp in enumerate(rows):
                if ri not in cut_rows and self.levels.get(rp, 1) == 0 and ri * len(cols) + ci in self.closed:
                    return 0
            return 1

        for ci, cp in enumerate(cols):
            def read(ci: int = ci) -> int:
                return min(natural(c) for c in shorted_cols) if ci in shorted_cols else natural(ci)

            self.readers[cp] = read

    def shift_register(self, load: int, clock: int, data: int, count: int, *, dead_chips: tuple[int, ...] = (),
                       shorted: tuple[int, ...] = ()) -> None:
        """A 74HC165 chain: PL low latches (closed reed = 0), each CP rising edge shifts, Q7 of chip 0 on ``data``.
        Wiring faults: a chip whose inputs never read low (its reeds' ground bus cut, or the chip not latching) while
        it still passes the chain's data on, and inputs shorted together (one reed closed pulls them all low)."""
        chips = (count + 7) // 8
        state = {"reg": [1] * (chips * 8), "pos": 0, "clk": 0}

        def low(ch: int) -> bool:
            if ch // 8 in dead_chips:
                return False
            return ch in self.closed or (ch in shorted and any(c in self.closed for c in shorted))

        def on_load(v: int) -> None:
            if v == 0:
                reg = []
                for k in range(chips * 8):
                    ch = (k // 8) * 8 + 7 - (k % 8)
                    reg.append(0 if low(ch) else 1)
                state["reg"], state["pos"] = reg, 0

        def on_clock(v: int) -> None:
            if v == 1 and state["clk"] == 0:
                state["pos"] += 1
            state["clk"] = v

        def read() -> int:
            pos = state["pos"]
            return state["reg"][pos] if pos < len(state["reg"]) else 0  # DS of the last chip tied to ground

        self.on_write[load] = on_load
        self.on_write[clock] = on_clock
        self.readers[data] = read

    def rfid_direct(self, cs_pins: list[int], chips: list[MFRC522Chip]) -> None:
        def target() -> MFRC522Chip | None:
            low = [k for k, p in enumerate(cs_pins) if self.levels.get(p, 1) == 0]
            return chips[low[0]] if len(low) == 1 else None

        self.spi_target = target

    def rfid_decoder(self, address: list[int], enable: int, chips: list[MFRC522Chip]) -> None:
        """A 74HC138/74HC154 decoder tree: output k (bit i of k on address[i]) is low while ``enable`` is low."""
        def target() -> MFRC522Chip | None:
            if self.levels.get(enable, 1) != 0:
                return None
            k = sum(1 << i for i, p in enumerate(address) if self.levels.get(p, 0))
            return chips[k] if k < len(chips) else None

        self.spi_target = target

    def rfid_595(self, data: int, clock: int, latch: int, chips: list[MFRC522Chip]) -> None:
        """74HC595 chain: each CP rise shifts ``data`` into QA of chip 0; a latch rise copies to the outputs."""
        n = ((len(chips) + 7) // 8) * 8
        st = {"reg": [1] * n, "out": [1] * n, "clk": 0, "lat": 0}

        def on_clock(v: int) -> None:
            if v == 1 and st["clk"] == 0:
                st["reg"] = [self.levels.get(data, 1)] + st["reg"][:-1]
            st["clk"] = v

        def on_latch(v: int) -> None:
            if v == 1 and st["lat"] == 0:
                st["out"] = list(st["reg"])
            st["lat"] = v

        def target() -> MFRC522Chip | None:
            low = [k for k in range(len(chips)) if st["out"][k] == 0]
            return chips[low[0]] if len(low) == 1 else None

        self.on_write[clock] = on_clock
        self.on_write[latch] = on_latch
        self.spi_target = target

    # -- pin access -----------------------------------------------------------------------------------------
    def write(self, pin: int, v: int) -> None:
        with self.lock:
            self.levels[pin] = v
            hook = self.on_write.get(pin)
            if hook:
                hook(v)

    def read(self, pin: int) -> int:
        with self.lock:
            r = self.readers.get(pin)
            return r() if r else self.levels.get(pin, 1)

    def place(self, *channels: int) -> None:
        with self.lock:
            self.closed.update(channels)

    def lift(self, *channels: int) -> None:
        with self.lock:
            self.closed.difference_update(channels)


def crc_a(data: list[int]) -> list[int]:
    """ISO 14443-3 CRC_A, computed bit by bit (the firmware uses a byte-wise form): [low, high]."""
    crc = 0x6363
    for byte in data:
        for i in range(8):
            bit = ((byte >> i) & 1) ^ (crc & 1)
            crc >>= 1
            if bit:
                crc ^= 0x8408
    return [crc & 0xFF, crc >> 8]


class Card:
    """An ISO 14443A tag with a 4- or 7-byte UID and its state machine (IDLE, READY, ACTIVE, HALT)."""

    def __init__(self, uid: bytes, mute: int = 0) -> None:
        assert len(uid) in (4, 7)
        self.uid = uid
        self.state = "IDLE"
        self.level = 1
        self.mute = mute  # answer nothing to this many wake-ups (a tag at the edge of the field)

    def cl(self, level: int) -> list[int]:
        u = list(self.uid)
        part = ([0x88] + u[:3]) if (len(u) == 7 and level == 1) else (u[3:7] if level == 2 else u[:4])
        return part + [part[0] ^ part[1] ^ part[2] ^ part[3]]

    def receive(self, frame: list[int], bits: int) -> list[int] | None:
        halted = self.state == "HALT"
        if bits == 7 and len(frame) == 1:
            if frame[0] == 0x52 or (frame[0] == 0x26 and self.state == "IDLE"):
                if self.mute:
                    self.mute -= 1
                    return None
                self.state, self.level = "READY", 1
                return [0x44 if len(self.uid) == 7 else 0x04, 0x00]
            return None
        if self.state == "READY" and len(frame) == 2 and frame[1] == 0x20 and frame[0] == (0x93, 0x95)[self.level - 1]:
            return self.cl(self.level)
        if self.state == "READY" and len(frame) == 9 and frame[1] == 0x70 and frame[0] == (0x93, 0x95)[self.level - 1]:
            if crc_a(frame[:7]) != frame[7:] or frame[2:7] != self.cl(self.level):
                self.state = "IDLE"
                return None
            if len(self.uid) == 7 and self.level == 1:
                self.level = 2
                sak = 0x04
            else:
                self.state = "ACTIVE"
                sak = 0x08
            return [sak] + crc_a([sak])
        if self.state == "ACTIVE" and frame == [0x50, 0x00] + crc_a([0x50, 0x00]):
            self.state = "HALT"
            return None
        self.state = "HALT" if halted else "IDLE"
        return None


class MFRC522Chip:
    """The registers of one MFRC522 that the firmware driver uses, with at most one card in its field."""

    def __init__(self, version: int = 0x92) -> None:
        self.regs: dict[int, int] = {0x37: version}
        self.fifo: list[int] = []
        self.card: Card | None = None
        self.transceives = 0  # frames the firmware sent to the field (each poll of the reader sends some)

    def transaction(self, data: bytes) -> bytes:
        addr = data[0]
        reg = (addr >> 1) & 0x3F
        out = bytearray(len(data))
        if addr & 0x80:
            for i in range(1, len(data)):
                out[i] = self.read(reg)
        else:
            for b in data[1:]:
                self.write(reg, b)
        return bytes(out)

    def read(self, reg: int) -> int:
        if reg == 0x09:
            return self.fifo.pop(0) if self.fifo else 0
        if reg == 0x0A:
            return len(self.fifo)
        return self.regs.get(reg, 0)

    def write(self, reg: int, v: int) -> None:
        if reg == 0x09:
            self.fifo.append(v)
        elif reg == 0x0A:
            if v & 0x80:
                self.fifo.clear()
        elif reg == 0x04:
            cur = self.regs.get(0x04, 0)
            self.regs[0x04] = (cur | (v & 0x7F)) if v & 0x80 else (cur & ~v & 0x7F)
        elif reg == 0x01 and v == 0x0F:
            version = self.regs[0x37]
            self.regs = {0x37: version}
            self.fifo.clear()
        else:
            self.regs[reg] = v
            if reg == 0x0D and v & 0x80 and self.regs.get(0x01) == 0x0C:
                self._transceive(v & 0x07)

    def _transceive(self, bits: int) -> None:
        self.transceives += 1
        frame = list(self.fifo)
        self.fifo.clear()
        antenna = self.regs.get(0x14, 0) & 0x03 == 0x03
        answer = self.card.receive(frame, bits) if (self.card and antenna) else None
        self.regs[0x06] = 0
        if answer is None:
            self.regs[0x04] = self.regs.get(0x04, 0) | 0x01  # TimerIRq
        else:
            self.fifo.extend(answer)
            self.regs[0x0C] = 0
            self.regs[0x04] = self.regs.get(0x04, 0) | 0x30  # RxIRq | IdleIRq


_world: World | None = None


def install(world: World | None) -> None:
    global _world
    _world = world


def current() -> World:
    if _world is None:
        raise RuntimeError("no stand-in World installed; call world.install(World()) (harness/firmware_standin/world.py)")
    return _world
