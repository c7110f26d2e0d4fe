"""Station lights in the scanner firmware's own code under CPython: the `LIT` command, the config's `lights` block,
and what the firmware hands its LED seam (on the Pico: the WS2812 PIO program; here the stand-in world keeps
the words). The PIO program itself runs in tests/test_firmware_emulated.py."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.firmware_standin.runner import (
    FIRMWARE,
    World,
    fd_board,
    fd_device,
    fd_lights,
    fd_proto,
    world_mod,
)

CFG = {"format": 2, "channels": 12, "scanner": "matrix", "sensing": "reed", "settle_ms": 10,
       "matrix": {"rows": [0, 1, 2], "cols": [3, 4, 5, 6]},
       "lights": {"pin": 16, "count": 13, "order": [11, 10, 9, 8, 4, 5, 6, 7, 3, 2, 1, 0, -1], "brightness": 51}}


def _device(cfg: dict) -> tuple[object, World, list[str]]:
    w = World()
    w.matrix([0, 1, 2], [3, 4, 5, 6])
    world_mod.install(w)
    out: list[str] = []
    dev, notes = fd_board.build(cfg, out.append, 0, 0x1234, led_put=w.put_leds)
    assert notes == [] and dev is not None
    dev.clock = None
    dev.start(0)
    return dev, w, out


def _send(dev, body: str) -> None:
    dev.feed(fd_proto.frame(body).encode())


def _errors(out: list[str]) -> list[dict[str, str]]:
    got = []
    for line in out:
        kind, f = fd_proto.parse(fd_proto.unframe(line))
        if kind == "ERR":
            got.append(f)
    return got


def test_lit_sets_colours_in_chain_order_scaled_by_the_brightness_cap():
    dev, w, out = _device(CFG)
    assert "caps=snap,chg,hb,cfg,lit" in out[0]
    dev.tick(5)
    assert w.led_frames == [[0] * 13]  # the first pass clears whatever a previous run left lit
    _send(dev, "LIT w=0 c=5,11 m=3")
    dev.tick(10)
    assert len(w.led_frames) == 1  # the pass that parsed the command leaves the write to the next pass
    dev.tick(15)
    assert _errors(out) == []
    frame = w.led_frames[-1]
    white = (51 << 16) | (51 << 8) | 51  # 255 * 51 / 255 on each of G, R, B
    cyan = (51 << 16) | 51
    magenta = (51 << 8) | 51
    want = [0] * 13
    want[11] = white  # LED 11 shows channel 0
    want[0] = cyan  # LED 0 shows channel 11
    want[5] = cyan  # LED 5 shows channel 5
    want[8] = magenta  # LED 8 shows channel 3
    assert frame == want
    assert max(max((x >> 16) & 255, (x >> 8) & 255, x & 255) for x in frame) == 51


def test_the_chain_is_written_only_when_a_colour_changes_and_all_clears():
    dev, w, _ = _device(CFG)
    _send(dev, "LIT y=1,2")
    for t in range(5, 100, 5):
        dev.tick(t)
    assert len(w.led_frames) == 1  # several commands before one pass: one write
    _send(dev, "LIT y=2")  # no change
    dev.tick(105)
    assert len(w.led_frames) == 1
    _send(dev, "LIT all=k g=4")
    dev.tick(110)
    dev.tick(115)
    assert len(w.led_frames) == 2 and dev.lights.lit() == "4:g"
    assert w.led_frames[-1] == [0, 0, 0, 0, 51 << 16, 0, 0, 0, 0, 0, 0, 0, 0]  # LED 4 shows channel 4, green
    _send(dev, "LIT all=k")
    dev.tick(120)
    dev.tick(125)
    assert w.led_frames[-1] == [0] * 13


def test_a_bad_lit_gets_err_garbled_naming_what_and_changes_nothing():
    dev, w, out = _device(CFG)
    _send(dev, "LIT g=1")
    dev.tick(5)
    before = list(w.led_frames)
    cases = {"LIT g=12": "channel_12_is_past_the_last_channel_11", "LIT z=1": "z=_is_not_a_colour_code",
             "LIT g=1,,2": "channels_are_numbers", "LIT all=q": "all=q_is_not_a_colour_code",
             "LIT": "LIT_needs_all=CODE", "LIT w=1 g=-3": "g=-3", "LIT bad": "key=value"}
    for body, why in cases.items():
        del out[:]
        _send(dev, body)
        errs = _errors(out)
        assert len(errs) == 1 and errs[0]["code"] == "garbled" and why in errs[0]["msg"], (body, errs)
    dev.tick(10)
    assert w.led_frames == before and dev.lights.lit() == "1:g"  # the half-good `w=1 g=-3` changed nothing


def test_lit_without_lights_in_the_config_is_refused_and_old_configs_still_load():
    cfg = {k: v for k, v in CFG.items() if k != "lights"}
    assert fd_device.check_config(cfg) == []
    dev, w, out = _device(cfg)
    assert "lit" not in out[0]
    _send(dev, "LIT g=1")
    dev.tick(5)
    assert _errors(out)[0]["msg"] == "LIT_but_config.json_has_no_lights" and w.led_frames == []


def test_lights_config_problems_are_named():
    def problems(lights: object) -> list[str]:
        return fd_device.check_config(dict(CFG, lights=lights))

    assert problems({"pin": 16, "count": 12}) == []
    assert problems({"pin": 30, "count": 12}) == ["lights.pin must be a GPIO number 0..29, not 30"]
    assert problems({"pin": 16, "count": 13}) == ["lights.count is 13 but there are 12 channels: give lights.order"]
    assert problems({"pin": 16, "count": 2, "order": [0]}) == [
        "lights.order must list one channel (or -1 for no station) per LED: 2"]
    assert problems({"pin": 16, "count": 2, "order": [0, 12]}) == ["lights.order[1] is 12: a channel 0..11 or -1"]
    assert problems({"pin": 16, "count": 2, "order": [5, 5]}) == [
        "lights.order lists channel 5 twice (LEDs 0 and 1)"]
    assert problems({"pin": 16, "count": 2, "brightness": 0})[0].startswith("lights.brightness")
    assert problems([1])[0].startswith("lights must be an object")


def test_the_shipped_config_is_valid_and_its_lights_fit():
    cfg = json.loads((FIRMWARE / "config.json").read_text())
    assert fd_device.check_config(cfg) == []


_FUZZ: dict[str, object] = {}


@settings(max_examples=300, derandomize=True, deadline=None)
@given(st.text(alphabet="LIT =,0123456789kwrgbycmzall-*", max_size=60))
def test_any_lit_line_is_either_applied_or_refused_never_a_crash(tail):
    # one device for every example, as the chip lives through a session of host lines: each line starts from what the
    # lines before it left lit (building a device per example ran a full gc.collect each time: minutes in the suite)
    if not _FUZZ:
        dev, w, out = _device(CFG)
        _FUZZ.update(dev=dev, w=w, out=out, now=5)
    dev, w, out = _FUZZ["dev"], _FUZZ["w"], _FUZZ["out"]
    seen, frames = len(out), len(w.led_frames)
    before = dev.lights.lit()
    _send(dev, "LIT " + tail)
    _FUZZ["now"] += 5
    dev.tick(_FUZZ["now"])
    errs = _errors(out[seen:])
    if errs:
        assert len(errs) == 1 and errs[0]["code"] in ("garbled", "unknown")
        assert dev.lights.lit() == before
    assert all(len(f) == 13 for f in w.led_frames[frames:])


def test_the_chain_words_match_the_palette():
    for code, rgb in fd_lights.PALETTE.items():
        word = fd_lights.word(rgb, 255)
        assert ((word >> 8) & 255, (word >> 16) & 255, word & 255) == rgb, code


def test_an_rgb_chain_gets_its_bytes_red_first_so_cyan_never_shows_as_magenta():
    cfg = dict(CFG, lights=dict(CFG["lights"], colour_order="rgb", brightness=255))
    assert fd_device.check_config(cfg) == []
    dev, w, out = _device(cfg)
    _send(dev, "LIT c=11 m=0 r=5")
    dev.tick(5)
    dev.tick(10)
    dev.tick(15)
    assert _errors(out) == []
    frame = w.led_frames[-1]
    assert frame[0] == 0x00FFFF, "LED 0 shows channel 11: cyan is red 0, green 255, blue 255 in R, G, B order"
    assert frame[11] == 0xFF00FF and frame[5] == 0xFF0000
    grb, _, _ = _device(dict(CFG, lights=dict(CFG["lights"], brightness=255)))
    assert grb.lights.table[ord("c")] == 0xFF00FF and grb.lights.table[ord("r")] == 0x00FF00, "the same colours in G, R, B"


def test_an_unknown_colour_order_is_named_in_the_config_check():
    bad = fd_device.check_config(dict(CFG, lights=dict(CFG["lights"], colour_order="bgr")))
    assert bad == ["lights.colour_order must be grb (WS2812B) or rgb (PL9823 and other RGB parts), not 'bgr'"]
