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
from controller.bots.facedown import (
    APPROACH,
    CLASSIC_LEVELS,
    LATE,
    LEVELS,
    SEALED,
    STALL_FROM,
    STALL_RAMP,
    UNREACHED,
    WIN,
    FaceDownBot,
    FaceDownClassic,
)
from controller.bots.setups import built_setup
from controller.bots.values import way_down, worth
from controller.rules import GameState, new_game, redact_ruling, view
from controller.rules.base import Piece
from controller.rules.state import Move


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


def _seen(game: str, layout: dict[str, tuple[str, str]], move: tuple[str, str], watched: str,
          shown: tuple[str, ...] = (), **flags: bool) -> tuple[Any, int]:
    """Red's belief (with ``flags`` set on it) after seeing ``move`` played on a board of ``layout`` (the pieces on
    ``shown`` public), and the uid of the piece on ``watched``."""
    from controller.bots.belief import Belief

    st = _playing(game)
    st.board = _laid(layout)
    for s in shown:
        st.board[s].public = True
    st.turn = st.board[move[0]].owner
    belief = Belief(st.game, "red", st.options)
    for name, on in flags.items():
        setattr(belief, name, on)
    belief.update(view(st, "red"))
    uid = st.board[watched].uid
    ruling = st.apply(move)
    belief.update(view(st, "red"), redact_ruling(ruling, "red"))
    return belief, uid


def _chase(reads: bool) -> tuple[Any, int]:
    """Stratego: our marshal stands shown on e4; an unknown blue piece steps up beside it (e6 -> e5)."""
    return _seen("stratego", {"e4": ("marshal", "red"), "a1": ("flag", "red"), "e6": ("spy", "blue"),
                              "j10": ("flag", "blue"), "a10": ("bomb", "blue")}, ("e6", "e5"), "e6", ("e4",),
                 reads_moves=reads)


def test_a_moving_flag_is_hardly_a_piece_far_from_its_home_rows() -> None:
    """Navy chess (Taiwan), where the flag sails: seed 2 against the bot before, a piece that had sailed from the
    enemy's rows into our half (J0) was the enemy's flag in one guess of six, more than the real flag shuffling at
    home, and our destroyer struck it and sank. A moved piece each step outside its side's deployment area is the
    flag FLAG_ABROAD times less often; a moved piece at home as often as before, and the classic bot reads nothing."""
    from controller.bots.belief import FLAG_ABROAD, Belief

    assert FLAG_ABROAD < 0.5
    layout = {"A3": ("flag", "red"), "B3": ("cruiser", "red"), "M0": ("flag", "blue"), "H3": ("cruiser", "blue"),
              "L2": ("destroyer", "blue")}
    flags: Counter[tuple[bool, str]] = Counter()
    for reads in (True, False):
        # three stations out of Blue's rows (G3 F3 E3), or a step at home
        for way, watched in ((("H3", "G3", "F3", "E3"), "H3"), (("L2", "L3"), "L2")):
            st = _playing("navy_tw")
            st.board = _laid(layout)
            belief = Belief(st.game, "red", st.options)
            belief.reads_moves = reads
            belief.update(view(st, "red"))
            uid = st.board[watched].uid
            for frm, to in zip(way, way[1:], strict=False):
                st.turn = "blue"
                ruling = st.apply((frm, to))
                belief.update(view(st, "red"), redact_ruling(ruling, "red"))
            rng = random.Random(3)
            flags[reads, watched] = sum(belief.sample(rng)[uid] == "flag" for _ in range(800))
    assert flags[False, "H3"] >= 8 and flags[True, "H3"] <= flags[False, "H3"] // 8, flags
    assert flags[True, "L2"] >= flags[False, "L2"] // 2 >= 4, flags


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


