"""Station lights on the host (controller/lights.py): the picture follows only the computer's instructed move,
fix-up stations and mismatches, never a rank or a side; `LIT` lines reach the firmware's real code over a real pty
and come out as the chain's words; GPIO LEDs through gpiozero's MockFactory; a game against the computer."""

from __future__ import annotations

import io
import json
import random
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from gpiozero.pins.mock import MockFactory
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.bots import RandomBot
from controller.bots.setups import built_setup
from controller.commands.script import run_script
from controller.lights import (
    MAX_LIT_BODY,
    ROLE_COLOURS,
    GpioLights,
    LightsTracker,
    ScannerLights,
    lit_commands,
    picture,
    station_lights,
)
from controller.referee.session import Session
from controller.rules import load_game, new_game, view
from controller.sensing.profile import find_profile
from controller.sensing.serial_link import SerialScannerBoard
from harness.firmware_standin.runner import FirmwareOnPty, World, fd_lights

STATIONS = [f"s{i}" for i in range(12)]


def _apply(cmds: list[str], n: int) -> str:
    """What the firmware's own Lights makes of these LIT commands: 'CH:CODE,...' of every lit channel."""
    lights = fd_lights.Lights({"pin": 0, "count": n}, n, lambda words: None)
    for body in cmds:
        fields = dict(p.split("=", 1) for p in body.split(" ")[1:])
        assert lights.apply(fields) is None, body
    return lights.lit()


def test_lit_commands_are_bounded_and_the_firmware_reads_back_the_picture():
    channels = {f"x{i}": i for i in range(136)}
    rng = random.Random(5)
    for _ in range(50):
        pic = {s: rng.choice(list(ROLE_COLOURS)) for s in rng.sample(sorted(channels), rng.randint(0, 136))}
        cmds = lit_commands(pic, channels)
        assert cmds[0].startswith("LIT all=k") and all(len(c) <= MAX_LIT_BODY for c in cmds)
        want = ",".join(f"{channels[s]}:{ROLE_COLOURS[r]}" for s, r in sorted(pic.items(), key=lambda x: channels[x[0]]))
        assert _apply(cmds, 136) == want
    assert lit_commands({}, channels) == ["LIT all=k"]
    assert set(ROLE_COLOURS.values()) <= set(fd_lights.CODES) and not set(ROLE_COLOURS.values()) & {"r", "b", "k"}


# -- the picture depends on the roles alone ---------------------------------------------------------------------------
SIDES = ["red", "blue", "green", "yellow"]
PIECES = ["marshal", "general", "bomb", "flag", "spy", "scout", "engineer"]
ACTIONS = ["return", "remove", "put_back", "place", "take_off", "wrong_piece", "put_in_hand"]


@st.composite
def _guidances(draw: Any) -> list[tuple[Any, list[tuple[str, Any, bool]], list[str], bool]]:
    """A stream of read-model shapes: (instructed (from, to) or None, fix-up steps (station, to, done), mismatch
    stations, game over). The identities around them are drawn later, twice."""
    station = st.sampled_from(STATIONS)
    one = st.tuples(
        st.one_of(st.none(), st.tuples(station, station).filter(lambda p: p[0] != p[1])),
        st.lists(st.tuples(station, st.one_of(st.none(), station), st.booleans()), max_size=4),
        st.lists(station, max_size=3), st.booleans())
    return draw(st.lists(one, max_size=25))


