"""The `facedown` bot's deeper look, its last movers and its reading of move patterns, and `facedown-classic`, the
bot before them, kept to measure against."""

from __future__ import annotations

import random
import time
from collections import Counter
from typing import Any

import pytest

from controller.bots import RandomBot, find_bot
from controller.bots.arena import play_game
from controller.bots.facedown import CLASSIC_LEVELS, LEVELS, WIN, FaceDownBot, FaceDownClassic
from controller.bots.setups import built_setup
from controller.bots.values import worth
from controller.rules import GameState, new_game, redact_ruling, view
from controller.rules.base import Piece


def _laid(layout: dict[str, tuple[str, str]]) -> dict[str, Piece]:
    return {s: Piece(i, kind, side) for i, (s, (kind, side)) in enumerate(layout.items())}


def _playing(game: str) -> GameState:
    """A game of ``game`` in play (both sides deployed by rule-built setups): a test then lays its own board."""
    st = new_game(game)
    rng = random.Random(1)
    for side in st.game.sides:
        st.deploy(side, built_setup(st.game, side, rng))
    return st


def _bot(cls: type[FaceDownBot], game: str, seat: str = "red") -> tuple[FaceDownBot, GameState]:
    st = _playing(game)
    bot = cls(1)
    bot.new_game(game, seat, st.options, 1)
    return bot, st


def test_classic_is_found_by_name_with_the_levels_of_the_bot_before() -> None:
    assert isinstance(find_bot("facedown-classic"), FaceDownClassic)
    assert find_bot("facedown-classic:5").spec == CLASSIC_LEVELS[5]
    assert CLASSIC_LEVELS[3].positions == 1300 and not any(lv.deep for lv in CLASSIC_LEVELS.values())
    assert find_bot("facedown").spec == LEVELS[3] and LEVELS[3].deep > 0
    with pytest.raises(ValueError, match="levels"):
        find_bot("facedown-classic:9")


def test_a_side_left_with_no_piece_that_moves_is_scored_as_losing() -> None:
    """Navy chess (Taiwan) seed 188 against greedy: down to one moving ship, the bot traded it for the enemy capital
    ship and lost on its next turn with nothing left to move, a ply past what its look-ahead scored. Having no mover
    now scores near a loss, and the last movers count for more than their rank; the bot before barely told them
    apart."""
    layout = {"j4": ("flag", "red"), "a1": ("bomb", "red"), "a10": ("flag", "blue"), "b10": ("general", "blue"),
              "c10": ("colonel", "blue")}
    for cls, gap in ((FaceDownBot, WIN / 4), (FaceDownClassic, 0.0)):
        bot, st = _bot(cls, "stratego")
        w = worth(st)
        st.board = _laid({**layout, "e4": ("miner", "red")})
        st.turn = "blue"
        one_left = bot.evaluate(st, w)
        st.board = _laid(layout)
        st.turn = "blue"
        none_left = bot.evaluate(st, w)
        assert one_left - none_left > gap + w.value["miner"]
        if cls is FaceDownBot:  # the n-th last mover is worth LAST_MOVERS / n beyond its rank
            st.board = _laid({**layout, "e4": ("miner", "red"), "f4": ("miner", "red")})
            two_left = bot.evaluate(st, w)
            assert two_left - one_left > w.value["miner"] + 2.0


def test_a_mover_boxed_in_when_its_turn_comes_is_no_move_either() -> None:
    """A last mover with every station round it held by its own pieces that never move cannot move on its turn."""
    bot, st = _bot(FaceDownBot, "stratego")
    w = worth(st)
    free = {"a10": ("flag", "blue"), "b10": ("general", "blue"), "a1": ("flag", "red"), "b1": ("bomb", "red"),
            "a2": ("sergeant", "red")}
    st.board = _laid(free)
    st.turn = "blue"
    assert st.has_legal_move("red")
    can = bot.evaluate(st, w)
    st.board = _laid({**free, "b2": ("bomb", "red"), "a3": ("bomb", "red")})
    st.turn = "blue"
    assert not st.has_legal_move("red")
    assert can - bot.evaluate(st, w) > WIN / 4


def _chase(reads: bool) -> tuple[Any, int]:
    """Stratego: our marshal stands shown on e4; an unknown blue piece steps up beside it (e6 -> e5)."""
    from controller.bots.belief import Belief

    st = _playing("stratego")
    st.board = _laid({"e4": ("marshal", "red"), "a1": ("flag", "red"), "e6": ("spy", "blue"), "j10": ("flag", "blue"),
                      "a10": ("bomb", "blue")})
    st.board["e4"].public = True
    st.turn = "blue"
    belief = Belief(st.game, "red", st.options)
    belief.reads_moves = reads
    belief.update(view(st, "red"))
    mover = st.board["e6"].uid
    ruling = st.apply(("e6", "e5"))
    belief.update(view(st, "red"), redact_ruling(ruling, "red"))
    return belief, mover


