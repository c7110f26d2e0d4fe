"""The tag map: which RFID tag (uid) is which piece, kept on the Pi in a JSON file and never written to a tag.

Enrolment goes one piece at a time in a fixed order (side, then piece kind in the game's order, then copy), and
the file is saved after every tag, so an interrupted enrolment resumes where it stopped.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.errors import FaceDownError

from .base import Snapshot


class DuplicateTagError(FaceDownError, ValueError):
    """This tag is already enrolled as another piece."""


@dataclass(frozen=True, slots=True)
class TagEntry:
    side: str
    piece: str
    copy: int  # 1..count of this kind

    def label(self, names: dict[str, str] | None = None) -> str:
        name = (names or {}).get(self.piece, self.piece)
        return f"{self.side}'s {name} #{self.copy}"


def data_dir() -> Path:
    """FACEDOWN_DATA_DIR, else $XDG_DATA_HOME/facedown, else ~/.local/share/facedown."""
    if os.environ.get("FACEDOWN_DATA_DIR"):
        return Path(os.environ["FACEDOWN_DATA_DIR"])
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "facedown"


def default_path(game: str) -> Path:
    return data_dir() / f"tags-{game}.json"


class TagMap:
    """uid -> TagEntry for one game, persisted at ``path``."""

    def __init__(self, game: str, path: Path, entries: dict[str, TagEntry] | None = None) -> None:
        self.game = game
        self.path = Path(path)
        self.entries: dict[str, TagEntry] = dict(entries or {})

    @classmethod
    def load(cls, game: str, path: Path | None = None) -> TagMap:
        path = Path(path) if path else default_path(game)
        if not path.exists():
            return cls(game, path)
        from controller.textfiles import InputFileError, parse_json, read_text

        try:
            doc = parse_json(read_text(path, "tag map"), str(path))
            if doc.get("game") != game:
                raise ValueError(f"it is the tag map of {doc.get('game')!r}, not {game!r}")
            entries = {uid: TagEntry(e["side"], e["piece"], int(e["copy"])) for uid, e in doc["tags"].items()}
        except InputFileError as exc:  # an InputFileError (a ValueError): a message on the command line, no traceback
            raise InputFileError(f"{path}: not a usable tag map: {str(exc).removeprefix(f'{path}: ')}") from None
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise InputFileError(f"{path}: not a usable tag map: {exc}") from None
        return cls(game, path, entries)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        doc: dict[str, Any] = {"game": self.game, "tags": {
            uid: {"side": e.side, "piece": e.piece, "copy": e.copy} for uid, e in sorted(self.entries.items())}}
        tmp = self.path.with_suffix(".tmp")
        tmp.write_text(json.dumps(doc, indent=1) + "\n")
        tmp.replace(self.path)

    def lookup(self, uid: str) -> TagEntry | None:
        return self.entries.get(uid.upper())

    def add(self, uid: str, entry: TagEntry) -> None:
        uid = uid.upper()
        if uid in self.entries:
            raise DuplicateTagError(f"tag {uid} is already enrolled as {self.entries[uid].label()}")
        if entry in self.entries.values():
            raise DuplicateTagError(f"{entry.label()} already has a tag")
        self.entries[uid] = entry

    def clear(self) -> None:
        self.entries.clear()
        if self.path.exists():
            self.path.unlink()

    def missing(self, game: Any) -> list[TagEntry]:
        """The pieces of ``game`` (a GameDef) still without a tag, in enrolment order."""
        have = set(self.entries.values())
        return [e for side in game.sides for p in game.pieces for c in range(1, p.count + 1)
                if (e := TagEntry(side, p.id, c)) not in have]


def enroll(tagmap: TagMap, game: Any, snapshots: Iterator[Snapshot], say: Callable[[str], None],
           limit: int | None = None, where: str = "on any station") -> int:
    """Teach the map one piece at a time: prompt, wait for a tag that was not on the board before, record, save.

    ``snapshots`` yields the board as it changes (ends when the board stops). Returns how many tags were enrolled.
    """
    names = {p.id: p.name for p in game.pieces}
    todo = tagmap.missing(game)
    if limit is not None:
        todo = todo[:limit]
    if not todo:
        say(f"every piece of {game.id} already has a tag ({len(tagmap.entries)} tags)")
        return 0
    done = 0
    seen: set[str] = set()
    first = True
    for entry in todo:
        say(f"place {entry.label(names)} {where}")
        while True:
            snap = next(snapshots, None)
            if snap is None:
                say(f"board stopped; {done} tags enrolled, resume later to continue")
                return done
            now = {t.upper() for t in snap.tags.values()}
            new = now - seen
            seen = now
            if first:  # tags already on the board when we started are not answers
                first = False
                if new:
                    say("(tags already on the board are ignored; lift them when you like)")
                continue
            if not new:
                continue
            uid = sorted(new)[0]
            try:
                tagmap.add(uid, entry)
            except DuplicateTagError as exc:
                say(f"{exc}; take it off and place {entry.label(names)}")
                continue
            tagmap.save()
            done += 1
            say(f"tag {uid} is {entry.label(names)}")
            break
    return done