def test_the_last_pieces_that_clear_the_known_mines_walling_off_the_enemy_flag_are_worth_the_game() -> None:
    """Dover Patrol seed 2 against the bot before: Red's harbour entrance (c3) was mined, known since a submarine of
    ours struck it, and our last minesweeper was left to be sunk for a light cruiser: no piece of ours could reach
    the flag again. With the wall known, the last minesweeper is worth SEALED / 2 more, and clearing the mine gains
    as much; with the mine unknown nothing changes, and the bot before reads none of it."""
    layout = {"a1": ("flag", "red"), "a2": ("mine", "red"), "c3": ("mine", "red"), "b1": ("flagship", "red"),
              "h12": ("flag", "blue"), "e5": ("battle_cruiser", "blue"), "f5": ("destroyer", "blue")}
    gaps: dict[tuple[type[FaceDownBot], bool], float] = {}
    cleared = 0.0
    for cls in (FaceDownBot, FaceDownClassic):
        bot, st = _bot(cls, "dover_patrol", "blue")
        w = worth(st)
        for known in (True, False):
            scores = {}
            for sweeper in ("d4", None):
                st.board = _laid({**layout, **({sweeper: ("minesweeper", "blue")} if sweeper else {})})
                if known:
                    st.board["c3"].known_to = frozenset({"red", "blue"})
                st.turn = "red"
                scores[sweeper] = bot.evaluate(st, w)
            gaps[cls, known] = scores["d4"] - scores[None]
            if cls is FaceDownBot and known:
                # the minesweeper on c3, the mine cleared, against the minesweeper beside it with the mine standing
                st.board = _laid({k: v for k, v in {**layout, "c3": ("minesweeper", "blue")}.items()})
                st.turn = "red"
                cleared = bot.evaluate(st, w) - scores["d4"]
    assert gaps[FaceDownBot, True] - gaps[FaceDownBot, False] == pytest.approx(SEALED / 2, abs=0.3), gaps
    assert gaps[FaceDownClassic, True] == pytest.approx(gaps[FaceDownClassic, False]), gaps
    assert cleared > SEALED / 2 - 1.0, cleared


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


def test_a_piece_whose_kind_is_deduced_from_a_clash_counts_as_known_in_the_guesses() -> None:
    """Navy chess (Taiwan) seed 1 against the bot before: the enemy's anti-submarine plane bounced our minesweeper
    ("no effect": only that plane does it) and then every other ship of ours for 700 plies, each guess treating it
    as unknown. A piece whose possible kinds are down to one is known in the guesses now (its attacks, our replies
    and the hunt judge it so); the bot before only knows a piece it was shown."""
    found = {}
    for deduces in (True, False):
        belief, plane = _seen("navy_tw", {"F4": ("minesweeper", "red"), "A0": ("flag", "red"),
                                          "G4": ("anti_sub", "blue"), "M6": ("flag", "blue"), "M0": ("mine", "blue")},
                              ("F4", "G4"), "G4", deduces=deduces)
        assert belief.possible[plane] == {"anti_sub"} and plane not in belief.known  # deduced, never shown
        guess = belief.scratch(belief.where, belief.sample(random.Random(1)))
        assert guess.board["G4"].type == "anti_sub"
        found[deduces] = "red" in guess.board["G4"].known_to
    assert found == {True: True, False: False}


def test_a_known_enemy_piece_out_of_the_look_aheads_reach_is_worth_hunting() -> None:
    """The nearer our nearest piece that beats a known enemy piece stands to it, the better (the hunt), up to six
    steps; an unknown piece is not hunted, and the bot before hunts nothing."""
    gaps = {}
    for cls in (FaceDownBot, FaceDownClassic):
        bot, st = _bot(cls, "stratego")
        w = worth(st)
        gap = {}
        for shown in (True, False):
            scores = {}
            for major_on in ("e2", "e4"):  # four steps from the captain on e6, two steps
                st.board = _laid({"a1": ("flag", "red"), "b1": ("bomb", "red"), major_on: ("major", "red"),
                                  "e6": ("captain", "blue"), "j10": ("flag", "blue"), "i10": ("bomb", "blue")})
                st.board["e6"].public = shown
                st.turn = "blue"
                scores[major_on] = bot.evaluate(st, w)
            gap[shown] = scores["e4"] - scores["e2"]
        gaps[cls] = gap[True] - gap[False]
    hunt = 0.08 * worth(_playing("stratego")).value["captain"] * 2 / 6
    assert gaps[FaceDownBot] == pytest.approx(hunt, abs=0.02) and abs(gaps[FaceDownClassic]) < 0.02


