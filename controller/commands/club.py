"""`facedown club`: the club dashboard — every table publishing to the club's MQTT broker, live on one page, with
clocks, results, standings and a CSV export of the results; `facedown club enroll TABLE KEY` trusts a table's key
(a result counts only with its game's record signed by that key), `facedown club tables` lists the enrolled ones."""

from __future__ import annotations

import argparse
import logging
from pathlib import Path

from controller.commands.running import stop_on_signals, wait_for_stop


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("club", help="serve the club dashboard: every table's board, clocks, results and standings; "
                                    "`club enroll TABLE KEY` trusts a table's signed results")
    p.add_argument("action", nargs="?", choices=("enroll", "tables"), help="enroll TABLE KEY: trust the table's public key "
                   "(what `facedown table key` prints on it); tables: list the enrolled tables. Without: the dashboard")
    p.add_argument("table", nargs="?", help=argparse.SUPPRESS)
    p.add_argument("key", nargs="?", help=argparse.SUPPRESS)
    p.add_argument("--tables", dest="tables_file", metavar="FILE",
                   help="the enrolled tables' keys (default ~/.local/share/facedown/club-tables.json)")
    p.add_argument("--broker", metavar="URL", help="the club's broker, mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
    p.add_argument("--club-user", metavar="USER", help="broker user name; the password comes from --club-password-file or $FACEDOWN_CLUB_PASSWORD")
    p.add_argument("--club-password-file", metavar="FILE", help="file whose first line is the broker password")
    p.add_argument("--club-ca", metavar="FILE", help="CA certificate that signed the broker's TLS certificate (mqtts://)")
    p.add_argument("--results", metavar="FILE", help="keep results in this JSON-lines file (default ~/.local/share/facedown/club-results.jsonl)")
    p.add_argument("--host", default="0.0.0.0", help="web address to listen on (default all interfaces)")
    p.add_argument("--port", type=int, default=8090, help="web port (default 8090)")
    p.add_argument("--ready-file", help=argparse.SUPPRESS)
    p.set_defaults(func=run)


def default_results_path() -> Path:
    import os

    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "facedown" / "club-results.jsonl"


def run_enrolment(args: argparse.Namespace) -> int:
    """`facedown club enroll TABLE KEY` and `facedown club tables`."""
    from controller.club.enrolled import Enrolment, default_path
    from controller.club.results import ResultError
    from controller.referee.signing import fingerprint

    try:
        enrolment = Enrolment(args.tables_file or default_path())
        if args.action == "tables":
            if args.table or args.key:
                raise SystemExit("facedown club tables: takes no table or key")
            tables = enrolment.tables()
            if not tables:
                print(f"no tables enrolled yet ({enrolment.path}); enroll one with `facedown club enroll TABLE KEY`")
            for name, key in sorted(tables.items()):
                print(f"{name:<20} {key}  (fingerprint {fingerprint(key)})")
            return 0
        if not args.table or not args.key:
            raise SystemExit("facedown club enroll: needs TABLE KEY, e.g. `facedown club enroll table-7 ed25519:...` "
                             "with the key `facedown table key` prints on that table")
        old = enrolment.enroll(args.table, args.key)
    except ResultError as exc:
        raise SystemExit(f"facedown club enroll: {exc}") from None
    key = enrolment.tables()[args.table]
    print(f"enrolled {args.table}: {key} (fingerprint {fingerprint(key)}) in {enrolment.path}")
    if old:
        print(f"  it replaces the key enrolled before ({fingerprint(old)}): results signed by that key no longer count")
    print("  a running dashboard reads it at once; its results held as unverified are checked again")
    return 0


def run(args: argparse.Namespace) -> int:
    from controller.club.broker import parse_broker
    from controller.club.enrolled import Enrolment
    from controller.club.enrolled import default_path as default_tables_path
    from controller.club.results import ResultBook
    from controller.errors import FaceDownError
    from web_referee.club import ClubListener, ClubServer, ClubState

    if args.action:
        return run_enrolment(args)
    if not args.broker:
        raise SystemExit("facedown club: --broker URL is required for the dashboard (e.g. --broker mqtt://club.local)")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        broker = parse_broker(args.broker, username=args.club_user, password_file=args.club_password_file, ca_file=args.club_ca)
        book = ResultBook(args.results or default_results_path())
        enrolled = Enrolment(args.tables_file or default_tables_path())
    except FaceDownError as exc:
        raise SystemExit(f"facedown club: {exc}") from None
    state = ClubState(book, enrolled=enrolled)
    listener = ClubListener(state, broker)
    server = ClubServer(state, host=args.host, port=args.port, broker_url=broker.url())
    stop = stop_on_signals()
    listener.start()
    server.start()
    host = args.host if args.host not in ("0.0.0.0", "::", "") else "localhost"
    print(f"FaceDown club dashboard at http://{host}:{server.port}/ (broker {broker.url()}, results in {book.path}, "
          f"{len(enrolled.tables())} enrolled table(s) in {enrolled.path})", flush=True)
    try:
        wait_for_stop(stop, args.ready_file, 0.5)
    finally:
        server.stop()
        listener.stop()
    return 0
