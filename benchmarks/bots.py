"""Bot benchmark: ``facedown`` at its default level against ``random`` and ``greedy`` in each game, through the
rules engine with seats swapped every other game. Prints win %, draws, plies, facedown's think time per move
(p50/p99, wall-clock ms, and the CPU ms its thread used: on a loaded machine the wall clock runs ahead of the CPU
time) and the process's peak memory (RSS, MB: the engine, both bots and Python itself).

    python benchmarks/bots.py [--games 20] [--game stratego --game luzhanqi ...] [--opponent random ...]
                              [--bot facedown] [--max-plies 2000] [--json FILE] [--cpu-clock]
                              [--ledger FILE [--until N] [--summary] [--same-play FP]] [--jobs N]
    python benchmarks/bots.py --ladder 1,2,3 [--bot facedown] [--games 10] [--game stratego ...] [--jobs 2]

The issue asks 200 games per opponent and game, ~10 CPU-hours at the default level. With ``--ledger`` each finished
game is appended to a ledger as one JSON line, stamped with a fingerprint of the code and data that decide how the
bots play (the bots, the rules engine, the game files, the packaged human setups): runs on several days or machines
add up, a run that is stopped keeps every game it finished, new games take seeds the ledger has not used, and a
change to that code starts a new count instead of mixing with games of the old bot. ``--until N`` plays until the
ledger holds N games per pair for the current code; ``--summary`` only prints the ledger's figures. ``--jobs N``
plays N games at once, each in a fresh process (so its peak memory is its own): one per core, with ``--cpu-clock``
so that sharing the machine never cuts a move short. ``--same-play FP`` replays some of the games of an earlier
code FP with the current code and, if every one is played move for move alike (a change that only made the bot
faster), records that FP's results count with the current code's; think times are only ever shown from games of the
current code (the ``timed`` column). Asserts nothing about timing.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import os
import resource
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from replay_one import play_seeded  # noqa: E402

from controller.bots.arena import Match, percentile  # noqa: E402
from controller.rules import load_game  # noqa: E402

GAMES = ["stratego", "luzhanqi", "lattaque", "dover_patrol", "navy_cn", "navy_tw"]
#: What decides how the bots play, hashed into the ledger's fingerprint.
PLAY_CODE = ["controller/bots", "controller/rules", "controller/records"]


def fingerprint(root: Path = ROOT) -> str:
    """A short hash of every file that decides how the bots play (code, game files, packaged human setups)."""
    h = hashlib.sha256()
    for top in PLAY_CODE:
        for f in sorted((root / top).rglob("*")):
            if f.is_file() and "__pycache__" not in f.parts:
                h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:12]


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _hist(values: list[float]) -> dict[str, int]:
    """Milliseconds in 1 ms buckets: a ledger line stays small, and percentiles over many games are good to 1 ms."""
    out: dict[str, int] = {}
    for v in values:
        k = str(round(v))
        out[k] = out.get(k, 0) + 1
    return out


def _hist_percentile(hists: list[dict[str, int]], q: float) -> float:
    merged: dict[float, int] = {}
    for h in hists:
        for k, n in h.items():
            merged[float(k)] = merged.get(float(k), 0) + n
    values = sorted(merged)
    total = sum(merged.values())
    if not total:
        return 0.0
    rank, seen = q * (total - 1), 0
    for v in values:
        seen += merged[v]
        if seen > rank:
            return v
    return values[-1]


def run_pair(game: str, bot: str, opponent: str, games: int, max_plies: int, seed: int,
             clock: Callable[[], float] = time.perf_counter, ledger: Path | None = None, fp: str = "") -> dict:
    gdef = load_game(game)
    # two sides: bot against opponent; four (siguo): the bot's alliance against the opponent's
    match = Match(game, {s: (bot if gdef.ally(gdef.sides[0], s) else opponent) for s in gdef.sides})
    started = time.perf_counter()
    for i in range(games):  # by seed: seats keep alternating when a ledger run resumes
        record, moves = play_seeded(game, bot, opponent, seed + i, max_plies, clock is time.thread_time)
        match.records.append(record)
        for f in record.failures:  # say why at once: a failure is a result to look into, not only a count
            print(f"\n  game {i + 1}: {record.seats[f['side']]} ({f['side']}) failed: {f['why']}: {f['message']}",
                  file=sys.stderr)
        if ledger is not None:
            append(ledger, ledger_entry(record, fp, game, bot, opponent, seed + i, max_plies, clock, moves))
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


def ledger_entry(record: Any, fp: str, game: str, bot: str, opponent: str, seed: int, max_plies: int,
                 clock: Callable[[], float], moves: str | None = None) -> dict:
    """One finished game as a ledger line: who sat where, the result, the moves' digest, the bot's think times as
    histograms."""
    mine = [s for s, n in record.seats.items() if n == bot]
    return {"fp": fp, "game": game, "bot": bot, "opponent": opponent, "seed": seed, "max_plies": max_plies,
            "clock": "cpu" if clock is time.thread_time else "wall", "bot_seats": mine,
            "won": any(w in mine for w in record.winners), "draw": record.draw, "plies": record.plies,
            "reason": record.reason, "failures": record.failures, "moves": moves,
            "hash_seed": os.environ.get("PYTHONHASHSEED"),
            "think_ms": _hist([ms for s in mine for ms in record.think_ms.get(s, [])]),
            "cpu_ms": _hist([ms for s in mine for ms in record.cpu_ms.get(s, [])]),
            "peak_rss_mb": round(peak_mb(), 1), "at": time.strftime("%Y-%m-%dT%H:%M:%S")}


def append(ledger: Path, entry: dict) -> None:
    with ledger.open("a", encoding="utf-8") as fh:  # one line per game: a stopped run keeps what it finished
        fh.write(json.dumps(entry) + "\n")


def play_one(game: str, bot: str, opponent: str, seed: int, max_plies: int, cpu_clock: bool, fp: str) -> dict:
    """One game in a worker process of ``--jobs``: its ledger line."""
    record, moves = play_seeded(game, bot, opponent, seed, max_plies, cpu_clock)
    clock = time.thread_time if cpu_clock else time.perf_counter
    return ledger_entry(record, fp, game, bot, opponent, seed, max_plies, clock, moves)


def play_parallel(tasks: list[tuple[str, str, str, int]], jobs: int, max_plies: int, cpu_clock: bool, fp: str,
                  ledger: Path | None) -> list[dict]:
    """Play ``tasks`` (game, bot, opponent, seed) ``jobs`` at a time, each in a fresh process; every finished game
    goes to the ledger at once (this process is its only writer). Returns the ledger lines."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor, as_completed

    out: list[dict] = []
    if not tasks:
        return out
    pool = ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("spawn"), max_tasks_per_child=1)
    try:
        futures = {pool.submit(play_one, g, b, o, seed, max_plies, cpu_clock, fp): (g, o, seed) for g, b, o, seed in tasks}
        for n, done in enumerate(as_completed(futures), 1):
            game, opponent, seed = futures[done]
            entry = done.result()
            out.append(entry)
            if ledger is not None:
                append(ledger, entry)
            for f in entry["failures"]:
                print(f"\n  {game} vs {opponent}, seed {seed}: {f['side']} failed: {f['why']}: {f['message']}", file=sys.stderr)
            result = "won" if entry["won"] else "drawn" if entry["draw"] else "lost"
            print(f"\r  {n}/{len(tasks)} games ({jobs} at once); last: {game} vs {opponent} seed {seed} {result}   ",
                  end="", file=sys.stderr, flush=True)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)  # Ctrl-C: the games running finish nowhere, the ledger keeps the rest
    print(file=sys.stderr)
    return out


