"""FaceDown scanner protocol, device side: line checksums, message framing and the canonical board-state text.

Hardware-free and MicroPython-compatible: it runs on the RP2040, under CPython in tests and under the
MicroPython WebAssembly port. The host has its own implementation (controller/sensing/scanner_protocol.py);
the test suite checks that the two agree.
"""

# ruff: noqa: UP031  (%-formatting is deliberate: MicroPython supports it fully, cheaply)

PROTO_VERSION = 1
HEX = "0123456789ABCDEF"


def _crc8_table():
    t = bytearray(256)
    for i in range(256):
        c = i
        for _ in range(8):
            c = ((c << 1) ^ 0x07) & 0xFF if c & 0x80 else (c << 1) & 0xFF
        t[i] = c
    return t


def _crc16_table():
    t = []
    for i in range(256):
        c = i << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021) & 0xFFFF if c & 0x8000 else (c << 1) & 0xFFFF
        t.append(c)
    return t


# Table-driven: a byte costs one lookup instead of eight shifts (a 70-byte line: ~0.5 ms on the Pico, not ~6 ms).
_CRC8 = _crc8_table()
_CRC16 = _crc16_table()


def crc8(data, crc=0):
    """CRC-8 (polynomial 0x07, init 0, no reflection) of a bytes-like object: the per-line checksum."""
    table = _CRC8
    for b in data:
        crc = table[crc ^ b]
    return crc


def crc16(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE (polynomial 0x1021, init 0xFFFF) of a bytes-like object: the whole-state checksum."""
    table = _CRC16
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ table[(crc >> 8) ^ b]
    return crc


def frame(body):
    """One protocol line: the body, '*', two hex digits of CRC-8 over the body, newline."""
    return "%s*%02X\n" % (body, crc8(body.encode()))  # one formatting step: each + would build a new string


def unframe(line):
    """The body of a framed line, or None if it carries no checksum or a wrong one."""
    line = line.strip()
    star = line.rfind("*")
    if star < 0 or len(line) - star != 3:
        return None
    body = line[:star]
    if line[star + 1] not in HEX or line[star + 2] not in HEX:
        return None
    want = int(line[star + 1:], 16)
    if crc8(body.encode()) != want:
        return None
    return body


def parse(body):
    """(kind, {key: value}) of a message body such as 'CHG b=1A2B seq=5 c=3+'."""
    parts = body.split(" ")
    fields = {}
    for p in parts[1:]:
        if not p:
            continue
        eq = p.find("=")
        if eq <= 0:
            raise ValueError("field without '=': " + p)
        fields[p[:eq]] = p[eq + 1:]
    return parts[0], fields


def occ_hex(occ):
    """A list of booleans as hex nibbles: digit k holds channels 4k..4k+3, channel 4k+j in bit j."""
    n = len(occ)
    out = []
    for k in range(0, n - 3, 4):
        out.append(HEX[(1 if occ[k] else 0) | (2 if occ[k + 1] else 0) | (4 if occ[k + 2] else 0)
                       | (8 if occ[k + 3] else 0)])
    rest = n % 4
    if rest:
        v = 0
        for j in range(rest):
            if occ[n - rest + j]:
                v |= 1 << j
        out.append(HEX[v])
    return "".join(out)


def occ_from_hex(text, n):
    """The inverse of occ_hex for n channels; ValueError if the text has the wrong length or bits past n."""
    if len(text) != (n + 3) // 4:
        raise ValueError("occupancy for %d channels needs %d hex digits, got %d" % (n, (n + 3) // 4, len(text)))
    occ = []
    for k in range(len(text)):
        v = int(text[k], 16)
        for j in range(4):
            if 4 * k + j < n:
                occ.append(bool(v & (1 << j)))
            elif v & (1 << j):
                raise ValueError("occupancy bit set past channel %d" % (n - 1))
    return occ


def tags_text(tags):
    """Tags {channel: uid hex} as 'i:UID,i:UID' sorted by channel, or '-' when there are none."""
    if not tags:
        return "-"
    keys = sorted(tags)
    return ",".join([str(k) + ":" + tags[k] for k in keys])


def tags_from_text(text):
    if text == "-":
        return {}
    tags = {}
    for item in text.split(","):
        i, uid = item.split(":")
        tags[int(i)] = uid
    return tags


def state_text(occ, tags):
    """The canonical text of a whole board; its CRC-16 is the heartbeat's 'sum'."""
    return "occ=" + occ_hex(occ) + " tags=" + tags_text(tags)


def state_sum(occ, tags):
    return "%04X" % crc16(state_text(occ, tags).encode())


def changes_text(changes):
    """Changes [(channel, occupied, uid or None)] as 'i+UID' / 'i+' / 'i-' joined by commas."""
    out = []
    for ch in changes:
        s = str(ch[0]) + ("+" if ch[1] else "-")
        if ch[1] and ch[2]:
            s += ch[2]
        out.append(s)
    return ",".join(out)


def changes_from_text(text):
    out = []
    for item in text.split(","):
        for k in range(len(item)):
            if item[k] in "+-":
                break
        else:
            raise ValueError("change without + or -: " + item)
        occupied = item[k] == "+"
        uid = item[k + 1:] or None
        if uid is not None and not occupied:
            raise ValueError("an empty channel cannot carry a tag: " + item)
        out.append((int(item[:k]), occupied, uid))
    return out


def selfcheck():
    """Known-answer and round-trip checks; returns the number of checks passed, raises AssertionError otherwise."""
    n = 0
    assert crc8(b"123456789") == 0xF4
    n += 1
    assert crc16(b"123456789") == 0x29B1
    n += 1
    line = frame("CHG b=00AF seq=7 c=3+04A1B2C3,9-")
    assert unframe(line) == "CHG b=00AF seq=7 c=3+04A1B2C3,9-"
    n += 1
    bad = line[:4] + ("X" if line[4] != "X" else "Y") + line[5:]
    assert unframe(bad) is None
    n += 1
    assert unframe("MicroPython v1.23.0 on 2024-06-02") is None
    n += 1
    occ = [False] * 10
    occ[0] = occ[5] = occ[9] = True
    assert occ_hex(occ) == "122"
    assert occ_from_hex("122", 10) == occ
    n += 1
    try:
        occ_from_hex("128", 10)
        raise AssertionError("bit past the end accepted")
    except ValueError:
        n += 1
    kind, f = parse("HB b=00AF seq=7 sum=1D0F")
    assert kind == "HB" and f["seq"] == "7" and f["sum"] == "1D0F"
    n += 1
    ch = [(3, True, "04A1B2C3"), (9, False, None), (12, True, None)]
    assert changes_from_text(changes_text(ch)) == ch
    n += 1
    assert tags_from_text(tags_text({7: "AA", 2: "BB"})) == {2: "BB", 7: "AA"}
    n += 1
    assert state_text(occ, {}) == "occ=122 tags=-"
    n += 1
    return n
