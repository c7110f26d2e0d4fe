"""Readers for the Ataraxos test data (github.com/StrategoAI/ataraxos, MIT): human Stratego setups (``*.dat``) and
rule-edge-case games (``*.txt``). Formats as the corpus README describes them; nothing of Ataraxos's code is used.

Setup lines: 40 Gravon letters for Red (``B``..``M``, ``A`` empty), the Gravon setup string written backwards, so
the reversed line reads back row first, column a first. Game files: line 1 the whole board (Gravon letters, ``a``
empty, ``_`` lake, square ``10*row + column``), then one move number (0..1799) per line, Red first.

>>> human_setup("AAAAALAAKAAAAAAEAACADAAAAAAAABDAAAAAAAAM")["a1"]
'flag'
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from . import RecordError
from .corpus import Collection, folder, packaged
from .gravon import BLUE_LETTERS, FILES, LAKE, LAKES, PIECES, RED_LETTERS

EMPTY = "A"
_RED = dict(zip(RED_LETTERS, PIECES, strict=True))
_BLUE = dict(zip(BLUE_LETTERS, PIECES, strict=True))
#: Which game each setup file is for.
#: An Ataraxos data folder to use instead of the one in the package (`facedown setups --corpus` overrides it).
CORPUS_ENV = "FACEDOWN_ATARAXOS"
SETUP_FILES = {"classic": ("classic_human_setups.dat", "stratego"), "barrage": ("barrage_human_setups.dat", "stratego_barrage")}


def station(index: int) -> str:
    """Square ``10*row + column`` (row 0 is Red's back row) as a FaceDown station: 0 -> a1, 99 -> j10."""
    return f"{FILES[index % 10]}{index // 10 + 1}"


def human_setup(line: str, where: str = "setup") -> dict[str, str]:
    """Red's deployment {station: piece id} from one 40-letter setup line; RecordError names the bad character's square."""
    text = line.strip()
    if len(text) != 40:
        raise RecordError(f"{where}: expected 40 letters, got {len(text)}")
    out: dict[str, str] = {}
    for i, ch in enumerate(reversed(text)):
        if ch == EMPTY:
            continue
        if ch not in _RED:
            col = 39 - i  # position in the line as written, counting from 0
            raise RecordError(f"{where}: character {col + 1} ({station(i)}): unknown piece letter {ch!r} (Red letters {RED_LETTERS}, empty {EMPTY})")
        out[station(i)] = _RED[ch]
    return out


def as_blue(red: dict[str, str]) -> dict[str, str]:
    """The same deployment for Blue, turned half a turn so it looks the same from Blue's side of the table."""
    out = {}
    for st, piece in red.items():
        col, row = FILES.index(st[0]), int(st[1:])
        out[f"{FILES[9 - col]}{11 - row}"] = piece
    return out


def collection(corpus: str | None = None) -> Collection:
    """The Ataraxos data: the folder ``corpus``, else $FACEDOWN_ATARAXOS if set, else the package's own copy."""
    chosen = corpus or os.environ.get(CORPUS_ENV)
    return folder(chosen) if chosen else packaged("ataraxos-stratego")


def setups_member(kind: str) -> str:
    """The setups file of ``kind`` (classic or barrage) inside the Ataraxos collection."""
    if kind not in SETUP_FILES:
        raise RecordError(f"no human setups of kind {kind!r}; kinds are {', '.join(SETUP_FILES)}")
    return f"human_setups/{SETUP_FILES[kind][0]}"


def setups_path(corpus: Path, kind: str) -> Path:
    """The setups file of ``kind`` under an Ataraxos corpus folder."""
    return corpus / setups_member(kind)


def read_setups(path: str | Path) -> Iterator[tuple[int, dict[str, str]]]:
    """(line number, Red deployment) for every setup line of a ``*.dat`` file; comment lines (``#``) are skipped."""
    for n, line in setup_lines(path):
        yield n, human_setup(line, f"{path}: line {n}")


def parse_setup_lines(text: str) -> list[tuple[int, str]]:
    """(line number, raw 40-letter line) for every setup line of a ``*.dat`` text, unparsed (fast sampling)."""
    return [(n, ln.strip()) for n, ln in enumerate(text.splitlines(), 1) if ln.strip() and not ln.startswith("#")]


def _read_ascii(path: str | Path, what_not: str) -> str:
    """An Ataraxos file's ASCII text, read bounded (regular files only, at most the Ataraxos file cap)."""
    from controller.textfiles import InputFileError, read_bytes

    try:
        data = read_bytes(path, "Ataraxos file")
    except InputFileError as exc:
        raise RecordError(str(exc)) from None
    try:
        return data.decode("ascii")
    except UnicodeDecodeError as exc:
        raise RecordError(f"{path}: {what_not} (byte {exc.start} is not ASCII)") from None


def setup_lines(path: str | Path) -> list[tuple[int, str]]:
    """``parse_setup_lines`` of a file."""
    return parse_setup_lines(_read_ascii(path, "not a setups file"))


def sample_lines(lines: list[tuple[int, str]], count: int, rng: random.Random, where: str) -> list[tuple[int, dict[str, str]]]:
    """``count`` setups drawn at random (without repeats) from numbered lines, each with its line number."""
    good = [(n, text) for n, text in lines if len(text) == 40]  # the Barrage file ends with a stray "]"
    chosen = rng.sample(good, min(count, len(good)))
    return [(n, human_setup(text, f"{where}: line {n}")) for n, text in sorted(chosen)]


def sample_setups(path: str | Path, count: int, rng: random.Random) -> list[tuple[int, dict[str, str]]]:
    """``sample_lines`` of a file."""
    return sample_lines(setup_lines(path), count, rng, str(path))


# ---------------------------------------------------------------------- games
@dataclass
class ChaseGame:
    """One Ataraxos game file: both deployments and the moves as FaceDown stations, Red first."""

    file: str
    deployments: dict[str, dict[str, str]]
    moves: list[tuple[str, str]]


def decode_move(number: int, blue: bool) -> tuple[int, int]:
    """(from square, to square) of an Ataraxos move number for the side to move (Blue's moves are written from its side)."""
    if not 0 <= number < 1800:
        raise ValueError(f"move number {number} is outside 0-1799")
    frm, k = number % 100, number // 100
    row, col = divmod(frm, 10)
    if k < 9:
        to = (k if k < row else k + 1) * 10 + col
    else:
        j = k - 9
        to = row * 10 + (j if j < col else j + 1)
    return (99 - frm, 99 - to) if blue else (frm, to)


def read_game(path: str | Path) -> ChaseGame:
    """Read one game file; RecordError names the line of a bad board character or move."""
    return parse_game(_read_ascii(path, "cannot read it as a game file"), str(path))


def parse_game(text: str, path: str = "<game>") -> ChaseGame:
    """Parse the text of one game file; ``path`` names it in error messages."""
    lines = text.splitlines()
    if not lines or len(lines[0].strip()) != 100:
        raise RecordError(f"{path}: line 1: expected the 100-character board")
    deployments: dict[str, dict[str, str]] = {"red": {}, "blue": {}}
    for i, ch in enumerate(lines[0].strip()):
        st = station(i)
        if st in LAKES:
            if ch != LAKE:
                raise RecordError(f"{path}: line 1, character {i + 1} ({st}): a lake must be '_', got {ch!r}")
        elif ch in _RED:
            deployments["red"][st] = _RED[ch]
        elif ch in _BLUE:
            deployments["blue"][st] = _BLUE[ch]
        elif ch != "a":
            raise RecordError(f"{path}: line 1, character {i + 1} ({st}): unknown piece letter {ch!r}")
    moves = []
    for n, raw in enumerate(lines[1:], 2):
        if not raw.strip():
            continue
        try:
            frm, to = decode_move(int(raw), blue=len(moves) % 2 == 1)
        except ValueError as exc:
            raise RecordError(f"{path}: line {n}: not a move number ({exc})") from None
        moves.append((station(frm), station(to)))
    return ChaseGame(path, deployments, moves)
