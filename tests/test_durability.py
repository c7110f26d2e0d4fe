"""Durability without the wait (issue 19): the journal's fsync runs beside the announcement, not before it, and
still nothing announced is lost. A referee killed with SIGKILL right after announcing a ruling resumes with that
ruling (and every earlier one) in its game; the next move is accepted only after the last one's sync."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from controller.referee.journal import Journal
from controller.referee.replay import rebuild

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("game,seed", [("stratego", 21), ("luzhanqi", 8)])
def test_sigkill_right_after_an_announcement_never_loses_it(tmp_path: Path, game: str, seed: int) -> None:
    rng = random.Random(seed)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for trial in range(4):
        journal = tmp_path / f"j{trial}.sqlite"
        target = rng.randrange(1, 60)
        child = subprocess.Popen([sys.executable, "-m", "tests.resume_child", game, str(seed), str(journal)],
                                 stdout=subprocess.PIPE, text=True, cwd=ROOT, env=env)
        assert child.stdout is not None
        announced = 0
        for line in child.stdout:
            if line.startswith("announced"):
                announced = max(announced, int(line.split()[1]))
                if announced >= target:
                    os.kill(child.pid, signal.SIGKILL)  # the instant the players heard it
                    break
            if line.startswith("done"):
                break
        child.wait()
        with Journal(journal) as j:
            gid = j.unfinished() or j.games()[-1].id
            state = rebuild(j.events(gid))
        assert state.ply >= announced, f"trial {trial}: announced ply {announced}, the journal has {state.ply}"
