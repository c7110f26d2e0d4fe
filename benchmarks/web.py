"""Web referee benchmark: ruling -> event received latency over Server-Sent Events with 1 and 30 open streams held
by a SEPARATE client process (loopback only), and the memory and time-to-ready of `facedown play stratego --board
sim` with its web page.

    python benchmarks/web.py [--plies 80] [--clients 1,30] [--no-startup]

The latency starts when the snapshot completing a move is handed to the session (simulated board on a fake clock,
real SQLite journal, the web app served by waitress) and ends when a client reads the event's data line; the clocks
agree across processes (both are the system's monotonic clock). Leaves out: settle and scan (see e2e.py), Wi-Fi,
browsers drawing the page (e2e.py), the pages' own requests. Prints p50/p99 figures; asserts nothing about timing.
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
    # every client comes from 127.0.0.1: allow them all the spectator streams (a club room spreads them out)
    server = WebServer(table, host="127.0.0.1", port=0, spectator_streams=clients + 4, spectator_streams_per_address=clients + 4)
    server.start()
    server.app  # noqa: B018  (built now, as `facedown play` does right after it is ready)
    proc = subprocess.Popen([sys.executable, str(ROOT / "benchmarks" / "e2e.py"), "_clients", str(server.port), str(clients),
                             str(session.log[-1].seq), "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdin is not None and proc.stdout is not None
    if proc.stdout.readline().strip() != "ready":
        raise SystemExit("the client process did not start")
    _wait(lambda: server.hub.client_count == clients)
    sent: list[tuple[int, int]] = []  # (ruling seq, when the snapshot was handed over, perf_counter_ns)
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
        t0 = time.perf_counter_ns()
        session.on_snapshot(snap)
        sent.append((next(e.seq for e in session.log[n:] if e.ruling is not None), t0))
        time.sleep(0.02)  # the clients read it meanwhile
        lay_out()
    proc.stdin.write("stop\n")
    proc.stdin.flush()
    arrivals = {int(k): v for k, v in json.loads(proc.stdout.readline())["arrivals"].items()}
    proc.wait(10)
    server.stop()
    table.stop()
    samples = [(t - t0) / 1e6 for seq, t0 in sent for t in arrivals.get(seq, [])]
    lost = sum(clients - len(arrivals.get(seq, [])) for seq, _ in sent)
    if lost:
        print(f"  warning: {lost} events did not reach their client", file=sys.stderr)
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
