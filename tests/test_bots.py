"""Bots: they see only their seat's view, their beliefs stay true to the game, they play legal moves in every game,
and the arena and `facedown match` count wins, draws, losses and failures."""

from __future__ import annotations

import json
import random
import time
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from controller.bots import BUILTIN, Bot, BotError, FaceDownBot, GreedyBot, RandomBot, bot_names, find_bot
from controller.bots.arena import Match, play_game
from controller.bots.belief import Belief
from controller.bots.facedown import LEVELS, Level
from controller.bots.setups import built_setup
from controller.cli import main
from controller.rules import game_ids, load_game, new_game, redact_ruling, view
from controller.rules.setup import check_deployment
from controller.rules.state import ALL, GameState
from controller.rules.views import may_know

GAMES = [g for g in game_ids() if g != "stratego_barrage"] + ["stratego_barrage"]


def _deployed(game: str, seed: int) -> tuple[GameState, random.Random]:
    """A new game of ``game`` with both sides deployed by rule-built setups, and the random source that built them."""
    st = new_game(game)
    rng = random.Random(seed)
    for side in st.game.sides:
        st.deploy(side, built_setup(st.game, side, rng))
    return st, rng


def _laid(layout: dict[str, tuple[str, str]], known: tuple[str, ...] = (), seat: str = "red") -> dict[str, Any]:
    """A board of pieces from ``layout`` (station -> (kind, side)), numbered in order; the pieces on the ``known``
    stations known to ``seat`` (as a clash or a reveal leaves them)."""
    from controller.rules.base import Piece

    board = {s: Piece(i, kind, side) for i, (s, (kind, side)) in enumerate(layout.items())}
    for s in known:
        board[s].known_to = board[s].known_to | {seat}
    return board


def _audit(truth_problems: list[str]):
    """A watch for play_game: every rank a bot is handed must be one its seat may know at that moment."""

    def watch(st: GameState, side: str, seen: dict[str, Any], event: dict[str, Any] | None) -> None:
        for e in seen["pieces"]:
            p = st.board.get(e["station"])
            if p is None or p.uid != e["uid"]:
                truth_problems.append(f"view of {side}: {e} is not on the board")
            elif "piece" in e and (e["piece"] != p.type or not may_know(st, p, side)):
                truth_problems.append(f"view of {side} names {e['piece']} on {e['station']}, which {side} may not know")
        if event is None:
            return
        ruling = st.history[-1]
        entitled = {u for u, who in ruling.known if ALL in who or side in who}
        entitled |= {r.uid for r in ruling.reveals if ALL in r.to or side in r.to}
        if ruling.side == side:
            entitled.add(ruling.mover_uid)
        if ruling.defender_side == side and ruling.defender_uid is not None:
            entitled.add(ruling.defender_uid)
        entitled |= {r.uid for r in ruling.removed if r.owner == side}
        if st.phase == "over":
            return
        if "piece" in event and ruling.mover_uid not in entitled:
            truth_problems.append(f"{side} was told the mover of ply {ruling.ply}")
        if "defender_piece" in event and ruling.defender_uid not in entitled:
            truth_problems.append(f"{side} was told the defender of ply {ruling.ply}")
        for named, removal in zip(event["removed"], ruling.removed, strict=True):
            if "piece" in named and removal.uid not in entitled:
                truth_problems.append(f"{side} was told a removed piece of ply {ruling.ply}")

    return watch


