"""`facedown script GAME FILE`: feeds JSON-line sensor events through a simulated board, the recognizer and the session,
and prints every published event as a JSON line (the stable contract users debug boards with)."""

from __future__ import annotations

import argparse
import io
import json
import sys
from typing import Any, TextIO

from controller.textfiles import InputFileError, decode, parse_json, read_text


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("script", help="run a scripted physical game on the simulated board, events as JSON lines")
    p.add_argument("game", help="game id or game file")
    p.add_argument("file", help="JSON-lines input ('-' for standard input)")
    p.add_argument("--option", "-o", action="append", default=[], metavar="NAME=VALUE", help="house-rule option")
    p.add_argument("--settle-ms", type=int, default=None, help="debounce settle time (default: the game's default profile, else 30)")
    p.add_argument("--all", action="store_true", help="also print board, fixup and notice events")
    p.add_argument("--journal", metavar="PATH", help="also record the game in this journal (with its game file), "
                   "for `facedown record show`")
    p.set_defaults(func=run)


class ScriptError(ValueError):
    """A line of a script file is not one of the documented forms."""


CORE_EVENTS = {"move", "attack", "illegal", "mismatch", "fixup_done", "game_over", "setup", "start", "turn"}


def run_script(game: str, lines: Any, out: TextIO, *, options: dict | None = None, settle_ms: int = 30, everything: bool = False,
               journal: Any = None) -> int:
    """Run the script ``lines`` (an iterable of text lines); write events to ``out``. Returns the number of events.
    With ``journal`` (an open Journal) the game is recorded there as a game on the ``sim`` board, game file and all."""
    from controller.referee.gamefile import keep
    from controller.referee.session import Session
    from controller.rules import new_game
    from controller.sensing.sim import SimBoard

    state = new_game(game, options)
    board = SimBoard(state.game.station_ids, settle_ms=settle_ms, clock=lambda: 0.0)
    game_id = None
    if journal is not None:
        game_id = journal.new_game(state.game.id, dict(state.options), board="sim")
        keep(journal, game_id, state.game)
    session = Session(state, journal=journal, game_id=game_id)
    count = 0

    def emit(ev: Any) -> None:
        nonlocal count
        if everything or ev.public["event"] in CORE_EVENTS:
            out.write(json.dumps(ev.public, ensure_ascii=False, sort_keys=True) + "\n")
            count += 1

    session.subscribe(emit)
    now = 0

    def deliver(snap: Any) -> None:
        if snap is not None:
            session.on_snapshot(snap)

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
            elif "tick_ms" in item:
                step = item["tick_ms"]
                if not isinstance(step, int) or step < 0:
                    raise ScriptError(f"line {lineno}: tick_ms must be a whole number of ms >= 0")
                now += step
                deliver(board.tick(now))
            else:
                raise ScriptError(f"line {lineno}: expected one of setup, lift, place, tick_ms; got keys {sorted(item)}")
        except KeyError as exc:
            raise ScriptError(f"line {lineno}: {exc.args[0]}") from None
    # let anything still bouncing settle
    now += 10 * settle_ms + 1000
    deliver(board.tick(now))
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
            lines: Any = io.StringIO(decode(sys.stdin.buffer.read(), "<stdin>", "script"))
        else:
            lines = io.StringIO(read_text(args.file, "script"))
        run_script(args.game, lines, sys.stdout, options=parse_options(args.option), settle_ms=settle, everything=args.all,
                   journal=journal)
    except InputFileError as exc:
        print(f"facedown script: {exc}", file=sys.stderr)
        return 2
    except ScriptError as exc:
        print(f"facedown script: {args.file}: {exc}", file=sys.stderr)
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
