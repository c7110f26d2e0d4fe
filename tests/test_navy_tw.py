"""Navy chess, Taiwan edition (navy_tw): the seed's clash table cell by cell, its text's readings as options, the
armies of its three lists, each seed rule as a test, a scripted physical game with a wolf pack and a small loss,
and random physical games that must give exactly the engine's rulings."""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from test_rules_helpers import position

from controller.cli import main
from controller.commands.rules import contract
from controller.commands.script import run_script
from controller.messages import render
from controller.rules import SPECTATOR, load_game, new_game, redact_ruling
from tests.physical import random_game_script
from tests.test_navy_helpers import attack, events, fill, lift, move, tick

GAME = load_game("navy_tw")

# The seed's table 勝負一覽, verbatim: rows are the defender (守), columns the attacker (攻).
SEED_TABLE = """\
\t航空母艦\t主力艦\t巡洋艦\t炮艦\t驅逐艦\t潛水艇\t魚雷\t水雷\t掃雷艦\t飛彈快艇\t魚雷快艇
航空母艦\t同盡\t守勝\t守勝\t守勝\t守勝\t攻勝\t同盡\t—\t守勝\t攻勝\t攻勝
主力艦\t攻勝\t同盡\t守勝\t守勝\t守勝\t攻勝\t同盡\t—\t守勝\t守勝\t守勝
巡洋艦\t攻勝\t攻勝\t同盡\t守勝\t守勝\t攻勝\t同盡\t—\t守勝\t攻勝\t攻勝
炮艦\t攻勝\t攻勝\t攻勝\t同盡\t守勝\t攻勝\t同盡\t—\t守勝\t攻勝\t攻勝
驅逐艦\t攻勝\t攻勝\t攻勝\t攻勝\t同盡\t攻勝\t同盡\t—\t守勝\t攻勝\t攻勝
潛水艇\t守勝\t守勝\t守勝\t守勝\t攻勝\t同盡\t同盡\t—\t守勝\t守勝\t攻勝
魚雷\t同盡\t同盡\t同盡\t同盡\t同盡\t同盡\t同盡\t—\t同盡\t同盡\t同盡
水雷\t同盡\t同盡\t同盡\t同盡\t同盡\t同盡\t同盡\t—\t同盡\t同盡\t同盡
掃雷艦\t守勝\t守勝\t守勝\t守勝\t攻勝\t守勝\t同盡\t—\t同盡\t攻勝\t攻勝
飛彈快艇\t攻勝\t守勝\t攻勝\t攻勝\t攻勝\t守勝\t同盡\t—\t攻勝\t同盡\t守勝
魚雷快艇\t守勝\t守勝\t守勝\t守勝\t守勝\t同盡\t同盡\t—\t守勝\t攻勝\t同盡"""
SEED_OUTCOME = {"攻勝": "attacker", "守勝": "defender", "同盡": "both", "—": "illegal"}
ZH = {p.zh: p.id for p in GAME.pieces} | {"掃雷艦": "minesweeper"}  # the table writes 掃雷艦, the lists 掃雷艇


def seed_cells(text: str) -> dict[tuple[str, str], str]:
    rows = [line.split("\t") for line in text.splitlines()]
    attackers = rows[0][1:]
    return {(ZH[a], ZH[row[0]]): SEED_OUTCOME[o] for row in rows[1:] for a, o in zip(attackers, row[1:], strict=True)}


CELLS = seed_cells(SEED_TABLE)
# The text's readings where it contradicts the table, each behind an option.
TEXT_READINGS = {
    ("minesweeper", "mine"): ({"minesweeper_clears_mine": True}, "attacker"),
    ("destroyer", "submarine"): ({"destroyer_sinks_submarine": False}, "defender"),
    ("missile_boat", "carrier"): ({"lone_boat_sinks_carrier": False}, "defender"),
    ("torpedo_boat", "carrier"): ({"lone_boat_sinks_carrier": False}, "defender"),
}
SHIPS = ["carrier", "capital_ship", "cruiser", "gunboat", "destroyer", "submarine", "minesweeper", "missile_boat", "torpedo_boat", "flagship"]


