"""`facedown hw-test` points at wires: a cut row, a cut column, two shorted rows (on gpiozero's mock pins, end to end),
a dead 74HC165 and two shorted chip inputs (the chain's readings modelled), a Pico matrix's cut column; then on the
scanner firmware's own code behind a pty with the fault wired into the modelled board: a cut row, a cut column, two
shorted columns, a dead 74HC165 and two shorted 74HC165 inputs, each named by its wire, chip and pins; and the guided
mode that lists (and lights) what is left."""

from __future__ import annotations

import queue
import threading
import time

import pytest
from gpiozero.pins.mock import MockFactory

from controller.cli import main
from controller.commands.hw_test import Step, _guided, analyse
from controller.hardware.faults import diagnose, station_wires
from controller.sensing.base import Snapshot
from controller.sensing.profile import Profile, default_profile, find_profile
from tests.test_gpio_matrix import VirtualMagnets


class FaultyMagnets(VirtualMagnets):
    """The virtual matrix with wiring faults: a row or column wire cut (its crossings never close), two rows shorted
    (driving one low drives the other)."""

    def __init__(self, factory: MockFactory, profile: Profile, *, cut_rows=(), cut_cols=(), shorted_rows=()) -> None:  # noqa: ANN001
        self.cut_rows, self.cut_cols, self.shorted = set(cut_rows), set(cut_cols), tuple(shorted_rows)
        super().__init__(factory, profile)

    def refresh(self) -> None:
        with self._lock:
            if not hasattr(self, "rows"):
                return
            active = {i for i, pin in enumerate(self.rows) if pin.function == "output" and not pin.state}
            if self.shorted and active & set(self.shorted):
                active |= set(self.shorted)
            for c, pin in enumerate(self.columns):
                if pin.function != "input":
                    continue
                closed = c not in self.cut_cols and any(
                    r not in self.cut_rows and self.crossings.get((r, c)) in self.occupied for r in active)
                if closed:
                    pin.drive_low()
                elif pin.pull == "up":
                    pin.drive_high()


def stations_asked(monkeypatch, hw_test) -> queue.Queue:  # noqa: ANN001
    """hw-test's prints, passed on, with each station it asks a magnet for put on the queue returned (the person at
    the board waits to be asked)."""
    asked: queue.Queue = queue.Queue()

    def said(*args: object, **kw: object) -> None:
        text = " ".join(map(str, args))
        if text.startswith("put the magnet on "):
            asked.put(text.split()[4].rstrip(","))
        print(*args, **kw)

    monkeypatch.setattr(hw_test, "print", said, raising=False)
    return asked


def _run(mock_factory, capsys, monkeypatch, magnets: VirtualMagnets, stations: list[str]) -> str:  # noqa: ANN001
    """hw-test end to end, with a person who waits to be asked for each station before putting the magnet on it."""
    from controller.commands import hw_test

    asked = stations_asked(monkeypatch, hw_test)

    def act() -> None:
        for _ in stations:
            station = asked.get(timeout=20)
            magnets.place(station)
            time.sleep(0.25)
            magnets.lift(station)

    person = threading.Thread(target=act, daemon=True)
    person.start()
    code = main(["hw-test", "--board", "gpio", "--profile", "luzhanqi", "--stations", ",".join(stations),
                 "--step-timeout", "1.2"])
    person.join()
    out = capsys.readouterr().out
    assert code == 1, out
    return out


def test_a_cut_row_is_named_by_its_pin_and_ribbon_wire(mock_factory, capsys, monkeypatch) -> None:  # noqa: ANN001
    prof = default_profile("luzhanqi")
    out = _run(mock_factory, capsys, monkeypatch, FaultyMagnets(mock_factory, prof, cut_rows={0}), ["A0", "A1", "B0"])
    assert "row R0, GPIO4 (header pin 7: wire 7 of the 40-way ribbon): all 2 of its stations dead (A0, A1)" in out, out
    assert "column C0" not in out.split("where to look:")[1], "B0 works, so column C0 is fine"


