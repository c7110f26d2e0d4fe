"""Tests the GPIO reed-matrix backend against a virtual board of magnets built from gpiozero's own mock pins."""

from __future__ import annotations

import threading

import pytest
from gpiozero import InputDevice, OutputDevice
from gpiozero.pins.mock import MockFactory, MockPWMPin
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.sensing.base import Snapshot
from controller.sensing.gpio_matrix import GpioMatrixBoard
from controller.sensing.profile import Profile, default_profile, parse_profile


class RowPin(MockPWMPin):
    """A mock row pin that tells the virtual board whenever the Pi drives it, so the columns can follow."""

    def __init__(self, factory, info, board: VirtualMagnets) -> None:
        self.board = board
        super().__init__(factory, info)

    def _change_state(self, value):
        changed = super()._change_state(value)
        self.board.refresh()
        return changed


class VirtualMagnets:
    """The physical matrix: reed switches (closed under a magnet) and diodes, wired to mock pins.

    A column pin reads low when some row is driven low as an output and the switch at that crossing is closed;
    otherwise its pull-up holds it high. Mock pins do not debounce, so whatever the magnets do reaches the backend.
    """

    def __init__(self, factory: MockFactory, profile: Profile, occupied: set[str] = frozenset()) -> None:
        self.profile = profile
        self._lock = threading.RLock()
        self.occupied: set[str] = set(occupied)
        self.crossings = {ch: st for st, ch in profile.channels.items()}
        self.columns = [factory.pin(p) for p in profile.pins.columns]
        self.rows = [factory.pin(p, pin_class=RowPin, board=self) for p in profile.pins.rows]

    def refresh(self) -> None:
        with self._lock:
            if not hasattr(self, "rows"):
                return
            active = [i for i, pin in enumerate(self.rows) if pin.function == "output" and not pin.state]
            for c, pin in enumerate(self.columns):
                if pin.function != "input":
                    continue
                closed = any(self.crossings.get((r, c)) in self.occupied for r in active)
                if closed:
                    pin.drive_low()
                elif pin.pull == "up":
                    pin.drive_high()

    def place(self, *stations: str) -> None:
        with self._lock:
            self.occupied.update(stations)
            self.refresh()

    def lift(self, *stations: str) -> None:
        with self._lock:
            self.occupied.difference_update(stations)
            self.refresh()


@pytest.fixture
def luzhanqi() -> Profile:
    return default_profile("luzhanqi")


def test_full_scan_reads_every_magnet(mock_factory, luzhanqi):
    stations = set(luzhanqi.stations)
    magnets = VirtualMagnets(mock_factory, luzhanqi, {"A0", "A4", "C2", "F3", "L4", "L0"})
    board = GpioMatrixBoard(luzhanqi)
    assert board.stations == luzhanqi.stations
    assert board.current().occupied == {"A0", "A4", "C2", "F3", "L4", "L0"}
    magnets.place(*stations)
    board.scan_once(0)
    assert board.scan_once(luzhanqi.settle_ms).occupied == stations
    magnets.lift(*stations)
    board.scan_once(100)
    assert board.scan_once(100 + luzhanqi.settle_ms).occupied == frozenset()
    board.stop()


def test_stratego_matrix_ten_by_ten(mock_factory):
    profile = default_profile("stratego")
    everywhere = set(profile.stations) - {"a1", "j10", "e5"}
    VirtualMagnets(mock_factory, profile, everywhere)
    with GpioMatrixBoard(profile) as board:
        assert board.current().occupied == everywhere


def test_placed_magnet_appears_only_after_settle_time(mock_factory, luzhanqi):
    magnets = VirtualMagnets(mock_factory, luzhanqi)
    board = GpioMatrixBoard(luzhanqi, clock=lambda: 0.0)
    assert board.current().occupied == frozenset()
    magnets.place("B2")
    settle = luzhanqi.settle_ms
    for t in range(0, settle, luzhanqi.scan_period_ms):
        assert board.scan_once(t) is None, f"B2 reported at {t} ms, before the {settle} ms settle time"
    assert board.current().occupied == frozenset()
    snap = board.scan_once(settle)
    assert snap == Snapshot(settle, frozenset({"B2"}))
    assert board.current() is snap
    assert board.scan_once(settle + 10) is None
    board.stop()


def test_bounce_shorter_than_settle_never_appears(mock_factory, luzhanqi):
    magnets = VirtualMagnets(mock_factory, luzhanqi)
    board = GpioMatrixBoard(luzhanqi, clock=lambda: 0.0)
    t = 0
    for _ in range(20):  # closes and opens every 5 ms: never still for the settle time
        magnets.place("D1")
        assert board.scan_once(t) is None
        magnets.lift("D1")
        assert board.scan_once(t + 5) is None
        t += 10
    assert board.scan_once(t + 1000) is None
    assert board.current().occupied == frozenset()
    board.stop()


def test_magnet_slid_across_three_stations_reports_only_the_last(mock_factory, luzhanqi):
    magnets = VirtualMagnets(mock_factory, luzhanqi, {"A0"})
    board = GpioMatrixBoard(luzhanqi, clock=lambda: 0.0)
    seen: list[Snapshot] = []
    t = 0
    magnets.lift("A0")
    for station in ("B0", "B1", "B2"):  # lifted off A0, slid over B0 and B1 for 20 ms each, set down on B2
        magnets.place(station)
        for _ in range(2):
            if snap := board.scan_once(t):
                seen.append(snap)
            t += 10
        if station != "B2":
            magnets.lift(station)
    for _ in range(10):
        if snap := board.scan_once(t):
            seen.append(snap)
        t += 10
    assert [s.occupied for s in seen][-1] == {"B2"}
    assert all(not ({"B0", "B1"} & s.occupied) for s in seen)
    board.stop()


