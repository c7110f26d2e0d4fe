"""Hardware glue for the Pico: builds pins, scanner and RFID readers from config.json and runs the scan loop on
USB serial, with a watchdog and an output queue that never blocks the scan loop."""

# ruff: noqa: UP031  (%-formatting is deliberate: MicroPython supports it fully, cheaply)

import select

import fd_device
import fd_lights
import fd_mfrc522
import fd_proto
import fd_scan
import machine
import utime

SIO_GPIO_IN = 0xD0000004  # RP2040 SIO GPIO_IN: every GPIO's input level in one read
WATCHDOG_CTRL = 0x40058000  # RP2040 WATCHDOG CTRL register; bit 30 = ENABLE
WATCHDOG_SCRATCH0 = 0x4005800C  # free for the application (the SDK and bootrom use SCRATCH4-7)
OUT_US_PER_PASS = 1500  # time per loop pass spent handing bytes to USB, at least (more when the pass has slack)
OUT_US_BEHIND = 4000  # time per pass for output while more than a short line waits, or for the line the pass made
OUT_LINE = 64  # queued bytes beyond which output is behind
IN_CHUNK = 16  # host bytes read per pass at most: each costs ~0.1 ms (a poll of USB), so a long command is read over a few passes


def load_config(path="config.json"):
    """The config dict, or a string saying why there is none."""
    import json

    try:
        with open(path) as f:
            return json.load(f)
    except OSError:
        return "no %s on the device: copy one with 'facedown firmware flash PROFILE'" % path
    except ValueError as e:
        return "%s is not valid JSON: %s" % (path, e)


def _in(n, pull_up):
    return machine.Pin(n, machine.Pin.IN, machine.Pin.PULL_UP if pull_up else machine.Pin.PULL_DOWN)


def _out(n, v):
    return machine.Pin(n, machine.Pin.OUT, value=v)


class Output:
    """The scanner's output lines, queued in a fixed ring and handed out a byte at a time only when the USB port
    says it can take one, so a host that keeps the port open but does not read never stalls the scan loop
    (MicroPython's own write would wait up to 500 ms). When the ring is full, a new line is dropped whole and
    counted: the host notices the gap (seq, heartbeat sum) and resyncs.

    With ``write`` (a callable taking a line), lines go straight out instead (tests under CPython).
    """

    def __init__(self, size, stream=None, write=None):
        self.size = size
        self.ring = bytearray(size)
        self.head = 0
        self.count = 0
        self.dropped = 0
        self.stream = stream
        self.write = write
        self.one = bytearray(1)
        self.poll = None
        if stream is not None:
            self.poll = select.poll()
            self.poll.register(stream, select.POLLOUT)

    def push(self, text):
        if self.write is not None:
            self.write(text)
            return
        data = text.encode()
        n = len(data)
        if n > self.size - self.count:
            self.dropped += 1
            return
        at = (self.head + self.count) % self.size
        first = self.size - at
        if n <= first:
            self.ring[at:at + n] = data
        else:
            self.ring[at:] = data[:first]
            self.ring[:n - first] = data[first:]
        self.count += n

    def queued(self):
        return self.count

    def pump(self, budget_us=OUT_US_PER_PASS):
        """Hand queued bytes to USB for about ``budget_us``, never waiting; returns how many are still queued.

        One byte per write, each after the port said it has room: MicroPython's write of more bytes than the USB
        buffer has free waits up to 500 ms, and the port only says whether one byte fits. The loop keeps
        everything in locals: a byte costs one poll and one write (~60 us on a Pico, was ~150 us with attribute
        look-ups), so a CHG line leaves in the pass that made it."""
        count = self.count
        if not count:
            return 0
        ring = self.ring
        head = self.head
        size = self.size
        one = self.one
        write = self.stream.write
        ipoll = getattr(self.poll, "ipoll", None)
        ticks_us = utime.ticks_us
        ticks_diff = utime.ticks_diff
        start = ticks_us()
        while count and ticks_diff(ticks_us(), start) < budget_us:
            if ipoll is None:
                if not self.poll.poll(0):
                    break
            else:
                room = False
                for _ in ipoll(0):
                    room = True
                if not room:
                    break
            one[0] = ring[head]
            write(one)
            head += 1
            if head == size:
                head = 0
            count -= 1
        self.head = head
        self.count = count
        return count


