"""Pack the record collections the features and tests use into the package (controller/records/data/NAME.tar.xz).

Run from the repository root with the corpus folder beside it:
``python tools/pack_corpus.py ../shared/corpus``. Deterministic: members sorted, times and owners zeroed, so packing
the same files twice gives the same bytes. Only what the project reads is packed (the Halbersma Barrage index is not).
"""

from __future__ import annotations

import io
import lzma
import sys
import tarfile
from pathlib import Path

#: collection -> the files (globs under its folder) that ship; provenance and licence files first.
COLLECTIONS = {
    "ataraxos-stratego": ["README.md", "LICENSE.upstream", "human_setups/*.dat", "continuous_chase_games_classic/*.txt",
                          "continuous_chase_games_barrage/*.txt", "misc_games/*.txt"],
    "gravon-stratego": ["README.md", "index.csv", "games/*.xml"],
}
OUT = Path(__file__).resolve().parents[1] / "controller" / "records" / "data"


def pack(src: Path, name: str) -> Path:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for pattern in COLLECTIONS[name]:
            for path in sorted((src / name).glob(pattern)):
                data = path.read_bytes()
                info = tarfile.TarInfo(path.relative_to(src / name).as_posix())
                info.size, info.mtime, info.mode = len(data), 0, 0o644
                tar.addfile(info, io.BytesIO(data))
    out = OUT / f"{name}.tar.xz"
    out.write_bytes(lzma.compress(buf.getvalue(), preset=9 | lzma.PRESET_EXTREME))
    return out


def main(argv: list[str]) -> int:
    if len(argv) != 1 or not Path(argv[0]).is_dir():
        print("usage: python tools/pack_corpus.py CORPUS_DIR", file=sys.stderr)
        return 2
    for name in COLLECTIONS:
        out = pack(Path(argv[0]), name)
        print(f"{out.relative_to(OUT.parents[2])}: {out.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