def test_a_cut_column_is_named(mock_factory, capsys, monkeypatch) -> None:  # noqa: ANN001
    prof = default_profile("luzhanqi")
    out = _run(mock_factory, capsys, monkeypatch, FaultyMagnets(mock_factory, prof, cut_cols={2}), ["A2", "B2", "A0"])
    assert "column C2, GPIO21 (header pin 40: wire 40 of the 40-way ribbon): all 2 of its stations dead (A2, B2)" in out, out


def test_two_shorted_rows_are_named_together(mock_factory, capsys, monkeypatch) -> None:  # noqa: ANN001
    prof = default_profile("luzhanqi")
    out = _run(mock_factory, capsys, monkeypatch, FaultyMagnets(mock_factory, prof, shorted_rows=(1, 2)), ["B0", "C1", "A3"])
    assert "doubled: magnet on B0 also showed C0" in out, out
    assert ("row R1, GPIO5 (header pin 29: wire 29 of the 40-way ribbon) and row R2, GPIO6 (header pin 31: wire 31 of "
            "the 40-way ribbon) are shorted together") in out, out


def _chain_steps(profile: Profile, stations: list[str], *, dead_chip=None, shorted=()) -> list[Step]:  # noqa: ANN001
    """What a 74HC165 chain reports while a magnet visits each station: a dead chip's inputs read high (empty), two
    shorted inputs read low together."""
    chan = profile.channels
    by_channel = {ch: s for s, ch in chan.items()}

    def seen(on: str) -> frozenset[str]:
        low = {chan[on]}
        if chan[on] in shorted:
            low |= set(shorted)
        return frozenset(by_channel[c] for c in low if c in by_channel and c // 8 != dead_chip)

    return [Step(s, (Snapshot(1, seen(s), {}), Snapshot(2, frozenset(), {}))) for s in stations]


def test_a_dead_74hc165_is_named_with_its_pins() -> None:
    prof = find_profile("siguo")
    chip3 = sorted((s for s, ch in prof.channels.items() if ch // 8 == 3), key=prof.channels.get)
    others = [s for s, ch in prof.channels.items() if ch // 8 == 4][:2]
    steps = _chain_steps(prof, chip3 + others, dead_chip=3)
    rep = analyse(list(prof.stations), Snapshot(0, frozenset(), {}), steps)
    assert set(rep.dead) == set(chip3)
    text = diagnose(prof, chip3 + others, rep.dead, rep.stuck, rep.doubled, rep.miswired)
    assert text[0].startswith(f"74HC165 #3: all {len(chip3)} of its stations dead"), text
    assert "VCC (pin 16)" in text[0] and "Q7 (pin 9)" in text[0] and len(text) == 1, "one finding, not one per station"


def test_two_shorted_chip_inputs_are_named_by_pin() -> None:
    prof = find_profile("siguo")
    a, b = (s for s, ch in sorted(prof.channels.items(), key=lambda kv: kv[1]) if ch in (18, 19))
    steps = _chain_steps(prof, [a, b], shorted=(18, 19))
    rep = analyse(list(prof.stations), Snapshot(0, frozenset(), {}), steps)
    assert rep.doubled == {a: [b], b: [a]}
    text = diagnose(prof, [a, b], rep.dead, rep.stuck, rep.doubled, rep.miswired)
    assert text == [f"74HC165 #2 input C (pin 13) and 74HC165 #2 input D (pin 14) are shorted together: a magnet on {a} "
                    f"also shows {b} (2 such pairs); look for a bridge of solder or bare wire"]


def test_a_pico_matrix_column_is_named_by_gp_and_pico_pin() -> None:
    prof = find_profile("stratego-pico")
    col3 = ["d1", "d2", "d3"]
    steps = [Step(s, ()) for s in col3] + [Step("a1", (Snapshot(1, frozenset({"a1"}), {}),))]
    rep = analyse(list(prof.stations), Snapshot(0, frozenset(), {}), steps)
    text = diagnose(prof, [*col3, "a1"], rep.dead, rep.stuck, rep.doubled, rep.miswired)
    assert text == ["column C3, GP13 (Pico pin 17): all 3 of its stations dead (d1, d2, d3): a broken column wire or "
                    "joint, or it is on the wrong pin"]
    assert station_wires(prof)["a1"][0].text == "row R0, GP0 (Pico pin 1)"


def test_a_lone_dead_station_names_both_its_wires() -> None:
    prof = default_profile("luzhanqi")
    text = diagnose(prof, ["A0", "A1", "B0"], ["A1"], [], {}, {})
    assert text == ["A1: dead: its reed, its diode (ring towards the row) or a joint; it hangs on row R0, GPIO4 (header "
                    "pin 7: wire 7 of the 40-way ribbon) and column C1, GPIO20 (header pin 38: wire 38 of the 40-way "
                    "ribbon)"]


class _Lights:
    def __init__(self) -> None:
        self.shown: list[set[str]] = []

    def show(self, roles: dict[str, str]) -> None:
        self.shown.append(set(roles))


def test_guided_mode_lights_and_lists_what_is_left_and_calls_the_rest_dead() -> None:
    q: queue.Queue = queue.Queue()
    base = Snapshot(0, frozenset(), {})
    for k, on in enumerate([{"b"}, set(), {"a"}, set()]):
        q.put(Snapshot(k + 1, frozenset(on) | base.occupied, {}))
    lights, said = _Lights(), []
    steps = _guided(q, ["a", "b", "c"], base, lights, timeout=0.8, out=said.append)
    assert [s.asked for s in steps] == ["b", "a", "c"] and steps[-1].snapshots == ()
    assert lights.shown == [{"a", "b", "c"}, {"a", "c"}, {"c"}]
    assert said[1] == "3 left: a, b, c" and "1 left: c" in said
    rep = analyse(["a", "b", "c"], base, steps)
    assert rep.dead == ["c"] and rep.ok == ["a", "b"]


def _siguo_chip(k: int, n: int = 8) -> list[str]:
    prof = find_profile("siguo")
    return sorted((s for s, ch in prof.channels.items() if ch // 8 == k), key=prof.channels.get)[:n]


def _siguo_channels(*chs: int) -> list[str]:
    by_channel = {ch: s for s, ch in find_profile("siguo").channels.items()}
    return [by_channel[c] for c in chs]


#: (profile, the fault wired into the modelled board, stations visited, what the report must say)
FIRMWARE_FAULTS = {
    "cut row": ("stratego-pico", {"cut_rows": (0,)}, ["a1", "b1", "a2"],
                "row R0, GP0 (Pico pin 1): all 2 of its stations dead (a1, b1)"),
    "cut column": ("stratego-pico", {"cut_cols": (3,)}, ["d1", "d2", "a1"],
                   "column C3, GP13 (Pico pin 17): all 2 of its stations dead (d1, d2)"),
    "shorted columns": ("stratego-pico", {"shorted_cols": (1, 2)}, ["b1", "a3"],
                        "column C1, GP11 (Pico pin 15) and column C2, GP12 (Pico pin 16) are shorted together"),
    "dead chip": ("siguo", {"dead_chips": (3,)}, [*_siguo_chip(3), *_siguo_chip(5, 2)],
                  f"74HC165 #3: all {len(_siguo_chip(3))} of its stations dead"),
    "shorted inputs": ("siguo", {"shorted": (18, 19)}, [*_siguo_channels(18), *_siguo_channels(40)],
                       "74HC165 #2 input C (pin 13) and 74HC165 #2 input D (pin 14) are shorted together: a magnet on "
                       f"{_siguo_channels(18)[0]} also shows {_siguo_channels(19)[0]}"),
}


@pytest.mark.parametrize("fault", list(FIRMWARE_FAULTS))
def test_hw_test_on_the_scanner_firmware_names_the_wire_of_each_fault(fault: str, tmp_path, capsys, monkeypatch) -> None:  # noqa: ANN001
    """End to end through the real firmware (its own code under CPython behind a pseudo terminal, the reed matrix or
    the 74HC165 chain modelled pin by pin, with the fault wired in) and the real serial backend: a person puts the
    magnet on every station hw-test asks for; the board's wiring decides what the scanner sees, and the report's
    "where to look" names the row, column, chip or pins."""
    from controller.commands import hw_test
    from controller.hardware.build import design, firmware_config
    from harness.firmware_standin.runner import FirmwareOnPty, World

    pid, wiring, stations, finding = FIRMWARE_FAULTS[fault]
    prof = find_profile(pid)
    cfg = dict(firmware_config(design(prof)), settle_ms=10, scan_period_ms=2, heartbeat_ms=150)
    world = World()
    if "matrix" in cfg:
        world.matrix(cfg["matrix"]["rows"], cfg["matrix"]["cols"], **wiring)
    else:
        sr = cfg["shift_register"]
        world.shift_register(sr["load"], sr["clock"], sr["data"], sr["count"], **wiring)
    port = tmp_path / "ttyACM0"
    fw = FirmwareOnPty(cfg, world, port).plug()
    asked = stations_asked(monkeypatch, hw_test)

    def act() -> None:
        for _ in stations:
            ch = prof.channels[asked.get(timeout=30)]
            world.place(ch)
            time.sleep(0.2)
            world.lift(ch)

    person = threading.Thread(target=act, daemon=True)
    person.start()
    try:
        code = main(["hw-test", "--board", "serial", "--profile", pid, "--port", str(port), "--stations",
                     ",".join(stations), "--step-timeout", "0.6"])
    finally:
        person.join(timeout=30)
        fw.close()
    out = capsys.readouterr().out
    assert code == 1, out
    where = out.split("where to look:")[1]
    assert finding in where, out
    if fault in ("cut row", "cut column"):
        assert "1 stations ok" in out or "1 station ok" in out, out
    if fault == "dead chip":
        assert "2 stations ok" in out and "74HC165 #5" not in where, out


def test_guided_mode_on_the_scanner_firmware_keeps_each_station_lit_until_seen(tmp_path, capsys) -> None:  # noqa: ANN001
    """stratego-pico's matrix and WS2812 chain on the firmware's own code behind a pty: every station asked is lit
    cyan until a magnet has been on it; the one never visited is reported dead with its row and column."""
    from controller.hardware.build import design, firmware_config
    from harness.firmware_standin.runner import FirmwareOnPty, World

    prof = find_profile("stratego-pico")
    cfg = dict(firmware_config(design(prof)), settle_ms=10, scan_period_ms=2, heartbeat_ms=150)
    world = World()
    world.matrix(cfg["matrix"]["rows"], cfg["matrix"]["cols"])
    fw = FirmwareOnPty(cfg, world, tmp_path / "ttyACM0").plug()
    lit_counts: list[int] = []

    def lit() -> int:
        frame = world.led_frames[-1] if world.led_frames else []
        return sum(1 for word in frame if word)

    def wait_lit(n: int) -> None:
        end = time.monotonic() + 15
        while time.monotonic() < end and lit() != n:
            time.sleep(0.02)
        lit_counts.append(lit())

    def act() -> None:
        wait_lit(3)
        for station, left in (("a1", 2), ("b1", 1)):
            world.place(prof.channels[station])
            time.sleep(0.2)
            world.lift(prof.channels[station])
            wait_lit(left)

    person = threading.Thread(target=act, daemon=True)
    person.start()
    try:
        code = main(["hw-test", "--board", "serial", "--profile", "stratego-pico", "--port", str(tmp_path / "ttyACM0"),
                     "--guided", "--stations", "a1,b1,c1", "--guided-timeout", "4"])
    finally:
        person.join(timeout=30)
        # hw-test sends the dark picture as it closes; the firmware's thread takes it a moment later (longer on a
        # loaded machine): wait for it before the firmware goes, so the check below sees what it last showed
        end = time.monotonic() + 10
        while lit() and time.monotonic() < end:
            time.sleep(0.02)
        fw.close()
    out = capsys.readouterr().out
    assert lit_counts == [3, 2, 1], (lit_counts, out)
    assert "3 left: a1, b1, c1" in out and "1 left: c1" in out and code == 1
    assert "c1: dead" in out and "row R0, GP0 (Pico pin 1) and column C2, GP12 (Pico pin 16)" in out, out
    assert lit() == 0, "dark when the test ends"
