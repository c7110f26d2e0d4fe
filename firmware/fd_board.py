"""Hardware glue for the Pico: builds pins, scanner and RFID readers from config.json and runs the scan loop on USB serial."""

# ruff: noqa: UP031  (%-formatting is deliberate: MicroPython supports it fully, cheaply)

import select

import fd_device
import fd_mfrc522
import fd_proto
import fd_scan
import machine
import utime


def load_config(path="config.json"):
    import json

    with open(path) as f:
        return json.load(f)


def _in(n, pull_up):
    return machine.Pin(n, machine.Pin.IN, machine.Pin.PULL_UP if pull_up else machine.Pin.PULL_DOWN)


def _out(n, v):
    return machine.Pin(n, machine.Pin.OUT, value=v)


class Readers:
    """The RFID readers as the device core sees them: read(channel) -> uid or None."""

    def __init__(self, chip, channels):
        self.chip = chip
        self.reader_of = {}
        for k in range(len(channels)):
            self.reader_of[channels[k]] = k

    def read(self, ch):
        k = self.reader_of.get(ch)
        if k is None:
            return None
        return self.chip.read_uid(k)


def build(cfg, write, now, boot_id):
    """The Device for this configuration, and the readers that did not answer at start."""
    sensing = cfg.get("sensing", "reed")
    active_low = cfg.get("active_low", True)
    sensor = None
    if sensing != "rfid":
        if cfg["scanner"] == "matrix":
            m = cfg["matrix"]
            rows = [_out(p, 1 if active_low else 0) for p in m["rows"]]
            cols = [_in(p, active_low) for p in m["cols"]]
            sensor = fd_scan.MatrixScanner(rows, cols, active_low, utime.sleep_us, m.get("settle_us", 10))
        else:
            s = cfg["shift_register"]
            sensor = fd_scan.ShiftRegisterScanner(_out(s["load"], 1), _out(s["clock"], 0), _in(s["data"], False),
                                                  s["count"], active_low)
    readers = None
    missing = []
    if sensing in ("rfid", "hybrid"):
        r = cfg["rfid"]
        spi = machine.SPI(r.get("spi", 0), baudrate=r.get("baudrate", 1000000), polarity=0, phase=0,
                          sck=machine.Pin(r["sck"]), mosi=machine.Pin(r["mosi"]), miso=machine.Pin(r["miso"]))
        if "cs" in r:
            cs = fd_scan.DirectChipSelect([_out(p, 1) for p in r["cs"]])
        else:
            c = r["cs595"]
            cs = fd_scan.ChipSelect595(_out(c["data"], 1), _out(c["clock"], 0), _out(c["latch"], 0), c["count"])
        chip = fd_mfrc522.MFRC522(spi, cs)
        channels = r.get("channels") or list(range(cs.count))
        for k in range(cs.count):
            if chip.init(k) in (0, 0xFF):
                missing.append(k)
        readers = Readers(chip, channels)
    dev = fd_device.Device(cfg, sensor, write, rfid=readers, boot_id=boot_id, diff=utime.ticks_diff, now=now)
    return dev, missing


def run(cfg, stream_in, write, stop=None, boot_id=None):
    """Scan and talk until ``stop()`` is true (on the Pico: forever). ``stream_in`` must be pollable."""
    if boot_id is None:
        import random

        boot_id = random.getrandbits(16)
    poller = select.poll()
    poller.register(stream_in, select.POLLIN)
    problems = fd_device.check_config(cfg)
    if problems:
        # Nothing to scan: say why every two seconds, so whoever opens the port learns it.
        while stop is None or not stop():
            for p in problems:
                write(fd_proto.frame("ERR b=0000 code=config msg=" + p.replace(" ", "_")))
            poller.poll(2000)
        return
    now = utime.ticks_ms()
    dev, missing = build(cfg, write, now, boot_id)
    dev.start(now)
    for k in missing:
        dev.error("rfid", "reader %d does not answer" % k)
    period = cfg.get("scan_period_ms", 5)
    while stop is None or not stop():
        start = utime.ticks_ms()
        while poller.poll(0):
            b = stream_in.read(1)
            if not b:
                break
            dev.feed(b)
        dev.tick(utime.ticks_ms())
        left = period - utime.ticks_diff(utime.ticks_ms(), start)
        if left > 0:
            poller.poll(left)


def main():
    """On the Pico: run with config.json on USB serial; after a crash say why, then reset (the host resyncs)."""
    import sys

    try:
        run(load_config(), sys.stdin.buffer, sys.stdout.write)
    except KeyboardInterrupt:
        raise  # mpremote interrupting to update the files
    except Exception as e:
        sys.stdout.write(fd_proto.frame("ERR b=0000 code=crash msg=" + repr(e).replace(" ", "_")[:80]))
        utime.sleep_ms(2000)
        machine.reset()
