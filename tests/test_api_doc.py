"""docs/api.md's examples run as written (a doctest of the page)."""

from __future__ import annotations

import doctest
from pathlib import Path

API = Path(__file__).resolve().parents[1] / "docs" / "api.md"


def test_api_page_examples() -> None:
    result = doctest.testfile(str(API), module_relative=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
                              verbose=False, report=True)
    assert result.attempted >= 25 and result.failed == 0
