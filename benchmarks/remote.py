"""Remote play benchmark, through a real Mosquitto on loopback.

1. A ruling to the opponent's board: two simulated boards and one host; from the reading that completes a move on
   the mover's board until the opponent's board has the ruling (its instruction to move the token), p50/p99, with
   0 and 100 ms of round-trip delay added on each board's link (a delaying TCP proxy between board and broker).
2. Many games on one host process: N games on one broker connection (``HostGroup``), each game's two seats played by one driver client
   (sealed messages as boards send them); the host's CPU per move (thread CPU time of handling a move: unseal,
   judge, journal, both seats' views and messages, publish) and the process's memory per game (RSS growth / N).

    python benchmarks/remote.py [--plies 30] [--delays 0,100] [--games 20] [--game-plies 20]
    python benchmarks/remote.py --delays "" --games 20 --game-plies 400    # memory per game of long games

Prints figures; asserts nothing about timing.
"""

from __future__ import annotations

import argparse
import random
import select
import socket
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.club.broker import parse_broker  # noqa: E402
from controller.remote import commitment  # noqa: E402
from controller.remote.host import HostGroup, RemoteHost  # noqa: E402
from controller.remote.protocol import inbox_topic, seal  # noqa: E402
from controller.remote.seat import RemoteSeat  # noqa: E402
from controller.rules import load_game  # noqa: E402
from controller.rules.deploy import random_deployment  # noqa: E402
from controller.sensing.sim import SimBoard  # noqa: E402
from harness.broker import Mosquitto  # noqa: E402


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def settled_rss_kb(link: Any = None) -> int:
    """The process's RSS once what it holds only in passing is gone: every message the host published handed to
    the broker (paho keeps each until acknowledged), the garbage collected, and freed memory given back by malloc
    (RSS is otherwise the high-water mark of the run's bursts, not what the games hold)."""
    import ctypes
    import gc

    end = time.monotonic() + 30
    while link is not None and link.client._out_messages and time.monotonic() < end:  # noqa: SLF001 - paho's queue
        time.sleep(0.05)
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    return rss_kb()


def sqlite_kb() -> int | None:
    """What SQLite has allocated in this process (every journal's connection: schema, statements, page cache), or
    None where its library cannot be asked."""
    import ctypes

    try:
        lib = ctypes.CDLL("libsqlite3.so.0")
        lib.sqlite3_memory_used.restype = ctypes.c_int64
        return int(lib.sqlite3_memory_used()) // 1024
    except (OSError, AttributeError):
        return None


def rss_kb() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


class DelayProxy:
    """A TCP proxy on loopback that holds each chunk ``one_way_s`` in each direction (round trip: twice that)."""

    def __init__(self, target_port: int, one_way_s: float) -> None:
        self.target = target_port
        self.delay = one_way_s
        self.server = socket.socket()
        self.server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.server.bind(("127.0.0.1", 0))
        self.server.listen(16)
        self.port = self.server.getsockname()[1]
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                a, _ = self.server.accept()
            except OSError:
                return
            b = socket.create_connection(("127.0.0.1", self.target))
            for src, dst in ((a, b), (b, a)):
                threading.Thread(target=self._pump, args=(src, dst), daemon=True).start()

    def _pump(self, src: socket.socket, dst: socket.socket) -> None:
        queue: list[tuple[float, bytes]] = []
        lock = threading.Condition()

        def sender() -> None:
            while True:
                with lock:
                    while not queue:
                        lock.wait()
                    due, data = queue.pop(0)
                if not data:
                    dst.close()
                    return
                wait = due - time.monotonic()
                if wait > 0:
                    time.sleep(wait)
                try:
                    dst.sendall(data)
                except OSError:
                    return

        threading.Thread(target=sender, daemon=True).start()
        while True:
            try:
                select.select([src], [], [])
                data = src.recv(65536)
            except OSError:
                data = b""
            with lock:
                queue.append((time.monotonic() + self.delay, data))
                lock.notify()
            if not data:
                return


