"""Board page benchmark: how soon after a ruling each role's page shows it, in a real headless Chromium on loopback.

The referee publishes each event with the role's redacted state on the live stream, so the page redraws from the
event alone. Measured over a Luzhanqi game played on the simulated board with a spectator, both seats and the
arbiter open at phone size:
  - ruling published -> page redrawn (wall clock, server and browser on one machine), per role;
  - event arrived -> board redrawn (in the page), and -> the next frame;
  - requests a live page makes per move (0: nothing is fetched after an event);
  - the referee's CPU per pushed state (building one role's view for its stream).

    python benchmarks/web_paint.py [--plies 40] [--seed 3]

Prints p50/p99 figures; asserts nothing about timing.
"""

from __future__ import annotations

import argparse
import random
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
from web_referee import payloads  # noqa: E402
from web_referee.server import WebServer  # noqa: E402

CHROMIUM = "/usr/bin/chromium"


def pct(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[min(len(s) - 1, int(q * len(s)))] if s else float("nan")


def row(name: str, xs: list[float]) -> str:
    return f"{name:<44} p50 {pct(xs, .5):7.2f} ms   p99 {pct(xs, .99):7.2f} ms   (n={len(xs)})"


def wait(cond, timeout: float = 10.0) -> None:  # noqa: ANN001
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if cond():
            return
        time.sleep(0.005)
    raise TimeoutError("the referee did not get there")


def act(table, kind: str, station: str) -> None:  # noqa: ANN001
    (table.board.lift if kind == "lift" else table.board.place)(station)
    want = kind == "place"
    wait(lambda: table.session.snapshot is not None and (station in table.session.snapshot.occupied) == want)


def play(table, frm: str, to: str) -> None:  # noqa: ANN001
    """Lift, (lift the enemy), place; then the fix-up, as players at the table do."""
    before = {s: p.uid for s, p in table.state.board.items()}
    ply = table.state.ply
    attack = to in table.state.board
    act(table, "lift", frm)
    if attack:
        act(table, "lift", to)
    act(table, "place", to)
    wait(lambda: table.state.ply == ply + 1)
    physical = dict(before)
    physical[to] = physical.pop(frm)
    after = {s: p.uid for s, p in table.state.board.items()}
    changed = sorted(s for s in set(physical) | set(after) if physical.get(s) != after.get(s))
    for s in changed:
        if s in physical:
            act(table, "lift", s)
    for s in changed:
        if s in after:
            act(table, "place", s)
    wait(lambda: not table.session.status["waiting_for_board"] and not table.session.status["mismatch"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--plies", type=int, default=40)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--roles", default="spectator,red,blue,arbiter", help="which pages to open (comma-separated)")
    args = ap.parse_args()
    from playwright.sync_api import sync_playwright

    tmp = Path(tempfile.mkdtemp())
    game = load_game("luzhanqi")
    table = open_table("luzhanqi", board=SimBoard(game.station_ids, settle_ms=20), board_kind="sim",
                       journal_path=tmp / "j.sqlite", resume=False)
    published: dict[int, float] = {}
    table.session.subscribe(lambda ev: published.__setitem__(ev.seq, time.time() * 1000) if ev.ruling is not None else None)
    rng = random.Random(args.seed)
    for side in game.sides:
        placement = random_deployment(game, side, rng, table.state.options)
        table.session.register_setup(side, placement)
        for s in placement:
            table.board.place(s)
    table.start()
    server = WebServer(table, host="127.0.0.1", port=0, threads=24)
    server.start()
    base = f"http://127.0.0.1:{server.port}"
    roles = {"spectator": base + "/", "red": f"{base}/seat/{table.tokens['red']}",
             "blue": f"{base}/seat/{table.tokens['blue']}", "arbiter": f"{base}/arbiter/{table.tokens['arbiter']}"}
    roles = {r: u for r, u in roles.items() if r in args.roles.split(",")}
    try:
        wait(lambda: table.state.phase == "play" and not table.session.status["waiting_for_board"])
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu",
                "--disable-renderer-backgrounding", "--disable-background-timer-throttling", "--disable-backgrounding-occluded-windows"])
            pages, requests = {}, {r: 0 for r in roles}
            for role, url in roles.items():
                page = browser.new_context(viewport={"width": 390, "height": 844}).new_page()
                page.goto(url)
                page.wait_for_selector("body[data-ready]", state="attached")
                page.on("request", lambda req, role=role: requests.__setitem__(role, requests[role] + ("/events" not in req.url)))
                pages[role] = page
            plies = 0
            while plies < args.plies and table.state.phase == "play":
                moves = [m for m in table.state.legal_moves() if table.state.copy().apply(m).result is None]
                if not moves:
                    break
                attacks = [m for m in moves if m[1] in table.state.board]
                play(table, *rng.choice(attacks if attacks and plies % 2 else moves))
                plies += 1
            time.sleep(0.5)
            print(f"FaceDown board page: Luzhanqi, {plies} plies on the simulated board, {len(pages)} page(s) at 390 x 844 "
                  f"(Chromium {browser.version}), loopback")
            for role, page in pages.items():
                paint = page.evaluate("() => window.FD_PAINT")
                e2e = [paint["done"][str(seq)] - t for seq, t in published.items() if str(seq) in paint["done"]]
                print(row(f"{role}: ruling published -> page redrawn", e2e))
                print(row(f"{role}: event arrived -> board redrawn", paint["sync"]))
                print(row(f"{role}: event arrived -> next frame", paint["frame"]))
                print(f"{role:<10} requests other than the live stream during play: {requests[role]} ({plies} plies)")
            browser.close()
        # the referee's side: building one role's pushed state for its stream, per event
        import json

        cost: dict[str, list[float]] = {}
        for role in ("spectator", "red", "arbiter"):
            last = next(e for e in reversed(table.session.log) if payloads.may_receive(e, role))
            assert "state" in payloads.pushed_event(table, last, role)
            for _ in range(200):
                t0 = time.perf_counter()
                json.dumps(payloads.pushed_event(table, last, role), ensure_ascii=False)
                cost.setdefault(role, []).append((time.perf_counter() - t0) * 1000)
        for role, xs in cost.items():
            print(row(f"referee CPU: {role} event + state as JSON", xs))
    finally:
        server.stop()
        table.stop()


if __name__ == "__main__":
    main()
