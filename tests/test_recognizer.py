"""The move recognizer on hand-built snapshots: moves, attacks in either lift order, changes of mind, fix-ups,
mismatches, and RFID identity checks."""

from __future__ import annotations

from controller.referee.recognizer import (
    AttackAction,
    Difference,
    FixupDone,
    Idle,
    Mismatch,
    MoveAction,
    Occupant,
    Recognizer,
    Waiting,
)
from controller.sensing.base import Snapshot

E = {
    "a1": Occupant("red", 1, "T1"),
    "a2": Occupant("red", 2, "T2"),
    "b1": Occupant("blue", 3, "T3"),
    "b2": Occupant("blue", 4, "T4"),
}


def snap(*occupied: str, tags: dict[str, str] | None = None) -> Snapshot:
    if tags is None:
        tags = {s: E[s].tag for s in occupied if s in E}
    return Snapshot(0, frozenset(occupied), tags)


def board_without(*lifted: str, plus: tuple[str, ...] = ()) -> tuple[str, ...]:
    return tuple(s for s in E if s not in lifted) + plus


def test_plain_move() -> None:
    r = Recognizer(E, "red")
    assert r.feed(snap(*board_without("a1"))) == Waiting(("a1",))
    assert r.feed(snap(*board_without("a1", plus=("c1",)))) == MoveAction("a1", "c1")


def test_change_of_mind_is_idle() -> None:
    r = Recognizer(E, "red")
    r.feed(snap(*board_without("a1")))
    assert r.feed(snap(*E)) == Idle()


def test_attack_own_piece_lifted_first() -> None:
    r = Recognizer(E, "red")
    assert isinstance(r.feed(snap(*board_without("a1"))), Waiting)
    assert r.feed(snap(*board_without("a1", "b1"))) == Waiting(("a1", "b1"))
    assert r.feed(snap(*board_without("a1"))) == AttackAction("a1", "b1")


def test_attack_enemy_piece_lifted_first() -> None:
    r = Recognizer(E, "red")
    assert r.feed(snap(*board_without("b1"))) == Waiting(("b1",))
    assert isinstance(r.feed(snap(*board_without("a1", "b1"))), Waiting)
    assert r.feed(snap(*board_without("a1"))) == AttackAction("a1", "b1")


def test_enemy_looked_at_and_put_back_before_own_lift_is_not_an_attack() -> None:
    r = Recognizer(E, "red")
    r.feed(snap(*board_without("b1")))
    assert r.feed(snap(*E)) == Idle()
    assert r.feed(snap(*board_without("a1"))) == Waiting(("a1",))


def test_two_own_pieces_lifted_is_a_mismatch() -> None:
    r = Recognizer(E, "red")
    out = r.feed(snap(*board_without("a1", "a2")))
    assert isinstance(out, Mismatch)
    assert {d.station for d in out.differences} == {"a1", "a2"}


def test_wrong_side_moving_is_a_mismatch() -> None:
    r = Recognizer(E, "red")
    out = r.feed(snap(*board_without("b1", plus=("c3",))))
    assert isinstance(out, Mismatch)
    assert {(d.station, d.found) for d in out.differences} == {("b1", "empty"), ("c3", "occupied")}


def test_piece_appearing_from_nowhere_is_a_mismatch() -> None:
    r = Recognizer(E, "red")
    out = r.feed(snap(*E, "c3"))
    assert out == Mismatch((Difference("c3", None, "occupied"),))


def test_fixup_defender_survives_needs_the_swap_seen() -> None:
    r = Recognizer(E, "red")
    target = {k: v for k, v in E.items() if k != "a1"}  # a1's attacker lost; b1's defender stays
    r.expect(target, "blue", involved=frozenset({"a1", "b1"}), must_lift=frozenset({"b1"}))
    # the attacker still stands on b1: occupancy already matches but the swap has not happened
    assert isinstance(r.feed(snap(*board_without("a1"), tags={})), Waiting)
    assert isinstance(r.feed(snap(*board_without("a1", "b1"), tags={})), Waiting)
    assert r.feed(snap(*board_without("a1"), tags={})) == FixupDone()
    assert r.side == "blue"


def test_fixup_stray_change_is_a_mismatch() -> None:
    r = Recognizer(E, "red")
    target = {k: v for k, v in E.items() if k not in ("a1", "b1")}
    r.expect(target, "blue", involved=frozenset({"a1", "b1"}))
    out = r.feed(snap("a2", "b2", "c4"))
    assert isinstance(out, Mismatch)
    assert r.feed(snap("a2", "b2")) == FixupDone()


def test_rfid_move_with_the_wrong_piece_is_a_mismatch() -> None:
    r = Recognizer(E, "red", use_tags=True)
    r.feed(snap(*board_without("a1")))
    occupied = board_without("a1", plus=("c1",))
    tags = {s: E[s].tag for s in occupied if s in E} | {"c1": "T9"}
    assert isinstance(r.feed(Snapshot(0, frozenset(occupied), tags)), Mismatch)
    tags["c1"] = "T1"
    assert r.feed(Snapshot(0, frozenset(occupied), tags)) == MoveAction("a1", "c1")


def test_rfid_enemy_put_back_is_not_an_attack() -> None:
    r = Recognizer(E, "red", use_tags=True)
    r.feed(snap(*board_without("a1")))
    r.feed(snap(*board_without("a1", "b1")))
    # b1 is occupied again by the enemy's own tag: the player put the enemy back, still holding a1
    assert r.feed(snap(*board_without("a1"))) == Waiting(("a1",))


def test_rfid_attack_recognized_by_tag() -> None:
    r = Recognizer(E, "red", use_tags=True)
    r.feed(snap(*board_without("a1")))
    r.feed(snap(*board_without("a1", "b1")))
    occupied = board_without("a1")
    tags = {s: E[s].tag for s in occupied} | {"b1": "T1"}
    assert r.feed(Snapshot(0, frozenset(occupied), tags)) == AttackAction("a1", "b1")


def test_rfid_swapped_tag_at_rest_is_a_mismatch() -> None:
    r = Recognizer(E, "red", use_tags=True)
    tags = {s: E[s].tag for s in E} | {"a2": "T1", "a1": "T2"}
    out = r.feed(Snapshot(0, frozenset(E), tags))
    assert isinstance(out, Mismatch)
    assert {d.found for d in out.differences} == {"wrong piece"}
