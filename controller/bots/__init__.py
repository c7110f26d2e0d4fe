"""Computer players: the bot interface, the built-in bots, external bots over a JSON-lines protocol, and how a
bot is found by name.

Names: ``random``, ``greedy``, ``facedown`` or ``facedown:LEVEL``, ``facedown-classic[:LEVEL]`` (built-ins); any
name of the ``facedown.bots`` entry-point group (a callable taking the level or None and returning a ``Bot``); ``cmd:PROGRAM ARGS`` for an
external program that speaks the protocol of ``docs/bots.md`` on stdin/stdout.
"""

from __future__ import annotations

from typing import Any

from ..entrypoints import entry_points
from .base import Bot, BotError, Player
from .facedown import FaceDownBot, FaceDownClassic
from .simple import GreedyBot, RandomBot

__all__ = ["BUILTIN", "Bot", "BotError", "FaceDownBot", "FaceDownClassic", "GreedyBot", "Player", "RandomBot", "bot_names", "find_bot"]

BUILTIN = {"random": RandomBot, "greedy": GreedyBot, "facedown": FaceDownBot, "facedown-classic": FaceDownClassic}
ENTRY_POINTS = "facedown.bots"


def bot_names() -> list[str]:
    """Every bot name that ``find_bot`` knows without ``cmd:`` (built-ins and installed entry points)."""
    return sorted(set(BUILTIN) | {ep.name for ep in entry_points(ENTRY_POINTS)})


def find_bot(name: str, *, jail: Any = None) -> Bot:
    """A new bot for ``name``: ``NAME[:LEVEL]`` (built-in or entry point) or ``cmd:PROGRAM ARGS``. ValueError says
    what is wrong with the name. ``jail`` (a ``jail.Jail``) says how an outside program is started: its user, its
    limits (default: the referee's user, the default limits)."""
    if name.startswith("cmd:"):
        from .process import ProcessBot

        return ProcessBot(name[4:], jail=jail)
    base, _, level_text = name.partition(":")
    level: int | None = None
    if level_text:
        try:
            level = int(level_text)
        except ValueError:
            raise ValueError(f"bot {name!r}: the level after ':' must be a whole number, not {level_text!r}") from None
    if base in BUILTIN:
        try:
            return BUILTIN[base](level)
        except BotError as exc:
            raise ValueError(f"bot {name!r}: {exc}") from None
    for ep in entry_points(ENTRY_POINTS):
        if ep.name == base:
            bot = ep.load()(level)
            if not isinstance(bot, Bot):
                raise ValueError(f"bot {name!r}: entry point {ep.value} gave a {type(bot).__name__}, not a Bot")
            return bot
    raise ValueError(f"no bot {base!r}; bots are {', '.join(bot_names())}, or cmd:PROGRAM ARGS for an external one")
