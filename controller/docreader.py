"""Walks a parsed YAML document (a game file, a hardware profile) so every complaint names the file, the path
inside the document and what was expected."""

from __future__ import annotations

from collections.abc import Collection
from typing import Any


def kind_of(value: Any) -> str:
    """A value's kind as a sentence says it: 'a mapping', 'a list', 'text', 'nothing'..."""
    return {dict: "a mapping", list: "a list", str: "text", type(None): "nothing"}.get(type(value), type(value).__name__)


def join(where: str, key: str | int) -> str:
    """The path of ``key`` inside ``where``: ``pieces[3]``, ``setup.zones``."""
    if isinstance(key, int):
        return f"{where}[{key}]"
    return f"{where}.{key}" if where else key


class DocReader:
    """Checks the shapes every document shares; ``error`` is the exception class a failure raises, built as
    ``error(file, where, expected)``."""

    error: type[Exception] = ValueError

    def __init__(self, file: str) -> None:
        self.file = file

    def fail(self, where: str, expected: str) -> Exception:
        return self.error(self.file, where or "(top level)", expected)

    def mapping(self, value: Any, where: str, *, allowed: Collection[str] | None = None, required: Collection[str] = frozenset()) -> dict:
        if not isinstance(value, dict):
            raise self.fail(where, f"expected a mapping, got {kind_of(value)}")
        for key in value:
            if not isinstance(key, str):
                raise self.fail(where, f"expected text keys, got {key!r}")
            if allowed is not None and key not in allowed:
                raise self.fail(join(where, key), f"unknown key; expected one of: {', '.join(sorted(allowed))}")
        for key in sorted(required):
            if key not in value:
                raise self.fail(join(where, key), "required key is missing")
        return value

    def seq(self, value: Any, where: str, *, nonempty: bool = False) -> list:
        if not isinstance(value, list):
            raise self.fail(where, f"expected a list, got {kind_of(value)}")
        if nonempty and not value:
            raise self.fail(where, "expected a non-empty list")
        return value

    def text(self, value: Any, where: str) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"expected text, got {kind_of(value)}")
        return value

    def boolean(self, value: Any, where: str) -> bool:
        if not isinstance(value, bool):
            raise self.fail(where, f"expected true or false, got {value!r}")
        return value

    def one_of(self, value: Any, where: str, choices: Collection[Any], what: str) -> Any:
        if value not in choices:
            listed = choices if isinstance(choices, list | tuple) else sorted(choices, key=str)
            raise self.fail(where, f"expected {what} (one of: {', '.join(map(str, listed))}), got {value!r}")
        return value
