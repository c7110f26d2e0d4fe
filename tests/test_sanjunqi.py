"""Land-sea-air chess (陸海空三軍棋, seed 003): one test per numbered statement of the seed (docs/games/sanjunqi.md),
named after its number, on small positions set up on the real board."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules import IllegalMoveError, RulesError, load_game, new_game, redact_ruling
from controller.rules.deploy import random_deployment
from controller.rules.reactions import answer, offers
from controller.rules.setup import check_deployment
from controller.rules.state import GameState, Piece

GAME = "sanjunqi"


def position(pieces: dict[str, tuple[str, str]], turn: str = "red", **options) -> GameState:
    """A game in play with exactly ``pieces`` ({station: (side, piece id)}) on the board (flags added far away if
    missing, so nobody is out), ``turn`` to move."""
    state = new_game(GAME, options or None)
    rng = random.Random(0)
    for side in state.game.sides:
        state.deploy(side, random_deployment(state.game, side, rng, options or None))
    pieces = dict(pieces)
    if not any(v == ("red", "flag") for v in pieces.values()):
        pieces.setdefault("a3h", ("red", "flag"))
    if not any(v == ("blue", "flag") for v in pieces.values()):
        pieces.setdefault("o3h", ("blue", "flag"))
    state.board = {s: Piece(i + 1, t, side) for i, (s, (side, t)) in enumerate(sorted(pieces.items()))}
    state.turn = turn
    return state


def at(state: GameState, station: str) -> tuple[str, str] | None:
    p = state.board.get(station)
    return None if p is None else (p.owner, p.type)


# ---------------------------------------------------------------------------------------------------- board (s1, s2)
def test_s01_board_has_the_seeds_stations_per_side_a_hexagonal_railway_over_the_river_sea_and_air_routes() -> None:
    game = load_game(GAME)
    red = Counter(s.kind for s in game.stations if s.y <= 6 and s.kind != "water")
    blue = Counter(s.kind for s in game.stations if s.y >= 8 and s.kind != "water")
    for side in (red, blue):
        assert side == {"post": 20, "stronghold": 12, "camp": 2, "hq": 3, "anchorage": 5, "airfield": 2}
    kinds = {ln.kind for ln in game.lines}
    assert kinds == {"road", "rail", "sea", "shore", "air"}
    # the railway is one ring through all 24 strongholds, crossing the river twice
    state = new_game(GAME)
    rail = state.topo.neighbours(frozenset({"rail"}))
    ring = [s for s in game.station_ids if rail[s]]
    assert len(ring) == 24 and all(len(rail[s]) == 2 for s in ring)
    assert {game.station_by_id[s].kind for s in ring} == {"stronghold"}
    seen, frontier = {ring[0]}, [ring[0]]
    while frontier:
        for n in rail[frontier.pop()]:
            if n not in seen:
                seen.add(n)
                frontier.append(n)
    assert seen == set(ring)
    bridges = [(a, b) for a in ring for b in rail[a] if game.station_by_id[a].y <= 5 and game.station_by_id[b].y >= 9]
    assert len(bridges) == 2
    # water stations are joined only by sea lines (and shore lines to the coast); the airfields only by air routes
    road = state.topo.neighbours(frozenset({"road"}))
    for s in game.stations:
        if s.kind in ("water", "anchorage", "airfield"):
            assert not road[s.id] and not rail[s.id]
    air = state.topo.neighbours(frozenset({"air"}))
    assert all(air[s.id] for s in game.stations if s.kind == "airfield")


def test_s02_one_segment_a_move_on_land_and_water_several_strongholds_on_the_railway_and_camps_shelter() -> None:
    state = position({"e3": ("red", "infantry"), "b3": ("red", "cavalry"), "h3": ("red", "destroyer"), "c1h": ("blue", "fighter"),
                      "f7": ("blue", "infantry")})
    assert set(state.destinations("e3")) == {"e2", "e4", "d3", "f3", "d2"}  # d2: the camp's diagonal
    assert set(state.destinations("h3")) == {"h2", "h4", "g3", "i3"}
    # the railway: along the track through empty strongholds, several at once, up to the first piece
    # (b2, b4, d3 are also one road segment away; c1h holds an aircraft, which soldiers cannot strike; f7 an enemy)
    assert set(state.destinations("b3")) == {"b2", "b4", "d3", "b5", "c5h", "d6", "e6h", "f7"}
    # a camp shelters its occupant from soldiers, not from fighters and missiles
    state = position({"e1": ("red", "commander"), "d2": ("blue", "infantry"), "c1h": ("red", "missile"), "h6": ("red", "fighter")})
    assert "d2" not in state.destinations("e1")
    camp = state.game.station_kinds["camp"]
    assert camp.shelter and camp.shelter_except_attackers == {"fighter", "missile"}
    state = position({"c2h": ("red", "missile"), "d2": ("blue", "infantry")})
    assert "d2" in state.destinations("c2h")  # along the camp's diagonal road, straight
    assert state.apply(("c2h", "d2")).outcome == "both"


# ---------------------------------------------------------------------------------------------------- setup (s3)
def test_s03_setup_everything_face_down_army_on_posts_flag_on_hq_navy_on_anchorages_aircraft_on_airfields_forts_on_the_coast() -> None:
    game = load_game(GAME)
    rng = random.Random(5)
    placement = random_deployment(game, "red", rng)
    assert not check_deployment(game, "red", placement)
    assert len(placement) == 30
    kinds = {pid: game.station_by_id[s].kind for s, pid in placement.items()}
    assert kinds["flag"] == "hq" and kinds["fighter"] == kinds["recon"] == "airfield"
    assert all(kinds[p] == "anchorage" for p in ("battleship", "cruiser", "gunboat", "destroyer", "submarine"))
    fort = next(s for s, p in placement.items() if p == "fort")
    assert fort in {"f1", "f2", "f3", "f5", "f6"}
    counts = Counter(game.piece_by_id[p].rank is not None and game.piece_by_id[p].rank <= 11 for p in placement.values())
    assert counts[True] == 11
    # a fort off the coast, a ship on land, an aircraft on a post: every defect reported at once
    bad = dict(placement)
    post = next(s for s, p in bad.items() if game.station_by_id[s].kind == "post" and s not in {"f1", "f2", "f3", "f5", "f6"})
    bad[post], bad[fort] = bad[fort], bad[post]
    fighter = next(s for s, p in bad.items() if p == "fighter")
    sub = next(s for s, p in bad.items() if p == "submarine")
    bad[fighter], bad[sub] = "submarine", "fighter"
    problems = check_deployment(game, "red", bad)
    assert {p.station for p in problems} >= {post, fighter, sub}
    # all face-down: nobody but the owner knows a piece
    state = new_game(GAME)
    for side in state.game.sides:
        state.deploy(side, random_deployment(state.game, side, rng))
    assert all(p.known_to == {p.owner} and not p.public for p in state.board.values())


# ---------------------------------------------------------------------------------------------------- officers (s4)
def test_s04_officer_ranks_and_the_engineer_against_bomb_and_fort_depends_on_who_strikes_first() -> None:
    state = new_game(GAME)
    order = ["commander", "army_commander", "corps_commander", "division_commander", "regiment_commander", "battalion_commander",
             "company_commander", "platoon_leader", "cavalry", "infantry", "engineer"]
    for i, a in enumerate(order):
        for j, d in enumerate(order):
            assert state.clash[(a, d)] == ("attacker" if i < j else "defender" if i > j else "both")
    c = state.clash
    assert c[("engineer", "mine")] == c[("engineer", "trap")] == c[("engineer", "poison_gas")] == c[("engineer", "flag")] == "attacker"
    assert c[("engineer", "bomb")] == "attacker" and c[("bomb", "engineer")] == "both"
    from controller.rules.effects import clash_rule

    # the fort strikes only as a reaction: struck first, the engineer dies; striking first, it clears the fort
    assert clash_rule(state, "fort", "engineer", "f2", striking=True)[0] == "attacker"
    assert c[("engineer", "fort")] == "attacker"


# ---------------------------------------------------------------------------------------------------- weapons (s5-s16)
def test_s05_missile_straight_any_distance_never_into_airfields_or_hqs_goes_with_its_target_dies_on_a_trap_misses_a_submarine() -> None:
    state = position({"e4": ("red", "missile"), "i4": ("blue", "submarine"), "i5": ("blue", "gunboat")})
    dests = set(state.destinations("e4"))
    assert {"g4", "h4", "i4", "d4", "b4", "e0h", "e1", "e6h"} <= dests
    assert not {"a0", "a7", "a2", "a3h", "a5"} & dests
    r = state.apply(("e4", "i4"))
    assert r.outcome == "defender" and at(state, "e4") is None
    assert at(state, "i4") is None and at(state, "i3") == ("blue", "submarine")  # a miss: it slips one step away
    assert ("all", {"code": "notice.pushed", "params": {"station": "i4", "to": "i3"}}) in r.notices
    state = position({"e4": ("red", "missile"), "g4": ("blue", "fighter")})
    assert state.apply(("e4", "g4")).outcome == "both"
    state = position({"d4": ("red", "missile"), "d3": ("blue", "trap")})
    assert state.apply(("d4", "d3")).outcome == "defender" and at(state, "d3") == ("blue", "trap")
    state = position({"d4": ("red", "missile"), "d3": ("blue", "commander")})
    assert state.apply(("d4", "d3")).outcome == "both"
    # the fighter that strikes first intercepts it
    state = position({"h4": ("red", "fighter"), "e4": ("blue", "missile")})
    assert state.apply(("h4", "e4")).outcome == "attacker"


def test_s06_bomb_goes_with_its_target_cleared_by_an_engineer_or_fighter_striking_first_dies_on_a_trap() -> None:
    c = new_game(GAME).clash
    assert c[("bomb", "commander")] == c[("bomb", "tank")] == c[("commander", "bomb")] == "both"
    assert c[("engineer", "bomb")] == c[("fighter", "bomb")] == "attacker"
    assert c[("bomb", "engineer")] == "both" and c[("bomb", "trap")] == "defender"
    assert c[("bomb", "flag")] == "illegal"


def test_s07_atomic_bomb_takes_the_engineer_with_it_whoever_strikes() -> None:
    c = new_game(GAME).clash
    assert c[("engineer", "atomic_bomb")] == c[("atomic_bomb", "engineer")] == "both"
    assert c[("atomic_bomb", "trap")] == "defender" and c[("fighter", "atomic_bomb")] == "attacker"


def test_s08_tank_kills_officers_and_weapons_the_one_struck_dies_mutual_with_bombs_dies_on_trap_and_to_fighter() -> None:
    c = new_game(GAME).clash
    for d in ("commander", "artillery", "aa_gun", "machine_gun", "poison_gas"):
        assert c[("tank", d)] == "attacker"
    assert c[("tank", "tank")] == "attacker"  # struck first, the defending tank dies
    for d in ("bomb", "missile", "atomic_bomb", "mine"):
        assert c[("tank", d)] == "both"
    assert c[("tank", "trap")] == "defender" and c[("fighter", "tank")] == "attacker"
    state = position({"e3": ("red", "tank"), "e4": ("blue", "tank")})
    r = state.apply(("e3", "e4"))
    assert r.outcome == "attacker" and at(state, "e4") == ("red", "tank")


def test_s09_artillery() -> None:
    c = new_game(GAME).clash
    for d in ("aa_gun", "fort", "machine_gun", "poison_gas", "commander", "artillery"):
        assert c[("artillery", d)] == "attacker"
    assert c[("artillery", "tank")] == "defender" and c[("tank", "artillery")] == "attacker"
    assert c[("artillery", "mine")] == c[("artillery", "bomb")] == "both" and c[("artillery", "trap")] == "defender"


def test_s10_aa_gun_shoots_down_aircraft_flying_over_it_and_engages_one_stopping_within_two_steps() -> None:
    c = new_game(GAME).clash
    assert c[("aa_gun", "flag")] == c[("aa_gun", "commander")] == c[("aa_gun", "aa_gun")] == "attacker"
    assert c[("aa_gun", "tank")] == c[("aa_gun", "artillery")] == "defender"
    # flies over the gun on e4: shot down, the gun shows itself to everyone
    state = position({"e4": ("red", "aa_gun"), "h4": ("blue", "fighter"), "b4": ("red", "commander")}, turn="blue")
    r = state.apply(("h4", "d4"))
    assert at(state, "d4") is None and at(state, "h4") is None
    assert [(x.station, x.type) for x in r.removed] == [("d4", "fighter")]
    assert any(v.station == "e4" and v.type == "aa_gun" and v.to == ("all",) for v in r.reveals)
    assert redact_ruling(r, "spectator")["reveals"] == [{"station": "e4", "owner": "red", "piece": "aa_gun"}]
    # an attack flying over the gun never arrives: the target stays, nothing else is learnt
    state = position({"e4": ("red", "aa_gun"), "h4": ("blue", "fighter"), "d4": ("red", "commander")}, turn="blue")
    r = state.apply(("h4", "d4"))
    assert r.outcome == "bounce" and at(state, "d4") == ("red", "commander") and at(state, "h4") is None
    assert "defender_piece" not in redact_ruling(r, "blue")
    # stops within two steps: the gun goes out, shows itself, shoots it down and returns
    state = position({"e4": ("red", "aa_gun"), "h4": ("blue", "fighter")}, turn="blue")
    r = state.apply(("h4", "g4"))
    assert at(state, "g4") is None and at(state, "e4") == ("red", "aa_gun")
    assert any(m["code"] == "notice.engage" and m["params"]["at"] == "g4" for _, m in r.notices)
    # three steps away, or the way blocked: nothing
    state = position({"c3h": ("red", "aa_gun"), "h3": ("blue", "fighter")}, turn="blue")
    state.apply(("h3", "g3"))
    assert at(state, "g3") == ("blue", "fighter")


def test_s10_engagement_is_offered_to_its_owner_with_reactions_ask() -> None:
    state = position({"e4": ("red", "aa_gun"), "h4": ("blue", "fighter")}, turn="blue", reactions="ask")
    r = state.apply(("h4", "g4"))
    assert at(state, "g4") == ("blue", "fighter")
    [offer] = offers(state, "red")
    assert offers(state, "blue") == [] and (offer.guard, offer.target) == ("e4", "g4")
    assert [m for to, m in r.notices if to == "red"] and not [m for to, m in r.notices if to in ("all", "blue")]
    with pytest.raises(RulesError):
        answer(state, "blue", offer.id)
    done = answer(state, "red", offer.id, accept=True)
    assert [x.type for x in done.removed] == ["fighter"] and at(state, "g4") is None and offers(state) == []
    # declined, or lapsed by moving: the aircraft stays
    state = position({"e4": ("red", "aa_gun"), "h4": ("blue", "fighter"), "e1": ("red", "infantry")}, turn="blue", reactions="ask")
    state.apply(("h4", "g4"))
    state.apply(("e1", "e2"))
    assert offers(state) == [] and at(state, "g4") == ("blue", "fighter")


def test_s11_fort_strikes_ships_and_land_pieces_that_come_next_to_it_and_returns() -> None:
    state = position({"f5": ("red", "fort"), "h5": ("blue", "gunboat")}, turn="blue")
    r = state.apply(("h5", "g5"))
    assert at(state, "g5") is None and at(state, "f5") == ("red", "fort")
    assert any(v.type == "fort" and v.to == ("all",) for v in r.reveals)
    # a land piece next to it: an officer dies, a tank destroys it
    state = position({"f5": ("red", "fort"), "e4": ("blue", "commander")}, turn="blue")
    state.apply(("e4", "e5"))
    assert at(state, "e5") is None and at(state, "f5") == ("red", "fort")
    state = position({"f5": ("red", "fort"), "e4": ("blue", "tank")}, turn="blue")
    state.apply(("e4", "e5"))
    assert at(state, "e5") == ("blue", "tank") and at(state, "f5") is None
    # a submarine slips one step away
    state = position({"f5": ("red", "fort"), "h5": ("blue", "submarine")}, turn="blue")
    state.apply(("h5", "g5"))
    assert at(state, "g5") is None and at(state, "h5") == ("blue", "submarine")
    c = new_game(GAME).clash
    assert c[("engineer", "fort")] == "attacker" and c[("fighter", "fort")] == c[("tank", "fort")] == c[("aa_gun", "fort")] == "attacker"
    assert c[("bomb", "fort")] == c[("missile", "fort")] == "both" and not new_game(GAME).game.piece_by_id["fort"].movable


def test_s12_machine_gun() -> None:
    c = new_game(GAME).clash
    assert c[("machine_gun", "poison_gas")] == c[("machine_gun", "commander")] == c[("machine_gun", "machine_gun")] == "attacker"
    for a in ("fighter", "tank", "artillery", "aa_gun"):
        assert c[(a, "machine_gun")] == "attacker"
    assert c[("machine_gun", "tank")] == "defender"
    for d in ("bomb", "missile", "atomic_bomb", "mine"):
        assert c[("machine_gun", d)] == "both"


def test_s13_mine_never_moves_goes_with_what_strikes_it_cleared_by_engineers_and_fighters() -> None:
    state = new_game(GAME)
    assert not state.game.piece_by_id["mine"].movable
    c = state.clash
    assert c[("commander", "mine")] == c[("tank", "mine")] == "both"
    assert c[("engineer", "mine")] == c[("fighter", "mine")] == "attacker"


def test_s14_trap_stays_whatever_strikes_it_dies_a_fighter_is_pushed_one_step_away_an_engineer_clears_it() -> None:
    c = new_game(GAME).clash
    assert c[("commander", "trap")] == c[("tank", "trap")] == "defender" and c[("engineer", "trap")] == "attacker"
    state = position({"h3": ("blue", "fighter"), "e3": ("red", "trap")}, turn="blue")
    r = state.apply(("h3", "e3"))
    assert r.outcome == "bounce" and at(state, "e3") == ("red", "trap")
    assert at(state, "h3") is None and at(state, "f3") == ("blue", "fighter")


def test_s15_poison_gas_kills_officers_dies_against_weapons_and_the_engineer() -> None:
    c = new_game(GAME).clash
    assert c[("poison_gas", "commander")] == c[("poison_gas", "infantry")] == "attacker"
    assert c[("poison_gas", "engineer")] == "defender" and c[("engineer", "poison_gas")] == "attacker"
    assert c[("poison_gas", "tank")] == "defender" and c[("commander", "poison_gas")] == "defender"
    assert new_game(GAME).game.piece_by_id["poison_gas"].movable


def test_s16_flag_on_an_hq_never_moves_only_an_engineer_takes_it_or_an_aa_gun_destroys_it() -> None:
    state = new_game(GAME)
    assert not state.game.piece_by_id["flag"].movable
    for a in state.game.pieces:
        want = "attacker" if a.id in ("engineer", "aa_gun") else "illegal"
        assert state.clash[(a.id, "flag")] == want, a.id


# ---------------------------------------------------------------------------------------------------- navy (s17-s19)
def test_s17_ship_ranks_fighters_sink_ships_missiles_mutual_the_submarine() -> None:
    c = new_game(GAME).clash
    ships = ["battleship", "cruiser", "gunboat", "destroyer"]
    for i, a in enumerate(ships):
        for j, d in enumerate(ships):
            assert c[(a, d)] == ("attacker" if i < j else "defender" if i > j else "both")
        assert c[("fighter", a)] == "attacker" and c[(a, "missile")] == c[("missile", a)] == "both"
    for d in ("battleship", "cruiser", "gunboat"):
        assert c[("submarine", d)] == "attacker"
    assert c[("submarine", "destroyer")] == "defender" and c[("destroyer", "submarine")] == "attacker"


def test_s18_gunboat_shells_the_coast_and_returns_and_a_fort_sinks_it() -> None:
    state = position({"i2": ("red", "gunboat"), "j2": ("blue", "infantry")})
    assert set(state.destinations("i2")) >= {"j2"} and "j1" not in state.destinations("i2")
    r = state.apply(("i2", "j2"))
    assert r.outcome == "attacker" and at(state, "j2") is None and at(state, "i2") == ("red", "gunboat")
    state = position({"i2": ("red", "gunboat"), "j2": ("blue", "commander")})
    r = state.apply(("i2", "j2"))  # as a battalion commander: the stronger target stays, the gunboat goes back
    assert r.outcome == "bounce" and at(state, "j2") == ("blue", "commander") and at(state, "i2") == ("red", "gunboat")
    state = position({"i2": ("red", "gunboat"), "j2": ("blue", "tank")})
    assert state.apply(("i2", "j2")).outcome == "bounce"  # as a fort against weapons
    state = position({"i2": ("red", "gunboat"), "j2": ("blue", "fort")})
    assert state.apply(("i2", "j2")).outcome == "attacker" and at(state, "j2") is None
    # a fort strikes a gunboat that comes next to it: sunk
    state = position({"h2": ("red", "gunboat"), "j2": ("blue", "fort")})
    state.apply(("h2", "i2"))
    assert at(state, "i2") is None
    # an empty coastal post cannot be taken by a gunboat
    state = position({"i2": ("red", "gunboat")})
    assert "j2" not in state.destinations("i2")
    # the gunboat fires at aircraft like an AA gun: flying over it, and stopping within two steps on the water
    state = position({"h4": ("red", "gunboat"), "h5": ("blue", "recon")}, turn="blue")
    state.apply(("h5", "h2"))  # over h4 and h3
    assert at(state, "h2") is None
    state = position({"h1": ("red", "gunboat"), "h6": ("blue", "fighter")}, turn="blue")
    state.apply(("h6", "h3"))  # stops two water steps from the gunboat
    assert at(state, "h3") is None


def test_s19_landed_battleship_and_cruiser_fight_as_division_commander_and_tank_regiment_commander_and_artillery() -> None:
    state = position({"g1": ("red", "battleship"), "e1": ("blue", "regiment_commander")})
    assert "f0" in state.destinations("g1") and "f1" in state.destinations("g1")
    state.apply(("g1", "f1"))
    state.turn = "red"
    r = state.apply(("f1", "e1"))
    assert r.outcome == "attacker" and at(state, "e1") == ("red", "battleship")
    state = position({"f1": ("red", "battleship"), "e1": ("blue", "corps_commander")})
    assert state.apply(("f1", "e1")).outcome == "defender"
    state = position({"f1": ("red", "battleship"), "e1": ("blue", "artillery")})
    assert state.apply(("f1", "e1")).outcome == "attacker"  # as a tank
    state = position({"f1": ("red", "cruiser"), "e1": ("blue", "tank")})
    assert state.apply(("f1", "e1")).outcome == "defender"  # as artillery
    state = position({"f1": ("red", "cruiser"), "e1": ("blue", "battalion_commander")})
    assert state.apply(("f1", "e1")).outcome == "attacker"  # as a regiment commander
    # a fort's strike sinks a battleship at sea, but strikes a landed one as the tank it fights as
    state = position({"f5": ("blue", "fort"), "h5": ("red", "battleship")})
    state.apply(("h5", "g5"))
    assert at(state, "g5") is None
    state = position({"f6": ("blue", "fort"), "g5": ("red", "battleship")})
    state.apply(("g5", "f5"))
    assert at(state, "f5") == ("red", "battleship") and at(state, "f6") is None


# ---------------------------------------------------------------------------------------------------- air (s20-s22)
def test_s20_reconnaissance_shows_its_owner_the_target_then_flies_back_shot_down_by_aa_gunboat_fighter() -> None:
    state = position({"h3": ("blue", "recon"), "e3": ("red", "commander")}, turn="blue")
    r = state.apply(("h3", "e3"))
    assert r.outcome == "bounce" and at(state, "h3") == ("blue", "recon") and at(state, "e3") == ("red", "commander")
    assert [(v.station, v.type, v.to) for v in r.reveals] == [("e3", "commander", ("blue",))]
    assert redact_ruling(r, "blue")["defender_piece"] == "commander"
    assert "defender_piece" not in redact_ruling(r, "spectator") and redact_ruling(r, "spectator")["reveals"] == []
    c = new_game(GAME).clash
    assert c[("recon", "aa_gun")] == c[("recon", "gunboat")] == c[("recon", "fighter")] == "defender"
    assert c[("recon", "missile")] == "both"


def test_s21_air_combat() -> None:
    c = new_game(GAME).clash
    assert c[("fighter", "recon")] == c[("fighter", "fighter")] == "attacker"
    assert c[("recon", "recon")] == "bounce"
    state = position({"h3": ("blue", "recon"), "h5": ("red", "recon")}, turn="blue")
    r = state.apply(("h3", "h5"))
    assert r.outcome == "bounce" and r.reveals == ()


def test_s22_a_fighter_destroys_every_land_or_sea_target_but_a_trap() -> None:
    state = new_game(GAME)
    for p in state.game.pieces:
        if p.id in ("trap", "flag"):
            continue
        assert state.clash[("fighter", p.id)] == "attacker", p.id
    assert state.clash[("missile", "fighter")] == "both"


# ---------------------------------------------------------------------------------------------------- end (s23)
def test_s23_engineer_taking_the_flag_or_an_aa_gun_destroying_it_wins() -> None:
    state = position({"n2": ("red", "engineer"), "o2": ("blue", "flag")})
    r = state.apply(("n2", "o2"))
    assert r.result is not None and r.result.winners == ("red",)
    state = position({"n5": ("red", "aa_gun"), "o5": ("blue", "flag")})
    r = state.apply(("n5", "o5"))
    assert r.result is not None and r.result.winners == ("red",)
    state = position({"n5": ("red", "commander"), "o5": ("blue", "flag")})
    with pytest.raises(IllegalMoveError):
        state.apply(("n5", "o5"))


# ---------------------------------------------------------------------------------------------------- contract
def test_rules_json_lists_the_default_outcomes_attacker_struck_first() -> None:
    out = subprocess.run([sys.executable, "-m", "controller.cli", "rules", GAME, "--json"], capture_output=True, text=True, check=True)
    doc = json.loads(out.stdout)
    assert doc["game"] == GAME and len(doc["pieces"]) == 30 and sum(p["count"] for p in doc["pieces"]) == 30
    c = doc["clash"]
    assert c["tank"]["tank"] == "attacker" and c["engineer"]["bomb"] == "attacker" and c["bomb"]["engineer"] == "both"
    assert c["battleship"]["division_commander"] == "both" and c["battleship"]["artillery"] == "attacker"
    assert set(c["fort"].values()) == {"illegal"}  # it strikes only as a reaction


@settings(max_examples=6, deadline=None)
@given(seed=st.integers(0, 100_000))
def test_random_games_keep_the_board_consistent_and_never_tell_the_spectator_a_hidden_piece(seed: int) -> None:
    rng = random.Random(seed)
    state = new_game(GAME)
    for side in state.game.sides:
        state.deploy(side, random_deployment(state.game, side, rng))
    n = len(state.board)
    for _ in range(120):
        if state.phase != "play":
            break
        r = state.apply(rng.choice(state.legal_moves()))
        n -= len(r.removed)
        assert len(state.board) == n and len({p.uid for p in state.board.values()}) == n
        seen = redact_ruling(r, "spectator")
        public = {v.uid for v in r.reveals if v.to == ("all",)} | {uid for uid, who in r.known if "all" in who}
        if "piece" in seen:
            assert r.mover_uid in public
        if "defender_piece" in seen:
            assert r.defender_uid in public
        assert all(v["piece"] for v in seen["reveals"]) and len(seen["reveals"]) == len([v for v in r.reveals if v.to == ("all",)])


def test_board_page_draws_every_station_and_line_kind() -> None:
    from controller.board_svg import screen_board

    game = load_game(GAME)
    for side in game.sides:
        board = screen_board(game, side)
        assert board.layer.count('class="station') >= len(game.stations) or board.layer.count("<g") >= len(game.stations)
        for kind in ("road", "rail", "sea", "shore", "air"):
            assert f"line-{kind}" in board.layer
