"""Dover Patrol on the physical referee: a scripted game through `facedown script` (a bounce and its fix-up, the
flying boat's raid on the flag, the flag handed over by combat, the short game's end), and random physical games,
steered towards the flags, that give exactly the engine's rulings."""

from __future__ import annotations

import io
import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.commands.script import run_script
from controller.messages import render
from controller.rules import GameState, Move, load_game
from tests.physical import Noise, random_game_script

GAME = "dover_patrol"
KEYS = ("event", "from", "to", "player", "outcome", "winners", "reason")


def deployment(side: str, pinned: dict[str, str], empty: set[str]) -> dict[str, str]:
    """A full deployment: ``pinned`` pieces where given, the rest of the army filling the zone in station order."""
    game = load_game(GAME)
    zone = game.setup.zones["home"][side]
    army = [p.id for p in game.pieces for _ in range(p.count)]
    for pid in pinned.values():
        army.remove(pid)
    free = [s.id for s in game.stations if s.id in zone and s.id not in pinned and s.id not in empty]
    assert len(free) == len(army)
    return {**pinned, **dict(zip(free, army, strict=True))}


RED = deployment("red", {"a1": "flag", "d6": "submarine", "h6": "flying_boat"}, {"a4", "b4", "c4", "e4", "f4", "g4", "h4"})
BLUE = deployment("blue", {"h12": "flag", "d7": "submarine", "g10": "destroyer", "a8": "patrol_boat"},
                  {"h7", "h8", "h9", "h10", "h11", "a7", "b7"})


def lines(*items: dict) -> list[str]:
    out = [json.dumps({"setup": "red", "pieces": RED}), json.dumps({"setup": "blue", "pieces": BLUE}), json.dumps({"tick_ms": 40})]
    for item in items:
        out.append(json.dumps(item))
        out.append(json.dumps({"tick_ms": 40}))
    return out


def move(a: str, b: str) -> list[dict]:
    return [{"lift": a}, {"place": b}]


def attack(a: str, b: str) -> list[dict]:
    return [{"lift": a}, {"lift": b}, {"place": b}]


# Red's submarine bounces off Blue's; Red's flying boat flies up the h file (h7-h11 are empty), takes Blue's flag
# from h12 and stays on h10; Blue's destroyer downs it and takes the flag back. Blue shuttles a patrol boat a8/a7.
GAME_LINES = [
    *attack("d6", "d7"), {"lift": "d7"}, {"place": "d6"}, {"place": "d7"},  # bounce: both back on their squares
    *move("a8", "a7"),
    *move("h6", "h8"),
    *move("a7", "a8"),
    *move("h8", "h10"),  # over the harbour wall
    *move("a8", "a7"),
    *attack("h10", "h12"), {"lift": "h12"}, {"place": "h10"},  # the flag rides on the flying boat, back on h10
]
HAND_OVER = [*attack("g10", "h10"), {"lift": "h10"}, {"place": "g10"}]  # the flying boat leaves the game


def run(script: list[str], options: dict | None = None) -> list[dict]:
    out = io.StringIO()
    run_script(GAME, script, out, options=options, everything=True)
    return [json.loads(line) for line in out.getvalue().splitlines()]


def test_scripted_game_bounce_raid_and_hand_over() -> None:
    events = run(lines(*GAME_LINES, *HAND_OVER))
    assert not [e for e in events if e["event"] in ("mismatch", "illegal")]
    rulings = [(e["event"], e["from"], e["to"], e.get("outcome")) for e in events if e["event"] in ("move", "attack")]
    assert rulings == [
        ("attack", "d6", "d7", "bounce"), ("move", "a8", "a7", None), ("move", "h6", "h8", None),
        ("move", "a7", "a8", None), ("move", "h8", "h10", None), ("move", "a8", "a7", None),
        ("attack", "h10", "h12", "attacker"), ("attack", "g10", "h10", "attacker"),
    ]
    # the bounce: the referee asks for both pieces back on their own squares, and sees it done
    i = next(k for k, e in enumerate(events) if e["event"] == "attack")
    assert events[i]["piece"] == "submarine" and events[i]["defender_piece"] == "submarine"
    fix = events[i + 1]
    assert fix["event"] == "fixup" and [(s["station"], s["action"], s["owner"], s["to"]) for s in fix["steps"]] == [
        ("d7", "return", "red", "d6"), ("d7", "put_back", "blue", None)]
    assert events[i + 2]["event"] == "fixup_done"
    # the raid: the flying boat flew (shown), took the flag, and went back to h10 carrying it
    flight = next(e for e in events if e["event"] == "move" and e["from"] == "h6")
    assert flight["piece"] == "flying_boat"
    take = next(e for e in events if e["event"] == "attack" and e["to"] == "h12")
    assert [render(n, "en", load_game(GAME)) for n in take["notices"]] == ["Red's Flying Boat on h10 takes Blue's Flag: put it on the taker."]
    steps = [(s["station"], s["action"], s["owner"], s["to"]) for s in events[events.index(take) + 1]["steps"]]
    assert ("h12", "return", "red", "h10") in steps
    # the flag stays in play, in the raider's hand (no station: nothing to change on the board there); the notice
    # says where it goes
    keep = [s for s in events[events.index(take) + 1]["steps"] if s["action"] == "keep_in_hand"]
    assert [(s["station"], s["owner"], s["by"]) for s in keep] == [(None, "blue", "red")]
    assert not any(s[1] == "remove" for s in steps)
    # the hand-over: Blue's destroyer downs the carrier and takes its own flag back
    back = next(e for e in events if e["event"] == "attack" and e["from"] == "g10")
    assert [render(n, "en", load_game(GAME)) for n in back["notices"]] == [
        "Blue's Destroyer on g10 takes back Blue's Flag from the sunken Flying Boat: put it on the taker."]
    assert not [e for e in events if e["event"] == "game_over"]
    assert events[-1]["event"] in ("fixup_done", "turn")


