"""The package's game files as JSON documents (``games/parsed/ID.json``), each with the SHA-256 of the YAML text it
was made from, so a shipped game whose file is unchanged is read with ``json`` instead of PyYAML (importing PyYAML and
parsing Stratego cost ~16 ms of CPU here, most of a quarter second on a Pi Zero). ``tools/mirror_games.py`` writes
them; a test checks every mirror matches its YAML. Only the package's own folder is mirrored: a user's game file is
always read as YAML, with every check ``controller.docreader`` makes.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from .catalog import PACKAGE_GAMES

#: Where the mirrors live.
MIRRORS = PACKAGE_GAMES / "parsed"


def mirror_path(path: Path) -> Path | None:
    """The mirror of the game file at ``path``, None for a file outside the package's games folder."""
    if path.parent.absolute() != PACKAGE_GAMES.absolute():
        return None
    return MIRRORS / f"{path.stem}.json"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def mirrored(path: Path, text: str) -> Any | None:
    """The document of the package's game file at ``path`` when its mirror was made from exactly ``text``, else None
    (no mirror, an unreadable one, or the file changed since: then the YAML is read)."""
    where = mirror_path(path)
    if where is None:
        return None
    try:
        with open(where, encoding="utf-8") as fh:
            data = json.load(fh)
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("source_sha256") != digest(text):
        return None
    return data.get("document")


def mirror_text(text: str, document: Any) -> str:
    """What the mirror of a game file with this YAML ``text`` and loaded ``document`` holds."""
    return json.dumps({"source_sha256": digest(text), "document": document}, ensure_ascii=False,
                      separators=(",", ":")) + "\n"
