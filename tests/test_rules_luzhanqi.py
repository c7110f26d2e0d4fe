"""Luzhanqi (陸軍棋): the board graph, the setup rules, railway moves, camps, headquarters, bombs, mines and the
silent referee, each rule its own test."""

from __future__ import annotations

import pytest
from test_rules_helpers import position

from controller.rules import (
    IllegalMoveError,
    SetupError,
    SetupProblem,
    load_game,
    new_game,
    redact_ruling,
    view,
)
from controller.rules.topology import topology_for

GAME = load_game("luzhanqi")
TOPO = topology_for(GAME)
CAMPS = {"C1", "C3", "D2", "E1", "E3", "H1", "H3", "I2", "J1", "J3"}
HQS = {"A1", "A3", "L1", "L3"}
ROWS = "ABCDEFGHIJKL"

# A valid Red deployment written by hand: every non-camp station of rows A-F holds a piece (25 stations, 25 pieces).
RED = {
    "A0": "mine", "A1": "flag", "A2": "mine", "A3": "lieutenant", "A4": "mine",
    "B0": "bomb", "B1": "engineer", "B2": "major_general", "B3": "colonel", "B4": "engineer",
    "C0": "captain", "C2": "commander", "C4": "lieutenant",
    "D0": "major", "D1": "brigadier", "D3": "general", "D4": "captain",
    "E0": "colonel", "E2": "bomb", "E4": "major_general",
    "F0": "engineer", "F1": "major", "F2": "brigadier", "F3": "captain", "F4": "lieutenant",
}


def mirror(station: str) -> str:
    """Red's station seen from Blue's side (row A <-> L, same column)."""
    return ROWS[11 - ROWS.index(station[0])] + station[1:]


BLUE = {mirror(s): p for s, p in RED.items()}


def edges(kind: str) -> set[frozenset[str]]:
    nbrs = TOPO.neighbours(frozenset([kind]))
    return {frozenset((a, b)) for a, bs in nbrs.items() for b in bs}


def kinds_of(kind: str) -> set[str]:
    return {s.id for s in GAME.stations if s.kind == kind}


# ---------------------------------------------------------------- board graph

def test_board_has_60_stations() -> None:
    assert len(GAME.stations) == 60
    assert {s.id for s in GAME.stations} == {f"{r}{c}" for r in ROWS for c in range(5)}


def test_board_has_35_rail_66_road_32_diagonal_connections() -> None:
    assert (len(edges("rail")), len(edges("road")), len(edges("diagonal"))) == (35, 66, 32)
    assert not (edges("rail") & edges("road")) and not (edges("road") & edges("diagonal"))


def test_headquarters_are_a1_a3_l1_l3() -> None:
    assert kinds_of("hq") == HQS


def test_camps_join_their_four_diagonal_neighbours() -> None:
    assert kinds_of("camp") == CAMPS
    diag = TOPO.neighbours(frozenset(["diagonal"]))
    for camp in CAMPS:
        r, c = ROWS.index(camp[0]), int(camp[1])
        expected = {f"{ROWS[r + dr]}{c + dc}" for dr in (-1, 1) for dc in (-1, 1)}
        assert set(diag[camp]) == expected, camp
    # every diagonal connection touches a camp
    assert all(e & CAMPS for e in edges("diagonal"))


def test_only_columns_0_2_4_cross_the_front_all_by_rail() -> None:
    crossing = {
        (kind, e) for kind in ("rail", "road", "diagonal") for e in edges(kind)
        if {s[0] for s in e} == {"F", "G"}
    }
    assert crossing == {("rail", frozenset(("F0", "G0"))), ("rail", frozenset(("F2", "G2"))), ("rail", frozenset(("F4", "G4")))}


# ---------------------------------------------------------------- setup

def test_hand_written_deployments_are_valid_and_start_play() -> None:
    state = new_game("luzhanqi")
    state.deploy("red", RED)
    state.deploy("blue", BLUE)
    assert state.phase == "play" and state.turn == "red"
    assert len(state.board) == 50


def deploy_problems(placement: dict[str, str], side: str = "red") -> list[SetupProblem]:
    with pytest.raises(SetupError) as info:
        new_game("luzhanqi").deploy(side, placement)
    return info.value.problems


