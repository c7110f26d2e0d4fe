"""Prints the bot-protocol transcript of docs/bots.md: a real exchange with `python -m controller.bots.example`
(the random bot, seed 7) for red in Luzhanqi, blue deployed by the rules-built setup of seed 1. The host refuses
red's first move to show a refusal. tests/test_bots_protocol.py replays the printed transcript line by line.

    python tools/bot_transcript.py > /tmp/transcript.txt
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from controller.bots.process import ProcessBot  # noqa: E402
from controller.bots.setups import built_setup  # noqa: E402
from controller.rules import new_game, redact_ruling, view  # noqa: E402

COMMAND = "python -m controller.bots.example random"


def main() -> None:
    bot = ProcessBot(f"{sys.executable} -m controller.bots.example random")
    st = new_game("luzhanqi")
    bot.new_game("luzhanqi", "red", st.options, 7)
    placement = bot.choose_setup(view(st, "red"), 1000)
    st.deploy("red", placement)
    st.deploy("blue", built_setup(st.game, "blue", random.Random(1)))
    bot.observe(view(st, "red"), None)
    first = bot.choose_move(view(st, "red"), 300)
    bot.refused(*first)
    move = bot.choose_move(view(st, "red"), 300)
    ruling = st.apply(move)
    bot.observe(view(st, "red"), redact_ruling(ruling, "red"))
    bot.game_over(None)
    bot.close()
    for direction, line in bot.transcript:
        print(f"{direction} {line}")  # the closing quit is in the transcript too


if __name__ == "__main__":
    main()
