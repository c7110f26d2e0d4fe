"""The journal's digest chain (issue 35): what chaining costs each event, and what checking a long game costs.

    python benchmarks/journal_chain.py [--events 2000] [--plies 5000] [--repeat 3]

1. **Chain cost per event**: the same events appended (one transaction each, ``durability="deferred"`` as the
   referee runs, so no fsync on the path) through the real ``Journal.append`` (digest chained to the game's head,
   head moved on, in the transaction) and through the journal's earlier statement alone (one INSERT of the row, no
   digest, no head) on an identical file; the difference per event is the chain's cost. Also the digest alone
   (``chain.link``).
2. **`record verify` of a 5,000-ply game**: a seeded random Stratego game of ``--plies`` plies is journaled and
   finished; then the chain check of the journal (``Journal.check``: read every row, walk the chain), the whole
   ``facedown record verify ID`` path (chain + replay through the engine), making the signed record
   (``record export --signed``: check, replay, sign) and ``record verify FILE --key KEY`` (chain, signature,
   replay to the stated result), each best of ``--repeat``, CPU and wall time; with the record's size on disk and
   packed for the club's broker.

Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.referee import chain  # noqa: E402
from controller.referee.gamefile import file_of  # noqa: E402
from controller.referee.journal import Journal, _encode, check_event  # noqa: E402
from controller.rules import new_game  # noqa: E402
from controller.rules.deploy import random_deployment  # noqa: E402


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def chain_cost(folder: Path, events: int) -> None:
    moves = [{"side": "red" if i % 2 == 0 else "blue", "from": f"a{i % 9 + 1}", "to": f"b{i % 9 + 1}",
              "clock": {"red": 600.0 - i % 600, "blue": 600.0 - i % 600}} for i in range(events)]
    texts = [json.dumps(m, ensure_ascii=False, sort_keys=True, allow_nan=False) for m in moves]
    chained, plain = [], []
    for label in ("chained", "plain"):
        j = Journal(folder / f"{label}.sqlite", durability="deferred")
        gid = j.new_game("stratego", {}, board="sim")
        j.wait_durable()
        db = j._db  # the earlier code's statement, on the same connection, in the same kind of transaction
        for i, data in enumerate(moves):
            if label == "chained":
                t0 = time.perf_counter()
                j.append(gid, "move", data)
                chained.append(time.perf_counter() - t0)
            else:
                t0 = time.perf_counter()
                check_event("move", data)  # what append does before it writes, the same in both
                _encode("move", data)
                with j._lock:
                    j._before_write()
                    with j._transaction():
                        j._require_game(gid)
                        db.execute("INSERT INTO events (game_id, kind, data, time) VALUES (?, ?, ?, ?)",
                                   (gid, "move", texts[i], time.time()))
                    j._after_write()
                plain.append(time.perf_counter() - t0)
        j.close()
    t0 = time.perf_counter()
    prev = "0" * 64
    for i, text in enumerate(texts):
        prev = chain.link(prev, "move", 1.7e9 + i, text)
    link_us = (time.perf_counter() - t0) / events * 1e6
    c50, p50 = statistics.median(chained) * 1e3, statistics.median(plain) * 1e3
    print(f"chain cost per event ({events} appends, deferred durability, one transaction each):")
    print(f"  append with the chain: p50 {c50:.4f} ms, p99 {pct(chained, 0.99) * 1e3:.4f} ms")
    print(f"  the earlier INSERT:    p50 {p50:.4f} ms, p99 {pct(plain, 0.99) * 1e3:.4f} ms")
    print(f"  the chain's cost:      p50 {c50 - p50:+.4f} ms per event (target <= 0.05 ms); the digest alone "
          f"{link_us:.2f} us")


def long_game(path: Path, plies: int, seed: int) -> int:
    """A seeded random Stratego game of ``plies`` plies (mostly quiet moves so the flags live), ended by the arbiter."""
    rng = random.Random(seed)
    st = new_game("stratego", {"no_capture_draw": None})
    with Journal(path) as j:
        gid = j.new_game("stratego", dict(st.options), board="sim", seats={"red": "Ann", "blue": "Bo"},
                         game_file=file_of(st.game))
        batch = []
        for side in st.game.sides:
            placement = random_deployment(st.game, side, rng)
            st.deploy(side, placement)
            batch.append(("deploy", {"side": side, "placement": placement}))
        while st.ply < plies and st.phase == "play":
            legal = st.legal_moves()
            quiet = [m for m in legal if m.to not in st.board]
            move = rng.choice(quiet if quiet and rng.random() < 0.995 else legal)
            side = st.turn
            st.apply(move)
            batch.append(("move", {"side": side, "from": move.frm, "to": move.to}))
        if st.phase == "play":
            batch.append(("arbiter", {"action": "end", "result": {"winners": ["red"], "reason": {
                "code": "verdict.resigned", "params": {"side": "blue"}}}}))
        j.append_many(gid, batch)
        print(f"a {st.ply}-ply Stratego game, {len(batch) + 1} events")
    return gid


def best(fn, repeat: int) -> tuple[float, float]:  # noqa: ANN001
    cpu, wall = [], []
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu.append(time.process_time() - c0)
        wall.append(time.perf_counter() - w0)
    return min(cpu), min(wall)


def verify_long(folder: Path, plies: int, repeat: int) -> None:
    from controller.commands.record import _verify_game
    from controller.referee.signing import (
        dumps,
        make_record,
        pack,
        parse_key,
        public_key,
        read_record,
        verify_record,
    )

    path = folder / "long.sqlite"
    gid = long_game(path, plies, seed=3)
    key = parse_key(public_key(path))
    j = Journal(path, create=False)
    out = folder / "long.fdrec.json"
    record = make_record(j, gid)
    out.write_text(dumps(record), encoding="utf-8")
    rows = [
        ("chain check of the journal (read + walk)", lambda: j.check(gid)),
        ("`record verify ID` (chain + replay)", lambda: _verify_game(j, gid)),
        ("`record export --signed` (check, replay, sign)", lambda: make_record(j, gid)),
        ("`record verify FILE --key` (read, chain, signature, replay)", lambda: verify_record(read_record(out), key)),
    ]
    print(f"{'path':<62} {'CPU s':>7} {'wall s':>7}   (best of {repeat})")
    for name, fn in rows:
        cpu, wall = best(fn, repeat)
        print(f"{name:<62} {cpu:>7.3f} {wall:>7.3f}")
    j.close()
    print(f"signed record: {out.stat().st_size / 1e6:.2f} MB on disk, {len(pack(record)) / 1e3:.0f} kB packed for the "
          "club's broker")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=2000, help="appends for the per-event cost (default 2000)")
    ap.add_argument("--plies", type=int, default=5000, help="plies of the long game (default 5000)")
    ap.add_argument("--repeat", type=int, default=3, help="best of N for the long game's paths (default 3)")
    ap.add_argument("--dir", type=Path, help="where to put the journals (default: a temporary folder)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(dir=args.dir) as d:
        chain_cost(Path(d), args.events)
        verify_long(Path(d), args.plies, args.repeat)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
