"""Power cuts: a journaled game killed with SIGKILL at random points resumes to exactly the uninterrupted game's
state, then continues on the board (or says which stations to fix)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from controller.referee.table import open_table
from controller.rules import new_game
from controller.rules.deploy import random_deployment
from controller.sensing.sim import SimBoard

ROOT = Path(__file__).resolve().parent.parent


def _engine_states(game: str, seed: int, plies: int):
    """The uninterrupted game: the engine's (board, turn, ply) after each ply, as the script renders it."""
    from tests.physical import random_game_script

    script = random_game_script(game, seed, max_plies=400)
    rng = random.Random(seed)
    state = new_game(game)
    for side in state.game.sides:
        state.deploy(side, random_deployment(state.game, side, rng))
    moves = [(r["from"], r["to"]) for r in script.rulings if r["event"] in ("move", "attack")]
    snaps = [_fingerprint(state)]
    for m in moves[:plies]:
        state.apply(m)
        snaps.append(_fingerprint(state))
    return snaps, moves


def _fingerprint(state) -> tuple:
    return (tuple(sorted((s, p.owner, p.type, p.uid) for s, p in state.board.items())), state.turn, state.ply, state.phase)


@pytest.mark.parametrize("game,seed", [("stratego", 11), ("luzhanqi", 5)])
def test_sigkill_at_random_points_resumes_to_the_same_state(tmp_path: Path, game: str, seed: int) -> None:
    rng = random.Random(seed)
    uninterrupted, moves = _engine_states(game, seed, 400)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for trial in range(6):
        journal = tmp_path / f"j{trial}.sqlite"
        target = rng.randrange(0, min(len(moves), 120))
        child = subprocess.Popen([sys.executable, "-m", "tests.resume_child", game, str(seed), str(journal)],
                                 stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)
        assert child.stdout is not None
        for line in child.stdout:
            if line.startswith("ply") and int(line.split()[1]) >= target or line.startswith("done"):
                break
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        board = SimBoard(new_game(game).game.station_ids, settle_ms=20, clock=lambda: 0.0)
        table = open_table(game, board=board, board_kind="sim", journal_path=journal)
        state = table.state
        if state.phase == "setup":
            continue  # killed before both setups were journaled: nothing to resume yet
        assert _fingerprint(state) == uninterrupted[state.ply], f"trial {trial}: resumed state differs at ply {state.ply}"
        events: list = []
        table.session.subscribe(lambda ev, sink=events: sink.append(ev.public))
        # the board as it stood: the referee accepts it and play continues to the same end
        board.fill(list(state.board), 0)
        table.session.on_snapshot(board.tick(30))
        assert any(e["event"] == "fixup_done" for e in events)
        t = 100
        for frm, to in moves[state.ply: state.ply + 10]:
            if state.phase != "play":
                break
            for kind, st in [("lift", frm)] + ([("lift", to)] if to in state.board else []) + [("place", to)]:
                getattr(board, kind)(st, t)
                t += 30
                snap = board.tick(t)
                if snap is not None:
                    table.session.on_snapshot(snap)
            # do whatever fix-up the ruling asks for: match the referee's board
            want = set(table.session.expected_board())
            for st in sorted(board.raw_occupied() - want):
                board.lift(st, t)
            for st in sorted(want - board.raw_occupied()):
                board.place(st, t)
            t += 30
            snap = board.tick(t)
            if snap is not None:
                table.session.on_snapshot(snap)
            assert _fingerprint(state) == uninterrupted[state.ply]
        table.stop()


def test_resume_with_a_disturbed_board_says_which_stations_to_fix(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    rng = random.Random(2)
    board = SimBoard(new_game("luzhanqi").game.station_ids, settle_ms=20, clock=lambda: 0.0)
    table = open_table("luzhanqi", board=board, board_kind="sim", journal_path=journal)
    for side in table.game.sides:
        assert table.session.register_setup(side, random_deployment(table.game, side, rng)) == []
    table.stop()
    board = SimBoard(new_game("luzhanqi").game.station_ids, settle_ms=20, clock=lambda: 0.0)
    table = open_table("luzhanqi", board=board, board_kind="sim", journal_path=journal)
    events: list = []
    table.session.subscribe(lambda ev: events.append(ev.public))
    occupied = sorted(table.session.expected_board())
    missing, extra = occupied[0], "D2"  # D2 is a camp: empty at the start
    board.fill([s for s in occupied if s != missing] + [extra], 0)
    table.session.on_snapshot(board.tick(30))
    fix = [e for e in events if e["event"] == "fixup" and e["steps"]][-1]
    assert {(x["station"], x["action"], x["owner"]) for x in fix["steps"]} == {(missing, "place", table.session.expected_board()[missing].owner), (extra, "take_off", None)}
    assert table.state.phase == "play" and not any(e["event"] in ("move", "attack") for e in events)
    table.stop()
