"""Writes controller/rules/games/parsed/ID.json, the JSON mirror of each shipped game file (controller/rules/mirror.py).

The YAML files are the source of truth; run this after changing one (``python tools/mirror_games.py``), and commit
both. ``--check`` writes nothing and exits 1 naming every mirror that is missing, stale or left over.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.docreader import load_yaml  # noqa: E402
from controller.rules.catalog import PACKAGE_GAMES  # noqa: E402
from controller.rules.mirror import MIRRORS, mirror_text  # noqa: E402


def wanted() -> dict[Path, str]:
    """Each mirror file and what it must hold."""
    out: dict[Path, str] = {}
    for path in sorted(PACKAGE_GAMES.glob("*.yaml")):
        text = path.read_text(encoding="utf-8")
        doc = load_yaml(text)
        if json.loads(json.dumps(doc)) != doc:
            raise SystemExit(f"{path}: its document does not survive JSON as it is (keys that are not text, dates?): "
                             "it cannot be mirrored")
        out[MIRRORS / f"{path.stem}.json"] = mirror_text(text, doc)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="write nothing; exit 1 if a mirror is missing or stale")
    args = ap.parse_args(argv)
    want = wanted()
    extra = sorted(set(MIRRORS.glob("*.json")) - set(want))
    stale = [p for p, text in want.items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
    if args.check:
        for p in stale:
            print(f"{p}: missing or stale (python tools/mirror_games.py)")
        for p in extra:
            print(f"{p}: no game file of that name")
        return 1 if stale or extra else 0
    MIRRORS.mkdir(exist_ok=True)
    for p in stale:
        p.write_text(want[p], encoding="utf-8")
        print(f"wrote {p}")
    for p in extra:
        p.unlink()
        print(f"removed {p}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
