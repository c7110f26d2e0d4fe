"""The scanner line protocol, host side: checksums, framing and parsing of the messages firmware/PROTOCOL.md defines.

Pure: no I/O. Written independently of the firmware's fd_proto.py; the tests check the two agree byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from controller.errors import FaceDownError

PROTO_VERSION = 1
#: Message kinds the scanner sends (protocol version 1).
KINDS = ("HELLO", "SNAP", "CHG", "HB", "ERR", "CFG", "TAP")
MAX_LINE = 4096
#: How many places a noisy line is tried from (the message kinds nearest its end): a line of noise full of kind
#: names ("xHB xHB ...") would otherwise cost a checksum of the rest of the line per name, 0.3 s a line.
MAX_TAILS = 16


class ProtocolError(FaceDownError, ValueError):
    """A line that carries a valid checksum but cannot be understood (a bug or a newer protocol)."""


def _crc8_byte(crc: int) -> int:
    for _ in range(8):
        crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
    return crc


_CRC8 = bytes(_crc8_byte(i) for i in range(256))


def crc8(data: bytes) -> int:
    """CRC-8, polynomial 0x07, init 0: the per-line checksum (a byte at a time from a table)."""
    crc = 0
    for b in data:
        crc = _CRC8[crc ^ b]
    return crc


def crc16(data: bytes) -> int:
    """CRC-16/CCITT-FALSE: the whole-state checksum carried by heartbeats."""
    crc = 0xFFFF
    for b in data:
        crc ^= b << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def frame(body: str) -> bytes:
    """A command line for the scanner: body, '*', CRC-8 as two hex digits, newline."""
    return f"{body}*{crc8(body.encode()):02X}\n".encode()


def has_checksum(line: str) -> bool:
    """Does the line end like a protocol line ('*' and two hex digits), whatever the checksum's value?"""
    return len(line) >= 3 and line[-3] == "*" and all(c in "0123456789ABCDEF" for c in line[-2:])


def unframe(line: str) -> str | None:
    """The body of a line whose checksum is right; None otherwise.

    Bytes of noise before a message are skipped: if the whole line fails, the longest tail that starts with a known
    message kind and passes the checksum is taken, trying at most MAX_TAILS places (those nearest the end).
    """
    line = line.strip()
    if not has_checksum(line):
        return None
    want = int(line[-2:], 16)
    body = line[:-3]
    if crc8(body.encode("utf-8", "surrogateescape")) == want:
        return body
    starts: list[int] = []
    for kind in KINDS:
        at = body.find(kind + " ", 1)
        while at > 0:
            starts.append(at)
            at = body.find(kind + " ", at + 1)
    for at in sorted(starts)[-MAX_TAILS:]:
        tail = body[at:]
        if crc8(tail.encode("utf-8", "surrogateescape")) == want:
            return tail
    return None


def parse(body: str) -> tuple[str, dict[str, str]]:
    kind, *rest = body.split(" ")
    fields: dict[str, str] = {}
    for part in rest:
        if not part:
            continue
        key, eq, value = part.partition("=")
        if not eq or not key:
            raise ProtocolError(f"field without '=': {part!r}")
        fields[key] = value
    return kind, fields


def occ_from_hex(text: str, n: int) -> list[bool]:
    if len(text) != (n + 3) // 4:
        raise ProtocolError(f"occupancy of {n} channels needs {(n + 3) // 4} hex digits, got {len(text)}")
    occ: list[bool] = []
    for k, ch in enumerate(text):
        try:
            v = int(ch, 16)
        except ValueError:
            raise ProtocolError(f"occupancy digit {ch!r} is not hex") from None
        for j in range(4):
            if 4 * k + j < n:
                occ.append(bool(v >> j & 1))
            elif v >> j & 1:
                raise ProtocolError(f"occupancy bit set past channel {n - 1}")
    return occ


def occ_hex(occ: list[bool]) -> str:
    digits = []
    for k in range(0, len(occ), 4):
        v = sum(1 << j for j in range(4) if k + j < len(occ) and occ[k + j])
        digits.append("0123456789ABCDEF"[v])
    return "".join(digits)


def tags_from_text(text: str) -> dict[int, str]:
    if text == "-":
        return {}
    tags: dict[int, str] = {}
    for item in text.split(","):
        i, colon, uid = item.partition(":")
        if not colon or not i.isdigit() or not uid:
            raise ProtocolError(f"tag entry {item!r} is not CHANNEL:UID")
        tags[int(i)] = uid
    return tags


def tags_text(tags: dict[int, str]) -> str:
    return ",".join(f"{k}:{tags[k]}" for k in sorted(tags)) or "-"


def state_sum(occ: list[bool], tags: dict[int, str]) -> str:
    """The heartbeat checksum of a whole board: CRC-16 of 'occ=<hex> tags=<list>' as four hex digits."""
    return f"{crc16(f'occ={occ_hex(occ)} tags={tags_text(tags)}'.encode()):04X}"


Change = tuple[int, bool, str | None]


def changes_from_text(text: str) -> list[Change]:
    out: list[Change] = []
    for item in text.split(","):
        k = next((i for i, c in enumerate(item) if c in "+-"), -1)
        if k <= 0 or not item[:k].isdigit():
            raise ProtocolError(f"change {item!r} is not CHANNEL+[UID] or CHANNEL-")
        occupied = item[k] == "+"
        uid = item[k + 1:] or None
        if uid is not None and not occupied:
            raise ProtocolError(f"change {item!r}: an empty channel cannot carry a tag")
        out.append((int(item[:k]), occupied, uid))
    return out


@dataclass
class LineSplitter:
    """Bytes in, complete lines out; a run of bytes longer than MAX_LINE without a newline is dropped and counted,
    and so is a line longer than MAX_LINE that arrived whole in one read: no line handed on is ever longer."""

    buf: bytearray = field(default_factory=bytearray)
    dropped: int = 0

    def feed(self, data: bytes) -> list[str]:
        self.buf += data
        lines: list[str] = []
        while True:
            nl = self.buf.find(b"\n")
            if nl < 0:
                break
            raw = bytes(self.buf[:nl])
            del self.buf[: nl + 1]
            if nl > MAX_LINE:
                self.dropped += nl + 1
                continue
            lines.append(raw.decode("utf-8", "surrogateescape").strip("\r"))
        if len(self.buf) > MAX_LINE:
            self.dropped += len(self.buf)
            self.buf.clear()
        return lines
