"""Keeps the games bots play in the arena (`facedown match --journal`) in the game journal, as a table's games are kept.

A bot game is written when it has finished, as `facedown record import` writes a game: the game event (board
``arena``, each seat named by its bot) and its game file, then in one transaction both deployments, every accepted
move, a seat the arena put out because its bot failed, and the result (a game stopped at the arena's ply cap is a
draw, ``verdict.ply_cap``). `facedown record list|show|export` then read it like any other game, and it replays
through the engine to the same end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from controller.rules.say import Say, say

if TYPE_CHECKING:
    from controller.referee.journal import Journal
    from controller.rules import GameState

#: The arena's reasons a bot failed, each with its words in the message catalogs (``bot.why.*``).
FAILURES = ("bad_setup", "crashed", "illegal", "protocol", "timeout")


class ArenaRecorder:
    """Watches one arena game (pass ``watch`` to ``play_game``) and writes it to a journal when it is over.

    The arena hands every seat its view after each event; the recorder reads the game state it came from to turn
    new rulings into ``move`` events and a seat put out without a move (its bot failed) into an arbiter ``out``.
    """

    def __init__(self) -> None:
        self.state: GameState | None = None
        self.events: list[tuple[str, dict[str, Any]]] = []
        self._moves = 0
        self._out: set[str] = set()
        self._deployed = False

    def watch(self, state: GameState, side: str, seen: Any, event: Any) -> None:
        """``play_game``'s watch: record what changed since the last call."""
        if self.state is None:
            self.state = state
        if not self._deployed and state.phase != "setup":
            self._deployed = True
            self.events += [("deploy", {"side": s, "placement": dict(state.deployments[s])})
                            for s in state.game.sides if s in state.deployments]
        history = state.history
        if len(history) > self._moves:
            for ruling in history[self._moves:]:
                self.events.append(("move", {"side": ruling.side, "from": ruling.frm, "to": ruling.to}))
            self._moves = len(history)
            self._out |= set(state.out)  # sides a ruling knocked out: the replayed move knocks them out again
        for gone in [s for s in state.out if s not in self._out]:
            self._out.add(gone)
            self.events.append(("arbiter", {"action": "out", "side": gone, "reason": state.out[gone]}))

    def write(self, journal: Journal, names: dict[str, str], failures: list[dict[str, str]], max_plies: int) -> int:
        """Journal the finished game (``names``: side -> bot; ``failures``: the arena record's) and return its id.
        Raises ValueError for a game that never started (a bot failed at setup): there is nothing to replay."""
        from controller.referee.gamefile import file_of

        st = self.state
        if st is None or not self._deployed:
            raise ValueError("the game never started (a bot failed at setup): nothing to journal")
        why = {f["side"]: f["why"] for f in failures}
        events = [(kind, {**data, "reason": bot_failed(data["side"], why.get(data["side"], ""))})
                  if kind == "arbiter" else (kind, data) for kind, data in self.events]
        if st.result is not None:
            events.append(("result", {"winners": list(st.result.winners), "reason": st.result.reason}))
        else:
            events.append(("result", {"winners": [], "reason": say("verdict.ply_cap", plies=max_plies)}))
        gid = journal.new_game(st.game.id, dict(st.options), board="arena", seats=dict(names), game_file=file_of(st.game))
        journal.append_many(gid, events)
        return gid


def bot_failed(side: str, why: str) -> Say:
    """The reason a seat was put out because its bot failed, as a message object."""
    if why in FAILURES:
        return say("verdict.bot_failed", side=side, why=say(f"bot.why.{why}"))
    return say("verdict.bot_failed", side=side, why=say("verdict.unsaid"))
