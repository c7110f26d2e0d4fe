"""Land-sea-air chess at the edges: a side left with no legal move loses at once (the game never waits for a move that
cannot exist), and a submarine that meets a missile survives it whichever strikes (seed 003, s5 and s17)."""

from __future__ import annotations

import pytest
from test_rules_helpers import position

from controller.rules import SPECTATOR, IllegalMoveError, view

FLAGS = {"a2": ("red", "flag"), "o2": ("blue", "flag")}


@pytest.mark.parametrize(("option", "outcome"), [(None, "attacker"), ("missile_dies", "attacker"), ("both", "both")])
def test_a_submarine_striking_a_missile_on_the_water_survives_and_the_missile_dies(option: str | None, outcome: str) -> None:
    options = {} if option is None else {"submarine_strikes_missile": option}
    state = position("sanjunqi", {**FLAGS, "g1": ("red", "submarine"), "g2": ("blue", "missile"), "k3": ("blue", "infantry")},
                     turn="red", options=options)
    ruling = state.apply(("g1", "g2"))
    assert ruling.outcome == outcome
    assert "g1" not in state.board
    if outcome == "attacker":
        assert state.board["g2"].type == "submarine" and state.board["g2"].owner == "red"
        assert [(r.owner, r.type) for r in ruling.removed] == [("blue", "missile")]
    else:
        assert "g2" not in state.board


def test_a_missile_striking_a_submarine_misses_and_the_submarine_slips_one_step_away() -> None:
    state = position("sanjunqi", {**FLAGS, "g3": ("red", "submarine"), "b3": ("blue", "missile"), "e6": ("red", "infantry")},
                     turn="blue")
    ruling = state.apply(("b3", "g3"))
    assert ruling.outcome == "defender"
    assert [(r.owner, r.type) for r in ruling.removed] == [("blue", "missile")]
    subs = [s for s, p in state.board.items() if p.type == "submarine"]
    assert len(subs) == 1 and subs[0] != "g3"  # pushed one step away


# Positions where the side to move has pieces left but none can move: only frozen (HQ) or immobile pieces.
STUCK = {
    "hq_officers_and_immobile_weapons": {  # issue 23: a fort, a trap, the flag and two officers in headquarters
        **FLAGS, "e3": ("red", "infantry"), "e4": ("red", "commander"),
        "o3h": ("blue", "commander"), "o5": ("blue", "infantry"), "j1": ("blue", "fort"), "k3": ("blue", "trap")},
}


def test_a_side_whose_only_pieces_stand_in_headquarters_or_never_move_loses_at_once() -> None:
    state = position("sanjunqi", STUCK["hq_officers_and_immobile_weapons"], turn="red")
    assert not state.legal_moves("blue")
    ruling = state.apply(next(m for m in state.legal_moves("red") if m.to not in state.board))
    assert ruling.result is not None and ruling.result.winners == ("red",)
    assert state.phase == "over"
    assert [(side, why["code"]) for side, why in ruling.out] == [("blue", "verdict.no_move")]


def test_the_move_generator_and_the_referee_agree_on_frozen_and_immobile_pieces() -> None:
    # one source of truth: what the generator never offers, the referee refuses with a reason, and vice versa
    state = position("sanjunqi", STUCK["hq_officers_and_immobile_weapons"], turn="blue")
    assert state.legal_moves() == []
    for frm in ("o3h", "o5", "j1", "k3", "o2"):
        for to in state.game.station_ids:
            if to != frm:
                assert state.why_illegal((frm, to)) is not None
                with pytest.raises(IllegalMoveError):
                    state.apply((frm, to))


def test_the_last_movable_piece_entering_the_enemy_headquarters_loses_when_its_side_must_move_again() -> None:
    # issue 23's other case: Red's last movable piece, an artillery, goes into Blue's HQ and is frozen there
    state = position("sanjunqi", {**FLAGS, "n5": ("red", "artillery"), "k3": ("blue", "infantry")}, turn="red")
    ruling = state.apply(("n5", "o5"))
    assert ruling.result is None and state.turn == "blue"
    ruling = state.apply(next(iter(state.legal_moves())))
    assert ruling.result is not None and ruling.result.winners == ("blue",)
    assert view(state, SPECTATOR)["phase"] == "over"