def _dress(shape: Any, rng: random.Random) -> dict[str, Any]:
    """A real-shaped read model for the shape, with random sides, pieces, actions and words around the stations."""
    instructed, steps, mismatch, over = shape
    side = rng.choice(SIDES)

    def words() -> dict[str, Any]:
        return {"code": "step.x", "params": {"piece": rng.choice(PIECES), "owner": rng.choice(SIDES)}}

    return {
        "phase": "over" if over else "play",
        "instruction": None if instructed is None else {"player": side, "from": instructed[0], "to": instructed[1],
                                                        "attack": rng.random() < 0.5, "by": "bot"},
        "pending": None if not steps else {"kind": "fixup", "say": words(), "left": 0, "steps": [
            {"station": s, "to": t, "done": d, "action": rng.choice(ACTIONS), "owner": rng.choice(SIDES), "by": side,
             "say": words()} for s, t, d in steps]},
        "mismatch": None if not mismatch else {"stations": [{"station": s, "expected": rng.choice(SIDES), "found": "empty"}
                                                            for s in mismatch],
                                               "steps": [{"station": s, "action": "put_back", "owner": rng.choice(SIDES),
                                                          "say": words()} for s in mismatch], "say": words()},
    }


@settings(max_examples=200, derandomize=True, deadline=None)
@given(_guidances(), st.integers(0, 2**16))
def test_the_colours_are_a_function_of_the_roles_only(shapes, seed):
    channels = {s: i for i, s in enumerate(STATIONS)}
    sent: list[list[list[str]]] = []
    for k in range(2):  # the same shapes dressed twice with other sides, ranks, actions and words
        got: list[list[str]] = []
        rng = random.Random(seed * 2 + k)
        now: list[dict[str, Any]] = [{}]
        tracker = LightsTracker(lambda pic, got=got: got.append(lit_commands(pic, channels)), lambda now=now: now[0])
        for shape in shapes:
            now[0] = _dress(shape, rng)
            tracker.update()
            instructed, steps, mismatch, over = shape
            fixups = tuple(x for s, t, done in steps if not done for x in (s, t) if x is not None)
            want = {} if over else picture(instructed, fixups, mismatch)
            assert tracker.picture == want
        sent.append(got)
    assert sent[0] == sent[1]


def test_an_event_for_some_seats_only_lights_nothing():
    """A seat's private event (a reaction offer) changes nothing the lights read: the spectator's read model."""
    from controller.rules.deploy import random_deployment

    state = new_game("stratego")
    for side in state.game.sides:
        state.deploy(side, random_deployment(state.game, side, random.Random(3), state.options))
    session = Session(state)
    shown: list[dict[str, str]] = []
    tracker = LightsTracker(shown.append, session.guidance)
    session.subscribe(tracker.update)
    tracker.update()
    before = list(shown)
    session.announce({"event": "bot", "kind": "move", "from": "a1", "to": "a2"}, audience=("blue",))
    assert shown == before


# -- a game against the computer --------------------------------------------------------------------------------------
def _human(game: str, seed: int, plies: int, holder: dict[str, Any]):
    gdef = load_game(game)
    yield json.dumps({"setup": "red", "pieces": built_setup(gdef, "red", random.Random(seed))})
    yield '{"bot_setup": "blue"}'
    yield '{"tick_ms": 100}'
    human = RandomBot()
    human.new_game(game, "red", gdef.resolve_options(), seed)
    wrong_done = False
    for _ in range(6 * plies):
        session: Session = holder["session"]
        st_ = session.state
        if st_.phase != "play" or st_.ply >= plies:
            return
        if session.recognizer.fixing:
            yield '{"fixup": true}'
            continue
        if st_.turn == "red":
            frm, to = human.choose_move(view(st_, "red"), 100)
            steps = [{"lift": frm}, {"lift": to}, {"place": to}] if to in st_.board else [{"lift": frm}, {"place": to}]
            for s in steps:
                yield json.dumps(s)
                yield '{"tick_ms": 100}'
            continue
        want = holder["seat"].instruction
        holder["pictures"].append(("instructed", (want.frm, want.to), dict(holder["lights"].tracker.picture)))
        if not wrong_done and want.to not in st_.board:
            wrong = next(s for s in gdef.station_ids if s not in st_.board and s != want.to and st_.topo.passable[s])
            yield json.dumps({"bot_move": "blue", "to": wrong})
            yield '{"tick_ms": 100}'
            holder["pictures"].append(("wrong", (want.frm, wrong), dict(holder["lights"].tracker.picture)))
            yield from (json.dumps({"lift": wrong}), '{"tick_ms": 100}', json.dumps({"place": want.frm}), '{"tick_ms": 100}')
            wrong_done = True
        yield '{"bot_move": "blue"}'
        yield '{"tick_ms": 100}'
        holder["pictures"].append(("done", None, dict(holder["lights"].tracker.picture)))


