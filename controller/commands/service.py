"""`facedown service`: install or remove the systemd unit that referees at power-on, and the scanner's udev rule."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from controller.hardware.service import ServiceConfig


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("service", help="start refereeing at power-on (systemd unit and udev rule)")
    ssub = p.add_subparsers(dest="action", metavar="ACTION")
    ssub.required = True
    i = ssub.add_parser("install", help="write and enable facedown.service and the scanner's udev rule")
    i.add_argument("--game", help="game id (default: the profile's game)")
    i.add_argument("--board", choices=("gpio", "serial"), help="GPIO reed matrix or USB scanner (default: from the profile)")
    i.add_argument("--profile", help="hardware profile: a file or a shipped profile's name (default: hardware/profiles/GAME.yaml)")
    i.add_argument("--root", help="render into this directory instead of / (nothing is run; for checking and tests)")
    i.add_argument("--user", help="user the referee runs as (default: the user who ran sudo)")
    i.add_argument("--announce", help="announcers (default: console,buzzer when the profile has a buzzer)")
    i.add_argument("--web-port", type=int, default=8080, help="web page port (default 8080)")
    i.add_argument("--now", action="store_true", help="also (re)start the service now")
    i.add_argument("--scanner-serial", help="USB serial number of this board's Pico (default: read from the one plugged in)")
    i.add_argument("--scanner-port", help="read the serial number from this device (e.g. /dev/ttyACM1) when several are in")
    i.add_argument("--seat", action="append", default=[], metavar="SIDE=bot:NAME",
                   help="a computer seat the referee plays at every boot (as facedown play --seat; repeatable)")
    i.add_argument("--bot-user", default=None, metavar="USER",
                   help="the user outside engines (bot:cmd:...) run as; install creates it (default facedown-bot)")
    i.add_argument("--no-bot-user", action="store_true",
                   help="run outside engines as the referee's own user (they can then read the journal: docs/bots.md)")
    i.set_defaults(func=run_install)
    u = ssub.add_parser("uninstall", help="disable and remove facedown.service and the udev rule")
    u.add_argument("--root", help="remove from this directory instead of /")
    u.set_defaults(func=run_uninstall)


def _default_user() -> str:
    import getpass
    import os

    return os.environ.get("SUDO_USER") or getpass.getuser()


def config_from_args(args: argparse.Namespace) -> ServiceConfig:
    """The ServiceConfig for ``service install``'s arguments (the profile is loaded and checked here, not at boot)."""
    import controller
    from controller.hardware.service import SCANNER_LINK, ServiceConfig, ServiceError, facedown_executable
    from controller.rules import load_game
    from controller.sensing.profile import default_profile, find_profile

    if args.profile:
        profile = find_profile(args.profile)
    elif args.game:
        profile = default_profile(args.game)
    else:
        raise ServiceError("give --game GAME or --profile FILE (which board does this Pi referee?)")
    game = load_game(args.game).id if args.game else profile.game
    if profile.game != game:
        raise ServiceError(f"{profile.file}: game: the profile is for {profile.game!r}, not {game!r}")
    board = args.board or ("serial" if profile.scanner is not None else "gpio")
    if board == "gpio" and profile.scanner is not None:
        raise ServiceError(f"{profile.file}: scanner: a USB scanner build; use --board serial")
    if board == "serial" and profile.scanner is None:
        raise ServiceError(f"{profile.file}: pins: a reed matrix on the Pi's GPIO; use --board gpio")
    sc = profile.scanner
    serial = None
    if sc is not None:
        serial = _scanner_serial(args, sc.usb_vid if sc.usb_vid is not None else 0x2E8A,
                                 sc.usb_pid if sc.usb_pid is not None else 0x0005)
    announce = args.announce or ("console,buzzer" if profile.pins.buzzer is not None else "console")
    from controller.commands.script import ScriptError, parse_seats
    from controller.hardware.service import BOT_USER, valid_user_name

    try:
        parse_seats(list(args.seat), load_game(game).sides)
    except ScriptError as exc:
        raise ServiceError(str(exc)) from None
    bot_user = None if args.no_bot_user else valid_user_name(args.bot_user or BOT_USER)
    return ServiceConfig(
        game=game, board=board, profile=str(Path(profile.file).resolve()), user=args.user or _default_user(),
        facedown=facedown_executable(), workdir=str(Path(controller.__file__).resolve().parent.parent),
        port=(sc.port or f"/dev/{SCANNER_LINK}") if sc is not None else None, announce=announce,
        web_port=args.web_port, usb_vid=(sc.usb_vid if sc and sc.usb_vid is not None else 0x2E8A),
        usb_pid=(sc.usb_pid if sc and sc.usb_pid is not None else 0x0005), scanner_serial=serial,
        seats=tuple(args.seat), bot_user=bot_user,
    )


def _scanner_serial(args: argparse.Namespace, vid: int, pid: int) -> str:
    """This board's scanner's USB serial number: given, read from a given port, or from the one scanner plugged in."""
    from controller.hardware.service import ServiceError, valid_serial
    from controller.hardware.usb import UsbError, one_scanner, serial_of_port

    if args.scanner_serial:
        return valid_serial(args.scanner_serial)
    try:
        if args.scanner_port:
            return valid_serial(serial_of_port(args.scanner_port))
        return one_scanner(vid, pid).serial
    except UsbError as exc:
        raise ServiceError(str(exc)) from None


def run_install(args: argparse.Namespace) -> int:
    from controller.hardware.service import ServiceError, apply, exec_args, install_plan

    try:
        cfg = config_from_args(args)
        real = args.root is None
        if real:
            import pwd

            try:
                pwd.getpwnam(cfg.user)
            except KeyError:
                raise ServiceError(f"--user {cfg.user}: no such user on this system") from None
        apply(install_plan(cfg, Path(args.root or "/"), start=args.now), real=real)
    except ServiceError as exc:
        print(f"facedown service: {exc}", file=sys.stderr)
        return 2
    print(f"facedown.service runs: {' '.join(exec_args(cfg))}")
    if args.root is None:
        print("it starts at every boot; now: sudo systemctl start facedown; logs: journalctl -u facedown -f")
    return 0


def run_uninstall(args: argparse.Namespace) -> int:
    from controller.hardware.service import ServiceError, apply, uninstall_plan

    try:
        apply(uninstall_plan(Path(args.root or "/")), real=args.root is None)
    except ServiceError as exc:
        print(f"facedown service: {exc}", file=sys.stderr)
        return 2
    return 0
