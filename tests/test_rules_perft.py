"""Perft-style legal-move counts for small positions built by hand, each count worked out in a comment.

Positions are made with ``test_rules_helpers.position``: a ``new_game`` whose ``board`` is filled directly and whose
``phase`` is set to ``'play'`` (no deployment rules, and a lone piece is allowed). Counts are of
``legal_moves()`` for the side to move (Red unless said), and of ``destinations()`` for one piece.
"""

from __future__ import annotations

import pytest
from test_rules_helpers import position


def count(game: str, pieces: dict[str, tuple[str, str]], station: str | None = None, **options: object) -> int:
    state = position(game, pieces, options=options)
    if station is not None:
        return len(state.destinations(station))
    return len(state.legal_moves())


@pytest.mark.parametrize("square", ["a1", "b2", "e4", "j10", "a7"])
def test_lone_scout_on_an_open_line(square: str) -> None:
    # Files a, b, e, j and ranks 1, 2, 4, 10, 7 cross no lake: 9 squares along the file + 9 along the rank = 18.
    assert count("stratego", {square: ("red", "scout")}) == 18


def test_lone_scout_next_to_a_lake() -> None:
    # b5: left a5 (1); right c5 is lake (0); up b6..b10 (5); down b1..b4 (4) = 10.
    assert count("stratego", {"b5": ("red", "scout")}) == 10
    # e5: left d5 lake (0); right f5 then g5 lake (1); up e6..e10 (5); down e1..e4 (4) = 10.
    assert count("stratego", {"e5": ("red", "scout")}) == 10
    # a6: rank 6 has the lakes c6 d6: up a7..a10 (4), down a1..a5 (5), right b6 (1) = 10.
    assert count("stratego", {"a6": ("red", "scout")}) == 10
    # e4, with the lakes beside the e/f corridor: up e5..e10 (6), down e1..e3 (3), left a4..d4 (4), right f4..j4 (5) = 18.
    assert count("stratego", {"e4": ("red", "scout")}) == 18


def test_lone_scout_beside_lattaque_rivers() -> None:
    # L'Attaque 9x10, rivers at c, e, g on ranks 5-6. d5: left c5 river (0), right e5 river (0),
    # up d6..d10 (5), down d1..d4 (4) = 9.
    assert count("lattaque", {"d5": ("red", "scout")}) == 9
    # a1: up a2..a10 (9), right b1..i1 (8) = 17.
    assert count("lattaque", {"a1": ("red", "scout")}) == 17


def test_scout_and_one_enemy() -> None:
    # Scout a1, blue sergeant a5: a2 a3 a4 + attack a5 (4), b1..j1 (9) = 13; no long attack: 12.
    pieces = {"a1": ("red", "scout"), "a5": ("blue", "sergeant")}
    assert count("stratego", pieces) == 13
    assert count("stratego", pieces, scout_long_attack=False) == 12
    # With the sergeant on a2, the one-square attack stays: a2 (1) + b1..j1 (9) = 10 either way.
    near = {"a1": ("red", "scout"), "a2": ("blue", "sergeant")}
    assert count("stratego", near) == 10
    assert count("stratego", near, scout_long_attack=False) == 10


def test_piece_blocked_by_own_pieces() -> None:
    # Red sergeants on e2 and its four neighbours e1 e3 d2 f2: e2 has no move (0).
    # e1: d1 f1 (2); e3: e4 d3 f3 (3); d2: c2 d1 d3 (3); f2: g2 f1 f3 (3). Total 11.
    pieces = {s: ("red", "sergeant") for s in ("e2", "e1", "e3", "d2", "f2")}
    assert count("stratego", pieces, "e2") == 0
    assert count("stratego", pieces) == 11
    # Luzhanqi: a lieutenant on B0 hemmed in by its own pieces on A0, B1, C0 and the camp C1: 0 moves.
    lz = {s: ("red", "lieutenant") for s in ("B0", "A0", "B1", "C0", "C1")}
    assert count("luzhanqi", lz, "B0") == 0


def test_luzhanqi_rail_slide_from_a_corner() -> None:
    # A major on B0: rail B1..B4 (4) and C0..K0 (9), road A0 (1), diagonal to the camp C1 (1) = 15.
    assert count("luzhanqi", {"B0": ("red", "major")}) == 15
    # A major on B1: rail B0 and B2..B4 (4) (it cannot turn at B0 to go down column 0), road A1 and C1 (2) = 6.
    assert count("luzhanqi", {"B1": ("red", "major")}) == 6
    # A major on C0: rail B0 (1) and D0..K0 (8) (no turn at B0 onto row B, nor at K0 onto row K),
    # road C1 (1), diagonal: C0 is on none = 10.
    assert count("luzhanqi", {"C0": ("red", "major")}) == 10


def test_luzhanqi_engineer_on_the_rail_network() -> None:
    # Rail stations: rows B F G K (20) + columns 0 and 4 on rows C D E H I J (12; the rail columns run B..K and
    # their B F G K stations are already counted) = 32 stations, all one network (F2-G2 joins the middle too).
    # An engineer alone on B0 reaches the other 31 rail stations, plus A0 by road and C1 by diagonal = 33.
    assert count("luzhanqi", {"B0": ("red", "engineer")}) == 33
    # With a red piece on F2 the rail through it is closed, but G2 is still reached round by G1/G3: still 31 rail
    # stations minus F2 itself = 30, plus A0 and C1 = 32.
    assert count("luzhanqi", {"B0": ("red", "engineer"), "F2": ("red", "captain")}, "B0") == 32


def test_luzhanqi_piece_beside_a_camp() -> None:
    # A lieutenant on D1: road D0, D2 (camp), C1 (camp), E1 (camp) = 4.
    assert count("luzhanqi", {"D1": ("red", "lieutenant")}) == 4
    # With blue pieces sheltering in the three camps, only D0 is left = 1.
    sheltered = {"D1": ("red", "lieutenant"), "C1": ("blue", "major"), "D2": ("blue", "major"), "E1": ("blue", "major")}
    assert count("luzhanqi", sheltered, "D1") == 1
    # The same blue pieces out of camps (D0, and nothing else beside D1) can be attacked: D0 attack + C1 D2 E1 = 4.
    exposed = {"D1": ("red", "lieutenant"), "D0": ("blue", "major")}
    assert count("luzhanqi", exposed, "D1") == 4
    # A lieutenant on D0 (a rail station beside two camps): rail C0 B0 (2) and E0..K0 (7), road D1 (1),
    # diagonals C1 and E1 (2) = 12.
    assert count("luzhanqi", {"D0": ("red", "lieutenant")}) == 12


def test_luzhanqi_piece_in_a_headquarters_has_no_move() -> None:
    for hq in ("A1", "A3"):
        assert count("luzhanqi", {hq: ("red", "commander")}) == 0
    # On A2, between the headquarters, the same piece has A1, A3 and B2 = 3.
    assert count("luzhanqi", {"A2": ("red", "commander")}) == 3
