"""The host's game clock as a remote seat's pages show it: the latest public reading, the running side's time
counted down on this board's own clock since the reading arrived (the host's is the one that counts)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Any


class SeatClock:
    """A table's ``clock`` on a remote seat (the pages read ``to_json``); ``update`` takes the host's reading."""

    def __init__(self, now: Callable[[], float] = time.monotonic) -> None:
        self.now = now
        self._lock = threading.Lock()
        self._reading: dict[str, Any] | None = None
        self._at = 0.0

    def update(self, reading: Mapping[str, Any]) -> tuple[dict[str, Any] | None, dict[str, Any]]:
        """Take the host's latest reading; the one before it (None: the first) and this one, as kept."""
        left = reading.get("left")
        if not isinstance(left, Mapping) or not all(isinstance(v, int | float) for v in left.values()):
            raise ValueError("a clock reading without each side's time left")
        kept = {"control": dict(reading.get("control") or {}), "left": {str(k): float(v) for k, v in left.items()},
                "running": reading.get("running") if isinstance(reading.get("running"), str) else None,
                "paused": bool(reading.get("paused")), "stopped": bool(reading.get("stopped"))}
        with self._lock:
            before, self._reading, self._at = self._reading, kept, self.now()
        return before, kept

    def to_json(self) -> dict[str, Any] | None:
        """The clock now: the running side's time less what has passed since the host's reading (never below 0)."""
        with self._lock:
            if self._reading is None:
                return None
            out = dict(self._reading)
            left = dict(out["left"])
            running = out["running"]
            if running in left and not out["paused"] and not out["stopped"]:
                left[running] = max(0.0, left[running] - (self.now() - self._at))
            out["left"] = {s: round(v, 1) for s, v in left.items()}
            return out

    def start(self) -> None:
        """Nothing runs here: the host's clock is the one that counts."""

    def stop(self) -> None:
        pass


__all__ = ["SeatClock"]
