"""The one root of every error FaceDown raises on purpose, so a caller (the CLI) catches one thing."""

from __future__ import annotations


class FaceDownError(Exception):
    """Every error the product raises on purpose derives from this; each is also a built-in exception type."""
