"""The exceptions the rules engine raises, each saying what went wrong and where."""

from __future__ import annotations

from typing import Any

from controller.errors import FaceDownError


class RulesError(FaceDownError):
    """Base class of every error raised by the rules engine."""


class GameFileError(RulesError, ValueError):
    """A game file is malformed: names the file, the path inside the document and what was expected."""

    def __init__(self, file: str, where: str, expected: str) -> None:
        self.file = file
        self.where = where
        self.expected = expected
        super().__init__(f"{file}: {where}: {expected}")


class UnknownGameError(RulesError, LookupError):
    """No game file with that id is installed."""


class OptionError(RulesError, ValueError):
    """A house-rule option name or value is not one the game offers."""


class IllegalMoveError(RulesError, ValueError):
    """The move is not legal in the current position; ``reason`` says why as a message object
    (``{"code": "reason.*", "params": {...}}``: render it with ``controller.messages.render``)."""

    def __init__(self, reason: dict[str, Any]) -> None:
        self.reason = reason
        params = ", ".join(f"{k}={v}" for k, v in sorted(reason.get("params", {}).items()))
        super().__init__(f"{reason.get('code')} ({params})" if params else str(reason.get("code")))


class SetupError(RulesError, ValueError):
    """A deployment breaks the game's setup rules; ``problems`` lists every defect, each with its station."""

    def __init__(self, problems: list[SetupProblem]) -> None:
        self.problems = problems
        super().__init__("; ".join(str(p) for p in problems))


class SetupProblem:
    """One defect of a deployment: a station (or None for the whole army), a sentence for an operator's error
    message, and the same as a message object (``say``: a ``setup.*`` code) for players, in their language."""

    __slots__ = ("station", "message", "say")

    def __init__(self, station: str | None, message: str, say: dict[str, Any] | None = None) -> None:
        self.station = station
        self.message = message
        self.say = say or {"code": "setup.problem", "params": {"text": message}}

    def __str__(self) -> str:
        return f"{self.station}: {self.message}" if self.station else self.message

    def __repr__(self) -> str:
        return f"SetupProblem({self.station!r}, {self.message!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, SetupProblem) and (self.station, self.message) == (other.station, other.message)

    def __hash__(self) -> int:
        return hash((self.station, self.message))

    def to_json(self) -> dict[str, Any]:
        return {"station": self.station, "say": self.say}


class GameOverError(RulesError):
    """The game has ended; no further move is judged."""
