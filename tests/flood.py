"""A bounded LAN flood against a web referee on 127.0.0.1, run in its own process (tests and the availability
benchmark): slow-header connections (one header line every ``interval`` s) and spectator event streams, all from
one client address (``--source``, a loopback address such as 127.0.0.2), each reopened at once when the server
closes it, until ``--seconds`` have passed. Prints ``ready`` when the first round is open, then a summary line.

Run as ``python -m tests.flood PORT --slow 300 --streams 40 --seconds 20 --source 127.0.0.2``.
"""

from __future__ import annotations

import argparse
import json
import selectors
import signal
import socket
import sys
import time


def _connect(source: str, port: int) -> socket.socket | None:
    s = socket.socket()
    s.setblocking(False)
    try:
        s.bind((source, 0))
        s.connect_ex(("127.0.0.1", port))
    except OSError:
        s.close()
        return None
    return s


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("port", type=int)
    ap.add_argument("--slow", type=int, default=300)
    ap.add_argument("--streams", type=int, default=40)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--interval", type=float, default=5.0)
    ap.add_argument("--source", default="127.0.0.2")
    a = ap.parse_args(argv)
    if a.seconds > 600 or a.slow > 2000 or a.streams > 500:
        raise SystemExit("flood: bounded to 600 s, 2000 slow connections and 500 streams")
    sel = selectors.DefaultSelector()
    kinds: dict[socket.socket, str] = {}
    sent_at: dict[socket.socket, float] = {}
    stats = {"opened": 0, "closed_by_server": 0, "stream_refused": 0, "stream_open": 0}

    def open_one(kind: str) -> None:
        s = _connect(a.source, a.port)
        if s is None:
            return
        kinds[s] = kind
        stats["opened"] += 1
        sent_at[s] = 0.0
        sel.register(s, selectors.EVENT_READ | selectors.EVENT_WRITE)

    for _ in range(a.slow):
        open_one("slow")
    for _ in range(a.streams):
        open_one("stream")
    print("ready", flush=True)
    end = time.monotonic() + a.seconds
    stopping: list[int] = []
    signal.signal(signal.SIGTERM, lambda signum, frame: stopping.append(signum))  # stop early, still summarise
    while time.monotonic() < end and not stopping:
        now = time.monotonic()
        for key, mask in sel.select(timeout=0.2):
            s = key.fileobj
            kind = kinds[s]
            if mask & selectors.EVENT_WRITE:
                try:
                    if kind == "slow":
                        s.send(b"GET / HTTP/1.1\r\nHost: x\r\n")
                    else:
                        s.send(b"GET /api/public/events HTTP/1.1\r\nHost: x\r\n\r\n")
                except OSError:
                    pass
                sent_at[s] = now
                sel.modify(s, selectors.EVENT_READ)
                continue
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if kind == "stream" and data.startswith(b"HTTP/1.1 200"):
                stats["stream_open"] += 1
            if kind == "stream" and data.startswith(b"HTTP/1.1 503"):
                stats["stream_refused"] += 1
                data = b""
            if not data:  # closed (or refused): reopen, as an attacker would
                sel.unregister(s)
                s.close()
                kinds.pop(s)
                sent_at.pop(s, None)
                stats["closed_by_server"] += 1
                open_one(kind)
        for s, kind in list(kinds.items()):
            if kind == "slow" and sent_at.get(s) and now - sent_at[s] >= a.interval:
                try:
                    s.send(b"X-Slow: 1\r\n")  # one more header line, never the blank line that ends them
                except OSError:
                    pass
                sent_at[s] = now
    stats["held_at_end"] = len(kinds)
    print(json.dumps(stats), flush=True)
    for s in kinds:
        s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