class Auditing(FaceDownBot):
    """facedown at level 1 that checks its own belief against the truth the test holds after every input."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(1)
        self.spec = Level(positions=10**9, max_samples=1, replies=False)  # repeatable, whatever the load
        self.problems = problems
        self.truth: GameState | None = None

    def observe(self, view: Any, event: Any = None) -> None:
        super().observe(view, event)
        st, b = self.truth, self.belief
        if st is None or b is None or st.phase != "play":
            return
        for p in st.board.values():
            if p.owner == self.seat:
                continue
            if p.uid in b.known:
                if b.known[p.uid] != p.type or not may_know(st, p, self.seat):
                    self.problems.append(f"{self.seat} believes it knows {p.uid} is {b.known[p.uid]}")
            elif p.type not in b.possible.get(p.uid, ()):
                self.problems.append(f"{self.seat} ruled out the true kind {p.type} of piece {p.uid}")


@settings(max_examples=5, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(game=hs.sampled_from(GAMES), seed=hs.integers(0, 10_000))
def test_a_bot_is_handed_no_rank_its_seat_may_not_know_and_its_belief_holds_the_truth(game: str, seed: int) -> None:
    problems: list[str] = []
    gdef = load_game(game)
    bots: dict[str, Bot] = {}
    names = {}
    for i, side in enumerate(gdef.sides):
        bots[side] = Auditing(problems) if i % 2 == 0 else GreedyBot()
        names[side] = bots[side].name
    states: list[GameState] = []

    def watch(st: GameState, side: str, seen: dict[str, Any], event: dict[str, Any] | None) -> None:
        for b in bots.values():
            if isinstance(b, Auditing):
                b.truth = st
        if not states:
            states.append(st)
        audit(st, side, seen, event)

    audit = _audit(problems)
    record = play_game(game, bots, names, seed=seed, max_plies=20, watch=watch)
    assert not record.failures, record.failures
    assert record.plies > 0
    assert problems == []


def test_the_belief_narrows_on_movement_and_on_silent_clashes() -> None:
    """Luzhanqi is judged silently: a piece that moved is no mine or flag, and a clash keeps the kinds that fit."""
    st, rng = _deployed("luzhanqi", 3)
    belief = Belief(st.game, "red", st.options)
    belief.update(view(st, "red"))
    never_move = {p.id for p in st.game.pieces if not p.movable}
    start = sum(len(belief.possible[u]) for u in belief.possible)
    for _ in range(80):
        if st.phase != "play":
            break
        moves = st.legal_moves()
        ruling = st.apply(random.Random(_).choice(moves))
        belief.update(view(st, "red"), redact_ruling(ruling, "red"))
    assert sum(len(belief.possible[u]) for u in belief.possible) < start
    for uid in belief.moved:
        if uid in belief.possible:
            assert not belief.possible[uid] & never_move
    for p in st.board.values():
        if p.owner == "blue" and p.uid in belief.possible:
            assert p.type in belief.possible[p.uid]
    sample = belief.sample(random.Random(0))
    assert set(sample) == set(belief.hidden())
    for uid, kind in sample.items():
        assert kind in belief.possible[uid]


@pytest.mark.parametrize("game", GAMES)
def test_every_builtin_bot_deploys_validly_in_every_game(game: str) -> None:
    gdef = load_game(game)
    for name in BUILTIN:
        bot = find_bot(name)
        for side in gdef.sides:
            bot.new_game(game, side, gdef.resolve_options(), 5)
            placement = bot.choose_setup(view(new_game(game), side), 1000)
            assert check_deployment(gdef, side, placement) == []


def _marshal_facing(seed: int, kind: str):  # noqa: ANN202
    """Stratego with rule-built setups where the red marshal stands on a5 and a known (public) blue ``kind`` on a6."""
    st = new_game("stratego")
    rng = random.Random(seed)
    for side in st.game.sides:
        st.deploy(side, built_setup(st.game, side, rng))
    marshal_at = next(s for s, p in st.board.items() if p.owner == "red" and p.type == "marshal")
    st.board["a5"] = st.board.pop(marshal_at)
    enemy_at = next(s for s, p in st.board.items() if p.owner == "blue" and p.type == kind)
    enemy = st.board.pop(enemy_at)
    enemy.public = True
    st.board["a6"] = enemy
    return st


def test_facedown_takes_a_piece_it_knows_it_beats_over_a_quiet_move() -> None:
    """Stratego, open clashes: a known enemy scout next to our marshal. facedown takes it."""
    st = _marshal_facing(11, "scout")
    bot = FaceDownBot(2)
    bot.spec = Level(positions=10**9, max_samples=3, replies=True)  # a fixed amount of thought: repeatable
    bot.new_game("stratego", "red", st.options, 1)
    bot.observe(view(st, "red"))
    assert bot.choose_move(view(st, "red"), 1000) == ("a5", "a6")


def test_random_and_greedy_answer_legal_moves_and_greedy_takes_known_weaker() -> None:
    st = _marshal_facing(2, "sergeant")
    greedy = GreedyBot()
    greedy.new_game("stratego", "red", st.options, 1)
    greedy.observe(view(st, "red"))
    assert greedy.choose_move(view(st, "red"), 100) == ("a5", "a6")
    rnd = RandomBot()
    rnd.new_game("stratego", "red", st.options, 1)
    rnd.observe(view(st, "red"))
    for _ in range(5):
        assert tuple(rnd.choose_move(view(st, "red"), 100)) in {tuple(m) for m in st.legal_moves()}


def test_a_game_at_the_ply_cap_is_a_draw_and_a_match_swaps_seats() -> None:
    match = Match("luzhanqi", {"red": "random", "blue": "greedy"})
    assert match.rotation(0) == {"red": "random", "blue": "greedy"}
    assert match.rotation(1) == {"red": "greedy", "blue": "random"}
    four = Match("siguo", {"red": "a", "blue": "b", "green": "a", "purple": "b"})
    assert [four.rotation(i)["red"] for i in range(4)] == ["a", "b", "a", "b"]
    for i in range(2):
        names = match.rotation(i)
        match.records.append(play_game("luzhanqi", {s: find_bot(n) for s, n in names.items()}, names, seed=i, max_plies=6))
    summary = match.summary()
    assert all(r.draw and r.plies == 6 and r.reason == "ply cap (6)" for r in match.records)
    assert summary["bots"]["random"]["draws"] == 2 and summary["bots"]["greedy"]["draws"] == 2
    assert summary["bots"]["random"]["moves"] == 6


class Broken(Bot):
    """An in-process bot with a bug: its move raises."""

    name = "broken"

    def new_game(self, game: str, seat: str, options: Any, seed: int | None = None) -> None:
        self.inner = RandomBot()
        self.inner.new_game(game, seat, options, seed)

    def choose_setup(self, view: Any, time_ms: float) -> dict[str, str]:
        return self.inner.choose_setup(view, time_ms)

    def choose_move(self, view: Any, time_ms: float) -> tuple[str, str]:
        raise KeyError("oops")


class Stubborn(Broken):
    """Always answers the same move that is never legal."""

    name = "stubborn"

    def choose_move(self, view: Any, time_ms: float) -> tuple[str, str]:
        return ("A0", "A0")


class BadSetup(Broken):
    name = "bad_setup"

    def choose_setup(self, view: Any, time_ms: float) -> dict[str, str]:
        return {"A0": "flag"}


@pytest.mark.parametrize(("bot", "why"), [(Broken, "crashed"), (Stubborn, "illegal"), (BadSetup, "bad_setup")])
def test_a_failing_bot_loses_the_game_with_the_reason(bot: type[Bot], why: str) -> None:
    names = {"red": "x", "blue": "random"}
    record = play_game("luzhanqi", {"red": bot(), "blue": RandomBot()}, names, seed=1, max_plies=50)
    assert record.winners == ("blue",)
    assert [f["why"] for f in record.failures] == [why]
    assert record.failures[0]["side"] == "red" and record.failures[0]["message"]


def test_a_failing_bot_in_four_player_junqi_is_put_out_and_the_game_goes_on() -> None:
    bots = {"red": Broken(), "blue": RandomBot(), "green": RandomBot(), "purple": RandomBot()}
    record = play_game("siguo", bots, {s: s for s in bots}, seed=2, max_plies=30)
    assert [f["side"] for f in record.failures] == ["red"]
    assert record.plies >= 20 or record.winners


def test_bots_are_found_by_name_and_bad_names_say_why() -> None:
    assert {"random", "greedy", "facedown"} <= set(bot_names())
    assert isinstance(find_bot("facedown:1"), FaceDownBot)
    with pytest.raises(ValueError, match="no bot 'nope'"):
        find_bot("nope")
    with pytest.raises(ValueError, match="whole number"):
        find_bot("facedown:x")
    with pytest.raises(ValueError, match="levels"):
        find_bot("facedown:9")
    with pytest.raises(BotError):
        RandomBot().new_game("luzhanqi", "green", {}, 1)


def test_the_builtins_are_declared_as_entry_points() -> None:
    from importlib.metadata import entry_points

    declared = {ep.name: ep.value for ep in entry_points(group="facedown.bots")}
    if not declared:
        pytest.skip("the package metadata is not installed (pip install -e .)")
    assert declared["facedown"] == "controller.bots.facedown:FaceDownBot"


def test_match_command_prints_totals_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "luzhanqi", "--red", "greedy", "--blue", "random", "--games", "2", "--max-plies", "40", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 2
    for row in out["bots"].values():
        assert row["wins"] + row["draws"] + row["losses"] == 2
        assert row["think_ms_p50"] <= row["think_ms_p99"]
    assert [r["seats"]["red"] for r in out["records"]] == ["greedy", "random"]
    assert main(["match", "luzhanqi", "--red", "greedy", "--blue", "random", "--games", "1", "--max-plies", "10"]) == 0
    text = capsys.readouterr().out
    assert "greedy" in text and "drew" in text and "p99" in text
    assert main(["match", "luzhanqi", "--red", "greedy"]) == 2
    assert "no bot for blue" in capsys.readouterr().err
    assert main(["match", "luzhanqi", "--seat", "green=greedy", "--red", "a", "--blue", "b"]) == 2


class _Shuttler(RandomBot):
    """Random, but goes straight back whenever it may: a bot that keeps running into the two-squares rule."""

    name = "shuttler"
    refusals = 0

    def choose_move(self, view: dict, time_ms: float) -> tuple[str, str]:
        self.sync(view)
        _world, moves = self.playable()
        run = self.run
        back = [m for m in moves if run is not None and m.frm in run.squares and m.to in run.squares
                and self.belief is not None and self.belief.where.get(m.frm) == run.uid]
        return tuple(self.rng.choice(back or moves))  # type: ignore[return-value]

    def refused(self, frm: str, to: str) -> None:
        type(self).refusals += 1
        super().refused(frm, to)


@pytest.mark.parametrize(("game", "options"), [("stratego", {"two_squares": 3}), ("stratego", {"two_squares_scouts": False}),
                                               ("lattaque", {"two_squares": 3}), ("dover_patrol", {"two_squares": 3})])
def test_the_bots_count_their_shuttles_as_the_two_squares_rule_does(game: str, options: dict) -> None:
    """A guessed world has no history, so a bot keeps its own count of its shuttle: every move it leaves out is one
    the referee would refuse under the two-squares rule, and every move the rule refuses is left out (seen from
    the real game state at each of its turns, scout ranges included); a bot that keeps going back is never refused."""
    from controller.rules.hooks import TwoSquares

    bots = {"red": _Shuttler(), "blue": _Shuttler()}
    _Shuttler.refusals = 0
    checked = forbidden = 0

    def watch(st: GameState, side: str, seen: dict, event: dict | None) -> None:
        nonlocal checked, forbidden
        if event is not None or st.turn != side or st.phase != "play":
            return
        bot = bots[side]
        bot.sync(seen)
        world = bot.world()
        for m in world.legal_moves(side):
            if m.to in st.board or m.to in world.board:
                continue  # attacks depend on hidden kinds; steps onto empty stations are the same in both worlds
            refused = TwoSquares().forbid(st, m.frm, m.to) is not None
            assert bot.shuttle_refused(world, m) == refused, (side, m, bot.run)
            checked += 1
            forbidden += refused

    for seed in range(2):
        names = {"red": "shuttler", "blue": "shuttler"}
        play_game(game, bots, names, seed=seed, max_plies=160, options=options, watch=watch)
    assert forbidden > 10 and checked > forbidden
    assert _Shuttler.refusals == 0


def test_a_level_is_an_amount_of_work_so_a_slower_machine_plays_the_same_game() -> None:
    """The same level and seed play the same game on a machine ten times slower (its clock runs 10x ahead), as
    long as the host's budget allows; a budget too short for the level's work cuts it short, with a legal move."""

    def game(speed: float) -> list[tuple[str, str]]:
        bot = FaceDownBot(1)
        start = time.perf_counter()
        bot.clock = lambda: start + (time.perf_counter() - start) * speed  # type: ignore[method-assign]
        moves: list[tuple[str, str]] = []

        def watch(st: GameState, side: str, seen: dict, event: dict | None) -> None:
            if event is not None and event.get("side") == "red":
                moves.append((event["from"], event["to"]))

        play_game("luzhanqi", {"red": bot, "blue": RandomBot()}, {"red": "facedown", "blue": "random"}, seed=4,
                  max_plies=40, time_ms=60_000, watch=watch)
        return moves

    quick = game(1.0)
    assert len(quick) >= 15 and game(10.0) == quick

    st = _marshal_facing(3, "sergeant")
    bot = FaceDownBot(5)
    bot.new_game("stratego", "red", st.options, 1)
    bot.observe(view(st, "red"))
    move = bot.choose_move(view(st, "red"), 50)  # 40 ms of the 28,000 positions of level 5
    assert tuple(move) in {tuple(m) for m in st.legal_moves()}
    assert 0 < bot.looked < LEVELS[5].positions


def test_the_last_pieces_that_can_clear_an_enemy_blocker_are_kept() -> None:
    """From the clash table alone: a bomb only a miner clears, a mine only a minesweeper, a minelayer only a
    destroyer sinks. While such a blocker stands, facedown counts its last clearer worth far more than its rank
    (Dover Patrol games were drawn at the ply cap after it had traded away every destroyer and minesweeper)."""
    from controller.bots.values import worth

    assert worth(new_game("stratego")).blockers == {"bomb": frozenset({"miner"})}
    assert worth(new_game("dover_patrol")).blockers == {"mine": frozenset({"minesweeper"}), "minelayer": frozenset({"destroyer"})}
    assert worth(new_game("luzhanqi")).blockers["mine"] == frozenset({"engineer"})

    st = _marshal_facing(5, "sergeant")
    bot = FaceDownBot(1)
    bot.new_game("stratego", "red", st.options, 1)
    w = worth(st)
    miners = [s for s, p in st.board.items() if p.owner == "red" and p.type == "miner"]
    for s in miners[1:]:
        del st.board[s]
    with_one = bot.evaluate(st, w)
    del st.board[miners[0]]
    # the last miner adds BLOCKER / 2 = 2 over its rank; where it stood moves the positional terms a little (it was
    # in the way of others going for the flag: its loss clears that way)
    assert with_one - bot.evaluate(st, w) > w.value["miner"] + 1.0


@pytest.mark.parametrize("game", ["stratego", "luzhanqi", "dover_patrol", "navy_tw", "sanjunqi", "siguo"])
def test_the_attacks_look_ahead_asks_for_are_the_legal_moves_onto_pieces(game: str) -> None:
    """``iter_attacks`` (the replies a bot fears) is exactly the legal moves that land on a piece, all game long."""
    rng = random.Random(3)
    st = new_game(game)
    for side in st.game.sides:
        st.deploy(side, built_setup(st.game, side, rng))
    attacks = 0
    while st.phase == "play" and st.ply < 150:
        for side in st.game.sides:
            if side in st.out:
                continue
            legal = st.legal_moves(side)
            assert list(st.iter_attacks(side)) == [m for m in legal if m.to in st.board], (side, st.ply)
            attacks += sum(m.to in st.board for m in legal)
        st.apply(rng.choice(st.legal_moves()))
    assert attacks > 20


@pytest.mark.parametrize("game", ["lattaque", "dover_patrol", "navy_cn", "luzhanqi"])
def test_rule_built_setups_keep_the_blocker_clearers_in_the_back_half(game: str) -> None:
    """Miners, sappers, minesweepers and destroyers (the only pieces that clear an enemy mine or minelayer) start in
    the deeper half of the deployment: a random front-row clash must not cost a side its last way through."""
    from controller.bots.belief import template
    from controller.bots.values import worth

    gdef = load_game(game)
    w = worth(template(gdef, {}))
    assert w.clears
    rng = random.Random(1)
    for side in gdef.sides:
        depth = w.front[side]
        zone = sorted(depth[s] for s in st_zone(gdef, side))
        middle = zone[len(zone) // 2]
        for _ in range(10):
            placement = built_setup(gdef, side, rng)
            for station, piece in placement.items():
                if piece in w.clears:
                    assert depth[station] >= middle - 1, (side, station, piece)


def st_zone(gdef: Any, side: str) -> list[str]:
    return sorted(gdef.setup.zones[gdef.setup.deploy_zone][side])


def test_rule_built_dover_setups_leave_a_base_station_for_bringing_the_enemy_flag_home() -> None:
    """In Dover Patrol a taken flag wins only when its carrier stands on its own base; the flag fills one base
    station, so a mine on the other would make that win impossible for the whole game."""
    gdef = load_game("dover_patrol")
    immovable = {p.id for p in gdef.pieces if not p.movable}
    rng = random.Random(2)
    for side in gdef.sides:
        base = gdef.setup.zones["base"][side]
        for _ in range(40):
            placement = built_setup(gdef, side, rng)
            assert sum(placement.get(s) in immovable for s in base) == 1, (side, {s: placement.get(s) for s in base})


def test_the_facedown_bots_dover_setups_never_wall_in_the_base_a_taken_flag_must_reach() -> None:
    """Leaving the free base station empty of mines is not enough: mines round it (a2, b2, c1 in Dover Patrol seed
    3 against the bot before) shut it off from the sea, and the enemy flag our destroyer had taken could never be
    brought home. The facedown bot draws such a deployment again; the bot before (and a plain rule-built setup)
    kept it, in about one in twelve."""
    from controller.bots.belief import template
    from controller.bots.setups import bot_setup
    from controller.bots.values import bfs, worth

    gdef = load_game("dover_patrol")
    w = worth(template(gdef, {}))
    sea = w.lines_nbrs[w.profiles[w.profile["destroyer"]][0]]
    zones = gdef.setup.zones[gdef.setup.deploy_zone]

    def sealed(side: str, placement: dict[str, str]) -> bool:
        enemy = [s for other in gdef.sides if other != side for s in zones[other]]
        walls = frozenset(s for s, k in placement.items() if k in w.fixed or k in w.capture)
        reached = bfs(sea, enemy, walls)
        return not any(s in reached for s in gdef.setup.zones["base"][side] if placement.get(s) != "flag")

    for side in gdef.sides:
        rng = random.Random(5)
        assert sum(sealed(side, built_setup(gdef, side, rng)) for _ in range(120)) >= 3
        rng = random.Random(5)
        assert not any(sealed(side, bot_setup(gdef, side, rng, open_base=True)) for _ in range(120))
        bot = FaceDownBot()
        bot.new_game("dover_patrol", side, {}, seed=3)
        assert not sealed(side, bot.choose_setup({}, 1000.0))


def test_distances_a_bot_counts_are_along_the_lines_each_piece_moves_on() -> None:
    """A ship counts the way round the harbour wall (in by the entrance); the flying boat flies over it. Counting
    every line for every piece sent Dover minesweepers to wait outside the wall beside the mines they had to clear."""
    from controller.bots.belief import template
    from controller.bots.values import worth

    w = worth(template(load_game("dover_patrol"), {}))
    assert w.reach["flying_boat"]["e11"]["f11"] == 1
    assert w.reach["minesweeper"]["e11"]["f11"] == 5  # e11 e10 e9 f9 f10 f11: in by the entrance at f9-f10
    assert w.distance["e11"]["f11"] == 1


def test_the_way_to_a_flag_goes_round_the_mines_a_piece_cannot_clear() -> None:
    """Steps to the enemy flag count around the fixed pieces (mines, bombs) a piece cannot remove: in Dover Patrol
    a battleship beside two mines that shut in the flag is not 'two steps away' (it waited there for 500 plies),
    while a minesweeper, which clears mines, is."""
    from controller.bots.belief import template
    from controller.bots.values import way, worth

    w = worth(template(load_game("dover_patrol"), {}))
    fixed = (("f12", "mine"), ("g11", "mine"))
    battleship = way(w, "g12", w.profile["battleship"], fixed)
    sweeper = way(w, "g12", w.profile["minesweeper"], fixed)
    assert sweeper["g10"] == 2  # g10 g11 g12: through the mine it clears
    assert battleship["g10"] == 4  # g10 h10 h11 h12 g12: round it
    assert "g11" not in battleship and w.reach["battleship"]["g10"]["g12"] == 2
    shut = way(w, "g12", w.profile["battleship"], (*fixed, ("h12", "mine")))
    assert "g10" not in shut  # no way at all while the third mine stands


def test_a_flag_carriers_way_home_counts_its_own_ships_in_the_way() -> None:
    """Dover Patrol: a battleship carrying the enemy flag sat at b3 for 1,300 plies because its own ships filled
    a3, a2 and the free base a1 and none had a reason to move. Each ship in the way now costs, so each one that
    makes way is progress; its own mines it can never pass."""
    from controller.bots.belief import template
    from controller.bots.values import worth
    from controller.rules.base import Piece

    st = new_game("dover_patrol")
    w = worth(template(st.game, {}))
    layout = {"b1": "flag", "b2": "mine", "c1": "mine", "b3": "battleship", "a3": "patrol_boat", "a2": "battle_cruiser",
              "a1": "auxiliary_cruiser"}
    st.board = {s: Piece(i, kind, "red") for i, (s, kind) in enumerate(layout.items())}
    costs = []
    for leaving in ("a3", "a2", "a1"):
        costs.append(FaceDownBot._way_home(st, "b3", "red", "battleship", w))
        del st.board[leaving]
    costs.append(FaceDownBot._way_home(st, "b3", "red", "battleship", w))
    assert costs == [12.0, 9.0, 6.0, 3.0]  # b3 a3 a2 a1, 3 more for each own ship on it
    st.board["a2"] = Piece(99, "mine", "red")
    assert FaceDownBot._way_home(st, "b3", "red", "battleship", w) == 16.0  # walled in by its own mine


def test_own_pieces_queued_on_the_way_to_the_flag_count_as_steps() -> None:
    """Dover Patrol: facedown's submarine sat in the enemy harbour's only entrance (f10) for 500 plies, bounced by
    the enemy submarine every turn, while its minesweeper waited behind it on f9 with the flag two mines away. A
    station on the way held by one's own piece now costs 3 steps, so the submarine stepping aside is progress."""
    from controller.bots.belief import template
    from controller.bots.values import worth
    from controller.rules.base import Piece

    st = new_game("dover_patrol")
    w = worth(template(st.game, {}))
    bot = FaceDownBot(1)
    bot.new_game("dover_patrol", "red", {}, 1)
    layout = {"a1": ("flag", "red"), "f9": ("minesweeper", "red"), "g12": ("flag", "blue"), "f12": ("mine", "blue"),
              "g11": ("mine", "blue"), "h12": ("mine", "blue"), "g10": ("submarine", "blue")}
    scores = {}
    for sub_on in ("f10", "f11"):
        st.board = _laid({**layout, sub_on: ("submarine", "red")})
        scores[sub_on] = bot.evaluate(st, w)
    assert scores["f11"] - scores["f10"] > 0.1  # the way f9 f10 f11 f12 is free of its own ships only once it moves
    from controller.bots.values import way_down

    steps, down = way_down(w, "g12", w.profile["minesweeper"], (("f12", "mine"), ("g11", "mine"), ("h12", "mine")))
    assert steps["f9"] == 4 and sorted(down["f10"]) == ["f11", "g10"]
    st.board["f10"] = Piece(51, "patrol_boat", "red")
    assert bot._queue(st.board, "f9", 4, down, {}, "minesweeper", st.clash)[0] == 3  # f10 is the only way in: its own ship there costs 3
    del st.board["f10"]
    assert bot._queue(st.board, "f9", 4, down, {}, "minesweeper", st.clash)[0] == 0  # f11 is held, but g10 (an enemy) is as short a way
    st.board["f10"] = Piece(52, "minesweeper", "red")
    assert bot._queue(st.board, "f9", 4, down, {"f10": 3, "f9": 4}, "minesweeper", st.clash)[0] == 0  # the sweeper in front leads the way
    st.board["f10"] = Piece(52, "submarine", "red")
    # a submarine there is a leader too, but its own way goes round the mines (f10 g10 h10 h11 h12 g12): 5 steps,
    # not ahead of the sweeper (4): it stands in the way (it did, for the last 500 plies of a drawn game)
    assert bot._queue(st.board, "f9", 4, down, {"f10": 5, "f9": 4}, "minesweeper", st.clash)[0] == 3

    # the first of several going in is progress, not an obstacle to the rest (counting it kept every ship out)
    st.board = _laid({s: v for s, v in layout.items() if s != "g10"})
    st.board["e9"] = Piece(60, "minesweeper", "red")
    waiting = bot.evaluate(st, w)
    del st.board["e9"]
    st.board["f10"] = Piece(60, "minesweeper", "red")
    assert bot.evaluate(st, w) - waiting > 0.05  # e9 to f10 is 2 steps nearer, with the other sweeper behind it