def test_a_known_enemy_piece_one_move_from_a_piece_that_beats_it_is_threatened() -> None:
    """Dover Patrol seed 1 against the bot before: our submarine stood two stations from the enemy's known flagship
    for 300 plies and never stepped beside it, the step worth only the hunt's sixth. A known enemy piece one move
    from a piece of ours that beats it is threatened now: THREAT of its worth on the enemy's move (it may flee),
    THREAT_NOW on ours, and a second one threatened at the same time (a fork: one of them falls) THREAT_NOW too.
    The bot before counts no threat."""
    from controller.bots.facedown import HUNT, THREAT, THREAT_NOW

    def gain(cls: type[FaceDownBot], turn: str, fork: bool) -> float:
        """What stepping our major from e4 (two steps from the captain on e6) to e5 (beside it, and beside the
        lieutenant on d5 with ``fork``) is worth with the enemy pieces shown, beyond what it is worth unshown."""
        bot, st = _bot(cls, "stratego")
        w = worth(st)
        gaps = {}
        for shown in (True, False):
            scores = {}
            for major_on in ("e4", "e5"):
                layout = {"a1": ("flag", "red"), "b1": ("bomb", "red"), major_on: ("major", "red"),
                          "e6": ("captain", "blue"), "j10": ("flag", "blue"), "i10": ("bomb", "blue")}
                if fork:
                    layout["d5"] = ("lieutenant", "blue")
                st.board = _laid(layout)
                for p in st.board.values():
                    p.public = shown and p.owner == "blue" and p.type in ("captain", "lieutenant")
                st.turn = turn
                scores[major_on] = bot.evaluate(st, w)
            gaps[shown] = scores["e5"] - scores["e4"]
        return gaps[True] - gaps[False]

    value = worth(_playing("stratego")).value
    captain, lieutenant = value["captain"], value["lieutenant"]
    hunt = HUNT * captain / 6  # the hunt: one step nearer the captain
    assert gain(FaceDownBot, "blue", False) - hunt == pytest.approx(THREAT * captain, abs=0.01)
    assert gain(FaceDownBot, "red", False) - hunt == pytest.approx(THREAT_NOW * captain, abs=0.01)
    # the fork: the captain may flee, the lieutenant then falls (and the hunt of the lieutenant grows as well)
    assert gain(FaceDownBot, "blue", True) - hunt > (THREAT * captain + THREAT_NOW * lieutenant) * 0.99
    assert abs(gain(FaceDownClassic, "blue", False)) < 0.01 and abs(gain(FaceDownClassic, "red", True)) < 0.01


def test_the_deeper_look_answers_every_intruder_stepping_in_beside_the_flag() -> None:
    """Navy chess (mainland) seed 3 against the bot before: our flagship stood boxed in by our mines on A3 with one
    open station beside it (B3); an enemy torpedo ship stepped in from B4 and took it on the next move. On our turn
    an intruder beside the flag scores no worse than FLAG_NEXT, below the loss of a good piece, so the deeper look,
    which answers only the two enemy moves that hurt most, did not look at it when two of our carriers it knows
    could be struck: a far quiet move then cost a carrier. Every answer that steps a piece that can take a flag
    in beside ours is answered as well: with no reply of ours that removes the intruder, the flag falls."""
    bot, st = _bot(FaceDownBot, "navy_cn")
    st.board = _laid({"A3": ("flagship", "red"), "A2": ("mine", "red"), "A4": ("mine", "red"), "G0": ("cruiser", "red"),
                      "H2": ("carrier", "red"), "H4": ("carrier", "red"), "B4": ("torpedo_ship", "blue"),
                      "I2": ("submarine", "blue"), "I4": ("submarine", "blue"), "N1": ("flagship", "blue"),
                      "N0": ("mine", "blue")})
    for station in ("H2", "H4"):  # the submarines beside them know them: each strike takes a carrier
        st.board[station].known_to = {"blue"}
    st.turn = "red"
    w = worth(st)
    bot._walls = {}
    legal = st.legal_specs("red")
    far = next(m for m in legal if m.frm == "G0" and m.to == "G1")
    assert bot._score(st, far, w, legal[far]) > -WIN / 100  # the first look: the door is open, nothing worse
    assert bot._deep_score(st, far, w, legal[far]) < -WIN / 5  # the deeper look: B4-B3, then the flagship falls


def test_a_flag_whose_guard_was_cleared_counts_as_found_and_is_guarded_from_farther() -> None:
    """L'Attaque seed 2 against the bot before: the enemy sapper struck the two mines beside our flag, which showed
    where it stood, and an unknown captain walked in along the back row while nothing of ours was near. A flag with
    fewer of our blockers beside it than when play began (or one the enemy was shown) counts as found: an intruder
    four steps off already makes our nearest piece that stops it count, which it does not for a flag not found."""
    bot, st = _bot(FaceDownBot, "stratego")
    w = worth(st)
    start = {"a1": ("flag", "red"), "b1": ("bomb", "red"), "a2": ("bomb", "red"), "j10": ("flag", "blue"),
             "i10": ("bomb", "blue")}
    st.board = _laid(start)
    walls = bot._flag_walls(st, w)
    assert list(walls.values()) == [("a1", 2)]
    gaps = {}
    for began in (2, 1):  # the bomb on b1 was struck; or it was never there
        bot._walls = {uid: ("a1", began) for uid in walls}
        scores = {}
        for colonel_on in ("e3", "j3"):  # two steps from the intruder on e1, seven
            st.board = _laid({**{s: v for s, v in start.items() if s != "b1"}, "e1": ("major", "blue"),
                              colonel_on: ("colonel", "red")})
            st.turn = "blue"
            assert bot._found(st, "a1", w) is (began == 2)
            scores[colonel_on] = bot.evaluate(st, w)
        gaps[began] = scores["e3"] - scores["j3"]
    assert gaps[2] - gaps[1] > 0.4  # 0.15 a step found, 0.05 not (four steps off)
    st.board = _laid(start)
    st.board["a1"].known_to = frozenset({"blue"})
    bot._walls = walls
    assert bot._found(st, "a1", w)


