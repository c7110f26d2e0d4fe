"""`facedown script GAME FILE`: feeds JSON-line sensor events through a simulated board, the recognizer and the session,
and prints every published event as a JSON line (the stable contract users debug boards with)."""

from __future__ import annotations

import argparse
import io
import json
import sys
from collections.abc import Iterator
from typing import Any, BinaryIO, TextIO

from controller.errors import FaceDownError
from controller.textfiles import InputFileError, bounded_lines, parse_json, read_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("script", help="run a scripted physical game on the simulated board, events as JSON lines")
    p.add_argument("game", help="game id or game file")
    p.add_argument("file", help="JSON-lines input ('-' for standard input)")
    p.add_argument("--option", "-o", action="append", default=[], metavar="NAME=VALUE", help="house-rule option")
    p.add_argument("--settle-ms", type=int, default=None, help="debounce settle time (default: the game's default profile, else 30)")
    p.add_argument("--all", action="store_true", help="also print board, fixup and notice events")
    p.add_argument("--journal", metavar="PATH", help="also record the game in this journal (with its game file), "
                   "for `facedown record show`")
    p.add_argument("--seat", action="append", default=[], metavar="SIDE=bot:NAME",
                   help="a computer seat: the bot plays SIDE and the script carries out its moves (bot_setup, bot_move lines)")
    p.add_argument("--seed", type=int, default=None, help="seed for computer seats")
    p.set_defaults(func=run)


class ScriptError(FaceDownError, ValueError):
    """A line of a script file is not one of the documented forms."""


#: Longest line `facedown script -` reads from standard input (a setup of the largest board is a few kilobytes).
MAX_LINE_BYTES = 64 * 1024

CORE_EVENTS = {"move", "attack", "illegal", "mismatch", "fixup_done", "game_over", "setup", "start", "turn", "bot"}


def parse_seats(items: list[str], sides: tuple[str, ...]) -> dict[str, str]:
    """``SIDE=bot:NAME`` items as {side: bot name}; ScriptError says what is wrong."""
    out = {}
    for item in items:
        side, eq, who = item.partition("=")
        if not eq or not who.startswith("bot:") or len(who) == 4:
            raise ScriptError(f"--seat {item!r}: expected SIDE=bot:NAME, e.g. blue=bot:facedown")
        if side not in sides:
            raise ScriptError(f"--seat {item!r}: no seat {side!r}; seats are {', '.join(sides)}")
        out[side] = who[4:]
    return out


def stream_lines(stream: BinaryIO, where: str = "<stdin>", limit: int = MAX_LINE_BYTES) -> Iterator[str]:
    """The lines of ``stream`` as text, each read and decoded as it arrives (a tool driving the script line by line
    gets each answer before it writes the next line). InputFileError names the line of a byte that is not UTF-8
    and of a line longer than ``limit`` bytes (``textfiles.bounded_lines``)."""
    for _lineno, text in bounded_lines(stream, where, "script", limit):
        yield text