def test_a_known_enemy_piece_a_ship_cannot_beat_is_in_its_way_to_the_flag() -> None:
    """Dover Patrol, a drawn campaign game (seed 8 vs random): the enemy flag's only open neighbour held a flying
    boat that bounced facedown's flying boat, light cruiser and submarine each time; all three sat beside it for
    the rest of the game and the destroyer that sinks a flying boat never came. A known enemy piece a ship cannot
    beat now costs it 6 steps, so the nearest ships that *can* get through are the ones that count."""
    from controller.bots.belief import template
    from controller.bots.values import way_down, worth

    st = new_game("dover_patrol")
    w = worth(template(st.game, {}))
    bot = FaceDownBot(1)
    bot.new_game("dover_patrol", "red", {}, 1)
    mines = {"f12": ("mine", "blue"), "h12": ("mine", "blue"), "f11": ("mine", "blue"), "h11": ("mine", "blue")}
    layout = {"a1": ("flag", "red"), "g12": ("flag", "blue"), **mines, "g11": ("flying_boat", "blue"),
              "g10": ("flying_boat", "red"), "f10": ("light_cruiser", "red"), "h10": ("submarine", "red")}

    def score(destroyer: str, known: bool) -> float:
        st.board = _laid({**layout, destroyer: ("destroyer", "red")}, ("g11",) if known else ())
        return bot.evaluate(st, w)

    # known: each step of the destroyer towards the flag is progress; unknown, the three beside it are the nearest
    assert score("d8", True) - score("d7", True) > 0.04
    assert abs(score("d7", False) - score("d8", False)) < 0.01
    walls = tuple((s, kind) for s, (kind, _side) in mines.items())
    steps, down = way_down(w, "g12", w.profile["destroyer"], walls)
    st.board["g11"].known_to = frozenset({"red"})
    assert bot._queue(st.board, "g10", steps["g10"], down, {}, "light_cruiser", st.clash)[0] == 6  # it bounces
    assert bot._queue(st.board, "g10", steps["g10"], down, {}, "destroyer", st.clash)[0] == 0  # it sinks it


