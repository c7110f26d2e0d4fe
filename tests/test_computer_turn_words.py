"""What the table hears on a computer's turn and while laying out (issue 37), on the simulated board with a real
table: laying out publishes a progress line every ten pieces (never a mismatch, never one event per piece), a token
lifted that the computer's move does not touch is said at once (once per lift), and a wrong move against an attack
instruction says "attack". The console and the voice say each of these events."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest
from browser_support import choose, wait

from controller.announce.console import describe
from controller.announce.voice import phrase
from controller.bots.simple import RandomBot
from controller.referee.computer_seat import ComputerSeat
from controller.referee.table import open_table
from controller.rules import load_game
from controller.rules.deploy import random_deployment
from controller.sensing.sim import SimBoard


class Attacker(RandomBot):
    """Attacks whenever it can (so that an attack instruction comes within a few moves)."""

    def choose_move(self, view: Any, time_ms: float) -> tuple[str, str]:
        self.sync(view)
        _world, moves = self.playable()
        mine = {p["station"] for p in view["pieces"] if p["owner"] == self.seat}
        theirs = {p["station"] for p in view["pieces"]} - mine
        attacks = [m for m in moves if m[1] in theirs]
        return tuple(self.rng.choice(attacks or moves))  # type: ignore[return-value]


@pytest.fixture
def table(tmp_path: Path) -> Any:
    game = load_game("stratego")
    t = open_table("stratego", board=SimBoard(game.station_ids, settle_ms=5), board_kind="sim",
                   journal_path=tmp_path / "j.sqlite", resume=False)
    t.start()
    yield t
    t.stop()


def flip(table: Any, station: str) -> None:
    was = station in table.board.raw_occupied()
    table.board.toggle(station)
    wait(lambda: table.session.snapshot is not None and (station in table.session.snapshot.occupied) != was,
         what=f"the referee to read {station}")


def test_laying_out_wrong_lifts_and_wrong_attacks_are_said(table: Any) -> None:
    rng = random.Random(8)
    seat = ComputerSeat(table.session, "blue", Attacker(), seed=4)
    assert table.session.register_setup("red", random_deployment(table.game, "red", rng, table.state.options)) == []
    wait(lambda: table.state.phase == "play", what="play")
    start = len(table.session.log)
    for n, s in enumerate(sorted(table.state.board, key=table.game.station_ids.index)):
        flip(table, s)
        if n == 34:  # a piece put down where none belongs (the lakes' row): named at once, then gone again
            flip(table, "a5")
            flip(table, "a5")
    wait(lambda: not table.session.status["waiting_for_board"], what="the board laid out")
    laid = [e.public for e in table.session.log[start:]]
    progress = [e for e in laid if e.get("kind") == "layout"]
    strays = [e for e in progress if e["say"]["code"] == "event.laid_out_strays"]
    assert [e["steps"][0]["station"] for e in strays] == ["a5"] and "take the piece off a5" in describe(strays[0], table.game)
    assert [e["progress"]["done"] for e in progress if e not in strays] == [*range(10, 40, 10), 35, *range(40, 80, 10), 80]
    assert not [e for e in laid if e.get("event") == "mismatch" or e.get("say", {}).get("code") == "event.board_differs"]
    assert describe(progress[2], table.game) == "Laid out 30 of 80 pieces."
    assert phrase(progress[-1], "zh", table.game) == "已摆好 80/80 枚棋子。"
    # the board just laid out is complete, not "fixed": its last lines say so, then who starts
    after = laid[laid.index(progress[-1]) + 1:]
    assert [e["event"] for e in after[:2]] == ["fixup_done", "start"]
    assert describe(after[0], table.game) == "Every piece is in place." and phrase(after[0], "zh", table.game) == "棋子已全部摆好。"
    assert table.session.status["computers"] == ["blue"]

    attack_seen = False
    lifted_seen = False
    for _ in range(40):
        if table.state.phase != "play" or (attack_seen and lifted_seen):
            break
        if table.state.turn == "red":
            frm, to = choose(table, rng, prefer_attack=False, approach=True)
            before = {s: p.uid for s, p in table.state.board.items()}
            _physically(table, before, frm, to)
            continue
        ins = wait(lambda: table.session.instruction("blue"), what="the computer's instruction")
        attack = ins.to in table.state.board
        if not lifted_seen:
            # two wrong tokens lifted one after the other: each said once, at the moment it is lifted
            a, b = [s for s in sorted(table.state.board) if s not in (ins.frm, ins.to)][:2]
            n = len(table.session.log)
            flip(table, a)
            flip(table, b)
            said = [e.public for e in table.session.log[n:] if e.public.get("kind") == "wrong_lift"]
            assert [e["stations"] for e in said] == [[a], [b]], said
            line = describe(said[0], table.game)
            assert line.startswith(f"Not that token ({a}): put it back") and ins.frm in line, line
            assert phrase(said[0], "zh", table.game)
            flip(table, a)
            flip(table, b)
            lifted_seen = True
        if attack and not attack_seen:
            # the token put somewhere else: the computer's words say it is an attack
            empty = next(s for s in table.game.station_ids if s not in table.state.board and table.state.topo.passable[s])
            n = len(table.session.log)
            flip(table, ins.frm)
            flip(table, empty)
            wait(lambda: table.session.mismatch is not None, what="the mismatch")
            said = [e.public for e in table.session.log[n:] if e.public.get("kind") == "wrong_move"]
            assert said and said[-1]["say"]["code"] == "bot.wrong_attack", said
            assert f"attack {ins.to} with it" in describe(said[-1], table.game)
            flip(table, empty)
            flip(table, ins.frm)
            wait(lambda: table.session.mismatch is None, what="the board explainable again")
            attack_seen = True
        before = {s: p.uid for s, p in table.state.board.items()}
        _physically(table, before, ins.frm, ins.to)
    assert lifted_seen and attack_seen
    seat.close()


def _physically(table: Any, before: dict[str, int], frm: str, to: str) -> None:
    from benchmarks.seeded_games import fixup_stations

    ply = table.state.ply
    flip(table, frm)
    if to in table.state.board:
        flip(table, to)
    flip(table, to)
    wait(lambda: table.state.ply == ply + 1, what=f"the ruling on {frm}-{to}")
    lifts, places = fixup_stations(before, frm, to, table.state)
    for s in (*lifts, *places):
        flip(table, s)
    wait(lambda: table.session.pending is None, what="the fix-up")
