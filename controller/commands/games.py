"""`facedown games`: lists the installed games, a line each."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("games", help="list the games this referee knows")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controller.rules import game_ids, load_game

    for gid in game_ids():
        g = load_game(gid)
        army = sum(p.count for p in g.pieces)
        print(f"{g.id:<18} {g.name} ({g.zh}): {len(g.sides)} sides, {army} pieces each, {len(g.stations)} stations")
    return 0