def clash(attacker: str, defender: str, **options: object) -> str:
    return contract("navy_tw", dict(options))["clash"][attacker][defender]


@pytest.mark.parametrize(("attacker", "defender"), sorted(CELLS))
def test_every_cell_of_the_seed_table(attacker: str, defender: str) -> None:
    assert clash(attacker, defender) == CELLS[(attacker, defender)]


@pytest.mark.parametrize("cell", sorted(TEXT_READINGS))
def test_where_the_text_contradicts_the_table_an_option_gives_the_texts_reading(cell: tuple[str, str]) -> None:
    options, outcome = TEXT_READINGS[cell]
    assert CELLS[cell] != outcome
    assert clash(*cell, **options) == outcome
    others = {k: v for k, v in CELLS.items() if k not in TEXT_READINGS}
    doc = contract("navy_tw", options)["clash"]
    assert all(doc[a][d] == o for (a, d), o in others.items())


def test_the_seed_table_through_the_cli_json() -> None:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["rules", "navy_tw", "--json"]) == 0
    doc = json.loads(out.getvalue())
    assert all(doc["clash"][a][d] == o for (a, d), o in CELLS.items())
    assert sum(p["count"] for p in doc["pieces"]) == 30


ARMIES = {
    "thirty": {"flagship": 1, "capital_ship": 1, "carrier": 1, "cruiser": 2, "gunboat": 2, "destroyer": 2, "missile_boat": 3,
               "torpedo_boat": 3, "minesweeper": 3, "submarine": 2, "anti_sub": 1, "bomber": 1, "torpedo": 2, "missile": 2,
               "mine": 3, "flag": 1},
    # 每一方的棋子為30枚: the list as written (it adds up to 31)
    "list30": {"capital_ship": 1, "carrier": 1, "cruiser": 2, "gunboat": 2, "destroyer": 2, "submarine": 2, "anti_sub": 2,
               "bomber": 2, "minesweeper": 3, "missile_boat": 3, "torpedo_boat": 3, "mine": 3, "torpedo": 2, "missile": 2, "flag": 1},
    # 棋子特性, plus the flag
    "table": {"carrier": 1, "cruiser": 2, "gunboat": 2, "destroyer": 2, "missile_boat": 3, "torpedo_boat": 3, "minesweeper": 3,
              "anti_sub": 1, "bomber": 1, "submarine": 2, "torpedo": 2, "mine": 3, "flagship": 1, "flag": 1},
    # the prose: 12 main + 12 secondary + 1 flag, plus one anti-submarine plane and one bomber
    "prose25": {"flagship": 2, "carrier": 2, "cruiser": 2, "destroyer": 2, "torpedo": 2, "submarine": 2, "missile_boat": 3,
                "torpedo_boat": 3, "mine": 3, "minesweeper": 3, "flag": 1, "anti_sub": 1, "bomber": 1},
}


@pytest.mark.parametrize("army", sorted(ARMIES))
def test_each_of_the_seeds_armies_is_an_option(army: str) -> None:
    assert {p["id"]: p["count"] for p in contract("navy_tw", {"army": army})["pieces"]} == ARMIES[army]
    import random

    from controller.rules.deploy import random_deployment

    state = new_game("navy_tw", {"army": army})
    for side in state.game.sides:
        state.deploy(side, random_deployment(state.game, side, random.Random(1), state.options))
    assert len(state.board) == 2 * sum(ARMIES[army].values())


def test_bombers_destroy_ships() -> None:
    assert all(clash("bomber", ship) == "attacker" and clash(ship, "bomber") == "defender" for ship in SHIPS)


