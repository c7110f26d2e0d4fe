"""The FaceDown rules engine: game files in, judged moves and redacted views out; pure, no I/O but reading game files
(found by ``catalog``: the package's, ``$FACEDOWN_GAMES_DIR``'s and ``$XDG_CONFIG_HOME/facedown/games``).

>>> from controller.rules import new_game
>>> game = new_game("stratego")
>>> game.phase
'setup'
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from . import catalog
from .errors import (
    GameFileError,
    GameOverError,
    IllegalMoveError,
    OptionError,
    RulesError,
    SetupError,
    SetupProblem,
    UnknownGameError,
)
from .loader import load_game_file, parse_game
from .model import GameDef
from .state import GameState, Move, Result, Ruling
from .views import ARBITER, SPECTATOR, redact_ruling, view

#: The package's own game files (more folders: ``catalog.folders()``).
GAMES_DIR = catalog.PACKAGE_GAMES

__all__ = [
    "ARBITER", "SPECTATOR", "GameDef", "GameFileError", "GameOverError", "GameState", "IllegalMoveError", "Move",
    "OptionError", "Result", "Ruling", "RulesError", "SetupError", "SetupProblem", "UnknownGameError", "game_ids",
    "load_game", "load_game_file", "new_game", "parse_game", "redact_ruling", "view",
]


def game_ids() -> list[str]:
    """The ids of every game this referee knows (the package's and the games folders'), sorted."""
    return sorted(src.id for src in catalog.sources())


def load_game(game: str) -> GameDef:
    """The known game with this id (``catalog.find``), or the game file at this path. A file is read again when it
    changed on disk; a game file's ``id`` must be its file name."""
    path = Path(game)
    if path.suffix in (".yaml", ".yml") and path.exists():
        return _load(str(path.absolute()), *_stamp(path), None)  # not resolved: messages name the path given
    src = catalog.find(game)
    if src is None:
        where = ", ".join(f"{folder} ({origin})" for origin, folder in catalog.folders())
        raise UnknownGameError(f"no game {game!r}; known games: {', '.join(game_ids())} (looked in {where})")
    return _load(str(src.path), *_stamp(src.path), src.id)


def _stamp(path: Path) -> tuple[int, int]:
    try:
        st = path.stat()
    except OSError:  # a dangling symlink: loading it says so
        return 0, -1
    return st.st_mtime_ns, st.st_size


@lru_cache(maxsize=64)
def _load(path: str, _mtime_ns: int, _size: int, expected_id: str | None) -> GameDef:
    game = load_game_file(path)
    if expected_id is not None and game.id != expected_id:
        raise GameFileError(path, "id", f"the file's name, {expected_id!r} (got {game.id!r}): a game file is named after its id")
    return game


def new_game(game: str | GameDef, options: dict[str, Any] | None = None) -> GameState:
    """A new game in its setup phase."""
    gdef = game if isinstance(game, GameDef) else load_game(game)
    return GameState(gdef.for_options(gdef.resolve_options(options)), options)