def test_a_piece_held_up_by_a_known_enemy_it_cannot_beat_leads_nobody() -> None:
    """Dover Patrol, campaign seed 19 vs random: a battle cruiser beside the enemy flag's only open neighbour, held
    by a known flying boat it bounces off, with a torpedo boat behind it; the destroyer that sinks flying boats
    queued behind both (as the three nearest they led the way, so nobody paid for standing in it) until the ply
    cap. A piece held up so leads nobody: the cruiser making way is now progress; with the flying boat unknown it
    is not (the cruiser may well get through)."""
    from controller.bots.belief import template
    from controller.bots.values import worth

    st = new_game("dover_patrol")
    w = worth(template(st.game, {}))
    bot = FaceDownBot(1)
    bot.new_game("dover_patrol", "red", {}, 1)
    layout = {"a1": ("flag", "red"), "g12": ("flag", "blue"), "f12": ("mine", "blue"), "g11": ("mine", "blue"),
              "h12": ("flying_boat", "blue"), "h10": ("torpedo_boat", "red"), "g10": ("destroyer", "red"),
              "c8": ("patrol_boat", "red"), "b8": ("light_cruiser", "red")}

    def score(cruiser: str, known: bool) -> float:
        st.board = _laid({**layout, cruiser: ("battle_cruiser", "red")}, ("h12",) if known else ())
        return bot.evaluate(st, w)

    assert score("e9", True) - score("h11", True) > 0.2
    assert score("e9", False) < score("h11", False)