def test_the_anti_submarine_plane_detects_submarines_which_must_reveal() -> None:
    state = position("navy_tw", {"D3": ("red", "anti_sub"), "E3": ("blue", "submarine"), "A0": ("red", "flag"), "M0": ("blue", "flag")})
    ruling = state.apply(("D3", "E3"))
    assert ruling.outcome == "bounce" and state.board["E3"].public
    told = redact_ruling(ruling, SPECTATOR)
    assert told["reveals"] == [{"station": "E3", "owner": "blue", "piece": "submarine"}]
    assert told["notices"] == [{"code": "notice.anti_sub_found", "params": {"owner": "blue", "piece": "submarine", "station": "E3"}}]
    assert render(told["notices"][0], "en", state.game) == "Blue's Submarine on E3 is found and shown."
    back = position("navy_tw", {"D3": ("red", "anti_sub"), "E3": ("blue", "submarine"), "A0": ("red", "flag"), "M0": ("blue", "flag")}, turn="blue")
    assert back.apply(("E3", "D3")).outcome == "bounce" and back.board["E3"].public  # the submarine attacking: shown too
    cruiser = position("navy_tw", {"D3": ("red", "anti_sub"), "E3": ("blue", "cruiser"), "A0": ("red", "flag"), "M0": ("blue", "flag")})
    assert cruiser.apply(("D3", "E3")).reveals == () and not cruiser.board["E3"].public


def test_anti_sub_detects_adjacent_shows_a_submarine_next_to_the_plane() -> None:
    pieces = {"C3": ("red", "anti_sub"), "E3": ("blue", "submarine"), "A0": ("red", "flag"), "M0": ("blue", "flag")}
    state = position("navy_tw", pieces, options={"anti_sub_detects": "adjacent"})
    assert [r.type for r in state.apply(("C3", "D3")).reveals] == ["submarine"]
    quiet = position("navy_tw", pieces)
    assert quiet.apply(("C3", "D3")).reveals == ()


def test_the_flagship_that_meets_an_anti_submarine_plane_is_shown_unless_switched_off() -> None:
    pieces = {"D3": ("red", "anti_sub"), "E3": ("blue", "flagship"), "A0": ("red", "flag"), "M0": ("blue", "flag")}
    assert [r.type for r in position("navy_tw", pieces).apply(("D3", "E3")).reveals] == ["flagship"]
    assert position("navy_tw", pieces, options={"anti_sub_reveals_flagship": False}).apply(("D3", "E3")).reveals == ()


def test_submarines_are_destroyed_only_by_bombers_and_torpedo_boats() -> None:
    text = {"destroyer_sinks_submarine": False}
    sinkers = {a for a in ARMIES["thirty"] if clash(a, "submarine", **text) == "attacker"}
    assert sinkers == {"bomber", "torpedo_boat"}
    assert clash("destroyer", "submarine") == "attacker"  # the table's own cell, the default


def test_the_flagship_beats_all_ships() -> None:
    for ship in SHIPS:
        if ship in ("flagship", "submarine"):
            continue
        assert clash("flagship", ship) == "attacker" and clash(ship, "flagship") == "defender"
    assert clash("flagship", "flagship") == "both"
    assert clash("flagship", "submarine") == "defender" and clash("submarine", "flagship") == "attacker"


def test_missiles() -> None:
    for air in ("anti_sub", "bomber"):
        assert clash("missile", air) == "attacker" and clash(air, "missile") == "defender"
    for other in ("carrier", "flagship", "submarine", "torpedo", "mine", "missile", "flag"):
        assert clash("missile", other) == "both"
    assert all(clash(ship, "missile") == "both" for ship in SHIPS)


def test_the_flag_and_the_flagship_may_move_freely() -> None:
    state = position("navy_tw", {"A3": ("red", "flag"), "B3": ("red", "flagship"), "M0": ("blue", "flag")})
    assert set(state.destinations("A3")) == {"A2", "A4", "B2", "B4"}  # out of the headquarters, in any direction
    assert set(state.destinations("B3")) == {"A2", "A4", "B2", "B4", "C2", "C3", "C4"}
    assert state.apply(("A3", "B4")).reveals == ()  # and they stay hidden
    assert clash("flag", "carrier") == "illegal"  # the flag never attacks


def test_losing_the_flagship_is_a_small_loss_and_the_flag_is_turned_face_up() -> None:
    state = position("navy_tw", {"G3": ("red", "bomber"), "H3": ("blue", "flagship"), "L5": ("blue", "flag"), "A0": ("red", "flag")})
    ruling = state.apply(("G3", "H3"))
    assert ruling.outcome == "attacker" and ruling.result is None  # the game goes on
    assert state.board["L5"].public
    told = redact_ruling(ruling, SPECTATOR)
    # the flag is shown because the flagship was lost: that says what the lost piece was, so it is shown too
    assert told["reveals"] == [{"station": "H3", "owner": "blue", "piece": "flagship"}, {"station": "L5", "owner": "blue", "piece": "flag"}]
    assert [render(n, "zh-Hant", state.game) for n in told["notices"]] == ["藍方的旗艦被擊沉（小輸），軍旗在 L5。"]