def test_an_engineer_one_railway_ride_from_the_station_beside_the_flag_is_an_open_door() -> None:
    """Luzhanqi seed 1 against the bot before: an engineer cleared the mine beside our flag (A1), and the next
    engineer rode the railway round the corner from G1 to B1, beside the flag, then took it. Counted in steps it
    was far; it was one move. A station beside the flag that an enemy piece reaches in one flight along empty
    railway (straight, or turning for an engineer) is an open door now; one off the railway is not."""
    bot, st = _bot(FaceDownBot, "luzhanqi")
    w = worth(st)
    rays, nets = bot._rays, bot._nets
    doors = {}
    for engineer_on in ("G1", "G3", "L4"):  # G1 and G3: on the railway, a flight from B1; L4: off it
        st.board = _laid({"A1": ("flag", "red"), "A0": ("mine", "red"), "A2": ("mine", "red"),
                          "E4": ("colonel", "red"), engineer_on: ("engineer", "blue"), "L1": ("flag", "blue")})
        st.turn = "red"
        with_flights = bot.evaluate(st, w)
        bot._rays, bot._nets = {}, []
        doors[engineer_on] = with_flights - bot.evaluate(st, w)
        bot._rays, bot._nets = rays, nets
    assert doors == {"G1": -1.5, "G3": -1.5, "L4": 0.0}
    st.board = _laid({"A1": ("flag", "red"), "A0": ("mine", "red"), "A2": ("mine", "red"), "B0": ("mine", "red"),
                      "B2": ("mine", "red"), "G1": ("engineer", "blue"), "L1": ("flag", "blue")})
    assert not bot._flown_door(st.board, "A1")  # our mines on the railway either side of B1 stand in every way


def test_an_intruder_one_flight_along_an_open_lane_is_counted_in_moves_not_steps() -> None:
    """Navy chess (mainland) seed 2 against the bot before: an enemy minesweeper on J4, five steps from our
    flagship on N3 (boxed in by our mines), sailed three stations along the open lane to M4, swept the mine on N4
    and took the flagship: three moves. Counted in steps it was too far for the guard, and the lane stayed open.
    Now its first move may be a flight (as far as its kind may go, through empty stations), so the open lane costs
    the guard's and the late defenders' terms, and a piece of ours in the lane takes that away."""
    bot, st = _bot(FaceDownBot, "navy_cn", seat="blue")
    w = worth(st)
    walls = {"M3": ("mine", "blue"), "N2": ("mine", "blue"), "N4": ("mine", "blue")}
    rays, nets = bot._rays, bot._nets
    costs = {}
    for ours_on in ("I0", "K4"):  # far off, the lane open; in the lane
        st.board = _laid({"N3": ("flagship", "blue"), **walls, ours_on: ("destroyer", "blue"),
                          "J4": ("minesweeper", "red"), "A1": ("flagship", "red")})
        st.turn = "red"
        with_flights = bot.evaluate(st, w)
        bot._rays, bot._nets = {}, []
        costs[ours_on] = bot.evaluate(st, w) - with_flights
        bot._rays, bot._nets = rays, nets
    assert costs["I0"] > 0.5 and costs["K4"] == 0.0
    steps = way_down(w, "N3", w.profile["minesweeper"], tuple((s, k) for s, (k, _) in walls.items()))[0]
    st.board = _laid({"N3": ("flagship", "blue"), **walls, "A1": ("flagship", "red")})
    assert steps["J4"] == 4 and bot._flown_steps(st.board, "J4", "minesweeper", steps, 4) == 3
    # a ship sails at most three stations: from H4 it lands on K4 at best, three steps from the flagship (with no
    # limit it would land on M4, two steps off)
    assert steps["H4"] == 6 and bot._flown_steps(st.board, "H4", "minesweeper", steps, 6) == 4
    # and a station beside the flag is a flown door only within those three stations
    st.board = _laid({"N3": ("flagship", "blue"), "N2": ("mine", "blue"), "N4": ("mine", "blue"),
                      "M0": ("cruiser", "red"), "A1": ("flagship", "red")})
    assert bot._flown_door(st.board, "N3")
    st.board = _laid({"N3": ("flagship", "blue"), "N2": ("mine", "blue"), "N4": ("mine", "blue"),
                      "M4": ("cruiser", "red"), "A1": ("flagship", "red")})
    assert not bot._flown_door(st.board, "N3")  # beside M3: a step, not a flight (the run from M3 is one station)