def test_a_piece_that_cannot_attack_is_not_drawn_to_the_enemy_flag() -> None:
    """A Dover minelayer cannot attack, so it can never take the flag: nearer the enemy flag it is only in the way
    of the ships that can (one stood in the harbour entrance of a drawn game)."""
    from controller.bots.belief import template
    from controller.bots.values import worth
    from controller.rules.base import Piece

    st = new_game("dover_patrol")
    w = worth(template(st.game, {}))
    assert "minelayer" not in w.takers and "destroyer" in w.takers
    bot = FaceDownBot(1)
    bot.new_game("dover_patrol", "red", {}, 1)
    scores = {}
    for at in ("h4", "h9"):
        st.board = {"a1": Piece(1, "flag", "red"), "g12": Piece(2, "flag", "blue"), "a4": Piece(3, "destroyer", "red"),
                    at: Piece(4, "minelayer", "red")}
        scores[at] = bot.evaluate(st, w)
    assert abs(scores["h9"] - scores["h4"]) < 0.03  # five steps nearer: only the 0.004 a step every mover earns


def test_rule_built_dover_setups_keep_minesweepers_out_of_the_harbour_corner() -> None:
    """A minesweeper started at a1 behind its own ships in the harbour (one entrance, c3-c4) never got out: Dover
    drew at the ply cap with the enemy flag shut in by mines. Clearers start where the way out along their own
    lines is no longer than the straight way (file c runs straight out through the entrance)."""
    gdef = load_game("dover_patrol")
    corner = {"red": {"a1", "a2", "a3", "b1", "b2", "b3"}, "blue": {"h12", "h11", "h10", "g12", "g11", "g10"}}
    rng = random.Random(4)
    for side in gdef.sides:
        for _ in range(40):
            placement = built_setup(gdef, side, rng)
            sweepers = {s for s, piece in placement.items() if piece == "minesweeper"}
            assert len(sweepers) == 2 and not sweepers & corner[side], (side, sweepers)