def test_a_piece_that_steps_up_to_a_piece_it_has_seen_is_likelier_one_that_beats_it() -> None:
    """A belief that learns from move patterns: an unknown piece that walks up beside our shown marshal is likelier
    the one kind that takes a marshal (the spy) and less likely any that loses to it. Only a lean: what it may be is
    unchanged (so the belief still holds the truth), and the classic bot does not read it."""
    belief, mover = _chase(True)
    classic, _ = _chase(False)
    assert belief.possible[mover] == classic.possible[mover]
    lean = belief.lean[mover]
    assert lean["spy"] > 1.0 and lean["sergeant"] < 1.0 and classic.lean == {}
    rng_a, rng_b = random.Random(5), random.Random(5)
    spies = Counter(belief.sample(rng_a)[mover] == "spy" for _ in range(400))[True]
    spies_before = Counter(classic.sample(rng_b)[mover] == "spy" for _ in range(400))[True]
    assert spies > 1.4 * spies_before


def test_the_deeper_look_weighs_the_best_moves_of_the_first_in_the_same_guesses() -> None:
    """The default level's deeper look: after the first look, its best moves are played again in fresh guesses,
    answered by every enemy move and our reply; every candidate gets the same number of whole rounds."""
    bot = FaceDownBot()
    st = _playing("stratego")
    bot.new_game("stratego", "red", st.options, 3)
    bot.observe(view(st, "red"))
    seen: dict[str, Any] = {}
    real = bot._deeper

    def spy(*args: Any) -> dict[Any, float]:
        out = real(*args)
        seen["out"], seen["looked"] = out, bot.looked
        return out

    bot._deeper = spy  # type: ignore[method-assign]
    move = bot.choose_move(view(st, "red"), 60_000)
    assert len(seen["out"]) == LEVELS[3].deep and move in seen["out"]
    assert LEVELS[3].positions <= seen["looked"] < LEVELS[3].positions * 1.2  # work, stopped at the level's


def test_the_default_level_with_its_deeper_look_plays_the_same_game_on_a_slower_machine() -> None:
    """Levels remain work: the default level, deeper look included, plays move for move alike with a clock running
    ten times faster (a Pi Zero 2 W), as long as the host's budget allows."""

    def game(speed: float) -> list[tuple[str, str]]:
        bot = FaceDownBot()
        start = time.perf_counter()
        bot.clock = lambda: start + (time.perf_counter() - start) * speed  # type: ignore[method-assign]
        moves: list[tuple[str, str]] = []

        def watch(st: GameState, side: str, seen: dict, event: dict | None) -> None:
            if event is not None and event.get("side") == "red":
                moves.append((event["from"], event["to"]))

        play_game("luzhanqi", {"red": bot, "blue": RandomBot()}, {"red": "facedown", "blue": "random"}, seed=6,
                  max_plies=24, time_ms=120_000, watch=watch)
        return moves

    quick = game(1.0)
    assert len(quick) >= 10 and game(10.0) == quick


def test_a_door_to_the_flag_beside_a_piece_that_stops_the_intruder_is_shut() -> None:
    """L'Attaque seed 3 against the bot before: a known captain two steps from the flag, the station between empty,
    and our captain one step from standing beside that station played elsewhere; the open door cost the same
    whether or not a piece of ours would remove whatever stepped in. A door beside a piece of ours that stops the
    intruder (beats it or trades with it) is shut now; the bot before counts it open."""
    layout = {"j4": ("flag", "red"), "j6": ("colonel", "blue"), "a10": ("flag", "blue"), "a1": ("sergeant", "red")}
    gaps = {}
    for cls in (FaceDownBot, FaceDownClassic):
        bot, st = _bot(cls, "stratego")
        w = worth(st)
        scores = {}
        for general_on in ("i5", "h5"):  # i5 is beside j5, the door; h5 is not
            st.board = _laid({**layout, general_on: ("general", "red")})
            st.turn = "blue"
            scores[general_on] = bot.evaluate(st, w)
        gaps[cls] = scores["i5"] - scores["h5"]
    assert gaps[FaceDownBot] > 1.2 and gaps[FaceDownClassic] < 0.5
