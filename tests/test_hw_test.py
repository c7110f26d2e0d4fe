"""hw-test's analysis, judged directly: dead, stuck, flickering and miswired stations."""

from __future__ import annotations

from controller.commands.hw_test import Step, analyse
from controller.sensing.base import Snapshot

ST = ["a1", "a2", "a3", "a4", "a5"]


def snaps(*boards):
    return tuple(Snapshot(i, frozenset(b), {}) for i, b in enumerate(boards))


def test_a_healthy_board_passes():
    steps = [Step(s, snaps({s}, set())) for s in ST]
    rep = analyse(ST, Snapshot(0, frozenset(), {}), steps)
    assert rep.passed and rep.ok == ST


def test_each_fault_is_named_with_its_station():
    base = Snapshot(0, frozenset({"a5"}), {})  # a5 stuck on
    steps = [
        Step("a1", snaps({"a1", "a5"}, {"a5"})),
        Step("a2", snaps({"a3", "a5"}, {"a5"})),  # a2's magnet shows at a3: swapped wires
        Step("a3", snaps({"a2", "a5"}, {"a5"})),
        Step("a4", ()),  # never seen
        Step("a1", snaps({"a1", "a5"}, {"a5"}, {"a1", "a5"}, {"a5"}, {"a1", "a5"}, {"a5"})),
    ]
    rep = analyse(ST, base, steps)
    assert rep.stuck == ["a5"]
    assert rep.dead == ["a4"]
    assert rep.miswired == {"a2": ["a3"], "a3": ["a2"]}
    assert rep.flickering == {"a1": 8}
    assert not rep.passed and rep.ok == []
    text = "\n".join(rep.lines())
    assert "magnet on a2 appeared at a3" in text and "dead (never seen): a4" in text


def test_hw_test_command_is_registered():
    from controller.cli import build_parser

    args = build_parser().parse_args(["hw-test", "--board", "gpio", "--stations", "a1"])
    assert args.board == "gpio" and args.stations == "a1"
