"""The FaceDown rules engine: game files in, judged moves and redacted views out; pure, no I/O but reading game files.

>>> from controller.rules import new_game
>>> game = new_game("stratego")
>>> game.phase
'setup'
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

from . import hooks as _hooks  # noqa: F401  (the hook registry first: game hook modules import Hook from it)
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

GAMES_DIR = Path(__file__).with_name("games")

__all__ = [
    "ARBITER", "SPECTATOR", "GameDef", "GameFileError", "GameOverError", "GameState", "IllegalMoveError", "Move",
    "OptionError", "Result", "Ruling", "RulesError", "SetupError", "SetupProblem", "UnknownGameError", "game_ids",
    "load_game", "load_game_file", "new_game", "parse_game", "redact_ruling", "view",
]


def game_ids() -> list[str]:
    """The ids of every installed game, sorted."""
    return sorted(p.stem for p in GAMES_DIR.glob("*.yaml"))


@lru_cache(maxsize=32)
def load_game(game: str) -> GameDef:
    """The installed game with this id, or the game file at this path."""
    path = Path(game)
    if path.suffix in (".yaml", ".yml") and path.exists():
        return load_game_file(path)
    candidate = GAMES_DIR / f"{game}.yaml"
    if not candidate.exists():
        raise UnknownGameError(f"no game {game!r}; installed games: {', '.join(game_ids())}")
    return load_game_file(candidate)


def new_game(game: str | GameDef, options: dict[str, Any] | None = None) -> GameState:
    """A new game in its setup phase."""
    gdef = game if isinstance(game, GameDef) else load_game(game)
    return GameState(gdef.for_options(gdef.resolve_options(options)), options)
