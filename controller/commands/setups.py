"""`facedown setups list|save|load|validate|import-human|pick`: the saved deployments the web page's guided setup
offers (controller/setups_store.py), and real human Stratego setups from the Gravon archive (Ataraxos data files)
to put on a seat, e.g. the opponent's in a demo or for practice."""

from __future__ import annotations

import argparse
import json
import random
import sys
from typing import Any

from controller.records.ataraxos import CORPUS_ENV


def register(sub: argparse._SubParsersAction) -> None:
    store = argparse.ArgumentParser(add_help=False)
    store.add_argument("--store", metavar="DIR", help="saved-setups folder (default: $XDG_DATA_HOME/facedown/setups)")
    p = sub.add_parser("setups", help="list, save, load and validate deployments; pick real human setups")
    act = p.add_subparsers(dest="setups_command", metavar="ACTION")
    act.required = True

    ls = act.add_parser("list", parents=[store], help="saved deployments of a game, newest first")
    ls.add_argument("game", help="game id")
    ls.add_argument("--side", help="only this side")
    ls.set_defaults(func=run_list)

    save = act.add_parser("save", parents=[store], help="check a deployment (JSON file) and save it under a name")
    save.add_argument("game")
    save.add_argument("side")
    save.add_argument("name")
    save.add_argument("file", help='JSON {"station": "piece", ...} (or a saved-setup file); "-" for standard input')
    save.set_defaults(func=run_save)

    load = act.add_parser("load", parents=[store], help="print a saved deployment as JSON")
    load.add_argument("game")
    load.add_argument("side")
    load.add_argument("name")
    load.set_defaults(func=run_load)

    check = act.add_parser("validate", help="check a deployment (JSON file) against the game's setup rules")
    check.add_argument("game")
    check.add_argument("side")
    check.add_argument("file", help='JSON {"station": "piece", ...}; "-" for standard input')
    check.set_defaults(func=run_validate)

    corpus = argparse.ArgumentParser(add_help=False)
    corpus.add_argument("--corpus", metavar="DIR", help=f"Ataraxos data folder (default: ${CORPUS_ENV}, else the copy in the package)")
    corpus.add_argument("--side", default="blue", help="the seat the setups are for (default: blue, the opponent's)")
    corpus.add_argument("--seed", type=int, help="random seed, to repeat a choice")

    imp = act.add_parser("import-human", parents=[store, corpus], help="save N random human setups (classic or barrage) to the store")
    imp.add_argument("kind", choices=["classic", "barrage"])
    imp.add_argument("--count", type=int, default=10, help="how many (default 10)")
    imp.set_defaults(func=run_import_human)

    pick = act.add_parser("pick", parents=[store, corpus], help="pick one random human setup for a game, print it and save it")
    pick.add_argument("game", help="stratego or stratego_barrage")
    pick.add_argument("--name", help="save it under this name (default: 'human KIND LINE')")
    pick.add_argument("--no-save", action="store_true", help="only print it")
    pick.set_defaults(func=run_pick)


def _fail(message: object) -> int:
    print(f"facedown setups: {message}", file=sys.stderr)
    return 2


def _store(args: argparse.Namespace) -> Any:
    from controller.setups_store import SetupStore

    return SetupStore(args.store)


def _read_placement(name: str) -> dict[str, str]:
    from controller.textfiles import parse_json, read_stdin, read_text

    text = read_stdin("deployment") if name == "-" else read_text(name, "deployment file")
    data = parse_json(text, name)
    if isinstance(data, dict) and isinstance(data.get("placement"), dict):
        data = data["placement"]
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise ValueError(f'{name}: expected a JSON object {{"station": "piece id", ...}}')
    return data


def _problems_text(problems: list[Any]) -> str:
    return "\n".join(f"  {p}" for p in problems)


def run_list(args: argparse.Namespace) -> int:
    from controller.rules import load_game
    from controller.setups_store import SetupStoreError

    game = load_game(args.game)
    store = _store(args)
    sides = [args.side] if args.side else list(game.sides)
    found = 0
    try:
        for side in sides:
            for s in store.list(game, side):
                print(f"{side:<6} {s.name:<40} {len(s.placement):>3} pieces")
                found += 1
    except SetupStoreError as exc:
        return _fail(exc)
    if not found:
        print(f"no saved deployments for {game.id} in {store.root}")
    return 0


