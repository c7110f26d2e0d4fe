"""Child process for the crash test: plays a scripted physical game on a journaled table as fast as it can,
printing each ply, until the parent kills it. Run as `python -m tests.resume_child GAME SEED JOURNAL`."""

from __future__ import annotations

import sys

from controller.referee.table import open_table
from controller.sensing.sim import SimBoard
from tests.physical import random_game_script


def main(game: str, seed: int, journal: str) -> None:
    script = random_game_script(game, seed, max_plies=400)
    board = SimBoard(__import__("controller.rules", fromlist=["load_game"]).load_game(game).station_ids, settle_ms=20, clock=lambda: 0.0)
    table = open_table(game, board=board, board_kind="sim", journal_path=journal, resume=False)
    session = table.session
    # the announcement: what the buzzer and the pages would tell the players, printed as it is published
    session.subscribe(lambda ev: print(f"announced {ev.ruling.ply}", flush=True)
                      if ev.ruling is not None and ev.public.get("event") in ("move", "attack") else None)
    last = -1
    now = 0
    for line in script.lines:
        if "setup" in line:
            session.register_setup(line["setup"], line["pieces"])
            for s in line["pieces"]:
                board.place(s, now)
        elif "lift" in line:
            board.lift(line["lift"], now)
        elif "place" in line:
            board.place(line["place"], now)
        else:
            now += line["tick_ms"]
            snap = board.tick(now)
            if snap is not None:
                session.on_snapshot(snap)
        if session.state.ply != last:
            last = session.state.ply
            print(f"ply {last}", flush=True)
    print("done", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), sys.argv[3])
