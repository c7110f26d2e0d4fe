"""Stratego and L'Attaque rules: scouts, lakes and rivers, spy and miner, flag capture, no legal move, the
two-squares rule, where a clash winner stands and what a clash reveals."""

from __future__ import annotations

import pytest
from test_rules_helpers import position

from controller.rules import IllegalMoveError, redact_ruling, view

FLAGS = {"a1": ("red", "flag"), "j10": ("blue", "flag")}
LFLAGS = {"a1": ("red", "flag"), "i10": ("blue", "flag")}


def test_scout_goes_any_distance_straight_over_empty_squares() -> None:
    state = position("stratego", {**FLAGS, "a3": ("red", "scout"), "j9": ("blue", "sergeant")})
    dests = set(state.destinations("a3"))
    assert dests == {"a2"} | {f"a{r}" for r in range(4, 11)} | {f"{f}3" for f in "bcdefghij"}
    ruling = state.apply(("a3", "a9"))
    assert ruling.kind == "move" and state.board["a9"].type == "scout"


def test_scout_does_not_cross_a_lake_or_a_piece() -> None:
    state = position("stratego", {**FLAGS, "c3": ("red", "scout"), "f3": ("red", "miner"), "j9": ("blue", "sergeant")})
    dests = set(state.destinations("c3"))
    assert "c4" in dests and "c5" not in dests and "c7" not in dests  # c5 is lake
    assert {"d3", "e3"} <= dests and not dests & {"f3", "g3"}  # own miner on f3 blocks
    assert state.why_illegal(("c3", "c7")) == {"code": "reason.cannot_reach", "params": {"piece": "scout", "from": "c3", "to": "c7"}}
    assert state.why_illegal(("c3", "c5")) == {"code": "reason.impassable", "params": {"station": "c5"}}


def test_lattaque_scout_does_not_cross_a_river() -> None:
    state = position("lattaque", {**LFLAGS, "e3": ("red", "scout"), "h9": ("blue", "sergeant")})
    dests = set(state.destinations("e3"))
    assert "e4" in dests and not dests & {"e5", "e6", "e7"}
    state2 = position("lattaque", {**LFLAGS, "d3": ("red", "scout"), "h9": ("blue", "sergeant")})
    assert {"d5", "d6", "d10"} <= set(state2.destinations("d3"))  # column d has no river


def test_a_long_scout_move_shows_the_scout_to_everyone() -> None:
    state = position("stratego", {**FLAGS, "a3": ("red", "scout"), "j9": ("blue", "sergeant")})
    ruling = state.apply(("a3", "a8"))
    assert state.board["a8"].public
    assert redact_ruling(ruling, "blue")["piece"] == "scout"
    short = position("stratego", {**FLAGS, "a3": ("red", "scout"), "j9": ("blue", "sergeant")})
    short.apply(("a3", "a4"))
    assert not short.board["a4"].public
    assert "piece" not in redact_ruling(short.history[-1], "blue")


@pytest.mark.parametrize("game", ["stratego", "lattaque"])
def test_scout_long_attack_option(game: str) -> None:
    pieces = {"a1": ("red", "flag"), "b10": ("blue", "flag"), "a3": ("red", "scout"), "a8": ("blue", "sergeant"),
              "f3": ("red", "scout"), "f4": ("blue", "sergeant")}
    state = position(game, pieces)
    assert "a8" in state.destinations("a3")
    assert state.apply(("a3", "a8")).kind == "attack"
    off = position(game, pieces, options={"scout_long_attack": False})
    assert "a8" not in off.destinations("a3") and "a7" in off.destinations("a3")
    assert off.why_illegal(("a3", "a8")) == {"code": "reason.cannot_reach", "params": {"piece": "scout", "from": "a3", "to": "a8"}}
    assert "f4" in off.destinations("f3")  # a one-square scout attack is always allowed
    assert off.apply(("f3", "f4")).kind == "attack"


def test_spy_beats_the_marshal_only_when_attacking() -> None:
    pieces = {**FLAGS, "e5": ("red", "spy"), "e6": ("blue", "marshal"), "b2": ("red", "sergeant"), "h9": ("blue", "sergeant")}
    state = position("stratego", pieces)
    assert state.apply(("e5", "e6")).outcome == "attacker"
    assert state.board["e6"].type == "spy"
    other = position("stratego", pieces, turn="blue")
    assert other.apply(("e6", "e5")).outcome == "attacker"
    assert other.board["e5"].type == "marshal"


