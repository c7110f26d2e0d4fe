"""Journal durability benchmark (issue 19): what one journaled ruling costs the referee's thread before it can
announce, with the fsync on that path (``durability="full"``, as before) and beside it (``"deferred"``: the
commit only writes the WAL; a syncer thread fsyncs it; the next append waits for that sync).

    python benchmarks/durability.py [--events 400] [--pause-ms 5] [--dir DIR]

For each mode: the append (the time before the announcement can go out) p50/p99/max; for deferred also the
time until the ruling is on the disk (append + sync) and how long the *next* append waited at the barrier
when moves come ``--pause-ms`` apart (humans: seconds). Use ``--dir`` on the SD card to measure the card.
Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.referee.journal import Journal  # noqa: E402


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def line(name: str, xs: list[float]) -> str:
    ms = [x * 1000 for x in xs]
    return f"  {name}: p50 {statistics.median(ms):.3f} ms, p99 {pct(ms, 0.99):.3f} ms, max {max(ms):.3f} ms"


def run(folder: Path, mode: str, events: int, pause_s: float) -> None:
    path = folder / f"bench-{mode}.sqlite"
    j = Journal(path, durability=mode)
    gid = j.new_game("stratego", {}, board="sim")
    j.wait_durable()
    appends, durable, barrier = [], [], []
    for i in range(events):
        data = {"side": "red" if i % 2 == 0 else "blue", "from": "a4", "to": "a5"}
        syncer = j._syncer  # noqa: SLF001 - measuring the barrier from outside
        t_wait = time.perf_counter()
        if syncer is not None:
            syncer.wait()  # what the next append would wait for first
        barrier.append(time.perf_counter() - t_wait)
        t0 = time.perf_counter()
        j.append(gid, "move", data)
        appends.append(time.perf_counter() - t0)
        if mode == "deferred":
            j.wait_durable()
            durable.append(time.perf_counter() - t0)
            time.sleep(pause_s)
        else:
            time.sleep(pause_s)
    j.close()
    print(f"{mode}: {events} events, {pause_s * 1000:.0f} ms apart, in {folder}")
    print(line("append (before the announcement)", appends))
    if mode == "deferred":
        print(line("append + background fsync (on the disk)", durable))
        print(line("next append's wait at the barrier", barrier))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=400)
    ap.add_argument("--pause-ms", type=float, default=5.0)
    ap.add_argument("--dir", type=Path)
    a = ap.parse_args()
    if a.dir is not None:
        a.dir.mkdir(parents=True, exist_ok=True)
        folder_ctx = tempfile.TemporaryDirectory(dir=a.dir)
    else:
        folder_ctx = tempfile.TemporaryDirectory()
    with folder_ctx as d:
        for mode in ("full", "deferred"):
            run(Path(d), mode, a.events, a.pause_ms / 1000)


if __name__ == "__main__":
    main()
