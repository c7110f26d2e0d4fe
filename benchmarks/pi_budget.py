"""Raspberry Pi Zero 2 W budgets, measured as CPU time on this machine (steady on a busy machine, unlike wall time)
and stated as Zero 2 W estimates (a Zero 2 W's Cortex-A53 runs Python roughly 8-15x slower per core than this).

1. CPU to ready of the installed `facedown` console script, as a user starts it in a terminal: `facedown play
   stratego --board sim` (with its web page; and with --no-web) from exec until the seat links (with their QR codes,
   stdout is a pty) are printed and the web port listens: the CPU seconds it wrote in its ready file then. Each run
   is paired with a bare interpreter start (`python -c pass`, the same venv and environment, CPU from wait4), and
   the figure is the ratio. Target <= 6x. Beside it, the whole process of the same command stopped once ready
   (hidden --exit-when-ready), timed from outside with wait4 exactly as the bare interpreter is. Then the first page
   served (the Flask app is built after ready).
2. The GPIO scan loop at the shipped 100 Hz (GpioMatrixBoard.run in its thread, gpiozero MockFactory pins),
   as that thread's CPU time (/proc schedstat, ns), next to a bare 100 Hz Python sleep loop (the cost of waking a
   thread at all). Target <= 0.5 % of a core.
3. Idle CPU of the running referee with no clients (all threads, /proc schedstat) over --idle seconds after the
   warm-up. Target <= 0.1 %.
4. Growth: replay and record text of a 1,000- and a 5,000-ply game (CPU time and tracemalloc peak).

Leaves out: the Pi itself (mock pins cost about what a Python call costs; lgpio calls on a Pi cost more, so run
scan.py --real there), the SD card, and the Pi's slower start of the interpreter itself (part of the figure here).

Run: ./dev bench pi_budget [--runs 5] [--idle 20] [--only startup|scan|idle|growth]
"""

from __future__ import annotations

import argparse
import http.client
import os
import shutil
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

ZERO = (8, 15)  # Zero 2 W slowdown per core relative to this machine, low and high


def zero(seconds: float) -> str:
    return f"{seconds * ZERO[0]:.2f}-{seconds * ZERO[1]:.2f} s on a Zero 2 W"


