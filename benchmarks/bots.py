"""Bot benchmark: ``facedown`` at its default level against ``random`` and ``greedy`` in each game, through the
rules engine with seats swapped every other game. Prints win %, draws, plies, facedown's think time per move
(p50/p99, wall-clock ms, and the CPU ms its thread used: on a loaded machine the wall clock runs ahead of the CPU
time) and the process's peak memory (RSS, MB: the engine, both bots and Python itself).

    python benchmarks/bots.py [--games 20] [--game stratego --game luzhanqi ...] [--opponent random ...]
                              [--bot facedown] [--max-plies 2000] [--json FILE] [--cpu-clock]

The issue asks 200 games per opponent and game; a full run of that takes days on a shared 2-core machine, so the
count is a flag and the README states the counts behind its figures. Asserts nothing about timing.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.bots import find_bot  # noqa: E402
from controller.bots.arena import Match, percentile, play_game  # noqa: E402
from controller.rules import load_game  # noqa: E402

GAMES = ["stratego", "luzhanqi", "lattaque", "dover_patrol", "navy_cn", "navy_tw"]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_pair(game: str, bot: str, opponent: str, games: int, max_plies: int, seed: int,
             clock: Callable[[], float] = time.perf_counter) -> dict:
    gdef = load_game(game)
    sides = gdef.sides
    # two sides: bot against opponent; four (siguo): the bot's alliance against the opponent's
    seats = {s: (bot if gdef.ally(sides[0], s) else opponent) for s in sides}
    match = Match(game, seats)
    started = time.perf_counter()
    for i in range(games):
        names = match.rotation(i)
        bots = {s: find_bot(n) for s, n in names.items()}
        record = play_game(game, bots, names, seed=seed + i, max_plies=max_plies, clock=clock)
        match.records.append(record)
        for f in record.failures:  # say why at once: a failure is a result to look into, not only a count
            print(f"\n  game {i + 1}: {names[f['side']]} ({f['side']}) failed: {f['why']}: {f['message']}", file=sys.stderr)
        for b in bots.values():
            b.close()
        print(f"\r  {game} vs {opponent}: {i + 1}/{games}", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)
    summary = match.summary()
    row = summary["bots"][bot]
    think = [ms for r in match.records for s, n in r.seats.items() if n == bot for ms in r.think_ms.get(s, [])]
    cpu = [ms for r in match.records for s, n in r.seats.items() if n == bot for ms in r.cpu_ms.get(s, [])]
    return {
        "game": game, "opponent": opponent, "games": games,
        "wins": sum(1 for r in match.records if any(r.seats[w] == bot for w in r.winners)),
        "draws": sum(1 for r in match.records if r.draw),
        "win_pct": round(100.0 * sum(1 for r in match.records if any(r.seats[w] == bot for w in r.winners)) / games, 1),
        "failures": row["failures"], "plies_mean": summary["plies_mean"],
        "think_ms_p50": round(percentile(think, 0.5), 1), "think_ms_p99": round(percentile(think, 0.99), 1),
        "cpu_ms_p50": round(percentile(cpu, 0.5), 1), "cpu_ms_p99": round(percentile(cpu, 0.99), 1),
        "peak_rss_mb": round(peak_mb(), 1), "seconds": round(time.perf_counter() - started, 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=20, help="games per opponent per game (default 20)")
    ap.add_argument("--game", action="append", help=f"game ids (default: {', '.join(GAMES)})")
    ap.add_argument("--opponent", action="append", help="opponents (default: random, greedy)")
    ap.add_argument("--bot", default="facedown", help="the bot measured (default facedown, its default level)")
    ap.add_argument("--max-plies", type=int, default=2000, help="a game this long is a draw (default 2000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", metavar="FILE", help="also append each row as a JSON line to FILE")
    ap.add_argument("--cpu-clock", action="store_true",
                    help="count the bot's time budget, the arena's time limit per move and the think-time columns in "
                         "CPU time of the thinking thread: a loaded or niced run then measures the strength of a quiet "
                         "machine (in-process bots only: a cmd: bot's CPU is another process's)")
    args = ap.parse_args()
    if args.cpu_clock:
        from controller.bots.facedown import FaceDownBot

        FaceDownBot.clock = staticmethod(time.thread_time)  # type: ignore[assignment]
    clock = time.thread_time if args.cpu_clock else time.perf_counter
    print(f"{'game':<14} {'vs':<8} {'games':>5} {'win %':>6} {'draws':>5} {'fail':>4} {'plies':>6} "
          f"{'p50 ms':>7} {'p99 ms':>7} {'cpu p50':>7} {'cpu p99':>7} {'RSS MB':>7}")
    for game in args.game or GAMES:
        for opponent in args.opponent or ["random", "greedy"]:
            row = run_pair(game, args.bot, opponent, args.games, args.max_plies, args.seed, clock)
            print(f"{row['game']:<14} {row['opponent']:<8} {row['games']:>5} {row['win_pct']:>6.1f} {row['draws']:>5} "
                  f"{row['failures']:>4} {row['plies_mean']:>6.0f} {row['think_ms_p50']:>7.1f} {row['think_ms_p99']:>7.1f} "
                  f"{row['cpu_ms_p50']:>7.1f} {row['cpu_ms_p99']:>7.1f} "
                  f"{row['peak_rss_mb']:>7.1f}", flush=True)
            if args.json:
                with open(args.json, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
