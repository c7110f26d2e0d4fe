"""Referee latency: snapshot -> published ruling (p50/p99, without and with the SQLite journal), and the time to
resume a 500-move game from its journal. Run: ./dev bench referee  (or python benchmarks/referee.py).

Only the referee's own work, in one thread: the simulated board runs on a fake clock and the snapshot is handed to
the session directly. It leaves out what a player waits for besides: the settle time and the scan phase (about
40-50 ms with the shipped profiles), the serial link, the web server, the transport to the pages and their drawing,
and any other thread competing for the interpreter. benchmarks/e2e.py measures all of that end to end."""

from __future__ import annotations

import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from controller.referee.session import Session  # noqa: E402
from controller.referee.table import open_table  # noqa: E402
from controller.rules import new_game  # noqa: E402
from controller.rules.deploy import random_deployment  # noqa: E402
from controller.sensing.sim import SimBoard  # noqa: E402


def pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(q * len(xs)))]


def ruling_latency(game: str, plies: int, seed: int, journal_dir: str | None) -> list[float]:
    """Seconds from handing the session the snapshot that completes a move to the ruling being published."""
    rng = random.Random(seed)
    board = SimBoard(new_game(game).game.station_ids, settle_ms=20, clock=lambda: 0.0)
    if journal_dir:
        table = open_table(game, board=board, board_kind="sim", journal_path=Path(journal_dir) / f"{game}-{seed}.sqlite", resume=False)
        session = table.session
    else:
        session = Session(new_game(game))
    state = session.state
    published: list[float] = []
    session.subscribe(lambda ev: published.append(time.perf_counter()) if ev.public["event"] in ("move", "attack") else None)
    for side in state.game.sides:
        session.register_setup(side, random_deployment(state.game, side, rng))
    t = 0
    board.fill(list(state.board), t)
    session.on_snapshot(board.tick(t + 25))
    out = []
    while state.phase == "play" and state.ply < plies:
        frm, to = rng.choice(state.legal_moves())
        steps = [("lift", frm)] + ([("lift", to)] if to in state.board else []) + [("place", to)]
        for i, (kind, st) in enumerate(steps):
            t += 30
            getattr(board, kind)(st, t)
            t += 30
            snap = board.tick(t)
            if i == len(steps) - 1:
                if journal_dir:  # players take seconds per move: the last ruling's background fsync is done by now
                    table.journal.wait_durable()
                n = len(published)
                start = time.perf_counter()
                session.on_snapshot(snap)
                if len(published) > n:
                    out.append(published[-1] - start)
            else:
                session.on_snapshot(snap)
        t = fix_board(board, session, t)
    return out


def fix_board(board: SimBoard, session: Session, t: int) -> int:
    """Do the fix-up the referee asks for: take off, put back, and swap where one piece replaces another."""
    pending = session.recognizer.fixup_target()
    want = set(session.expected_board())
    swaps = sorted(pending[1]) if pending else []
    for st in sorted(board.raw_occupied() - want) + swaps:
        t += 30
        board.lift(st, t)
        t += 30
        snap = board.tick(t)
        if snap is not None:
            session.on_snapshot(snap)
    for st in sorted(want - board.raw_occupied()) + swaps:
        t += 30
        board.place(st, t)
        t += 30
        snap = board.tick(t)
        if snap is not None:
            session.on_snapshot(snap)
    return t


def resume_time(game: str, plies: int) -> tuple[float, int]:
    """Seconds to reopen a journal and rebuild an unfinished game of about ``plies`` moves."""
    with tempfile.TemporaryDirectory() as d:
        for seed in range(50):
            rng = random.Random(seed)
            board = SimBoard(new_game(game).game.station_ids, settle_ms=20, clock=lambda: 0.0)
            path = Path(d) / f"r{seed}.sqlite"
            table = open_table(game, board=board, board_kind="sim", journal_path=path, resume=False)
            state = table.state
            for side in state.game.sides:
                table.session.register_setup(side, random_deployment(state.game, side, rng))
            while state.phase == "play" and state.ply < plies:
                frm, to = rng.choice(state.legal_moves())
                state.apply((frm, to))
                table.journal.append(table.game_id, "move", {"side": state.history[-1].side, "from": frm, "to": to})
            table.stop()
            if state.phase == "play":
                times = []
                for _ in range(5):
                    start = time.perf_counter()
                    t2 = open_table(game, board=board, board_kind="sim", journal_path=path)
                    times.append(time.perf_counter() - start)
                    assert t2.state.ply == state.ply
                    t2.stop()
                return statistics.median(times), state.ply
    raise RuntimeError(f"no random {game} game lasted {plies} plies")


def main() -> None:
    print("Snapshot -> published ruling (the snapshot that completes a move or attack), fake clock, one thread;")
    print("leaves out settle + scan phase (~40-50 ms), the link, the web and its clients: see e2e.py for those")
    print(f"{'game':<10} {'journal':<8} {'rulings':>7} {'p50 ms':>8} {'p99 ms':>8}")
    with tempfile.TemporaryDirectory(dir=Path.cwd()) as d:
        for game in ("stratego", "lattaque", "luzhanqi"):
            for jdir, label in ((None, "none"), (d, "sqlite")):
                lat = []
                for seed in range(4):
                    lat += ruling_latency(game, 250, seed, jdir)
                print(f"{game:<10} {label:<8} {len(lat):>7} {pct(lat, .5) * 1e3:>8.3f} {pct(lat, .99) * 1e3:>8.3f}")
    print()
    for game in ("stratego", "luzhanqi"):
        secs, plies = resume_time(game, 500)
        print(f"Resume a {plies}-move {game} game from its journal: {secs * 1e3:.0f} ms (median of 5)")


if __name__ == "__main__":
    main()