def test_an_intruder_beside_the_flag_on_its_own_turn_is_a_lost_game() -> None:
    """Luzhanqi seed 1 against the bot before: a lieutenant walked round our back rows and in beside our flag while
    our bomb followed it without striking; each step looked no worse than an enemy beside the flag on our turn. An
    enemy that can take the flag standing beside it on its own turn (after our reply: the deeper look ends there) now
    scores as nearly lost; on our turn it is the small term it was, and the bot before never tells them apart."""
    layout = {"A1": ("flag", "red"), "A0": ("mine", "red"), "A2": ("mine", "red"), "B1": ("lieutenant", "blue"),
              "E4": ("colonel", "red"), "L1": ("flag", "blue"), "K0": ("mine", "blue")}
    gaps = {}
    for cls in (FaceDownBot, FaceDownClassic):
        bot, st = _bot(cls, "luzhanqi")
        w = worth(st)
        st.board = _laid(layout)
        turn = {}
        for side in ("red", "blue"):
            st.turn = side
            turn[side] = bot.evaluate(st, w)
        gaps[cls] = turn["red"] - turn["blue"]
    assert gaps[FaceDownBot] > WIN / 5 and abs(gaps[FaceDownClassic]) < 1.0


def test_the_deeper_look_strikes_an_unknown_intruder_that_stepped_in_beside_the_flag() -> None:
    """Our reply in the deeper look strikes only pieces we know (in a guess we would otherwise know what it is),
    except an intruder beside our flag: there every other reply loses the flag, so striking it in the guesses where
    the strike wins is what play would do. Luzhanqi: a hidden lieutenant one step from standing beside our flag on A1,
    our colonel beside that station; the lieutenant steps in, our colonel strikes it."""
    bot, st = _bot(FaceDownBot, "luzhanqi")
    w = worth(st)
    st.board = _laid({"A1": ("flag", "red"), "A0": ("mine", "red"), "A2": ("mine", "red"), "B2": ("colonel", "red"),
                      "C1": ("lieutenant", "blue"), "E4": ("captain", "red"), "L1": ("flag", "blue"),
                      "K0": ("mine", "blue")})
    st.turn = "red"
    assert bot._beside_flags(st, w) == set(bot.belief.nbrs["A1"])
    quiet = next(m for m, spec in st.legal_specs("red").items() if m.frm == "E4")
    spec = st.legal_specs("red")[quiet]
    strikes = bot._deep_score(st, quiet, w, spec)
    bot._beside_flags = lambda s, w: set()  # type: ignore[method-assign]  # as before: no strike at the unknown
    no_strike = bot._deep_score(st, quiet, w, spec)
    assert no_strike < -WIN / 8 < strikes


def _after_enemy_step(bot: FaceDownBot, game: str, layout: dict[str, tuple[str, str]], step: tuple[str, str],
                      seed: int) -> tuple[FaceDownBot, GameState]:
    """``bot`` playing Red on ``layout`` at ply 40, having seen Blue's ``step`` (a piece that moved: no bomb, no
    mine, no flag); the test then sets the ply and asks for Red's move."""
    st = _playing(game)
    bot.new_game(game, "red", st.options, seed)
    st.board = _laid(layout)
    st.turn, st.ply = "blue", 39
    bot.observe(view(st, "red"))
    ruling = st.apply(step)
    bot.observe(view(st, "red"), redact_ruling(ruling, "red"))
    return bot, st


