"""A `facedown` command run as its own process, as a user runs it: its output read line by line in the background,
waits on what it prints or on any condition (failing with the output so far if it exits first), and a clean stop."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class Cli:
    """``python -m controller.cli ARGS`` in ``ROOT`` with this checkout on the path and ``env`` added."""

    def __init__(self, args: Sequence[str], *, env: dict[str, str] | None = None) -> None:
        self.args = list(args)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "controller.cli", *self.args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT), **(env or {})))
        self.lines: list[str] = []
        assert self.proc.stdout is not None
        threading.Thread(target=lambda: self.lines.extend(iter(self.proc.stdout.readline, "")), daemon=True).start()

    @property
    def output(self) -> str:
        return "".join(self.lines)

    def wait_until(self, done: Callable[[], bool], what: str, timeout: float = 8) -> None:
        """Wait for ``done()``; fail saying ``what`` was awaited if it never comes or the command exits first."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if done():
                return
            assert self.proc.poll() is None, f"facedown {self.args[0]} exited while waiting for {what}:\n{self.output}"
            time.sleep(0.01)
        raise AssertionError(f"never saw {what}; output:\n{self.output}")

    def wait_for(self, text: str, timeout: float = 8) -> None:
        """Wait for a line of output containing ``text``."""
        self.wait_until(lambda: any(text in line for line in self.lines), repr(text), timeout)

    def stop(self, timeout: float = 10) -> int:
        """SIGTERM (as systemd stops the service), then the exit status; killed if it does not stop in time."""
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            return self.proc.wait(timeout)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.wait()
