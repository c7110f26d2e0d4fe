"""The two baseline bots: ``random`` (any legal move) and ``greedy`` (attacks what it knows it beats, else advances).

Both see only their seat's view; legal moves come from a game state built from it, with every hidden piece given
some kind (a move is legal or not whatever the hidden kinds are, except for rare attack rules; a move the referee
refuses is not tried again that turn).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .base import BotError, Player
from .setups import built_setup
from .values import worth


class RandomBot(Player):
    """Any legal move, uniformly; a deployment built from the setup rules."""

    name = "random"

    def choose_setup(self, view: Mapping[str, Any], time_ms: float) -> dict[str, str]:
        assert self.gdef is not None
        return built_setup(self.gdef, self.seat, self.rng, self.options)

    def choose_move(self, view: Mapping[str, Any], time_ms: float) -> tuple[str, str]:
        self.sync(view)
        _world, moves = self.playable()
        if not moves:
            raise BotError("illegal", f"{self.name} ({self.seat}) has no legal move to offer")
        return tuple(self.rng.choice(moves))  # type: ignore[return-value]


class GreedyBot(RandomBot):
    """Takes the most valuable enemy piece it knows it beats; else steps towards the enemy; else any move."""

    name = "greedy"

    def choose_move(self, view: Mapping[str, Any], time_ms: float) -> tuple[str, str]:
        self.sync(view)
        b = self.belief
        assert b is not None
        st, moves = self.playable()
        if not moves:
            raise BotError("illegal", f"{self.name} ({self.seat}) has no legal move to offer")
        w = worth(st)
        best, best_value = None, 0.0
        advances = []
        for m in moves:
            mine = st.board[m.frm]
            target = st.board.get(m.to)
            if target is not None:
                kind = b.known.get(target.uid)
                if kind is not None and st.clash[(mine.type, kind)] == "attacker":
                    v = w.value.get(kind, 0.0) + (100.0 if kind in w.capture else 0.0) + self.rng.random() * 0.01
                    if best is None or v > best_value:
                        best, best_value = m, v
                continue
            front = w.front[self.seat]
            if front.get(m.to, 99) < front.get(m.frm, 99):
                advances.append(m)
        if best is not None:
            return tuple(best)  # type: ignore[return-value]
        return tuple(self.rng.choice(advances or moves))  # type: ignore[return-value]
