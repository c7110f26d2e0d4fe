"""The `facedown` command line: a thin dispatcher over the subcommand modules in controller.commands."""

from __future__ import annotations

import argparse
import importlib
import sys

#: Subcommand modules under controller.commands, in the order `facedown --help` lists them.
COMMANDS = [
    "games",
    "rules",
    "play",
    "club",
    "script",
    "match",
    "record",
    "setups",
    "tags",
    "hw_test",
    "bom",
    "print_board",
    "service",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="facedown", description="FaceDown: a referee for hidden-piece military chess on a real board.")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"controller.commands.{name}").register(sub)
    return parser


def _user_errors() -> tuple[type[BaseException], ...]:
    """Errors that are the user's input being wrong (a file, a profile, a journal): a message, not a traceback."""
    from controller.referee.journal import JournalError
    from controller.referee.replay import ReplayError
    from controller.rules.errors import RulesError
    from controller.sensing.profile import ProfileError

    return (RulesError, ProfileError, JournalError, ReplayError)


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except _user_errors() as exc:
        print(f"facedown: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
