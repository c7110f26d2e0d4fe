"""The game file a journaled game is played with: kept in the journal when the game starts (its text, where it was
read, its checksum), and read back from there to show, replay or resume the game, so a game file that moved,
changed or was deleted since does not lose or change a recorded game. Games journaled before FaceDown kept game
files fall back to the game id."""

from __future__ import annotations

from controller.rules import GameDef, GameFileError, parse_game

from .journal import Journal


def file_of(game: GameDef) -> tuple[str, str] | None:
    """What ``Journal.new_game(game_file=...)`` keeps of ``game``: where its file was read and its text (None for a
    game built in code, with no text). The game's digest chain starts at that text's digest."""
    return (game.file, game.text) if game.text else None


def journaled(journal: Journal, game_id: int) -> GameDef | None:
    """The game as its kept file says, or None when the journal kept no file for it."""
    kept = journal.game_file(game_id)
    if kept is None:
        return None
    try:
        return parse_game(kept.text, f"{journal.path}: game {game_id}'s game file (kept from {kept.file})")
    except GameFileError as exc:
        # a file this FaceDown cannot read any more (a newer format, a hook not installed): say so, with where
        raise GameFileError(exc.file, exc.where, exc.expected) from None
