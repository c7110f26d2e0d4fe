"""The club's enrolled tables: each table's name and the public key its signed records must carry, kept in a small
JSON file that `facedown club enroll` writes and the dashboard reads again whenever it changes."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

from .broker import check_table_name
from .results import ResultError

MAX_FILE = 1024 * 1024  # a club of a thousand tables is some 100 kB


def default_path() -> Path:
    base = os.environ.get("XDG_DATA_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "share"
    return root / "facedown" / "club-tables.json"


class Enrolment:
    """Table name -> public key (``ed25519:BASE64``). ``path`` None: kept in memory only (tests, a one-off check)."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path else None
        self._keys: dict[str, str] = {}
        self._seen: tuple[float, int] | None = None
        self._lock = threading.Lock()
        self.version = 0  # moves on whenever the enrolled keys change (the dashboard checks its results again)
        self._reload()

    def _reload(self) -> None:
        if self.path is None:
            return
        try:
            st = self.path.stat()
        except FileNotFoundError:
            if self._keys:
                self._keys, self._seen = {}, None
                self.version += 1
            return
        stamp = (st.st_mtime, st.st_size)
        if stamp == self._seen:
            return
        if st.st_size > MAX_FILE:
            raise ResultError(f"{self.path}: {st.st_size} bytes is larger than {MAX_FILE}: not a club's table list")
        from controller.textfiles import parse_json, read_text

        try:  # bounded and a regular file (textfiles): a FIFO or a device is refused by what it is
            data = parse_json(read_text(self.path, "table list", cap=MAX_FILE), str(self.path))
        except ValueError as exc:
            raise ResultError(f"{self.path}: cannot read the enrolled tables: {exc}") from None
        tables = data.get("tables") if isinstance(data, dict) else None
        if not isinstance(tables, dict):
            raise ResultError(f"{self.path}: expected {{\"tables\": {{NAME: {{\"key\": KEY}}}}}}")
        keys = {}
        for name, entry in tables.items():
            key = entry.get("key") if isinstance(entry, dict) else None
            if not isinstance(key, str):
                raise ResultError(f"{self.path}: table {name!r} has no \"key\"")
            keys[str(name)] = key
        self._keys, self._seen = keys, stamp
        self.version += 1

    def key(self, table: str) -> str | None:
        """The key enrolled for ``table``, or None (the file is read again if it changed)."""
        with self._lock:
            self._reload()
            return self._keys.get(table)

    def refresh(self) -> int:
        """Read the file again if it changed; the version after."""
        with self._lock:
            self._reload()
            return self.version

    def tables(self) -> dict[str, str]:
        with self._lock:
            self._reload()
            return dict(self._keys)

    def enroll(self, table: str, key: str) -> str | None:
        """Enroll ``table`` with ``key`` (checked); the key it replaces, if any. Written atomically."""
        from controller.referee.signing import SignedRecordError, format_key, parse_key

        try:
            name = check_table_name(table)
        except ValueError as exc:
            raise ResultError(f"table {table!r}: {exc}") from None
        try:
            canonical = format_key(parse_key(key))
        except SignedRecordError as exc:
            raise ResultError(str(exc)) from None
        with self._lock:
            self._reload()
            old = self._keys.get(name)
            self._keys[name] = canonical
            self.version += 1
            if self.path is not None:
                self._write()
        return old if old != canonical else None

    def _write(self) -> None:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        doc = {"tables": {n: {"key": k, "enrolled_at": round(time.time(), 3)} for n, k in sorted(self._keys.items())}}
        tmp = self.path.with_name(self.path.name + ".part")
        tmp.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
        tmp.replace(self.path)
        st = self.path.stat()
        self._seen = (st.st_mtime, st.st_size)