def swapped(a: str, b: str) -> dict[str, str]:
    out = dict(RED)
    out[a], out[b] = out[b], out[a]
    return out


def test_flag_must_stand_in_a_headquarters() -> None:
    assert deploy_problems(swapped("A1", "D1")) == [SetupProblem("D1", "the flag must stand in a headquarters (大本營)")]
    placement = swapped("A1", "A3")  # the other headquarters is fine
    new_game("luzhanqi").deploy("red", placement)


def test_mines_only_in_the_last_two_rows() -> None:
    assert deploy_problems(swapped("A0", "C0")) == [SetupProblem("C0", "mines may only stand in the last two rows")]
    new_game("luzhanqi").deploy("red", swapped("A0", "B3"))  # row B is the second-last row


def test_bombs_not_in_the_front_row() -> None:
    assert deploy_problems(swapped("B0", "F0")) == [SetupProblem("F0", "a bomb may not stand in the front row")]
    assert deploy_problems({mirror(s): p for s, p in swapped("B0", "F0").items()}, "blue") == [
        SetupProblem("G0", "a bomb may not stand in the front row")
    ]


def test_camps_start_empty() -> None:
    placement = dict(RED)
    placement["C1"] = placement.pop("E0")
    assert deploy_problems(placement) == [SetupProblem("C1", "camps (行營) start empty")]


def test_army_counts() -> None:
    counts = {p.id: p.count for p in GAME.pieces}
    assert counts == {
        "commander": 1, "general": 1, "major_general": 2, "brigadier": 2, "colonel": 2, "major": 2,
        "captain": 3, "lieutenant": 3, "engineer": 3, "bomb": 2, "mine": 3, "flag": 1,
    }
    assert [p.zh_hans for p in GAME.pieces] == ["司令", "军长", "师长", "旅长", "团长", "营长", "连长", "排长", "工兵", "炸弹", "地雷", "军旗"]
    placement = dict(RED)
    placement["A3"] = "general"  # one lieutenant short, one general too many
    problems = deploy_problems(placement)
    assert {str(p) for p in problems} == {"General (軍長): 2 placed, 1 expected", "Lieutenant (排長): 2 placed, 3 expected"}


def test_a_deployment_with_several_defects_reports_all_of_them_each_with_its_station() -> None:
    placement = swapped("A1", "D1")  # flag out of the headquarters
    placement["A0"], placement["C0"] = placement["C0"], placement["A0"]  # mine on row C
    placement["B0"], placement["F0"] = placement["F0"], placement["B0"]  # bomb on the front row
    placement["C1"] = placement.pop("E0")  # a colonel in a camp
    del placement["A3"]  # a lieutenant missing
    placement["G2"] = "lieutenant"  # a lieutenant on Blue's side
    placement["Z9"] = "lieutenant"  # no such station
    problems = deploy_problems(placement)
    assert set(problems) == {
        SetupProblem("D1", "the flag must stand in a headquarters (大本營)"),
        SetupProblem("C0", "mines may only stand in the last two rows"),
        SetupProblem("F0", "a bomb may not stand in the front row"),
        SetupProblem("C1", "camps (行營) start empty"),
        SetupProblem("G2", "Lieutenant is outside red's deployment area"),
        SetupProblem("Z9", "no such station on this board"),
    }
    assert len(problems) == 6  # the two misplaced lieutenants balance the missing one; nothing is said twice


# ---------------------------------------------------------------- moves

def quiet_pieces() -> dict[str, tuple[str, str]]:
    """Both flags in their headquarters and a piece each far from the action, so a game goes on."""
    return {"A1": ("red", "flag"), "L1": ("blue", "flag"), "A4": ("red", "lieutenant"), "L4": ("blue", "lieutenant")}


def test_non_engineers_slide_straight_along_one_railway_line() -> None:
    state = position("luzhanqi", {"C0": ("red", "major"), "H0": ("blue", "major")})
    dests = set(state.destinations("C0"))
    assert {"B0", "D0", "E0", "F0", "G0", "H0"} <= dests  # along column 0 up to (and attacking) H0
    assert not dests & {"B1", "B2", "I0", "F1", "G1"}  # no turn at B0 or F0, nothing past the piece on H0
    assert state.why_illegal(("C0", "B2")) == {"code": "reason.cannot_reach", "params": {"piece": "major", "from": "C0", "to": "B2"}}


