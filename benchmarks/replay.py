"""Real games through the referee: every Gravon Stratego game (the package's copy, or --corpus DIR) replayed

1. through the rules engine alone (``controller.records.gravon.replay``: every move judged, result checked), and
2. through the full physical path: each recorded move rendered as the lift / place sensor events a player would
   make at the table (attacker lifted, defender lifted, attacker placed, then the fix-ups the ruling asks for),
   fed to ``facedown script`` (``run_script``: simulated board, debouncing, recognizer, session, rules engine).

Run: ``python benchmarks/replay.py [--corpus DIR] [--repeat N]``. Prints moves per second for each path; the physical
path also checks that the session ruled every move as the engine did and reached the recorded result. Figures are
wall-clock on this machine (``time.perf_counter``); nothing is asserted about time.
"""

from __future__ import annotations

import argparse
import io
import json
import platform
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.seeded_games import play_physically  # noqa: E402  (the same rendering the tests use)
from controller.commands.script import run_script  # noqa: E402
from controller.records import corpus, gravon  # noqa: E402
from controller.rules import new_game  # noqa: E402

SETTLE_MS = 30


def script_lines(record: gravon.GravonGame) -> tuple[list[str], int]:
    """The record as `facedown script` lines, and how many moves the engine judged while rendering it."""
    state = new_game(record.game)
    lines: list[dict[str, Any]] = []
    for side, placement in gravon.placements(record).items():
        lines.append({"setup": side, "pieces": placement})
        state.deploy(side, placement)
    lines.append({"tick_ms": SETTLE_MS + 10})

    def act(kind: str, station: str) -> None:
        lines.append({kind: station})
        lines.append({"tick_ms": SETTLE_MS + 5})

    for frm, to in record.moves:
        play_physically(state, frm, to, act)
    return [json.dumps(x) for x in lines], state.ply


def scaling(repeat: int) -> int:
    """``--scaling``: how the replay paths' CPU time grows from a 1,000- to a 5,000-ply game (the test's figures)."""
    from benchmarks.seeded_games import long_game, prefix, replay_as_the_web_does, walk_rulings
    from controller.commands.record import move_lines

    game = long_game(5000, seed=3)
    paths = [("web replay (views encoded)", replay_as_the_web_does), ("rulings with the state after each", walk_rulings),
             ("record text", lambda events: len(move_lines(events)[1]))]
    print(f"{'path':<36} {'1,000 plies':>12} {'5,000 plies':>12} {'ratio':>6}   (CPU s, best of {repeat})")
    for name, fn in paths:
        times = []
        for events in (prefix(game, 1000), game):
            best = float("inf")
            for _ in range(max(1, repeat)):
                t0 = time.process_time()
                fn(events)
                best = min(best, time.process_time() - t0)
            times.append(best)
        print(f"{name:<36} {times[0]:>12.3f} {times[1]:>12.3f} {times[1] / times[0]:>6.1f}")
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", help="a gravon-stratego folder (default: the games in the package)")
    ap.add_argument("--repeat", type=int, default=3, help="engine-path repetitions (the best is reported)")
    ap.add_argument("--scaling", action="store_true",
                    help="instead: CPU time of a 1,000- and a 5,000-ply game's replay, record text and rulings walk, "
                         "and their ratio (linear: ~5x; tests/test_linear_replay.py asserts it on the work done)")
    args = ap.parse_args()
    if args.scaling:
        return scaling(args.repeat)
    games = corpus.folder(args.corpus) if args.corpus else corpus.packaged("gravon-stratego")
    names = games.glob("games/*.xml")
    if not names:
        print(f"no Gravon games under {games.name}", file=sys.stderr)
        return 2
    records = [gravon.parse(games.read_text(n), games.where(n)) for n in names]
    moves = sum(len(r.moves) for r in records)
    print(f"{len(records)} Gravon games, {moves} moves; Python {platform.python_version()} on {platform.machine()}")

    best = float("inf")
    for _ in range(max(1, args.repeat)):
        t0 = time.perf_counter()
        for r in records:
            gravon.replay(r)
        best = min(best, time.perf_counter() - t0)
    print(f"engine   : {moves / best:10.0f} moves/s  ({best:.2f} s for all games, best of {args.repeat})")

    rendered = [script_lines(r) for r in records]
    events = sum(len(lines) for lines, _ in rendered)
    t0 = time.perf_counter()
    ruled = 0
    mismatched = []
    for r, (lines, judged) in zip(records, rendered, strict=True):
        out = io.StringIO()
        run_script(r.game, lines, out, settle_ms=SETTLE_MS)
        published = [json.loads(x) for x in out.getvalue().splitlines()]
        moved = [e for e in published if e.get("event") in ("move", "attack")]
        ruled += len(moved)
        over = [e for e in published if e.get("event") == "game_over"]
        if len(moved) != judged or any(e.get("event") in ("mismatch", "illegal") for e in published) or (r.result_type in (0, 1)) != bool(over):
            mismatched.append(r.file)
    took = time.perf_counter() - t0
    print(f"physical : {ruled / took:10.0f} moves/s  ({took:.2f} s; {events} script lines, {events / took:.0f} lines/s)")
    if mismatched:
        print(f"physical path disagreed with the engine on: {', '.join(Path(m).name for m in mismatched)}")
        return 1
    print("physical path: every move ruled as the engine did, every recorded flag capture / no-move result reached")
    print("leaves out: real time (the script's clock jumps; no settle waits), the journal's fsync and the web")
    return 0


if __name__ == "__main__":
    sys.exit(main())