def test_an_open_door_to_the_flag_counts_against_it() -> None:
    """Stratego, ledger seed 9: facedown's lieutenant stepped off j5, beside its flag on j4, with an enemy colonel
    on j6; twelve plies later the colonel walked in and took the flag. The look-ahead sees the enemy's attacks after
    our move, not its quiet move first: an enemy two steps from the flag with the station between them empty now
    costs FLAG_DOOR."""
    from controller.bots.values import worth

    st = new_game("stratego")
    w = worth(st)
    bot = FaceDownBot(1)
    bot.new_game("stratego", "red", st.options, 1)
    layout = {"j4": ("flag", "red"), "j6": ("colonel", "blue"), "a10": ("flag", "blue"), "a1": ("general", "red")}
    scores = {}
    for lieutenant_on in ("j5", "i5"):
        st.board = _laid({**layout, lieutenant_on: ("lieutenant", "red")})
        scores[lieutenant_on] = bot.evaluate(st, w)
    assert scores["j5"] - scores["i5"] > 1.0  # FLAG_DOOR (1.5) for the door shut, less what i5 is worth more


def test_an_enemy_beside_the_flag_counts_and_a_piece_that_beats_it_is_brought_near(monkeypatch: pytest.MonkeyPatch) -> None:
    """Stratego, campaign seed 9 vs random: a known enemy colonel stood two steps from facedown's flag (j4) for
    twenty plies; the captain and lieutenant shutting the door stepped away from it (each was in danger where it
    stood, and an enemy *beside* the flag cost no more than one two steps off), while the general that beats a
    colonel stayed boxed in three stations away. The colonel walked in and took the flag. An enemy beside the flag
    now costs FLAG_NEXT, and while one is three steps or fewer away, each step between it and our nearest piece
    that beats it costs GUARD. (With our general on a1 the colonel two steps off also finds it late to the door,
    which costs too: beside the flag must still cost more, and without that term by the gap between the two.)"""
    from controller.bots import facedown
    from controller.bots.facedown import FLAG_DOOR, FLAG_NEXT, GUARD, GUARD_NEAR, FaceDownClassic
    from controller.bots.values import worth

    st = new_game("stratego")
    w = worth(st)
    bot = FaceDownBot(1)
    bot.new_game("stratego", "red", st.options, 1)

    def score(colonel: str, general: str) -> float:
        st.board = _laid({"j4": ("flag", "red"), colonel: ("colonel", "blue"), "a10": ("flag", "blue"), general: ("general", "red")})
        return bot.evaluate(st, w)

    beside, door = score("j5", "a1"), score("i5", "a1")  # i5: two steps, through i4 or j5, both empty
    assert door - beside > 0
    late_guarding = score("i5", "h3") - score("i5", "h1") - (score("c7", "h3") - score("c7", "h1"))
    with monkeypatch.context() as m:
        m.setattr(facedown, "LATE", {})
        beside, door = score("j5", "a1"), score("i5", "a1")
        assert door - beside > (FLAG_NEXT - FLAG_DOOR) * 0.9
        # h3 is two steps nearer the colonel on i5 than h1; with the colonel far from the flag (c7) that is worth
        # only what any move up the board is (the other terms)
        guarding = score("i5", "h3") - score("i5", "h1")
        guarding -= score("c7", "h3") - score("c7", "h1")
        assert guarding == pytest.approx(2 * GUARD_NEAR[2])
    assert late_guarding > guarding  # from h3 the general is also a step less late to the door
    classic = FaceDownClassic(1)  # the bot before: the same small guard wherever the intruder stands
    classic.new_game("stratego", "red", st.options, 1)
    bot = classic
    assert score("i5", "h3") - score("i5", "h1") - (score("c7", "h3") - score("c7", "h1")) == pytest.approx(2 * GUARD)