class _Shown:
    def __init__(self) -> None:
        self.pictures: list[dict[str, str]] = []

    def show(self, pic: dict[str, str]) -> None:
        self.pictures.append(pic)

    def close(self) -> None:
        pass


def test_a_game_against_the_computer_lights_its_moves_and_the_mismatch():
    holder: dict[str, Any] = {"pictures": []}
    shown = _Shown()

    def on_session(session: Session, board: Any, computers: dict[str, Any]) -> None:
        from controller.lights import _Lights

        tracker = LightsTracker(shown.show, session.guidance)
        session.subscribe(tracker.update)
        session.watch_occupancy(tracker.update)
        holder.update(session=session, seat=computers["blue"], lights=_Lights(tracker, shown))

    run_script("stratego", _human("stratego", 4, 24, holder), io.StringIO(), everything=True, seats={"blue": "random"},
               seed=4, on_session=on_session)
    told = [p for p in holder["pictures"] if p[0] == "instructed"]
    assert len(told) >= 8
    for _, (frm, to), pic in told:
        assert pic.get(frm) == "from" and pic.get(to) == "to", (frm, to, pic)
    wrong = next(p for p in holder["pictures"] if p[0] == "wrong")
    (frm, at), pic = wrong[1], wrong[2]
    assert pic.get(frm) == "mismatch" and pic.get(at) == "mismatch", pic
    for _, _, pic in (p for p in holder["pictures"] if p[0] == "done"):
        assert "from" not in pic.values() and "to" not in pic.values()  # the move was judged: its lights went out
    assert all(set(p.values()) <= set(ROLE_COLOURS) for p in shown.pictures)


# -- the scanner's chain over a real pty, with the firmware's real code ----------------------------------------------
CFG = {"format": 2, "channels": 12, "board": "test", "sensing": "reed", "scanner": "matrix", "settle_ms": 10,
       "scan_period_ms": 2, "heartbeat_ms": 150, "matrix": {"rows": [0, 1, 2], "cols": [3, 4, 5, 6]},
       "lights": {"pin": 28, "count": 13, "order": [-1, *range(11, -1, -1)], "brightness": 255}}


def _until(cond: Any, timeout: float = 5.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.01)
    raise AssertionError("timed out")


def test_scanner_lights_over_a_real_pty_and_again_after_a_restart(tmp_path: Path):
    world = World()
    world.matrix([0, 1, 2], [3, 4, 5, 6])
    fw = FirmwareOnPty(CFG, world, tmp_path / "ttyACM0").plug()
    board = SerialScannerBoard(STATIONS, {s: i for i, s in enumerate(STATIONS)}, port=str(tmp_path / "ttyACM0"),
                               heartbeat_timeout_s=0.6, resync_every_s=0.2, backoff_s=(0.05, 0.2))
    thread = threading.Thread(target=board.run, args=(lambda snap: None,), daemon=True)
    thread.start()
    lights = None
    try:
        assert board.wait_known(5), board.status
        lights = ScannerLights(board, {s: i for i, s in enumerate(STATIONS)})
        lights.show(picture(("s0", "s11"), ["s5"], ["s7"]))
        want = [0] * 13
        want[12] = 0xFFFFFF  # LED 12 shows channel 0: white
        want[1] = 0xFF00FF  # LED 1 shows channel 11: cyan (G=255, R=0, B=255)
        want[7] = 0xA0FF00  # channel 5: amber (G=160, R=255)
        want[5] = 0x00FFFF  # channel 7: magenta
        _until(lambda: world.led_frames and world.led_frames[-1] == want)
        fw.reboot(boot_id=0x4004)  # the scanner restarts dark; the host sees the new boot and lights it again
        _until(lambda: board.known and board.link.boot == "4004")
        _until(lambda: world.led_frames[-1] == want)
        lights.show({})
        _until(lambda: world.led_frames[-1] == [0] * 13)
    finally:
        if lights is not None:
            lights.close()
        board.stop()
        thread.join(5)
        fw.close()
    assert fw.crashed is None


