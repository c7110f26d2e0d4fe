"""Dover Patrol (seed 001): every cell of the seed's clash table through the contract and the CLI, the board's
harbour walls and the flying boat, the minelayer, and the carried flag (capture, hand-over, drop, each way to win)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from test_rules_helpers import position

from controller.cli import main
from controller.commands.rules import contract
from controller.messages import render
from controller.rules import SPECTATOR, IllegalMoveError, load_game, redact_ruling, view

GAME = "dover_patrol"

# The seed's table as printed: rows are the defender (守), columns the attacker (攻), in the seed's own orders
# (the rows put 潜艇 before 飞行艇, the columns 飞行艇 before 潜艇). A 攻胜, D 守胜, = 同尽, - the seed's "—".
SEED_COLUMNS = "旗舰 副旗舰 战斗中队 战列舰 战斗巡洋舰 轻巡洋舰 驱除舰 辅助巡洋舰 鱼雷艇 巡逻艇 扫雷艇 飞行艇 潜艇 布雷艇 水雷 军旗".split()
SEED_TABLE = """
旗舰       = D D D D D D D D D D - A - - -
副旗舰     A = D D D D D D D D D - A - - -
战斗中队   A A = D D D D D D D D - A - - -
战列舰     A A A = D D D D D D D - A - - -
战斗巡洋舰 A A A A = D D D D D D - A - - -
轻型巡洋舰 A A A A A = D D D D D - A - - -
驱除舰     A A A A A A = D D D D D A - - -
辅助巡洋舰 A A A A A A A = D D D - A - - -
鱼雷艇     A A A A A A A A = D D D D - - -
巡逻艇     A A A A A A A A A = D - A - - -
扫雷艇     A A A A A A A A A A - - A - - -
潜艇       D D D D D D D D A D - - - - - -
飞行艇     - - - - - - A - A - - - - - - -
布雷艇     D D D D D D A D D D - - - - - -
水雷       D D D D D D D D D D A - D - - -
军旗       A A A A A A A A A A A A A - - -
"""
SEED_LIST = [  # the seed's piece list: name as written, count
    ("旗舰", 1), ("副旗舰", 1), ("战斗中队", 1), ("战列舰", 2), ("战斗巡洋舰", 3), ("轻巡洋舰", 4), ("驱除舰", 4),
    ("辅助巡洋舰", 4), ("鱼雷艇", 5), ("巡逻艇", 5), ("扫雷艇", 2), ("飞行艇", 1), ("潜艇", 3), ("布雷艇", 1),
    ("水雷", 3), ("军旗", 1),
]
CANNOT_ATTACK = {"布雷艇", "水雷", "军旗"}
TABLE_NAME = {"轻型巡洋舰": "轻巡洋舰"}  # the table's spelling -> the list's


def seed_cells() -> dict[tuple[str, str], str]:
    """(attacker zh, defender zh) -> outcome, read from the transcription above."""
    cells = {}
    for line in SEED_TABLE.strip().splitlines():
        defender, *marks = line.split()
        defender = TABLE_NAME.get(defender, defender)
        assert len(marks) == 16, line
        for attacker, mark in zip(SEED_COLUMNS, marks, strict=True):
            if mark == "-":
                outcome = "illegal" if attacker in CANNOT_ATTACK else "bounce"
            else:
                outcome = {"A": "attacker", "D": "defender", "=": "both"}[mark]
            cells[(attacker, defender)] = outcome
    return cells


def test_pieces_are_the_seeds_list() -> None:
    doc = contract(GAME)
    assert [(p["zh_hans"], p["count"]) for p in doc["pieces"]] == SEED_LIST
    assert sum(p["count"] for p in doc["pieces"]) == 41
    movable = {p["zh_hans"]: (p["movable"], p["can_attack"]) for p in doc["pieces"]}
    assert movable["布雷艇"] == (True, False)
    assert movable["水雷"] == movable["军旗"] == (False, False)
    assert len(load_game(GAME).stations) == 96


def test_every_cell_of_the_seed_table() -> None:
    doc = contract(GAME)
    zh = {p["id"]: p["zh_hans"] for p in doc["pieces"]}
    cells = seed_cells()
    assert len(cells) == 256
    got = {(zh[a], zh[d]): outcome for a, row in doc["clash"].items() for d, outcome in row.items()}
    wrong = {k: (got[k], v) for k, v in cells.items() if got[k] != v}
    assert not wrong
    assert set(got.values()) == {"attacker", "defender", "both", "bounce", "illegal"}


def test_cli_json_is_the_contract(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["rules", GAME, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc == contract(GAME)
    zh = {p["id"]: p["zh_hans"] for p in doc["pieces"]}
    cells = seed_cells()
    assert all(doc["clash"][a][d] == cells[(zh[a], zh[d])] for a in doc["clash"] for d in doc["clash"][a])


# ---------------------------------------------------------------------- board and movement
def test_harbour_wall_stops_ships_and_the_entrance_lets_them_through() -> None:
    state = position(GAME, {"c1": ("red", "destroyer"), "b3": ("red", "patrol_boat"), "c3": ("red", "torpedo_boat"),
                            "e9": ("blue", "flagship")})
    assert set(state.destinations("c1")) == {"b1", "c2"}  # not d1: the east wall
    assert "b4" not in state.destinations("b3")  # the north wall
    assert "c4" in state.destinations("c3") and "d3" not in state.destinations("c3")  # the entrance is c3-c4
    with pytest.raises(IllegalMoveError):
        state.apply(("c1", "d1"))


def test_flying_boat_flies_over_the_wall_and_is_shown() -> None:
    state = position(GAME, {"b2": ("red", "flying_boat"), "c2": ("red", "minelayer"), "h12": ("blue", "flag")})
    dest = state.destinations("b2")
    assert set(dest) == {"b3", "b4", "b1", "a2"}  # b4: two squares north, over the wall between b3 and b4
    assert "d2" not in dest  # its own minelayer on c2 is in between
    ruling = state.apply(("b2", "b4"))
    assert state.board["b4"].public and any(r.station == "b4" for r in ruling.reveals)


def test_flying_boat_one_square_over_the_wall_is_a_flight() -> None:
    state = position(GAME, {"c2": ("red", "flying_boat"), "h12": ("blue", "flag")})
    assert {"d2", "e2", "c3", "c4", "c1", "b2", "a2"} == set(state.destinations("c2"))
    state.apply(("c2", "d2"))
    assert state.board["d2"].public  # crossing the wall shows it
    quiet = position(GAME, {"c2": ("red", "flying_boat"), "h12": ("blue", "flag")})
    quiet.apply(("c2", "b2"))
    assert not quiet.board["b2"].public  # an ordinary one-square move does not


def test_flying_boat_is_blocked_by_a_piece_in_between() -> None:
    state = position(GAME, {"b2": ("red", "flying_boat"), "b3": ("blue", "patrol_boat"), "h12": ("blue", "flag")})
    dest = state.destinations("b2")
    assert "b4" not in dest and "b3" in dest  # can attack b3 (no effect), cannot jump it
    assert state.why_illegal(("b2", "b4")) is not None


def test_only_the_flying_boat_crosses_a_wall() -> None:
    game = load_game(GAME)
    wall_pairs = [("c1", "d1"), ("c2", "d2"), ("c3", "d3"), ("a3", "a4"), ("b3", "b4"),
                  ("f10", "e10"), ("f11", "e11"), ("f12", "e12"), ("g10", "g9"), ("h10", "h9")]
    for piece in game.pieces:
        if not piece.movable:
            continue
        for a, b in wall_pairs:
            state = position(GAME, {a: ("red", piece.id), "d6": ("blue", "flag")})
            assert (b in state.destinations(a)) == (piece.id == "flying_boat"), (piece.id, a, b)


def test_flying_boat_exact_two_option() -> None:
    state = position(GAME, {"d5": ("red", "flying_boat"), "h12": ("blue", "flag")}, options={"flying_boat_one_step": False})
    assert set(state.destinations("d5")) == {"d7", "d3", "b5", "f5"}


def test_flying_boat_long_attack_option() -> None:
    pieces = {"d5": ("red", "flying_boat"), "f5": ("blue", "flag"), "d6": ("blue", "mine")}
    state = position(GAME, pieces)
    assert "f5" in state.destinations("d5")  # a flight may end on the enemy flag
    off = position(GAME, pieces, options={"flying_boat_long_attack": False})
    assert "f5" not in off.destinations("d5") and "d6" in off.destinations("d5")  # a one-square attack still may


def test_minelayer_moves_only_to_empty_squares_and_never_attacks() -> None:
    state = position(GAME, {"d5": ("red", "minelayer"), "d6": ("blue", "flagship"), "h12": ("blue", "flag")})
    assert set(state.destinations("d5")) == {"c5", "e5", "d4"}
    assert (state.why_illegal(("d5", "d6")) or {}).get("code") == "reason.may_not_attack"


def test_mines_and_the_flag_never_move() -> None:
    state = position(GAME, {"d5": ("red", "mine"), "e5": ("red", "flag"), "h12": ("blue", "flag")})
    assert state.destinations("d5") == {} and state.destinations("e5") == {}


def test_bounce_leaves_both_pieces_where_they_were() -> None:
    state = position(GAME, {"d5": ("red", "submarine"), "d6": ("blue", "submarine"), "h12": ("blue", "flag")})
    ruling = state.apply(("d5", "d6"))
    assert ruling.outcome == "bounce" and not ruling.removed
    assert state.board["d5"].type == "submarine" and state.board["d6"].owner == "blue"


def test_winner_goes_back_face_up_and_may_advance_as_an_option() -> None:
    state = position(GAME, {"d5": ("red", "flagship"), "d6": ("blue", "battleship"), "h12": ("blue", "flag")})
    state.apply(("d5", "d6"))
    assert state.board["d5"].type == "flagship" and state.board["d5"].public and "d6" not in state.board
    adv = position(GAME, {"d5": ("red", "flagship"), "d6": ("blue", "battleship"), "h12": ("blue", "flag")},
                   options={"winner_advances": True})
    adv.apply(("d5", "d6"))
    assert adv.board["d6"].type == "flagship" and "d5" not in adv.board


# ---------------------------------------------------------------------- the carried flag
def carriers(state) -> dict[str, list[dict[str, str]]]:
    """Station -> flags riding there, as the public view says."""
    return {p["station"]: p["carries"] for p in view(state, SPECTATOR)["pieces"] if "carries" in p}


def play(state, red_moves: list[tuple[str, str]]) -> None:
    """Red plays these moves; Blue answers each by shuttling its patrol boat between d6 and d5."""
    for move in red_moves:
        assert state.turn == "red" and state.phase == "play"
        state.apply(move)
        if state.phase != "play":
            return
        frm = "d6" if "d6" in state.board else "d5"
        state.apply((frm, "d5" if frm == "d6" else "d6"))


def test_taking_the_flag_carries_it_and_everyone_is_told() -> None:
    state = position(GAME, {"g11": ("red", "destroyer"), "g12": ("blue", "flag"), "a1": ("red", "flag"),
                            "d6": ("blue", "patrol_boat")})
    ruling = state.apply(("g11", "g12"))
    assert ruling.outcome == "attacker"
    assert not ruling.removed  # the flag does not leave the game
    assert "g12" not in state.board and state.board["g11"].type == "destroyer"  # the taker goes back with it
    assert carriers(state) == {"g11": [{"owner": "blue", "piece": "flag"}]}
    public = redact_ruling(ruling, SPECTATOR)
    assert any("takes Blue's Flag" in n and "g11" in n for n in (render(x, "en", state.game) for x in public["notices"]))
    assert state.phase == "play" and not state.out
    state.apply(("d6", "d5"))
    state.apply(("g11", "f11"))  # the flag rides along
    assert carriers(state) == {"f11": [{"owner": "blue", "piece": "flag"}]}


def test_taking_the_flag_with_winner_advances() -> None:
    state = position(GAME, {"g11": ("red", "destroyer"), "g12": ("blue", "flag"), "a1": ("red", "flag"),
                            "d6": ("blue", "patrol_boat")}, options={"winner_advances": True})
    state.apply(("g11", "g12"))
    assert "g11" not in state.board and carriers(state) == {"g12": [{"owner": "blue", "piece": "flag"}]}


def test_beating_the_carrier_takes_the_flag_over() -> None:
    state = position(GAME, {"g11": ("red", "destroyer"), "g12": ("blue", "flag"), "a1": ("red", "flag"),
                            "d6": ("blue", "patrol_boat"), "f11": ("blue", "battle_cruiser")})
    state.apply(("g11", "g12"))
    ruling = state.apply(("f11", "g11"))  # Blue's battle cruiser beats the carrier
    assert ruling.outcome == "attacker"
    assert carriers(state) == {"f11": [{"owner": "blue", "piece": "flag"}]}
    assert any("takes back Blue's Flag" in render(n, "en", state.game) for n in redact_ruling(ruling, "red")["notices"])


def test_a_carrier_that_attacks_and_loses_hands_the_flag_to_the_defender() -> None:
    state = position(GAME, {"g11": ("red", "patrol_boat"), "g12": ("blue", "flag"), "a1": ("red", "flag"),
                            "f11": ("blue", "mine"), "f10": ("red", "minesweeper"), "d6": ("blue", "patrol_boat")})
    play(state, [("g11", "g12")])
    ruling = state.apply(("g11", "f11"))  # the carrier runs into a mine
    assert ruling.outcome == "defender"
    assert carriers(state) == {"f11": [{"owner": "blue", "piece": "flag"}]}  # the mine holds it now
    state.apply(("d5", "d6"))
    ruling = state.apply(("f10", "f11"))  # a minesweeper clears the mine and takes the flag
    assert ruling.outcome == "attacker"
    assert carriers(state) == {"f10": [{"owner": "blue", "piece": "flag"}]}


@pytest.mark.parametrize(("dropped", "where"), [("base", "g12"), ("here", "g11")])
def test_a_carrier_sunk_with_no_winner_drops_the_flag(dropped: str, where: str) -> None:
    state = position(GAME, {"g11": ("red", "destroyer"), "g12": ("blue", "flag"), "a1": ("red", "flag"),
                            "f11": ("blue", "destroyer"), "d6": ("blue", "patrol_boat")},
                     options={"dropped_flag": dropped})
    state.apply(("g11", "g12"))
    ruling = state.apply(("f11", "g11"))  # destroyer against destroyer: both sink
    assert ruling.outcome == "both"
    assert carriers(state) == {}
    assert state.board[where].type == "flag" and state.board[where].owner == "blue" and state.board[where].public
    assert any("Blue's Flag" in n and where in n for n in (render(x, "en", state.game) for x in redact_ruling(ruling, SPECTATOR)["notices"]))


RAID = {"g10": ("red", "flying_boat"), "g12": ("blue", "flag"), "a1": ("red", "flag"), "d6": ("blue", "patrol_boat")}
# Red's flying boat takes Blue's flag from g12 (a flight over g11, so it stays on g10), then flies home to b1
FLIGHT_HOME = [("g10", "g12"), ("g10", "g8"), ("g8", "g6"), ("g6", "g4"), ("g4", "g2"), ("g2", "e2"), ("e2", "c2"),
               ("c2", "b2")]


def test_bringing_the_enemy_flag_to_your_base_wins() -> None:
    state = position(GAME, RAID)
    play(state, FLIGHT_HOME[:1])
    assert carriers(state) == {"g10": [{"owner": "blue", "piece": "flag"}]}
    play(state, FLIGHT_HOME[1:])
    assert state.phase == "play"  # b2 is in the harbour, not on the base
    play(state, [("b2", "b1")])
    assert state.result is not None and state.result.winners == ("red",)
    assert render(state.result.reason, "en", state.game) == "Red brought Blue's Flag to its base (b1)"
    assert state.out == {"blue": state.result.reason}
    assert state.history[-1].out == (("blue", state.result.reason),)


@pytest.mark.parametrize("rule", ["home", "both_home"])
def test_both_home_needs_your_own_flag_on_your_base(rule: str) -> None:
    pieces = {**RAID, "a2": ("blue", "battleship"), "a3": ("red", "submarine")}
    state = position(GAME, pieces, options={"flag_win": rule})
    state.apply(("g10", "g12"))
    state.apply(("a2", "a1"))  # Blue takes Red's flag; the battleship stays on a2 with it
    assert carriers(state) == {"g10": [{"owner": "blue", "piece": "flag"}], "a2": [{"owner": "red", "piece": "flag"}]}
    play(state, FLIGHT_HOME[1:] + [("b2", "b1")])
    if rule == "home":
        assert state.result is not None and state.result.winners == ("red",)
        return
    assert state.phase == "play"  # Blue's flag is on Red's base, but Red's own flag is away
    play(state, [("a3", "a2")])  # the submarine sinks the battleship and takes back Red's flag
    assert carriers(state)["a3"] == [{"owner": "red", "piece": "flag"}]
    play(state, [("a3", "a2")])
    assert state.phase == "play"  # a2 is not the base
    play(state, [("a2", "a1")])
    assert state.result is not None and state.result.winners == ("red",)


def test_first_capture_wins_at_once() -> None:
    state = position(GAME, RAID, options={"flag_win": "first_capture"})
    ruling = state.apply(("g10", "g12"))
    assert state.result is not None and state.result.winners == ("red",)
    assert [r.type for r in ruling.removed] == ["flag"]


def test_a_silent_carrier_is_not_named() -> None:
    state = position(GAME, {"g11": ("red", "destroyer"), "g12": ("blue", "flag"), "a1": ("red", "flag"),
                            "d6": ("blue", "patrol_boat")}, options={"reveal": "silent"})
    ruling = state.apply(("g11", "g12"))
    entry = next(p for p in view(state, "blue")["pieces"] if p["station"] == "g11")
    assert entry["carries"] == [{"owner": "blue", "piece": "flag"}] and "piece" not in entry
    assert [render(n, "en", state.game) for n in redact_ruling(ruling, "blue")["notices"]] == ["Red's piece on g11 takes Blue's Flag: put it on the taker."]


def test_moving_a_wall_is_an_edit_of_the_sea_lines() -> None:
    """The documented edit (docs/games/dover_patrol.md): Red's entrance moved from c3-c4 to c2-d2."""
    from controller.rules import parse_game
    from controller.rules.state import GameState

    text = Path(load_game(GAME).file).read_text(encoding="utf-8")
    for old, new in (('- {kind: sea, path: "a2 b2 c2"}   # wall between c2|d2\n  - {kind: sea, path: "d2 e2 f2 g2 h2"}',
                      '- {kind: sea, path: "a2 b2 c2 d2 e2 f2 g2 h2"}'),
                     ('- {kind: sea, path: "c1 c2 c3 c4 c5 c6 c7 c8 c9 c10 c11 c12"}',
                      '- {kind: sea, path: "c1 c2 c3"}\n  - {kind: sea, path: "c4 c5 c6 c7 c8 c9 c10 c11 c12"}')):
        assert text.count(old) == 1
        text = text.replace(old, new)
    game = parse_game(text, "edited.yaml")
    state = GameState(game)
    state.board.update(position(GAME, {"c2": ("red", "destroyer"), "c3": ("red", "torpedo_boat")}).board)
    state.phase = "play"
    assert "d2" in state.destinations("c2") and "c4" not in state.destinations("c3")


