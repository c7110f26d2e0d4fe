"""One source of truth for "can this side move": in every game, whenever the game is not over the side to move has a
legal move (the same generator that refuses moves decides the end of the game), and at the table the referee
announces game_over exactly when the engine ends the game."""

from __future__ import annotations

import io
import json
import random

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_rules_helpers import deployed

from controller.commands.script import run_script
from controller.rules import game_ids, load_game, reactions
from tests.physical import random_game_script

GAMES = game_ids()


def _options(game: str, rng: random.Random) -> dict:
    return {o.id: rng.choice(o.choices) for o in load_game(game).options.values() if o.choices}


def _aggressive(state, moves, rng):
    """Attack more often than not, so armies thin out and sides run out of moves within a few hundred plies."""
    attacks = [m for m in moves if m.to in state.board]
    return rng.choice(attacks) if attacks and rng.random() < 0.7 else rng.choice(moves)


@settings(max_examples=30, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(game=st.sampled_from(GAMES), seed=st.integers(0, 100_000))
def test_a_game_in_play_always_has_a_legal_move_for_the_side_to_move(game: str, seed: int) -> None:
    rng = random.Random(seed)
    state = deployed(game, seed, _options(game, rng))
    for _ in range(2000):
        if state.phase != "play":
            break
        for offer in reactions.offers(state):  # answer open reaction offers at random (reactions: ask)
            if rng.random() < 0.5:
                reactions.answer(state, offer.side, offer.id, True)
        moves = state.legal_moves()
        assert moves, f"{game} seed {seed}: {state.turn} to move at ply {state.ply} has no legal move, game not over"
        assert all(state.why_illegal(m) is None for m in moves[:20])
        state.apply(_aggressive(state, moves, rng))


@settings(max_examples=len(GAMES), deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(game=st.sampled_from(GAMES), seed=st.integers(0, 10_000))
def test_the_referee_announces_game_over_exactly_when_the_engine_ends_the_game(game: str, seed: int) -> None:
    script = random_game_script(game, seed, max_plies=600, policy=_aggressive)
    out = io.StringIO()
    run_script(game, script.text(), out)
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    over = [e for e in events if e["event"] == "game_over"]
    assert len(over) == (1 if script.state.phase == "over" else 0), (game, seed, script.state.phase)
    if over:
        assert set(over[0]["winners"]) == set(script.state.result.winners)