def test_capturing_the_flag_wins() -> None:
    state = position("navy_tw", {"G3": ("red", "destroyer"), "H3": ("blue", "flag"), "A0": ("red", "flag"), "M0": ("blue", "cruiser")})
    ruling = state.apply(("G3", "H3"))
    assert ruling.result is not None and ruling.result.winners == ("red",) and ruling.result.reason == {"code": "verdict.piece_lost", "params": {"piece": "flag", "side": "blue"}}


WOLVES = {"G2": ("red", "missile_boat"), "G3": ("red", "torpedo_boat"), "F4": ("red", "missile_boat"),
          "H3": ("blue", "carrier"), "A0": ("red", "flag"), "M0": ("blue", "flag")}


def test_wolf_pack_three_boats_around_a_carrier_reveal_together_and_sink_it() -> None:
    state = position("navy_tw", WOLVES)
    ruling = state.apply(("F4", "G4"))
    assert ruling.kind == "move" and "H3" not in state.board
    assert [(r.station, r.type) for r in ruling.removed] == [("H3", "carrier")]
    assert sorted((r.station, r.type) for r in ruling.reveals) == [
        ("G2", "missile_boat"), ("G3", "torpedo_boat"), ("G4", "missile_boat"), ("H3", "carrier")]
    assert all(state.board[s].public for s in ("G2", "G3", "G4"))
    assert render(redact_ruling(ruling, SPECTATOR)["notices"][0], "en", state.game).endswith("and sink it; take it off H3.")


def test_wolf_pack_options_same_kind_and_off() -> None:
    same = position("navy_tw", WOLVES, options={"wolf_pack": "same_kind"})
    assert same.apply(("F4", "G4")).removed == () and "H3" in same.board  # two missile boats and a torpedo boat
    off = position("navy_tw", WOLVES, options={"wolf_pack": "off"})
    assert off.apply(("F4", "G4")).removed == ()
    kinds = dict(WOLVES, G3=("red", "missile_boat"))
    assert position("navy_tw", kinds, options={"wolf_pack": "same_kind"}).apply(("F4", "G4")).removed != ()


def test_wolf_pack_cannot_surround_a_carrier_on_an_island() -> None:
    pieces = {"H1": ("red", "missile_boat"), "H2": ("red", "torpedo_boat"), "J2": ("red", "missile_boat"),
              "I2": ("blue", "carrier"), "A0": ("red", "flag"), "M0": ("blue", "flag")}
    state = position("navy_tw", pieces)
    assert state.apply(("J2", "J3")).removed == () and "I2" in state.board


def test_the_board_eight_directions_one_headquarters_four_islands_open_sea() -> None:
    kinds = [s.kind for s in GAME.stations]
    assert kinds.count("hq") == 2 and kinds.count("island") == 8
    assert {s.id for s in GAME.stations if s.y == 6}.isdisjoint(GAME.setup.zones["home"]["red"] | GAME.setup.zones["home"]["blue"])
    state = position("navy_tw", {"G3": ("red", "cruiser"), "A0": ("red", "flag"), "M0": ("blue", "flag")})
    assert set(state.destinations("G3")) == {"F2", "F3", "F4", "G2", "G4", "H2", "H3", "H4"}
    far = position("navy_tw", {"G3": ("red", "cruiser"), "A0": ("red", "flag"), "M0": ("blue", "flag")}, options={"sea_steps": 3})
    assert {"D3", "J3", "G0", "G6", "D0", "J6"} <= set(far.destinations("G3"))


def test_headquarters_and_islands_shelter_every_piece_but_the_flag() -> None:
    for station in ("M3", "K1"):
        state = position("navy_tw", {"L2": ("red", "bomber"), station: ("blue", "cruiser"), "A0": ("red", "flag"), "M0": ("blue", "flag")})
        assert station not in state.destinations("L2")
        flag = position("navy_tw", {"L2": ("red", "bomber"), station: ("blue", "flag"), "A0": ("red", "flag")})
        assert flag.apply(("L2", station)).result.winners == ("red",)


