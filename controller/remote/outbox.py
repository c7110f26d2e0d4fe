"""One seat's numbered messages at the host: how many were sent, and the latest few as sealed on the wire (a long
game's older messages are not kept in memory: the host rebuilds them from its journal for a board that missed
that many, which only a board away for a long time does)."""

from __future__ import annotations

from collections import deque

#: messages kept in memory per seat: a board that missed this many is far behind (each ply is a message or two)
WINDOW = 4


class Outbox:
    """Numbered messages 1, 2, ...; ``window``: how many of the latest are kept (None: every one)."""

    def __init__(self, window: int | None = WINDOW) -> None:
        self.count = 0
        self.kept: deque[bytes] = deque(maxlen=window)

    def append(self, payload: bytes) -> int:
        """Keep ``payload`` as the next message; its number."""
        self.count += 1
        self.kept.append(payload)
        return self.count

    def __len__(self) -> int:
        return self.count

    def latest(self) -> bytes | None:
        return self.kept[-1] if self.kept else None

    def after(self, have: int) -> list[bytes] | None:
        """The messages after number ``have`` (every one if ``have`` is 0); None when some are no longer kept."""
        have = max(0, min(have, self.count))
        first = self.count - len(self.kept) + 1  # the number of the oldest kept
        if have + 1 < first:
            return None
        return list(self.kept)[have + 1 - first:]


__all__ = ["WINDOW", "Outbox"]