# WS2812 timing in cycles of an 8 MHz PIO clock (125 ns): a bit is 10 cycles (1.25 us, 800 kbit/s); a 0 is high
# for T1 (375 ns), a 1 for T1 + T2 (750 ns); T3 is the low part both share.
WS2812_T1, WS2812_T2, WS2812_T3 = 3, 3, 4
WS2812_PIO_HZ = 8000000


def ws2812_put(pin, sm_id=0):
    """A ``put(words)`` for a WS2812 chain on GPIO ``pin``: a PIO state machine shifts out each word's low 24 bits
    (GRB, most significant first) with the pin as side-set. One ``sm.put`` of the whole array per write; the
    state machine stalls with the pin low when the FIFO runs dry, which is the chain's latch (reset)."""
    import rp2

    t1, t2, t3 = WS2812_T1, WS2812_T2, WS2812_T3

    # The names inside are PIO assembler instructions, defined by rp2.asm_pio while it runs the function.
    @rp2.asm_pio(sideset_init=rp2.PIO.OUT_LOW, out_shiftdir=rp2.PIO.SHIFT_LEFT, autopull=True, pull_thresh=24,
                 fifo_join=rp2.PIO.JOIN_TX)
    def ws2812():
        wrap_target()  # noqa: F821
        label("bit")  # noqa: F821
        out(x, 1).side(0)[t3 - 1]  # noqa: F821
        jmp(not_x, "zero").side(1)[t1 - 1]  # noqa: F821
        jmp("bit").side(1)[t2 - 1]  # noqa: F821
        label("zero")  # noqa: F821
        nop().side(0)[t2 - 1]  # noqa: F821
        wrap()  # noqa: F821

    sm = rp2.StateMachine(sm_id, ws2812, freq=WS2812_PIO_HZ, sideset_base=machine.Pin(pin))
    sm.active(1)

    def put(words):
        sm.put(words, 8)  # 24-bit words, shifted to the top of the output shift register

    return put


def build(cfg, write, now, boot_id, reset_cause="power", led_put=None):
    """The Device for this configuration (readers initialised, missing ones noted), and notes to send at start.
    ``led_put``: how the station lights' words are written (default: the WS2812 PIO program on lights.pin)."""
    import gc

    sensing = cfg.get("sensing", "reed")
    active_low = cfg.get("active_low", True)
    sensor = None
    notes = []
    if sensing != "rfid":
        if cfg["scanner"] == "matrix":
            m = cfg["matrix"]
            rows = [_out(p, 1 if active_low else 0) for p in m["rows"]]
            cols = [_in(p, active_low) for p in m["cols"]]
            mem32 = getattr(machine, "mem32", None)
            word = None
            if mem32 is not None:
                def word():
                    return mem32[SIO_GPIO_IN]
            sensor = fd_scan.MatrixScanner(rows, cols, active_low, utime.sleep_us, m.get("settle_us", 10),
                                           word, m["cols"])
        else:
            s = cfg["shift_register"]
            sensor = fd_scan.ShiftRegisterScanner(_out(s["load"], 1), _out(s["clock"], 0), _in(s["data"], False),
                                                  s["count"], active_low)
            chips, certain = sensor.chips_found()
            if chips is None and certain:
                return None, ["the 74HC165 chain is longer than shift_register.count %d (%d chips) says by more "
                              "than 8 chips, or DS of its last chip is not tied to ground" % (s["count"], sensor.chips)]
            if chips is not None and chips > sensor.chips and certain:
                return None, ["the 74HC165 chain has %d chips but shift_register.count %d says %d"
                              % (chips, s["count"], sensor.chips)]
            if chips is not None and not certain:
                notes.append(("config", "the 74HC165 chain may have only %d chips, shift_register.count says %d "
                              "(or every input of the last chips is closed)" % (chips, sensor.chips)))
    chip = None
    missing = []
    if sensing in ("rfid", "hybrid", "checkin"):
        r = cfg["rfid"]
        spi = machine.SPI(r.get("spi", 0), baudrate=r.get("baudrate", 4000000), polarity=0, phase=0,
                          sck=machine.Pin(r["sck"]), mosi=machine.Pin(r["mosi"]), miso=machine.Pin(r["miso"]))
        sel = r["select"]
        if sel["kind"] == "decoder":
            select_ = fd_scan.DecoderSelect([_out(p, 0) for p in sel["address"]], _out(sel["enable"], 1),
                                            r["readers"])
        else:
            select_ = fd_scan.DirectSelect([_out(p, 1) for p in sel["pins"]])
        chip = fd_mfrc522.MFRC522(spi, select_, r.get("timeout_us", 1000), r.get("field_us", 1000),
                                  utime.sleep_us, utime.ticks_us, utime.ticks_diff)
        for k in range(r["readers"]):
            if chip.init(k) in (0, 0xFF):
                missing.append(k)
    lights = None
    if cfg.get("lights") is not None:
        lt = cfg["lights"]
        lights = fd_lights.Lights(lt, cfg["channels"], led_put or ws2812_put(lt["pin"]))
    gc.collect()
    mem = getattr(gc, "mem_free", None)  # MicroPython only: heartbeats then report what the loop allocated
    dev = fd_device.Device(cfg, sensor, write, rfid=chip, boot_id=boot_id, diff=utime.ticks_diff, now=now,
                           clock=utime.ticks_ms, mem=mem, collect=gc.collect if mem else None, reset_cause=reset_cause,
                           missing=missing, lights=lights)
    return dev, notes


