"""`facedown hw-test --board gpio` end to end on gpiozero's mock pins: a person (a thread) puts a magnet on each
station in turn on a virtual reed matrix; a miswired station is named."""

from __future__ import annotations

import threading
import time

from controller.cli import main
from controller.sensing.profile import default_profile
from tests.test_gpio_matrix import VirtualMagnets


def _person(magnets: VirtualMagnets, where: list[str], start_after: float) -> threading.Thread:
    def act() -> None:
        time.sleep(start_after)
        for station in where:
            magnets.place(station)
            time.sleep(0.25)
            magnets.lift(station)
            time.sleep(0.25)

    t = threading.Thread(target=act, daemon=True)
    t.start()
    return t


def test_hw_test_on_the_gpio_matrix_passes_a_healthy_board(mock_factory, capsys) -> None:
    magnets = VirtualMagnets(mock_factory, default_profile("luzhanqi"))
    person = _person(magnets, ["A0", "A1", "B3"], start_after=1.8)
    code = main(["hw-test", "--board", "gpio", "--game", "luzhanqi", "--stations", "A0,A1,B3", "--step-timeout", "3"])
    person.join()
    out = capsys.readouterr().out
    assert code == 0, out
    assert "3 stations ok" in out


def test_hw_test_on_the_gpio_matrix_names_a_wrong_mapping(mock_factory, capsys) -> None:
    magnets = VirtualMagnets(mock_factory, default_profile("luzhanqi"))
    # asked for A1, the magnet shows up at C2 (as if A1's switch were wired to C2's crossing)
    person = _person(magnets, ["A0", "C2", "B3"], start_after=1.8)
    code = main(["hw-test", "--board", "gpio", "--game", "luzhanqi", "--stations", "A0,A1,B3", "--step-timeout", "3"])
    person.join()
    out = capsys.readouterr().out
    assert code == 1, out
    assert "wrong mapping: magnet on A1 appeared at C2" in out


def test_hw_test_lights_each_station_it_asks_for(mock_factory, capsys, tmp_path) -> None:
    from pathlib import Path

    prof = default_profile("luzhanqi")
    text = Path(prof.file).read_text(encoding="utf-8") + "lights:\n  kind: gpio\n  pins: {A0: 14, A1: 15}\n"
    (tmp_path / "lit.yaml").write_text(text, encoding="utf-8")
    magnets = VirtualMagnets(mock_factory, prof)
    lit: list[tuple[str, bool, bool]] = []

    def watch() -> None:  # what a person sees when asked for each station
        for station in ("A0", "A1"):
            deadline = time.monotonic() + 4
            while time.monotonic() < deadline and not mock_factory.pin(14 if station == "A0" else 15).state:
                time.sleep(0.02)
            lit.append((station, bool(mock_factory.pin(14).state), bool(mock_factory.pin(15).state)))
            magnets.place(station)
            time.sleep(0.25)
            magnets.lift(station)
            time.sleep(0.25)

    person = threading.Thread(target=watch, daemon=True)
    person.start()
    code = main(["hw-test", "--board", "gpio", "--profile", str(tmp_path / "lit.yaml"), "--stations", "A0,A1",
                 "--step-timeout", "3"])
    person.join()
    out, err = capsys.readouterr()
    assert code == 0, out + err
    assert "its light is on" in out
    assert lit == [("A0", True, False), ("A1", False, True)]  # only the station asked for is lit
    assert not mock_factory.pin(14).state and not mock_factory.pin(15).state  # dark when the test ends
