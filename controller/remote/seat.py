"""A remote seat: one side of a hosted game played on this board (real, or simulated and driven from the seat's
phone page), with the host judging every move.

The board runs a local session, the *mirror*, whose state is only this seat's redacted view (``mirror.py``): the
other sides' pieces are anonymous tokens. The mirror recognises moves as any table does; a move of this seat is
sent to the host instead of being judged here (``Session.judge_remotely``), and the host's ruling comes back with
its fix-up plan, which the mirror asks for on this board. A move of another side arrives as the host's ruling and
is told to the table as an instruction (``Session.instruct``, as for a computer seat's tokens): once the token is
moved so, the ruling is shown and its fix-up asked; any other move of that side is a mismatch. The host's messages
are numbered and handled strictly in order, each once; a board that restarts resumes from the retained latest
message and asks for what it missed.

At setup the seat's deployment is registered on the mirror (the page, a file), checked there, and sent to the host
with its commitment: a salted digest per station (``commitment.py``); the salts stay on this board until the game
is over, then are published so each side can check the post-game record."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import threading
import uuid
from pathlib import Path
from typing import Any

from controller.club.broker import Broker
from controller.referee.session import Published, Session
from controller.referee.table import Table
from controller.rules import Move, Result, load_game, new_game
from controller.rules.say import say

from . import commitment
from .link import Link
from .mirror import mirror_state, occupants, view_board
from .protocol import (
    JoinCode,
    RemoteError,
    inbox_topic,
    outbox_topic,
    public_topic,
    seal,
    seen_topic,
    sync_topic,
    unseal,
)
from .reactions import RemoteReactions
from .seat_clock import SeatClock

log = logging.getLogger(__name__)


class RemoteSeat:
    """``join``'s seat of a hosted ``game`` on ``board`` (see the module docstring). ``state_path`` keeps this
    board's salts and deployment across a restart."""

    def __init__(self, game: str, broker: Broker, join: JoinCode, board: Any, *, board_kind: str = "sim",
                 state_path: str | Path | None = None, keep_wire: bool = False) -> None:
        self.game = load_game(game)
        if join.seat not in self.game.sides:
            raise RemoteError(f"{self.game.id} has no seat {join.seat!r}; its seats are {', '.join(self.game.sides)}")
        self.join = join
        self.seat = join.seat
        self.game_id = join.game_id
        self.session = Session(new_game(self.game))
        self.session.judge_remotely = self._judge_remotely
        self.session.subscribe(self._on_local)
        page = hmac.new(join.secret.encode(), b"page", hashlib.sha256).hexdigest()[:24]
        self.clock = SeatClock()
        self.table = Table(session=self.session, board=board, tokens={self.seat: page}, board_kind=board_kind,
                           clock=self.clock)
        self.session.reactions = RemoteReactions(self.session, self._send)  # answers go to the host
        self.table.remote = self  # the page's asks (pause, resume, resign) go to the host through this
        self.ready = False  # this board was laid out at the start (the host starts the clock once every board is)
        self.last_seq = 0
        self.synced = False  # the host's retained latest message was read (a restarted board starts from it)
        self.waiting: dict[int, dict[str, Any]] = {}  # messages that came ahead of their turn, by number
        self.held: dict[str, Any] | None = None  # another side's ruling, waiting for its token to be moved
        self.sent: dict[str, Any] | None = None  # the move or deployment sent and not answered yet
        self.tries = 0
        self.applying = False
        self.received_rulings: list[dict[str, Any]] = []
        self.undo_asked: dict[str, Any] | None = None  # an undo a seat asked for, still open (the page shows it)
        self.commitments: dict[str, dict[str, str]] = {}  # as first published, before anyone's salts were out
        self.revealed: dict[str, dict[str, str]] = {}
        self.record: dict[str, Any] | None = None
        self.audit: list[str] | None = None  # the post-game check: None until the record is in; empty when all agree
        self.state_path = Path(state_path) if state_path else None
        self.salts: dict[str, str] = {}
        self.placement: dict[str, str] = {}
        self._load_state()
        self._asked: int | None = None
        self.lock = threading.RLock()
        self.broker = Broker(broker.host, broker.port, broker.tls, join.username, join.secret, broker.ca_file)
        # this process's connection: "here" on each connect, "away" by the broker (the last will) when it is lost
        self.conn = uuid.uuid4().hex[:16]
        away = seal(join.secret, {"type": "away", "conn": self.conn})
        self.link = Link(self.broker, f"facedown-{self.game_id}-{self.seat}",
                         {outbox_topic(self.game_id, self.seat): self._on_out,
                          sync_topic(self.game_id, self.seat): self._on_sync,
                          public_topic(self.game_id, "#"): self._on_public},
                         on_connect=self._on_connect, keep_wire=keep_wire, will=(seen_topic(self.game_id, self.seat), away))

    # ------------------------------------------------------------------ start, stop
    def start(self, timeout: float = 10.0) -> None:
        self.link.start(timeout)

    def stop(self) -> None:
        self.link.stop()

    def _on_connect(self) -> None:
        self.link.publish(seen_topic(self.game_id, self.seat), seal(self.join.secret, {"type": "here", "conn": self.conn}),
                          retain=True)
        with self.session.lock:
            if self.sent is not None:
                self._send({**self.sent, "have": self.last_seq})
            if self.last_seq:
                self._send({"type": "hello", "have": self.last_seq})
            self._say_ready()

    def _say_ready(self) -> None:
        """Tell the host (again) this board is laid out, while the first move is still to come."""
        st = self.session.state
        if self.ready and st.phase == "play" and st.ply == 0:
            self._send({"type": "ready"})

    def _send(self, message: dict[str, Any]) -> None:
        self.link.publish(inbox_topic(self.game_id, self.seat), seal(self.join.secret, message))

    def _load_state(self) -> None:
        if self.state_path is None or not self.state_path.exists():
            return
        from controller.textfiles import parse_json, read_text

        try:  # its own file, still bounded and a regular file (a salt a station: a few kB)
            data = parse_json(read_text(self.state_path, "seat state file", cap=1024 * 1024), str(self.state_path))
        except ValueError as exc:
            raise RemoteError(f"{self.state_path}: not this seat's saved state ({exc})") from None
        if data.get("game") == self.game_id and data.get("seat") == self.seat:
            self.salts = dict(data.get("salts") or {})
            self.placement = dict(data.get("placement") or {})

    def _save_state(self) -> None:
        if self.state_path is None:
            return
        import os

        self.state_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.state_path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            json.dump({"game": self.game_id, "seat": self.seat, "salts": self.salts, "placement": self.placement}, f)
        tmp.replace(self.state_path)

    # ------------------------------------------------------------------ the host's messages, in order
    def _unseal(self, payload: bytes) -> dict[str, Any] | None:
        try:
            m = unseal(self.join.secret, payload)
        except RemoteError as exc:
            log.warning("%s", exc)
            return None
        return m if m.get("game") == self.game_id and isinstance(m.get("seq"), int) else None

    def _on_sync(self, topic: str, payload: bytes) -> None:
        m = self._unseal(payload)
        if m is None:
            return
        with self.session.lock:
            if not self.synced:
                self.synced = True
                self._resume(m)
                self._drain()
            elif m["seq"] > self.last_seq:
                self._ask()
            elif m["seq"] == self.last_seq:
                if self.sent is not None:
                    # the host (re)published where the game is, and has not answered what this board sent: it may
                    # have been lost while the broker or the host was away, so it goes again (judged once at most)
                    self._send({**self.sent, "have": self.last_seq})
                self._say_ready()  # a restarted host does not know yet

    def _on_out(self, topic: str, payload: bytes) -> None:
        m = self._unseal(payload)
        if m is None:
            return
        with self.session.lock:
            if m["seq"] <= self.last_seq:
                return  # had it already (QoS 1 delivers at least once)
            self.waiting[m["seq"]] = m
            if self.synced:  # else kept until the retained latest message says where the game is
                self._drain()

    def _ask(self) -> None:
        if self._asked != self.last_seq:
            self._asked = self.last_seq
            self._send({"type": "hello", "have": self.last_seq})

    def _drain(self) -> None:
        while self.held is None and self.last_seq + 1 in self.waiting:
            m = self.waiting.pop(self.last_seq + 1)
            self.last_seq = m["seq"]
            self._apply(m)
        for seq in [s for s in self.waiting if s <= self.last_seq]:
            del self.waiting[seq]
        if self.waiting and self.held is None:
            self._ask()  # a gap: one came ahead of a message lost on the way

    def _resume(self, m: dict[str, Any]) -> None:
        """A board that (re)starts: the game as the host's latest message left it, the whole board checked."""
        seen = m["view"]
        self.last_seq = m["seq"]
        self.tries = int(m.get("tries", 0))
        self.applying = True
        try:
            if seen["phase"] == "setup":
                st = new_game(self.game, seen.get("options") or {})
                if m.get("placement"):
                    st.deploy(self.seat, m["placement"])
                self.session.replace_state(st)
            else:
                self.session.replace_state(mirror_state(self.game, seen, self.seat))
                self.session.expect_whole_board("event.resumed_board")
        finally:
            self.applying = False
        if self.last_seq:
            self._send({"type": "hello", "have": self.last_seq})

    def _apply(self, m: dict[str, Any]) -> None:
        kind = m["type"]
        session = self.session
        self.tries = int(m.get("tries", self.tries))
        self.applying = True
        try:
            self._undo_notice(m)
            if kind == "event":
                told = m["event"].get("event")
                if told in ("paused", "resumed"):  # the host paused the game: this board's readings wait too
                    session.set_paused(told == "paused")
                    if told == "paused" and self.sent is not None and self.sent["type"] == "move":
                        self.sent = None  # not judged during a pause: the move is made again once resumed
                session.announce(m["event"])
                if told == "resumed" and session.state.phase == "play":
                    session.expect_whole_board("event.resumed_board")
            elif kind == "setup_rejected":
                self.sent = None
                session.replace_state(new_game(self.game, m["view"].get("options") or {}))
                session.announce({"event": "setup", "player": self.seat, "status": "rejected", "problems": m["problems"],
                                  "say": say("setup.rejected", player=self.seat, count=len(m["problems"]))},
                                 audience=(self.seat,))
            elif kind == "start":
                self.sent = None
                session.replace_state(mirror_state(self.game, m["view"], self.seat))
                for side in self.game.sides:
                    if side != self.seat:
                        stations = sorted((s for s, p in session.state.board.items() if p.owner == side),
                                          key=self.game.station_ids.index)
                        session.announce({"event": "remote", "kind": "tokens", "player": side, "stations": stations,
                                          "say": say("remote.tokens", player=side, count=len(stations), stations=stations)})
                session.expect_whole_board("setup.lay_out")
            elif kind == "ruling" and m["side"] == self.seat:
                self.sent = None
                self._rule(m)
            elif kind == "ruling":
                self.held = m
                attack = m["to"] in session.state.board
                fields = {"from": m["from"], "to": m["to"], "attack": attack}
                session.instruct(m["side"], Move(m["from"], m["to"]),
                                 {"event": "remote", "kind": "move", "player": m["side"], **fields,
                                  "say": say("remote.attack" if attack else "remote.move", player=m["side"], **fields)},
                                 on_wrong=self._wrong_move)
            elif kind == "reacted":  # a reaction answered at the host: its outcome, and what it changed on the board
                from controller.referee.reaction_desk import ask_changes

                session.replace_state(mirror_state(self.game, m["view"], self.seat))
                for ev in m["events"]:
                    session.announce(ev)
                if m["changed"]:
                    ask_changes(session, m["steps"], occupants(m["target"]), set(m["changed"]))
            elif kind == "undone":  # every seat agreed to take back the last ruling: the board as it was before it
                self.sent = None
                session.replace_state(mirror_state(self.game, m["view"], self.seat))
                ply = session.state.ply
                self.received_rulings = [r for r in self.received_rulings if r["ply"] <= ply]
                for ev in m["events"]:
                    session.announce(ev)
                session.expect_whole_board("event.undo_board")
            elif kind == "over":  # ended by the host, not by a ruling: a flag fell
                session.replace_state(mirror_state(self.game, m["view"], self.seat))
                session.announce(m["event"])
            elif kind == "illegal":
                self.sent = None
                session.announce(m["event"])
                session.settle([], target=occupants(m["target"]), involved=frozenset({m["from"], m["to"]}), asked=True,
                               kind="illegal")
            else:
                log.warning("unknown message type %r from the host", kind)
        finally:
            self.applying = False

    def _undo_notice(self, m: dict[str, Any]) -> None:
        """Keep the undo asked and still open, as the page shows it (who asked, at which ply, who is still to
        agree): a ruling, the undo made, a seat put out or a decline closes it."""
        ev = m.get("event") if m["type"] == "event" else None
        told = ev.get("kind") if isinstance(ev, dict) and ev.get("event") == "notice" else None
        if told in ("undo_ask", "undo_agree") and isinstance(ev, dict):
            by = ev.get("player") if told == "undo_ask" or self.undo_asked is None else self.undo_asked["by"]
            self.undo_asked = {"by": by, "ply": ev.get("ply"), "waiting": list(ev.get("waiting") or [])}
        elif told == "undo_decline" or m["type"] in ("ruling", "undone", "reacted", "over", "start"):
            self.undo_asked = None

    def _rule(self, m: dict[str, Any]) -> None:
        """Show a ruling and ask for its fix-up on this board."""
        session = self.session
        self.received_rulings.append({"ply": m["ply"], "kind": m["ruling"]["kind"], "outcome": m["ruling"].get("outcome")})
        session.replace_state(mirror_state(self.game, m["view"], self.seat))
        session.announce(m["event"])
        for notice in m.get("notices") or []:
            session.announce(notice)
        result = Result(tuple(m["result"]["winners"]), m["result"]["reason"]) if m.get("result") else None
        target = occupants(m["target"]) if "target" in m else view_board(m["view"])
        session.settle(m["steps"], result=result, target=target, involved=frozenset(m["involved"]),
                       must_lift=frozenset(m["must_lift"]), journal_result=False)

    def _wrong_move(self, side: str, done: Move) -> None:
        held = self.held
        if held is None:
            return
        fields = {"from": held["from"], "to": held["to"], "done_from": done.frm, "done_to": done.to}
        self.session.announce({"event": "remote", "kind": "wrong_move", "player": side, **fields,
                               "say": say("remote.wrong_move", player=side, **fields)})

    # ------------------------------------------------------------------ this board's moves and deployment
    def _judge_remotely(self, side: str, move: Move) -> bool:
        session = self.session
        if side == self.seat:
            if self.sent is not None and self.sent["type"] == "move":
                return True  # sent already: the ruling is on its way
            st = session.state
            self.sent = {"type": "move", "id": uuid.uuid4().hex, "ply": st.ply, "try": self.tries, "from": move.frm,
                         "to": move.to}
            self._send({**self.sent, "have": self.last_seq})
            return True
        held = self.held
        if held is None or held["side"] != side or (held["from"], held["to"]) != (move.frm, move.to):
            return False  # not told yet, or not this move: a mismatch
        self.held = None
        self.applying = True
        try:
            self._rule(held)
        finally:
            self.applying = False
        self._drain()
        return True

    def _on_local(self, ev: Published) -> None:
        public = ev.public
        if public.get("event") == "start" and not self.ready:  # laid out (at once, if a restarted board already was)
            self.ready = True
            self._say_ready()
        if self.applying:
            return
        if public.get("event") == "setup" and public.get("status") == "registered" and public.get("player") == self.seat:
            placement = dict(self.session.state.deployments[self.seat])
            if placement != self.placement or not self.salts:
                self.placement = placement
                self.salts = commitment.make_salts(placement)
                self._save_state()
            digests = commitment.commit(self.game_id, self.seat, placement, self.salts)
            self.sent = {"type": "deploy", "id": uuid.uuid4().hex, "placement": placement, "commit": digests}
            self._send({**self.sent, "have": self.last_seq})

    # ------------------------------------------------------------------ the post-game record
    def _on_public(self, topic: str, payload: bytes) -> None:
        part = topic.rsplit("/", 1)[-1]
        try:
            data = json.loads(payload)
        except ValueError:
            return
        if not isinstance(data, dict):
            return
        with self.session.lock:
            if part == "clock" and data.get("game") == self.game_id and isinstance(data.get("clock"), dict):
                self._on_clock(data["clock"])
            elif part == "commitments":
                for side, digests in (data.get("commitments") or {}).items():
                    self.commitments.setdefault(side, dict(digests))
            elif part == "record" and data.get("game") == self.game_id:
                self.record = data
                if self.salts and self.seat not in self.revealed:
                    self.link.publish(public_topic(self.game_id, f"salts-{self.seat}"),
                                      json.dumps({"seat": self.seat, "salts": self.salts}).encode(), retain=True)
            elif part.startswith("salts-") and isinstance(data.get("salts"), dict):
                self.revealed[part[len("salts-"):]] = dict(data["salts"])
            if self.record is not None:
                self.audit = self.check_record()

    def ask(self, action: str) -> None:
        """Ask the host, the game's arbiter, to ``pause`` or ``resume`` the game, ``resign`` this seat, or take back
        the last ruling (``undo``, made once every other seat answers ``undo_agree``; ``undo_decline`` drops it).
        Its answer comes as its messages do. RemoteError if it cannot be asked now."""
        from .host import SEAT_ASKS

        if action not in SEAT_ASKS:
            raise RemoteError(f"{action!r}: a seat may ask the host to {', '.join(SEAT_ASKS)}")
        st = self.session.state
        if st.phase != "play":
            raise RemoteError("the game is not in play")
        if action == "pause" and self.session.paused or action == "resume" and not self.session.paused:
            raise RemoteError(f"the game is {'paused' if self.session.paused else 'not paused'} already")
        if action == "undo" and st.ply == 0:
            raise RemoteError("there is no move to take back yet")
        if action.startswith("undo") and self.session.paused:
            raise RemoteError("the game is paused: resume it first, then ask to take back the move")
        self._send({"type": "ask", "action": action, "id": uuid.uuid4().hex})

    def page_info(self) -> dict[str, Any]:
        """What the seat's page shows of the remote game (public): its id, and the asks it offers."""
        from .host import SEAT_ASKS

        return {"game": self.game_id, "asks": list(SEAT_ASKS), "undo": self.undo_asked}

    def _on_clock(self, reading: dict[str, Any]) -> None:
        try:
            before, now = self.clock.update(reading)
        except ValueError as exc:
            log.warning("the host's clock: %s", exc)
            return
        if now["running"] and not now["paused"] and not now["stopped"] and self.session.state.ply == 0 \
                and (before is None or not before["running"]):
            # the host started the clock (every board laid out): said here, and the pages get the new reading
            self.session.announce({"event": "notice", "clock": now["running"],
                                   "say": say("remote.clock_runs", player=now["running"])})

    def check_record(self) -> list[str]:
        """Every way the post-game record disagrees with what this board committed to, saw committed, and was
        told during the game (empty: the referee judged the deployments committed to). Sides whose salts are not
        out yet are checked once they are."""
        rec = self.record
        if rec is None:
            raise RemoteError("the host has not published the post-game record yet")
        problems: list[str] = []
        mine = commitment.commit(self.game_id, self.seat, self.placement, self.salts)
        if rec.get("commitments", {}).get(self.seat) != mine:
            problems.append(f"{self.seat}: the record's commitment is not the one this board sent")
        deployments = rec.get("deployments") or {}
        problems += commitment.check_deployment(self.game_id, self.seat, deployments.get(self.seat, {}), mine, self.salts)
        for side, salts in self.revealed.items():
            if side != self.seat and side in self.commitments:
                problems += commitment.check_deployment(self.game_id, side, deployments.get(side, {}),
                                                        self.commitments[side], salts)
        problems += commitment.replay_problems(rec["rules"], rec.get("options") or {}, deployments, rec["moves"],
                                               rec["rulings"])
        for told in self.received_rulings:
            said = rec["rulings"][told["ply"] - 1] if 0 < told["ply"] <= len(rec["rulings"]) else None
            if said is None or (said["kind"], said.get("outcome")) != (told["kind"], told["outcome"]):
                problems.append(f"ply {told['ply']}: the record's ruling is not the one this board was told")
        return problems


__all__ = ["RemoteSeat"]
