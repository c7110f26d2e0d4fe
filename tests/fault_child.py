"""Child process for the fault test: `facedown play` with demo players on the simulated board, its journal failing
every write after the first N events (as a full or read-only SD card would: a wrapper around the real journal's
append, installed before the command runs). Run as `python -m tests.fault_child N -- PLAY ARGS...`."""

from __future__ import annotations

import sys

from controller.cli import main
from controller.referee.journal import Journal, JournalError


def fail_after(n: int) -> None:
    real = Journal.append
    count = {"n": 0}

    def append(self: Journal, game_id: int, kind: str, data: dict) -> int:
        count["n"] += 1
        if count["n"] > n:
            raise JournalError(f"{self.path}: cannot write to the journal: disk I/O error")
        return real(self, game_id, kind, data)

    Journal.append = append  # type: ignore[method-assign]


if __name__ == "__main__":
    fail_after(int(sys.argv[1]))
    sys.exit(main(sys.argv[3:]))
