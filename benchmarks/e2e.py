"""The headline figure: a piece put down on the board -> the referee's verdict at the players' screens.

For each sensing path and client count, a seeded random Stratego game is played move by move on a simulated
magnet board: the benchmark lifts a piece, then puts it down on its new station (the "raw sensor change") and
times that change to

* the verdict event arriving at N Server-Sent-Event clients in ANOTHER process (plain HTTP clients, one thread each),
* the verdict's log line painted in headless Chromium (Debian's /usr/bin/chromium via Playwright) showing the
  spectator page, and the board drawing changed after it (a MutationObserver stamps each change, the next
  requestAnimationFrame is the frame that paints it; browser stamps are wall-clock ms, as is the raw change).

Paths, each with the shipped Stratego profile's settle and scan settings (hardware/profiles/stratego.yaml):

* serial: the real firmware (firmware/, under CPython with the stand-in `machine` module) scans a simulated
  10 x 10 reed matrix in its OWN process and writes to a real pty; the referee reads it with pyserial
  (controller.sensing.serial_link), as it reads /dev/ttyACM0 on a Pi.
* gpio: the referee scans the matrix itself through gpiozero's MockFactory pins (controller.sensing.gpio_matrix):
  mock column pins that read low while their row is driven low over a placed magnet.

Everything from the snapshot on is the product: the session, the recognizer, the rules engine, the SQLite journal
(fsync per event, as shipped), the web app served by waitress. Breakdown per verdict: settle + scan phase + link
(raw change -> the snapshot handed to the session), recognize + judge, journal (time spent in the journal's append
before the verdict was published), publish (the session's subscribers), transport (published -> received by a
client), paint (received -> painted: browser only).

What it leaves out: a real Pi (this is x86_64; a Zero 2 W is roughly 8-15x slower per core: see pi_budget.py),
real reed bounce (the magnets here switch cleanly, so settle is exactly the profile's), Wi-Fi between the Pi and the
phones (loopback here), attacks (only plain moves are timed: an attack's verdict takes the same path, with a clash
lookup of a few microseconds more) and the seat pages (only the spectator page is drawn).

Run: ./dev bench e2e [--moves 60] [--runs 2] [--clients 1,30] [--paths serial,gpio] [--no-browser]
Asserts nothing about time; prints p50 / p99 / max and the targets next to them.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
# This folder holds serial.py, named like pyserial's package: keep it off the path so `import serial` is pyserial.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(ROOT))

CHROMIUM = "/usr/bin/chromium"
PROFILE = "stratego"
TUNE = True  # --no-tuning: leave the interpreter's GC and GIL switch interval as Python sets them


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q / 100 * (len(xs) - 1))))] if xs else float("nan")


def fmt(xs: list[float]) -> str:
    if not xs:
        return "      (none)"
    return f"p50 {pct(xs, 50):6.1f}  p99 {pct(xs, 99):6.1f}  max {max(xs):6.1f} ms"


# ---------------------------------------------------------------------------------------------------- firmware
def firmware_main(port: str, cfg_json: str) -> None:
    """Child process: the real firmware behind a pty at ``port``; stdin lines 'place CH' / 'lift CH' move magnets,
    and each is answered with the wall-clock and monotonic time of the change."""
    from harness.firmware_standin.runner import FirmwareOnPty, World

    cfg = json.loads(cfg_json)
    world = World()
    world.matrix(cfg["matrix"]["rows"], cfg["matrix"]["cols"])
    fw = FirmwareOnPty(cfg, world, Path(port)).plug()
    print("ready", flush=True)
    for line in sys.stdin:
        word, _, arg = line.strip().partition(" ")
        if word == "quit":
            break
        chans = [int(x) for x in arg.split(",") if x]
        mono, wall = time.perf_counter_ns(), time.time()
        (world.place if word == "place" else world.lift)(*chans)
        print(f"{mono} {wall}", flush=True)
    fw.close()


class SerialMagnets:
    """The benchmark's hand on the serial board: asks the firmware process to move magnets."""

    def __init__(self, profile: Any, tmp: Path) -> None:
        rows, cols = profile.matrix_size
        self.port = tmp / "ttyACM0"
        cfg = {"format": 2, "channels": rows * cols, "board": "bench", "sensing": "reed", "scanner": "matrix", "settle_ms": profile.settle_ms,
               "scan_period_ms": profile.scan_period_ms, "heartbeat_ms": 1000,
               "matrix": {"rows": list(range(rows)), "cols": list(range(rows, rows + cols))}}
        self.ncols = cols
        self.proc = subprocess.Popen([sys.executable, __file__, "_firmware", str(self.port), json.dumps(cfg)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
        assert self.proc.stdout is not None and self.proc.stdout.readline().strip() == "ready"
        self.channels = {st: r * cols + c for st, (r, c) in profile.channels.items()}

    def board(self, profile: Any) -> Any:
        from controller.sensing.serial_link import SerialScannerBoard

        b = SerialScannerBoard(profile.stations, self.channels, port=str(self.port))
        return b

    def move(self, word: str, *stations: str) -> tuple[int, float]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{word} {','.join(str(self.channels[s]) for s in stations)}\n")
        self.proc.stdin.flush()
        mono, wall = self.proc.stdout.readline().split()
        return int(mono), float(wall)

    def close(self) -> None:
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.write("quit\n")
            self.proc.stdin.flush()
            self.proc.wait(5)
        except Exception:
            self.proc.kill()


class GpioMagnets:
    """Magnets over a reed matrix read through gpiozero mock pins in the referee's own process."""

    def __init__(self, profile: Any) -> None:
        from gpiozero.pins.mock import MockFactory, MockPin

        magnets = self
        self.closed: set[tuple[int, int]] = set()
        self.active_row: int | None = None
        row_of = {pin: i for i, pin in enumerate(profile.pins.rows)}
        col_of = {pin: i for i, pin in enumerate(profile.pins.columns)}

        class RowPin(MockPin):
            def _change_state(self, value: Any) -> Any:
                magnets.active_row = None if value else row_of[self.number]
                return super()._change_state(value)

        class ColumnPin(MockPin):
            def _get_state(self) -> Any:
                r = magnets.active_row
                return 0 if r is not None and (r, col_of[self.number]) in magnets.closed else 1

        self.factory = MockFactory()
        for pin in profile.pins.rows:
            self.factory.pin(pin, pin_class=RowPin)
        for pin in profile.pins.columns:
            self.factory.pin(pin, pin_class=ColumnPin)
        self.cells = dict(profile.channels)

    def board(self, profile: Any) -> Any:
        from controller.sensing.gpio_matrix import GpioMatrixBoard

        return GpioMatrixBoard(profile, pin_factory=self.factory)

    def move(self, word: str, *stations: str) -> tuple[int, float]:
        mono, wall = time.perf_counter_ns(), time.time()
        for s in stations:
            (self.closed.add if word == "place" else self.closed.discard)(self.cells[s])
        return mono, wall

    def close(self) -> None:
        self.factory.close()


# ---------------------------------------------------------------------------------------------------- clients
PAGE_PROBE = """
(() => {
  window.__fd = {log: [], board: []};
  const stamp = (list, extra) => {
    const t = performance.timeOrigin + performance.now();
    const e = Object.assign({t}, extra);
    list.push(e);
    requestAnimationFrame(() => { e.paint = performance.timeOrigin + performance.now(); });
  };
  const log = document.getElementById("log");
  new MutationObserver(() => stamp(window.__fd.log, {seq: log.firstElementChild ? log.firstElementChild.value : 0}))
    .observe(log, {childList: true});
  const board = document.getElementById("board");
  new MutationObserver(() => stamp(window.__fd.board, {})).observe(board, {childList: true, subtree: true, attributes: true, characterData: true});
})();
"""


def clients_main(port: int, n: int, after: int, browser: bool) -> None:
    """Child process: ``n`` SSE clients (and a headless Chromium on the spectator page); prints 'ready', then on
    'stop' from stdin prints every arrival as one JSON line.

    The clients are ``n`` sockets served by ONE thread with a selector, each event stamped when the read that
    completes it returns: phones are separate devices, so what is timed is when the event reached the client, not
    how long thirty Python threads in this process queue for its interpreter lock (a thread per client measured
    that too: its p99 was several ms of this process's own waiting)."""
    import selectors
    import socket

    arrivals: dict[int, list[int]] = {}
    sel = selectors.DefaultSelector()
    request = (f"GET /api/public/events?after={after} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
               "Accept: text/event-stream\r\n\r\n").encode()
    for _ in range(n):
        sock = socket.create_connection(("127.0.0.1", port), timeout=30)
        sock.sendall(request)
        opening = b""
        while b"retry:" not in opening:  # the stream is open (the hub holds it) once its first line came
            more = sock.recv(4096)
            if not more:
                raise ConnectionError(f"the server closed an event stream at once: {opening[:200]!r}")
            opening += more
        sock.setblocking(False)
        sel.register(sock, selectors.EVENT_READ, bytearray(opening[opening.index(b"retry:"):]))
    stop = threading.Event()

    def listen() -> None:
        while not stop.is_set():
            for key, _mask in sel.select(timeout=0.2):
                try:
                    chunk = key.fileobj.recv(1 << 20)  # type: ignore[union-attr]
                except BlockingIOError:
                    continue
                t = time.perf_counter_ns()
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                buf: bytearray = key.data
                buf += chunk
                while (end := buf.find(b"\n\n")) >= 0:  # one whole SSE message (chunked framing lines pass by)
                    message = bytes(buf[:end])
                    del buf[:end + 2]
                    at = message.find(b"id: ")
                    if at >= 0 and b"data: " in message:
                        seq = int(message[at + 4:message.index(b"\n", at)])
                        arrivals.setdefault(seq, []).append(t)

    threading.Thread(target=listen, daemon=True).start()
    page = pw = b = None
    if browser:
        from playwright.sync_api import sync_playwright

        pw = sync_playwright().start()
        b = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
        page = b.new_page()
        page.goto(f"http://127.0.0.1:{port}/")
        page.wait_for_selector("#log", state="attached")
        page.evaluate(PAGE_PROBE)
    print("ready", flush=True)
    sys.stdin.readline()
    time.sleep(0.3)
    stop.set()
    out: dict[str, Any] = {"arrivals": {str(k): v for k, v in arrivals.items()}}
    if page is not None:
        out["page"] = page.evaluate("window.__fd")
        b.close()
        pw.stop()
    print(json.dumps(out), flush=True)


# ---------------------------------------------------------------------------------------------------- one run
def one_run(path: str, clients: int, moves: int, seed: int, browser: bool) -> dict[str, list[float]]:
    from controller.referee.table import open_table
    from controller.rules.deploy import random_deployment
    from controller.sensing.profile import find_profile
    from web_referee.server import WebServer

    profile = find_profile(PROFILE)
    tmp = Path(tempfile.mkdtemp(prefix="fd-e2e-"))
    magnets: Any = SerialMagnets(profile, tmp) if path == "serial" else GpioMagnets(profile)
    board = magnets.board(profile)
    if path == "serial":
        # the serial board connects in its own thread once run; wait for the link below
        pass
    table = open_table(PROFILE, board=board, board_kind=path, journal_path=tmp / "j.sqlite", resume=False, profile=profile)
    session = table.session
    rng = random.Random(seed)

    # ---- instrumentation (all perf_counter_ns, the system-wide monotonic clock the client process shares)
    snap_in: list[int] = []
    journal_spans: list[tuple[int, int]] = []
    published: dict[int, tuple[int, int, int]] = {}  # seq -> (snapshot entry, publish start, publish end)
    current: dict[str, int] = {}
    got = threading.Condition()

    real_on_snapshot = session.on_snapshot

    def on_snapshot(snap: Any) -> None:
        current["in"] = time.perf_counter_ns()
        snap_in.append(current["in"])
        real_on_snapshot(snap)

    session.on_snapshot = on_snapshot  # type: ignore[method-assign]
    if table.journal is not None:
        real_append = table.journal.append

        def append(*a: Any, **k: Any) -> Any:
            t0 = time.perf_counter_ns()
            try:
                return real_append(*a, **k)
            finally:
                journal_spans.append((t0, time.perf_counter_ns()))

        table.journal.append = append  # type: ignore[method-assign]

    def first(ev: Any) -> None:
        if ev.ruling is not None:
            current["pub0"] = time.perf_counter_ns()

    session.subscribe(first)
    # every client here comes from 127.0.0.1: allow them all the spectator streams (a club room spreads them out)
    server = WebServer(table, host="127.0.0.1", port=0, spectator_streams=clients + 4, spectator_streams_per_address=clients + 4)
    server.start()
    server.app  # noqa: B018  (built now, as warm_up() does after the referee is ready)
    if TUNE:
        from controller.referee import tuning

        tuning.for_low_latency()  # as `facedown play` does once ready

    def last(ev: Any) -> None:
        if ev.ruling is not None:
            with got:
                published[ev.seq] = (current.get("in", 0), current.get("pub0", 0), time.perf_counter_ns())
                got.notify_all()

    session.subscribe(last)
    table.start()
    if path == "serial":
        assert board.wait_known(10), board.status

    for side in table.game.sides:
        session.register_setup(side, random_deployment(table.game, side, rng))
    magnets.move("place", *session.expected_board())
    _wait(lambda: set(table.board.current().occupied) == set(session.expected_board()) and table.state.phase == "play", 10)
    time.sleep(0.2)

    proc = subprocess.Popen([sys.executable, __file__, "_clients", str(server.port), str(clients),
                             str(session.log[-1].seq), "1" if browser else "0"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None and proc.stdin is not None
    if proc.stdout.readline().strip() != "ready":
        raise SystemExit("the client process did not start")
    _wait(lambda: server.hub.client_count >= clients + (1 if browser else 0), 20)

    timed: list[tuple[int, float, int, str, str]] = []  # (raw mono ns, raw wall s, seq, from, to)
    for _ in range(moves):
        st = table.state
        if st.phase != "play":
            break
        quiet = [m for m in st.legal_moves() if m.to not in st.board]
        if not quiet:
            break
        m = rng.choice(quiet)
        magnets.move("lift", m.frm)
        _wait(lambda f=m.frm: f not in table.board.current().occupied, 5)
        time.sleep(0.015 + rng.random() * 0.02)  # the player's hand: also puts the change at any scan phase
        n = len(published)
        mono, wall = magnets.move("place", m.to)
        with got:
            if not got.wait_for(lambda n=n: len(published) > n, 5):
                raise SystemExit(f"no verdict for {m.frm}-{m.to} ({path}, {clients} clients)")
            seq = max(published)
        timed.append((mono, wall, seq, m.frm, m.to))
        time.sleep(0.06)  # let every client and the page receive and paint it before the next move

    proc.stdin.write("stop\n")
    proc.stdin.flush()
    result = json.loads(proc.stdout.readline())
    proc.wait(10)
    try:
        server.stop()
    except OSError as exc:  # seen once: waitress's trigger already closed while stopping; the figures stand
        print(f"  warning: stopping the web server: {exc}", file=sys.stderr)
    table.stop()
    magnets.close()

    arrivals = {int(k): v for k, v in result["arrivals"].items()}
    out: dict[str, list[float]] = {k: [] for k in (
        "raw_event", "soft_event", "settle_scan_link", "recognize_judge", "journal", "publish", "transport",
        "raw_log_painted", "log_paint", "raw_board_changed")}
    page = result.get("page") or {"log": [], "board": []}
    for mono, wall, seq, _frm, _to in timed:
        t_in, pub0, pub1 = published[seq]
        jr = sum(min(b, pub0) - a for a, b in journal_spans if t_in <= a < pub0)
        out["settle_scan_link"].append((t_in - mono) / 1e6)
        out["journal"].append(jr / 1e6)
        out["recognize_judge"].append((pub0 - t_in - jr) / 1e6)
        out["publish"].append((pub1 - pub0) / 1e6)
        for t in arrivals.get(seq, []):
            out["raw_event"].append((t - mono) / 1e6)
            out["soft_event"].append((t - t_in) / 1e6)
            out["transport"].append((t - pub1) / 1e6)
        # the page numbers each log line with its event's sequence number (newest first)
        line = next((e for e in page["log"] if e.get("seq", 0) >= seq and e["t"] >= wall * 1000), None)
        if line is not None:
            out["raw_log_painted"].append(line.get("paint", line["t"]) - wall * 1000)
            out["log_paint"].append(line.get("paint", line["t"]) - line["t"])
            change = next((e for e in page["board"] if e["t"] >= line["t"] - 50 and e["t"] >= wall * 1000), None)
            if change is not None:
                out["raw_board_changed"].append(change.get("paint", change["t"]) - wall * 1000)
    missing = sum(1 for *_, seq, _f, _t in timed if len(arrivals.get(seq, [])) < clients)
    if missing:
        print(f"  warning: {missing} verdicts did not reach every client", file=sys.stderr)
    return out


def _wait(cond: Any, timeout: float) -> None:
    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise TimeoutError("e2e benchmark: waited too long")
        time.sleep(0.001)


# ---------------------------------------------------------------------------------------------------- main
def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "_firmware":
        firmware_main(sys.argv[2], sys.argv[3])
        return 0
    if len(sys.argv) > 1 and sys.argv[1] == "_clients":
        clients_main(int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1")
        return 0
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--moves", type=int, default=60, help="timed moves per run (default 60)")
    ap.add_argument("--runs", type=int, default=2, help="runs per path and client count (default 2)")
    ap.add_argument("--clients", default="1,30")
    ap.add_argument("--paths", default="serial,gpio")
    ap.add_argument("--no-browser", action="store_true")
    ap.add_argument("--no-tuning", action="store_true", help="skip controller.referee.tuning (to compare)")
    args = ap.parse_args()
    global TUNE
    TUNE = not args.no_tuning
    browser = not args.no_browser
    if browser and not Path(CHROMIUM).exists():
        print(f"no Chromium at {CHROMIUM}: browser figures left out (apt-get install chromium)", file=sys.stderr)
        browser = False
    from controller.sensing.profile import find_profile

    prof = find_profile(PROFILE)
    settle, scan = prof.settle_ms, prof.scan_period_ms
    print(f"profile {PROFILE}: settle {settle} ms, scan period {scan} ms; {args.runs} run(s) x {args.moves} moves; "
          f"{os.cpu_count()} cores, Python {sys.version.split()[0]}")
    print(f"targets: software part (snapshot -> event received) p99 <= 10 ms with 30 clients; "
          f"raw change -> event p99 <= settle + scan + 10 = {settle + scan + 10} ms")
    for path in args.paths.split(","):
        for n in (int(x) for x in args.clients.split(",")):
            pooled: dict[str, list[float]] = {}
            p99s: list[float] = []
            for run in range(args.runs):
                r = one_run(path, n, args.moves, seed=100 + run, browser=browser)
                p99s.append(pct(r["raw_event"], 99))
                for k, v in r.items():
                    pooled.setdefault(k, []).extend(v)
            print(f"\n{path}, {n} SSE client(s) in another process{' + 1 Chromium page' if browser else ''}:")
            print(f"  raw change -> event received    {fmt(pooled['raw_event'])}   (per-run p99: "
                  f"{', '.join(f'{x:.1f}' for x in p99s)})")
            print(f"  snapshot -> event received      {fmt(pooled['soft_event'])}")
            if browser:
                print(f"  raw change -> log line painted  {fmt(pooled['raw_log_painted'])}")
                print(f"  raw change -> board redrawn     {fmt(pooled['raw_board_changed'])}")
            print("  breakdown:")
            print(f"    settle + scan phase + link    {fmt(pooled['settle_scan_link'])}")
            print(f"    recognize + judge             {fmt(pooled['recognize_judge'])}")
            print(f"    journal (before publishing)   {fmt(pooled['journal'])}")
            print(f"    publish (subscribers)         {fmt(pooled['publish'])}")
            print(f"    transport (to each client)    {fmt(pooled['transport'])}")
            if browser:
                print(f"    paint (DOM change -> frame)   {fmt(pooled['log_paint'])}")
    print("\nLeft out: a real Pi (see pi_budget.py for Zero 2 W estimates), reed bounce, Wi-Fi, attacks, seat pages.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
