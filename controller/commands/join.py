"""`facedown play GAME --remote URL --seat SEAT --join CODE`: this board (or a simulated one, driven from the seat's
page on a phone) plays one seat of a game that `facedown host` referees elsewhere."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from controller.commands.running import open_web, stop_on_signals, wait_for_stop


def state_path(game_id: str, seat: str) -> Path:
    """Where this board keeps its seat's salts and deployment (so a restarted board can still check the record)."""
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "facedown" / f"remote-{game_id}-{seat}.json"


def phone_seat(game_id: str, broker: Any, join: Any, *, web_host: str, port: int, prog: str = "facedown host",
               state_dir: Path | None = None, keep_wire: bool = False) -> tuple[Any, Any, str] | None:
    """``join``'s seat played from its page alone (a player with only a phone): a simulated board in this process,
    its seat page served on ``web_host:port`` (``keep_wire``: keep every byte received, for audits). The seat (started), the web server (started) and the page's link;
    None when the port cannot be had (said as ``prog: why``)."""
    from controller.remote.seat import RemoteSeat
    from controller.rules import load_game
    from controller.sensing.sim import SimBoard

    board = SimBoard(load_game(game_id).station_ids, settle_ms=30)
    path = (state_dir / f"remote-{join.game_id}-{join.seat}.json") if state_dir else state_path(join.game_id, join.seat)
    seat = RemoteSeat(game_id, broker, join, board, board_kind="sim", state_path=path, keep_wire=keep_wire)
    server = open_web(seat.table, web_host, port, prog)
    if server is None:
        return None
    seat.start()
    seat.table.start()
    server.start()
    return seat, server, f"{server.base_url()}/seat/{seat.table.tokens[join.seat]}"


def run_remote(args: argparse.Namespace, game_id: str, profile: Any, board: Any,
               read_setup_file: Callable[[str], dict[str, str]]) -> int:
    """Play ``args.seat`` of the hosted game on ``board`` (``read_setup_file``: play's reader of --setup files)."""
    from controller.club.broker import parse_broker
    from controller.errors import FaceDownError
    from controller.remote.protocol import parse_join
    from controller.remote.seat import RemoteSeat

    seats = [s for s in args.seat if "=" not in s]
    if len(seats) != 1 or len(args.seat) != 1:
        raise SystemExit("facedown play: --remote needs exactly one --seat SIDE (the seat this board plays), "
                         "and no computer seats")
    if not args.join:
        raise SystemExit("facedown play: --remote needs --join CODE, the code `facedown host` printed for this seat")
    try:
        join = parse_join(args.join, seat=seats[0])
        broker = parse_broker(args.remote, ca_file=getattr(args, "club_ca", None))
        seat = RemoteSeat(game_id, broker, join, board, board_kind=args.board,
                          state_path=state_path(join.game_id, join.seat))
    except FaceDownError as exc:
        raise SystemExit(f"facedown play: {exc}") from None
    table = seat.table
    names = [n.strip() for n in args.announce.split(",") if n.strip() and n.strip() != "none"]
    if names:
        from controller.announce import make_announcers

        for a in make_announcers(names, table.game, lang=args.lang):
            table.add_announcer(a)
    from controller.lights import station_lights

    lights = station_lights(table.session, profile, board)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    stop = stop_on_signals()  # from the start: a stop while it joins is a clean stop too
    try:
        seat.start()
    except ConnectionError as exc:
        print(f"facedown play: {exc}", file=sys.stderr)
        return 2
    deadline = time.monotonic() + 10
    while not seat.synced and time.monotonic() < deadline:
        time.sleep(0.05)
    if not seat.synced:
        print(f"facedown play: the host of {join.game_id} has not been online on {broker.url()} yet; waiting for it",
              file=sys.stderr)
    for item in args.setup:
        side, sep, path = item.partition("=")
        if not sep or side != join.seat:
            raise SystemExit(f"facedown play: --setup {item!r}: with --remote, only this seat's deployment, {join.seat}=FILE")
        if join.seat in table.state.deployments or table.state.phase != "setup":
            continue  # a restart: the host has it already
        problems = table.session.register_setup(side, read_setup_file(path))
        if problems:
            print(f"facedown play: {path}: deployment for {side} rejected:", file=sys.stderr)
            for p in problems:
                print(f"  {p}", file=sys.stderr)
            return 2
        if args.board == "sim":
            for station in table.state.deployments[side]:
                board.place(station)
    table.start()
    print(f"FaceDown remote seat: {table.game.name}, seat {join.seat} of game {join.game_id} on {broker.url()}, "
          f"board {args.board}", flush=True)
    server = None
    try:
        if not args.no_web:
            server = open_web(table, args.host, args.port)
            if server is None:
                return 2
            server.start()
            # only this seat's page: the other seats and the arbiter are elsewhere (the host)
            url = f"{server.base_url()}/seat/{table.tokens[join.seat]}"
            print(f"Web page of seat {join.seat} (keep it private: it plays your seat): {url}", flush=True)
            if sys.stdout.isatty():
                from web_referee.qr import qr_text

                print(qr_text(url), flush=True)
        wait_for_stop(stop, args.ready_file)
    finally:
        if server is not None:
            server.stop()
        if lights is not None:
            lights.close()
        seat.stop()
        table.stop()
    return 0