def proc_cpu_s(pid: int) -> float:
    """User + system CPU of a process, from /proc/PID/stat (clock ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def proc_runtime_ns(pid: int) -> int:
    """Time on a CPU of every thread of a process, in ns (/proc/PID/task/*/schedstat, exact, not tick-sampled)."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, ValueError):
            pass  # a thread that ended meanwhile
    return total


def proc_rss_mb(pid: int) -> float:
    """Resident memory of a process now, MB (/proc/PID/status VmRSS)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def thread_runtime_ns(native_id: int) -> int:
    return int(Path(f"/proc/self/task/{native_id}/schedstat").read_text().split()[0])


def ready_cpu_s(ready: Path) -> float:
    """The CPU seconds `facedown play` had used when it wrote its ready file (it writes them in the file)."""
    for _ in range(100):
        text = ready.read_text()
        if "cpu=" in text:
            return float(text.split("cpu=")[1].split()[0])
        time.sleep(0.01)  # the file exists but is not written yet
    raise SystemExit(f"no cpu= in the ready file {ready}: {text!r}")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def facedown_script() -> str:
    """The installed `facedown` console script: next to this interpreter (a venv), else on PATH."""
    here = Path(sys.executable).with_name("facedown")
    found = str(here) if here.exists() else shutil.which("facedown")
    if not found:
        raise SystemExit("no installed `facedown` command next to this Python or on PATH: run ./dev setup")
    return found


def run_env() -> dict[str, str]:
    """This checkout's code (even when the venv's editable install points at another), .pyc files used."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def start_play(web: bool, tty: bool = False, exit_when_ready: bool = False) -> tuple[subprocess.Popen[bytes], Path, int]:
    """`facedown play stratego --board sim` as a user types it (default host, announcer and everything), with only
    a fresh journal, a free port and the hidden ready file added; on a pty when ``tty`` (links with QR codes); with
    ``exit_when_ready`` it stops once ready (the hidden --exit-when-ready), for timing the whole process."""
    tmp = Path(tempfile.mkdtemp(prefix="fd-budget-"))
    port = free_port()
    argv = [facedown_script(), "play", "stratego", "--board", "sim", "--journal", str(tmp / "j.sqlite"),
            "--port", str(port), "--ready-file", str(tmp / "ready")] + ([] if web else ["--no-web"])
    argv += ["--exit-when-ready"] if exit_when_ready else []
    if not tty:
        proc = subprocess.Popen(argv, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=run_env())
        return proc, tmp / "ready", port
    master, slave = os.openpty()
    proc = subprocess.Popen(argv, cwd=tmp, stdin=slave, stdout=slave, stderr=slave, env=run_env())
    os.close(slave)

    def drain() -> None:  # a terminal that shows what is printed
        while True:
            try:
                if not os.read(master, 65536):
                    break
            except OSError:
                break
        os.close(master)

    threading.Thread(target=drain, daemon=True).start()
    return proc, tmp / "ready", port


def bare_cpu_s() -> float:
    """CPU of a bare interpreter start, `python -c pass`, in the same venv and environment (wait4's rusage)."""
    return whole_cpu_s(subprocess.Popen([sys.executable, "-c", "pass"], env=run_env()))


def whole_cpu_s(proc: subprocess.Popen[bytes]) -> float:
    """User + system CPU of a child process from exec to exit, its own children included (wait4's rusage)."""
    _, _, usage = os.wait4(proc.pid, 0)
    proc.returncode = 0
    return usage.ru_utime + usage.ru_stime


def compile_sources() -> None:
    """Byte-compile the project's modules, as `pip install` does on a Pi: without it (an editable install with
    PYTHONDONTWRITEBYTECODE set, as on this machine) every start compiles them again, some 70 ms of CPU here."""
    subprocess.run([sys.executable, "-m", "compileall", "-q", "controller", "web_referee"], cwd=ROOT, check=True,
                   stdout=subprocess.DEVNULL)


def wait_ready(proc: subprocess.Popen[bytes], ready: Path) -> None:
    end = time.monotonic() + 30
    while not ready.exists():
        if proc.poll() is not None or time.monotonic() > end:
            raise SystemExit("facedown play did not get ready")
        time.sleep(0.001)


def startup(runs: int) -> None:
    compile_sources()
    print(f"1. CPU to ready of the installed console script, `{facedown_script()} play stratego --board sim` on a "
          f"terminal, against a bare `python -c pass` in the same run ({runs} pairs; modules byte-compiled as an "
          "installed package has them)")
    for web in (True, False):
        ready_cpu, bare, ratios, page_cpu, whole, rss_mb = [], [], [], [], [], []
        for _ in range(runs):
            bare.append(bare_cpu_s())
            proc, _ready, _port = start_play(web, tty=True, exit_when_ready=True)
            whole.append(whole_cpu_s(proc) / bare[-1])
            proc, ready, port = start_play(web, tty=True)
            try:
                wait_ready(proc, ready)
                ready_cpu.append(ready_cpu_s(ready))
                ratios.append(ready_cpu[-1] / bare[-1])
                if web:
                    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                    conn.request("GET", "/")
                    conn.getresponse().read()
                    page_cpu.append(proc_cpu_s(proc.pid))
                    rss_mb.append(proc_rss_mb(proc.pid))
            finally:
                proc.terminate()
                proc.wait(10)
        label = "with web" if web else "--no-web"
        med = statistics.median(ready_cpu)
        print(f"   {label:<9} ready: {statistics.median(ratios):.1f}x a bare interpreter (min {min(ratios):.1f}x, max "
              f"{max(ratios):.1f}x; target 6x): {med:.3f} s CPU against {statistics.median(bare):.3f} s -> {zero(med)}")
        print(f"   {'':<9} the whole process, from exec to its exit once ready (wait4, as the bare interpreter is "
              f"timed): {statistics.median(whole):.1f}x (min {min(whole):.1f}x, max {max(whole):.1f}x)")
        if page_cpu:
            mp = statistics.median(page_cpu)
            print(f"   {'':<9} first page served: {mp:.3f} s CPU (Flask app built after ready) -> {zero(mp)}; "
                  f"{statistics.median(rss_mb):.0f} MB RSS then (target 60 MB)")


def scan_loop(seconds: float) -> None:
    from gpiozero.pins.mock import MockFactory

    from controller.sensing.gpio_matrix import GpioMatrixBoard
    from controller.sensing.profile import find_profile

    profile = find_profile("stratego")
    period = profile.scan_period_ms / 1000
    print(f"\n2. GPIO scan loop, {Path(profile.file).name}: {len(profile.stations)} stations, {profile.matrix_size} matrix, "
          f"every {profile.scan_period_ms} ms, gpiozero MockFactory pins, {seconds:.0f} s")

    def measure(target: object) -> float:
        ids: dict[str, int] = {}
        ready = threading.Event()

        def run() -> None:
            ids["tid"] = threading.get_native_id()
            ready.set()
            target()  # type: ignore[operator]

        th = threading.Thread(target=run, daemon=True)
        th.start()
        ready.wait()
        c0, w0 = thread_runtime_ns(ids["tid"]), time.monotonic()
        time.sleep(seconds)
        c1, w1 = thread_runtime_ns(ids["tid"]), time.monotonic()
        stop_flag.set()
        th.join(5)
        return (c1 - c0) / 1e9 / (w1 - w0)

    stop_flag = threading.Event()
    board = GpioMatrixBoard(profile, pin_factory=MockFactory())
    loop_share = measure(lambda: board.run(lambda s: None))
    board.stop()
    stop_flag = threading.Event()

    def bare() -> None:
        while not stop_flag.is_set():
            time.sleep(period)

    floor = measure(bare)
    b2 = GpioMatrixBoard(profile, pin_factory=MockFactory())
    n = 20000
    t0 = time.process_time()
    for i in range(n):
        b2.scan_once(i * profile.scan_period_ms)
    per_scan = (time.process_time() - t0) / n
    b2.stop()
    print(f"   scan loop thread: {loop_share * 100:.2f} % of a core (target 0.5 %) -> "
          f"{loop_share * 100 * ZERO[0]:.1f}-{loop_share * 100 * ZERO[1]:.1f} % of a Zero 2 W core")
    print(f"   of which waking a Python thread 100 times a second (bare sleep loop): {floor * 100:.2f} % of a core")
    print(f"   one pass over the matrix (scan_once, nothing moving): {per_scan * 1e6:.1f} us CPU")
    print("   -> a Zero 2 W build that also serves phones should use the Pico scanner (docs/raspberry-pi.md):"
          " the host then only reads a line when something changes")


def idle(seconds: float) -> None:
    print(f"\n3. Idle CPU, `facedown play stratego --board sim` with web, no clients, {seconds:.0f} s after a 3 s warm-up")
    proc, ready, _port = start_play(True)
    try:
        wait_ready(proc, ready)
        time.sleep(3)
        c0, w0 = proc_runtime_ns(proc.pid), time.monotonic()
        time.sleep(seconds)
        c1, w1 = proc_runtime_ns(proc.pid), time.monotonic()
    finally:
        proc.terminate()
        proc.wait(10)
    share = (c1 - c0) / 1e9 / (w1 - w0)
    print(f"   {share * 100:.3f} % of a core (target 0.1 %) -> {share * 100 * ZERO[0]:.2f}-{share * 100 * ZERO[1]:.2f} % of a Zero 2 W core")


def growth() -> None:
    import json
    import tracemalloc

    from benchmarks.seeded_games import long_game, prefix
    from controller.commands.record import move_lines
    from controller.referee.replay import iter_replay_steps
    from controller.rules import ARBITER

    print("\n4. Growth with the game's length (CPU time; tracemalloc peak)")
    game = long_game(5000, seed=3)
    for name, fn in (("web replay, encoded step by step", lambda ev: sum(len(json.dumps(s)) for s in iter_replay_steps(ev, ARBITER))),
                     ("record text (move lines)", lambda ev: len(move_lines(ev)[1]))):
        row = []
        for plies in (1000, 5000):
            events = prefix(game, plies)
            t0 = time.process_time()
            out = fn(events)
            took = time.process_time() - t0
            tracemalloc.start()
            fn(events)
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            row.append((plies, took, peak, out))
        (p1, t1, m1, o1), (p5, t5, m5, o5) = row
        print(f"   {name}: {p1} plies {t1 * 1e3:.0f} ms, {m1 / 1e6:.1f} MB; {p5} plies {t5 * 1e3:.0f} ms, {m5 / 1e6:.1f} MB"
              f" ({t5 / t1:.1f}x time, {m5 / m1:.1f}x memory)" + (f"; replay JSON {o5 / 1e6:.1f} MB" if "replay" in name else ""))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--scan-seconds", type=float, default=10)
    ap.add_argument("--idle", type=float, default=20)
    ap.add_argument("--only", choices=("startup", "scan", "idle", "growth"), help="run one of the four parts")
    args = ap.parse_args()
    parts = {"startup": lambda: startup(args.runs), "scan": lambda: scan_loop(args.scan_seconds),
             "idle": lambda: idle(args.idle), "growth": growth}
    for name, part in parts.items():
        if args.only in (None, name):
            part()
    return 0


if __name__ == "__main__":
    sys.exit(main())