def test_run_reports_settled_changes_until_stopped(mock_factory, luzhanqi):
    magnets = VirtualMagnets(mock_factory, luzhanqi)
    board = GpioMatrixBoard(luzhanqi)
    got: list[Snapshot] = []
    arrived = threading.Event()

    def on_snapshot(snap: Snapshot) -> None:
        got.append(snap)
        arrived.set()

    worker = threading.Thread(target=board.run, args=(on_snapshot,))
    worker.start()
    try:
        magnets.place("K3")
        assert arrived.wait(2), "no snapshot within 2 s of placing a magnet"
    finally:
        board.stop()
        worker.join(2)
    assert not worker.is_alive()
    assert got[-1].occupied == {"K3"}
    assert board.closed


def test_stop_from_inside_the_callback_ends_run(mock_factory, luzhanqi):
    magnets = VirtualMagnets(mock_factory, luzhanqi)
    board = GpioMatrixBoard(luzhanqi)
    magnets.place("A2")
    got: list[Snapshot] = []

    def on_snapshot(snap: Snapshot) -> None:
        got.append(snap)
        board.stop()

    worker = threading.Thread(target=board.run, args=(on_snapshot,), daemon=True)
    worker.start()
    worker.join(2)
    if worker.is_alive():  # never hang the suite: stop it from here, then fail
        board.stop()
        worker.join(2)
        pytest.fail("run() did not report A2 and stop within 2 s")
    assert [s.occupied for s in got] == [{"A2"}]
    assert board.closed


def test_run_stamps_snapshots_in_ms_since_the_board_was_built(mock_factory, luzhanqi):
    magnets = VirtualMagnets(mock_factory, luzhanqi)
    ticks = iter(range(10**6))
    board = GpioMatrixBoard(luzhanqi, clock=lambda: 5000 + next(ticks) * 0.002)  # 2 ms a look at the clock
    magnets.place("E2")
    got: list[Snapshot] = []

    def on_snapshot(snap: Snapshot) -> None:
        got.append(snap)
        board.stop()

    worker = threading.Thread(target=board.run, args=(on_snapshot,), daemon=True)
    worker.start()
    worker.join(2)
    if worker.is_alive():
        board.stop()
        worker.join(2)
        pytest.fail("run() did not report E2 within 2 s")
    assert got[0].occupied == {"E2"}
    assert luzhanqi.settle_ms <= got[0].t_ms < 1000


def test_stop_releases_every_pin(mock_factory, luzhanqi):
    board = GpioMatrixBoard(luzhanqi)
    rows = [mock_factory.pin(p) for p in luzhanqi.pins.rows]
    assert all(p.function == "output" and p.state for p in rows), "idle rows are driven high"
    board.stop()
    board.stop()  # twice is harmless
    assert all(p.function == "input" for p in rows), "released rows go high-impedance"
    for p in luzhanqi.pins.rows:
        OutputDevice(p).close()  # the pins are free to claim again
    for p in luzhanqi.pins.columns:
        InputDevice(p, pull_up=True).close()
    with pytest.raises(RuntimeError, match="closed"):
        board.scan_once(0)
    with pytest.raises(RuntimeError, match="closed"):
        board.run(lambda snap: None)


def test_pin_already_in_use_is_reported_and_nothing_is_left_claimed(mock_factory, luzhanqi):
    taken = OutputDevice(luzhanqi.pins.columns[2])
    with pytest.raises(Exception) as info:
        GpioMatrixBoard(luzhanqi)
    assert "pins.columns[2]" in "".join(getattr(info.value, "__notes__", []))
    taken.close()
    GpioMatrixBoard(luzhanqi).stop()  # the rows claimed before the failure were released


def test_refuses_a_scanner_profile(mock_factory):
    text = (
        "format: 1\ngame: luzhanqi\nsensing: rfid\nscanner: {kind: matrix}\nchannels:\n"
        + "".join(f"  {s}: {i}\n" for i, s in enumerate(default_profile("luzhanqi").stations))
    )
    with pytest.raises(ValueError, match="serial scanner backend"):
        GpioMatrixBoard(parse_profile(text, "scan.yaml"))


@settings(max_examples=25, deadline=None)
@given(st.data())
def test_any_arrangement_reads_back_after_settling(data):
    profile = default_profile("lattaque")
    factory = MockFactory(pin_class=MockPWMPin)
    try:
        first = data.draw(st.sets(st.sampled_from(profile.stations)))
        then = data.draw(st.sets(st.sampled_from(profile.stations)))
        magnets = VirtualMagnets(factory, profile, first)
        board = GpioMatrixBoard(profile, pin_factory=factory, clock=lambda: 0.0)
        assert board.current().occupied == first
        magnets.lift(*first)
        magnets.place(*then)
        board.scan_once(0)
        snap = board.scan_once(profile.settle_ms)
        assert board.current().occupied == then
        assert (snap is None) == (first == then)
        board.stop()
    finally:
        factory.reset()
