"""`facedown print-board`: a game's board at 1:1 as SVG, split onto A4 or Letter pages, or its wiring tables."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("print-board", help="printable 1:1 board (SVG pages) with sensor channels and drill marks")
    p.add_argument("game", nargs="?", help="game id or game file (default: the profile's game)")
    p.add_argument("--profile", help="hardware profile, a file or a shipped profile's name, for channel numbers and "
                                     "lights (default: the game's shipped profile, if any)")
    p.add_argument("--no-profile", action="store_true", help="draw no sensor channels")
    p.add_argument("--paper", choices=("a4", "letter"), default="a4", help="page size (default a4)")
    p.add_argument("--pitch", type=float, help="mm between neighbouring stations (default 40; for a reader under each station, what its modules need: 65 on a square grid)")
    p.add_argument("--out", help="SVG file to write; larger boards also get OUT-1.svg, OUT-2.svg ... one per page")
    p.add_argument("--layer", choices=("board", "drill", "assembly"), default="board",
                   help="board (default): the printed top; drill: the holes to drill from the top; assembly: the "
                        "underside seen from below (reed grooves, LEDs, channels, wiring)")
    p.add_argument("--wiring", action="store_true", help="print the profile's wiring tables (Markdown) instead")
    p.add_argument("--schematic", action="store_true",
                   help="write the profile's schematic (SVG: every part and pin, joined by net names) to --out instead")
    p.set_defaults(func=run)


def outputs(out: Path, pages: int) -> list[Path]:
    """The page files for ``--out``: OUT itself for a one-page board, else OUT-1.svg ... OUT-N.svg."""
    if pages == 1:
        return [out]
    return [out.with_name(f"{out.stem}-{i}{out.suffix or '.svg'}") for i in range(1, pages + 1)]


def run(args: argparse.Namespace) -> int:
    from controller.board_svg import BoardDrawingError, printable
    from controller.rules import load_game
    from controller.sensing.profile import ProfileError, find_profile, profile_ids

    profile = None
    if args.profile and args.no_profile:
        print("facedown print-board: give --profile or --no-profile, not both", file=sys.stderr)
        return 2
    if args.profile:
        try:
            profile = find_profile(args.profile)
        except ProfileError as exc:
            print(f"facedown print-board: {exc}", file=sys.stderr)
            return 2
    game_id = args.game or (profile.game if profile is not None else None)
    if not game_id:
        print("facedown print-board: name a game (facedown games lists them) or give --profile", file=sys.stderr)
        return 2
    game = load_game(game_id)
    if profile is None and not args.no_profile:
        try:
            if game.id in profile_ids():
                profile = find_profile(game.id)
        except ProfileError:
            profile = None
    if args.wiring:
        from controller.hardware.wiring import profile_wiring

        if profile is None:
            print(f"facedown print-board: --wiring needs a hardware profile; {game.id} has no shipped one (give --profile)",
                  file=sys.stderr)
            return 2
        sys.stdout.write(profile_wiring(profile))
        return 0
    if args.schematic:
        from controller.hardware.build import BuildError
        from controller.hardware.schematic import schematic, svg

        if profile is None or not args.out:
            print("facedown print-board: --schematic needs a hardware profile and --out FILE.svg", file=sys.stderr)
            return 2
        try:
            sch = schematic(profile)
        except BuildError as exc:
            print(f"facedown print-board: {exc}", file=sys.stderr)
            return 2
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(svg(sch), encoding="utf-8")
        print(f"{game.name}: schematic of {profile.id}, {len(sch.parts)} parts and {len(sch.nets)} nets: {out}")
        return 0
    if not args.out:
        print("facedown print-board: give --out FILE.svg (or --wiring)", file=sys.stderr)
        return 2
    try:
        job = printable(game, profile=profile, paper=args.paper, pitch=args.pitch, layer=args.layer)
    except BoardDrawingError as exc:
        print(f"facedown print-board: {exc}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    orientation, cols, rows = job.grid
    files = outputs(out, len(job.pages))
    for path, page in zip(files, job.pages, strict=True):
        path.write_text(page, encoding="utf-8")
    print(f"{game.name}: {'' if args.layer == 'board' else args.layer + ' layer, '}board {job.width_mm:g} x {job.height_mm:g} mm "
          f"at pitch {job.pitch:g} mm"
          + (f", channels from {profile.file}" if profile is not None else ", no profile (no channels)"))
    if len(files) > 1:
        out.write_text(job.whole, encoding="utf-8")
        print(f"{len(files)} {args.paper} pages ({orientation}, {cols} x {rows}): {', '.join(str(f) for f in files)}")
        print(f"whole board on one sheet (large-format print, drilling template): {out}")
    else:
        print(f"one {args.paper} page ({orientation}): {out}")
    print("print at 100 % (no 'fit to page'); check the 50 mm scale bar with a ruler")
    if profile is None or profile.sensing in ("reed", "checkin", "hybrid"):
        from controller.board_geometry import layout
        from controller.hardware.mechanics import board_air_gap

        lay = layout(game, pitch=job.pitch, margin=job.pitch * 0.75)
        gap = board_air_gap(game, dict(lay.points), profile)
        for line in gap.lines():
            print(line)
        if not gap.ok:
            print("the reed, magnet or pitch above does not work as designed: see hardware/README.md, section 3 (the test "
                  "jig)")
    return 0
