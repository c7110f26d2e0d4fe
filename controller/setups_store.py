"""Saved deployments on the Pi: one JSON file per deployment under the user's data dir, checked with the game's
setup rules before it is saved, so a saved deployment is always one the referee accepts.

Layout: ``$XDG_DATA_HOME/facedown/setups/<game>/<side>/<name>.json`` (else ``~/.local/share/...``), each file
``{"game", "side", "name", "placement": {station: piece id}, "saved": unix time}``.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from controller.errors import FaceDownError
from controller.rules import GameDef
from controller.rules.errors import SetupProblem
from controller.rules.setup import check_deployment

_NAME = re.compile(r"^[\w][\w .()'-]{0,39}$")
#: Bounds, so that a page (or a script) saving deployments in a loop cannot fill the SD card: saved deployments
#: per game and side, and the size of one saved file (a 100-station deployment takes about 3 kB).
MAX_PER_SIDE = 50
MAX_FILE_BYTES = 32 * 1024


class SetupStoreError(FaceDownError, ValueError):
    """A deployment cannot be saved or read: a bad name, an unknown side, or a deployment the rules refuse."""

    def __init__(self, message: str, problems: list[SetupProblem] | None = None) -> None:
        super().__init__(message)
        self.problems = problems or []


@dataclass(frozen=True)
class SavedSetup:
    """One saved deployment."""

    game: str
    side: str
    name: str
    placement: dict[str, str]
    saved: float

    def to_json(self) -> dict[str, Any]:
        return {"game": self.game, "side": self.side, "name": self.name, "placement": dict(self.placement), "saved": self.saved}


def default_root() -> Path:
    """``$XDG_DATA_HOME/facedown/setups``, else ``~/.local/share/facedown/setups``."""
    base = os.environ.get("XDG_DATA_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "facedown" / "setups"


class SetupStore:
    """The saved deployments under ``root`` (default: the user's data dir)."""

    def __init__(self, root: str | os.PathLike[str] | None = None) -> None:
        self.root = Path(root) if root is not None else default_root()

    def _dir(self, game: GameDef, side: str) -> Path:
        if side not in game.sides:
            raise SetupStoreError(f"{game.id} has no side {side!r}; sides are {', '.join(game.sides)}")
        return self.root / game.id / side

    @staticmethod
    def check_name(name: str) -> str:
        name = (name or "").strip()
        if not _NAME.match(name) or name in (".", ".."):
            raise SetupStoreError("a deployment name is 1-40 letters, digits, spaces or . ( ) ' - and starts with a letter or digit")
        return name

    def save(self, game: GameDef, side: str, name: str, placement: Mapping[str, str],
             options: Mapping[str, Any] | None = None) -> SavedSetup:
        """Check ``placement`` with the game's setup rules and save it under ``name`` (replacing one of that name)."""
        name = self.check_name(name)
        folder = self._dir(game, side)
        if not isinstance(placement, Mapping) or not all(isinstance(k, str) and isinstance(v, str) for k, v in placement.items()):
            raise SetupStoreError("a deployment is a mapping of station to piece id")
        problems = check_deployment(game, side, placement, options)
        if problems:
            raise SetupStoreError(f"not saved: the deployment has {len(problems)} problem(s)", problems)
        saved = SavedSetup(game.id, side, name, dict(placement), time.time())
        text = json.dumps(saved.to_json(), ensure_ascii=False, indent=1, sort_keys=True)
        if len(text.encode()) > MAX_FILE_BYTES:
            raise SetupStoreError(f"not saved: a deployment file may take {MAX_FILE_BYTES // 1024} kB at most")
        folder.mkdir(parents=True, exist_ok=True)
        if not (folder / f"{name}.json").exists() and len(list(folder.glob("*.json"))) >= MAX_PER_SIDE:
            raise SetupStoreError(f"not saved: {side} already has {MAX_PER_SIDE} saved deployments for {game.id}; "
                                  "delete one first, or save under an existing name to replace it")
        tmp = folder / f".{name}.json.tmp"
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, folder / f"{name}.json")
        return saved

    def list(self, game: GameDef, side: str) -> list[SavedSetup]:
        """Every readable saved deployment of ``side`` in ``game``, newest first (unreadable files are skipped)."""
        folder = self._dir(game, side)
        out = []
        for path in folder.glob("*.json"):
            try:
                out.append(self._read(path, game, side))
            except SetupStoreError:
                continue
        return sorted(out, key=lambda s: (-s.saved, s.name))

    def load(self, game: GameDef, side: str, name: str) -> SavedSetup:
        path = self._dir(game, side) / f"{self.check_name(name)}.json"
        if not path.exists():
            raise SetupStoreError(f"no saved deployment {name!r} for {side} in {game.id}")
        return self._read(path, game, side)

    def delete(self, game: GameDef, side: str, name: str) -> None:
        path = self._dir(game, side) / f"{self.check_name(name)}.json"
        if not path.exists():
            raise SetupStoreError(f"no saved deployment {name!r} for {side} in {game.id}")
        path.unlink()

    @staticmethod
    def _read(path: Path, game: GameDef, side: str) -> SavedSetup:
        from controller.textfiles import parse_json, read_text

        try:  # bounded, regular files only: a FIFO or /dev/zero put here is refused, never waited on or read
            data = parse_json(read_text(path, "saved deployment", MAX_FILE_BYTES), str(path))
            placement = data["placement"]
            if not isinstance(placement, dict):
                raise TypeError("placement")
            return SavedSetup(game.id, side, str(data.get("name") or path.stem), {str(k): str(v) for k, v in placement.items()},
                              float(data.get("saved") or 0.0))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SetupStoreError(f"{path}: not a saved deployment ({str(exc).removeprefix(f'{path}: ')})") from None