def ledger_lines(path: Path) -> list[dict]:
    """Every readable line of the ledger: games, and the declarations of ``--same-play``."""
    if not path.exists():
        return []
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        try:
            out.append(json.loads(line))
        except json.JSONDecodeError:
            print(f"{path}:{n}: not a JSON line, left out", file=sys.stderr)
    return out


def plays_alike(lines: list[dict], fp: str) -> set[str]:
    """``fp`` and every fingerprint a ``--same-play`` check found to play the same moves as it (a change that made
    the bot faster, not different), directly or through another: their games count together."""
    alike = {fp}
    pairs = [(d["fp"], d["same_as"]) for d in lines if d.get("kind") == "same_play"]
    grew = True
    while grew:
        grew = False
        for new, old in pairs:
            if new in alike and old not in alike:
                alike.add(old)
                grew = True
    return alike


def read_ledger(path: Path, fp: str) -> list[dict]:
    """The ledger's games played with the current code, or with code found to play alike (lines of other code, or
    unreadable ones, are left out)."""
    lines = ledger_lines(path)
    alike = plays_alike(lines, fp)
    return [e for e in lines if e.get("fp") in alike and "game" in e]


def ledger_row(entries: list[dict], fp: str | None = None) -> dict:
    """One table row from a pair's ledger games. Results count every game of code that plays alike; think times
    and memory only the games of the code ``fp`` (default: all), for only they were timed with it."""
    games = len(entries)
    wins = sum(e["won"] for e in entries)
    timed = [e for e in entries if fp is None or e["fp"] == fp]

    def pct(key: str, q: float) -> float | None:
        return _hist_percentile([e[key] for e in timed], q) if timed else None

    return {
        "game": entries[0]["game"], "opponent": entries[0]["opponent"], "games": games, "wins": wins,
        "draws": sum(e["draw"] for e in entries), "win_pct": round(100.0 * wins / games, 1),
        "failures": sum(1 for e in entries for f in e["failures"] if f["side"] in e["bot_seats"]),
        "plies_mean": sum(e["plies"] for e in entries) / games, "timed": len(timed),
        "think_ms_p50": pct("think_ms", 0.5), "think_ms_p99": pct("think_ms", 0.99),
        "cpu_ms_p50": pct("cpu_ms", 0.5), "cpu_ms_p99": pct("cpu_ms", 0.99),
        "peak_rss_mb": max(e["peak_rss_mb"] for e in timed) if timed else None,
    }


