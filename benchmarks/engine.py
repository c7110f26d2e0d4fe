"""Rules-engine throughput: random legal playouts of every installed game, timing move judging and move generation.

Run: ``python benchmarks/engine.py [--games N] [--plies N] [--seed N]``. For each game it plays N random games
(seeded random deployments, uniformly random legal moves, at most --plies plies each) and prints:

- judged moves per second and p50 / p99 of one ``GameState.apply`` call (the time to judge a move, which is what
  the referee spends between a player's hand leaving the board and the ruling);
  ``apply`` includes checking the move and handing the turn on (which asks whether the next side can move);
- legal-move generations per second and p50 / p99 of one ``GameState.legal_moves`` call (what a recognizer that
  compares the board with every legal move would spend).

Percentiles are by nearest rank. Figures are wall-clock on this machine (``time.perf_counter_ns``); nothing is asserted.
"""

from __future__ import annotations

import argparse
import platform
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.rules import game_ids, new_game  # noqa: E402
from controller.rules.deploy import random_deployment  # noqa: E402


def percentile(samples: list[int], q: float) -> float:
    """The q-th percentile (0-100) of ``samples`` in nanoseconds, by nearest rank."""
    ordered = sorted(samples)
    k = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered)) - 1))
    return float(ordered[k])


def playouts(game: str, games: int, plies: int, seed: int) -> tuple[list[int], list[int], int]:
    """Times of every apply and every legal_moves call over ``games`` random games, and how many games ended."""
    rng = random.Random(seed)
    apply_ns: list[int] = []
    gen_ns: list[int] = []
    finished = 0
    clock = time.perf_counter_ns
    for _ in range(games):
        state = new_game(game)
        for side in state.game.sides:
            state.deploy(side, random_deployment(state.game, side, rng, state.options))
        for _ply in range(plies):
            if state.phase != "play":
                break
            t0 = clock()
            moves = state.legal_moves()
            t1 = clock()
            move = rng.choice(moves)
            t2 = clock()
            state.apply(move)
            t3 = clock()
            gen_ns.append(t1 - t0)
            apply_ns.append(t3 - t2)
        finished += state.phase == "over"
    return apply_ns, gen_ns, finished


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=30, help="random games per game type (default 30)")
    parser.add_argument("--plies", type=int, default=1000, help="most plies per game (default 1000)")
    parser.add_argument("--seed", type=int, default=2024)
    args = parser.parse_args(argv)
    print(f"# rules engine, {args.games} random games per game type, at most {args.plies} plies each, seed {args.seed}")
    print(f"# Python {platform.python_version()} on {platform.machine()} ({platform.processor() or platform.system()})")
    print()
    print("| game | plies | ended | apply: moves/s | apply p50 | apply p99 | legal_moves: gens/s | legal_moves p50 | legal_moves p99 |")
    print("|---|---|---|---|---|---|---|---|---|")
    for game in game_ids():
        apply_ns, gen_ns, finished = playouts(game, args.games, args.plies, args.seed)
        rate = len(apply_ns) / (sum(apply_ns) / 1e9)
        gen_rate = len(gen_ns) / (sum(gen_ns) / 1e9)
        print(
            f"| {game} | {len(apply_ns)} | {finished}/{args.games} | {rate:,.0f} "
            f"| {percentile(apply_ns, 50) / 1e3:.0f} µs | {percentile(apply_ns, 99) / 1e3:.0f} µs "
            f"| {gen_rate:,.0f} | {percentile(gen_ns, 50) / 1e3:.0f} µs | {percentile(gen_ns, 99) / 1e3:.0f} µs |"
        )
    print("\nLeaves out everything but the rules engine: sensing, the recognizer, the journal, the web (see e2e.py).")
    return 0


if __name__ == "__main__":
    sys.exit(main())
