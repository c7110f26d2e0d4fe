"""Outside-engine memory benchmark (issue 34): the referee's peak RSS while a hostile engine writes without end.

Each case runs a fresh referee process (this file with ``--child``) that starts ``tests/hostile_engine.py`` as a
``cmd:`` bot, asks it for a setup and a move, and reports its own peak RSS (``ru_maxrss``, the referee only: the
engine is another process) before the engine starts and after the move, with the time until the failure:

- ``endless``: the engine writes ``--bytes`` (default 1 GiB) with no newline;
- ``flood``: it writes ``--bytes`` of log lines (~100 bytes each; at the limit of 1,000 a move it is refused);
- ``flood, no log limit``: the same with the per-move limit lifted, so the referee reads every byte of it and the
  engine answers afterwards: what reading costs, not only what refusing costs (``--flood-bytes``, default 64 MiB;
  each byte is read and parsed, ~6 s a 100 MB here).

    python benchmarks/bot_flood.py [--bytes 1073741824] [--flood-bytes 67108864]

Target: growth <= 50 MB in every case. Prints figures; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

ENGINE = ROOT / "tests" / "hostile_engine.py"


def _files(where: Path) -> tuple[Path, Path]:
    from controller.bots.setups import built_setup
    from controller.rules import load_game, new_game

    gdef = load_game("stratego")
    st = new_game("stratego")
    nb = st.topo.neighbours(frozenset(st.topo.all_kinds))
    graph, setup = where / "graph.json", where / "red.json"
    graph.write_text(json.dumps({s: [n for n in nb[s] if st.topo.passable[n]] for s in gdef.station_ids}))
    setup.write_text(json.dumps(built_setup(gdef, "red", random.Random(1))))
    return setup, graph


def child(mode: str, total: int, no_limit: bool) -> dict:
    from controller.bots.base import BotError
    from controller.bots.process import ProcessBot
    from controller.bots.setups import built_setup
    from controller.rules import load_game, new_game, view

    with tempfile.TemporaryDirectory() as tmp:
        setup, graph = _files(Path(tmp))
        gdef = load_game("stratego")
        st = new_game("stratego")
        st.deploy("red", json.loads(setup.read_text()))
        st.deploy("blue", built_setup(gdef, "blue", random.Random(2)))
        seen = view(st, "red")
        cmd = f"{sys.executable} {ENGINE} {mode} --setup {setup} --graph {graph} --bytes {total}"
        bot = ProcessBot(cmd, max_logs=10**12 if no_limit else 1000)
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        outcome = "answered"
        try:
            bot.new_game("stratego", "red", st.options, 1)
            bot.choose_setup(view(new_game("stratego"), "red"), 1000)
            t0 = time.perf_counter()
            try:
                bot.choose_move(seen, 600_000)
            except BotError as exc:
                outcome = f"{exc.why}: {str(exc).replace(bot.name, 'it', 1)[:80]}"
            took = time.perf_counter() - t0
        finally:
            bot.close()
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {"mode": mode, "no_limit": no_limit, "bytes": total, "before_mb": before / 1024, "peak_mb": after / 1024,
            "growth_mb": (after - before) / 1024, "seconds": took, "outcome": outcome}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bytes", type=int, default=1 << 30, help="what the engine tries to write (default 1 GiB)")
    ap.add_argument("--flood-bytes", type=int, default=64 << 20,
                    help="log lines the referee reads whole with the limit lifted (default 64 MiB)")
    ap.add_argument("--child", nargs=3, metavar=("MODE", "BYTES", "NO_LIMIT"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        mode, total, no_limit = args.child
        print(json.dumps(child(mode, int(total), no_limit == "1")))
        return 0
    cases = [("endless", args.bytes, False), ("flood", args.bytes, False), ("flood", args.flood_bytes, True)]
    print("case | engine writes | referee peak RSS before -> after (growth) | until refused/answered | outcome")
    for mode, total, no_limit in cases:
        out = subprocess.run([sys.executable, __file__, "--child", mode, str(total), "1" if no_limit else "0"],
                             capture_output=True, text=True, check=True, cwd=ROOT)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        name = f"{mode}{', no log limit' if no_limit else ''}"
        print(f"{name} | {total / 2**20:,.0f} MiB | {r['before_mb']:.1f} -> {r['peak_mb']:.1f} MB "
              f"({r['growth_mb']:+.1f} MB) | {r['seconds'] * 1000:,.0f} ms | {r['outcome']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