def test_scripted_short_game_ends_at_the_capture() -> None:
    events = run(lines(*GAME_LINES), options={"flag_win": "first_capture"})
    over = [e for e in events if e["event"] == "game_over"]
    flag_lost = {"code": "verdict.piece_lost", "params": {"piece": "flag", "side": "blue"}}
    assert [{k: e[k] for k in ("winner", "winners", "reason")} for e in over] == [{"winner": "red", "winners": ["red"], "reason": flag_lost}]
    assert not [e for e in events if e["event"] == "mismatch"]


def test_a_wrong_fixup_after_a_bounce_is_a_mismatch() -> None:
    # instead of the fix-up, Blue's submarine in hand is put on a4, a station the ruling does not involve
    events = run(lines(*attack("d6", "d7"), {"place": "a4"}))
    assert any(e["event"] == "mismatch" and any(s["station"] == "a4" for s in e["stations"]) for e in events)


# ---------------------------------------------------------------------- random physical games
def flag_hunter(state: GameState, moves: list[Move], rng: random.Random) -> Move:
    """Takes flags, beats carriers, runs carriers home and heads for the enemy base; otherwise random."""
    side = state.turn
    carried = state.hook_data.get("carry_flag", {})
    bases = state.game.setup.zones["base"]
    at = state.game.station_by_id

    def dist(station: str, to_side: str) -> float:
        s = at[station]
        return min(abs(s.x - at[h].x) + abs(s.y - at[h].y) for h in bases[to_side])

    enemy = next(s for s in state.game.sides if s != side)
    best: list[Move] = []
    onward: list[Move] = []
    for m in moves:
        target = state.board.get(m.to)
        mover = state.board[m.frm]
        if target is not None and (target.type == "flag" or target.uid in carried):
            best.append(m)
        elif carried.get(mover.uid):
            if dist(m.to, side) < dist(m.frm, side):
                best.append(m)
        elif dist(m.to, enemy) < dist(m.frm, enemy):
            onward.append(m)
    if best and rng.random() < 0.9:
        return rng.choice(best)
    if onward and rng.random() < 0.6:
        return rng.choice(onward)
    return rng.choice(moves)


def _rulings(events: list[dict]) -> list[dict]:
    return [{k: e[k] for k in KEYS if k in e} for e in events if e["event"] in ("move", "attack", "game_over", "illegal")]


@pytest.mark.parametrize("options", [{}, {"winner_advances": True, "dropped_flag": "here"}, {"flag_win": "both_home"}])
@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000))
def test_random_physical_games_give_exactly_the_engines_rulings(options: dict, seed: int) -> None:
    noise = Noise(bounce=0.2, slide=0.2, swap_lift_order=0.5, change_mind=0.1)
    script = random_game_script(GAME, seed, max_plies=1000, noise=noise, options=options, policy=flag_hunter)
    out = io.StringIO()
    run_script(GAME, script.text(), out, options=options)
    events = [json.loads(line) for line in out.getvalue().splitlines()]
    assert _rulings(events) == [{k: r[k] for k in KEYS if k in r} for r in script.rulings]
    assert not [e for e in events if e["event"] == "mismatch"]


def test_steered_games_do_carry_flags_and_win_by_bringing_one_home() -> None:
    """The random games above are not idle: steered games take, carry, hand over and bring home flags."""
    notices: list[str] = []
    reasons = []
    for seed in range(10):
        script = random_game_script(GAME, seed, max_plies=1500, policy=flag_hunter)
        assert script.state is not None
        notices += [render(n, "en", script.state.game) for r in script.state.history for _, n in r.notices]
        if script.state.result is not None:
            reasons.append(render(script.state.result.reason, "en", script.state.game))
    assert any("takes Blue's Flag" in n or "takes Red's Flag" in n for n in notices)
    assert any("takes back" in n for n in notices)
    assert any("goes back to its base" in n for n in notices)
    assert any("brought" in r for r in reasons)


def test_the_shipped_hardware_profile_covers_the_board() -> None:
    from controller.sensing.profile import default_profile

    profile = default_profile(GAME)
    assert list(profile.channels) == list(load_game(GAME).station_ids)
    assert profile.matrix_size == (12, 8) and len(set(profile.channels.values())) == 96