def _ms(x: float | None) -> str:
    return f"{x:>7.1f}" if x is not None else f"{'-':>7}"


def print_row(row: dict) -> None:
    print(f"{row['game']:<14} {row['opponent']:<8} {row['games']:>5} {row['win_pct']:>6.1f} {row['draws']:>5} "
          f"{row['failures']:>4} {row['plies_mean']:>6.0f} {row.get('timed', row['games']):>5} "
          f"{_ms(row['think_ms_p50'])} {_ms(row['think_ms_p99'])} {_ms(row['cpu_ms_p50'])} {_ms(row['cpu_ms_p99'])} "
          f"{_ms(row['peak_rss_mb'])}", flush=True)


#: Python's string hash order, fixed: which of two equal guesses the bot meets first can follow it, so a game is
#: replayed move for move only under the same one (with a random one, 3 of 24 games replayed differently).
HASH_SEED = "0"


def main() -> None:
    if os.environ.get("PYTHONHASHSEED") != HASH_SEED:  # this process and its --jobs workers, before any game
        os.environ["PYTHONHASHSEED"] = HASH_SEED
        os.execv(sys.executable, [sys.executable, *sys.argv])
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--games", type=int, default=20, help="games per opponent per game (default 20)")
    ap.add_argument("--game", action="append", help=f"game ids (default: {', '.join(GAMES)})")
    ap.add_argument("--opponent", action="append", help="opponents (default: random, greedy)")
    ap.add_argument("--bot", default="facedown", help="the bot measured (default facedown, its default level)")
    ap.add_argument("--max-plies", type=int, default=2000, help="a game this long is a draw (default 2000)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", metavar="FILE", help="also append each row as a JSON line to FILE")
    ap.add_argument("--ledger", metavar="FILE", type=Path,
                    help="append every finished game to this ledger and count the ledger's games of the current code")
    ap.add_argument("--until", type=int, metavar="N", help="with --ledger: play until it holds N games per pair")
    ap.add_argument("--summary", action="store_true", help="with --ledger: print its figures, play no game")
    ap.add_argument("--as-of", metavar="REV",
                    help="with --same-play: replay FP's games with the code of git revision REV (whose fingerprint "
                         "must be FP) as well as this code, under one string hash order, and compare the two "
                         "(for games the ledger holds without a fixed hash order)")
    ap.add_argument("--same-play", metavar="FP",
                    help="with --ledger: replay --games of the ledger's games of code FP (spread over the pairs) with "
                         "the current code; if every one is played move for move alike, record that the two count "
                         "together (a change that only made the bot faster)")
    ap.add_argument("--jobs", type=int, default=1, metavar="N",
                    help="play N games at once, each in its own process (one per core; use with --cpu-clock)")
    ap.add_argument("--cpu-clock", action="store_true",
                    help="count the bot's time cap, the arena's time limit per move and the think-time columns in "
                         "CPU time of the thinking thread: a loaded or niced run then never cuts a move short or calls "
                         "it late (facedown's levels are work, so load does not weaken it otherwise; in-process bots "
                         "only: a cmd: bot's CPU is another process's)")
    ap.add_argument("--ladder", metavar="LEVELS",
                    help="a self-play ladder of --bot's levels instead (e.g. 1,2,3): each level against the one below "
                         "it, --games a game, and each level's Elo over the lowest (--bot facedown-classic for the "
                         "bot before)")
    args = ap.parse_args()
    if args.cpu_clock:
        from controller.bots.facedown import FaceDownBot

        FaceDownBot.clock = staticmethod(time.thread_time)  # type: ignore[assignment]
    clock = time.thread_time if args.cpu_clock else time.perf_counter
    if (args.until or args.summary or args.same_play) and not args.ledger:
        ap.error("--until, --summary and --same-play need --ledger FILE")
    fp = fingerprint()
    if args.ladder:
        sys.exit(ladder(args, fp))
    if args.same_play:
        sys.exit(same_play(args, fp))
    if args.ledger:
        print(f"ledger {args.ledger}, code fingerprint {fp}", file=sys.stderr)
    print(f"{'game':<14} {'vs':<8} {'games':>5} {'win %':>6} {'draws':>5} {'fail':>4} {'plies':>6} {'timed':>5} "
          f"{'p50 ms':>7} {'p99 ms':>7} {'cpu p50':>7} {'cpu p99':>7} {'RSS MB':>7}")
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    pairs = [(g, o) for g in args.game or GAMES for o in args.opponent or ["random", "greedy"]]
    for g in args.game or GAMES:
        load_game(g)  # a misspelt game is refused before any game is played
    if args.jobs > 1 and not args.summary:
        run_jobs(args, pairs, fp)
        return
    for game, opponent in pairs:
        if args.ledger:
            done = pair_games(args, fp, game, opponent)
            todo = 0 if args.summary else max(0, args.until - len(done)) if args.until else args.games
            if todo:
                seed = max((e["seed"] for e in done), default=args.seed - 1) + 1
                run_pair(game, args.bot, opponent, todo, args.max_plies, seed, clock, args.ledger, fp)
                done = pair_games(args, fp, game, opponent)
            if not done:
                continue
            row = ledger_row(done, fp)
        else:
            row = run_pair(game, args.bot, opponent, args.games, args.max_plies, args.seed, clock)
        print_row(row)
        if args.json:
            with open(args.json, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(row) + "\n")