def _boot_id():
    """A new id at every start: random, mixed with a restart count kept in a watchdog scratch register (it survives
    a watchdog reset), so a restarted scanner never repeats the id the host knows."""
    import random

    bid = random.getrandbits(16)
    mem32 = getattr(machine, "mem32", None)
    if mem32 is not None:
        n = (mem32[WATCHDOG_SCRATCH0] + 1) & 0xFFFF
        mem32[WATCHDOG_SCRATCH0] = n
        bid ^= (n * 0x9E37) & 0xFFFF
    return bid


def _reset_cause():
    try:
        c = machine.reset_cause()
    except Exception:
        return "power"
    if c == getattr(machine, "WDT_RESET", -1):
        return "wdt"
    if c == getattr(machine, "SOFT_RESET", -2):
        return "soft"
    return "power"


def _refuse(problems, out, poller, stop, wdt):
    """Nothing to scan: say why every two seconds, so whoever opens the port learns it."""
    while stop is None or not stop():
        for p in problems:
            out.push(fd_proto.frame("ERR b=0000 code=config msg=" + p.replace(" ", "_")))
        end = utime.ticks_add(utime.ticks_ms(), 2000)
        while utime.ticks_diff(end, utime.ticks_ms()) > 0 and (stop is None or not stop()):
            if wdt is not None:
                wdt.feed()
            if out.stream is not None:
                out.pump()
            poller.poll(20)


def _ready(poller, ipoll):
    """Is there input? (``ipoll`` on MicroPython allocates nothing; CPython's poll has only ``poll``.)"""
    if ipoll is None:
        return bool(poller.poll(0))
    for _ in ipoll(0):
        return True
    return False


