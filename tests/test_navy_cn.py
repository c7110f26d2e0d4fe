"""Navy chess, mainland edition (navy_cn): the seed's pieces and clash table cell by cell, each seed rule as a test,
a scripted physical game, and random physical games that must give exactly the engine's rulings."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from test_rules_helpers import position

from controller.cli import main
from controller.commands.rules import contract
from controller.rules import SPECTATOR, IllegalMoveError, SetupError, load_game, redact_ruling
from tests.physical import random_game_script
from tests.test_navy_helpers import attack, events, fill, lift, move, started, tick

GAME = load_game("navy_cn")

# The seed's table 勝負一覽, verbatim: rows are the defender (守), columns the attacker (攻).
SEED_TABLE = """\
\t航空母艦\t戰鬥艦\t巡洋艦\t驅除艦\t雷擊艦\t掃雷艦\t潛水艇\t魚雷\t水雷\t旗艦
航空母艦\t同盡\t守勝\t守勝\t守勝\t守勝\t守勝\t攻勝\t同盡\t—\t守勝
戰鬥艦\t攻勝\t同盡\t守勝\t守勝\t守勝\t守勝\t攻勝\t同盡\t—\t守勝
巡洋艦\t攻勝\t攻勝\t同盡\t守勝\t守勝\t守勝\t攻勝\t同盡\t—\t守勝
驅除艦\t攻勝\t攻勝\t攻勝\t同盡\t守勝\t守勝\t攻勝\t同盡\t—\t守勝
雷擊艦\t攻勝\t攻勝\t攻勝\t攻勝\t同盡\t守勝\t守勝\t同盡\t—\t守勝
掃雷艦\t攻勝\t攻勝\t攻勝\t攻勝\t攻勝\t同盡\t攻勝\t同盡\t—\t守勝
潛水艇\t守勝\t守勝\t守勝\t守勝\t攻勝\t守勝\t同盡\t同盡\t—\t守勝
魚雷\t同盡\t同盡\t同盡\t同盡\t同盡\t同盡\t同盡\t同盡\t—\t同盡
水雷\t同盡\t同盡\t同盡\t同盡\t同盡\t攻勝\t同盡\t同盡\t—\t同盡
旗艦\t攻勝\t攻勝\t攻勝\t攻勝\t攻勝\t攻勝\t攻勝\t同盡\t—\t同盡"""
SEED_OUTCOME = {"攻勝": "attacker", "守勝": "defender", "同盡": "both", "—": "illegal"}
# The seed's piece list: name, count per side.
SEED_PIECES = [("航空母艦", 2), ("戰鬥艦", 3), ("巡洋艦", 3), ("驅除艦", 3), ("雷擊艦", 3), ("掃雷艦", 3), ("潛水艇", 3),
               ("魚雷", 2), ("水雷", 3), ("旗艦", 1)]
ZH = {p.zh: p.id for p in GAME.pieces}


def seed_cells(text: str) -> dict[tuple[str, str], str]:
    rows = [line.split("\t") for line in text.splitlines()]
    attackers = rows[0][1:]
    return {(ZH[a], ZH[row[0]]): SEED_OUTCOME[o] for row in rows[1:] for a, o in zip(attackers, row[1:], strict=True)}


CELLS = seed_cells(SEED_TABLE)


def test_pieces_and_counts_are_the_seeds_26_with_their_names_as_written() -> None:
    assert [(p.zh, p.count) for p in GAME.pieces] == SEED_PIECES
    assert sum(n for _, n in SEED_PIECES) == 26
    assert len(CELLS) == 100


@pytest.mark.parametrize(("attacker", "defender"), sorted(CELLS))
def test_every_cell_of_the_seed_table(attacker: str, defender: str) -> None:
    assert contract("navy_cn")["clash"][attacker][defender] == CELLS[(attacker, defender)]


def test_the_seed_table_through_the_cli_json() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["rules", "navy_cn", "--json"]) == 0
    doc = json.loads(out.getvalue())
    assert {(a, d): o for a, row in doc["clash"].items() for d, o in row.items()} == CELLS
    assert {p["zh"]: p["count"] for p in doc["pieces"]} == dict(SEED_PIECES)


def test_the_table_is_explicit_cells_keyed_attacker_to_defender() -> None:
    cells = {k: v for k, v in CELLS.items() if k[0] != "mine"}
    assert dict(GAME.clash.cells) == cells and not GAME.clash.rules and not GAME.clash.by_rank


def test_secret_setup_not_in_safe_camps() -> None:
    red = fill(GAME, "red", {})
    camp = next(s.id for s in GAME.stations if s.kind == "camp" and s.y < 7)
    moved = dict(red)
    station = next(s for s, p in red.items() if p == "cruiser")
    del moved[station]
    moved[camp] = "cruiser"
    state = started("navy_cn", red, fill(GAME, "blue", {}))
    assert all(not p.public and p.known_to == {p.owner} for p in state.board.values())  # face down: only the owner knows
    with pytest.raises(SetupError) as info:
        started("navy_cn", moved, fill(GAME, "blue", {}))
    assert [(p.station, p.message) for p in info.value.problems] == [(camp, "不能放於安全營: no piece may be set up in a safe camp")]


def test_the_flagship_only_on_a_command_post() -> None:
    red = fill(GAME, "red", {"A3": "flagship"})
    assert red["A3"] == "flagship"
    bad = dict(red)
    other = next(s for s, p in red.items() if p == "battleship")
    bad[other], bad["A3"] = "flagship", "battleship"
    with pytest.raises(SetupError) as info:
        started("navy_cn", bad, fill(GAME, "blue", {}))
    assert [p.station for p in info.value.problems] == [other]


def test_red_lines_one_to_three_stations_without_turning() -> None:
    state = position("navy_cn", {"B0": ("red", "cruiser"), "N2": ("blue", "flagship")})
    dest = set(state.destinations("B0"))
    assert {"C0", "D0", "E0", "B1", "B2", "B3"} <= dest  # one to three along either lane through B0
    assert not {"F0", "B4", "C2", "D1"} & dest  # not four, not round the corner
    blocked = position("navy_cn", {"B0": ("red", "cruiser"), "C0": ("red", "mine"), "N2": ("blue", "flagship")})
    assert not {"D0", "E0"} & set(blocked.destinations("B0"))  # never through a piece


def test_branch_lines_one_station() -> None:
    state = position("navy_cn", {"C2": ("red", "cruiser"), "N2": ("blue", "flagship")})
    assert set(state.destinations("C2")) == {"B2", "D2", "C1", "C3"}  # C2 is on no red lane
    camp = position("navy_cn", {"D2": ("red", "cruiser"), "N2": ("blue", "flagship")})
    assert set(camp.destinations("D2")) == {"C2", "E2", "D1", "D3", "C1", "C3", "E1", "E3"}


def test_pieces_in_a_safe_camp_cannot_be_attacked_except_the_flagship() -> None:
    state = position("navy_cn", {"D2": ("blue", "cruiser"), "C2": ("red", "battleship")})
    assert "D2" not in state.destinations("C2")
    assert state.why_illegal(("C2", "D2")) == {"code": "reason.sheltered", "params": {"station": "D2", "where": {"code": "kind.camp", "params": {}}}}
    flagship = position("navy_cn", {"D2": ("blue", "flagship"), "C2": ("red", "battleship")})
    assert flagship.apply(("C2", "D2")).outcome == "attacker"
    assert flagship.result is not None and flagship.result.winners == ("red",)


def test_the_referee_is_silent_winner_back_face_down_loser_removed() -> None:
    state = position("navy_cn", {"C2": ("red", "battleship"), "D2": ("red", "mine"), "B2": ("blue", "cruiser"), "N2": ("blue", "flagship")}, turn="blue")
    ruling = state.apply(("B2", "C2"))
    assert ruling.outcome == "defender" and [r.type for r in ruling.removed] == ["cruiser"]
    told = redact_ruling(ruling, SPECTATOR)
    assert "piece" not in told and "defender_piece" not in told and told["reveals"] == []
    red = redact_ruling(ruling, "red")
    assert red["defender_piece"] == "battleship" and "piece" not in red  # the attacker stays unknown to the defender
    winner = state.board["C2"]
    assert winner.type == "battleship" and not winner.public and winner.known_to == {"red"}


def test_the_flagship_must_reveal_when_it_moves() -> None:
    state = position("navy_cn", {"A1": ("red", "flagship"), "N2": ("blue", "flagship")})
    ruling = state.apply(("A1", "B1"))
    assert [(r.station, r.type, r.to) for r in ruling.reveals] == [("B1", "flagship", ("all",))]
    assert redact_ruling(ruling, SPECTATOR)["piece"] == "flagship" and state.board["B1"].public
    other = position("navy_cn", {"A0": ("red", "cruiser"), "N2": ("blue", "flagship")})
    assert other.apply(("A0", "B0")).reveals == ()  # every other piece stays face down


def test_destroying_the_enemy_flagship_wins() -> None:
    state = position("navy_cn", {"G2": ("red", "submarine"), "H2": ("blue", "flagship"), "A1": ("red", "flagship")})
    ruling = state.apply(("G2", "H2"))
    assert ruling.result is not None and ruling.result.winners == ("red",) and ruling.result.reason == {"code": "verdict.piece_lost", "params": {"piece": "flagship", "side": "blue"}}


def test_the_mine_never_moves_and_only_a_minesweeper_clears_it() -> None:
    state = position("navy_cn", {"C0": ("red", "mine"), "C1": ("blue", "minesweeper"), "N2": ("blue", "flagship")})
    assert state.destinations("C0") == {}
    with pytest.raises(IllegalMoveError, match="reason.piece_immobile"):
        state.apply(("C0", "D0"))
    state.turn = "blue"
    assert state.apply(("C1", "C0")).outcome == "attacker"


def test_winner_advances_false_sends_a_winning_attacker_back() -> None:
    state = position("navy_cn", {"C2": ("red", "battleship"), "B2": ("blue", "cruiser"), "N2": ("blue", "flagship")},
                     options={"winner_advances": False})
    assert state.apply(("C2", "B2")).outcome == "attacker"
    assert state.board["C2"].type == "battleship" and "B2" not in state.board


def test_a_scripted_physical_game_with_a_silent_clash_a_flagship_reveal_and_a_flagship_win() -> None:
    red = fill(GAME, "red", {"G0": "torpedo", "F0": "battleship", "A1": "flagship"})
    blue = fill(GAME, "blue", {"H0": "cruiser", "N1": "flagship", "N0": "destroyer"}, empty=["I0", "J0", "K0", "M1"])
    lines: list[dict] = [{"setup": "red", "pieces": red}, {"setup": "blue", "pieces": blue}]
    tick(lines)
    attack(lines, "G0", "H0")  # torpedo against cruiser: both go, nobody is shown either
    lift(lines, "H0")
    move(lines, "N1", "M1")  # the flagship moves: shown
    move(lines, "F0", "I0")  # three stations along the red lane of column 0
    move(lines, "M1", "L1")  # into a safe camp, which does not shelter a flagship
    move(lines, "I0", "K0")
    move(lines, "N0", "N1")
    attack(lines, "K0", "L1")
    evs = [e for e in events("navy_cn", lines) if e["event"] in ("move", "attack", "fixup", "fixup_done", "game_over", "mismatch", "illegal")]
    core = [(e["event"], e.get("from"), e.get("to"), e.get("outcome")) for e in evs if e["event"] in ("move", "attack")]
    assert core == [
        ("attack", "G0", "H0", "both"),
        ("move", "N1", "M1", None),
        ("move", "F0", "I0", None),
        ("move", "M1", "L1", None),
        ("move", "I0", "K0", None),
        ("move", "N0", "N1", None),
        ("attack", "K0", "L1", "attacker"),
    ]
    hidden = [e for e in evs if e["event"] in ("move", "attack") and e["from"] in ("G0", "F0", "I0", "N0", "K0")]
    assert not [e for e in hidden if "piece" in e]  # nobody is told what the other pieces are
    assert not [e for e in evs if e["event"] in ("mismatch", "illegal")]
    at = next(i for i, e in enumerate(evs) if e["event"] == "attack")
    assert "defender_piece" not in evs[at] and "reveals" not in evs[at]  # silent referee
    # one step, by the attacker: the defender's piece in the attacker's hand leaves the game without a step
    assert [(s["action"], s["owner"], s["by"]) for s in evs[at + 1]["steps"]] == [("remove", "red", "red")]
    assert evs[at + 2]["event"] == "fixup_done"
    reveal = next(e for e in evs if e.get("piece") == "flagship")
    assert reveal["reveals"] == [{"owner": "blue", "piece": "flagship", "station": "M1"}]
    over = next(e for e in evs if e["event"] == "game_over")
    assert over["winners"] == ["red"] and over["reason"] == {"code": "verdict.piece_lost", "params": {"piece": "flagship", "side": "blue"}}


KEYS = ("event", "from", "to", "player", "outcome", "winners", "reason")


@pytest.mark.parametrize("seed", [3, 8])
def test_random_physical_games_give_exactly_the_engines_rulings(seed: int) -> None:
    script = random_game_script("navy_cn", seed, max_plies=60)
    out = io.StringIO()
    from controller.commands.script import run_script

    run_script("navy_cn", script.text(), out)
    got = [json.loads(x) for x in out.getvalue().splitlines()]
    rulings = [{k: e[k] for k in KEYS if k in e} for e in got if e["event"] in ("move", "attack", "game_over", "illegal")]
    assert rulings == [{k: r[k] for k in KEYS if k in r} for r in script.rulings]
    assert not [e for e in got if e["event"] == "mismatch"]