def run_save(args: argparse.Namespace) -> int:
    from controller.rules import load_game
    from controller.setups_store import SetupStoreError

    game = load_game(args.game)
    try:
        placement = _read_placement(args.file)
        saved = _store(args).save(game, args.side, args.name, placement)
    except SetupStoreError as exc:
        return _fail(f"{args.file}: {exc}" + (f"\n{_problems_text(exc.problems)}" if exc.problems else ""))
    except ValueError as exc:
        return _fail(exc)
    print(f"saved {saved.side}'s deployment {saved.name!r} for {game.id}")
    return 0


def run_load(args: argparse.Namespace) -> int:
    from controller.rules import load_game
    from controller.setups_store import SetupStoreError

    game = load_game(args.game)
    try:
        saved = _store(args).load(game, args.side, args.name)
    except SetupStoreError as exc:
        return _fail(exc)
    print(json.dumps(saved.placement, indent=1, sort_keys=True))
    return 0


def run_validate(args: argparse.Namespace) -> int:
    from controller.rules import load_game
    from controller.rules.setup import check_deployment

    game = load_game(args.game)
    try:
        placement = _read_placement(args.file)
    except ValueError as exc:
        return _fail(exc)
    problems = check_deployment(game, args.side, placement)
    if problems:
        print(f"{args.file}: {len(problems)} problem(s) in {args.side}'s deployment for {game.id}:\n{_problems_text(problems)}")
        return 1
    print(f"{args.file}: a valid deployment for {args.side} in {game.id}")
    return 0


def _human(args: argparse.Namespace, kind: str, count: int) -> list[tuple[int, dict[str, str]]]:
    from controller.records.ataraxos import as_blue, parse_setup_lines, sample_lines, setups_member
    from controller.records.ataraxos import collection as ataraxos

    collection = ataraxos(args.corpus)
    member = setups_member(kind)
    lines = parse_setup_lines(collection.read_text(member, "ascii"))
    chosen = sample_lines(lines, count, random.Random(args.seed), collection.where(member))
    if args.side == "blue":
        chosen = [(n, as_blue(p)) for n, p in chosen]
    elif args.side != "red":
        raise ValueError(f"Stratego has no side {args.side!r}; sides are red, blue")
    return chosen


def run_import_human(args: argparse.Namespace) -> int:
    from controller.records.ataraxos import SETUP_FILES
    from controller.rules import load_game
    from controller.setups_store import SetupStoreError

    game = load_game(SETUP_FILES[args.kind][1])
    if args.count < 1:
        return _fail("--count must be at least 1")
    store = _store(args)
    try:
        chosen = _human(args, args.kind, args.count)
        for line, placement in chosen:
            store.save(game, args.side, f"human {args.kind} {line}", placement)
    except ValueError as exc:  # a RecordError, or a bad side
        return _fail(exc)
    except SetupStoreError as exc:
        return _fail(f"{exc}\n{_problems_text(exc.problems)}")
    print(f"saved {len(chosen)} human {args.kind} setups for {args.side} in {game.id} ({store.root})")
    return 0


def run_pick(args: argparse.Namespace) -> int:
    from controller.records.ataraxos import SETUP_FILES
    from controller.rules import load_game
    from controller.setups_store import SetupStoreError

    kinds = {game: kind for kind, (_file, game) in SETUP_FILES.items()}
    game = load_game(args.game)
    if game.id not in kinds:
        return _fail(f"human setups exist for {', '.join(kinds)}, not {game.id}")
    kind = kinds[game.id]
    try:
        [(line, placement)] = _human(args, kind, 1)
        name = args.name or f"human {kind} {line}"
        if not args.no_save:
            _store(args).save(game, args.side, name, placement)
    except ValueError as exc:  # a RecordError, or a bad side
        return _fail(exc)
    except SetupStoreError as exc:
        return _fail(f"{exc}\n{_problems_text(exc.problems)}")
    print(json.dumps(placement, indent=1, sort_keys=True))
    print(f"human {kind} setup from line {line}" + ("" if args.no_save else f", saved for {args.side} as {name!r}"), file=sys.stderr)
    return 0
