"""`facedown games`: lists the games this referee knows, a line each, with where each came from (the package,
``$FACEDOWN_GAMES_DIR`` or ``$XDG_CONFIG_HOME/facedown/games``); a game file that does not load is listed with
what is wrong with it, and a file whose id an earlier folder already has is listed as shadowed."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("games", help="list the games this referee knows and where each came from")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from controller.rules import RulesError, catalog, load_game

    bad = 0
    for src in catalog.sources(with_shadowed=True):
        where = "package" if src.origin == "package" else f"{src.origin}: {src.path}"
        if src.shadowed_by is not None:
            print(f"{src.id:<18} (shadowed by {src.shadowed_by.path}) [{where}]")
            continue
        try:
            g = load_game(src.id)
        except RulesError as exc:
            bad += 1
            print(f"{src.id:<18} does not load: {exc} [{where}]")
            continue
        army = sum(p.count for p in g.pieces)
        zh = f" ({g.zh})" if g.zh else ""
        print(f"{g.id:<18} {g.name}{zh}: {len(g.sides)} sides, {army} pieces each, {len(g.stations)} stations [{where}]")
    return 1 if bad else 0