class Driver:
    """One simulated board of a remote seat, driven here."""

    def __init__(self, game: str, url: str, code: Any) -> None:
        self.t = 0.0
        self.sim = SimBoard(load_game(game).station_ids, clock=lambda: self.t)
        self.seat = RemoteSeat(game, parse_broker(url), code, self.sim)
        self.session = self.seat.session
        self.told_at: float | None = None
        self.session.subscribe(self._on_event)
        self.seat.start()

    def _on_event(self, ev: Any) -> None:
        if ev.public.get("event") == "remote" and ev.public.get("kind") == "move" and not ev.public.get("again"):
            self.told_at = time.perf_counter()

    def settle(self) -> None:
        self.t += 0.1
        snap = self.sim.tick()
        if snap is not None:
            self.session.on_snapshot(snap)

    def set(self, station: str, on: bool) -> None:
        (self.sim.place if on else self.sim.lift)(station)
        self.settle()

    def fix(self) -> None:
        for _ in range(4):
            with self.session.lock:
                awaited = self.session.recognizer.fixup_target()
                want = set(awaited[0]) if awaited else set(self.session.expected_board())
                left = awaited[1] if awaited else frozenset()
            have = set(self.sim.raw_occupied())
            for s in sorted(have - want):
                self.set(s, False)
            for s in sorted(want - have):
                self.set(s, True)
            for s in sorted(left):
                self.set(s, False)
                self.set(s, True)
            if not self.session.recognizer.fixing:
                return
        raise RuntimeError("the board never matched")


def wait(cond: Any, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.0005)
    raise RuntimeError("timed out")


def latency_run(broker: Mosquitto, tmp: Path, delay_ms: float, plies: int, seed: int) -> list[float]:
    proxy = DelayProxy(broker.port, delay_ms / 2000.0)
    host = RemoteHost("stratego", parse_broker(broker.url), journal_path=tmp / f"lat-{delay_ms}.sqlite",
                      game_id=f"lat{int(delay_ms)}")
    host.start()
    codes = host.join_codes()
    boards = {s: Driver("stratego", f"mqtt://127.0.0.1:{proxy.port}", codes[s]) for s in host.seats}
    rng = random.Random(seed)
    try:
        for side, b in boards.items():
            wait(lambda b=b: b.seat.synced)
            b.session.register_setup(side, random_deployment(b.session.game, side, rng, b.session.state.options))
        for b in boards.values():
            wait(lambda b=b: b.session.state.phase == "play")
            b.fix()
        out = []
        for _ in range(plies):
            st = host.session.state
            if st.phase != "play":
                break
            mover, ply = st.turn, st.ply
            frm, to = rng.choice(st.legal_moves())
            other = next(b for s, b in boards.items() if s != mover)
            other.told_at = None
            mb = boards[mover]
            attack = to in mb.sim.raw_occupied()
            mb.set(frm, False)
            if attack:
                mb.set(to, False)
            t0 = time.perf_counter()
            mb.set(to, True)  # the reading that completes the move
            wait(lambda other=other: other.told_at is not None)
            out.append(other.told_at - t0)  # type: ignore[operator]
            wait(lambda mb=mb, ply=ply: mb.session.state.ply == ply + 1)
            mb.fix()
            attack = to in other.sim.raw_occupied()
            other.set(frm, False)
            if attack:
                other.set(to, False)
            other.set(to, True)
            other.fix()
        return out
    finally:
        for b in boards.values():
            b.seat.stop()
        host.stop()
        proxy.server.close()


class TimedHost(RemoteHost):
    """A host whose handling of each move is timed in its own thread's CPU time."""

    move_cpu: list[float] = []

    def handle(self, topic: str, payload: bytes) -> None:
        t0 = time.thread_time()
        super().handle(topic, payload)
        if b'"type":"move"' in payload:
            TimedHost.move_cpu.append(time.thread_time() - t0)