def test_a_stalled_game_makes_the_bot_probe_an_unknown_piece() -> None:
    """Stratego seed 1 and Navy chess (Taiwan) seeds 1 and 2 against the bot before were drawn at the ply cap with
    no piece taken in the last 1,500 plies: both shuffled behind their lines. After STALL_FROM plies with no piece
    taken, an attack on an enemy piece we do not know gains more and more (up to a little over our cheapest
    attacker's worth), so the bot probes: the scout strikes the unknown piece that stepped into its line (a piece
    that moved: no bomb, no flag), every time, where the bot before did only now and then. Taking a piece starts
    the count again."""
    layout = {"a1": ("flag", "red"), "b1": ("bomb", "red"), "a2": ("bomb", "red"), "e4": ("scout", "red"),
              "d2": ("captain", "red"), "f2": ("lieutenant", "red"), "g2": ("lieutenant", "red"),
              "h2": ("sergeant", "red"), "i2": ("sergeant", "red"), "j2": ("sergeant", "red"),
              "j10": ("flag", "blue"), "e9": ("captain", "blue"), "a10": ("bomb", "blue"), "c9": ("lieutenant", "blue")}
    probes: Counter[tuple[str, int]] = Counter()
    stalled = 40 + STALL_FROM + STALL_RAMP
    for cls in (FaceDownBot, FaceDownClassic):
        for seed in range(6):
            # the default level: a probe must reach the deeper look's candidates too
            bot, st = _after_enemy_step(cls(), "stratego", layout, ("e9", "e8"), seed)
            for ply in (40, stalled):
                st.ply, st.turn = ply, "red"
                v = view(st, "red")
                bot.observe(v)
                probes[cls.name, ply] += bot.choose_move(v, 60_000) == ("e4", "e8")
            w = worth(st)
            if cls is FaceDownClassic:
                assert bot._probe_worth(v, st, w) == 0.0  # it strikes only where its look-ahead likes the strike
            else:
                assert bot._probe_worth(v, st, w) > w.value["scout"]  # the stall goes on: a probe gains a scout
                del st.board["c9"]  # a piece is taken: the game moves again
                st.ply += 1
                assert bot._probe_worth(view(st, "red"), st, w) == 0.0
    assert probes["facedown", stalled] >= 5 and probes["facedown", 40] <= 1, probes
    assert probes["facedown-classic", stalled] <= 3, probes


def test_a_stalled_game_with_nothing_in_reach_sends_a_cheap_piece_to_meet_the_enemy(monkeypatch: pytest.MonkeyPatch) -> None:
    """Navy chess (Taiwan) seeds 1, 2 and 4 against the bot before were drawn at the ply cap with four or five
    clashes in 2,000 plies: both fleets drew back behind five empty rows, so the probe never had a piece to strike.
    Once a stall has gone on UNREACHED plies with no unknown enemy piece in reach, a quiet step that brings a piece
    that can take the flag nearer the nearest enemy gains APPROACH x the probe's worth, times our cheapest such
    piece's worth over its own: the anti-submarine plane (our cheapest) goes to meet the enemy, where without the
    term the destroyer or the cruiser led. Nothing before the stall, nothing while an unknown piece was in reach
    lately (the probe decides), no gain for a step back or sideways."""
    layout = {"A3": ("flag", "red"), "A2": ("mine", "red"), "A4": ("mine", "red"), "B3": ("cruiser", "red"),
              "C3": ("anti_sub", "red"), "C4": ("bomber", "red"), "B2": ("destroyer", "red"),
              "M3": ("flag", "blue"), "M2": ("mine", "blue"), "M4": ("mine", "blue"), "L3": ("cruiser", "blue"),
              "K3": ("destroyer", "blue"), "K4": ("gunboat", "blue")}
    stalled = 40 + STALL_FROM + STALL_RAMP
    assert stalled - 40 >= UNREACHED
    led: Counter[tuple[str, int]] = Counter()
    for mode in ("without", "with", "in reach lately"):
        monkeypatch.setattr("controller.bots.facedown.APPROACH", 0.0 if mode == "without" else APPROACH)
        for seed in range(6):
            bot, st = _after_enemy_step(FaceDownBot(), "navy_tw", layout, ("K4", "J4"), seed)
            for ply in (40, stalled):
                st.ply, st.turn = ply, "red"
                v = view(st, "red")
                bot.observe(v)
                if mode == "in reach lately":
                    bot._in_reach_at = ply - 1  # an unknown enemy piece was in reach to probe on our last turn
                m = bot.choose_move(v, 60_000)
                led[mode, ply] += st.board[m[0]].type == "anti_sub"
    assert led["with", stalled] >= 5 and led["without", stalled] <= 1, led
    assert led["in reach lately", stalled] <= 1, led  # while the armies touch, the probe alone decides
    assert led["with", 40] <= 1 and led["without", 40] <= 1, led  # before the stall the term is not there

    w = worth(st)
    probe = bot._probe_worth(v, st, w)
    assert probe > 0
    moves = [Move(*m) for m in st.legal_moves("red")]
    gains = bot._approach(st, moves, w, probe)
    assert gains[Move("C3", "D3")] == pytest.approx(APPROACH * probe)  # the cheapest counts whole
    assert gains[Move("C4", "D4")] == pytest.approx(APPROACH * probe * w.value["anti_sub"] / w.value["bomber"])
    assert Move("C3", "B4") not in gains and Move("C3", "C2") not in gains  # back, or no nearer
    assert not any(st.board[m.frm].type == "mine" for m in gains)  # a piece that cannot take the flag stays
    del st.board["J4"]
    st.ply += 1
    assert bot._probe_worth(view(st, "red"), st, w) == 0.0  # a piece taken: the game moves again


