"""Web referee benchmark: ruling -> event received latency over Server-Sent Events with 1 and 30 open streams
(loopback only), and the memory and time-to-ready of `facedown play stratego --board sim` with its web page.

    python benchmarks/web.py [--plies 80] [--clients 1,30] [--no-startup]

Prints p50/p99 figures; asserts nothing about timing.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.referee.table import open_table  # noqa: E402
from controller.rules import load_game  # noqa: E402
from controller.rules.deploy import random_deployment  # noqa: E402
from controller.sensing.sim import SimBoard  # noqa: E402


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class Listener(threading.Thread):
    """One SSE client on loopback: records when each event number arrived."""

    def __init__(self, port: int, after: int) -> None:
        super().__init__(daemon=True)
        self.port, self.after = port, after
        self.arrived: dict[int, float] = {}
        self.ready = threading.Event()

    def run(self) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        conn.request("GET", f"/api/public/events?after={self.after}")
        resp = conn.getresponse()
        self.ready.set()
        seq = None
        while True:
            line = resp.fp.readline()
            if not line:
                return
            if line.startswith(b"id: "):
                seq = int(line[4:])
            elif line.startswith(b"data: ") and seq is not None:
                self.arrived[seq] = time.perf_counter()
                if json.loads(line[6:]).get("event") == "bench_end":
                    return


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def latency(clients: int, plies: int, seed: int) -> list[float]:
    from web_referee.server import WebServer

    tmp = Path(tempfile.mkdtemp())
    clock = Clock()
    board = SimBoard(load_game("luzhanqi").station_ids, clock=clock)
    table = open_table("luzhanqi", board=board, board_kind="sim", journal_path=tmp / "j.sqlite", resume=False)
    session = table.session
    rng = random.Random(seed)

    def settle() -> None:
        clock.t += 0.1
        snap = board.tick()
        if snap is not None:
            session.on_snapshot(snap)

    def lay_out() -> None:
        expected = set(session.expected_board())
        actual = set(board.raw_occupied())
        for s in sorted(actual - expected):
            board.lift(s)
            settle()
        for s in sorted(expected - actual):
            board.place(s)
            settle()
        if session.recognizer.fixing:
            steps = next((e.public.get("steps", []) for e in reversed(session.log) if e.public.get("event") == "fixup"), [])
            for step in steps:
                if step["station"] in expected:
                    board.lift(step["station"])
                    settle()
                    board.place(step["station"])
                    settle()

    for side in table.game.sides:
        session.register_setup(side, random_deployment(table.game, side, rng, table.state.options))
    lay_out()
    server = WebServer(table, host="127.0.0.1", port=0, threads=clients + 16)
    server.start()
    listeners = [Listener(server.port, session.log[-1].seq) for _ in range(clients)]
    for li in listeners:
        li.start()
        li.ready.wait(5)
    _wait(lambda: server.hub.client_count == clients)
    samples: list[float] = []
    for _ in range(plies):
        st = table.state
        if st.phase != "play":
            break
        frm, to = rng.choice(st.legal_moves())
        attack = to in session.expected_board()
        board.lift(frm)
        settle()
        if attack:
            board.lift(to)
            settle()
        board.place(to)
        clock.t += 0.1
        snap = board.tick()
        n = len(session.log)
        t0 = time.perf_counter()
        session.on_snapshot(snap)
        ruling_seq = next(e.seq for e in session.log[n:] if e.ruling is not None)
        _wait(lambda s=ruling_seq: all(s in li.arrived for li in listeners))
        samples += [(li.arrived[ruling_seq] - t0) * 1000 for li in listeners]
        lay_out()
    session._publish({"event": "bench_end"})
    for li in listeners:
        li.join(2)
    server.stop()
    table.stop()
    return samples


def _wait(cond, timeout: float = 10.0) -> None:  # noqa: ANN001
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise TimeoutError("benchmark: waited too long")
        time.sleep(0.0002)


def startup() -> tuple[float, int]:
    """Seconds until `facedown play stratego --board sim` serves its first page, and its RSS (kB) then."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    tmp = tempfile.mkdtemp()
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "play", "stratego", "--board", "sim", "--new",
                             "--journal", os.path.join(tmp, "j.sqlite"), "--host", "127.0.0.1", "--port", str(port),
                             "--announce", "none"], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while True:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
                conn.request("GET", "/")
                if conn.getresponse().status == 200:
                    break
            except OSError:
                pass
            if proc.poll() is not None:
                raise RuntimeError("facedown play exited")
            time.sleep(0.01)
        ready = time.perf_counter() - t0
        for path in ("/api/game", "/api/public/state"):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", path)
            conn.getresponse().read()
        rss = next(int(line.split()[1]) for line in Path(f"/proc/{proc.pid}/status").read_text().splitlines() if line.startswith("VmRSS"))
        return ready, rss
    finally:
        proc.terminate()
        proc.wait(5)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plies", type=int, default=80)
    ap.add_argument("--clients", default="1,30")
    ap.add_argument("--no-startup", action="store_true")
    args = ap.parse_args()
    for n in (int(x) for x in args.clients.split(",")):
        xs = latency(n, args.plies, seed=7)
        print(f"ruling -> SSE event, {n:2d} client(s): p50 {statistics.median(xs):6.2f} ms  p99 {pct(xs, 99):6.2f} ms"
              f"  max {max(xs):6.2f} ms  ({len(xs)} samples)")
    if not args.no_startup:
        runs = [startup() for _ in range(3)]
        ready = sorted(r[0] for r in runs)
        print(f"facedown play stratego --board sim: ready (first page served) p50 {statistics.median(ready):.2f} s,"
              f" worst {ready[-1]:.2f} s; RSS after serving {max(r[1] for r in runs) / 1024:.1f} MB")


if __name__ == "__main__":
    main()
