"""Plays one benchmark game with the bot code of a given checkout and prints its result and moves' digest as JSON:
``bots.py --same-play FP --as-of REV`` runs it on REV's tree and on this one, under one string hash order, to see
whether a change to the code played the same moves.

    python benchmarks/replay_one.py ROOT GAME BOT OPPONENT SEED MAX_PLIES cpu|wall

Only the APIs every version of the bots has had are used (``find_bot``, ``Match.rotation``, ``play_game`` with a
watch), so an older checkout replays with its own code; ``bots.py`` plays its games with the same ``play_seeded``.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
from typing import Any


def moves_digest(history: list[Any]) -> str:
    """A short hash of every move played (from-to, in order): two runs of a seed played alike or they did not."""
    return hashlib.sha256(";".join(f"{r.frm}-{r.to}" for r in history).encode()).hexdigest()[:16]


#: The time budget given with each move: far above any level's work on this machine.
LEVEL_BUDGET_MS = 120_000.0


def play_seeded(game: str, bot: str, opponent: str, seed: int, max_plies: int, cpu: bool) -> tuple[Any, str]:
    """One benchmark game with the ``controller`` on ``sys.path``: ``bot``'s side (and its allies) against
    ``opponent``, seats by the seed (odd: the first side), the bot's time cap on the thinking thread's CPU clock with
    ``cpu``. Returns the game's record and the digest of its moves."""
    from controller.bots import find_bot
    from controller.bots.arena import Match, play_game
    from controller.rules import load_game

    clock = time.thread_time if cpu else time.perf_counter
    if cpu:
        from controller.bots.facedown import FaceDownBot

        FaceDownBot.clock = staticmethod(time.thread_time)  # type: ignore[assignment]
    gdef = load_game(game)
    seats = {s: (bot if gdef.ally(gdef.sides[0], s) else opponent) for s in gdef.sides}
    names = Match(game, seats).rotation(seed - 1)
    bots = {s: find_bot(n) for s, n in names.items()}
    last: dict[str, Any] = {}

    def watch(st: Any, side: str, seen: Any, ruling: Any) -> None:
        last["st"] = st

    try:
        # the budget is only a cap: a level's work must never be cut short (levels 4 and 5 need seconds a move;
        # the arena's default of 1,000 ms, 80 % of it usable, held level 5 to ~800 ms a move in the first ladder)
        record = play_game(game, bots, names, seed=seed, max_plies=max_plies, clock=clock, watch=watch,
                           time_ms=LEVEL_BUDGET_MS)
    finally:
        for b in bots.values():
            b.close()
    return record, moves_digest(last["st"].history if "st" in last else [])


def main() -> None:
    if len(sys.argv) != 8:
        sys.exit(__doc__.split("\n\n")[1])
    root, game, bot, opponent, seed, max_plies, clock_name = sys.argv[1:]
    sys.path.insert(0, root)  # that checkout's code, not this one's
    record, moves = play_seeded(game, bot, opponent, int(seed), int(max_plies), clock_name == "cpu")
    mine = [s for s, n in record.seats.items() if n == bot]
    print(json.dumps({"plies": record.plies, "won": any(w in mine for w in record.winners), "draw": record.draw,
                      "reason": record.reason, "moves": moves}))


if __name__ == "__main__":
    main()
