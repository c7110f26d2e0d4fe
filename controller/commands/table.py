"""`facedown table key`: prints this table's public signing key, which a club enrolls to trust its signed results."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("table", help="this table's identity: its public key for signed records")
    act = p.add_subparsers(dest="table_command", metavar="ACTION")
    act.required = True
    key = act.add_parser("key", help="print the table's public key (made with the table's first start if missing)")
    key.add_argument("--journal", metavar="PATH", help="journal file the key sits beside (default: "
                                                      "$XDG_DATA_HOME/facedown/journal.sqlite)")
    key.add_argument("--table", metavar="NAME", help="the table's name in the club, to print the enroll command with it")
    key.set_defaults(func=run_key)


def run_key(args: argparse.Namespace) -> int:
    from controller.referee.journal import default_path
    from controller.referee.signing import fingerprint, public_key, seed_path_of

    path = args.journal or default_path()
    key = public_key(path)
    print(key)
    name = args.table or "TABLE"
    print(f"# fingerprint {fingerprint(key)}; the secret half is {seed_path_of(path)} (keep it, never share it)")
    print(f"# on the club's machine: facedown club enroll {name} {key}")
    return 0
