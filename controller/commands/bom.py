"""`facedown bom`: the bill of materials of a game's build (or of one profile), as a table or CSV; or rewrite the
generated hardware docs."""

from __future__ import annotations

import argparse
import sys


def register(sub: argparse._SubParsersAction) -> None:
    from controller.hardware.build import BUILDS

    p = sub.add_parser("bom", help="parts list, reader fit, power budget and cost of a game's board for one build")
    p.add_argument("game", nargs="?", help="game id or game file")
    p.add_argument("--build", choices=BUILDS, default="reed-gpio",
                   help="reed-gpio (default): reed matrix on the Pi's GPIO; reed-pico: reeds on a Pico scanner; "
                        "reed-pico-pad: that plus one RFID reader as a check-in pad; rfid-pico: a reader under each "
                        "station; hybrid-pico: reeds and a reader under each station")
    p.add_argument("--profile", help="price this hardware profile (a file or a shipped profile's name) instead")
    p.add_argument("--csv", action="store_true", help="print CSV (part, per, unit price, quantity, cost)")
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
    try:
        if args.profile:
            from controller.sensing.profile import find_profile

            bill = bom.bill_for(find_profile(args.profile))
        elif args.game:
            bill = bom.bill_of_materials(args.game, args.build)
        else:
            print("facedown bom: name a game (facedown games lists them) or give --profile, or --sync-docs", file=sys.stderr)
            return 2
    except bom.BomError as exc:
        print(f"facedown bom: {exc}", file=sys.stderr)
        return 2
    if args.csv:
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(["part", "per", "unit_price_usd", "quantity", "cost_usd"])
        for line in bill.lines:
            w.writerow([line.part.name, line.part.per, f"{line.part.price:.2f}", line.quantity, f"{line.cost:.2f}"])
        w.writerow(["optional_lights_usd (in the total)", "", "", "", f"{bill.lights_cost:.2f}"])
        w.writerow(["total_usd", "", "", "", f"{bill.total:.2f}"])
    else:
        sys.stdout.write(bom.bill_table(bill))
    return 0
