"""Four-player Junqi (四國軍棋): the board graph, railway moves across the centre and the arcs, alliances, seats that
go out (flag lost, no legal move, the arbiter's time rule) and the house-rule options."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from controller.rules import IllegalMoveError, load_game, new_game, redact_ruling, view
from controller.rules.state import GameState, Piece
from controller.rules.topology import topology_for

GAME = load_game("siguo")
TOPO = topology_for(GAME)
ARMS = "SENW"
ROWS = "ABCDEF"
XY = {s.id: (s.x, s.y) for s in GAME.stations}
AT = {v: k for k, v in XY.items()}


def edges(kind: str) -> set[frozenset[str]]:
    return {frozenset((a, b)) for ln in GAME.lines if ln.kind == kind for a, b in zip(ln.stations, ln.stations[1:], strict=False)}


def turned(station: str, quarter_turns: int) -> str:
    """The station at the place ``station`` goes to when the board is turned counter-clockwise."""
    x, y = XY[station]
    for _ in range(quarter_turns):
        x, y = -y, x
    return AT[(x, y)]


def position(pieces: dict[str, tuple[str, str]], turn: str = "red", **options: object) -> GameState:
    """A game in play with exactly these pieces {station: (side, piece id)}."""
    state = new_game("siguo", dict(options))
    state.phase = "play"
    state.turn = turn
    for uid, (station, (side, kind)) in enumerate(pieces.items(), 1):
        state.board[station] = Piece(uid, kind, side)
    for hook in state.hooks:
        hook.start(state)
    return state


# ------------------------------------------------------------------ the board
def test_the_board_is_four_arms_of_thirty_and_a_centre_of_nine():
    ids = GAME.station_ids
    assert len(ids) == 129 == len(set(ids)) == len(set(XY.values()))
    for arm in ARMS:
        assert sorted(s for s in ids if s[0] == arm) == sorted(f"{arm}{r}{c}" for r in ROWS for c in range(5))
    assert sorted(s for s in ids if s[0] == "C") == [f"C{r}{c}" for r in range(3) for c in range(3)]
    assert {s.id[1:] for s in GAME.stations if s.kind == "camp"} == {"C1", "C3", "D2", "E1", "E3"}
    assert {s.id[1:] for s in GAME.stations if s.kind == "hq"} == {"A1", "A3"}
    assert {s.kind for s in GAME.stations if s.id[0] == "C"} == {"normal"}


def test_the_generator_writes_exactly_the_committed_file():
    gen = Path(__file__).resolve().parent.parent / "tools" / "gen_siguo.py"
    done = subprocess.run([sys.executable, str(gen), "--check"], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.parametrize("k", [1, 2, 3])
def test_each_arm_is_arm_s_turned_a_quarter_turn_at_a_time(k):
    for s in GAME.stations:
        t = turned(s.id, k)
        assert GAME.station_by_id[t].kind == s.kind
        if s.id[0] in ARMS:
            assert t == ARMS[(ARMS.index(s.id[0]) + k) % 4] + s.id[1:], (s.id, t)  # same row and column, next arm
    for kind in ("road", "diagonal", "rail"):
        es = edges(kind)
        assert {frozenset(turned(a, k) for a in e) for e in es} == es, kind


def test_an_arm_is_the_luzhanqi_half_with_the_same_roads_diagonals_and_railways():
    luz = load_game("luzhanqi")
    half = {f"{r}{c}" for r in ROWS for c in range(5)}
    for kind in ("road", "diagonal", "rail"):
        theirs = {frozenset(e) for ln in luz.lines if ln.kind == kind for e in zip(ln.stations, ln.stations[1:], strict=False) if set(e) <= half}
        ours = {frozenset(s[1:] for s in e) for e in edges(kind) if all(s[0] == "S" for s in e)}
        assert ours == theirs, kind
    assert {s.id: s.kind for s in luz.stations if s.id in half} == {s.id[1:]: s.kind for s in GAME.stations if s.id[0] == "S"}


def test_the_centre_is_linked_orthogonally_and_only_columns_0_2_4_of_a_front_row_reach_it():
    rail = edges("rail")
    centre = {e for e in rail if all(s[0] == "C" for s in e)}
    assert len(centre) == 12
    for e in centre:
        (x1, y1), (x2, y2) = (XY[s] for s in e)
        assert abs(x1 - x2) + abs(y1 - y2) == 2
    into_centre = {frozenset(e) for e in rail if len({s[0] for s in e}) == 2 and any(s[0] == "C" for s in e)}
    assert {tuple(sorted(e)) for e in into_centre} == {
        ("C00", "SF0"), ("C01", "SF2"), ("C02", "SF4"), ("C02", "EF0"), ("C12", "EF2"), ("C22", "EF4"),
        ("C22", "NF0"), ("C21", "NF2"), ("C20", "NF4"), ("C20", "WF0"), ("C10", "WF2"), ("C00", "WF4"),
    }
    assert not [e for kind in ("road", "diagonal") for e in edges(kind) if len({s[0] for s in e}) > 1]


def test_four_arcs_join_neighbouring_arms_front_corners():
    arcs = {tuple(sorted(e)) for e in edges("rail") if len({s[0] for s in e}) == 2 and not any(s[0] == "C" for s in e)}
    assert arcs == {("EF0", "SF4"), ("EF4", "NF0"), ("NF4", "WF0"), ("SF0", "WF4")}


def test_the_straight_railway_lines():
    rails = {tuple(ln.stations) for ln in GAME.lines if ln.kind == "rail"}
    assert len(rails) == 18
    col = lambda arm, c: [f"{arm}{r}{c}" for r in "BCDEF"]  # noqa: E731
    for arm in ARMS:
        assert tuple(f"{arm}B{c}" for c in range(5)) in rails
        assert tuple(f"{arm}F{c}" for c in range(5)) in rails
    for a, b in zip(ARMS, ARMS[1:] + ARMS[:1], strict=True):  # through an arc into the neighbour's side column
        assert tuple(col(a, 4) + col(b, 0)[::-1]) in rails
    assert tuple(col("S", 0) + ["C00", "C10", "C20"] + col("N", 4)[::-1]) in rails  # the long lines
    assert tuple(col("S", 4) + ["C02", "C12", "C22"] + col("N", 0)[::-1]) in rails
    assert tuple(col("W", 4) + ["C00", "C01", "C02"] + col("E", 0)[::-1]) in rails
    assert tuple(col("W", 0) + ["C20", "C21", "C22"] + col("E", 4)[::-1]) in rails
    assert ("SF2", "C01", "C11", "C21", "NF2") in rails and ("WF2", "C10", "C11", "C12", "EF2") in rails
    for line in rails:  # each line is straight on the drawing, an arc counted as one straight step
        for a, b, c in zip(line, line[1:], line[2:], strict=False):
            (ax, ay), (bx, by), (cx, cy) = XY[a], XY[b], XY[c]
            if {a[0], b[0], c[0]} <= set(ARMS) and len({a[0], b[0], c[0]}) == 2:
                continue  # the arc: a quarter circle, played as straight
            assert (bx - ax) * (cy - by) == (by - ay) * (cx - bx), (a, b, c)


# ------------------------------------------------------------------ moves
RAIL = {s for ln in GAME.lines if ln.kind == "rail" for s in ln.stations}


def test_an_engineer_reaches_the_whole_railway_across_the_centre_and_the_arcs():
    assert len(RAIL) == 4 * 16 + 9
    state = position({"SF2": ("red", "engineer")})
    assert set(state.destinations("SF2")) == (RAIL - {"SF2"}) | {"SE1", "SE2", "SE3"}
    assert len(state.legal_moves()) == 75


def test_an_engineer_goes_round_blocked_stations_and_attacks_through_an_arc():
    # SF2's railway exits are SF1 (own piece), C01 (ally) and SF3; an enemy on EF0 stops the arc from SF4
    state = position({"SF2": ("red", "engineer"), "SF1": ("red", "captain"), "C01": ("green", "captain"),
                      "EF0": ("blue", "mine"), "WF4": ("purple", "major")})
    dest = set(state.destinations("SF2"))
    assert "EF0" in dest and "WF4" in dest  # attacks: round by the centre and the other arc
    assert "SF1" not in dest and "C01" not in dest  # own and ally's pieces are neither attacked nor passed
    assert {"SF0", "SE0", "SB0", "C00", "C10", "NF2", "EF1"} <= dest  # past C01 by C02/C12/C11, round the board
    assert len(dest) == len(RAIL) - 3 + 3  # every railway station but SF2, SF1, C01; plus SE1, SE2, SE3 by road


def test_a_non_engineer_rides_an_arc_and_the_long_lines_straight_but_never_turns():
    state = position({"SB4": ("red", "general")})
    assert set(state.destinations("SB4")) == {
        "SA4", "SC3",  # road and diagonal
        "SB3", "SB2", "SB1", "SB0",  # the second row
        "SC4", "SD4", "SE4", "SF4", "EF0", "EE0", "ED0", "EC0", "EB0",  # the side column through the arc
        "C02", "C12", "C22", "NF0", "NE0", "ND0", "NC0", "NB0",  # the long line through the centre ring
    }
    state = position({"SF2": ("red", "general")})
    assert set(state.destinations("SF2")) == {"SF0", "SF1", "SF3", "SF4", "C01", "C11", "C21", "NF2", "SE1", "SE2", "SE3"}


# ------------------------------------------------------------------ alliances and seats out
ARMY = {"flag": "A1", "mine": "A0"}


def four_seats(extra: dict[str, tuple[str, str]], **options: object) -> GameState:
    """Every seat with a flag in its HQ A1 and a mine on A0, plus ``extra``."""
    pieces = {f"{arm}{at}": (side, kind) for arm, side in zip(ARMS, GAME.sides, strict=True) for kind, at in ARMY.items()}
    pieces.update(extra)
    return position(pieces, **options)


def test_allies_never_attack_each_other():
    state = four_seats({"SB1": ("red", "commander"), "SB2": ("green", "engineer")})
    assert "SB2" not in state.destinations("SB1")
    with pytest.raises(IllegalMoveError, match="ally"):
        state.apply(("SB1", "SB2"))


def test_a_seat_whose_flag_is_taken_is_out_its_pieces_leave_and_its_turns_are_skipped():
    state = four_seats({"EB1": ("red", "commander"), "EC0": ("blue", "captain"), "NB1": ("green", "captain"),
                        "SC4": ("blue", "major"), "WB2": ("purple", "captain"), "SB3": ("red", "captain")})
    ruling = state.apply(("EB1", "EA1"))  # red takes blue's flag (its commander now stands in a headquarters)
    assert ruling.out == (("blue", {"code": "verdict.piece_lost", "params": {"piece": "flag", "side": "blue"}}),) and ruling.result is None
    assert {r.station for r in ruling.removed} == {"EA1", "EA0", "EC0", "SC4"}
    assert not [p for p in state.board.values() if p.owner == "blue"]
    assert ruling.next_turn == "green" and state.turn == "green"
    spectator = redact_ruling(ruling, "spectator")
    assert [e for e in spectator["removed"] if "piece" in e and e["piece"] != "flag"] == []
    state.apply(("NB1", "NC1"))
    assert state.turn == "purple"
    state.apply(("WB2", "WC2"))
    assert state.turn == "red"
    state.apply(("SB3", "SC3"))
    assert state.turn == "green"  # blue is skipped


def test_an_alliance_loses_when_both_its_seats_are_out():
    state = four_seats({"EB1": ("red", "commander"), "WB1": ("green", "engineer"), "NC0": ("blue", "captain"),
                        "SC4": ("purple", "captain"), "NB3": ("green", "captain"), "SB3": ("red", "captain")})
    state.apply(("EB1", "EA1"))  # red takes blue's flag
    assert state.phase == "play"
    state.apply(("NB3", "NC3"))  # green
    state.apply(("SC4", "SD4"))  # purple
    state.apply(("SB3", "SC3"))  # red
    ruling = state.apply(("WB1", "WA1"))  # green takes purple's flag
    assert ruling.result is not None and set(ruling.result.winners) == {"red", "green"}
    assert state.phase == "over"


def test_out_pieces_obstacles_leaves_them_standing_unattackable():
    state = four_seats({"EB1": ("red", "commander"), "SC4": ("blue", "major"), "SB4": ("red", "general"),
                        "NB1": ("green", "captain"), "WB2": ("purple", "captain")}, out_pieces="obstacles")
    ruling = state.apply(("EB1", "EA1"))
    assert ruling.out == (("blue", {"code": "verdict.piece_lost", "params": {"piece": "flag", "side": "blue"}}),) and [r.station for r in ruling.removed] == ["EA1"]
    assert state.board["SC4"].owner == "blue"
    state.apply(("NB1", "NC1"))
    state.apply(("WB2", "WC2"))
    assert "SC4" not in state.destinations("SB4") and "SD4" not in state.destinations("SB4")
    assert state.why_illegal(("SB4", "SC4")) == {"code": "reason.obstacle", "params": {"station": "SC4", "owner": "blue"}}


def test_a_seat_with_no_legal_move_is_out_by_default():
    state = four_seats({"SB1": ("red", "captain"), "EB1": ("blue", "captain"), "WB1": ("purple", "captain")})
    state.apply(("SB1", "SC1"))
    ruling = state.apply(("EB1", "EC1"))  # then green (only a flag and a mine) cannot move
    assert ("green", {"code": "verdict.no_move", "params": {"side": "green"}}) in ruling.out
    assert {r.station for r in ruling.removed} == {"NA0", "NA1"}
    assert state.turn == "purple"


def test_pass_while_ally_lets_a_stuck_seat_pass_until_its_ally_is_out():
    state = four_seats({"SB1": ("red", "captain"), "EB1": ("blue", "commander"), "WB1": ("purple", "captain")},
                       no_moves="pass_while_ally")
    state.apply(("SB1", "SC1"))
    ruling = state.apply(("EB1", "EC1"))
    assert ruling.out == () and state.turn == "purple" and {"code": "notice.passes", "params": {"side": "green"}} in dict(ruling.notices).values()
    state.apply(("WB1", "WC1"))
    assert state.turn == "red"
    elim = state.put_out("red", "time")  # the arbiter: red is out, so green is alone and stuck
    assert elim.out == (("red", {"code": "verdict.arbiter", "params": {"note": "time"}}),) and elim.result is None and state.turn == "blue"
    ruling = state.apply(("EC1", "EB1"))  # green's turn: alone, it is out, and its alliance has lost
    assert ruling.out == (("green", {"code": "verdict.no_move", "params": {"side": "green"}}),)
    assert ruling.result is not None and set(ruling.result.winners) == {"blue", "purple"}


def test_the_arbiter_puts_a_seat_out_and_the_turn_moves_on():
    state = four_seats({"SB1": ("red", "captain"), "EB1": ("blue", "captain"), "NB1": ("green", "captain"),
                        "WB1": ("purple", "captain")})
    elim = state.put_out("red", "time rule")
    assert elim.out == (("red", {"code": "verdict.arbiter", "params": {"note": "time rule"}}),) and elim.next_turn == "blue" == state.turn
    assert {r.station for r in elim.removed} == {"SA0", "SA1", "SB1"} and elim.result is None
    with pytest.raises(Exception, match="already out"):
        state.put_out("red", "again")
    elim = state.put_out("green", "time rule")
    assert elim.result is not None and set(elim.result.winners) == {"blue", "purple"}


def test_losing_the_commander_shows_that_seats_flag_to_all_four_seats():
    state = four_seats({"SB1": ("red", "bomb"), "EB1": ("blue", "commander"), "SC1": ("red", "captain")})
    state.board["SB2"] = Piece(99, "commander", "blue")
    state.turn = "red"
    ruling = state.apply(("SB1", "SB2"))  # red's bomb takes blue's commander
    assert ruling.outcome == "both"
    for audience in (*GAME.sides, "spectator"):
        flag = next(p for p in view(state, audience)["pieces"] if p["station"] == "EA1")
        assert flag.get("piece") == "flag" and flag["public"]
        assert any(r["station"] == "EA1" and r["piece"] == "flag" for r in redact_ruling(ruling, audience)["reveals"])


def test_allies_see_each_other_only_with_the_option():
    for allies_see in (False, True):
        state = four_seats({"SB1": ("red", "captain")}, allies_see=allies_see)
        green = {p["station"]: p.get("piece") for p in view(state, "green")["pieces"]}
        blue = {p["station"]: p.get("piece") for p in view(state, "blue")["pieces"]}
        assert (green["SB1"] == "captain") is allies_see
        assert blue["SB1"] is None and blue["NA1"] is None  # an enemy never does


def test_turn_order_counterclockwise_by_default_or_clockwise():
    assert new_game("siguo").order == ("red", "blue", "green", "purple")
    assert new_game("siguo", {"turn_order": "clockwise"}).order == ("red", "purple", "green", "blue")
    state = four_seats({"SB1": ("red", "captain"), "EB1": ("blue", "captain"), "NB1": ("green", "captain"),
                        "WB1": ("purple", "captain")}, turn_order="clockwise")
    seen = []
    for frm, to in (("SB1", "SC1"), ("WB1", "WC1"), ("NB1", "NC1"), ("EB1", "EC1")):
        seen.append(state.turn)
        state.apply((frm, to))
    assert seen == ["red", "purple", "green", "blue"] and state.turn == "red"
