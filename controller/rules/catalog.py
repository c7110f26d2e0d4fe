"""Where games come from: the package's own game files, then every folder named by ``$FACEDOWN_GAMES_DIR``
(several joined with ``:``), then ``$XDG_CONFIG_HOME/facedown/games`` (default ``~/.config/facedown/games``). A game
is one ``GAME_ID.yaml`` file; its file name is its id. The first folder that has an id wins: a game of the package
cannot be replaced by a user file (give your variant its own id), and a later file with a taken id is listed as
shadowed. This is the only part of the rules package that looks at folders and the environment.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

#: The package's game files.
PACKAGE_GAMES = Path(__file__).with_name("games")
#: Extra game folders, ``os.pathsep``-separated.
GAMES_DIR_ENV = "FACEDOWN_GAMES_DIR"


@dataclass(frozen=True)
class GameSource:
    """One game file found in a games folder: its id (the file name), the file, and which folder setting named it."""

    id: str
    path: Path
    origin: str  # "package", "$FACEDOWN_GAMES_DIR" or "$XDG_CONFIG_HOME/facedown/games"
    shadowed_by: GameSource | None = None


def user_games_dir() -> Path:
    """``$XDG_CONFIG_HOME/facedown/games``, else ``~/.config/facedown/games``."""
    base = os.environ.get("XDG_CONFIG_HOME") or ""
    root = Path(base) if os.path.isabs(base) else Path.home() / ".config"
    return root / "facedown" / "games"


def folders() -> list[tuple[str, Path]]:
    """The games folders in the order they are searched, each with the setting that names it."""
    out = [("package", PACKAGE_GAMES)]
    for part in os.environ.get(GAMES_DIR_ENV, "").split(os.pathsep):
        if part.strip():
            out.append((f"${GAMES_DIR_ENV}", Path(part).expanduser()))
    out.append(("$XDG_CONFIG_HOME/facedown/games", user_games_dir()))
    return out


def sources(*, with_shadowed: bool = False) -> list[GameSource]:
    """Every game file of every folder, first folder first, each folder's files by name. Shadowed files (an id a
    folder before already has) only with ``with_shadowed``, marked with the file that wins."""
    winners: dict[str, GameSource] = {}
    out: list[GameSource] = []
    for origin, folder in folders():
        if not folder.is_dir():
            continue
        for path in sorted(folder.glob("*.yaml")):
            src = GameSource(path.stem, path, origin)
            if src.id in winners:
                if with_shadowed:
                    out.append(GameSource(src.id, path, origin, shadowed_by=winners[src.id]))
                continue
            winners[src.id] = src
            out.append(src)
    return out


def find(game_id: str) -> GameSource | None:
    """The game file for this id, searching the folders in order; None if no folder has it. Anything of that name
    counts (a FIFO, a directory, a dangling symlink), so that loading it says what is wrong with it."""
    for origin, folder in folders():
        path = folder / f"{game_id}.yaml"
        if path.exists() or path.is_symlink():
            return GameSource(game_id, path, origin)
    return None
