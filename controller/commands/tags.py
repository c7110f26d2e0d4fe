"""`facedown tags`: enrol RFID tags as pieces (the map lives on the Pi, never on a tag), list them, clear them."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tags", help="teach the referee which RFID tag is which piece")
    tsub = p.add_subparsers(dest="tags_command", metavar="ACTION")
    tsub.required = True
    e = tsub.add_parser("enroll", help="place each piece in turn on any station (or tap it on the check-in pad); its tag is recorded")
    e.add_argument("game")
    e.add_argument("--board", choices=["serial", "sim"], default="serial")
    e.add_argument("--profile", help="hardware profile file (default: the game's default profile)")
    e.add_argument("--port", help="serial device (default: from the profile, else found by USB id)")
    e.add_argument("--map", help="tag map file (default: the user's data dir)")
    e.set_defaults(func=run_enroll)
    for name, fn, helptext in (("list", run_list, "show the enrolled tags"), ("clear", run_clear, "forget every tag")):
        s = tsub.add_parser(name, help=helptext)
        s.add_argument("game")
        s.add_argument("--map", help="tag map file (default: the user's data dir)")
        if name == "clear":
            s.add_argument("--yes", action="store_true", help="do not ask")
        s.set_defaults(func=fn)


def run_list(args: argparse.Namespace) -> int:
    from controller.rules import load_game
    from controller.sensing.tagmap import TagMap

    game = load_game(args.game)
    tm = TagMap.load(game.id, args.map)
    names = {p.id: p.name for p in game.pieces}
    for uid, e in sorted(tm.entries.items(), key=lambda kv: (kv[1].side, kv[1].piece, kv[1].copy)):
        print(f"{uid:<16} {e.label(names)}")
    print(f"{len(tm.entries)} tags; {len(tm.missing(game))} pieces without a tag ({tm.path})")
    return 0


def run_clear(args: argparse.Namespace) -> int:
    from controller.rules import load_game
    from controller.sensing.tagmap import TagMap

    game = load_game(args.game)
    tm = TagMap.load(game.id, args.map)
    if not args.yes and input(f"forget all {len(tm.entries)} tags of {game.id}? [y/N] ").strip().lower() != "y":
        return 1
    tm.clear()
    print(f"cleared {tm.path}")
    return 0


def run_enroll(args: argparse.Namespace) -> int:
    import queue
    import threading

    from controller.rules import load_game
    from controller.sensing.tagmap import TagMap, enroll

    game = load_game(args.game)
    tm = TagMap.load(game.id, args.map)
    board = _board(args, game)
    where = getattr(board, "where", "on any station")  # a check-in pad says where its reads are made
    q: queue.Queue = queue.Queue()
    t = threading.Thread(target=board.run, args=(q.put,), daemon=True)
    t.start()

    def snapshots():
        yield board.current()
        while True:
            yield q.get()

    try:
        # no prompt before the scanner listens: a tag read before then would be lost and the player left waiting
        if hasattr(board, "wait_known"):
            print("waiting for the scanner...")
            while not board.wait_known(2.0):
                print(f"  {board.status}")
        n = enroll(tm, game, snapshots(), print, where=where)
    except KeyboardInterrupt:
        n = -1
    finally:
        board.stop()
    left = len(tm.missing(game))
    print(f"{len(tm.entries)} tags in {tm.path}; {left} pieces still without a tag" + (" (resume any time)" if left else ""))
    return 0 if n >= 0 else 130


def _board(args: argparse.Namespace, game):
    if args.board == "sim":
        from controller.sensing.sim import SimBoard

        return SimBoard(game.station_ids)
    from controller.sensing.profile import default_profile, find_profile
    from controller.sensing.serial_link import SerialScannerBoard

    prof = find_profile(args.profile) if args.profile else default_profile(game.id)
    sc = prof.scanner
    board = SerialScannerBoard(prof.stations, prof.channels, port=args.port or (sc.port if sc else None),
                               vid=sc.usb_vid if sc else None, pid=sc.usb_pid if sc else None)
    if prof.sensing == "checkin":  # with a check-in pad, a tap on the pad is the read
        from controller.referee.checkin import PadReads

        return PadReads(board)
    return board
