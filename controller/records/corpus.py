"""The record collections that ship inside the package (``controller/records/data/*.tar.xz``): the 22 Gravon
Stratego games and the Ataraxos data (human setups, chase-rule games), each with its README and licence.

A collection is read into memory the first time it is asked for (about 5 MB raw for both), so the features that use
it (``facedown setups import-human``, the record tests) work after a plain ``pip install`` with no checkout beside
them. ``Collection.extract`` writes it out for tools that want files. ``folder`` gives the same view of a folder laid
out the same way (a newer corpus, ``--corpus DIR``).
"""

from __future__ import annotations

import fnmatch
import tarfile
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path

from . import RecordError

#: The collections packed by tools/pack_corpus.py.
COLLECTIONS = ("ataraxos-stratego", "gravon-stratego")


@dataclass(frozen=True)
class Collection:
    """A read-only set of files: ``name`` says where they came from in messages (``gravon-stratego/games/x.xml``)."""

    name: str
    files: dict[str, bytes]

    def glob(self, pattern: str) -> list[str]:
        """Member paths matching ``pattern`` (``games/*.xml``), sorted."""
        return sorted(m for m in self.files if fnmatch.fnmatchcase(m, pattern))

    def where(self, member: str) -> str:
        return f"{self.name}/{member}"

    def read_text(self, member: str, encoding: str = "utf-8") -> str:
        try:
            data = self.files[member]
        except KeyError:
            raise RecordError(f"{self.name}: no file {member!r}") from None
        try:
            return data.decode(encoding)
        except UnicodeDecodeError as exc:
            raise RecordError(f"{self.where(member)}: not {encoding} text (byte {exc.start})") from None

    def extract(self, dest: Path) -> Path:
        """Write the collection under ``dest/NAME`` (once; an existing copy is reused) and return that folder."""
        root = Path(dest) / Path(self.name).name
        for member, data in self.files.items():
            path = root / member
            if not path.exists():
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(data)
        return root


@cache
def packaged(name: str) -> Collection:
    """One of the collections in the package, read once per process."""
    if name not in COLLECTIONS:
        raise RecordError(f"no packaged collection {name!r}; there are {', '.join(COLLECTIONS)}")
    ref = resources.files(__package__).joinpath("data", f"{name}.tar.xz")
    files: dict[str, bytes] = {}
    try:
        with ref.open("rb") as raw, tarfile.open(fileobj=raw, mode="r:xz") as tar:
            for info in tar:
                handle = tar.extractfile(info) if info.isfile() else None
                if handle is not None:
                    files[info.name] = handle.read()
    except (OSError, tarfile.TarError) as exc:
        raise RecordError(f"the packaged collection {name} cannot be read ({exc}); reinstall FaceDown") from None
    return Collection(name, files)


#: The most a ``--corpus`` folder may hold in all (the packaged collections are about 5 MB).
MAX_FOLDER_BYTES = 32 * 1024 * 1024


def folder(path: str | Path) -> Collection:
    """A folder laid out like a packaged collection (every regular file under it, read now, each at most the
    Ataraxos file cap and all together at most MAX_FOLDER_BYTES; a FIFO or device in it is refused by name)."""
    from controller.textfiles import InputFileError, read_bytes, size_text

    root = Path(path)
    if not root.is_dir():
        raise RecordError(f"{root}: no such folder")
    paths = [p for p in sorted(root.rglob("*")) if not p.is_dir()]
    total = sum(p.stat().st_size for p in paths if p.is_file())
    if total > MAX_FOLDER_BYTES:
        raise RecordError(f"{root}: holds {size_text(total)} of files, more than a record collection may (at most "
                          f"{size_text(MAX_FOLDER_BYTES)}; is it the right folder?)")
    try:
        return Collection(str(root), {p.relative_to(root).as_posix(): read_bytes(p, "Ataraxos file") for p in paths})
    except InputFileError as exc:
        raise RecordError(str(exc)) from None
