"""The bot benchmark's ledger: strength runs add up over several runs, one line per finished game, and games of
other code are counted apart."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bench(*args: str) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bots.py"), "--game", "luzhanqi", "--opponent", "greedy",
                           "--max-plies", "6", "--cpu-clock", *args], capture_output=True, text=True, timeout=120, check=True)
    return done.stdout


def test_runs_add_up_in_the_ledger_with_new_seeds_and_swapped_seats(tmp_path: Path) -> None:
    ledger = tmp_path / "ledger.jsonl"
    _bench("--ledger", str(ledger), "--games", "1")
    out = _bench("--ledger", str(ledger), "--until", "3")
    entries = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert [e["seed"] for e in entries] == [1, 2, 3]
    assert [e["bot_seats"] for e in entries] == [["red"], ["blue"], ["red"]]
    assert {e["fp"] for e in entries} == {entries[0]["fp"]} and all(e["draw"] and e["plies"] == 6 for e in entries)
    row = out.splitlines()[-1].split()
    assert row[:3] == ["luzhanqi", "greedy", "3"]

    # a line of other code, and a line that is not JSON, are left out of the count; --summary plays nothing
    other = dict(entries[0], fp="0" * 12, seed=99)
    ledger.write_text(ledger.read_text() + json.dumps(other) + "\n" + "{not json\n")
    out = _bench("--ledger", str(ledger), "--summary")
    assert out.splitlines()[-1].split()[:3] == ["luzhanqi", "greedy", "3"]
    assert len(ledger.read_text().splitlines()) == 5


def test_jobs_play_the_missing_games_in_parallel_each_once(tmp_path: Path) -> None:
    """``--jobs 2``: two games at a time in their own processes, the parent the ledger's only writer; the seeds
    go on from the ledger's last and each is played once, with the seats its seed gives."""
    ledger = tmp_path / "ledger.jsonl"
    _bench("--ledger", str(ledger), "--games", "1")
    out = _bench("--ledger", str(ledger), "--until", "4", "--jobs", "2")
    entries = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert sorted(e["seed"] for e in entries) == [1, 2, 3, 4]
    assert all(e["bot_seats"] == (["red"] if e["seed"] % 2 else ["blue"]) for e in entries)
    assert all(e["peak_rss_mb"] > 5 and e["cpu_ms"] for e in entries)  # each measured in its own process
    assert out.splitlines()[-1].split()[:3] == ["luzhanqi", "greedy", "4"]
    assert _bench("--ledger", str(ledger), "--until", "4", "--jobs", "2").splitlines()[-1].split()[2] == "4"  # none to play


def test_same_play_counts_a_faster_bots_games_with_the_old_only_when_every_replay_is_alike(tmp_path: Path) -> None:
    """``--same-play FP``: games of code FP are replayed with this code and compared with their lines; all alike,
    FP's results count with this code's (not its think times); one different, they stay apart."""
    ledger = tmp_path / "ledger.jsonl"
    _bench("--ledger", str(ledger), "--games", "3")
    entries = [json.loads(line) for line in ledger.read_text().splitlines()]
    assert all(len(e["moves"]) == 16 and e["hash_seed"] == "0" for e in entries)  # what --same-play compares under
    old = "0" * 12  # as if an earlier version of the code had played them
    ledger.write_text("".join(json.dumps(dict(e, fp=old)) + "\n" for e in entries))
    row = _bench("--ledger", str(ledger), "--summary").splitlines()
    assert row[-1].split()[0] == "game"  # no game of this code yet

    # one line that this code does not reproduce: nothing is declared
    changed = [dict(e, fp=old) for e in entries]
    changed[1]["moves"] = "f" * 16
    bad = tmp_path / "bad.jsonl"
    bad.write_text("".join(json.dumps(e) + "\n" for e in changed))
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bots.py"), "--game", "luzhanqi", "--opponent", "greedy",
                           "--max-plies", "6", "--cpu-clock", "--ledger", str(bad), "--same-play", old, "--games", "3"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 1 and "DIFFERENT (moves" in done.stdout
    assert len(bad.read_text().splitlines()) == 3

    out = _bench("--ledger", str(ledger), "--same-play", old, "--games", "2")
    assert out.count("alike (plies, won, draw, reason, moves)") == 2
    declared = json.loads(ledger.read_text().splitlines()[-1])
    assert declared["kind"] == "same_play" and declared["same_as"] == old and len(declared["replayed"]) == 2
    row = _bench("--ledger", str(ledger), "--summary").splitlines()[-1].split()
    assert row[:3] == ["luzhanqi", "greedy", "3"] and row[7] == "0" and row[8:] == ["-"] * 5  # results, no times
    out = _bench("--ledger", str(ledger), "--until", "4")  # the count goes on from the old code's seeds
    last = json.loads(ledger.read_text().splitlines()[-1])
    assert last["seed"] == 4 and last["fp"] != old
    row = out.splitlines()[-1].split()
    assert row[:3] == ["luzhanqi", "greedy", "4"] and row[7] == "1" and row[8] != "-"
