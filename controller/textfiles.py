"""Reading the user's text files (game files, profiles, deployments, scripts, saved setups) with clear errors.

Every failure says which file and where in it, and what was expected: a missing file, a directory, a file we
may not read, bytes that are not UTF-8 (with the line and column of the first bad byte), JSON nested deeper
than ``MAX_DEPTH`` or holding a number too long to convert (Python refuses integers over 4,300 digits).
Nothing here lets a traceback reach the user.

Every input is bounded before it is parsed: each kind of file has a size cap (``CAPS``) and a file over it is refused
by its size, unread, with a message naming the file, its size and the cap; only regular files are read (a FIFO, a
device such as ``/dev/zero``, a socket or a symlink to one is refused before it is opened for reading, so nothing
blocks or reads forever); standard input and line-by-line input (``read_stdin``, ``bounded_lines``) stop at the cap.

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
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

from controller.errors import FaceDownError

#: Deepest nesting of brackets we parse; FaceDown's documents need fewer than ten levels.
MAX_DEPTH = 200


#: The largest file of each kind FaceDown reads, in bytes. The shipped files are far smaller: the largest game file
#: is 32 kB, a hardware profile 3 kB, a real Gravon game a few kB (the longest of the packaged 22 is 27 kB), the
#: Ataraxos file of classic human setups 2.6 MB.
CAPS: dict[str, int] = {
    "game file": 256 * 1024,
    "hardware profile": 64 * 1024,
    "deployment file": 64 * 1024,
    "deployment": 64 * 1024,  # on standard input
    "saved deployment": 32 * 1024,
    "script": 16 * 1024 * 1024,
    "Gravon file": 1024 * 1024,
    "Ataraxos file": 16 * 1024 * 1024,
    "tag map": 1024 * 1024,
    "file": 16 * 1024 * 1024,
}
#: The longest line read line by line (a script line, a bot's protocol line): a line is one small JSON object.
MAX_LINE = 64 * 1024


class InputFileError(FaceDownError, ValueError):
    """A file the user gave cannot be read or parsed; the message names the file and the place."""


def size_text(n: int) -> str:
    """A byte count as people read it: ``512 bytes``, ``64 kB``, ``1.5 MB`` (powers of 1,024).

    >>> size_text(512), size_text(64 * 1024), size_text(90 * 1024 * 1024 + 1)
    ('512 bytes', '64 kB', '90.0 MB')
    """
    if n < 1024:
        return f"{n} bytes"
    if n < 1024 * 1024:
        return f"{n / 1024:.0f} kB" if n % 1024 == 0 else f"{n / 1024:.1f} kB"
    return f"{n / 1024 / 1024:.0f} MB" if n % (1024 * 1024) == 0 else f"{n / 1024 / 1024:.1f} MB"


def _a(what: str) -> str:
    return f"an {what}" if what[:1] in "aeiouAEIOU" else f"a {what}"


def too_large(where: str, size: int | None, cap: int, what: str) -> InputFileError:
    """The error for input over its cap, naming it, its size (when known before reading) and the cap."""
    if size is None:
        return InputFileError(f"{where}: larger than {_a(what)} may be (at most {size_text(cap)}); it was not used")
    near = size < cap + cap // 10  # "1.0 MB is larger than 1 MB" reads wrong: say the bytes
    got, most = (f"{size:,} bytes", f"{cap:,} bytes") if near else (size_text(size), size_text(cap))
    return InputFileError(f"{where}: {got} is too large for {_a(what)} (at most {most}); nothing was read")


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words; None for a regular file."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_bytes(path: str | Path, what: str = "file", cap: int | None = None) -> bytes:
    """The bytes of the regular file ``path``, at most ``cap`` (default: ``CAPS[what]``), else InputFileError.

    The file is looked at before it is opened: a directory, FIFO, device or socket (or a symlink to one) is refused
    without reading, and a file over the cap is refused by its size. It is then opened without blocking and read
    no further than the cap, so a file that grows meanwhile is refused too."""
    p = Path(path)
    cap = CAPS.get(what, CAPS["file"]) if cap is None else cap
    try:
        st = os.stat(p)
        kind = _kind(st.st_mode)
        if kind is not None:
            link = f" (a symlink to {os.path.realpath(p)})" if os.path.islink(p) else ""
            raise InputFileError(f"{p}: is {kind}{link}, not {_a(what)}")
        if st.st_size > cap:
            raise too_large(str(p), st.st_size, cap, what)
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        if os.path.islink(p):
            raise InputFileError(f"{p}: no such {what} (a symlink to {os.readlink(p)}, which does not exist)") from None
        raise InputFileError(f"{p}: no such {what}") from None
    except NotADirectoryError:
        raise InputFileError(f"{p}: no such {what} (a part of the path is not a folder)") from None
    except PermissionError:
        raise InputFileError(f"{p}: not allowed to read this {what}") from None
    except OSError as exc:
        raise InputFileError(f"{p}: cannot read the {what} ({exc.strerror or exc})") from None
    try:
        kind = _kind(os.fstat(fd).st_mode)
        if kind is not None:  # swapped for something else between the look and the open
            raise InputFileError(f"{p}: is {kind}, not {_a(what)}")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(cap + 1)
    except OSError as exc:
        raise InputFileError(f"{p}: cannot read the {what} ({exc.strerror or exc})") from None
    finally:
        os.close(fd)
    if len(data) > cap:
        raise too_large(str(p), None, cap, what)
    return data


def read_text(path: str | Path, what: str = "file", cap: int | None = None) -> str:
    """The UTF-8 text of ``path`` (``what`` says what it should be: "deployment file", "game file"...), read by
    ``read_bytes`` (so bounded by ``cap``, default ``CAPS[what]``, and regular files only)."""
    return decode(read_bytes(path, what, cap), str(Path(path)), what)


def read_stdin(what: str, stream: IO[bytes] | None = None, cap: int | None = None) -> str:
    """Standard input (or the binary ``stream``) as UTF-8 text, read no further than ``cap`` (``CAPS[what]``)."""
    import sys

    stream = sys.stdin.buffer if stream is None else stream
    cap = CAPS.get(what, CAPS["file"]) if cap is None else cap
    data = stream.read(cap + 1)
    if len(data) > cap:
        raise too_large("<stdin>", None, cap, what)
    return decode(data, "<stdin>", what)


def bounded_lines(stream: IO[bytes], where: str, what: str = "file", cap: int = MAX_LINE) -> Iterator[tuple[int, str]]:
    """(line number, text without its line end) for each line of the binary ``stream`` as it arrives, each read no
    further than ``cap`` bytes: a longer line is an InputFileError naming ``where``, the line and the cap (nothing
    of it is kept), and so is a line that is not UTF-8. Reads one line at a time, so it suits standard input that
    is still being written (``for n, text in bounded_lines(sys.stdin.buffer, "<stdin>", "script")``)."""
    lineno = 0
    while True:
        raw = stream.readline(cap + 1)
        if not raw:
            return
        lineno += 1
        if len(raw) > cap and not raw.endswith(b"\n"):
            raise InputFileError(f"{where}: line {lineno} is longer than {_a(what)} line may be "
                                 f"(more than {size_text(cap)} without a line end)")
        yield lineno, decode(raw, where, what, first_line=lineno).rstrip("\r\n")


def decode(data: bytes, where: str, what: str = "file", first_line: int = 1) -> str:
    """``data`` as UTF-8 text (a leading byte-order mark is dropped), or where the first bad byte is (lines counted
    from ``first_line``)."""
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
