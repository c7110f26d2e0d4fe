"""What the long-running commands share: the stop that SIGTERM and Ctrl-C set, the ready file and the wait for that
stop, and the table's web page opened with a clear refusal when its port cannot be had."""

from __future__ import annotations

import signal
import sys
import threading
from pathlib import Path
from typing import Any


def stop_on_signals() -> threading.Event:
    """An event that SIGTERM (the service stopping) and SIGINT (Ctrl-C) set; the command's loop waits on it."""
    stop = threading.Event()

    def on_signal(signum: int, frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    return stop


def wait_for_stop(stop: threading.Event, ready_file: str | None, poll_s: float = 1.0) -> None:
    """Say the command is ready (``ready_file``, for tests, benchmarks and service managers), then wait for ``stop``."""
    if ready_file:
        Path(ready_file).write_text("ready\n")
    while not stop.wait(poll_s):
        pass


def open_web(table: Any, host: str, port: int, prog: str = "facedown play") -> Any:
    """The table's WebServer, listening on ``host:port``; None when the port is taken or cannot be had, said as
    ``prog: why`` (the command then ends with status 2)."""
    from web_referee.server import WebServer, WebServerError

    try:
        return WebServer(table, host=host, port=port)
    except WebServerError as exc:
        print(f"{prog}: {exc.strerror}", file=sys.stderr)
        return None