def scale_run(broker: Mosquitto, tmp: Path, games: int, plies: int, seed: int,
              paced: bool = False) -> tuple[list[float], float, int]:
    import paho.mqtt.client as mqtt

    group = HostGroup(parse_broker(broker.url))
    group.start()
    before = settled_rss_kb()
    hosts = []
    for i in range(games):
        h = TimedHost("stratego", group.link.broker, journal_path=tmp / f"g{i}.sqlite", game_id=f"g{i}", link=group.link)
        group.hosts[h.game_id] = h
        h.start()
        hosts.append(h)
    driver = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="driver")
    driver.connect("127.0.0.1", broker.port)
    driver.loop_start()
    rng = random.Random(seed)
    for h in hosts:
        for side in h.seats:
            placement = random_deployment(h.game, side, rng, h.session.state.options)
            salts = commitment.make_salts(placement)
            msg = {"type": "deploy", "placement": placement, "commit": commitment.commit(h.game_id, side, placement, salts)}
            driver.publish(inbox_topic(h.game_id, side), seal(h.secrets[side], msg), qos=1)
    wait(lambda: all(h.session.state.phase == "play" for h in hosts), 60)
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    moved = 0
    for _ in range(plies):
        want = {}
        for h in hosts:
            st = h.session.state
            if st.phase != "play":
                continue
            frm, to = rng.choice(st.legal_moves())
            want[h.game_id] = st.ply + 1
            msg = {"type": "move", "ply": st.ply, "try": 0, "from": frm, "to": to, "have": len(h.outbox[st.turn])}
            driver.publish(inbox_topic(h.game_id, st.turn), seal(h.secrets[st.turn], msg), qos=1)
        wait(lambda want=want: all(h.session.state.ply >= want.get(h.game_id, 0) for h in hosts), 60)
        moved += len(want)
        if paced:  # people move seconds apart: each round's messages are with the broker before the next round
            wait(lambda: not group.link.client._out_messages, 60)  # noqa: SLF001 - paho's queue of unacknowledged
    wall = time.perf_counter() - t0
    process_cpu = time.process_time() - cpu0
    peak = (rss_kb() - before) / games
    per_game = (settled_rss_kb(group.link) - before) / games
    held = sqlite_kb()
    if held is not None:
        print(f"  of which SQLite (a connection per game's journal): {held / games / 1024:.2f} MB per game")
    driver.loop_stop()
    group.stop()
    print(f"  {games} games x {plies} plies: {moved} moves in {wall:.2f} s wall ({moved / wall:.0f} moves/s through one broker); "
          f"the whole process's CPU (every thread: the host's network and journal threads, and this driver's) "
          f"{process_cpu / max(moved, 1) * 1000:.2f} ms per move")
    print(f"  RSS growth during the run, per game: {peak / 1024:.2f} MB (with the messages in flight to the broker)")
    return TimedHost.move_cpu[-moved:], per_game, moved


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--plies", type=int, default=30, help="moves timed per delay setting")
    ap.add_argument("--delays", default="0,100", help="added round-trip delays in ms, comma-separated")
    ap.add_argument("--games", type=int, default=20, help="concurrent games on one host process (the issue asks 200)")
    ap.add_argument("--game-plies", type=int, default=20, help="moves per game in the scale run")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--paced", action="store_true", help="each round of moves handed to the broker before the next "
                    "(as people play, seconds apart), not every game's moves as fast as the host takes them")
    ap.add_argument("--nagle", action="store_true", help="leave Mosquitto's set_tcp_nodelay off (its default)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        broker = Mosquitto(Path(tmp))
        if not args.nagle:  # as docs/remote.md configures the broker: each small message sent at once
            broker.conf.write_text(broker.conf.read_text().replace("allow_anonymous true", "allow_anonymous true\nset_tcp_nodelay true"))
        broker.start()
        try:
            print("A ruling to the opponent's board (the move's last reading on the mover's board -> instruction "
                  "on the other board):")
            for d in (float(x) for x in args.delays.split(",") if x.strip()):
                xs = [x * 1000 for x in latency_run(broker, Path(tmp), d, args.plies, args.seed)]
                print(f"  +{d:g} ms round trip per board link: p50 {statistics.median(xs):.1f} ms, "
                      f"p99 {pct(xs, 99):.1f} ms, max {max(xs):.1f} ms ({len(xs)} moves)")
            print("Many games on one host process:")
            cpu, per_game, moved = scale_run(broker, Path(tmp), args.games, args.game_plies, args.seed, args.paced)
            us = [x * 1e6 for x in cpu]
            print(f"  host CPU per move: mean {statistics.mean(us) / 1000:.2f} ms, p50 {statistics.median(us) / 1000:.2f} ms, "
                  f"p99 {pct(us, 99) / 1000:.2f} ms ({len(us)} moves timed)")
            print(f"  memory: {per_game / 1024:.2f} MB RSS per game once settled ({args.games} games, {moved / args.games:.0f} plies "
                  "each on average)")
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