def test_a_scanner_without_lights_is_not_sent_lit_lines(tmp_path: Path, caplog):
    cfg = {k: v for k, v in CFG.items() if k != "lights"}
    world = World()
    world.matrix([0, 1, 2], [3, 4, 5, 6])
    fw = FirmwareOnPty(cfg, world, tmp_path / "ttyACM0").plug()
    sent: list[str] = []
    fw.filter = lambda line: (sent.append(line), [line])[1]
    board = SerialScannerBoard(STATIONS, {s: i for i, s in enumerate(STATIONS)}, port=str(tmp_path / "ttyACM0"),
                               heartbeat_timeout_s=0.6, resync_every_s=0.2, backoff_s=(0.05, 0.2))
    thread = threading.Thread(target=board.run, args=(lambda snap: None,), daemon=True)
    thread.start()
    try:
        assert board.wait_known(5), board.status
        lights = ScannerLights(board, {s: i for i, s in enumerate(STATIONS)})
        lights.show(picture(("s0", "s1"), [], []))
        _until(lambda: lights.refused)
        lights.close()
        time.sleep(0.3)
    finally:
        board.stop()
        thread.join(5)
        fw.close()
    assert not [x for x in sent if x.startswith("ERR")], sent  # no LIT reached it, so nothing was refused
    assert "has no lights" in caplog.text


# -- GPIO LEDs on a small board ---------------------------------------------------------------------------------------
def test_gpio_lights_steady_for_from_blinking_for_to_and_fixes():
    factory = MockFactory()
    lights = GpioLights({"s0": 5, "s1": 6, "s2": 12, "s3": 13}, pin_factory=factory)
    pins = {s: factory.pin(p) for s, p in {"s0": 5, "s1": 6, "s2": 12, "s3": 13}.items()}
    try:
        lights.show(picture(("s0", "s1"), ["s2"], []))
        for s in ("s1", "s2"):  # blinking: on and off again and again (slowly for `to`, fast for a fix-up)
            _until(lambda s=s: [x.state for x in pins[s].states].count(True) >= 2, timeout=5)
        assert pins["s0"].state is True and len(pins["s0"].states) == 2  # off, then on: steady
        assert pins["s3"].state is False and len(pins["s3"].states) == 1
        lights.show({})
        time.sleep(0.05)
        assert all(p.state is False for p in pins.values())
    finally:
        lights.close()


def test_station_lights_from_the_profile(tmp_path: Path):
    from controller.rules import Move
    from controller.rules.deploy import random_deployment

    state = new_game("stratego")
    for side in state.game.sides:
        state.deploy(side, random_deployment(state.game, side, random.Random(3), state.options))
    session = Session(state)
    assert station_lights(session, find_profile("stratego"), board=None) is None  # no lights declared
    assert station_lights(session, find_profile("stratego-pico"), board=object()) is None  # not on the scanner
    text = (Path(find_profile("stratego").file).read_text(encoding="utf-8")
            + "lights:\n  kind: gpio\n  pins: {e4: 14, f4: 15}\n")
    (tmp_path / "lit.yaml").write_text(text, encoding="utf-8")
    factory = MockFactory()
    lights = station_lights(session, find_profile(tmp_path / "lit.yaml"), board=None, pin_factory=factory)
    try:
        session.instruct(state.turn, Move("e4", "f4"), {"event": "bot", "kind": "move", "player": state.turn,
                                                        "from": "e4", "to": "f4"})
        time.sleep(0.4)
        assert factory.pin(14).state is True and [x.state for x in factory.pin(15).states].count(True) >= 1
    finally:
        lights.close()
    assert factory.pin(14).state is False