def test_a_dropped_flag_with_both_base_squares_taken_goes_to_the_nearest_empty_square_of_its_base() -> None:
    # Red's destroyer takes Blue's flag (g12) and sails out of Blue's harbour; a Blue patrol boat moves onto g12 and a
    # Blue mine holds h12, so both base squares are taken when the carrier and a Blue destroyer sink each other at f7.
    state = position(GAME, {"g11": ("red", "destroyer"), "g12": ("blue", "flag"), "h12": ("blue", "mine"),
                            "a1": ("red", "flag"), "f12": ("blue", "patrol_boat"), "e7": ("blue", "destroyer")})
    for red, blue in [(("g11", "g12"), ("f12", "g12")), (("g11", "g10"), ("e7", "e6")), (("g10", "f10"), ("e6", "e7")),
                      (("f10", "f9"), ("e7", "e6")), (("f9", "f8"), ("e6", "e7"))]:
        state.apply(red)
        state.apply(blue)
    assert carriers(state) == {"f8": [{"owner": "blue", "piece": "flag"}]}
    assert state.board["g12"].type == "patrol_boat" and state.board["h12"].type == "mine"
    state.apply(("f8", "f7"))
    ruling = state.apply(("e7", "f7"))  # destroyer against destroyer: both sink, far from Blue's base
    assert ruling.outcome == "both" and carriers(state) == {}
    flags = [s for s, p in state.board.items() if p.type == "flag" and p.owner == "blue"]
    # not where the carrier sank (f7): the empty square nearest Blue's base (one sea step from it, board order)
    assert flags == ["g11"], flags
    assert state.board["g11"].public
    assert any("g11" in json.dumps(n) for n in redact_ruling(ruling, SPECTATOR)["notices"])
