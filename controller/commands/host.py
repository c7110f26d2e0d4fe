"""`facedown host`: referee a remote game (every seat a board or a phone elsewhere) through an MQTT broker, and
print each seat's join code."""

from __future__ import annotations

import argparse
import logging
import sys
from typing import Any

from controller.commands.running import stop_on_signals, wait_for_stop


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("host", help="referee a remote game: each seat plays on its own board or phone, through a broker")
    p.add_argument("game", nargs="?", help="game id (stratego, luzhanqi...); not with --league")
    p.add_argument("--broker", required=True, metavar="URL", help="where the seats meet: mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
    p.add_argument("--broker-ca", metavar="FILE", help="CA certificate that signed the broker's TLS certificate (mqtts://)")
    p.add_argument("--game-id", metavar="ID", help="the game's name in topics and join codes (default GAME-NUMBER)")
    p.add_argument("--journal", help="SQLite journal file (default: ~/.local/share/facedown/journal.sqlite)")
    p.add_argument("--new", action="store_true", help="start a new game even if the journal has an unfinished one")
    p.add_argument("--option", "-o", action="append", default=[], metavar="NAME=VALUE", help="house-rule option")
    p.add_argument("--broker-files", metavar="DIR", help="write this game's Mosquitto password file and ACL into DIR")
    p.add_argument("--clock", metavar="CONTROL", help="game clock, run by the host: MINUTES+INCREMENT (e.g. 15+10), "
                   "90s+5, or move:SECONDS; it starts once every board is laid out")
    p.add_argument("--flag-rule", choices=("loses", "draw"), default="loses",
                   help="when a side's time runs out: it loses (default) or the game is drawn")
    p.add_argument("--away-rule", choices=("pause", "run"), default="pause",
                   help="while a side's board has lost its link: every clock stops (default) or they run on")
    p.add_argument("--phone", action="append", default=[], metavar="SEAT",
                   help="SEAT plays from its phone alone: this process keeps its simulated board and serves its seat "
                   "page (the link and its QR code are printed; repeat for more seats)")
    p.add_argument("--web-host", default="0.0.0.0", help="address the phone seats' pages listen on (default all)")
    p.add_argument("--web-port", type=int, default=8080, help="port of the first phone seat's page (the next one +1...)")
    p.add_argument("--qr", action="store_true", help="print the QR codes even when the output is not a terminal")
    league = p.add_argument_group("a league on several hosts (MQTT shared subscriptions; see docs/remote.md)")
    league.add_argument("--league", metavar="DIR", help="be one of the league's hosts: take the games the organizer "
                        "asks for (the broker hands each to one host), their journals in DIR")
    league.add_argument("--ask-league", action="store_true", help="the organizer: ask the league's hosts for GAME "
                        "--game-id ID and print its join codes (nothing is hosted here)")
    league.add_argument("--league-key", metavar="FILE", help="the league's key, shared by the organizer and every "
                        "host (--ask-league makes it if it is missing: copy it to each host)")
    league.add_argument("--share", default="facedown-hosts", metavar="GROUP", help="the hosts' shared subscription group")
    p.add_argument("--ready-file", help=argparse.SUPPRESS)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controller.club.broker import parse_broker
    from controller.commands.join import phone_seat
    from controller.commands.rules import parse_options
    from controller.errors import FaceDownError
    from controller.remote.host import RemoteHost

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.league or args.ask_league:
        return run_league(args)
    if not args.game:
        raise SystemExit("facedown host: which game? e.g. facedown host stratego --broker mqtt://HOST (or --league DIR)")
    try:
        from controller.club.clock import parse_time_control

        broker = parse_broker(args.broker, ca_file=args.broker_ca)
        control = parse_time_control(args.clock) if args.clock else None
        host = RemoteHost(args.game, broker, journal_path=args.journal, game_id=args.game_id,
                          options=parse_options(args.option), new=args.new, clock=control, flag_rule=args.flag_rule,
                          away_rule=args.away_rule)
    except FaceDownError as exc:
        raise SystemExit(f"facedown host: {exc}") from None
    st = host.session.state
    print(f"FaceDown remote referee: {host.game.name} ({host.game.zh}), game {host.game_id} (journal game {host.number}), "
          f"{st.phase}" + (f" at ply {st.ply}" if st.ply else "") + f", broker {broker.url()}")
    if args.broker_files:
        pw, acl = host.write_broker_files(args.broker_files)
        print(f"Broker logins in {pw}, ACL in {acl}: add them to the broker's password_file and acl_file (docs/remote.md)")
    bad = [s for s in args.phone if s not in host.seats]
    if bad:
        host.table.stop()
        raise SystemExit(f"facedown host: --phone {bad[0]}: {host.game.id}'s seats are {', '.join(host.seats)}")
    qr = args.qr or sys.stdout.isatty()
    ca = f" --club-ca {args.broker_ca}" if args.broker_ca else ""
    codes = host.join_codes()
    for seat, code in codes.items():
        if seat in args.phone:
            continue
        # each seat's code is its secret: give it to that player only (the QR code carries it to their phone)
        print(f"  {seat}: facedown play {host.game.id} --remote {broker.url()}{ca} --seat {seat} --join {code}")
        if qr:
            print(_qr(str(code)))
    sys.stdout.flush()
    stop = stop_on_signals()
    phones: list[tuple[Any, Any, str]] = []
    try:
        host.start()
        for i, seat in enumerate(args.phone):
            opened = phone_seat(host.game.id, broker, codes[seat], web_host=args.web_host, port=args.web_port + i)
            if opened is None:
                return 2
            phones.append(opened)
            # the link carries the seat's secret: whoever opens it plays that seat
            print(f"  {seat} plays from a phone: open {opened[2]}", flush=True)
            if qr:
                print(_qr(opened[2]), flush=True)
    except ConnectionError as exc:
        print(f"facedown host: {exc}", file=sys.stderr)
        return 2
    try:
        wait_for_stop(stop, args.ready_file)
    finally:
        for seat, server, _ in phones:
            server.stop()
            seat.stop()
            seat.table.stop()
        host.stop()
    return 0


def run_league(args: argparse.Namespace) -> int:
    """``--league DIR``: one of a league's hosts until stopped; ``--ask-league``: the organizer's request."""
    from controller.club.broker import parse_broker
    from controller.commands.rules import parse_options
    from controller.errors import FaceDownError
    from controller.remote.league import LeagueHost, ask_for_game, read_key

    if not args.league_key:
        raise SystemExit("facedown host: a league needs --league-key FILE (the organizer's key, copied to each host)")
    try:
        broker = parse_broker(args.broker, ca_file=args.broker_ca)
        key = read_key(args.league_key, create=bool(args.ask_league))
        if args.ask_league:
            if not args.game or not args.game_id:
                raise SystemExit("facedown host: --ask-league needs GAME and --game-id ID")
            by, codes = ask_for_game(broker, key, args.game, args.game_id, parse_options(args.option))
        else:
            server = LeagueHost(broker, key, args.league, group=args.share)
    except FaceDownError as exc:
        raise SystemExit(f"facedown host: {exc}") from None
    except ConnectionError as exc:
        print(f"facedown host: {exc}", file=sys.stderr)
        return 2
    qr = args.qr or sys.stdout.isatty()
    if args.ask_league:
        print(f"Game {args.game_id} ({args.game}) is hosted by {by}")
        ca = f" --club-ca {args.broker_ca}" if args.broker_ca else ""
        for seat, code in codes.items():
            print(f"  {seat}: facedown play {args.game} --remote {broker.url()}{ca} --seat {seat} --join {code}")
            if qr:
                print(_qr(str(code)))
        return 0
    stop = stop_on_signals()
    try:
        server.start()
    except ConnectionError as exc:
        print(f"facedown host: {exc}", file=sys.stderr)
        return 2
    print(f"FaceDown league host {server.name} in group {args.share} on {broker.url()}: {len(server.hosts.hosts)} "
          f"game(s) resumed, waiting for the organizer's requests", flush=True)
    try:
        wait_for_stop(stop, args.ready_file)
    finally:
        server.stop()
    return 0


def _qr(text: str) -> str:
    from web_referee.qr import qr_text

    return qr_text(text)