def run(cfg, stream_in, write=None, stop=None, boot_id=None, out_stream=None, led_put=None):
    """Scan and talk until ``stop()`` is true (on the Pico: forever). ``stream_in`` must be pollable. Output goes
    to ``write(line)`` if given (tests), else through the non-blocking queue to ``out_stream`` (USB). ``led_put``:
    see ``build``."""
    if boot_id is None:
        boot_id = _boot_id()
    poller = select.poll()
    poller.register(stream_in, select.POLLIN)
    ipoll = getattr(poller, "ipoll", None)
    size = cfg.get("out_buffer", 2048) if isinstance(cfg, dict) else 2048
    out = Output(size if isinstance(size, int) and 256 <= size <= 16384 else 2048, out_stream, write)
    problems = [cfg] if isinstance(cfg, str) else fd_device.check_config(cfg)
    ms = cfg.get("watchdog_ms", 2000) if isinstance(cfg, dict) else 2000
    wdt = machine.WDT(timeout=ms if isinstance(ms, int) and 200 <= ms <= 8000 else 2000) if ms else None
    if problems:
        _refuse(problems, out, poller, stop, wdt)
        return
    now = utime.ticks_ms()
    dev, notes = build(cfg, out.push, now, boot_id, _reset_cause(), led_put)
    if dev is not None and out.stream is not None:
        dev.queued = out.queued
    if dev is None:
        _refuse(notes, out, poller, stop, wdt)
        return
    dev.start(now)
    for code, msg in notes:
        dev.error(code, msg)
    period = cfg.get("scan_period_ms", 5)
    period_us = period * 1000
    pumping = out.stream is not None
    one = bytearray(1)
    inbuf = bytearray(IN_CHUNK)
    ticks_us = utime.ticks_us
    ticks_diff = utime.ticks_diff
    due = utime.ticks_ms()
    due_us = ticks_us()
    while stop is None or not stop():
        # Passes run on a fixed schedule; each is stamped with its scheduled start, so debouncing counts whole scan
        # periods and a pass that wakes a fraction of a millisecond late does not cost a period of latency. The
        # schedule is kept twice: in ms for the stamps, in us for waking on time and for the pass's slack.
        start = due
        due = utime.ticks_add(due, period)
        due_us = utime.ticks_add(due_us, period_us)
        if wdt is not None:
            wdt.feed()
        got = 0
        while got < IN_CHUNK and _ready(poller, ipoll):
            if not stream_in.readinto(one):
                break
            inbuf[got] = one[0]
            got += 1
        if got:
            dev.feed(bytes(inbuf[:got]))  # one call per pass, not one per byte
        made = out.count
        dev.tick(start)
        if pumping:
            # the pass's slack goes to USB output (at least OUT_US_PER_PASS): ~60 us a byte, never blocking
            slack = ticks_diff(due_us, ticks_us()) - 300
            # a line this pass made (a CHG: ~25 bytes) goes out whole now, even if the next pass starts a little late
            floor = OUT_US_BEHIND if out.count > OUT_LINE or out.count != made else OUT_US_PER_PASS
            out.pump(slack if slack > floor else floor)
        left = ticks_diff(due_us, ticks_us())
        if left < -period_us:
            due = utime.ticks_ms()  # fell behind (a long tag read): start the schedule again from now
            due_us = ticks_us()
            continue
        while left > 0:
            if left <= 1500:
                utime.sleep_us(left)  # the rest, to the microsecond: the pass starts on its schedule
                break
            # wait for a command, or until about a millisecond before the next pass is due (poll counts whole ms)
            if ipoll is not None:
                woke = False
                for _ in ipoll((left - 500) // 1000):
                    woke = True
                    break
            else:
                woke = bool(poller.poll((left - 500) // 1000))
            if woke:
                break  # a command came: the next pass reads it now
            left = ticks_diff(due_us, ticks_us())


def _watchdog_off():
    """Stop the watchdog (MicroPython's WDT cannot be stopped): mpremote has interrupted us to update files."""
    mem32 = getattr(machine, "mem32", None)
    if mem32 is not None:
        mem32[WATCHDOG_CTRL] = mem32[WATCHDOG_CTRL] & ~(1 << 30)


def main():
    """On the Pico: run with config.json on USB serial; after a crash say why, then reset (the host resyncs)."""
    import sys

    try:
        run(load_config(), sys.stdin.buffer, out_stream=sys.stdout.buffer)
    except KeyboardInterrupt:
        _watchdog_off()
        raise  # mpremote interrupting to update the files
    except Exception as e:
        _watchdog_off()
        sys.stdout.write(fd_proto.frame("ERR b=0000 code=crash msg=" + repr(e).replace(" ", "_")[:80]))
        utime.sleep_ms(2000)
        machine.reset()