def test_the_flag_guard_grows_as_the_intruder_nears_and_an_even_trade_stops_it() -> None:
    """The known weakness of the bot before: a known enemy beside its flag for 10-30 plies while the piece that
    could stop it stayed away, the guard term small (0.08 a step) and counting only pieces that beat the intruder.
    Each step between the intruder and our nearest piece that stops it now costs more the nearer the intruder is
    to the flag (GUARD_NEAR), and a piece that trades with it evenly (a colonel against a colonel) stops it too."""
    from controller.bots.facedown import GUARD_NEAR
    from controller.bots.values import worth

    st = new_game("stratego")
    w = worth(st)
    bot = FaceDownBot(1)
    bot.new_game("stratego", "red", st.options, 1)

    def guard_cost(colonel: str, near: str, far: str, guard: str = "general") -> float:
        def score(at: str) -> float:
            st.board = _laid({"j4": ("flag", "red"), colonel: ("colonel", "blue"), "a10": ("flag", "blue"), at: (guard, "red")})
            return bot.evaluate(st, w)
        return score(near) - score(far)

    # one step nearer the colonel: g5 -> h5 when it is beside the flag on j5, h6 -> h5 when it is three steps off
    # (on i6) the other terms (a piece moving up the board) are the same, as the far colonel on c7 shows
    other = guard_cost("c7", "h5", "g5")
    beside = guard_cost("j5", "h5", "g5") - other
    three_off = guard_cost("i6", "h5", "g5") - other
    assert beside == pytest.approx(GUARD_NEAR[1]) and three_off == pytest.approx(GUARD_NEAR[3])
    assert beside > 4 * three_off
    # a colonel of ours only trades with theirs: it stops it, and bringing it counts as a general's would
    assert guard_cost("j5", "h5", "g5", "colonel") - guard_cost("c7", "h5", "g5", "colonel") == pytest.approx(GUARD_NEAR[1])


def test_a_defender_late_to_the_flags_door_counts_each_step_it_is_late() -> None:
    """Navy chess (mainland) seed 3 against the bot before: our flagship on A3 boxed in by our own mines (A2, A4), an
    unknown torpedo ship three steps off on C4, and our cruiser, three steps from the one door (B3), struck pieces
    farther off and came back one move late: the torpedo ship stepped in on B3 and took the flagship. The guard
    counts the steps between the intruder and our nearest stopper; being late to the door it comes in by now
    counts too, LATE a step, on our turn from one step past the intruder's (``n`` moves to strike it there), on the
    enemy's one sooner, and nothing when the intruder is far."""
    from controller.bots.facedown import GUARD_NEAR, LATE, FaceDownClassic
    from controller.bots.values import worth

    st = new_game("navy_cn")
    w = worth(st)
    bot = FaceDownBot(1)
    bot.new_game("navy_cn", "red", st.options, 1)

    def score(cruiser: str, torpedo_ship: str, turn: str = "red") -> float:
        st.board = _laid({"A3": ("flagship", "red"), "A2": ("mine", "red"), "A4": ("mine", "red"), "N1": ("flagship", "blue"),
                          "H0": ("battleship", "red"), torpedo_ship: ("torpedo_ship", "blue"), cruiser: ("cruiser", "red")})
        st.turn = turn
        return bot.evaluate(st, w)

    reach, dist = w.reach["cruiser"]["B3"], w.distance["C4"]
    assert w.distance["C4"]["A3"] == 3 and reach["E3"] == 3 and reach["G4"] == 5

    def late_cost(turn: str) -> float:  # E3 in time, G4 two steps late; the guard's steps and every other term out
        return (score("E3", "C4", turn) - score("G4", "C4", turn)) - (score("E3", "K4", turn) - score("G4", "K4", turn)) \
            - GUARD_NEAR[3] * (dist["G4"] - dist["E3"])

    assert late_cost("red") == pytest.approx(2 * LATE[3])
    assert late_cost("blue") == pytest.approx(3 * LATE[3] - LATE[3])  # E3 one late now, G4 three: two more
    classic = FaceDownClassic(1)  # the bot before never counted it
    classic.new_game("navy_cn", "red", st.options, 1)
    bot = classic
    assert score("E3", "K4") - score("G4", "K4") == pytest.approx(score("E3", "C4") - score("G4", "C4") - 0.08 * (dist["G4"] - dist["E3"]))


