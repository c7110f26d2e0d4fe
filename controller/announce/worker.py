"""A background thread that plays queued items in order, so announcing never blocks the referee."""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

log = logging.getLogger(__name__)


class PlayQueue(Generic[T]):
    """Plays submitted items one at a time on a daemon thread, in order.

    The queue is bounded: when it is full, submitting drops the oldest waiting item (the one in
    progress always finishes) and logs a warning, because a stale verdict is worth less than a fresh one.
    An item whose playing raises is logged and skipped; the worker carries on.
    """

    def __init__(self, name: str, play: Callable[[T], None], *, maxsize: int = 16) -> None:
        if maxsize < 1:
            raise ValueError(f"maxsize must be at least 1, got {maxsize}")
        self.name = name
        self.maxsize = maxsize
        self.dropped = 0
        self._play = play
        self._items: deque[T] = deque()
        self._busy = False
        self._closed = False
        self._cond = threading.Condition()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, item: T) -> None:
        """Queue one item to be played after those already waiting."""
        with self._cond:
            if self._closed:
                raise RuntimeError(f"{self.name} is closed")
            if len(self._items) >= self.maxsize:
                dropped = self._items.popleft()
                self.dropped += 1
                log.warning("%s: queue full (%d waiting); dropped the oldest: %r", self.name, self.maxsize, dropped)
            self._items.append(item)
            self._cond.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait until everything queued has been played; False if ``timeout`` seconds passed first."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._items and not self._busy, timeout)

    def close(self, timeout: float | None = 5.0) -> None:
        """Discard what is still waiting, let the item in progress finish, and stop the thread."""
        with self._cond:
            self._closed = True
            if self._items:
                log.info("%s: closing; %d queued item(s) not played", self.name, len(self._items))
            self._items.clear()
            self._cond.notify_all()
        if threading.current_thread() is not self._thread:
            self._thread.join(timeout)

    @property
    def closed(self) -> bool:
        return self._closed

    def _run(self) -> None:
        while True:
            with self._cond:
                self._cond.wait_for(lambda: self._items or self._closed)
                if self._closed:
                    self._busy = False
                    self._cond.notify_all()
                    return
                item = self._items.popleft()
                self._busy = True
            try:
                self._play(item)
            except Exception:
                log.exception("%s: failed to play %r", self.name, item)
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()
