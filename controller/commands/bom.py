"""`facedown bom`: a game's bill of materials for one build, as a table or CSV; or rewrite the generated hardware docs."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("bom", help="parts list and cost of a game's board for one build")
    p.add_argument("game", nargs="?", help="game id or game file")
    p.add_argument("--build", choices=("reed-gpio", "reed-pico", "rfid-pico"), default="reed-gpio",
                   help="reed matrix on the Pi's GPIO (default), reed matrix on a Pico scanner, or RFID on a Pico")
    p.add_argument("--csv", action="store_true", help="print CSV (part, per, each, unit price, quantity, cost)")
    p.add_argument("--sync-docs", action="store_true",
                   help="rewrite hardware/bom/*.csv and the generated tables of hardware/README.md from the code")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import csv

    from controller.hardware import bom

    if args.sync_docs:
        from controller.hardware import wiring

        for path in bom.write_csvs():
            print(f"wrote {path}")
        readme = bom.bom_dir().parent / "README.md"
        text = readme.read_text(encoding="utf-8")
        try:
            new = wiring.refresh_readme(wiring.add_profile_sections(text))
        except wiring.WiringError as exc:
            print(f"facedown bom: {exc}", file=sys.stderr)
            return 2
        if new != text:
            readme.write_text(new, encoding="utf-8")
            print(f"updated {readme}")
        return 0
    if not args.game:
        print("facedown bom: name a game (facedown games lists them), or give --sync-docs", file=sys.stderr)
        return 2
    try:
        bill = bom.bill_of_materials(args.game, args.build)
    except bom.BomError as exc:
        print(f"facedown bom: {args.game}: {exc}", file=sys.stderr)
        return 2
    if args.csv:
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(["part", "per", "each", "unit_price_usd", "quantity", "cost_usd"])
        for line in bill.lines:
            w.writerow([line.part.name, bom.PER_WORDS[line.part.per], f"{line.part.each:g}", f"{line.part.price:.2f}",
                        line.quantity, f"{line.cost:.2f}"])
        w.writerow(["total_usd", "", "", "", "", f"{bill.total:.2f}"])
    else:
        sys.stdout.write(bom.bill_table(bill))
    return 0