def test_the_deeper_look_answers_a_blind_strike_that_takes_the_guard_beside_the_flag() -> None:
    """Luzhanqi seeds 1 and 2 and Navy chess (mainland) seed 2 against the bot before: an enemy engineer (a
    minesweeper) struck the mine beside our flag with nothing of ours one move from it, and took the flag on its
    next move. A strike the enemy cannot see was counted as a blind risk only, one at a piece it knows only if it
    was among the two answers that hurt most; but once it has struck, the ruling shows where the striker stands,
    and unless our reply removes it the flag falls. In the guesses where the striker clears the guard, the deeper
    look answers it: a move that leaves nothing of ours beside the mine then loses the flag, one that brings the
    colonel beside it does not."""
    bot, st = _bot(FaceDownBot, "luzhanqi")
    st.board = _laid({"A1": ("flag", "red"), "A0": ("mine", "red"), "A2": ("mine", "red"), "B1": ("mine", "red"),
                      "C2": ("colonel", "red"), "F3": ("lieutenant", "red"), "F1": ("captain", "red"),
                      "C1": ("engineer", "blue"), "L1": ("flag", "blue"), "K3": ("major", "blue")})
    st.turn = "red"
    w = worth(st)
    bot._walls = {}
    legal = st.legal_specs("red")
    near = next(m for m in legal if (m.frm, m.to) == ("C2", "B2"))
    far = next(m for m in legal if (m.frm, m.to) == ("F3", "F4"))
    for known in (False, True):  # unseen, or known to the enemy (a strike at it before): answered alike
        if known:
            st.board["B1"].known_to = {"blue"}
        assert bot._deep_score(st, near, w, legal[near]) > -WIN / 100  # the colonel beside B1 strikes the engineer
        assert bot._deep_score(st, far, w, legal[far]) < -WIN / 5  # C1 strikes B1, and nothing of ours reaches it



def test_the_deeper_look_is_wary_of_a_piece_that_may_clear_the_guard_beside_the_flag() -> None:
    """Luzhanqi seed 2 against the bot before: an enemy engineer one railway flight from the mine beside our flag
    struck it after our brigadier had left the station beside that mine, and took the flag. The deeper look's few
    guesses held no engineer there (a piece that may be any of ten kinds), so it never saw the strike. Now a hidden
    piece that could strike the guard beside our flag, were it of a kind that clears it, is of that kind in every
    guess of the deeper look: the colonel leaving the station beside the mine loses the flag in every seed, the
    captain's quiet step does not."""
    layout = {"A1": ("flag", "red"), "A0": ("mine", "red"), "A2": ("mine", "red"), "B1": ("mine", "red"),
              "B2": ("colonel", "red"), "E4": ("captain", "red"), "F3": ("lieutenant", "red"),
              "F0": ("engineer", "blue"), "K3": ("major", "blue"), "K1": ("captain", "blue"),
              "J4": ("lieutenant", "blue"), "L1": ("flag", "blue"), "L0": ("mine", "blue")}
    for seed in range(6):
        st = _playing("luzhanqi")
        bot = FaceDownBot()
        bot.new_game("luzhanqi", "red", st.options, seed)
        st.board = _laid(layout)
        st.turn, st.ply = "red", 30
        bot.observe(view(st, "red"))
        first, moves = bot.playable()
        w = worth(first)
        at = dict(bot.belief.where)
        bot._wary_of = bot._suspects(first, w)
        assert bot._wary_of == {at["F0"]: frozenset({"engineer"})}  # one flight F0-B0-B1 for an engineer alone
        guess = bot.belief.sample(bot.rng)
        assert bot._wary(dict(guess))[at["F0"]] == "engineer"
        stay = next(m for m in moves if (m.frm, m.to) == ("E4", "E3"))
        leave = next(m for m in moves if (m.frm, m.to) == ("B2", "C2"))  # nothing of ours one move from B1 then
        deeper = bot._deeper([stay, leave], {stay: 1.0, leave: 1.0}, {stay: 1, leave: 1}, w, float("inf"),
                             float("inf"))
        assert deeper[leave] < deeper[stay] - WIN / 10, (seed, deeper)