def test_engineers_turn_anywhere_on_the_railway() -> None:
    state = position("luzhanqi", {"C0": ("red", "engineer"), "F2": ("red", "captain"), "K3": ("blue", "major")})
    dests = set(state.destinations("C0"))
    assert {"B4", "F1", "F4", "G4", "K4", "K3", "G2", "G0", "K0"} <= dests
    assert "F2" not in dests and "K2" in dests  # own piece not entered; K2 reached round the other way
    assert "K1" in dests  # from K0 along row K
    state.apply(("C0", "B4"))
    assert state.board["B4"].type == "engineer"


def test_pieces_in_a_headquarters_never_move_again() -> None:
    state = position("luzhanqi", {**quiet_pieces(), "A3": ("red", "commander")})
    assert state.destinations("A3") == {}
    assert state.why_illegal(("A3", "B3")) == {"code": "reason.station_frozen", "params": {"station": "A3", "where": {"code": "kind.hq", "params": {}}}}
    with pytest.raises(IllegalMoveError):
        state.apply(("A3", "A2"))


def test_pieces_in_camps_cannot_be_attacked() -> None:
    state = position("luzhanqi", {**quiet_pieces(), "D1": ("red", "commander"), "D2": ("blue", "lieutenant")})
    assert "D2" not in state.destinations("D1")
    assert state.why_illegal(("D1", "D2")) == {"code": "reason.sheltered", "params": {"station": "D2", "where": {"code": "kind.camp", "params": {}}}}
    # and a piece may leave a camp to attack
    state.turn = "blue"
    assert "D1" in state.destinations("D2")


def test_pieces_may_enter_an_empty_camp() -> None:
    state = position("luzhanqi", {**quiet_pieces(), "D1": ("red", "commander")})
    state.apply(("D1", "D2"))
    assert state.board["D2"].type == "commander"


def test_bombs_destroy_themselves_and_what_they_hit() -> None:
    state = position("luzhanqi", {**quiet_pieces(), "D1": ("red", "bomb"), "D0": ("blue", "commander")})
    ruling = state.apply(("D1", "D0"))
    assert ruling.outcome == "both"
    assert "D1" not in state.board and "D0" not in state.board
    assert {(r.station, r.type) for r in ruling.removed} == {("D1", "bomb"), ("D0", "commander")}


def test_whatever_hits_a_bomb_goes_with_it() -> None:
    state = position("luzhanqi", {**quiet_pieces(), "D1": ("red", "general"), "D0": ("blue", "bomb")})
    assert state.apply(("D1", "D0")).outcome == "both"
    assert "D1" not in state.board and "D0" not in state.board


def test_engineers_clear_mines() -> None:
    state = position("luzhanqi", {**quiet_pieces(), "K0": ("red", "engineer"), "L0": ("blue", "mine")})
    assert state.apply(("K0", "L0")).outcome == "attacker"
    assert state.board["L0"].type == "engineer" and state.board["L0"].owner == "red"


def test_anything_else_that_hits_a_mine_dies() -> None:
    state = position("luzhanqi", {**quiet_pieces(), "K0": ("red", "commander"), "L0": ("blue", "mine")})
    assert state.apply(("K0", "L0")).outcome == "defender"
    assert "K0" not in state.board and state.board["L0"].type == "mine"


def test_mine_kills_attacker_option_removes_both() -> None:
    pieces = {**quiet_pieces(), "K0": ("red", "commander"), "L0": ("blue", "mine")}
    state = position("luzhanqi", pieces, options={"mine_kills_attacker": True})
    assert state.apply(("K0", "L0")).outcome == "both"
    assert "K0" not in state.board and "L0" not in state.board
    engineer = position("luzhanqi", {**pieces, "K0": ("red", "engineer")}, options={"mine_kills_attacker": True})
    assert engineer.apply(("K0", "L0")).outcome == "attacker"


def test_bomb_takes_flag_by_default_and_wins() -> None:
    state = position("luzhanqi", {**quiet_pieces(), "K1": ("red", "bomb")})
    ruling = state.apply(("K1", "L1"))
    assert ruling.outcome == "both"
    assert state.phase == "over" and state.result is not None and state.result.winners == ("red",)
    assert ruling.result == state.result and ruling.next_turn is None