def elo(wins: int, draws: int, games: int) -> float:
    """The Elo difference a score of ``wins`` and ``draws`` in ``games`` stands for (a clean sweep counted as half a
    game short of it, so that it stays finite)."""
    score = (wins + 0.5 * draws) / games
    score = min(max(score, 0.5 / games), 1 - 0.5 / games)
    return 400.0 * math.log10(score / (1 - score))


def ladder(args: argparse.Namespace, fp: str) -> int:
    """``--ladder 1,2,3``: each level of ``--bot`` against the level below it in every game asked, seats swapped
    every other game, and the Elo each rung stands for, added up from the lowest level. Returns the exit status."""
    base = args.bot.partition(":")[0]
    try:
        levels = [int(x) for x in args.ladder.split(",")]
    except ValueError:
        print(f"--ladder {args.ladder!r}: expected levels such as 1,2,3", file=sys.stderr)
        return 2
    if len(levels) < 2:
        print("--ladder needs two levels or more", file=sys.stderr)
        return 2
    rungs = list(itertools.pairwise(levels))
    tasks = [(g, f"{base}:{hi}", f"{base}:{lo}", args.seed + i)
             for g in args.game or GAMES for lo, hi in rungs for i in range(args.games)]
    played = play_parallel(tasks, max(1, args.jobs), args.max_plies, args.cpu_clock, fp, None)
    print(f"{'game':<14} {'level':>5} {'vs':>3} {'games':>5} {'won':>4} {'drew':>4} {'lost':>4} {'Elo':>6} "
          f"{'ladder':>6} {'cpu p50':>7} {'cpu p99':>7}")
    for g in args.game or GAMES:
        total = 0.0
        for lo, hi in rungs:
            mine = [e for e in played if e["game"] == g and e["bot"] == f"{base}:{hi}" and e["opponent"] == f"{base}:{lo}"]
            if not mine:
                continue
            wins = sum(e["won"] for e in mine)
            draws = sum(e["draw"] for e in mine)
            step = elo(wins, draws, len(mine))
            total += step
            row = {"game": g, "level": hi, "vs": lo, "games": len(mine), "wins": wins, "draws": draws,
                   "losses": len(mine) - wins - draws, "elo": round(step), "ladder_elo": round(total),
                   "cpu_ms_p50": _hist_percentile([e["cpu_ms"] for e in mine], 0.5),
                   "cpu_ms_p99": _hist_percentile([e["cpu_ms"] for e in mine], 0.99), "fp": fp}
            print(f"{g:<14} {hi:>5} {lo:>3} {row['games']:>5} {wins:>4} {draws:>4} {row['losses']:>4} {step:>+6.0f} "
                  f"{total:>+6.0f} {_ms(row['cpu_ms_p50'])} {_ms(row['cpu_ms_p99'])}", flush=True)
            if args.json:
                with open(args.json, "a", encoding="utf-8") as fh:
                    fh.write(json.dumps(row) + "\n")
    return 0


