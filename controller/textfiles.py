"""Reading the user's text files (game files, profiles, deployments, scripts, saved setups) with clear errors.

Every failure says which file and where in it, and what was expected: a missing file, a directory, a file we
may not read, bytes that are not UTF-8 (with the line and column of the first bad byte), JSON nested deeper
than ``MAX_DEPTH`` or holding a number too long to convert (Python refuses integers over 4,300 digits).
Nothing here lets a traceback reach the user.

>>> parse_json('{"a": [1, 2]}', "x.json")
{'a': [1, 2]}
>>> try:
...     parse_json("[" * 5000 + "]" * 5000, "deep.json")
... except InputFileError as exc:
...     print(exc)
deep.json: nested more than 200 levels deep (expected a flat document)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from controller.errors import FaceDownError

#: Deepest nesting of brackets we parse; FaceDown's documents need fewer than ten levels.
MAX_DEPTH = 200


class InputFileError(FaceDownError, ValueError):
    """A file the user gave cannot be read or parsed; the message names the file and the place."""


def read_text(path: str | Path, what: str = "file") -> str:
    """The UTF-8 text of ``path`` (``what`` says what it should be: "deployment file", "game file"...)."""
    p = Path(path)
    try:
        data = p.read_bytes()
    except FileNotFoundError:
        raise InputFileError(f"{p}: no such {what}") from None
    except IsADirectoryError:
        raise InputFileError(f"{p}: is a directory, not a {what}") from None
    except PermissionError:
        raise InputFileError(f"{p}: not allowed to read this {what}") from None
    except OSError as exc:
        raise InputFileError(f"{p}: cannot read the {what} ({exc.strerror or exc})") from None
    return decode(data, str(p), what)


def decode(data: bytes, where: str, what: str = "file", first_line: int = 1) -> str:
    """``data`` as UTF-8 text (a leading byte-order mark is dropped), or where the first bad byte is; ``data`` starts
    at line ``first_line`` of ``where`` (a stream read line by line)."""
    try:
        return data.decode("utf-8-sig" if first_line == 1 else "utf-8")
    except UnicodeDecodeError as exc:
        data = exc.object  # without a byte-order mark: the offsets count from there
        before = data[:exc.start]
        line = before.count(b"\n") + first_line
        column = exc.start - (before.rfind(b"\n") + 1) + 1
        raise InputFileError(f"{where}: line {line}, column {column}: byte 0x{data[exc.start]:02X} is not UTF-8 text "
                             f"(save the {what} as UTF-8)") from None


def nesting_depth(text: str) -> int:
    """The deepest bracket nesting in ``text`` (brackets inside strings count too: a cheap upper bound)."""
    depth = deepest = 0
    for ch in text:
        if ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


def parse_json(text: str, where: str) -> Any:
    """JSON ``text`` parsed, or InputFileError naming ``where`` and the line and column of the problem."""
    if ("[" in text or "{" in text) and nesting_depth(text) > MAX_DEPTH:
        raise InputFileError(f"{where}: nested more than {MAX_DEPTH} levels deep (expected a flat document)")
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputFileError(f"{where}: line {exc.lineno}, column {exc.colno}: not JSON ({exc.msg})") from None
    except RecursionError:
        raise InputFileError(f"{where}: nested too deeply (expected a flat document)") from None
    except ValueError as exc:  # an integer over Python's 4,300-digit limit
        raise InputFileError(f"{where}: a number too long to read ({str(exc).split(':')[0]})") from None