def test_bomb_may_not_strike_the_flag_with_bomb_takes_flag_false() -> None:
    state = position("luzhanqi", {**quiet_pieces(), "K1": ("red", "bomb")}, options={"bomb_takes_flag": False})
    assert "L1" not in state.destinations("K1")
    assert state.why_illegal(("K1", "L1")) == {"code": "reason.may_not_attack", "params": {"piece": "bomb", "station": "L1"}}
    with pytest.raises(IllegalMoveError):
        state.apply(("K1", "L1"))


def test_losing_the_commander_reveals_its_owners_flag_to_everyone() -> None:
    state = position("luzhanqi", {**quiet_pieces(), "F0": ("red", "commander"), "G0": ("blue", "bomb")}, turn="blue")
    assert not state.board["A1"].public
    ruling = state.apply(("G0", "F0"))
    assert state.board["A1"].public
    for audience in ("red", "blue", "spectator", "arbiter"):
        flag = next(e for e in view(state, audience)["pieces"] if e["station"] == "A1")
        assert flag["piece"] == "flag" and flag["public"] is True
        told = redact_ruling(ruling, audience)
        assert {"station": "A1", "owner": "red", "piece": "flag"} in told["reveals"]
        assert {"code": "notice.commander_lost_flag_shown", "params": {"side": "red", "piece": "commander", "station": "A1", "flag_piece": "flag"}} in told["notices"]
    # Blue's flag stays hidden from Red and the spectator
    for audience in ("red", "spectator"):
        assert "piece" not in next(e for e in view(state, audience)["pieces"] if e["station"] == "L1")


def test_silent_referee_reveals_nothing_in_a_clash() -> None:
    state = position("luzhanqi", {**quiet_pieces(), "F1": ("red", "general"), "E1": ("blue", "lieutenant"),
                                  "D1": ("blue", "major")}, turn="blue")
    ruling = state.apply(("E1", "F1"))  # blue lieutenant leaves the camp and attacks the general: the general stays
    assert ruling.outcome == "defender"
    state.apply(("F1", "E1"))  # red general enters the camp
    state.apply(("D1", "D0"))
    ruling2 = state.apply(("E1", "D0"))  # red general attacks the blue major and takes D0
    assert ruling2.outcome == "attacker"
    for side, other in (("red", "blue"), ("blue", "red")):
        v = view(state, side)
        assert all("piece" not in e for e in v["pieces"] if e["owner"] == other)
        assert all("piece" in e for e in v["pieces"] if e["owner"] == side)
        for r in (ruling, ruling2):
            told = redact_ruling(r, side)
            assert told["reveals"] == []
            if r.side == side:
                assert "defender_piece" not in told and "piece" in told
            else:
                assert "piece" not in told and "defender_piece" in told
            assert all("piece" not in e for e in told["removed"] if e["owner"] == other)
    assert all("piece" not in e for e in view(state, "spectator")["pieces"])


def test_no_capture_draw_option_ends_a_quiet_game_drawn() -> None:
    state = position("luzhanqi", quiet_pieces(), options={"no_capture_draw": 3})
    state.apply(("A4", "B4"))
    state.apply(("L4", "K4"))
    assert state.phase == "play"
    ruling = state.apply(("B4", "C4"))
    assert state.phase == "over" and state.result is not None and state.result.draw
    assert ruling.result == state.result
    unlimited = position("luzhanqi", quiet_pieces())
    for move in (("A4", "B4"), ("L4", "K4"), ("B4", "C4"), ("K4", "J4")):
        unlimited.apply(move)
    assert unlimited.phase == "play"


def test_a_capture_resets_the_no_capture_count() -> None:
    pieces = {**quiet_pieces(), "C0": ("red", "major"), "D0": ("blue", "captain")}
    state = position("luzhanqi", pieces, options={"no_capture_draw": 2})
    state.apply(("A4", "B4"))
    state.apply(("D0", "C0"))  # a capture (the captain dies): the count starts again
    assert state.phase == "play"
    state.apply(("B4", "C4"))
    assert state.phase == "play"
    state.apply(("L4", "K4"))
    assert state.phase == "over" and state.result is not None and state.result.draw
