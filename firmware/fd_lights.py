"""Station lights, device side: the `LIT` command, a palette capped for the supply, and the chain's words.

Hardware-free and MicroPython-compatible. A ``Lights`` holds one colour code per channel; ``apply`` takes the
fields of a `LIT` command (PROTOCOL.md) and says what was wrong with them, if anything, without changing a
thing; ``show`` hands the whole chain's words (in chain order) to ``put`` once, and only when a colour changed
since the last ``show``. A word holds the LED's three bytes in the order the LED reads them (config
``lights.colour_order``): 0x00GGRRBB for a WS2812B (``grb``, the default), 0x00RRGGBB for an RGB part such as the
5 mm PL9823 (``rgb``); sent the wrong way, cyan would show as magenta. On the Pico ``put`` feeds the WS2812 PIO program (fd_board.py); in tests
it records the words.
"""

# ruff: noqa: UP031  (%-formatting is deliberate: MicroPython supports it fully, cheaply)

import array

# Colour codes and their full-brightness (red, green, blue). The host gives them roles (its lights module); the
# firmware knows only colours. `k` is off.
PALETTE = {
    "k": (0, 0, 0),
    "w": (255, 255, 255),
    "r": (255, 0, 0),
    "g": (0, 255, 0),
    "b": (0, 0, 255),
    "y": (255, 160, 0),
    "c": (0, 255, 255),
    "m": (255, 0, 255),
}
CODES = "kwrgbycm"
MAX_LEDS = 512
#: One WS2812 at full white draws about this much (60 mA = 3 x 20 mA); the supply is sized from it.
MA_PER_LED = 60
#: The byte orders a chain's LEDs may read: each name lists the colours in the order they go out.
COLOUR_ORDERS = ("grb", "rgb")


def check(cfg, channels):
    """Problems of a config's ``lights`` block (a list of messages, empty when usable or absent)."""
    lt = cfg.get("lights")
    if lt is None:
        return []
    if not isinstance(lt, dict):
        return ["lights must be an object {pin, count, order, brightness} (firmware/CONFIG.md)"]
    problems = []
    pin = lt.get("pin")
    if not isinstance(pin, int) or isinstance(pin, bool) or not 0 <= pin <= 29:
        problems.append("lights.pin must be a GPIO number 0..29, not %r" % (pin,))
    count = lt.get("count")
    if not isinstance(count, int) or isinstance(count, bool) or not 1 <= count <= MAX_LEDS:
        problems.append("lights.count must be a whole number from 1 to %d, not %r" % (MAX_LEDS, count))
        return problems
    b = lt.get("brightness", 64)
    if not isinstance(b, int) or isinstance(b, bool) or not 1 <= b <= 255:
        problems.append("lights.brightness must be a whole number from 1 to 255, not %r" % (b,))
    co = lt.get("colour_order", "grb")
    if co not in COLOUR_ORDERS:
        problems.append("lights.colour_order must be grb (WS2812B) or rgb (PL9823 and other RGB parts), not %r" % (co,))
    order = lt.get("order")
    if order is None:
        if isinstance(channels, int) and count > channels:
            problems.append("lights.count is %d but there are %d channels: give lights.order" % (count, channels))
        return problems
    if not isinstance(order, list) or len(order) != count:
        problems.append("lights.order must list one channel (or -1 for no station) per LED: %d" % count)
        return problems
    seen = {}
    for k in range(count):
        ch = order[k]
        if not isinstance(ch, int) or isinstance(ch, bool) or ch < -1 or (isinstance(channels, int)
                                                                        and ch >= channels):
            problems.append("lights.order[%d] is %r: a channel 0..%s or -1" % (k, ch, channels - 1
                                                                             if isinstance(channels, int) else "n"))
            break
        if ch >= 0 and ch in seen:
            problems.append("lights.order lists channel %d twice (LEDs %d and %d)" % (ch, seen[ch], k))
            break
        seen[ch] = k
    return problems


def word(rgb, brightness, colour_order="grb"):
    """The 24-bit word of a colour scaled to ``brightness`` (1..255) of full, its bytes in ``colour_order``."""
    r = rgb[0] * brightness // 255
    g = rgb[1] * brightness // 255
    b = rgb[2] * brightness // 255
    if colour_order == "rgb":
        return (r << 16) | (g << 8) | b
    return (g << 16) | (r << 8) | b


