"""`facedown club`: the club dashboard — every table publishing to the club's MQTT broker, live on one page, with
clocks, results, standings and a CSV export of the results."""

from __future__ import annotations

import argparse
import logging
import signal
import threading
from pathlib import Path
from typing import Any


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("club", help="serve the club dashboard: every table's board, clocks, results and standings")
    p.add_argument("--broker", required=True, metavar="URL", help="the club's broker, mqtt://HOST[:PORT] or mqtts://HOST[:PORT]")
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


def run(args: argparse.Namespace) -> int:
    from controller.club.broker import parse_broker
    from controller.club.results import ResultBook
    from controller.errors import FaceDownError
    from web_referee.club import ClubListener, ClubServer, ClubState

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        broker = parse_broker(args.broker, username=args.club_user, password_file=args.club_password_file, ca_file=args.club_ca)
        book = ResultBook(args.results or default_results_path())
    except FaceDownError as exc:
        raise SystemExit(f"facedown club: {exc}") from None
    state = ClubState(book)
    listener = ClubListener(state, broker)
    server = ClubServer(state, host=args.host, port=args.port, broker_url=broker.url())
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    listener.start()
    server.start()
    host = args.host if args.host not in ("0.0.0.0", "::", "") else "localhost"
    print(f"FaceDown club dashboard at http://{host}:{server.port}/ (broker {broker.url()}, results in {book.path})", flush=True)
    if args.ready_file:
        Path(args.ready_file).write_text("ready\n")
    try:
        while not stop.wait(0.5):
            pass
    finally:
        server.stop()
        listener.stop()
    return 0
