"""MFRC522 RFID reader driver over SPI: reads the UID of the ISO 14443A tag on a reader, nothing else.

MicroPython-compatible and hardware-free in the sense that it only needs an object with ``write(buf)`` and
``write_readinto(out, in)`` (machine.SPI) and a select object with ``pick(k)``, ``begin()`` and ``end()``
(fd_scan.DecoderSelect or DirectSelect), so many readers share one SPI bus at constant cost per access.

Power and interference: a reader's antenna is switched on only while that reader is read (``field_us`` before
waking the tag, so it can power up), and off again after; so at most one field is on on the whole board, and the
tag, losing power, forgets it was selected. Reading an empty reader costs the reader's own timer timeout
(``timeout_us``), not a software wait. Two tags in one field are reported as a collision, never as "no tag".
No allocation on the no-tag path; the UID lands in the preallocated ``uid`` buffer.
The tag's UID is all FaceDown reads: which piece a tag belongs to is kept on the Pi, never on the tag.
"""

COMMAND = 0x01
COM_IRQ = 0x04
ERROR = 0x06
FIFO_DATA = 0x09
FIFO_LEVEL = 0x0A
CONTROL = 0x0C
BIT_FRAMING = 0x0D
MODE = 0x11
TX_CONTROL = 0x14
TX_ASK = 0x15
T_MODE = 0x2A
T_PRESCALER = 0x2B
T_RELOAD_H = 0x2C
T_RELOAD_L = 0x2D
VERSION = 0x37

CMD_IDLE = 0x00
CMD_TRANSCEIVE = 0x0C
CMD_SOFT_RESET = 0x0F

REQA = 0x26
WUPA = 0x52
SEL_CL1 = 0x93
SEL_CL2 = 0x95
SEL_CL3 = 0x97
CASCADE_TAG = 0x88

# results of a transceive, and of read() when negative
OK = 1
NONE = 0
COLLISION = -1
FAILED = -2

TICK_US = 25  # the reader's timer with TPrescaler 169: 13.56 MHz / 339 = 40 kHz

HEX = "0123456789ABCDEF"


def crc_a(data):
    """ISO/IEC 14443-3 CRC_A (init 0x6363), returned as [low byte, high byte]."""
    crc = 0x6363
    for b in data:
        b = (b ^ (crc & 0xFF)) & 0xFF
        b = (b ^ (b << 4)) & 0xFF
        crc = ((crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)) & 0xFFFF
    return [crc & 0xFF, crc >> 8]


def _crc_a_into(buf, n):
    """CRC_A of buf[:n] written into buf[n], buf[n + 1] (no allocation)."""
    crc = 0x6363
    for i in range(n):
        b = (buf[i] ^ (crc & 0xFF)) & 0xFF
        b = (b ^ (b << 4)) & 0xFF
        crc = ((crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)) & 0xFFFF
    buf[n] = crc & 0xFF
    buf[n + 1] = crc >> 8


def to_hex(data, n=None):
    if n is None:
        n = len(data)
    return "".join([HEX[data[i] >> 4] + HEX[data[i] & 15] for i in range(n)])


def _no_sleep(us):
    pass


class _Count:
    def __init__(self):
        self.t = 0

    def __call__(self):
        self.t += 1
        return self.t


