"""Availability benchmark (issue 16): seat page load and seat ruling latency while a flood from one other client
address holds 300 slow-header connections (one header line every 5 s) and 40 spectator event streams, all
reopened whenever the server closes them. Loopback only: the server on 127.0.0.1, the flood in its own process
from 127.0.0.2 (tests/flood.py), the seat in this process on 127.0.0.1.

    python benchmarks/availability.py [--rounds 100] [--seconds 40] [--baseline]

``--baseline`` serves with waitress's defaults as the referee did before (100 connections, 120 s idle timeout, no
header deadline, no per-address cap, streams unreserved) for comparison. Prints p50/p99/max; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.referee.table import open_table  # noqa: E402
from controller.rules import load_game  # noqa: E402
from controller.sensing.sim import SimBoard  # noqa: E402
from controller.setups_store import SetupStore  # noqa: E402


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))] if xs else float("nan")


def fmt(name: str, xs: list[float], failures: int) -> str:
    if not xs:
        return f"{name}: no successful sample ({failures} failed)"
    ms = [x * 1000 for x in xs]
    return (f"{name}: n={len(xs)} failed={failures} p50 {statistics.median(ms):.1f} ms, p99 {pct(ms, 0.99):.1f} ms, "
            f"max {max(ms):.1f} ms")


def serve(table, baseline: bool, setups: Path):  # noqa: ANN001, ANN201
    if not baseline:
        from web_referee.server import WebServer

        server = WebServer(table, host="127.0.0.1", port=0, setups=SetupStore(setups))
        server.start()
        return server, server.port, server.stop
    from waitress.server import create_server

    from web_referee.app import create_app
    from web_referee.common import stop_waitress

    app = create_app(table, setups=SetupStore(setups), max_streams=40)
    srv = create_server(app, host="127.0.0.1", port=0, threads=48, ident="facedown")
    t = threading.Thread(target=srv.run, daemon=True)
    t.start()
    return srv, int(srv.effective_port), lambda: stop_waitress(srv, t, drain_s=1)


def page_load(url: str, timeout: float = 5.0) -> float | None:
    t0 = time.perf_counter()
    try:
        with urllib.request.urlopen(url, timeout=timeout) as r:
            r.read()
            return time.perf_counter() - t0 if r.status == 200 else None
    except (urllib.error.URLError, OSError):
        return None


class SeatStream(threading.Thread):
    """The seat's live stream: when each event (by its `seq`) arrived."""

    def __init__(self, port: int, token: str) -> None:
        super().__init__(daemon=True)
        self.port, self.token = port, token
        self.arrived: dict[int, float] = {}
        self.ok = threading.Event()

    def run(self) -> None:
        try:
            s = socket.create_connection(("127.0.0.1", self.port), timeout=60)
            s.sendall(f"GET /api/{self.token}/events HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        except OSError:
            return
        buf = b""
        while True:
            try:
                chunk = s.recv(65536)
            except OSError:
                return
            if not chunk:
                return
            if b"HTTP/1.1 200" in chunk:
                self.ok.set()
            buf += chunk
            while b"\n\n" in buf:
                block, buf = buf.split(b"\n\n", 1)
                for line in block.split(b"\n"):
                    if line.startswith(b"data: "):
                        try:
                            ev = json.loads(line[6:])
                        except ValueError:
                            continue
                        self.arrived[int(ev.get("seq", 0))] = time.perf_counter()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=100)
    ap.add_argument("--seconds", type=float, default=40.0)
    ap.add_argument("--slow", type=int, default=300)
    ap.add_argument("--streams", type=int, default=40)
    ap.add_argument("--baseline", action="store_true")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        board = SimBoard(load_game("stratego").station_ids)
        table = open_table("stratego", board=board, board_kind="sim", journal_path=Path(d) / "j.sqlite")
        server, port, stop = serve(table, a.baseline, Path(d) / "setups")
        red = table.tokens["red"]
        base = f"http://127.0.0.1:{port}"
        flood = subprocess.Popen([sys.executable, "-m", "tests.flood", str(port), "--slow", str(a.slow), "--streams",
                                  str(a.streams), "--seconds", str(a.seconds), "--interval", "5", "--source", "127.0.0.2"],
                                 stdout=subprocess.PIPE, text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
        try:
            assert flood.stdout is not None and flood.stdout.readline().strip() == "ready"
            time.sleep(3.0)  # the flood settles in (what the server refuses is reopened at once)
            loads, failed_loads = [], 0
            for _ in range(a.rounds):
                t = page_load(f"{base}/seat/{red}")
                if t is None:
                    failed_loads += 1
                else:
                    loads.append(t)
            seat = SeatStream(port, red)
            seat.start()
            opened = seat.ok.wait(10)
            lat, lost = [], 0
            if opened:
                time.sleep(0.2)
                for i in range(a.rounds):
                    t0 = time.perf_counter()
                    with table.session.lock:
                        (table.session.pause if i % 2 == 0 else table.session.resume)()
                        seq = table.session.log[-1].seq
                    end = time.monotonic() + 5
                    while seq not in seat.arrived and time.monotonic() < end:
                        time.sleep(0.0005)
                    if seq in seat.arrived:
                        lat.append(seat.arrived[seq] - t0)
                    else:
                        lost += 1
        finally:
            flood.terminate()
            out, _ = flood.communicate(timeout=30)
            stop()
            table.stop()
    mode = "baseline (waitress defaults)" if a.baseline else "FaceDown server"
    print(f"availability, {mode}: flood of {a.slow} slow-header connections + {a.streams} spectator streams from 127.0.0.2")
    print(fmt("  seat page load", loads, failed_loads))
    print(fmt("  seat ruling latency (published -> SSE event at the seat)", lat, lost if opened else a.rounds)
          + ("" if opened else " (the seat's stream was refused)"))
    print(f"  flood: {out.strip().splitlines()[-1] if out.strip() else 'no summary'}")


if __name__ == "__main__":
    main()
