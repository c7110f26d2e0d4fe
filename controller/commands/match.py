"""`facedown match GAME --red BOT --blue BOT [--games N] [--json]`: bots play each other through the rules engine.

Seats turn every game (two seats: swapped every other game). Prints each bot's wins, draws and losses, failures
(a crash, a time-out, a refused move too many, a wrong deployment: that game is a loss for it, with the reason),
plies per game and think time per move (p50/p99). A progress bar goes to stderr when it is a terminal.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from controller.errors import FaceDownError

if TYPE_CHECKING:
    from controller.bots.arena import GameRecord, Match
    from controller.bots.jail import Jail
    from controller.referee.arena_record import ArenaRecorder
    from controller.referee.journal import Journal

DEFAULT_MAX_PLIES = 3000


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("match", help="let bots play each other: wins, draws, losses, plies, think time")
    p.add_argument("game", help="game id (see `facedown games`)")
    p.add_argument("--seat", action="append", default=[], metavar="SIDE=BOT",
                   help="a bot for a seat, for any game's seats (repeatable); BOT: random, greedy, facedown[:LEVEL], "
                        "an entry point of facedown.bots, or cmd:PROGRAM ARGS")
    p.add_argument("--red", metavar="BOT", help="the bot for red (same as --seat red=BOT)")
    p.add_argument("--blue", metavar="BOT", help="the bot for blue (same as --seat blue=BOT)")
    p.add_argument("--games", type=int, default=2, help="how many games (default 2)")
    p.add_argument("--max-plies", type=int, default=DEFAULT_MAX_PLIES, help=f"draw after this many plies (default {DEFAULT_MAX_PLIES})")
    p.add_argument("--time-ms", type=float, default=10_000.0,
                   help="the most a bot may take for a move, in ms (default 10000; facedown's levels are work, not time: "
                        "they stop sooner)")
    p.add_argument("--red-time-ms", type=float, metavar="MS",
                   help="the budget of the bot given as red (it keeps it when the seats swap); default --time-ms")
    p.add_argument("--blue-time-ms", type=float, metavar="MS",
                   help="the budget of the bot given as blue (it keeps it when the seats swap); default --time-ms")
    p.add_argument("--seat-time-ms", action="append", default=[], metavar="SIDE=MS",
                   help="the budget of the bot given for SIDE, for any game's seats (repeatable)")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="play N games at once, each in a process of its own (results as a run one by one gives)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first game (game i uses seed+i)")
    p.add_argument("--json", action="store_true", help="print the summary and every game as JSON")
    p.add_argument("--journal", nargs="?", const="", metavar="PATH",
                   help="keep every finished game in the game journal (default the referee's, where `facedown record` "
                        "looks), to replay with `facedown record show|export`")
    p.add_argument("--bot-user", metavar="USER",
                   help="run every cmd: engine as this unprivileged user, so that it cannot read the journal "
                        "(see docs/bots.md, 'Outside engines are untrusted')")
    p.add_argument("--bot-memory", type=int, default=None, metavar="MB",
                   help="address-space limit of each cmd: engine in MiB (default 1024; 0: none)")
    p.set_defaults(func=run)


def _seats(args: argparse.Namespace, sides: tuple[str, ...]) -> dict[str, str]:
    chosen: dict[str, str] = {}
    for item in args.seat:
        side, eq, bot = item.partition("=")
        if not eq or not bot:
            raise ValueError(f"--seat {item!r}: expected SIDE=BOT")
        chosen[side] = bot
    for side, bot in (("red", args.red), ("blue", args.blue)):
        if bot:
            chosen[side] = bot
    unknown = [s for s in chosen if s not in sides]
    if unknown:
        raise ValueError(f"{args.game} has no seat {unknown[0]!r}; seats are {', '.join(sides)}")
    missing = [s for s in sides if s not in chosen]
    if missing:
        raise ValueError(f"no bot for {', '.join(missing)}: give --seat SIDE=BOT (or --red/--blue) for every seat")
    return {s: chosen[s] for s in sides}


def _budgets(args: argparse.Namespace, sides: tuple[str, ...]) -> dict[str, float]:
    """Each seat's bot's time budget per move (ms), as given for the first game: --time-ms unless said otherwise."""
    out = {s: float(args.time_ms) for s in sides}
    given: list[tuple[str, str, float | None]] = [("--red-time-ms", "red", args.red_time_ms),
                                                  ("--blue-time-ms", "blue", args.blue_time_ms)]
    for item in args.seat_time_ms:
        side, eq, ms = item.partition("=")
        try:
            given.append(("--seat-time-ms", side, float(ms) if eq else None))
        except ValueError:
            raise ValueError(f"--seat-time-ms {item!r}: expected SIDE=MS, MS a number of milliseconds") from None
        if not eq:
            raise ValueError(f"--seat-time-ms {item!r}: expected SIDE=MS")
    for flag, side, ms in given:
        if ms is None:
            continue
        if side not in sides:
            raise ValueError(f"{flag}: {args.game} has no seat {side!r}; seats are {', '.join(sides)}")
        out[side] = ms
    for side, ms in out.items():
        if not ms > 0:
            raise ValueError(f"the time budget of {side} must be more than 0 ms, not {ms:g}")
    return out


def _bar(done: int, total: int, width: int = 30) -> str:
    filled = width * done // max(1, total)
    return f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} games"


def play_one(game: str, names: dict[str, str], budgets: dict[str, float], seed: int, max_plies: int, jail: Jail,
             journaling: bool) -> tuple[GameRecord, ArenaRecorder | None]:
    """One game of the match (in this process or a worker of ``--jobs``): its record and, to journal it, its
    recorder. The bots are started for the game and ended with it."""
    from controller.bots import find_bot
    from controller.bots.arena import play_game

    recorder = None
    if journaling:
        from controller.referee.arena_record import ArenaRecorder

        recorder = ArenaRecorder()
    bots = {}
    try:
        for side, name in names.items():
            bots[side] = find_bot(name, jail=jail)
        record = play_game(game, bots, names, seed=seed, max_plies=max_plies, time_ms=budgets,
                           watch=recorder.watch if recorder is not None else None)
    finally:
        for bot in bots.values():
            bot.close()
    return record, recorder


def _games(args: argparse.Namespace, match: Match, budgets: dict[str, float], jail: Jail,
           journaling: bool) -> Iterator[tuple[int, GameRecord, ArenaRecorder | None]]:
    """Every game of the match, in order (game index, record, recorder): one by one, or ``--jobs`` at once in
    processes of their own (forked where the system can, so that they hash strings as this process does: the same
    seeds play the same games either way)."""
    def task(i: int) -> tuple[Any, ...]:
        origin = match.origin(i)
        return (args.game, match.rotation(i), {s: budgets[origin[s]] for s in origin}, args.seed + i, args.max_plies,
                jail, journaling)

    if args.jobs <= 1:
        for i in range(args.games):
            yield (i, *play_one(*task(i)))
        return
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    methods = multiprocessing.get_all_start_methods()
    context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
    with ProcessPoolExecutor(max_workers=min(args.jobs, args.games), mp_context=context) as pool:
        futures = [pool.submit(play_one, *task(i)) for i in range(args.games)]
        try:
            for i, future in enumerate(futures):
                yield (i, *future.result())
        finally:
            for future in futures:
                future.cancel()


def run(args: argparse.Namespace) -> int:
    from controller.bots import find_bot
    from controller.bots.arena import Match
    from controller.bots.jail import Jail, memory_limit, same_user_warning
    from controller.rules import load_game

    gdef = load_game(args.game)
    try:
        jail = Jail(user=args.bot_user, memory_mb=memory_limit(args.bot_memory))
        jail.check()
        seats = _seats(args, gdef.sides)
        budgets = _budgets(args, gdef.sides)
        warning = same_user_warning("match", list(seats.values()), args.bot_user)
        if warning:
            print(warning, file=sys.stderr)
        for name in set(seats.values()):
            if not name.startswith("cmd:"):
                find_bot(name).close()  # a bad name fails before any game
    except ValueError as exc:
        print(f"facedown match: {exc}", file=sys.stderr)
        return 2
    if args.games < 1:
        print("facedown match: --games must be at least 1", file=sys.stderr)
        return 2
    if args.jobs < 1:
        print("facedown match: --jobs must be at least 1", file=sys.stderr)
        return 2
    journal = None
    if args.journal is not None:
        from controller.referee.journal import Journal, default_path

        try:
            journal = Journal(args.journal or default_path())
        except (FaceDownError, OSError) as exc:
            print(f"facedown match: cannot keep games in the journal: {exc}", file=sys.stderr)
            return 2
    match = Match(gdef.id, seats)
    journaled: list[int | None] = []
    tty = sys.stderr.isatty()
    try:
        if tty:
            print(_bar(0, args.games), end="", file=sys.stderr, flush=True)
        for i, record, recorder in _games(args, match, budgets, jail, journal is not None):
            match.records.append(record)
            if journal is not None and recorder is not None:
                journaled.append(_journal(journal, recorder, match.rotation(i), record, args.max_plies, i))
            if tty:
                print(_bar(i + 1, args.games), end="", file=sys.stderr, flush=True)
    finally:
        if journal is not None:
            journal.close()
    if tty:
        print(file=sys.stderr)
    summary = match.summary()
    if args.json:
        records = [r.to_json() for r in match.records]
        if journal is not None:
            for rec, gid in zip(records, journaled, strict=True):
                rec["journal_id"] = gid
        print(json.dumps({**summary, "records": records}, indent=1))
        return 0
    print(f"{gdef.name}: {summary['games']} games, plies mean {summary['plies_mean']}, max {summary['plies_max']}")
    for name, row in summary["bots"].items():
        print(f"  {name:<24} won {row['wins']:>3}  drew {row['draws']:>3}  lost {row['losses']:>3}  failures {row['failures']:>2}"
              f"  think p50 {row['think_ms_p50']:.1f} ms  p99 {row['think_ms_p99']:.1f} ms  ({row['moves']} moves)")
    for i, rec in enumerate(match.records):
        for f in rec.failures:
            print(f"  game {i + 1}: {f['side']} ({rec.seats[f['side']]}) {f['why']}: {f['message']}")
    ids = [g for g in journaled if g is not None]
    if ids:
        where = args.journal or "the journal"
        span = f"games {ids[0]}-{ids[-1]}" if ids == list(range(ids[0], ids[-1] + 1)) else "games " + ", ".join(map(str, ids))
        print(f"  journaled as {span if len(ids) > 1 else f'game {ids[0]}'} in {where}: "
              f"`facedown record show ID` replays one")
    return 0


def _journal(journal: Journal, recorder: ArenaRecorder, names: dict[str, str], record: GameRecord, max_plies: int,
             index: int) -> int | None:
    """Write one finished game to the journal; a game that never started, or a journal that refuses the write, is
    said on stderr (the match goes on) and gives None."""
    try:
        return recorder.write(journal, names, record.failures, max_plies)
    except (FaceDownError, ValueError, OSError) as exc:
        print(f"\nfacedown match: game {index + 1} not journaled: {exc}", file=sys.stderr)
        return None
