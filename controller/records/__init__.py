"""Game records from outside FaceDown: Gravon Stratego files (in and out) and the Ataraxos test data (human setups,
chase games). Each reader turns a malformed file into a RecordError that says what is wrong and where."""

from __future__ import annotations

from controller.errors import FaceDownError


class RecordError(FaceDownError, ValueError):
    """A record file is malformed or cannot be replayed; the message names the file and the place in it."""


__all__ = ["RecordError"]