@pytest.mark.parametrize("role", sorted(ROLE_COLOURS))
def test_every_role_has_a_colour_and_a_gpio_pattern(role):
    from controller.lights import ROLE_BLINKS

    assert ROLE_COLOURS[role] in fd_lights.CODES and role in ROLE_BLINKS


# -- facedown play with a profile that declares lights ---------------------------------------------------------------
def test_play_on_a_serial_scanner_lights_a_mismatch(tmp_path: Path) -> None:
    import os
    import signal
    import subprocess
    import sys

    import yaml

    from controller.rules.deploy import random_deployment

    root = Path(__file__).resolve().parent.parent
    game = load_game("luzhanqi")
    stations = list(game.station_ids)
    profile = tmp_path / "scanner.yaml"
    profile.write_text(yaml.safe_dump({
        "format": 1, "game": "luzhanqi", "sensing": "reed", "settle_ms": 20, "scan_period_ms": 5,
        "scanner": {"kind": "matrix", "port": None, "usb_vid": 0x2E8A, "usb_pid": 0x0005},
        "channels": {s: i for i, s in enumerate(stations)}, "lights": {"kind": "ws2812", "pin": 28}}))
    cfg = {"format": 2, "channels": 60, "board": "test", "sensing": "reed", "scanner": "matrix", "settle_ms": 10,
           "scan_period_ms": 2, "heartbeat_ms": 150, "matrix": {"rows": list(range(12)), "cols": list(range(12, 17))},
           "lights": {"pin": 28, "count": 60, "brightness": 255}}
    world = World()
    world.matrix(cfg["matrix"]["rows"], cfg["matrix"]["cols"])
    fw = FirmwareOnPty(cfg, world, tmp_path / "ttyACM0").plug()
    rng = random.Random(4)
    for side in game.sides:
        placement = random_deployment(game, side, rng)
        (tmp_path / f"{side}.yaml").write_text(yaml.safe_dump(placement))
        for s in placement:
            world.place(stations.index(s))
    env = dict(os.environ, PYTHONPATH=str(root), XDG_DATA_HOME=str(tmp_path / "data"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "controller.cli", "play", "luzhanqi", "--board", "serial", "--profile", str(profile),
         "--port-path", str(tmp_path / "ttyACM0"), "--no-web", "--announce", "console", "--journal", str(tmp_path / "j.sqlite"),
         "--setup", f"red={tmp_path / 'red.yaml'}", "--setup", f"blue={tmp_path / 'blue.yaml'}"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=root, env=env)
    lines: list[str] = []
    threading.Thread(target=lambda: lines.extend(iter(proc.stdout.readline, "")), daemon=True).start()
    try:
        _until(lambda: any("Red to move" in x for x in lines) or proc.poll() is not None, timeout=20)
        assert proc.poll() is None, "".join(lines)
        empty = next(i for i in range(60) if i not in world.closed)
        world.place(empty)  # a piece put down from nowhere: the board differs from anything the referee can explain
        magenta = 0x00FFFF
        _until(lambda: world.led_frames and world.led_frames[-1][empty] == magenta, timeout=10)
        assert [i for i, w in enumerate(world.led_frames[-1]) if w] == [empty]
        world.lift(empty)
        _until(lambda: world.led_frames[-1] == [0] * 60, timeout=10)
        world.place(empty)
        _until(lambda: world.led_frames[-1][empty] == magenta, timeout=10)
        proc.send_signal(signal.SIGTERM)
        proc.wait(10)
        _until(lambda: world.led_frames[-1] == [0] * 60, timeout=5)  # dark when the referee stops
    finally:
        if proc.poll() is None:
            proc.kill()
        fw.close()
    assert proc.returncode == 0, "".join(lines)