class MFRC522:
    """Readers on one SPI bus, reader k chosen through ``sel.pick(k)``."""

    def __init__(self, spi, sel, timeout_us=1000, field_us=1000, sleep_us=None, ticks_us=None, diff=None):
        self.spi = spi
        self.sel = sel
        self.timeout_us = timeout_us
        self.field_us = field_us
        self.sleep_us = sleep_us or _no_sleep
        self.ticks_us = ticks_us or _Count()
        self.diff = diff or (lambda a, b: a - b)
        self._w2 = bytearray(2)
        self._r2 = bytearray(2)
        self._burst = [bytearray(k + 1) for k in range(13)]
        self._rtx = [bytearray(k + 1) for k in range(13)]
        self._rrx = [bytearray(k + 1) for k in range(13)]
        self.frame = bytearray(11)
        self.rx = bytearray(12)
        self.rx_len = 0
        self.uid = bytearray(10)
        self.collisions = 0

    # -- registers --------------------------------------------------------------------------------------------
    def _write(self, reg, val):
        w = self._w2
        w[0] = (reg << 1) & 0x7E
        w[1] = val
        self.sel.begin()
        self.spi.write(w)
        self.sel.end()

    def _read(self, reg):
        w = self._w2
        w[0] = ((reg << 1) & 0x7E) | 0x80
        w[1] = 0
        self.sel.begin()
        self.spi.write_readinto(w, self._r2)
        self.sel.end()
        return self._r2[1]

    def _write_fifo(self, data, n):
        """data[:n] into the FIFO in one SPI transaction."""
        b = self._burst[n]
        b[0] = FIFO_DATA << 1
        for i in range(n):
            b[i + 1] = data[i]
        self.sel.begin()
        self.spi.write(b)
        self.sel.end()

    def _read_fifo(self, n):
        """n bytes from the FIFO into ``rx`` in one SPI transaction."""
        tx = self._rtx[n]
        rx = self._rrx[n]
        addr = 0x80 | (FIFO_DATA << 1)
        for i in range(n):
            tx[i] = addr
        tx[n] = 0
        self.sel.begin()
        self.spi.write_readinto(tx, rx)
        self.sel.end()
        for i in range(n):
            self.rx[i] = rx[i + 1]
        self.rx_len = n

    # -- commands ---------------------------------------------------------------------------------------------
    def init(self, k):
        """Reset and configure reader k, antenna off; returns its version byte (0x91/0x92 genuine, 0x88 clones;
        0 or 0xFF: no reader answers)."""
        self.sel.pick(k)
        self._write(COMMAND, CMD_SOFT_RESET)
        for _ in range(50):
            if not self._read(COMMAND) & 0x10:  # PowerDown clears when the reset is done
                break
        reload = self.timeout_us // TICK_US - 1
        reload = 1 if reload < 1 else (0xFFFF if reload > 0xFFFF else reload)
        self._write(T_MODE, 0x80)  # TAuto: the timer starts at the end of each transmission
        self._write(T_PRESCALER, 0xA9)  # 25 us per tick
        self._write(T_RELOAD_H, reload >> 8)
        self._write(T_RELOAD_L, reload & 0xFF)
        self._write(TX_ASK, 0x40)  # 100 % ASK
        self._write(MODE, 0x3D)  # CRC preset 0x6363
        self._write(TX_CONTROL, 0x80)  # antenna off until this reader is read
        return self._read(VERSION)

    def _transceive(self, data, n, last_bits=0):
        """Send data[:n] to the tag; OK with the answer in rx[:rx_len], NONE (the reader's timer ran out),
        COLLISION or FAILED."""
        self._write(COMMAND, CMD_IDLE)
        self._write(COM_IRQ, 0x7F)
        self._write(FIFO_LEVEL, 0x80)
        self._write_fifo(data, n)
        self._write(COMMAND, CMD_TRANSCEIVE)
        self._write(BIT_FRAMING, 0x80 | last_bits)
        start = self.ticks_us()
        limit = 2 * self.timeout_us + 3000  # a reader that stopped answering must not hang the scanner
        irq = 0
        while True:
            irq = self._read(COM_IRQ)
            if irq & 0x31:  # RxIRq, IdleIRq or TimerIRq
                break
            if self.diff(self.ticks_us(), start) > limit:
                irq = 0
                break
        self._write(BIT_FRAMING, 0)
        if irq == 0xFF or not irq & 0x20:  # no answer (0xFF: MISO floating high, no reader)
            return NONE
        err = self._read(ERROR)
        if err & 0x08:
            return COLLISION
        if err & 0x13:  # BufferOvfl, ParityErr, ProtocolErr
            return FAILED
        got = self._read(FIFO_LEVEL) & 0x7F
        self._read_fifo(12 if got > 12 else got)
        return OK

    def _uid(self):
        f = self.frame
        f[0] = WUPA
        st = self._transceive(f, 1, 7)
        if st == NONE:
            return 0
        if st == FAILED or (st == OK and self.rx_len != 2):
            return FAILED
        # a collision in the ATQA (two tags of different kinds) is resolved below, at the UID
        got = 0
        for level in range(3):
            f[0] = SEL_CL1 + 2 * level
            f[1] = 0x20
            st = self._transceive(f, 2)
            if st == COLLISION:
                self.collisions += 1
                return COLLISION
            if st != OK or self.rx_len != 5:
                return FAILED
            rx = self.rx
            if rx[0] ^ rx[1] ^ rx[2] ^ rx[3] ^ rx[4]:
                return FAILED
            f[1] = 0x70
            for i in range(5):
                f[2 + i] = rx[i]
            _crc_a_into(f, 7)
            st = self._transceive(f, 9)
            if st != OK or self.rx_len != 3:
                return FAILED
            if f[2] == CASCADE_TAG:
                for i in range(3):
                    self.uid[got + i] = f[3 + i]
                got += 3
            else:
                for i in range(4):
                    self.uid[got + i] = f[2 + i]
                return got + 4
        return FAILED

    def read(self, k):
        """Read the tag on reader k: the UID's length (4, 7 or 10; bytes in ``uid``), 0 when no tag answers,
        COLLISION when two or more tags answer at once, FAILED on a garbled answer."""
        self.sel.pick(k)
        self._write(TX_CONTROL, 0x83)  # antenna on
        self.sleep_us(self.field_us)
        try:
            return self._uid()
        finally:
            self._write(TX_CONTROL, 0x80)  # antenna off: one field at a time, and the tag forgets its state

    def read_uid(self, k):
        """The UID (hex) of the tag on reader k, or None (no tag, two tags, or no clean answer)."""
        n = self.read(k)
        return to_hex(self.uid, n) if n > 0 else None


def selfcheck():
    n = 0
    assert crc_a([0x50, 0]) == [0x57, 0xCD]
    buf = bytearray([0x50, 0, 0, 0])
    _crc_a_into(buf, 2)
    assert list(buf[2:]) == [0x57, 0xCD]
    n += 1
    assert to_hex([0x04, 0xA1, 0xFF]) == "04A1FF" and to_hex(bytearray([1, 2, 3]), 2) == "0102"
    n += 1
    return n
