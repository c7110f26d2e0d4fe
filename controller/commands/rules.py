"""`facedown rules GAME`: prints a game's pieces and clash matrix, readably or as the stable JSON contract."""

from __future__ import annotations

import argparse
import json
import sys

SYMBOL = {"attacker": "A", "defender": "D", "both": "=", "bounce": "o", "illegal": "-"}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("rules", help="print a game's pieces and clash matrix")
    p.add_argument("game", help="game id (see `facedown games`) or a path to a game file")
    p.add_argument("--json", action="store_true", help="print the machine-readable contract")
    p.add_argument("--option", "-o", action="append", default=[], metavar="NAME=VALUE", help="house-rule option (repeatable)")
    p.set_defaults(func=run)


def parse_options(items: list[str]) -> dict:
    """NAME=VALUE strings to option values (YAML scalars: true, false, null, numbers, text); no options, no YAML
    parser imported (start-up)."""
    out: dict = {}
    if not items:
        return out
    import yaml

    from controller.docreader import DocumentProblem, load_yaml
    from controller.rules.errors import OptionError

    for item in items:
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise OptionError(f"option {item[:60]!r}: expected NAME=VALUE")
        try:
            out[name] = load_yaml(value) if value else None
        except DocumentProblem as exc:
            raise OptionError(f"option {name[:40]}: expected {exc.expected}") from None
        except yaml.YAMLError:
            raise OptionError(f"option {name[:40]}: expected a value such as true, 3 or text") from None
    return out


def contract(game_id: str, options: dict | None = None) -> dict:
    """The `facedown rules --json` document: pieces and every attacker/defender outcome."""
    from controller.rules import load_game
    from controller.rules.clash import clash_matrix
    from controller.rules.effects import clash_effects

    game = load_game(game_id)
    opts = game.resolve_options(options)
    game = game.for_options(opts)
    return {
        "game": game.id,
        "pieces": [
            {"id": p.id, "name": p.name, "zh": p.zh, "zh_hans": p.zh_hans, "count": p.count, "movable": p.movable,
             "can_attack": p.can_attack}
            for p in game.pieces
        ],
        "clash": clash_matrix(game, opts),
        # where the engine's outcome is not the base one: per-situation outcomes and effects (docs/game-format.md)
        "effects": clash_effects(game, opts),
    }


def _effect_text(effect: dict) -> str:
    """One clash effect of the contract, for the readable listing."""
    kind = effect["effect"]
    way = f" (moving along {', '.join(effect['along'])})" if "along" in effect else ""
    if kind == "at":
        return f"on {effect['station_kind']} stations: {effect['outcome']}"
    if kind == "spared":
        return f"{effect['outcome']}, the target cannot answer{way}"
    if kind == "returns":
        return f"the striker goes back to its station{way}"
    if kind == "push":
        return f"the {effect['piece']} moves one step away"
    return "the defender is shown to the attacking side only"


def run(args: argparse.Namespace) -> int:
    from controller.rules import load_game

    options = parse_options(args.option)
    doc = contract(args.game, options)
    if args.json:
        json.dump(doc, sys.stdout, ensure_ascii=False, indent=1)
        print()
        return 0
    game = load_game(args.game)
    opts = game.resolve_options(options)
    game = game.for_options(opts)
    print(f"{game.name} ({game.zh}) - {game.source}")
    print()
    print(f"{'#':>3}  {'id':<14} {'piece':<22} {'zh':<6} count  moves  attacks")
    for i, p in enumerate(game.pieces, 1):
        print(f"{i:>3}  {p.id:<14} {p.name:<22} {p.zh:<6}{p.count:>5}  {'yes' if p.movable else 'no':<5}  {'yes' if p.can_attack else 'no'}")
    print()
    print("Clash: row = attacker, column = defender (by number above).")
    print("A attacker survives, D defender survives, = both removed, o no effect (both back), - not allowed")
    n = len(game.pieces)
    print("     " + "".join(f"{j:>3}" for j in range(1, n + 1)))
    for i, a in enumerate(game.pieces, 1):
        row = doc["clash"][a.id]
        print(f"{i:>3}  " + "".join(f"{SYMBOL[row[d.id]]:>3}" for d in game.pieces) + f"   {a.zh} {a.name}")
    if doc["effects"]:
        print()
        print("Where the engine's outcome is not the table's (row attacker, then defender):")
        for a, row in doc["effects"].items():
            for d, effects in row.items():
                said = "; ".join(_effect_text(e) for e in effects)
                print(f"  {a} -> {d}: {said}")
    print()
    print("Options (house rules):")
    for o in game.options.values():
        mark = "" if opts[o.id] == o.default else f"  [set to {opts[o.id]!r}]"
        print(f"  {o.id} = {o.default!r}{mark}: {o.doc}")
    return 0
