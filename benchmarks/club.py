"""Club benchmark: 20 tables publishing at once to a real Mosquitto broker on loopback, one dashboard listening.
Measures ruling -> dashboard update latency (the session publishing a move or attack until the dashboard's state
has applied it), and the time the referee's thread spends handing each event to the table's bus.

    python benchmarks/club.py [--tables 20] [--plies 30] [--stock]

Prints p50/p99 figures; asserts nothing about timing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from controller.club.broker import parse_broker  # noqa: E402
from controller.club.bus import TableBus  # noqa: E402
from harness.broker import Mosquitto  # noqa: E402
from harness.web_game import Game  # noqa: E402
from web_referee.club import ClubListener, ClubState  # noqa: E402

handoff: list[float] = []  # seconds the bus's own subscriber took in the referee's thread, per event


class TimedBus(TableBus):
    """The club bus with its subscriber timed (it subscribes this on_event itself)."""

    def on_event(self, ev) -> None:  # noqa: ANN001
        t0 = time.perf_counter()
        super().on_event(ev)
        handoff.append(time.perf_counter() - t0)


def pct(xs: list[float], p: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=20)
    ap.add_argument("--plies", type=int, default=30)
    ap.add_argument("--pace", type=float, default=0.25, help="seconds between one table's moves (a real table: several)")
    ap.add_argument("--stock", action="store_true", help="run Mosquitto with its own default queue limits, not the club's")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        broker = Mosquitto(Path(tmp), stock=args.stock)
        broker.start()
        address = parse_broker(broker.url)
        state = ClubState()
        sent: dict[tuple[str, int], float] = {}
        got: dict[tuple[str, int], float] = {}
        state.listeners.append(lambda name, kind, data: got.setdefault((name, data["seq"]), time.perf_counter())
                               if kind == "events" else None)
        listener = ClubListener(state, address, client_id="bench-dashboard")
        listener.start()
        listener.connected.wait(5)
        games: list[tuple[str, Game, TableBus]] = []
        handoff.clear()
        for i in range(args.tables):
            d = Path(tmp) / f"t{i}"
            d.mkdir()
            g = Game("stratego", d, seed=i)
            name = f"t{i}"
            g.session.subscribe(lambda ev, name=name: sent.__setitem__((name, ev.seq), time.perf_counter())
                                if ev.public.get("event") in ("move", "attack") else None)
            bus = TimedBus(g.table, address, name)
            bus.start()
            games.append((name, g, bus))

        def play(g: Game) -> None:
            g.start()
            for _ in range(args.plies):
                if not g.random_move():
                    break
                time.sleep(args.pace)  # a real table's moves come seconds apart

        t0 = time.perf_counter()
        threads = [threading.Thread(target=play, args=(g,)) for _, g, _ in games]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        public = {(name, e.seq) for name, g, _ in games for e in g.session.log if not e.audience}
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline and not all(k in got for k in public):
            time.sleep(0.05)
        wall = time.perf_counter() - t0
        lat = [(got[k] - sent[k]) * 1000 for k in sent if k in got]
        published = sum(b.published for _, _, b in games)
        for _, _, b in games:
            b.stop()
        listener.stop()
        broker.stop()
        dropped = broker.dropped()
    print(f"club: {args.tables} tables, one move each per {args.pace} s, {len(sent)} rulings, {published} MQTT messages in {wall:.1f} s"
          + (" (Mosquitto's stock queue limits)" if args.stock else " (the club configuration's queue limits)"))
    print(f"delivered to the dashboard: rulings {len(lat)}/{len(sent)}, every public event {len(public & set(got))}/{len(public)}; "
          f"broker log lines about dropped messages: {len(dropped)}")
    print(f"ruling -> dashboard update: p50 {pct(lat, 50):.1f} ms, p99 {pct(lat, 99):.1f} ms, max {max(lat):.1f} ms")
    hs = [h * 1e6 for h in handoff]
    print(f"referee thread, hand-off to the bus per event: p50 {pct(hs, 50):.1f} µs, p99 {pct(hs, 99):.1f} µs "
          f"(mean {statistics.mean(hs):.1f} µs)")
    print("leaves out: the boards (moves are handed to the sessions directly), the network between the club's Pis "
          "(loopback, one process), the dashboard's browser drawing")


if __name__ == "__main__":
    main()
