"""Hostile inputs (issue 35): the time and peak memory of refusing the worst input of each kind, each as the
command a user runs on it (tests/hostile_files.py makes them and says what the refusal must say), against the
same command's start-up (the same arguments naming a file that does not exist). Target: every refusal within 1 s
and 50 MB above start-up on this machine.

Also the web referee as `facedown play` serves it: a 90 MB request body sent to the running server (its peak RSS,
VmHWM, before and after; and the time to its answer).

    python benchmarks/hostile_inputs.py [--big-mb 90] [--only WORD] [--no-web]

Peak RSS is each child's own (``os.wait4``); times are wall-clock on a shared machine (the start-up line says what
a command costs before it reads anything). Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.hostile_files import MB, Case, make  # noqa: E402

TARGET_S, TARGET_MB = 1.0, 50


def measure(cmd: list[str], env: dict[str, str], stdin: str | None, timeout: float = 60) -> tuple[float, float, int, str]:
    """(wall s, peak RSS MB, exit status, output) of one child."""
    out = tempfile.TemporaryFile()
    inp = open(stdin, "rb") if stdin else subprocess.DEVNULL  # noqa: SIM115 - closed below
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=inp, stdout=out, stderr=subprocess.STDOUT, cwd=ROOT, env=env)
    deadline = t0 + timeout
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid:
            break
        if time.perf_counter() > deadline:
            proc.kill()
            pid, status, usage = os.wait4(proc.pid, 0)
            break
        time.sleep(0.002)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if stdin:
        inp.close()
    out.seek(0)
    text = out.read().decode("utf-8", "replace")
    return wall, usage.ru_maxrss / 1024, proc.returncode, text


def baseline(c: Case, folder: Path) -> list[str]:
    """The same command naming a file that does not exist (for code: only its imports)."""
    if c.code:
        imports = "\n".join(ln for ln in c.code.splitlines() if ln.startswith(("import ", "from ")))
        return [sys.executable, "-c", imports]
    missing = str(folder / "no-such-file.yaml")
    argv = [missing if a.startswith(str(folder)) and not a.endswith("journal.sqlite") else a for a in c.argv]
    if "-" in argv and c.stdin:
        argv[argv.index("-")] = missing
    return [sys.executable, "-m", "controller.cli", *argv]


def run_cases(folder: Path, big: int, only: str | None) -> list[tuple[str, float, float, float, float, str]]:
    rows = []
    for c in make(folder, big=big):
        label = f"{c.kind}: {c.name}"
        if only and only.lower() not in label.lower():
            continue
        env = dict(os.environ, PYTHONPATH=str(ROOT), **c.env)
        if "FACEDOWN_GAMES_DIR" not in c.env:
            env.pop("FACEDOWN_GAMES_DIR", None)
        base_env = {k: v for k, v in env.items() if k != "FACEDOWN_GAMES_DIR"}
        b_wall, b_rss, _, _ = measure(baseline(c, folder), base_env, None)
        wall, rss, code, text = measure(c.command, env, c.stdin)
        ok = bool(re.search(c.expect, text, re.M)) and code == c.status and "Traceback" not in text
        lines = [ln for ln in text.splitlines() if ln.strip() and "[package]" not in ln]
        said = next((ln for ln in lines if re.search(c.expect, ln)), lines[-1] if lines else "")
        rows.append((label, wall, wall - b_wall, rss, rss - b_rss, ("" if ok else "UNEXPECTED: ") + (said or text[-200:]).strip()))
    return rows


def vm(pid: int, key: str) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) / 1024
    return float("nan")


def web_case(folder: Path, big: int) -> list[tuple[str, float, float, float, float, str]]:
    """A body of ``big`` bytes, then one of 900 kB (under waitress's cap: read, then refused by the app), POSTed to a
    running `facedown play` web referee."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    ready = folder / "ready"
    argv = [sys.executable, "-m", "controller.cli", "play", "stratego", "--board", "sim", "--new", "--journal",
            str(folder / "web.sqlite"), "--announce", "none", "--ready-file", str(ready), "--host", "127.0.0.1",
            "--port", str(port)]
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    rows = []
    try:
        for _ in range(600):
            if ready.exists() or proc.poll() is not None:
                break
            time.sleep(0.05)
        if proc.poll() is not None:
            raise SystemExit("facedown play did not start")
        with socket.create_connection(("127.0.0.1", port)) as s:  # the first page: the Flask app is built
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            while s.recv(65536):
                pass
        for size in (big, 900 * 1024):
            start = vm(proc.pid, "VmHWM")
            t0 = time.perf_counter()
            answer = b""
            with socket.create_connection(("127.0.0.1", port)) as s:
                s.sendall(f"POST /api/x/setup/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n"
                          f"Content-Length: {size}\r\n\r\n".encode())
                s.settimeout(10)
                chunk, sent = b" " * 65536, 0
                try:
                    while sent < size:
                        s.sendall(chunk[: size - sent])
                        sent += len(chunk)
                        s.setblocking(False)
                        try:
                            answer += s.recv(65536)
                        except BlockingIOError:
                            pass
                        s.setblocking(True)
                        s.settimeout(10)
                        if answer:
                            break
                except OSError:
                    pass  # the server answered and closed: the rest was never read
                try:
                    s.settimeout(2)
                    while True:  # the answer, to its end (the server closes after an error)
                        more = s.recv(65536)
                        if not more:
                            break
                        answer += more
                except OSError:
                    pass
            wall = time.perf_counter() - t0
            status = answer.split(b"\r\n", 1)[0].decode("latin-1")
            body = answer.split(b"\r\n\r\n", 1)[-1][:80].decode("latin-1").replace("\n", " ")
            rows.append((f"web body: {size / MB:.1f} MB POSTed to `facedown play`", wall, wall,
                         vm(proc.pid, "VmHWM"), vm(proc.pid, "VmHWM") - start, f"{status}: {body.strip()}"))
    finally:
        proc.terminate()
        proc.wait(10)
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--big-mb", type=int, default=90, help="size of the huge files (sparse), default 90")
    ap.add_argument("--only", help="only the cases whose kind or name holds this word")
    ap.add_argument("--no-web", action="store_true", help="leave out the web server case")
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="facedown-hostile-"))
    try:
        rows = run_cases(folder / "h", args.big_mb * MB, args.only)
        if not args.no_web and (not args.only or "web" in args.only):
            rows += web_case(folder, args.big_mb * MB)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    w = max(len(r[0]) for r in rows)
    print(f"{'input':<{w}}  {'wall s':>6} {'+s':>6}  {'peak MB':>7} {'+MB':>6}  refusal")
    worst_s = worst_mb = 0.0
    for label, wall, dwall, rss, drss, said in rows:
        flag = " !" if dwall > TARGET_S or drss > TARGET_MB else ""
        worst_s, worst_mb = max(worst_s, dwall), max(worst_mb, drss)
        print(f"{label:<{w}}  {wall:6.2f} {dwall:+6.2f}  {rss:7.1f} {drss:+6.1f}  {said[:110]}{flag}")
    print(f"\nworst above start-up: {worst_s:.2f} s, {worst_mb:.1f} MB (targets {TARGET_S:.0f} s, {TARGET_MB} MB); "
          f"{sum(r[5].startswith('UNEXPECTED') for r in rows)} unexpected answers")
    return 0


if __name__ == "__main__":
    sys.exit(main())
