"""For the club tests and benchmarks: a real Mosquitto broker on a free loopback port with a generated config file (never
the system service), restartable on the same port, and a paho subscriber that records everything it hears.
Tests that need Mosquitto fail when $CI is set and it is missing, and skip otherwise."""

from __future__ import annotations

import getpass
import json
import os
import shutil
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def need_mosquitto() -> str:
    exe = shutil.which("mosquitto") or next((p for p in ("/usr/sbin/mosquitto", "/sbin/mosquitto") if os.path.exists(p)), None)
    if exe is None:
        msg = "mosquitto is not installed (apt-get install -y mosquitto)"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    try:
        import paho.mqtt  # noqa: F401
    except ImportError:
        msg = "paho-mqtt is not installed (pip install 'paho-mqtt>=2')"
        if os.environ.get("CI"):
            pytest.fail(msg)
        pytest.skip(msg)
    return exe


CLUB_CONF = Path(__file__).resolve().parents[1] / "hardware" / "mosquitto" / "facedown-club.conf"
QUEUE_SETTINGS = ("max_queued_messages", "max_queued_bytes", "max_inflight_messages", "persistent_client_expiration")


def club_queue_settings() -> str:
    """The queue limits of the club's shipped Mosquitto configuration, so tests run the broker the club is told to."""
    lines = [ln.strip() for ln in CLUB_CONF.read_text().splitlines() if ln.strip().split(" ")[0] in QUEUE_SETTINGS]
    assert lines, f"{CLUB_CONF} sets no queue limits"
    return "".join(ln + "\n" for ln in lines)


class Mosquitto:
    """A broker of our own on 127.0.0.1:port with the club configuration's queue limits (``stock=True``: Mosquitto's
    own defaults). ``persistence=False``: retained messages and sessions live only in memory (a restart loses them);
    True: saved in ``directory`` when it stops, as the club's broker does. Its log is ``directory/mosquitto.log``."""

    def __init__(self, directory: Path, *, persistence: bool = False, stock: bool = False) -> None:
        self.exe = need_mosquitto()
        self.port = free_port()
        self.conf = directory / "mosquitto.conf"
        self.log = directory / "mosquitto.log"
        text = f"listener {self.port} 127.0.0.1\nallow_anonymous true\nlog_dest file {self.log}\n"
        # run as root, Mosquitto would switch to the user "mosquitto", who may not write its log in a private tmp dir
        text += f"user {getpass.getuser()}\n"
        text += f"persistence true\npersistence_location {directory}/\n" if persistence else "persistence false\n"
        if not stock:
            text += club_queue_settings()
        self.conf.write_text(text)
        self.proc: subprocess.Popen[bytes] | None = None

    def dropped(self) -> list[str]:
        """The broker's log lines saying it dropped messages for a client (its per-client queue was full)."""
        if not self.log.exists():
            return []
        return [ln for ln in self.log.read_text(errors="replace").splitlines() if "being dropped" in ln]

    @property
    def url(self) -> str:
        return f"mqtt://127.0.0.1:{self.port}"

    def start(self) -> None:
        self.proc = subprocess.Popen([self.exe, "-c", str(self.conf)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited: {self.proc.stderr.read().decode() if self.proc.stderr else ''}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("mosquitto did not start listening")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=5)
        self.proc = None


class Recorder:
    """A paho subscriber to everything under facedown/: every (topic, payload, retained) it hears, in order."""

    def __init__(self, port: int) -> None:
        import paho.mqtt.client as mqtt

        self.messages: list[tuple[str, Any, bool]] = []
        self.lock = threading.Lock()
        self.ready = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"recorder-{port}-{time.monotonic_ns()}")
        self.client.on_connect = lambda c, u, f, rc, p: (c.subscribe("facedown/#", qos=1), self.ready.set())
        self.client.on_message = self._on_message
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()
        assert self.ready.wait(5)

    def _on_message(self, client: Any, userdata: Any, msg: Any) -> None:
        with self.lock:
            self.messages.append((msg.topic, json.loads(msg.payload) if msg.payload else None, bool(msg.retain)))

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()


def wait_for(cond: Any, timeout: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if cond():
            return
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")
