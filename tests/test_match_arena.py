"""`facedown match` as a measuring tool: every game's moves and think times in `--json`, a time budget per seat's
bot, `--jobs` playing the same games as a run one by one, and a bot that times out keeping its figures."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from controller.cli import main
from controller.referee.journal import Journal

#: An outside engine that plays like `random` but, on its move number SLOW_AT, thinks for SLOW_S seconds.
SLOW_ENGINE = '''
import sys, time
from controller.bots import RandomBot
from controller.bots.protocol import serve

SLOW_AT, SLOW_S = int(sys.argv[1]), float(sys.argv[2])

class Slow(RandomBot):
    name = "slow"
    moves = 0
    def choose_move(self, view, time_ms):
        self.moves += 1
        if self.moves == SLOW_AT:
            time.sleep(SLOW_S)
        return super().choose_move(view, time_ms)

sys.exit(serve(Slow()))
'''


def _match(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    assert main(["match", *args, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def _played(record: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(m["side"], m["from"], m["to"]) for m in record["moves"] if "failed" not in m and not m.get("refused")]


def test_json_gives_every_games_moves_with_their_think_times(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "j.sqlite"
    out = _match(capsys, "luzhanqi", "--red", "facedown:1", "--blue", "greedy", "--games", "2", "--max-plies", "60",
                 "--seed", "3", "--journal", str(path))
    with Journal(path, create=False) as journal:
        for rec in out["records"]:
            played = _played(rec)
            assert len(played) == rec["plies"]
            assert [m["ply"] for m in rec["moves"] if not m.get("refused")] == list(range(1, rec["plies"] + 1))
            kept = [(e.data["side"], e.data["from"], e.data["to"]) for e in journal.events(rec["journal_id"])
                    if e.kind == "move"]
            assert played == kept  # the moves listed are the moves the game was played with
            for side, think in rec["think"].items():
                mine = [m for m in rec["moves"] if m["side"] == side]
                assert think["moves"] == len(mine) > 0
                assert all(m["ms"] >= 0 and m["cpu_ms"] >= 0 for m in mine)
                assert think["ms_p50"] <= think["ms_p99"] <= max(m["ms"] for m in mine) + 0.01
    bot = [r for r in out["records"] for s, n in r["seats"].items() if n == "facedown:1" for m in r["moves"]
           if m["side"] == s]
    assert out["bots"]["facedown:1"]["moves"] == len(bot)


def test_each_seats_bot_has_its_own_budget_and_keeps_it_when_the_seats_swap(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    engine = tmp_path / "slow.py"
    engine.write_text(SLOW_ENGINE)
    slow = f"cmd:{sys.executable} {engine} 2 1.6"  # its second move takes 1.6 s
    out = _match(capsys, "luzhanqi", "--red", slow, "--blue", "random", "--games", "2", "--max-plies", "8",
                 "--time-ms", "100", "--red-time-ms", "3000")
    for i, rec in enumerate(out["records"]):
        engine_side = "red" if i == 0 else "blue"  # swapped in the second game: its budget goes with it
        other = "blue" if engine_side == "red" else "red"
        assert rec["time_ms"] == {engine_side: 3000.0, other: 100.0}
        assert rec["failures"] == [] and rec["plies"] == 8
        slowest = max(m["ms"] for m in rec["moves"] if m["side"] == engine_side)
        assert slowest >= 1500
    with pytest.raises(SystemExit):
        main(["match", "luzhanqi", "--red", "random", "--blue", "random", "--red-time-ms", "soon"])
    assert main(["match", "luzhanqi", "--red", "random", "--blue", "random", "--seat-time-ms", "green=5"]) == 2
    assert "has no seat 'green'" in capsys.readouterr().err
    assert main(["match", "luzhanqi", "--red", "random", "--blue", "random", "--blue-time-ms", "0"]) == 2
    assert "more than 0 ms" in capsys.readouterr().err


def test_a_bot_that_times_out_keeps_its_moves_and_think_times(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    engine = tmp_path / "slow.py"
    engine.write_text(SLOW_ENGINE)
    slow = f"cmd:{sys.executable} {engine} 3 2.5"  # its third move comes after the budget and the grace
    out = _match(capsys, "luzhanqi", "--red", slow, "--blue", "random", "--games", "1", "--max-plies", "40",
                 "--time-ms", "200")
    rec = out["records"][0]
    assert [f["why"] for f in rec["failures"]] == ["timeout"] and rec["winners"] == ["blue"]
    red = [m for m in rec["moves"] if m["side"] == "red"]
    assert [m.get("failed") for m in red] == [None, None, "timeout"]
    assert red[-1]["ms"] >= 1200 and "from" not in red[-1]  # cut off after budget + grace: the time it cost is kept
    assert rec["think"]["red"]["moves"] == 3
    row = next(row for name, row in out["bots"].items() if name != "random")
    assert row["moves"] == 3 and row["failures"] == 1 and row["think_ms_p99"] >= 1200


def test_jobs_play_the_same_games_as_one_by_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    runs = []
    for jobs in ("1", "2"):
        path = tmp_path / f"j{jobs}.sqlite"
        out = _match(capsys, "stratego", "--red", "facedown:1", "--blue", "greedy", "--games", "3", "--max-plies",
                     "80", "--seed", "11", "--jobs", jobs, "--journal", str(path))
        runs.append(out)
        assert [r["journal_id"] for r in out["records"]] == [1, 2, 3]  # journaled in the games' order
    one, two = runs
    assert [_played(r) for r in one["records"]] == [_played(r) for r in two["records"]]
    for key in ("seats", "winners", "draw", "reason", "plies", "failures", "time_ms"):
        assert [r[key] for r in one["records"]] == [r[key] for r in two["records"]]
    assert {n: {k: v for k, v in row.items() if "ms" not in k} for n, row in one["bots"].items()} == \
        {n: {k: v for k, v in row.items() if "ms" not in k} for n, row in two["bots"].items()}
    assert main(["match", "luzhanqi", "--red", "random", "--blue", "random", "--jobs", "0"]) == 2
    assert "--jobs" in capsys.readouterr().err
