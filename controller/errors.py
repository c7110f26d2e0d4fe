"""The one root of FaceDown's own errors: every error the product raises on purpose derives from FaceDownError.

Each error is also a built-in exception type where one fits (``class SetupError(RulesError, ValueError)``), as
gpiozero's ``exc.py`` does: code that catches ``ValueError`` or ``OSError`` keeps working, and a caller that wants
"anything FaceDown refused, with its clear message" catches ``FaceDownError`` alone (the command line does).

>>> from controller.rules.errors import UnknownGameError
>>> issubclass(UnknownGameError, FaceDownError) and issubclass(UnknownGameError, LookupError)
True
"""

from __future__ import annotations


class FaceDownError(Exception):
    """Every error FaceDown raises on purpose derives from this class; each is also a built-in exception type
    (ValueError, LookupError, RuntimeError, OSError...) where one fits. Its message says what went wrong and where."""