def test_miner_beats_bomb_and_others_die_on_it() -> None:
    pieces = {**FLAGS, "e4": ("red", "miner"), "e5": ("blue", "bomb"), "b2": ("red", "sergeant"), "h9": ("blue", "sergeant")}
    state = position("stratego", pieces)
    assert state.apply(("e4", "e5")).outcome == "attacker"
    assert state.board["e5"].type == "miner"
    marshal = position("stratego", {**pieces, "e4": ("red", "marshal")})
    assert marshal.apply(("e4", "e5")).outcome == "defender"
    assert "e4" not in marshal.board and marshal.board["e5"].type == "bomb"


def test_bombs_and_flags_never_move() -> None:
    state = position("stratego", {**FLAGS, "e4": ("red", "bomb"), "h9": ("blue", "sergeant")})
    assert state.destinations("e4") == {} and state.destinations("a1") == {}
    assert state.why_illegal(("e4", "e5")) == {"code": "reason.piece_immobile", "params": {"piece": "bomb", "station": "e4"}}


def test_capturing_the_flag_wins() -> None:
    state = position("stratego", {**FLAGS, "j9": ("red", "scout"), "b2": ("blue", "sergeant")})
    ruling = state.apply(("j9", "j10"))
    assert ruling.outcome == "attacker"
    assert state.phase == "over" and state.result is not None and state.result.winners == ("red",)
    assert ruling.out == (("blue", {"code": "verdict.piece_lost", "params": {"piece": "flag", "side": "blue"}}),)
    with pytest.raises(Exception, match="over"):
        state.apply(("j10", "j9"))


def test_a_player_with_no_legal_move_loses() -> None:
    # Blue's only movable piece dies attacking; when Blue's turn comes again it cannot move and loses.
    state = position("stratego", {**FLAGS, "e4": ("red", "sergeant"), "h9": ("blue", "bomb"), "e6": ("blue", "scout")})
    ruling = state.apply(("e4", "e5"))
    assert state.phase == "play" and state.turn == "blue"
    state.apply(("e6", "e5"))  # blue scout attacks the sergeant and dies: Blue has no movable piece left
    assert state.phase == "play" and state.turn == "red"
    last = state.apply(("e5", "e6"))  # now Blue, to move, has no legal move
    assert last.out == (("blue", {"code": "verdict.no_move", "params": {"side": "blue"}}),) and last.next_turn is None
    assert state.phase == "over" and state.result is not None
    assert state.result.winners == ("red",) and state.result.reason["code"] == "verdict.no_move"
    assert ruling.next_turn == "blue"


def test_both_sides_stuck_is_a_draw() -> None:
    state = position("stratego", {**FLAGS, "e4": ("red", "sergeant"), "h9": ("blue", "bomb"), "e5": ("blue", "sergeant")})
    ruling = state.apply(("e4", "e5"))  # equal ranks: both go; nobody has a movable piece
    assert ruling.outcome == "both"
    assert state.phase == "over" and state.result is not None and state.result.draw
    assert state.result.reason == {"code": "verdict.nobody_moves", "params": {}}


@pytest.mark.parametrize(("limit", "game"), [(5, "stratego"), (3, "stratego"), (5, "lattaque"), (3, "lattaque")])
def test_two_squares_rule(limit: int, game: str) -> None:
    flags = FLAGS if game == "stratego" else LFLAGS
    pieces = {**flags, "e2": ("red", "sergeant"), "h8": ("blue", "sergeant"), "b8": ("blue", "sergeant")}
    state = position(game, pieces, options={"two_squares": limit})
    shuttle = [("e2", "e3"), ("e3", "e2")]
    blue = [("h8", "h7"), ("b8", "b7"), ("h7", "h8"), ("b7", "b8")]  # two blue pieces take turns: no run
    for i in range(limit):
        state.apply(shuttle[i % 2])
        state.apply(blue[i % 4])
    nxt = shuttle[limit % 2]  # the (limit+1)th move between the same two squares
    reason = state.why_illegal(nxt)
    assert reason is not None and reason["code"] == "reason.two_squares" and reason["params"]["count"] == limit
    assert nxt[1] not in state.destinations(nxt[0])
    assert nxt not in state.legal_moves()
    with pytest.raises(IllegalMoveError, match="reason.two_squares"):
        state.apply(nxt)
    # another square is fine, and so is the shuttle after one move elsewhere
    side_step = (nxt[0], "f2" if nxt[0] == "e2" else "f3")
    assert state.why_illegal(side_step) is None
    free = position(game, pieces, options={"two_squares": limit})
    for i in range(limit - 1):
        free.apply(shuttle[i % 2])
        free.apply(blue[i % 4])
    assert free.why_illegal(shuttle[(limit - 1) % 2]) is None  # the limit-th move itself is allowed


