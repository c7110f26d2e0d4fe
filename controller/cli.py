"""The `facedown` command line: a thin dispatcher over the subcommand modules in controller.commands."""

from __future__ import annotations

import argparse
import importlib
import sys

from controller.errors import FaceDownError

#: Subcommand modules under controller.commands, in the order `facedown --help` lists them.
COMMANDS = [
    "games",
    "rules",
    "play",
    "host",
    "club",
    "script",
    "match",
    "record",
    "table",
    "setups",
    "tags",
    "hw_test",
    "bom",
    "profile",
    "print_board",
    "service",
    "firmware",
]


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line; given ``argv`` naming a subcommand, only that subcommand's module is imported.

    Importing every subcommand module costs tens of milliseconds of CPU (a few hundred on a Pi Zero) that
    ``facedown play`` would spend before the referee is ready; the others are not added at all (argparse only needs
    the one asked for). ``facedown --help``, or a word that names no subcommand, still imports all of them."""
    parser = argparse.ArgumentParser(prog="facedown", description="FaceDown: a referee for hidden-piece military chess on a real board.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    wanted = _command_named(argv)
    for name in COMMANDS:
        if wanted is None or wanted == name:
            importlib.import_module(f"controller.commands.{name}").register(sub)
        # with a subcommand named, the others are left out: argparse only needs the one that was asked for
    return parser


def _command_named(argv: list[str] | None) -> str | None:
    """The subcommand module ``argv`` asks for (its first word, before any option), None if it names none."""
    if not argv or argv[0].startswith("-"):
        return None
    name = argv[0].replace("-", "_")
    return name if name in COMMANDS else None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except FaceDownError as exc:  # refused on purpose (a file, a profile, a journal...): a message, not a traceback
        print(f"facedown: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
