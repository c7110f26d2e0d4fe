"""The club tests' own broker (harness/broker.py) starts, stops and starts again on the same port."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from harness.broker import Mosquitto


def test_broker_starts_and_restarts_on_the_same_port(tmp_path: Path) -> None:
    b = Mosquitto(tmp_path)
    b.start()
    try:
        port = b.port
        b.stop()
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
        b.start()
        socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
    finally:
        b.stop()
