"""The ISF more-squares (continuous chase) and two-squares rules on real play: the Ataraxos rule-edge-case games
(the package's copy, controller/records/data/ataraxos-stratego.tar.xz), plus small positions for the two-squares rule's scout form and its
"only real moves count" fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from corpus_files import corpus

from controller.records import RecordError
from controller.records.ataraxos import decode_move, read_game
from controller.rules import IllegalMoveError, new_game

CORPUS = corpus("ataraxos-stratego")
CHASE = sorted(CORPUS.glob("continuous_chase_games_*/*.txt"))
MISC = CORPUS / "misc_games"



def start(path: Path, **options: object) -> tuple[object, list[tuple[str, str]]]:
    game = read_game(path)
    pieces = sum(len(p) for p in game.deployments.values())
    state = new_game("stratego" if pieces == 80 else "stratego_barrage", options)
    for side, placement in game.deployments.items():
        state.deploy(side, placement)
    return state, game.moves


def test_the_chase_games_are_all_here() -> None:
    assert len(CHASE) == 219  # 120 + 99; with misc_games' two, the README's 221
    assert len(list(MISC.glob("*.txt"))) == 2


def test_move_numbers_decode_as_documented() -> None:
    assert decode_move(1405, blue=False) == (5, 6)  # README: Red's marshal from square 5 to square 6
    assert decode_move(1405, blue=True) == (94, 93)
    with pytest.raises(ValueError):
        decode_move(1800, blue=False)


@pytest.mark.parametrize("path", CHASE, ids=lambda p: f"{p.parent.name[-7:]}-{p.stem}")
def test_chase_games_break_the_rule_on_their_last_move_only(path: Path) -> None:
    # the two-squares rule is off, as in the plain-rules replay the README describes, so only the chase rule judges
    on, moves = start(path, more_squares=True, two_squares=None)
    off, _ = start(path, more_squares=False, two_squares=None)
    for move in moves[:-1]:
        on.apply(move)  # type: ignore[attr-defined]
        off.apply(move)  # type: ignore[attr-defined]
    with pytest.raises(IllegalMoveError, match="reason.more_squares"):
        on.apply(moves[-1])  # type: ignore[attr-defined]
    off.apply(moves[-1])  # type: ignore[attr-defined]


def test_strategus_attack_chase() -> None:
    state, moves = start(MISC / "strategus_attack_chase.txt", two_squares=None)
    for move in moves[:376]:
        state.apply(move)  # type: ignore[attr-defined]
    assert state.turn == "red" and (state.why_illegal(("e7", "f7")) or {}).get("code") == "reason.more_squares"  # squares 64 -> 65
    off, _ = start(MISC / "strategus_attack_chase.txt", two_squares=None, more_squares=False)
    for move in moves[:376]:
        off.apply(move)  # type: ignore[attr-defined]
    assert off.why_illegal(("e7", "f7")) is None


def test_instantiate_fail_game_replays() -> None:
    state, moves = start(MISC / "instantiate_fail_game.txt", two_squares=None, more_squares=False)
    for move in moves:
        state.apply(move)  # type: ignore[attr-defined]
    assert state.ply == len(moves) == 2953


def test_a_bad_game_file_names_the_line(tmp_path: Path) -> None:
    text = (CHASE[0]).read_text(encoding="ascii").splitlines()
    bad = tmp_path / "bad.txt"
    bad.write_text("\n".join([text[0], text[1], "12x", *text[3:]]), encoding="ascii")
    with pytest.raises(RecordError, match="line 3: not a move number"):
        read_game(bad)
    bad.write_text("\n".join(["Z" + text[0][1:], *text[1:]]), encoding="ascii")
    with pytest.raises(RecordError, match=r"line 1, character 1 \(a1\): unknown piece letter 'Z'"):
        read_game(bad)


# ---------------------------------------------------------------------- two-squares rule, small positions
def duel(red: dict[str, str], blue: dict[str, str], **options: object) -> object:
    """A barrage game with the given pieces placed (flag, bomb and the rest parked far away)."""
    state = new_game("stratego_barrage", options)
    red_army = {"a1": "flag", "b1": "bomb", "c1": "spy", "d1": "general", "e1": "miner", "f1": "scout", "g1": "scout", "h1": "marshal"}
    blue_army = {"a10": "flag", "b10": "bomb", "c10": "spy", "d10": "general", "e10": "miner", "f10": "scout", "g10": "scout", "h10": "marshal"}
    for army, extra in ((red_army, red), (blue_army, blue)):
        for station, piece in extra.items():
            old = next(s for s, p in army.items() if p == piece and s not in extra)
            del army[old]
            army[station] = piece
    state.deploy("red", red_army)
    state.deploy("blue", blue_army)
    return state


FILLER = [("h10", "h9"), ("h9", "h8"), ("h8", "h9"), ("h9", "h10")] * 10  # blue waits without a run of its own


def shuttle(state: object, moves: list[tuple[str, str]], blue: list[tuple[str, str]] | None = None) -> None:
    """Red plays ``moves``, blue answers each with its next waiting move."""
    waiting = iter(blue or FILLER)
    for move in moves:
        state.apply(move)  # type: ignore[attr-defined]
        state.apply(next(waiting))  # type: ignore[attr-defined]


def test_two_squares_limit_five() -> None:
    state = duel({}, {})
    shuttle(state, [("h1", "h2"), ("h2", "h1")] * 2 + [("h1", "h2")])  # five moves between h1 and h2
    assert state.why_illegal(("h2", "h1")) == {"code": "reason.two_squares", "params": {"count": 5, "station": "h2", "from": "h1", "to": "h2"}}  # type: ignore[attr-defined]
    assert state.why_illegal(("h2", "h3")) is None  # type: ignore[attr-defined]


def test_two_squares_scout_form_covers_the_first_moves_range() -> None:
    moves = [("f1", "f4"), ("f4", "f2"), ("f2", "f4"), ("f4", "f3"), ("f3", "f1")]  # all inside f1-f4
    isf = duel({}, {})
    shuttle(isf, moves)
    assert (isf.why_illegal(("f1", "f2")) or {}).get("code") == "reason.two_squares_range"
    assert {k: isf.why_illegal(("f1", "f2"))["params"][k] for k in ("from", "to")} == {"from": "f1", "to": "f4"}  # type: ignore[attr-defined]
    assert isf.why_illegal(("f1", "f5")) is None  # type: ignore[attr-defined]  # leaving the range is fine
    plain = duel({}, {}, two_squares_scouts=False)
    shuttle(plain, moves)
    assert plain.why_illegal(("f1", "f2")) is None  # type: ignore[attr-defined]


def test_an_attack_that_leaves_the_piece_in_place_is_no_shuttle_step() -> None:
    """The marshal goes i4-i5 four times, then from i4 beats a scout on i5 without advancing (winner_advances
    false): it did not go from i4 to i5, so i4-i5 is still allowed (it used to count as the fifth step)."""
    for advances, allowed in ((False, True), (True, None)):
        state = duel({"i4": "marshal"}, {"i10": "scout"}, winner_advances=advances)
        shuttle(state, [("i4", "i5"), ("i5", "i4"), ("i4", "i5")])
        state.apply(("i5", "i4"))  # type: ignore[attr-defined]
        state.apply(("i10", "i5"))  # type: ignore[attr-defined]  # blue's scout runs down to i5
        ruling = state.apply(("i4", "i5"))  # type: ignore[attr-defined]
        assert ruling.outcome == "attacker"
        state.apply(("h9", "h10"))  # type: ignore[attr-defined]
        if allowed:
            assert state.board["i4"].type == "marshal" and state.why_illegal(("i4", "i5")) is None  # type: ignore[attr-defined]
        else:  # the marshal really moved: that was its fifth i4-i5 move
            told = state.why_illegal(("i5", "i4")) or {}
            assert told.get("code") == "reason.two_squares" and told["params"]["count"] == 5
            assert {told["params"]["from"], told["params"]["to"]} == {"i4", "i5"}  # type: ignore[attr-defined]