def test_two_squares_rule_is_off_in_lattaque_by_default() -> None:
    state = position("lattaque", {**LFLAGS, "e2": ("red", "sergeant"), "h8": ("blue", "sergeant")})
    for i in range(12):
        state.apply([("e2", "e3"), ("e3", "e2")][i % 2])
        state.apply([("h8", "h7"), ("h7", "h8")][i % 2])
    assert state.phase == "play"


def test_lattaque_winner_goes_back_to_its_own_square_face_up() -> None:
    pieces = {**LFLAGS, "d4": ("red", "colonel"), "d5": ("blue", "sergeant"), "h9": ("blue", "scout"), "b2": ("red", "scout")}
    state = position("lattaque", pieces)
    ruling = state.apply(("d4", "d5"))
    assert ruling.outcome == "attacker"
    assert state.board["d4"].type == "colonel" and "d5" not in state.board
    assert state.board["d4"].public
    assert next(e for e in view(state, "spectator")["pieces"] if e["station"] == "d4")["piece"] == "colonel"
    # a defender that wins stays on its square, face-up too
    other = position("lattaque", {**pieces, "d5": ("blue", "general")})
    assert other.apply(("d4", "d5")).outcome == "defender"
    assert other.board["d5"].public and "d4" not in other.board


def test_lattaque_winner_advances_option() -> None:
    pieces = {**LFLAGS, "d4": ("red", "colonel"), "d5": ("blue", "sergeant"), "h9": ("blue", "scout")}
    state = position("lattaque", pieces, options={"winner_advances": True})
    state.apply(("d4", "d5"))
    assert state.board["d5"].type == "colonel" and "d4" not in state.board


def test_stratego_winner_advances_by_default() -> None:
    pieces = {**FLAGS, "e4": ("red", "colonel"), "e5": ("blue", "sergeant"), "h9": ("blue", "scout")}
    state = position("stratego", pieces)
    state.apply(("e4", "e5"))
    assert state.board["e5"].type == "colonel" and "e4" not in state.board
    back = position("stratego", pieces, options={"winner_advances": False})
    back.apply(("e4", "e5"))
    assert back.board["e4"].type == "colonel" and "e5" not in back.board


def test_stratego_open_reveal_makes_both_clash_pieces_public() -> None:
    pieces = {**FLAGS, "e4": ("red", "colonel"), "e5": ("blue", "marshal"), "h9": ("blue", "scout"), "b2": ("red", "scout")}
    state = position("stratego", pieces)
    ruling = state.apply(("e4", "e5"))
    assert ruling.outcome == "defender"
    assert state.board["e5"].public
    assert {(r.station, r.type, r.to) for r in ruling.reveals} == {("e4", "colonel", ("all",)), ("e5", "marshal", ("all",))}
    for audience in ("red", "blue", "spectator"):
        told = redact_ruling(ruling, audience)
        assert told["piece"] == "colonel" and told["defender_piece"] == "marshal"
        assert next(e for e in view(state, audience)["pieces"] if e["station"] == "e5")["piece"] == "marshal"
    # pieces not in the clash stay hidden
    assert "piece" not in next(e for e in view(state, "red")["pieces"] if e["station"] == "h9")


def test_stratego_silent_option_reveals_nothing() -> None:
    pieces = {**FLAGS, "e4": ("red", "colonel"), "e5": ("blue", "marshal"), "h9": ("blue", "scout"), "b2": ("red", "scout")}
    state = position("stratego", pieces, options={"reveal": "silent"})
    ruling = state.apply(("e4", "e5"))
    assert ruling.reveals == () and not state.board["e5"].public
    assert "defender_piece" not in redact_ruling(ruling, "red")
    assert "piece" not in redact_ruling(ruling, "blue")