def test_a_scripted_physical_game_with_a_wolf_pack_a_small_loss_and_a_flag_capture() -> None:
    red = fill(GAME, "red", {"F2": "missile_boat", "F3": "torpedo_boat", "F4": "missile_boat", "F5": "bomber", "A0": "carrier"})
    blue = fill(GAME, "blue", {"H3": "carrier", "H5": "flagship", "H6": "flag", "M6": "cruiser"}, empty=["L6"])
    lines: list[dict] = [{"setup": "red", "pieces": red}, {"setup": "blue", "pieces": blue}]
    tick(lines)
    move(lines, "F2", "G2")
    move(lines, "M6", "L6")
    move(lines, "F3", "G3")
    move(lines, "L6", "M6")
    move(lines, "F4", "G4")  # the third boat: the wolf pack sinks the carrier on H3
    lift(lines, "H3")  # as the referee asks
    move(lines, "M6", "L6")
    move(lines, "F5", "G5")
    move(lines, "L6", "M6")
    attack(lines, "G5", "H5")  # bomber against flagship: a small loss, Blue's flag is shown
    move(lines, "M6", "L6")
    attack(lines, "H5", "H6")  # the flag is taken
    evs = [e for e in events("navy_tw", lines) if e["event"] in ("move", "attack", "fixup", "fixup_done", "game_over", "mismatch", "illegal")]
    assert not [e for e in evs if e["event"] in ("mismatch", "illegal")]
    wolf = next(i for i, e in enumerate(evs) if e.get("from") == "F4")
    assert evs[wolf]["reveals"] == [
        {"owner": "red", "piece": "missile_boat", "station": "G2"}, {"owner": "red", "piece": "torpedo_boat", "station": "G3"},
        {"owner": "red", "piece": "missile_boat", "station": "G4"}, {"owner": "blue", "piece": "carrier", "station": "H3"}]
    assert render(evs[wolf]["notices"][0], "en", load_game("navy_tw")).startswith(
        "Wolf pack: Red's boats on G2, G3, G4 surround Blue's Aircraft Carrier on H3")
    assert [(s["station"], s["action"], s["owner"]) for s in evs[wolf + 1]["steps"]] == [("H3", "remove", "blue")]
    assert evs[wolf + 2]["event"] == "fixup_done"
    small = next(e for e in evs if e.get("to") == "H5")
    assert small["outcome"] == "attacker" and small["reveals"][-1] == {"owner": "blue", "piece": "flag", "station": "H6"}
    assert small["notices"] == [{"code": "notice.flagship_sunk_flag_shown", "params": {"side": "blue", "piece": "flagship", "station": "H6", "flag_piece": "flag"}}]
    over = next(e for e in evs if e["event"] == "game_over")
    assert over["winners"] == ["red"] and over["reason"] == {"code": "verdict.piece_lost", "params": {"piece": "flag", "side": "blue"}}
    assert [e["ply"] for e in evs if e["event"] in ("move", "attack")] == list(range(1, 12))


KEYS = ("event", "from", "to", "player", "outcome", "winners", "reason")


@pytest.mark.parametrize(("seed", "options"), [(2, {}), (5, {"army": "prose25", "wolf_pack": "same_kind"}), (7, {"sea_steps": 3, "anti_sub_detects": "adjacent"})])
def test_random_physical_games_give_exactly_the_engines_rulings(seed: int, options: dict) -> None:
    script = random_game_script("navy_tw", seed, max_plies=80, options=options)
    out = io.StringIO()
    run_script("navy_tw", script.text(), out, options=options)
    got = [json.loads(x) for x in out.getvalue().splitlines()]
    rulings = [{k: e[k] for k in KEYS if k in e} for e in got if e["event"] in ("move", "attack", "game_over", "illegal")]
    assert rulings == [{k: r[k] for k in KEYS if k in r} for r in script.rulings]
    assert not [e for e in got if e["event"] == "mismatch"]