def test_a_defender_whose_way_to_the_door_runs_through_the_intruders_camp_is_late() -> None:
    """Luzhanqi seed 1 against the bot before: an enemy major three steps from our flag (D0, then the camp C1, then
    B1, the flag's one door, held by a lieutenant it beats). Our bomb stood two steps from the door "through" C1, so
    on C2, on D2 or beside the door on B2 it was counted on time alike, and the bot played D2. But the major stands
    in C1 on its way, sheltered there: from D2 the way round is three steps, one late, and the flag fell. Counted
    around a shelter every shortest way of the intruder runs through (and the sheltered enemy pieces), D2 is late
    by one step, C2 and B2 are not; with no shelters counted, the three are alike. (A shelter on only some of its
    ways is not counted: tests/test_bots.py, the late defender's Navy chess test, has one, camp C3.)"""
    layout = {"A1": ("flag", "red"), "A0": ("mine", "red"), "A2": ("mine", "red"), "B1": ("lieutenant", "red"),
              "L1": ("flag", "blue"), "L3": ("engineer", "blue")}
    bot, st = _bot(FaceDownBot, "luzhanqi")
    w = worth(st)

    def score(bomb: str, major: str, turn: str) -> float:
        st.board = _laid({**layout, bomb: ("bomb", "red"), major: ("major", "blue")})
        st.turn = turn
        return bot.evaluate(st, w)

    shelters = getattr(bot, "_shelters", {})
    for major, turn, cost in (("D0", "blue", LATE[3]), ("C1", "red", LATE[2])):
        counted = {b: score(b, major, turn) for b in ("B2", "C2", "D2")}
        bot._shelters = {}
        uncounted = {b: score(b, major, turn) for b in ("B2", "C2", "D2")}
        bot._shelters = shelters
        # the cost is the late step's alone: everything else scores these stations as before
        assert counted["B2"] == pytest.approx(uncounted["B2"])
        assert counted["C2"] == pytest.approx(uncounted["C2"])
        assert uncounted["D2"] - counted["D2"] == pytest.approx(cost), (major, counted, uncounted)
    assert set(shelters) >= {"C1", "D2", "C3"}  # Luzhanqi's camps


def test_a_piece_in_a_headquarters_is_no_mover_nor_defender() -> None:
    """Luzhanqi: a piece that stands in a headquarters never moves again. Seed 1 against the bot before, counted
    with the shelters: our engineer stood in the headquarters A3 beside the mine on A2, counted as a mover and so as
    the defender in time for that door; an enemy engineer cleared the mine and took the flag, and ours could not
    strike it. Now a piece there adds its material alone (no mover, no defender, none of the last movers); one beside
    it on A4 counts as a mover. The bot before counts both alike."""
    layout = {"A1": ("flag", "red"), "A0": ("mine", "red"), "A2": ("mine", "red"), "D4": ("lieutenant", "red"),
              "L1": ("flag", "blue"), "H2": ("captain", "blue"), "H3": ("lieutenant", "blue")}
    gains = {}
    for cls in (FaceDownBot, FaceDownClassic):
        bot, st = _bot(cls, "luzhanqi")
        w = worth(st)

        def score(bot: FaceDownBot, st: GameState, w: Any, extra: dict[str, tuple[str, str]]) -> float:
            st.board = _laid({**layout, **extra})
            st.turn = "blue"
            return bot.evaluate(st, w)

        for intruder in ({}, {"B2": ("engineer", "blue")}):  # and with an enemy engineer beside the mine
            for at in ("A3", "A4"):
                gains[cls, at, bool(intruder)] = (score(bot, st, w, {**intruder, at: ("engineer", "red")})
                                                  - score(bot, st, w, intruder))
        material = w.value["engineer"]
    for intruder in (False, True):
        assert gains[FaceDownBot, "A3", intruder] == pytest.approx(material)
        assert gains[FaceDownBot, "A4", intruder] > material + 1.0
        assert gains[FaceDownClassic, "A3", intruder] == pytest.approx(gains[FaceDownClassic, "A4", intruder])