def run_script(game: str, lines: Any, out: TextIO, *, options: dict | None = None, settle_ms: int = 30, everything: bool = False,
               journal: Any = None, seats: dict[str, Any] | None = None, seed: int | None = None, on_session: Any = None) -> int:
    """Run the script ``lines`` (an iterable of text lines); write events to ``out``. Returns the number of events.
    With ``journal`` (an open Journal) the game is recorded there as a game on the ``sim`` board, game file and all.
    ``seats``: computer seats {side: bot name or Bot}; ``on_session`` is called with the session, its simulated board
    and the computer seats before the first line (a test's scripted player may read its own seat's view from it)."""
    from controller.bots import Bot, find_bot
    from controller.referee.computer_seat import ComputerSeat
    from controller.referee.gamefile import file_of
    from controller.referee.session import Session
    from controller.rules import new_game
    from controller.sensing.sim import SimBoard

    state = new_game(game, options)
    board = SimBoard(state.game.station_ids, settle_ms=settle_ms, clock=lambda: 0.0)
    game_id = None
    if journal is not None:
        game_id = journal.new_game(state.game.id, dict(state.options), board="sim", game_file=file_of(state.game))
    session = Session(state, journal=journal, game_id=game_id)
    count = 0
    computers: dict[str, ComputerSeat] = {}

    def emit(ev: Any) -> None:
        nonlocal count
        if everything or ev.public["event"] in CORE_EVENTS:
            out.write(json.dumps(ev.public, ensure_ascii=False, sort_keys=True) + "\n")
            out.flush()  # a tool reading the events as they come sees each one now, not when a buffer fills
            count += 1

    session.subscribe(emit)
    now = 0

    def deliver(snap: Any) -> None:
        if snap is not None:
            session.on_snapshot(snap)

    def settle() -> None:
        nonlocal now
        now += 2 * settle_ms + 1
        deliver(board.tick(now))

    def hands(lift: list[str], place: list[str]) -> None:
        """A player's hands: lift these stations, then put pieces on those, each change left to settle."""
        for s in lift:
            deliver(board.lift(s, now))
            settle()
        for s in place:
            deliver(board.place(s, now))
            settle()

    for side, who in (seats or {}).items():
        try:
            bot = who if isinstance(who, Bot) else find_bot(who)
        except ValueError as exc:
            raise ScriptError(f"--seat {side}=bot:{who}: {exc}") from None
        computers[side] = ComputerSeat(session, side, bot, name=bot.name if isinstance(who, Bot) else who, seed=seed)
    if on_session is not None:
        on_session(session, board, computers)

    for lineno, raw in enumerate(lines, 1):
        text = raw.strip()
        if not text or text.startswith("#"):
            continue
        try:
            item = parse_json(text, f"line {lineno}")
        except InputFileError as exc:
            raise ScriptError(str(exc)) from None
        if not isinstance(item, dict):
            raise ScriptError(f"line {lineno}: expected a JSON object, got {type(item).__name__}")
        try:
            if "setup" in item:
                side, pieces = item["setup"], item.get("pieces")
                if not isinstance(pieces, dict):
                    raise ScriptError(f"line {lineno}: 'pieces' must map stations to piece ids")
                problems = session.register_setup(side, pieces)
                if problems:
                    raise ScriptError(f"line {lineno}: setup for {side} rejected: " + "; ".join(map(str, problems)))
                for station in pieces:
                    deliver(board.place(station, now))
            elif "lift" in item:
                deliver(board.lift(str(item["lift"]), now))
            elif "place" in item:
                tag = item.get("tag")
                deliver(board.place(str(item["place"]), now, tag=None if tag is None else str(tag)))
            elif "bot_setup" in item:
                seat = computers.get(str(item["bot_setup"]))
                if seat is None:
                    raise ScriptError(f"line {lineno}: {item['bot_setup']!r} is not a computer seat (--seat SIDE=bot:NAME)")
                hands([], [s for s in state.deployments.get(seat.seat, {}) if s not in board.raw_occupied()])
            elif "bot_move" in item:
                seat = computers.get(str(item["bot_move"]))
                if seat is None:
                    raise ScriptError(f"line {lineno}: {item['bot_move']!r} is not a computer seat (--seat SIDE=bot:NAME)")
                if seat.instruction is None:
                    raise ScriptError(f"line {lineno}: the referee has given no move for {seat.seat} to carry out")
                frm, to = seat.instruction
                to = str(item.get("to", to))  # "to": carry it out wrongly, as a player might
                hands([frm, to] if to in board.raw_occupied() else [frm], [to])
            elif "fixup" in item:
                fx = session.recognizer.fixup_target()
                if fx is not None:
                    target, lift_first = fx
                    occupied = board.raw_occupied()
                    hands(sorted(set(lift_first) | {s for s in occupied if s not in target}),
                          sorted(s for s in target if s not in occupied or s in lift_first))
            elif "view" in item:
                # the referee's read model for a role, as its page receives it: what it sees and what is pending
                role = str(item["view"])
                if role not in (*state.game.sides, "spectator", "arbiter"):
                    raise ScriptError(f"line {lineno}: no role {role!r}; roles are "
                                      f"{', '.join((*state.game.sides, 'spectator', 'arbiter'))}")
                out.write(json.dumps({"view": role, "state": session.view(role).to_json()}, ensure_ascii=False,
                                     sort_keys=True) + "\n")
                out.flush()
            elif "tick_ms" in item:
                step = item["tick_ms"]
                if not isinstance(step, int) or step < 0:
                    raise ScriptError(f"line {lineno}: tick_ms must be a whole number of ms >= 0")
                now += step
                deliver(board.tick(now))
            else:
                raise ScriptError(f"line {lineno}: expected one of setup, lift, place, tick_ms, bot_setup, bot_move, fixup, view; "
                                  f"got keys {sorted(item)}")
        except KeyError as exc:
            raise ScriptError(f"line {lineno}: {exc.args[0]}") from None
    # let anything still bouncing settle
    now += 10 * settle_ms + 1000
    deliver(board.tick(now))
    for seat in computers.values():
        seat.close()
    return count


def run(args: argparse.Namespace) -> int:
    from controller.commands.rules import parse_options
    from controller.sensing.profile import ProfileError

    try:
        settle = args.settle_ms if args.settle_ms is not None else _default_settle(args.game)
    except ProfileError as exc:
        print(f"facedown script: {exc}", file=sys.stderr)
        return 2
    journal = None
    if args.journal:
        from controller.referee.journal import Journal, JournalError

        try:
            journal = Journal(args.journal)
        except JournalError as exc:
            print(f"facedown script: {exc}", file=sys.stderr)
            return 2
    try:
        if args.file == "-":
            if sys.stdin is None:  # started with standard input closed
                raise InputFileError("<stdin>: standard input is closed (give the script a FILE, or pipe it in)")
            lines: Any = stream_lines(sys.stdin.buffer)
        else:
            lines = io.StringIO(read_text(args.file, "script"))
        from controller.rules import load_game

        seats = parse_seats(args.seat, load_game(args.game).sides)
        run_script(args.game, lines, sys.stdout, options=parse_options(args.option), settle_ms=settle, everything=args.all,
                   journal=journal, seats=seats, seed=args.seed)
    except InputFileError as exc:
        print(f"facedown script: {exc}", file=sys.stderr)
        return 2
    except ScriptError as exc:
        print(f"facedown script: {'<stdin>' if args.file == '-' else args.file}: {exc}", file=sys.stderr)
        return 2
    finally:
        if journal is not None:
            journal.close()
    return 0


def _default_settle(game: str) -> int:
    """The settle time of the game's shipped hardware profile; 30 ms for a game that has none (a game needs no
    profile to be played). A profile that exists but cannot be read is an error, not a silent default."""
    from controller.rules import load_game
    from controller.sensing.profile import default_profile, profiles_dir

    gid = load_game(game).id
    if not (profiles_dir() / f"{gid}.yaml").exists():
        return 30
    return int(default_profile(gid).settle_ms)
