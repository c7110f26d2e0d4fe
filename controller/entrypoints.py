"""Entry points of the installed distributions, read straight from their metadata folders on ``sys.path``.

What ``importlib.metadata.entry_points(group=...)`` answers for the groups FaceDown reads (``facedown.hooks``,
``facedown.bots``), without importing ``importlib.metadata``: that import alone (its e-mail header parser, zip and
CSV support) costs ~20 ms of CPU here, a sixth of ``facedown play``'s start-up, and several times that on a Pi Zero.
A distribution is a ``NAME-VERSION.dist-info`` or ``NAME.egg-info`` folder holding ``entry_points.txt``; the first
one of a name on ``sys.path`` wins, as with importlib.metadata. Anything this reader does not understand (a zipped
egg, a meta path finder that serves distributions) sends the lookup to importlib.metadata itself.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from typing import Any, NamedTuple


class Dist(NamedTuple):
    name: str


class EntryPoint(NamedTuple):
    """One entry point: ``name = module:attr`` in ``group`` of distribution ``dist``."""

    name: str
    value: str
    group: str
    dist: Dist | None

    def load(self) -> Any:
        module, _, attrs = self.value.partition(":")
        obj: Any = importlib.import_module(module.strip())
        for attr in filter(None, attrs.split("[")[0].strip().split(".")):
            obj = getattr(obj, attr)
        return obj


_NAME = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._]*?)(?:-[^-]*)?\.(?:dist|egg)-info$")


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _plain_sys_path() -> bool:
    """True when every distribution can be found by listing folders (no zip entries, no distribution finders)."""
    if any(hasattr(f, "find_distributions") and not _is_path_finder(f) for f in sys.meta_path):
        return False
    return all(not p or os.path.isdir(p) or not os.path.exists(p) for p in sys.path)


def _is_path_finder(finder: Any) -> bool:
    return getattr(finder, "__name__", "") == "PathFinder" or type(finder).__name__ == "PathFinder"


def _parse(text: str, group: str, dist: Dist) -> list[EntryPoint]:
    out: list[EntryPoint] = []
    section = None
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        if section == group and "=" in line:
            name, _, value = line.partition("=")
            out.append(EntryPoint(name.strip(), value.strip(), group, dist))
    return out


def entry_points(group: str) -> list[EntryPoint]:
    """Every entry point of ``group`` in the installed distributions, in ``sys.path`` order."""
    if not _plain_sys_path():
        from importlib.metadata import entry_points as slow

        return [EntryPoint(ep.name, ep.value, group, Dist(ep.dist.name) if ep.dist else None)
                for ep in slow(group=group)]
    seen: set[str] = set()
    out: list[EntryPoint] = []
    for folder in sys.path:
        try:
            names = sorted(os.listdir(folder or "."))
        except OSError:
            continue
        for entry in names:
            m = _NAME.match(entry)
            if m is None:
                continue
            key = _normal(m.group(1))
            if key in seen:
                continue
            seen.add(key)
            try:
                with open(os.path.join(folder or ".", entry, "entry_points.txt"), encoding="utf-8") as fh:
                    text = fh.read()
            except OSError:
                continue
            out.extend(_parse(text, group, Dist(_dist_name(os.path.join(folder or ".", entry), m.group(1)))))
    return out


def _dist_name(path: str, fallback: str) -> str:
    """The distribution's own name (METADATA's or PKG-INFO's Name:), else the one in its folder name."""
    for meta in ("METADATA", "PKG-INFO"):
        try:
            with open(os.path.join(path, meta), encoding="utf-8") as fh:
                for line in fh:
                    if line.startswith("Name:"):
                        return line[5:].strip()
                    if not line.strip():
                        break
        except OSError:
            continue
    return fallback