def test_an_attack_refused_because_of_its_target_tells_the_bot_what_the_target_is_not() -> None:
    """Navy chess (mainland): a safe camp shelters every piece but the flagship. facedown guessed the cruiser in
    camp K2 was the flagship, was refused J1-K2, then tried K3-K2 and J3-K2 with the same guess and lost the game
    for three refused moves in a row. A refusal now rules out the kinds the attack would have been legal against."""
    st = new_game("navy_cn")
    belief = Belief(st.game, "red", st.options)
    pieces = [{"uid": 1, "owner": "blue", "station": "K2"}, {"uid": 2, "owner": "red", "station": "K3", "piece": "cruiser"},
              {"uid": 3, "owner": "blue", "station": "N2"}]
    belief.update({"phase": "play", "turn": "red", "ply": 40, "pieces": pieces})
    belief.possible[1] = belief.possible[3] = frozenset(belief.kinds)  # it may be anything, the flagship too
    before = belief.possible[1]
    belief.refused("K3", "K2")
    assert belief.possible[1] == before - {"flagship"}
    belief.refused("K3", "N2")  # not a move the sheltering explains (not even adjacent): nothing learned
    assert "flagship" in belief.possible[3]


def test_a_striker_shot_down_where_it_won_is_not_taken_for_the_piece_it_struck() -> None:
    """Sanjunqi, campaign seed 9 vs greedy: facedown's fighter won its strike on j0 and a blue AA gun then shot it
    down there. Both removals name j0; the belief read the fighter's as the defender's, so it thought blue's only
    fighter gone, could not place the real one, and tried one ground attack after another on it until three
    refused moves in a row lost the game."""
    st = new_game("sanjunqi")
    belief = Belief(st.game, "red", st.options)
    pieces = [{"uid": 10, "owner": "red", "station": "b0", "piece": "fighter"}, {"uid": 49, "owner": "blue", "station": "j0"},
              {"uid": 50, "owner": "blue", "station": "n0"}, {"uid": 56, "owner": "blue", "station": "o0"}]
    belief.update({"phase": "play", "turn": "red", "ply": 20, "pieces": pieces})
    ruling = {"ply": 21, "side": "red", "kind": "attack", "from": "b0", "to": "j0", "piece": "fighter", "outcome": "attacker",
              "defender_side": "blue", "removed": [{"station": "j0", "owner": "blue"},
                                                   {"station": "j0", "owner": "red", "piece": "fighter"}],
              "reveals": [{"station": "n0", "owner": "blue", "piece": "aa_gun"}], "next_turn": "blue"}
    after = [{"uid": 50, "owner": "blue", "station": "n0", "piece": "aa_gun", "public": True},
             {"uid": 56, "owner": "blue", "station": "o0"}]
    belief.update({"phase": "play", "turn": "blue", "ply": 21, "pieces": after}, ruling)
    assert belief.known.get(49) != "fighter"
    assert belief.known[10] == "fighter"
    assert "fighter" in belief.possible[56]
    assert any(belief.sample(random.Random(k)).get(56) == "fighter" for k in range(40))


@pytest.mark.parametrize("game", GAMES)
def test_the_belief_holds_the_truth_through_a_long_random_game(game: str) -> None:
    """Whatever happens (strikes that return, bombardments that bounce, moves that show their piece), every piece
    the seat cannot see keeps its true kind among those the belief allows. Sanjunqi once ruled out a gunboat: its
    shore strike only attacks, so 'could it make that move onto an empty station' said no."""
    st, rng = _deployed(game, 3)
    seat = st.game.sides[0]
    belief = Belief(st.game, seat, st.options)
    belief.update(view(st, seat))
    for ply in range(400):
        if st.phase != "play":
            break
        ruling = st.apply(rng.choice(st.legal_moves()))
        belief.update(view(st, seat), redact_ruling(ruling, seat))
        for p in st.board.values():
            if p.owner != seat and p.uid in belief.possible:
                assert p.type in belief.possible[p.uid], (ply, p)


def test_a_piece_that_moved_unshown_is_none_whose_moves_show_it() -> None:
    """Navy chess: the flagship is shown whenever it moves, so a piece that moved without being shown is not the
    flagship (the guesses put the flagship on such pieces, and attacked them in their camps)."""
    st, rng = _deployed("navy_cn", 5)
    belief = Belief(st.game, "red", st.options)
    belief.update(view(st, "red"))
    for _ in range(120):
        if st.phase != "play":
            break
        belief.update(view(st, "red"), redact_ruling(st.apply(rng.choice(st.legal_moves())), "red"))
    moved_unshown = [u for u in belief.moved if u in belief.possible]
    assert moved_unshown and all("flagship" not in belief.possible[u] for u in moved_unshown)


def test_going_back_to_an_arrangement_of_its_own_pieces_costs_the_more_the_oftener() -> None:
    """Dover draws at the ply cap were the bot going round in circles where nothing better showed within its
    look-ahead. A move back into an arrangement of its own pieces it stood in before costs REPEAT a visit; a new
    one costs nothing; an attack counts as staying (a bounce changes nothing)."""
    from controller.bots.facedown import REPEAT

    st, rng = _deployed("stratego", 1)
    bot = FaceDownBot(1)
    bot.new_game("stratego", "red", st.options, 1)
    bot.sync(view(st, "red"))
    bot._visit()
    here = bot._visit()  # two turns in this arrangement
    step = next(m for m in st.legal_moves("red") if m.to not in st.board)
    assert bot._repeat_penalty(here, step) == 0.0
    uid = st.board[step.frm].uid
    bot.visits[here - {(step.frm, uid)} | {(step.to, uid)}] = 3
    assert bot._repeat_penalty(here, step) == pytest.approx(3 * REPEAT)
    # the arrangement is the set of (station, piece) itself, not a sum of hashes: two pieces that swapped stations
    # stand in another one (the bot before counted such a swap as the old one, depending on the hash order)
    (s1, u1), (s2, u2) = sorted(here)[:2]
    assert here - {(s1, u1), (s2, u2)} | {(s1, u2), (s2, u1)} not in bot.visits
    st.board[step.to] = st.board.pop("a7")  # an enemy piece in reach: attacking it is staying
    bot.belief.update(view(st, "red"))
    here = bot._visit()
    attack = next(m for m in st.legal_moves("red") if m.to == step.to)
    assert bot._repeat_penalty(here, attack) == pytest.approx(REPEAT * bot.visits[here])
