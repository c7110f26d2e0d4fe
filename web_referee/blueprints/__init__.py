"""The web referee's routes, one blueprint per role: ``public`` (pages and what every role reads), ``seat`` (setup
and reactions), ``board`` (the simulated board, for seats and the arbiter) and ``arbiter`` (the arbiter's actions)."""

from .arbiter import bp as arbiter
from .board import bp as board
from .public import bp as public
from .seat import bp as seat

ALL = (public, seat, board, arbiter)

__all__ = ["ALL", "arbiter", "board", "public", "seat"]
