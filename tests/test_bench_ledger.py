"""The bot benchmark's ledger: strength runs add up over several runs, one line per finished game, and games of
other code are counted apart."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

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


@pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs the project as a git clone (it checks out a revision)")
def test_same_play_as_of_a_revision_replays_both_codes_under_one_hash_order(tmp_path: Path) -> None:
    """``--same-play FP --as-of REV``: for games the ledger holds without a fixed hash order, each is played again
    with REV's code (checked out for the while, its fingerprint must be FP) and with this code, and compared."""
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(repo)], check=True, timeout=120)
    for name in ("bots.py", "replay_one.py"):  # the tool as it is in this tree
        (repo / "benchmarks" / name).write_bytes((ROOT / "benchmarks" / name).read_bytes())
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "commit", "-q", "-a", "--allow-empty", "-m", "the tool"], check=True)
    bench = [sys.executable, str(repo / "benchmarks" / "bots.py"), "--game", "luzhanqi", "--opponent", "greedy",
             "--max-plies", "6", "--cpu-clock"]
    ledger = tmp_path / "ledger.jsonl"
    subprocess.run([*bench, "--ledger", str(ledger), "--games", "2"], check=True, capture_output=True, timeout=120)
    old = json.loads(ledger.read_text().splitlines()[0])["fp"]
    bot = repo / "controller" / "bots" / "facedown.py"
    bot.write_text(bot.read_text() + "\n# a comment: a new fingerprint, the same moves\n")
    subprocess.run([*git, "commit", "-q", "-a", "-m", "a comment"], check=True)

    wrong = subprocess.run([*bench, "--ledger", str(ledger), "--same-play", old, "--as-of", "HEAD", "--games", "2"],
                           capture_output=True, text=True, timeout=120)
    assert wrong.returncode == 2 and f"not {old}" in wrong.stderr
    done = subprocess.run([*bench, "--ledger", str(ledger), "--same-play", old, "--as-of", "HEAD~1", "--games", "2"],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("alike (plies, won, draw, reason, moves)") == 2
    declared = json.loads(ledger.read_text().splitlines()[-1])
    assert declared["same_as"] == old and declared["fp"] != old and "HEAD~1" in declared["how"]
    row = subprocess.run([*bench, "--ledger", str(ledger), "--summary"], capture_output=True, text=True,
                         check=True).stdout.splitlines()[-1].split()
    assert row[:3] == ["luzhanqi", "greedy", "2"] and row[7] == "0"
    listed = subprocess.run(["git", "-C", str(repo), "worktree", "list"], capture_output=True, text=True).stdout
    assert len(listed.splitlines()) == 1  # the checkout of REV is gone
