"""`facedown play`: runs a refereed game on a board (simulated, GPIO reed matrix or serial scanner) with its web page."""

from __future__ import annotations

import argparse
import logging
import sys
import time
from pathlib import Path
from typing import Any

from controller.commands.running import open_web, stop_on_signals
from controller.errors import FaceDownError
from controller.referee.supervisor import FAULT_EXIT

#: Seconds a stopped referee stays up so that pages, buzzer, voice and club feed can say why, before it exits.
FAULT_LINGER_S = 5.0


#: Seconds a computer seat may take for a move at most: the built-in bot's default level takes ~0.1-0.3 s on the CI
#: machine and ~1-3 s on a Pi Zero 2 W; level 5 up to ~30 s there. A bot past this is a time-out the arbiter handles.
BOT_TIME_S = 30.0


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("play", help="referee a game on a board, with the web page")
    p.add_argument("game", nargs="?", default=None, help="game id (default: the profile's game, else stratego)")
    p.add_argument("--board", choices=("sim", "gpio", "serial"), default="sim", help="where board readings come from (default sim)")
    p.add_argument("--profile", help="hardware profile YAML (default: hardware/profiles/GAME.yaml)")
    p.add_argument("--port-path", dest="serial_port", help="serial scanner device (default: find it by USB id)")
    p.add_argument("--tag-map", help="RFID tag map (default: the one `facedown tags enroll` wrote for the game)")
    p.add_argument("--journal", help="SQLite journal file (default: ~/.local/share/facedown/journal.sqlite)")
    p.add_argument("--new", action="store_true", help="start a new game even if the journal has an unfinished one")
    p.add_argument("--resume", action="store_true", help="resume the unfinished game (the default when there is one)")
    p.add_argument("--resume-from-intact", action="store_true",
                   help="the arbiter's choice when the unfinished game's journal is damaged: go on from its last intact "
                        "event (journaled as an arbiter's repair; the damaged events are kept, never replayed)")
    p.add_argument("--setup", action="append", default=[], metavar="SIDE=FILE", help="a side's deployment (YAML/JSON {station: piece})")
    p.add_argument("--option", "-o", action="append", default=[], metavar="NAME=VALUE", help="house-rule option")
    p.add_argument("--seat", action="append", default=[], metavar="SIDE=bot:NAME",
                   help="a computer seat, e.g. blue=bot:facedown or blue=bot:facedown:2 (see docs/bots.md); repeatable")
    p.add_argument("--bot-time", type=float, default=BOT_TIME_S, metavar="SECONDS",
                   help=f"the most a computer seat may take for a move (default {BOT_TIME_S:g}): a built-in bot stops "
                        "sooner, when its level's work is done; an external engine is given this budget")
    p.add_argument("--bot-user", metavar="USER",
                   help="run a cmd: engine of a computer seat as this unprivileged user, so that it cannot read the "
                        "journal (facedown service install creates one; see docs/bots.md)")
    p.add_argument("--bot-memory", type=int, default=None, metavar="MB",
                   help="address-space limit of a computer seat's cmd: engine in MiB (default 1024; 0: none)")
    p.add_argument("--announce", default="console",
                   help="comma-separated announcers: console, buzzer (a passive piezo: pitches), buzzer-plain (an active "
                        "buzzer: rhythm only), lights (the profile's side LEDs), voice-zh, voice-en, none "
                        "(default console)")
    p.add_argument("--qr", choices=("auto", "always", "never"), default="auto",
                   help="QR codes of the human seats' links in the terminal: auto (when stdout is a terminal), "
                        "always, never (default auto)")
    p.add_argument("--lang", default="en", choices=("en", "zh-Hans", "zh-Hant"), help="the console announcer's language (default en)")
    p.add_argument("--demo", action="store_true", help="simulated players lay out and play both sides (sim board only)")
    p.add_argument("--demo-side", action="append", default=[], metavar="SIDE", help="simulated player for this side only")
    p.add_argument("--pace", type=float, default=0.8, help="seconds between demo player actions")
    p.add_argument("--no-web", action="store_true", help="do not serve the web page")
    p.add_argument("--host", default="0.0.0.0", help="web address to listen on (default all interfaces, so phones on the "
                   "table's Wi-Fi can join; 127.0.0.1 keeps the page on this machine)")
    p.add_argument("--port", type=int, default=8080, help="web port (default 8080)")
    p.add_argument("--ready-file", help=argparse.SUPPRESS)
    # benchmarks: stop as soon as ready, so a whole-process timer measures start-up (plus the stop)
    p.add_argument("--exit-when-ready", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--fault-linger", type=float, default=FAULT_LINGER_S, help=argparse.SUPPRESS)
    remote = p.add_argument_group("remote play (one seat of a game `facedown host` referees; see docs/remote.md)")
    remote.add_argument("--remote", metavar="URL", help="the host's broker, mqtt://HOST[:PORT] or mqtts://HOST[:PORT] "
                        "(with --seat SIDE and --join CODE; --club-ca for TLS)")
    remote.add_argument("--join", metavar="CODE", help="this seat's join code, as `facedown host` printed it")
    club = p.add_argument_group("club play (a club dashboard over MQTT, game clocks)")
    club.add_argument("--club", metavar="URL", help="publish this table to the club broker, mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
    club.add_argument("--table", metavar="NAME", help="this table's name on the club dashboard (letters, digits, - and _)")
    club.add_argument("--club-user", metavar="USER", help="broker user name; the password comes from --club-password-file or $FACEDOWN_CLUB_PASSWORD")
    club.add_argument("--club-password-file", metavar="FILE", help="file whose first line is the broker password")
    club.add_argument("--club-ca", metavar="FILE", help="CA certificate that signed the broker's TLS certificate (mqtts://)")
    club.add_argument("--player", action="append", default=[], metavar="SIDE=NAME", help="a player's name, for the dashboard and standings")
    club.add_argument("--clock", metavar="CONTROL", help="game clock: MINUTES+INCREMENT (e.g. 15+10), 90s+5, or move:SECONDS (e.g. move:60)")
    club.add_argument("--flag-rule", choices=("loses", "draw"), default="loses", help="when a side's time runs out: it loses (default) or the game is drawn")
    p.set_defaults(func=run)


def club_options(args: argparse.Namespace) -> tuple[Any, Any, dict[str, str]]:
    """The broker, time control and player names the command line asks for, each checked with a clear message."""
    players: dict[str, str] = {}
    for item in getattr(args, "player", []) or []:
        side, sep, name = item.partition("=")
        if not sep or not side.strip() or not name.strip():
            raise SystemExit(f"facedown play: --player {item!r}: expected SIDE=NAME, e.g. red=Alice")
        players[side.strip()] = name.strip()[:60]
    if not any(getattr(args, name, None) for name in ("club", "table", "club_user", "clock")):
        return None, None, players  # no club play: its modules stay unimported (start-up CPU on a Pi Zero)
    from controller.club.broker import ClubError, check_table_name, parse_broker
    from controller.club.clock import parse_time_control

    try:
        broker = None
        if getattr(args, "club", None):
            if not args.table:
                raise ClubError("--club needs --table NAME, the table's name on the dashboard")
            check_table_name(args.table)
            broker = parse_broker(args.club, username=args.club_user, password_file=args.club_password_file, ca_file=args.club_ca)
        elif getattr(args, "table", None) or getattr(args, "club_user", None):
            raise ClubError("--table and --club-user only mean something with --club mqtt://HOST")
        control = parse_time_control(args.clock) if getattr(args, "clock", None) else None
    except FaceDownError as exc:
        raise SystemExit(f"facedown play: {exc}") from None
    return broker, control, players


def setup_differences(journaled: dict[str, str], given: dict[str, str]) -> list[str]:
    """Where a deployment file differs from the journaled deployment of the same side, one line per station."""
    out = []
    for station in sorted(set(journaled) | set(given)):
        a, b = journaled.get(station), given.get(station)
        if a != b:
            out.append(f"{station}: journaled {a or 'empty'}, file says {b or 'empty'}")
    return out


def read_setup_file(path: str) -> dict[str, str]:
    """A deployment file: a YAML or JSON mapping {station: piece id}."""
    import yaml

    from controller.docreader import DocumentProblem, load_yaml
    from controller.rules.errors import RulesError
    from controller.textfiles import InputFileError, read_text

    try:
        data = load_yaml(read_text(path, "deployment file"))
    except InputFileError as exc:
        raise RulesError(str(exc)) from None
    except DocumentProblem as exc:
        raise RulesError(f"{path}: {exc.where}: expected {exc.expected}") from None
    except yaml.YAMLError as exc:
        raise RulesError(f"{path}: not valid YAML/JSON ({exc})") from None
    if isinstance(data, dict) and "pieces" in data and isinstance(data["pieces"], dict):
        data = data["pieces"]
    if not isinstance(data, dict) or not all(isinstance(k, str | int) and isinstance(v, str) for k, v in data.items()):
        raise RulesError(f"{path}: expected a mapping of station to piece id, e.g. 'a1: flag'")
    return {str(k): v for k, v in data.items()}


#: The exit status when the journal's unfinished game is damaged: not restarted by the service (it would only fail
#: the same way again) until the arbiter has chosen (controller/hardware/service.py: RestartPreventExitStatus).
DAMAGED_EXIT = 4


def damaged_journal_advice(exc: Any) -> str:
    """What the arbiter reads when the unfinished game's journal is damaged: which event, and the two ways on."""
    lines = [f"facedown play: {exc}", "  The game is not resumed: a damaged event is never replayed."]
    if exc.repairable:
        last = exc.intact[-1]
        moves = sum(1 for e in exc.intact if e.kind == "move")
        lines += [f"  It is intact up to event {last.seq} ({moves} move(s) journaled before the damage). The arbiter may:",
                  "    go on from there:   facedown play --resume-from-intact [same options]   (or: facedown record "
                  f"repair {exc.game_id}); the repair is journaled as an arbiter action",
                  "    or stop: leave the journal as it is (`facedown record verify` shows the damage) and start "
                  "another game with --new"]
    else:
        lines.append("  Its start is damaged, so it cannot go on: start another game with --new "
                     "(the damaged game stays in the journal)")
    return "\n".join(lines)


def make_board(kind: str, game_id: str, profile: Any, serial_port: str | None) -> Any:
    """The sensing backend named on the command line."""
    stations = profile.stations if profile is not None else None
    if kind == "sim":
        from controller.rules import load_game
        from controller.sensing.sim import SimBoard

        return SimBoard(stations or load_game(game_id).station_ids, settle_ms=getattr(profile, "settle_ms", 30) or 30)
    if profile is None:
        raise SystemExit(f"facedown play: --board {kind} needs a hardware profile (--profile FILE or hardware/profiles/{game_id}.yaml)")
    if kind == "gpio":
        from controller.sensing.gpio_matrix import GpioMatrixBoard

        return GpioMatrixBoard(profile)
    from controller.sensing.serial_link import SerialScannerBoard

    sc = profile.scanner
    if sc is None:
        raise SystemExit(f"facedown play: {profile.file} has no scanner section: use --board gpio, or a scanner profile for --board serial")
    board = SerialScannerBoard(profile.stations, profile.channels, port=serial_port or sc.port, vid=sc.usb_vid, pid=sc.usb_pid)
    if getattr(profile, "sensing", "reed") == "checkin":
        from controller.referee.checkin import CheckInBoard

        return CheckInBoard(board)  # pad taps bound to the station each tapped piece is put on
    return board


def board_refusal(kind: str, profile: Any) -> str | None:
    """Why ``--board kind`` cannot read this profile, or None. A check-in pad is read by the Pico scanner, whose TAP
    lines only the serial backend parses."""
    if getattr(profile, "sensing", "reed") == "checkin" and kind != "serial":
        return (f"facedown play: {profile.file} is a check-in pad profile (sensing: checkin): its pad is read by the "
                f"Pico scanner, so it needs --board serial, not --board {kind}")
    if kind == "gpio" and getattr(profile, "scanner", None) is not None:
        return f"facedown play: {profile.file} is wired for a Pico scanner over USB: use --board serial, not --board gpio"
    return None


def run(args: argparse.Namespace) -> int:
    from controller.commands.rules import parse_options
    from controller.referee.table import open_table

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    profile = None
    if args.profile or args.board != "sim":
        from controller.sensing.profile import default_profile, find_profile

        profile = find_profile(args.profile) if args.profile else default_profile(args.game or "stratego")
    game_id = args.game or (profile.game if profile is not None else "stratego")
    options = parse_options(args.option)
    broker, control, players = club_options(args)
    sensing = getattr(profile, "sensing", "reed")
    refusal = board_refusal(args.board, profile) if profile is not None else None
    if refusal:
        print(refusal, file=sys.stderr)
        return 2
    board = make_board(args.board, game_id, profile, args.serial_port)
    if args.remote or args.join:
        if not args.remote:
            raise SystemExit("facedown play: --join needs --remote URL, the host's broker")
        from controller.commands.join import run_remote

        return run_remote(args, game_id, profile, board, read_setup_file)
    # rfid/hybrid boards check every piece's tag on every move; with a check-in pad the tags are only bound at setup
    # (the reeds track occupancy from then on), so the session reads the setups off the tags but never checks them
    use_tags = sensing in ("rfid", "hybrid")
    tag_pieces = None
    if use_tags or sensing == "checkin":
        from controller.sensing.tagmap import TagMap

        try:
            tagmap = TagMap.load(game_id, Path(args.tag_map) if args.tag_map else None)
        except ValueError as exc:
            raise SystemExit(f"facedown play: {exc}") from None
        if not tagmap.entries:
            how = f"facedown tags enroll {game_id}" + (f" --profile {args.profile}" if sensing == "checkin" and args.profile else "")
            raise SystemExit(f"facedown play: no RFID tags enrolled for {game_id} ({tagmap.path}): run `{how}` first")
        tag_pieces = {uid: (e.side, e.piece) for uid, e in tagmap.entries.items()}
    chosen = chosen_computers(game_id, args.seat, args.bot_user)  # before the table: a computer seat gets no token
    from controller.referee.journal import ChainError, JournalError

    try:
        table = open_table(game_id, board=board, board_kind=args.board, journal_path=args.journal, options=options,
                           resume=not args.new, profile=profile, use_tags=use_tags, tag_pieces=tag_pieces, seats=players,
                           computers=chosen, repair=getattr(args, "resume_from_intact", False))
    except ChainError as exc:
        print(damaged_journal_advice(exc), file=sys.stderr)
        return DAMAGED_EXIT
    except JournalError as exc:
        if "the journal is corrupt" not in str(exc):
            raise
        print(f"facedown play: {exc}\n  SQLite's own structure of the file is damaged, so no game in it can be trusted "
              "or resumed: restore the journal from a backup, or play on a fresh one (--journal NEW_PATH) and keep this "
              "file for `facedown record verify`", file=sys.stderr)
        return DAMAGED_EXIT
    unknown = sorted(set(players) - set(table.game.sides))
    if unknown:
        raise SystemExit(f"facedown play: --player names unknown side(s) {', '.join(unknown)}; sides are {', '.join(table.game.sides)}")
    if control is not None:
        from controller.club.keeper import ClockKeeper, journaled_clock

        # a resumed game's clocks go on from the journal's last reading
        table.clock = ClockKeeper(table.session, control, flag_rule=args.flag_rule, readings=journaled_clock(table))
    names = [n.strip() for n in args.announce.split(",") if n.strip() and n.strip() != "none"]
    if names:
        from controller.announce import make_announcers

        pin = profile.pins.buzzer if profile is not None and profile.pins.buzzer is not None else None
        leds = dict(profile.pins.leds) if profile is not None else {}
        side_leds = {side: leds[side] for side in table.game.sides if side in leds}
        if "lights" in names and not side_leds:
            raise SystemExit("facedown play: --announce lights needs the hardware profile's pins.leds to name an LED "
                             f"per side ({', '.join(f'{s}: PIN' for s in table.game.sides)})")
        for a in make_announcers(names, table.game, pin=pin, lang=args.lang, lights=side_leds or None,
                                 alert=leds.get("alert")):
            table.add_announcer(a)
    supervisor = table.supervise()  # from here on a failed journal write is a visible fault
    for item in args.setup:
        side, sep, path = item.partition("=")
        if not sep:
            raise SystemExit(f"facedown play: --setup {item!r}: expected SIDE=FILE")
        placement = read_setup_file(path)
        journaled = table.state.deployments.get(side)
        if journaled is not None:  # a restart with the same command line: the journal already has it
            differences = setup_differences(journaled, placement)
            if not differences:
                continue
            print(f"facedown play: {path}: {side}'s deployment differs from the one journaled for game {table.game_id}:",
                  file=sys.stderr)
            for line in differences:
                print(f"  {line}", file=sys.stderr)
            print("  (leave out --setup to resume the journaled game, or start another with --new)", file=sys.stderr)
            return 2
        problems = table.session.register_setup(side, placement)
        if problems:
            print(f"facedown play: {path}: deployment for {side} rejected:", file=sys.stderr)
            for p in problems:
                print(f"  {p}", file=sys.stderr)
            return 2
    if args.setup and args.board == "sim":
        for station in table.session.expected_board():
            board.place(station)
    from controller.lights import station_lights

    lights = station_lights(table.session, profile, board)  # before the computer seats: it follows their instructions
    computers = computer_seats(table, args.seat, args.bot_time, bot_user=args.bot_user,
                               bot_memory=args.bot_memory)
    demo = None
    if args.demo or args.demo_side:
        from controller.referee.demo import DemoPlayers

        demo = DemoPlayers(table, pace_s=args.pace, sides=tuple(args.demo_side) or None)
    st = table.state
    print(f"FaceDown referee: {table.game.name} ({table.game.zh}), game {table.game_id}, {st.phase}"
          + (f" at ply {st.ply}" if st.ply else "") + f", board {args.board}")
    table.start()
    if demo is not None:
        demo.start()
    stop = stop_on_signals()
    server = None
    bus = None
    try:
        if not args.no_web:
            server = open_web(table, args.host, args.port)
            if server is None:
                return 2
            server.print_links(sys.stdout, qr=None if args.qr == "auto" else args.qr == "always")  # the port listens already; waitress takes it once the referee is ready
        if broker is not None:
            from controller.club.bus import TableBus

            bus = TableBus(table, broker, args.table, players=players, clock=table.clock,
                           web=server.base_url() + "/" if server is not None else None)
            bus.start()
            print(f"Publishing table {args.table} to the club broker {broker.url()}", flush=True)
        if args.ready_file:  # for tests and benchmarks: when the referee got ready, and its CPU seconds until then
            Path(args.ready_file).write_text(f"ready cpu={time.process_time():.4f}\n")
        if args.exit_when_ready:
            return 0
        from controller.referee import tuning

        tuning.for_low_latency()
        if server is not None:
            server.start()  # waitress (imported only now) serves what waited in the port's backlog
            server.warm_up()  # the web page's Flask app, built now that the referee is ready
        while not stop.wait(1.0):  # once a second: an idle referee wakes as little as it can (Pi budget)
            if supervisor.failed.is_set():
                # let the pages, the buzzer, the voice and the club feed tell the players, then exit for a restart
                time.sleep(args.fault_linger)
                return FAULT_EXIT
            if demo is not None and table.state.phase == "over" and not args.no_web:
                continue
            if demo is not None and table.state.phase == "over" and args.no_web:
                stop.wait(1.0)
                break
    finally:
        if demo is not None:
            demo.stop()
        if server is not None:
            server.stop()
        if bus is not None:
            bus.stop()
        for seat in computers:
            seat.close()
        if lights is not None:
            lights.close()
        table.stop()
    return 0


def chosen_computers(game_id: str, items: list[str], bot_user: str | None = None) -> dict[str, str]:
    """The --seat SIDE=bot:NAME items as {side: bot name}, checked (and --bot-user with them) before the table opens."""
    if not items:
        return {}  # no computer seat: the bots' modules stay unimported (start-up CPU)
    from controller.bots.jail import Jail, same_user_warning
    from controller.commands.script import parse_seats
    from controller.rules import load_game

    try:
        chosen = parse_seats(items, load_game(game_id).sides)
        Jail(user=bot_user).check()
    except ValueError as exc:  # a ScriptError, or a user engines cannot run as
        raise SystemExit(f"facedown play: {exc}") from None
    warning = same_user_warning("play", list(chosen.values()), bot_user)
    if warning:
        print(warning, file=sys.stderr)
    return chosen


def computer_seats(table: Any, items: list[str], bot_time_s: float = BOT_TIME_S, *, bot_user: str | None = None,
                   bot_memory: int | None = None) -> list[Any]:
    """The --seat SIDE=bot:NAME computer seats, each bound to the table's session (its deployment registered now).
    A computer seat has no seat link: the table was opened without its token (``open_table(computers=...)``); a
    table opened with one loses it here, before any link is printed or served."""
    if not bot_time_s > 0:
        raise SystemExit(f"facedown play: --bot-time must be a number of seconds above 0, not {bot_time_s:g}")
    if not items:
        return []  # no computer seat: the bots' modules stay unimported (start-up CPU)
    from controller.bots import find_bot
    from controller.bots.jail import Jail, memory_limit
    from controller.commands.script import parse_seats
    from controller.referee.computer_seat import ComputerSeat

    try:
        chosen = parse_seats(items, table.game.sides)
        jail = Jail(user=bot_user, memory_mb=memory_limit(bot_memory))
        jail.check()
        for side, name in chosen.items():
            table.tokens.pop(side, None)
            table.computers.setdefault(side, name)
        bots = {side: find_bot(name, jail=jail) for side, name in chosen.items()}
    except ValueError as exc:  # a ScriptError, or a bot find_bot does not know
        raise SystemExit(f"facedown play: {exc}") from None
    return [ComputerSeat(table.session, side, bot, name=chosen[side], time_ms=bot_time_s * 1000.0)
            for side, bot in bots.items()]