class Lights:
    """One colour code per channel and the chain that shows them. ``put(words)`` writes the whole chain."""

    def __init__(self, lt, channels, put):
        self.n = channels
        self.count = lt["count"]
        order = lt.get("order")
        self.order = order if order is not None else list(range(self.count))
        b = lt.get("brightness", 64)
        co = lt.get("colour_order", "grb")
        self.table = [0] * 128  # a colour code's byte -> its word, so a write allocates nothing
        for c in CODES:
            self.table[ord(c)] = word(PALETTE[c], b, co)
        self.codes = bytearray(b"k" * channels)
        self.led_of = [-1] * channels  # channel -> its LED in the chain (-1: none)
        for k in range(self.count):
            if self.order[k] >= 0:
                self.led_of[self.order[k]] = k
        self.out = array.array("I", [0] * self.count)  # kept up to date by apply: a write is one put
        self.dark = array.array("I", self.out)
        self.put = put
        self.dirty = True  # the first show clears what a previous run left lit
        self.frames = 0

    def apply(self, fields):
        """Apply a LIT command's fields ({'all': code, code: 'ch,ch,...'}); returns None, or what was wrong (and
        then nothing changes)."""
        sets = []
        for key in fields:
            val = fields[key]
            if key == "all":
                if len(val) != 1 or val not in CODES:
                    return "all=%s is not a colour code (%s)" % (val[:8], CODES)
                continue
            if len(key) != 1 or key not in CODES:
                return "%s= is not a colour code (%s)" % (key[:8], CODES)
            for item in val.split(","):
                if not item or len(item) > 4 or not item.isdigit():
                    return "%s=%s: channels are numbers 0..%d" % (key, item[:8], self.n - 1)
                ch = int(item)
                if ch >= self.n:
                    return "channel %d is past the last channel %d" % (ch, self.n - 1)
                sets.append((ch, key))
        if not sets and "all" not in fields:
            return "LIT needs all=CODE or CODE=CHANNELS"
        codes = self.codes
        out = self.out
        if "all" in fields:
            want = fields["all"].encode() * self.n
            if codes != want:
                codes[:] = want
                w = self.table[want[0]]
                if w == 0:
                    out = self.out = array.array("I", self.dark)  # all off: a copy, no loop over the chain
                else:
                    order = self.order
                    for k in range(self.count):
                        out[k] = w if order[k] >= 0 else 0
                self.dirty = True
        for ch, key in sets:
            c = ord(key)
            if codes[ch] != c:
                codes[ch] = c
                if self.led_of[ch] >= 0:
                    out[self.led_of[ch]] = self.table[c]
                self.dirty = True
        return None

    def show(self):
        """Write the chain if a colour changed since the last write; True when it wrote."""
        if not self.dirty:
            return False
        self.dirty = False
        self.put(self.out)
        self.frames += 1
        return True

    def lit(self):
        """Channels not off, as 'CH:CODE' joined by commas (for tests and the self-check)."""
        return ",".join(["%d:%s" % (i, chr(self.codes[i])) for i in range(self.n) if self.codes[i] != 107])


def selfcheck():
    n = 0
    assert check({}, 10) == []
    assert check({"lights": {"pin": 16, "count": 10}}, 10) == []
    assert "twice" in check({"lights": {"pin": 16, "count": 2, "order": [3, 3]}}, 10)[0]
    assert "past" not in str(check({"lights": {"pin": 16, "count": 2, "order": [0, -1]}}, 10))
    assert check({"lights": {"pin": 40, "count": 2}}, 10)[0].startswith("lights.pin")
    n += 1
    got = []
    lt = Lights({"pin": 16, "count": 4, "order": [3, 2, -1, 0], "brightness": 255}, 4, lambda w: got.append(list(w)))
    assert lt.show() and got[-1] == [0, 0, 0, 0]
    assert not lt.show()
    assert lt.apply({"w": "0", "g": "3"}) is None
    assert lt.show() and got[-1] == [0xFF0000, 0, 0, 0xFFFFFF], got
    n += 1
    assert lt.apply({"g": "4"}) is not None and lt.apply({"z": "1"}) is not None and lt.apply({"g": "1,x"})
    assert lt.apply({}) is not None and lt.apply({"all": "q"}) is not None
    assert not lt.show()
    n += 1
    assert lt.apply({"all": "k"}) is None and lt.show() and got[-1] == [0, 0, 0, 0]
    n += 1
    assert word((0, 255, 255), 255) == 0xFF00FF and word((0, 255, 255), 255, "rgb") == 0x00FFFF
    assert "colour_order" in check({"lights": {"pin": 16, "count": 2, "colour_order": "bgr"}}, 10)[0]
    n += 1
    return n