def same_play(args: argparse.Namespace, fp: str) -> int:
    """``--same-play FP``: replay ``--games`` of FP's ledger games with this code and compare each with its line
    (the moves' digest where the line has one; the plies, result and reason always). All alike: a declaration line
    goes into the ledger and FP's games count with this code's (their results, not their think times). Returns the
    exit status."""
    lines = ledger_lines(args.ledger)
    if args.same_play in plays_alike(lines, fp):
        print(f"{args.same_play} already counts with {fp}")
        return 0
    wanted = {(g, o) for g in args.game or GAMES for o in args.opponent or ["random", "greedy"]}
    old = [e for e in lines if e.get("fp") == args.same_play and "game" in e and (e["game"], e["opponent"]) in wanted
           and e["bot"] == args.bot]
    if not old:
        print(f"the ledger holds no games of {args.same_play} for these games and opponents", file=sys.stderr)
        return 2
    if not args.as_of:
        old = [e for e in old if e.get("hash_seed") == HASH_SEED]
        if not old:
            print(f"{args.same_play}'s games were played under a random string hash order: they cannot be replayed "
                  "move for move (--as-of REV replays them with that code too)", file=sys.stderr)
            return 2
    groups: dict[tuple[str, str, int, str], list[dict]] = {}
    for e in old:
        groups.setdefault((e["game"], e["opponent"], e["max_plies"], e["clock"]), []).append(e)
    per_pair = -(-args.games // len(groups))  # each pair's share, its seeds spread evenly over what it played
    spread = {key: [v[len(v) * i // per_pair] for i in range(min(per_pair, len(v)))]
              for key, v in ((k, sorted(g, key=lambda e: e["seed"])) for k, g in sorted(groups.items()))}
    picks = [e for i in range(per_pair) for key in spread if i < len(spread[key]) for e in [spread[key][i]]][:args.games]
    if args.as_of:
        try:
            pairs = replay_as_of(args.as_of, args.same_play, picks, args.jobs)
        except RuntimeError as exc:
            print(exc, file=sys.stderr)
            return 2
        how = f"replayed with {args.as_of} ({args.same_play}) and this code under one string hash order"
    else:
        replays = {}
        for (max_plies, clock), batch in _by_conditions(picks).items():
            tasks = [(e["game"], e["bot"], e["opponent"], e["seed"]) for e in batch]
            for r in play_parallel(tasks, args.jobs, max_plies, clock == "cpu", fp, None):
                replays[(r["game"], r["opponent"], r["seed"], max_plies, clock)] = r
        pairs = [(e, replays[(e["game"], e["opponent"], e["seed"], e["max_plies"], e["clock"])]) for e in picks]
        how = "replayed with this code and compared with the ledger's lines"
    differ = 0
    for e, (ref, r) in zip(picks, pairs, strict=True):
        keys = ["plies", "won", "draw", "reason"] + (["moves"] if ref.get("moves") else [])
        bad = [k for k in keys if r[k] != ref[k]]
        differ += bool(bad)
        print(f"{e['game']:<14} {e['opponent']:<8} seed {e['seed']:>4}: "
              + (f"DIFFERENT ({', '.join(f'{k} {ref[k]} -> {r[k]}' for k in bad)})" if bad else f"alike ({', '.join(keys)})"))
    if differ:
        print(f"{differ} of {len(picks)} games played differently: {fp} is a different bot, its games count apart")
        return 1
    append(args.ledger, {"kind": "same_play", "fp": fp, "same_as": args.same_play, "how": how,
                         "replayed": [[e["game"], e["opponent"], e["seed"]] for e in picks],
                         "at": time.strftime("%Y-%m-%dT%H:%M:%S")})
    print(f"all {len(picks)} games played alike: {args.same_play}'s games now count with {fp}'s")
    return 0


def replay_as_of(rev: str, fp: str, picks: list[dict], jobs: int) -> list[tuple[dict, dict]]:
    """Each picked game played twice by ``replay_one.py``, with REV's code (checked out for the while) and with
    this code, under this process's string hash order: (REV's, this code's) results. Raises RuntimeError if REV
    cannot be checked out or is not the code FP."""
    import subprocess
    import tempfile
    from concurrent.futures import ThreadPoolExecutor

    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "old"
        done = subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q", str(tree), rev],
                              capture_output=True, text=True)
        if done.returncode:
            raise RuntimeError(f"git cannot check out {rev}: {done.stderr.strip()}")
        try:
            if fingerprint(tree) != fp:
                raise RuntimeError(f"{rev} is the code {fingerprint(tree)}, not {fp}: its games are not in question")

            def one(root: Path, e: dict) -> dict:
                cmd = [sys.executable, str(Path(__file__).with_name("replay_one.py")), str(root), e["game"], e["bot"],
                       e["opponent"], str(e["seed"]), str(e["max_plies"]), e["clock"]]
                out = subprocess.run(cmd, capture_output=True, text=True, cwd=root)
                if out.returncode:
                    raise RuntimeError(f"replaying {e['game']} seed {e['seed']} with {root} failed: {out.stderr[-500:]}")
                return json.loads(out.stdout.splitlines()[-1])

            with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
                olds = [pool.submit(one, tree, e) for e in picks]
                news = [pool.submit(one, ROOT, e) for e in picks]
                return [(a.result(), b.result()) for a, b in zip(olds, news, strict=True)]
        finally:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], capture_output=True)


