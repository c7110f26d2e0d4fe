"""Undo and a seat put out in remote games, through a real Mosquitto: a seat asks to take back the last move and it
is taken back only once every other seat agrees (a decline drops it), on every board, journaled and replayed by a
restarted host into the same messages; in a four-seat game a seat that resigns is put out and the game goes on."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from test_remote import audit, play_ply, start_game

from controller.club.broker import parse_broker
from controller.remote.host import RemoteHost
from controller.remote.protocol import RemoteError
from harness.broker import Mosquitto, wait_for


@pytest.fixture()
def broker(tmp_path: Path) -> Any:
    b = Mosquitto(tmp_path)
    b.start()
    yield b
    b.stop()


def in_step(host: RemoteHost, boards: dict[str, Any]) -> None:
    truth = {s: (p.owner, p.uid) for s, p in host.session.state.board.items()}
    for b in boards.values():
        st = b.session.state
        assert (st.ply, st.turn) == (host.session.state.ply, host.session.state.turn), b.name
        assert {s: (p.owner, p.uid) for s, p in st.board.items()} == truth
        assert set(b.sim.raw_occupied()) == set(truth)
        assert b.session.pending is None and b.session.mismatch is None


def notices(board: Any, kind: str) -> list[dict[str, Any]]:
    return [ev.public for ev in board.session.log if ev.public.get("event") == "notice" and ev.public.get("kind") == kind]


def outboxes(host: RemoteHost) -> dict[str, list[Any]]:
    return {s: [json.loads(p.split(b"\n", 1)[1]) for p in host.messages(s)] for s in host.seats}


def test_an_undo_is_made_only_when_the_other_seat_agrees(broker: Any, tmp_path: Path) -> None:
    host, boards = start_game("stratego", broker, tmp_path)
    try:
        seats = list(boards)
        with pytest.raises(RemoteError, match="no move to take back"):
            boards[seats[0]].seat.ask("undo")
        rng = random.Random(5)
        for _ in range(3):
            play_ply(host, boards, rng)
        # the next mover makes a plain move (no attack), then asks to take it back
        st = host.session.state
        mover, ply = st.turn, st.ply
        other = next(b for s, b in boards.items() if s != mover)
        frm, to = next(m for m in st.legal_moves() if m[1] not in st.board)
        before = {s: (p.owner, p.uid) for s, p in st.board.items()}
        boards[mover].move(frm, to)
        from test_remote import carry_out

        carry_out(boards, mover, frm, to, ply)
        assert host.session.state.ply == ply + 1
        # an agreement nobody asked for does nothing (the pause that follows on the same link is handled after it);
        # no undo while the game is paused (the boards' readings wait)
        other.seat.ask("undo_agree")
        other.seat.ask("pause")
        for b in boards.values():
            wait_for(lambda b=b: b.session.paused, what=f"{b.name}'s board to pause")
        with pytest.raises(RemoteError, match="paused"):
            boards[mover].seat.ask("undo")
        other.seat.ask("resume")
        for b in boards.values():
            wait_for(lambda b=b: not b.session.paused, what=f"{b.name}'s board to resume")
            b.fix()
        boards[mover].seat.ask("undo")
        for b in boards.values():
            wait_for(lambda b=b: notices(b, "undo_ask"), what=f"{b.name}'s board to hear the undo asked")
        assert notices(other, "undo_ask")[-1]["waiting"] == [other.name]
        from test_remote import Phone

        page = Phone(other)  # the other seat answers from its page (the web referee's own routes)
        assert page.state()["remote"]["undo"] == {"by": mover, "ply": ply + 1, "waiting": [other.name]}
        assert not notices(other, "undo_agree"), "an agreement before the ask counted"
        assert host.session.state.ply == ply + 1, "undone before the other seat agreed"
        page.post("/remote/undo_decline", {})
        for b in boards.values():
            wait_for(lambda b=b: notices(b, "undo_decline"), what=f"{b.name}'s board to hear the decline")
        assert page.state()["remote"]["undo"] is None
        assert host.session.state.ply == ply + 1
        # asked again, and agreed: taken back on the host and on both boards, which are put back as they were
        boards[mover].seat.ask("undo")
        wait_for(lambda: len(notices(other, "undo_ask")) == 2, what="the second ask")
        page.post("/remote/undo_agree", {})
        wait_for(lambda: host.session.state.ply == ply, what="the host to take the move back")
        for b in boards.values():
            wait_for(lambda b=b: b.session.state.ply == ply, what=f"{b.name}'s board to take the move back")
            b.fix()
        assert host.session.state.turn == mover
        assert {s: (p.owner, p.uid) for s, p in host.session.state.board.items()} == before
        assert notices(boards[mover], "undo_agree"), "the mover was not told of the agreement"
        in_step(host, boards)
        events = host.table.journal.events(host.table.game_id)
        assert [e.data["answer"] for e in events if e.data.get("action") == "ask_undo"] == ["ask", "decline", "ask", "agree"]
        assert sum(e.data.get("action") == "undo" for e in events) == 1
        # the game goes on in step (the mover may make another move), and no board was sent a hidden kind
        for _ in range(3):
            play_ply(host, boards, rng)
        in_step(host, boards)
        for b in boards.values():
            assert audit(b, host) > 0
        # a restarted host replays the asks and the undo into the very messages the boards got
        sent = outboxes(host)
        host.stop()
        host = RemoteHost("stratego", parse_broker(broker.url), journal_path=tmp_path / "host.sqlite", game_id="t1")
        assert outboxes(host) == sent
        assert host.session.state.ply == ply + 3
        host.start()
        play_ply(host, boards, rng)
        in_step(host, boards)
    finally:
        for b in boards.values():
            b.stop()
        host.stop()


def test_an_attack_taken_back_puts_every_piece_back_on_both_boards(broker: Any, tmp_path: Path) -> None:
    from test_remote import carry_out
    from test_remote_clock import FakeTime

    from controller.club.clock import TimeControl

    now = FakeTime()
    host, boards = start_game("stratego", broker, tmp_path, clock=TimeControl(base_s=600, warn_s=()), now=now)
    try:
        wait_for(lambda: host.keeper.to_json()["running"] == host.session.state.turn, what="the clock to start")
        rng = random.Random(5)
        for _ in range(60):  # play on until the side to move can attack
            st = host.session.state
            if any(m[1] in st.board for m in st.legal_moves()):
                break
            play_ply(host, boards, rng)
        st = host.session.state
        mover, ply = st.turn, st.ply
        frm, to = next(m for m in st.legal_moves() if m[1] in st.board)
        before = {s: (p.owner, p.uid) for s, p in st.board.items()}
        boards[mover].move(frm, to)
        carry_out(boards, mover, frm, to, ply)
        attack = host.session.state.history[-1]
        assert attack.kind == "attack"
        after = {s: (p.owner, p.uid) for s, p in host.session.state.board.items()}
        assert after != before
        other = next(b for s, b in boards.items() if s != mover)
        assert host.keeper.to_json()["running"] == other.name
        now.t += 7
        other.seat.ask("undo")  # the side attacked asks, the attacker agrees
        wait_for(lambda: notices(boards[mover], "undo_ask"), what="the attacker's board to hear the ask")
        boards[mover].seat.ask("undo_agree")
        wait_for(lambda: host.session.state.ply == ply, what="the host to take the attack back")
        for b in boards.values():
            wait_for(lambda b=b: b.session.state.ply == ply, what=f"{b.name}'s board to take the attack back")
            b.fix()
        assert {s: (p.owner, p.uid) for s, p in host.session.state.board.items()} == before
        # the clock runs for the attacker again (the time the other side thought is not given back)
        clock = host.keeper.to_json()
        assert clock["running"] == mover
        assert clock["left"][other.name] <= 600 - 7
        in_step(host, boards)
        play_ply(host, boards, rng)
        in_step(host, boards)
        for b in boards.values():
            assert audit(b, host, undone=[attack]) > 0
    finally:
        for b in boards.values():
            b.stop()
        host.stop()


def test_a_seat_that_resigns_a_four_seat_game_is_put_out_and_the_game_goes_on(broker: Any, tmp_path: Path) -> None:
    host, boards = start_game("siguo", broker, tmp_path, seed=11)
    try:
        rng = random.Random(7)
        for _ in range(4):
            play_ply(host, boards, rng)
        st = host.session.state
        quitter = next(s for s in host.seats if s != st.turn)
        theirs = {s for s, p in st.board.items() if p.owner == quitter}
        boards[quitter].seat.ask("resign")
        wait_for(lambda: quitter in host.session.state.out, what="the host to put the seat out")
        assert host.session.state.phase == "play", "one seat resigning ended a four-seat game"
        for b in boards.values():
            wait_for(lambda b=b: quitter in b.session.state.out, what=f"{b.name}'s board to hear it")
            b.fix()  # the seat's pieces are cleared by the game's rule
        cleared = theirs - set(host.session.state.board)
        assert cleared, "no piece of the seat put out was cleared"
        in_step(host, boards)
        with pytest.raises(RemoteError, match="out already"):
            host.put_out(quitter, "again")
        for _ in range(8):
            if host.session.state.phase != "play":
                break
            assert host.session.state.turn != quitter
            play_ply(host, boards, rng)
        in_step(host, boards)
        for b in boards.values():
            assert audit(b, host) > 0
        # replayed by a restarted host into the same messages
        sent = outboxes(host)
        host.stop()
        host = RemoteHost("siguo", parse_broker(broker.url), journal_path=tmp_path / "host.sqlite", game_id="t1")
        assert outboxes(host) == sent
    finally:
        for b in boards.values():
            b.stop()
        host.stop()
