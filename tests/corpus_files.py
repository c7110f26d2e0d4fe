"""The package's record collections as folders for the tests: extracted once per test run into a temporary folder
(removed at exit), so the record tests read files exactly as a user's ``--corpus DIR`` would, and never ../shared."""

from __future__ import annotations

import atexit
import shutil
import tempfile
from functools import cache
from pathlib import Path

from controller.records.corpus import packaged


@cache
def _root() -> Path:
    root = Path(tempfile.mkdtemp(prefix="facedown-corpus-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    return root


def corpus(name: str) -> Path:
    """The folder holding the packaged collection ``name`` (``gravon-stratego``, ``ataraxos-stratego``)."""
    return packaged(name).extract(_root())