def _by_conditions(entries: list[dict]) -> dict[tuple[int, str], list[dict]]:
    out: dict[tuple[int, str], list[dict]] = {}
    for e in entries:
        out.setdefault((e["max_plies"], e["clock"]), []).append(e)
    return out


def pair_games(args: argparse.Namespace, fp: str, game: str, opponent: str) -> list[dict]:
    """The ledger's games of one pair under this run's conditions (bot, ply cap, clock) and the current code."""
    clock = "cpu" if args.cpu_clock else "wall"
    return [e for e in read_ledger(args.ledger, fp) if e["game"] == game and e["opponent"] == opponent
            and e["bot"] == args.bot and e.get("max_plies") == args.max_plies and e.get("clock") == clock]


def run_jobs(args: argparse.Namespace, pairs: list[tuple[str, str]], fp: str) -> None:
    """``--jobs``: every pair's missing games at once across the processes, then each pair's row."""
    tasks = []
    for game, opponent in pairs:
        done = pair_games(args, fp, game, opponent) if args.ledger else []
        todo = max(0, args.until - len(done)) if args.until else args.games
        first = max((e["seed"] for e in done), default=args.seed - 1) + 1
        tasks += [(game, args.bot, opponent, seed) for seed in range(first, first + todo)]
    played = play_parallel(tasks, args.jobs, args.max_plies, args.cpu_clock, fp, args.ledger)
    for game, opponent in pairs:
        entries = pair_games(args, fp, game, opponent) if args.ledger else [e for e in played if e["game"] == game and e["opponent"] == opponent]
        if not entries:
            continue
        row = ledger_row(entries, fp if args.ledger else None)
        print_row(row)
        if args.json:
            with open(args.json, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
