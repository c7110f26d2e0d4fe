"""MFRC522 RFID reader driver over SPI: reads the UID of the ISO 14443A tag on a reader, nothing else.

MicroPython-compatible and hardware-free in the sense that it only needs an object with
``write(buf)`` and ``write_readinto(out, in)`` (machine.SPI) and a chip-select object with ``select(k)``
(fd_scan.DirectChipSelect or ChipSelect595), so several readers share one SPI bus.
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
HLTA = 0x50
SEL_CL1 = 0x93
SEL_CL2 = 0x95
CASCADE_TAG = 0x88

HEX = "0123456789ABCDEF"


def crc_a(data):
    """ISO/IEC 14443-3 CRC_A (init 0x6363), returned as [low byte, high byte]."""
    crc = 0x6363
    for b in data:
        b = (b ^ (crc & 0xFF)) & 0xFF
        b = (b ^ (b << 4)) & 0xFF
        crc = ((crc >> 8) ^ (b << 8) ^ (b << 3) ^ (b >> 4)) & 0xFFFF
    return [crc & 0xFF, crc >> 8]


def to_hex(data):
    return "".join([HEX[b >> 4] + HEX[b & 15] for b in data])


class MFRC522:
    """One or more MFRC522 readers on one SPI bus, reader k chosen through ``cs.select(k)``."""

    def __init__(self, spi, cs, poll_limit=200):
        self.spi = spi
        self.cs = cs
        self.poll_limit = poll_limit
        self.selected = None
        self._b1 = bytearray(1)
        self._w2 = bytearray(2)
        self._r2 = bytearray(2)

    def _write(self, reg, val):
        self.cs.select(self.selected)
        self._w2[0] = (reg << 1) & 0x7E
        self._w2[1] = val
        self.spi.write(self._w2)
        self.cs.select(None)

    def _read(self, reg):
        self.cs.select(self.selected)
        self._w2[0] = ((reg << 1) & 0x7E) | 0x80
        self._w2[1] = 0
        self.spi.write_readinto(self._w2, self._r2)
        self.cs.select(None)
        return self._r2[1]

    def _set_bits(self, reg, mask):
        self._write(reg, self._read(reg) | mask)

    def _clear_bits(self, reg, mask):
        self._write(reg, self._read(reg) & ~mask & 0xFF)

    def init(self, k):
        """Reset and configure reader k; returns its version byte (0x91/0x92 genuine, 0x88 clones; 0/0xFF: none)."""
        self.selected = k
        self._write(COMMAND, CMD_SOFT_RESET)
        for _ in range(50):
            if not self._read(COMMAND) & 0x10:  # PowerDown clears when the reset is done
                break
        self._write(T_MODE, 0x8D)  # timer starts at the end of transmission, prescaler high bits
        self._write(T_PRESCALER, 0x3E)
        self._write(T_RELOAD_H, 0)
        self._write(T_RELOAD_L, 30)  # about 25 ms of waiting for a tag's answer
        self._write(TX_ASK, 0x40)  # 100 % ASK
        self._write(MODE, 0x3D)  # CRC preset 0x6363
        self._set_bits(TX_CONTROL, 0x03)  # antenna on
        return self._read(VERSION)

    def _transceive(self, data, last_bits=0):
        """Send ``data`` to the tag; returns (bytes received, valid bits in the last byte) or None on timeout/error."""
        self._write(COMMAND, CMD_IDLE)
        self._write(COM_IRQ, 0x7F)
        self._write(FIFO_LEVEL, 0x80)
        for b in data:
            self._write(FIFO_DATA, b)
        self._write(COMMAND, CMD_TRANSCEIVE)
        self._write(BIT_FRAMING, 0x80 | last_bits)
        irq = 0
        for _ in range(self.poll_limit):
            irq = self._read(COM_IRQ)
            if irq & 0x31:  # RxIRq, IdleIRq or TimerIRq
                break
        self._clear_bits(BIT_FRAMING, 0x80)
        if not irq & 0x30 or irq & 0x01:
            return None
        if self._read(ERROR) & 0x1B:  # BufferOvfl, CollErr, ParityErr, ProtocolErr
            return None
        n = self._read(FIFO_LEVEL)
        out = [self._read(FIFO_DATA) for _ in range(n)]
        return out, self._read(CONTROL) & 0x07

    def _anticoll(self, sel):
        got = self._transceive([sel, 0x20])
        if got is None or len(got[0]) != 5:
            return None
        b = got[0]
        if b[0] ^ b[1] ^ b[2] ^ b[3] ^ b[4]:
            return None
        return b

    def _select(self, sel, five):
        frame = [sel, 0x70] + list(five)
        got = self._transceive(frame + crc_a(frame))
        if got is None or len(got[0]) != 3:
            return None
        return got[0][0]

    def read_uid(self, k):
        """The UID (hex) of the tag on reader k, or None if there is none or it did not answer cleanly.

        WUPA wakes a tag that is idle or halted; after reading, the tag is selected and halted, so the next
        WUPA always gets an answer while the tag stays on the reader.
        """
        self.selected = k
        self._write(BIT_FRAMING, 0x07)
        atqa = self._transceive([WUPA], 7)
        if atqa is None or len(atqa[0]) != 2:
            return None
        cl1 = self._anticoll(SEL_CL1)
        if cl1 is None:
            return None
        sak = self._select(SEL_CL1, cl1)
        if sak is None:
            return None
        if cl1[0] == CASCADE_TAG:
            cl2 = self._anticoll(SEL_CL2)
            if cl2 is None:
                return None
            if self._select(SEL_CL2, cl2) is None:
                return None
            uid = cl1[1:4] + cl2[0:4]
        else:
            uid = cl1[0:4]
        self._transceive([HLTA, 0] + crc_a([HLTA, 0]))  # a halted tag does not answer: None is expected
        return to_hex(uid)


def selfcheck():
    n = 0
    assert crc_a([HLTA, 0]) == [0x57, 0xCD]
    n += 1
    assert to_hex([0x04, 0xA1, 0xFF]) == "04A1FF"
    n += 1
    return n
