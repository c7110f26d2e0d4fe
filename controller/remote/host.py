"""The host of a remote game: the one authoritative referee (session, journal, rulings) of a game whose seats are
boards or phones elsewhere, speaking to each seat over MQTT with that seat's redacted messages only.

Each seat's messages are numbered (``seq``) and kept in the host's outbox; the latest one is also retained on the
seat's sync topic, so a board that (re)starts knows where the game is, and ``hello`` with the last number it
handled brings every message it missed, exactly once each. The outbox is a pure function of the journal: a
restarted host replays its journal through the very code that made the messages live, so it rebuilds the same
numbered messages and goes on; a move a board sends twice (a resend after a lost link) is judged once, because a
move counts only for the ply and the try it names.

The game clock, when there is one, is the host's: it starts once every board is laid out, is pressed with each
ruling (the reading journaled with the move), holds by the club's rule while a side's board is away (its retained
presence, the broker's last will saying when its link is lost), and a flag that falls ends the game here. Its
reading is public and retained (``public/clock``): each board counts the running side's time down from it."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from controller.club.broker import Broker
from controller.referee.session import Published, Session
from controller.rules import ARBITER, new_game, redact_ruling, view
from controller.rules.say import say

from .credentials import HOST, acl_file, derive_secrets, join_codes, password_file
from .link import Link
from .mirror import wire_board
from .outbox import Outbox
from .protocol import (
    ROOT,
    JoinCode,
    RemoteError,
    broker_user,
    check_name,
    inbox_topic,
    outbox_topic,
    presence_topic,
    public_topic,
    seal,
    seat_of_inbox,
    seen_topic,
    sync_topic,
    unseal,
)

log = logging.getLogger(__name__)

#: the host's own events a seat is told about as they are (the rest it makes itself: fix-ups, turns, lay-out)
FORWARDED = ("setup", "notice", "paused", "resumed", "game_over", "offer", "offer_closed", "reaction", "auto_react")
#: what a seat is told of a ruling beside the ruling itself: its reaction offers opening and closing (to their owners)
OFFERS = ("offer", "offer_closed")
#: the host's session log kept in memory (its seats were told each event as a message; the journal has the game)
KEEP_EVENTS = 32
#: what a seat may ask of the host, the game's arbiter (its page's buttons): an undo is asked by one seat and made
#: once every other seat still in the game agrees (any one declining, or a move made, drops the ask)
SEAT_ASKS = ("pause", "resume", "resign", "undo", "undo_agree", "undo_decline")
#: a seat's part in an undo: asking for it, agreeing, declining (journaled as the arbiter's ``ask_undo`` records)
UNDO_ANSWERS = {"undo": "ask", "undo_agree": "agree", "undo_decline": "decline"}
#: each game's journal page cache: the appends touch its last pages only (a rebuild reads the file through the OS's)
JOURNAL_CACHE_KIB = 64
#: the club's rule for the clocks while a side's board is away: every clock stops, or they run on
AWAY_RULES = ("pause", "run")


def _count(value: Any) -> int:
    """A message number a seat sent (anything else counts as 0: everything is resent)."""
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


class NoBoard:
    """The host has no board of its own: every seat is remote."""

    def stop(self) -> None:
        pass


class RemoteHost:
    """One remote game's referee (see the module docstring). ``broker`` is where the seats meet (its login is
    replaced by the host's own, derived like the seats'). ``clock``: a TimeControl (the host runs the game clock),
    ``flag_rule`` as for the club's clocks, ``away_rule`` one of AWAY_RULES; ``now``: the clock's time source;
    ``key``: a league's key the seats' secrets are derived from (default the journal's own)."""

    def __init__(self, game: str, broker: Broker, *, journal_path: str | Path | None = None, game_id: str | None = None,
                 options: Mapping[str, Any] | None = None, new: bool = False, keep_wire: bool = False,
                 link: Link | None = None, clock: Any = None, flag_rule: str = "loses", away_rule: str = "pause",
                 now: Any = None, key: bytes | None = None) -> None:
        from controller.referee.journal import default_path
        from controller.referee.table import open_table, table_key

        if away_rule not in AWAY_RULES:
            raise RemoteError(f"away rule {away_rule!r}: expected one of {', '.join(AWAY_RULES)}")
        path = Path(journal_path) if journal_path else default_path()
        self.table = open_table(game, board=NoBoard(), board_kind="remote", journal_path=path, options=options,
                                resume=not new)
        self.table.journal.limit_cache(JOURNAL_CACHE_KIB)
        self.number = int(self.table.game_id or 0)
        self.game = self.table.game
        self.seats = tuple(self.game.sides)
        self.game_id = check_name("game id", game_id or f"{self.game.id}-{self.number}")
        # each seat's secret: from the journal's key (a game of this host's own), or from a league's key (a game
        # the league's organizer asked for, whose join codes it makes itself: controller.remote.league)
        self.secrets = derive_secrets(table_key(path), self.game_id, self.number, (*self.seats, HOST)) if key is None \
            else derive_secrets(key, self.game_id, 0, (*self.seats, HOST))
        self.lock = threading.RLock()
        #: each seat's messages: how many, and the latest as sealed on the wire (older ones rebuilt from the journal)
        self.outbox: dict[str, Outbox] = {s: Outbox() for s in self.seats}
        self.commit_path = path.with_name(f"{path.name}.remote-{self.game_id}.json")
        self.commitments: dict[str, dict[str, str]] = self._load_commitments()
        self.publishing = False
        self._attempts: dict[tuple[str, int], int] = {}  # (seat, ply) -> refused tries
        self.away_rule = away_rule
        self.away: set[str] = set()  # the seats whose boards are away now (journaled, so replayed too)
        self.here: dict[str, str] = {}  # seat -> the connection its board said it is here on
        self.ready: set[str] = set()  # the seats whose boards said they are laid out (the clock starts then)
        self.keeper: Any = None
        self.undo_asked: tuple[int, set[str]] | None = None  # (the ply it is asked at, the seats agreeing so far)
        self._replayed: list[Any] | None = None  # while replaying: the journal's events up to the one replayed
        self.session = self._replay()
        self.table.session = self.session  # the table's own opening session is never played: let it go
        if clock is not None:
            from controller.club.keeper import ClockKeeper, journaled_clock

            # a resumed game's clock goes on from the journal's last reading, held again if a side is still away
            self.keeper = ClockKeeper(self.session, clock, flag_rule=flag_rule, readings=journaled_clock(self.table),
                                      **({"now": now} if now is not None else {}))
            self._hold_clock()
        self._ticking: threading.Thread | None = None
        self._stop_ticking = threading.Event()
        self.own_link = link is None
        if link is not None:  # one of a HostGroup's games: its connection is shared
            self.broker = link.broker
            self.link = link
            return
        self.broker = Broker(broker.host, broker.port, broker.tls, broker_user(self.game_id, HOST), self.secrets[HOST],
                             broker.ca_file)
        self.link = Link(self.broker, f"facedown-host-{self.game_id}", {inbox_topic(self.game_id, "+"): self.handle,
                                                                         seen_topic(self.game_id, "+"): self.handle_seen},
                         on_connect=self.reconnected, will=(presence_topic(self.game_id), b'{"host":"offline"}'),
                         keep_wire=keep_wire)

    # ------------------------------------------------------------------ credentials
    def join_codes(self) -> dict[str, JoinCode]:
        return join_codes(self.game_id, self.secrets, self.seats)

    def write_broker_files(self, directory: str | Path) -> tuple[Path, Path]:
        """This game's Mosquitto password file and ACL, written (mode 600) into ``directory``."""
        import os

        d = Path(directory)
        d.mkdir(parents=True, exist_ok=True)
        out = []
        for name, text in ((f"{self.game_id}.passwd", password_file(self.game_id, self.secrets)),
                           (f"{self.game_id}.acl", acl_file(self.game_id, self.seats))):
            p = d / name
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(text)
            out.append(p)
        return out[0], out[1]

    # ------------------------------------------------------------------ start, stop
    def start(self, timeout: float = 10.0) -> None:
        self.publishing = True
        if self.own_link:
            self.link.start(timeout)
            if self.keeper is not None:
                self._ticking = threading.Thread(target=self._tick_loop, name=f"facedown-clock-{self.game_id}", daemon=True)
                self._ticking.start()
        elif self.link.connected.is_set():
            self.reconnected()

    def stop(self) -> None:
        self._stop_ticking.set()
        if self._ticking is not None:
            self._ticking.join(timeout=2)
        self.link.publish(presence_topic(self.game_id), b'{"host":"offline"}', retain=True)
        if self.own_link:
            self.link.stop()
        self.table.stop()

    def _tick_loop(self) -> None:
        while not self._stop_ticking.wait(0.1):
            try:
                self.tick()
            except Exception:  # a clock fault must never stop the referee
                log.exception("the game clock failed")

    def reconnected(self) -> None:
        """After each (re)connect: online, each seat's latest message retained again, the public topics."""
        if not self.publishing:
            return
        with self.lock:
            self.link.publish(presence_topic(self.game_id), b'{"host":"online"}', retain=True)
            for seat in self.seats:
                self._publish_sync(seat)
            self._publish_public()
            self._publish_clock()

    # ------------------------------------------------------------------ the journal, replayed
    def _replay(self) -> Session:
        """A session rebuilt by replaying the journal through the live handlers (so the outbox is rebuilt too);
        the journal is attached once it has caught up."""
        events = self.table.journal.events(self.table.game_id)
        first = events[0].data
        session = Session(new_game(self.game, dict(first.get("options") or {})))
        self.session = session
        for i, ev in enumerate(events[1:], start=2):
            self._replayed = events[:i]
            if ev.kind == "deploy":
                self._deploy(ev.data["side"], dict(ev.data["placement"]), replay=True)
            elif ev.kind in ("move", "illegal"):
                self._judge(ev.data["side"], ev.data["from"], ev.data["to"])
            elif ev.kind == "arbiter" and ev.data.get("action") in ("away", "back"):
                self._seen(str(ev.data.get("seat")), ev.data["action"] == "away", replay=True)
            elif ev.kind == "arbiter" and ev.data.get("action") == "end":
                result = ev.data["result"]
                self._end(tuple(result["winners"]), result["reason"])
            elif ev.kind == "arbiter" and ev.data.get("action") in ("pause", "resume"):
                self._pause(ev.data["action"] == "pause")
            elif ev.kind == "arbiter" and ev.data.get("action") == "ask_undo":
                self._undo_answer(str(ev.data.get("seat")), str(ev.data.get("answer")), replay=True)
            elif ev.kind == "arbiter" and ev.data.get("action") == "undo":
                self._undo()
            elif ev.kind == "arbiter" and ev.data.get("action") == "out":
                self._put_out(str(ev.data.get("side")), ev.data.get("reason"))
            elif ev.kind == "reaction" and ev.data.get("action") == "answer":
                self._react(ev.data["side"], ev.data, replay=True)
            elif ev.kind == "reaction" and ev.data.get("action") == "auto":
                self._react_auto(ev.data["side"], bool(ev.data.get("auto")))
            elif ev.kind == "result":
                continue
            else:
                raise RemoteError(f"journal event {ev.seq} ({ev.kind} {ev.data.get('action', '')}): a remote game's host "
                                  "does not replay arbiter actions yet")
        self._replayed = None
        session.journal = self.table.journal
        session.game_id = self.table.game_id
        return session

    def _load_commitments(self) -> dict[str, dict[str, str]]:
        from controller.textfiles import parse_json, read_text

        if not self.commit_path.exists():
            return {}
        try:  # its own file, still bounded and a regular file (a station's digest each: a few kB)
            data = parse_json(read_text(self.commit_path, "commitments file", cap=1024 * 1024), str(self.commit_path))
        except ValueError as exc:
            raise RemoteError(f"{self.commit_path}: not the host's commitments file ({exc})") from None
        return {str(s): {str(k): str(v) for k, v in c.items()} for s, c in data.items()}

    def _save_commitments(self) -> None:
        tmp = self.commit_path.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.commitments, sort_keys=True))
        tmp.replace(self.commit_path)

    # ------------------------------------------------------------------ messages out
    def _send(self, seat: str, message: dict[str, Any]) -> None:
        """Number ``message`` in ``seat``'s outbox, add the seat's view, and publish it (and retain it as the
        seat's sync) if the host is live."""
        st = self.session.state
        full = {**message, "seq": len(self.outbox[seat]) + 1, "game": self.game_id, "view": view(st, seat),
                "tries": self._tries(seat)}
        if seat in st.deployments and st.phase == "setup":
            full["placement"] = dict(st.deployments[seat])  # the seat's own, so a restarted board knows it
        payload = seal(self.secrets[seat], full)
        self.outbox[seat].append(payload)
        if self.publishing:
            self.link.publish(outbox_topic(self.game_id, seat), payload)
            self.link.publish(sync_topic(self.game_id, seat), payload, retain=True)

    def _publish_sync(self, seat: str) -> None:
        """Retain the seat's latest message (message 0, the options and view, before any was sent)."""
        latest = self.outbox[seat].latest() or seal(self.secrets[seat], {
            "type": "none", "seq": 0, "game": self.game_id, "view": view(self.session.state, seat), "tries": 0})
        self.link.publish(sync_topic(self.game_id, seat), latest, retain=True)

    def _resend(self, seat: str, have: int) -> None:
        for payload in self.messages(seat, have):
            self.link.publish(outbox_topic(self.game_id, seat), payload)

    def messages(self, seat: str, after: int = 0) -> list[bytes]:
        """``seat``'s messages after number ``after``, as sealed: the latest from memory, older ones rebuilt by
        replaying the journal through the same handlers (the host's messages are a pure function of it)."""
        with self.lock:
            kept = self.outbox[seat].after(after)
            if kept is not None:
                return kept
            return self._rebuilt()[seat].after(after) or []

    def _rebuilt(self) -> dict[str, Outbox]:
        """Every seat's messages from the start, replayed from the journal into a scratch session (the game's own
        is left as it is)."""
        saved = (self.session, self.outbox, dict(self._attempts), set(self.away), self.publishing, self.undo_asked)
        self.outbox = {s: Outbox(None) for s in self.seats}
        self.publishing = False
        try:
            self._replay()
            return self.outbox
        finally:
            self.session, self.outbox, self._attempts, self.away, self.publishing, self.undo_asked = saved

    def _publish_clock(self) -> None:
        """The clock's reading, public and retained: each board counts the running side's time down from it."""
        if self.keeper is None or not self.publishing:
            return
        body = json.dumps({"game": self.game_id, "clock": self.keeper.to_json()}, sort_keys=True).encode()
        self.link.publish(public_topic(self.game_id, "clock"), body, retain=True)

    def _publish_public(self) -> None:
        if not self.publishing:
            return
        if self.commitments:
            body = json.dumps({"game": self.game_id, "commitments": self.commitments}, sort_keys=True).encode()
            self.link.publish(public_topic(self.game_id, "commitments"), body, retain=True)
        if self.session.state.phase == "over":
            self.link.publish(public_topic(self.game_id, "record"), json.dumps(self.record(), sort_keys=True).encode(),
                              retain=True)

    def record(self) -> dict[str, Any]:
        """The post-game record: the deployments judged, every move, every ruling as the post-game reveal, and the
        commitments; each side checks its own deployment against it (and the other's once its salts are out)."""
        st = self.session.state
        if st.phase != "over":
            raise RemoteError("the record is published once the game is over")
        return {"game": self.game_id, "rules": self.game.id, "options": dict(st.options),
                "deployments": {s: dict(p) for s, p in st.deployments.items()},
                "moves": [{"side": r.side, "from": r.frm, "to": r.to} for r in st.history],
                "rulings": [redact_ruling(r, ARBITER, game_over=True) for r in st.history],
                "commitments": self.commitments, "result": st.result.to_json() if st.result else None}

    def _tries(self, seat: str) -> int:
        """How many refused tries ``seat`` has made at the current ply (a resent try is not judged again)."""
        return self._attempts.get((seat, self.session.state.ply), 0)

    # ------------------------------------------------------------------ messages in
    def handle(self, topic: str, payload: bytes) -> None:
        """One message from a seat (the broker's thread calls this)."""
        seat = seat_of_inbox(self.game_id, topic)
        if seat not in self.seats:
            return
        try:
            m = unseal(self.secrets[seat], payload)
        except RemoteError as exc:
            log.warning("from %s: %s", seat, exc)
            return
        with self.lock, self.session.lock:
            kind = m["type"]
            if kind == "hello":
                self._resend(seat, _count(m.get("have")))
            elif kind == "deploy":
                self._deploy(seat, m.get("placement"), commitment=m.get("commit"), have=_count(m.get("have")))
            elif kind == "move":
                self._move(seat, m)
            elif kind == "ready":
                self._ready(seat)
            elif kind == "ask":
                self._ask(seat, m.get("action"))
            elif kind == "react":
                self._react(seat, m)
            elif kind == "react_auto":
                self._react_auto(seat, bool(m.get("on")))
            else:
                log.warning("from %s: unknown message type %r", seat, kind)
            self.session.forget(KEEP_EVENTS)
        if self.session.state.phase == "over":
            self._publish_public()

    # ------------------------------------------------------------------ the clock, and a side away
    def handle_seen(self, topic: str, payload: bytes) -> None:
        """A seat's board says it is here (on each connect) or the broker says, by its last will, it is away."""
        seat = seat_of_inbox(self.game_id, topic, "seen")
        if seat not in self.seats:
            return
        try:
            m = unseal(self.secrets[seat], payload)
        except RemoteError as exc:
            log.warning("presence of %s: %s", seat, exc)
            return
        conn = str(m.get("conn"))
        with self.lock, self.session.lock:
            if m["type"] == "here":
                self.here[seat] = conn
                away = False
            elif m["type"] == "away" and self.here.get(seat, conn) == conn:
                away = True  # (the last will of a connection replaced since is stale: ignored)
            else:
                return
            if away != (seat in self.away):
                self._seen(seat, away)

    def _seen(self, seat: str, away: bool, *, replay: bool = False) -> None:
        """``seat``'s board went away or came back: journaled, told to every seat, the clock held by the rule."""
        if seat not in self.seats:
            return
        if not replay:
            self.session.record_arbiter({"action": "away" if away else "back", "seat": seat})
        (self.away.add if away else self.away.discard)(seat)
        held = self.away_rule == "pause" and bool(self.away)
        code = ("remote.away_held" if held else "remote.away") if away else ("remote.back_held" if held else "remote.back")
        for s in self.seats:
            self._send(s, {"type": "event", "event": {"event": "notice", "kind": "away" if away else "back",
                                                      "player": seat, "held": held, "say": say(code, player=seat)}})
        if not replay:
            self._hold_clock()

    def _hold_clock(self) -> None:
        if self.keeper is not None:
            self.keeper.hold(self.away_rule == "pause" and bool(self.away) or self.session.paused)
            self._publish_clock()

    def _ready(self, seat: str) -> None:
        """``seat``'s board is laid out: the first side's time runs once every board is."""
        st = self.session.state
        if st.phase != "play" or st.ply != 0 or st.turn is None:
            return
        self.ready.add(seat)
        if self.keeper is not None and self.ready >= set(self.seats) and self.keeper.begin(st.turn):
            self._hold_clock()

    def tick(self) -> None:
        """Look at the clock once: a flag that fell ends the game (journaled, every seat told)."""
        if self.keeper is None:
            return
        with self.lock:
            if self.session.state.phase != "play":
                return
            n = len(self.session.log)
            self.keeper.tick()
            if self.session.state.phase == "over":
                self._ended(self.session.log[n:])
        if self.session.state.phase == "over":
            self._publish_public()
            self._publish_clock()

    # ------------------------------------------------------------------ what a seat may ask of the referee
    def _ask(self, seat: str, action: Any) -> None:
        """A seat's ask: ``pause`` or ``resume`` the game (either seat: the players agree by voice), or ``resign``
        (the other sides win). Journaled as the arbiter's action (the host is the arbiter), told to every seat."""
        st = self.session.state
        if st.phase != "play" or action not in SEAT_ASKS or seat in st.out:
            log.warning("from %s: ask %r refused (%s)", seat, action, st.phase)
            return
        if action in UNDO_ANSWERS:
            self._undo_answer(seat, UNDO_ANSWERS[action])
        elif action == "resign" and len(self._in_play()) > 2:
            self.put_out(seat, say("verdict.resigned", side=seat))  # the game goes on without it
        elif action == "resign":
            self._end(tuple(s for s in self.seats if s != seat), say("verdict.resigned", side=seat))
        else:
            self._pause(action == "pause")
        self._publish_clock()

    def _in_play(self) -> list[str]:
        return [s for s in self.seats if s not in self.session.state.out]

    def _undo_answer(self, seat: str, answer: str, *, replay: bool = False) -> None:
        """``seat`` asks to take back the last ruling, agrees, or declines: journaled, told to every seat; the
        undo is made once every seat still in play has agreed (the asker agrees by asking)."""
        st = self.session.state
        asked = self.undo_asked if self.undo_asked is not None and self.undo_asked[0] == st.ply else None
        if self.session.paused:  # the boards' readings wait: resumed first, then asked or answered
            log.warning("from %s: undo %s refused while the game is paused", seat, answer)
            return
        if answer == "ask":
            if not st.history or asked is not None:
                log.warning("from %s: undo refused (%s)", seat, "asked already" if st.history else "no move to take back")
                return
        elif asked is None or seat in asked[1] or answer not in ("agree", "decline"):
            log.warning("from %s: an undo %s with no undo asked: ignored", seat, answer)
            return
        if not replay:
            self.session.record_arbiter({"action": "ask_undo", "seat": seat, "answer": answer, "ply": st.ply})
        if answer == "decline":
            self.undo_asked = None
            code = "remote.undo_declined"
        else:
            self.undo_asked = asked = (st.ply, {*(asked[1] if asked else ()), seat})
            code = "remote.undo_asked" if answer == "ask" else "remote.undo_agreed"
        waiting = [s for s in self._in_play() if self.undo_asked is None or s not in self.undo_asked[1]]
        for s in self.seats:
            self._send(s, {"type": "event", "event": {"event": "notice", "kind": f"undo_{answer}", "player": seat,
                                                      "ply": st.ply, "waiting": waiting,
                                                      "say": say(code, player=seat, ply=st.ply)}})
        if answer != "decline" and not waiting and not replay:
            n = len(self.session.log)
            self.session.undo(self.table.rebuild)  # journaled (replayed as ``undo``) and made
            self._undone(self.session.log[n:])

    def _undo(self) -> None:
        """A journaled undo, replayed: the game rebuilt from the journal's events up to it."""
        from controller.referee.gamefile import journaled
        from controller.referee.replay import rebuild

        assert self._replayed is not None
        gdef = journaled(self.table.journal, self.table.game_id)
        n = len(self.session.log)
        self.session.undo(lambda: rebuild(self._replayed or [], gdef))
        self._undone(self.session.log[n:])

    def _undone(self, new: list[Published]) -> None:
        """After an undo (``new``: the session's events of it): every seat gets the game as it was before the last
        ruling, its whole board checked."""
        self.undo_asked = None
        events = [ev for ev in new if ev.public.get("event") == "undo"]
        for s in self.seats:
            self._send(s, {"type": "undone", "events": [ev.for_role(s) for ev in events[-1:]]})
        self._publish_clock()

    def put_out(self, seat: str, reason: Any) -> None:
        """The arbiter puts ``seat`` out of the game (a resignation in a game of more than two seats): journaled,
        its pieces cleared from every board by the game's rule, the game over if that leaves one side or team.
        RemoteError if it cannot be put out now."""
        with self.lock, self.session.lock:
            st = self.session.state
            if seat not in self.seats or st.phase != "play" or seat in st.out:
                raise RemoteError(f"{seat} cannot be put out: {'no such seat' if seat not in self.seats else st.phase if st.phase != 'play' else 'out already'}")
            self._put_out(seat, reason)
        if self.session.state.phase == "over":
            self._publish_public()

    def _put_out(self, seat: str, reason: Any) -> None:
        from controller.referee.recognizer import Occupant
        from controller.referee.steps import fixup_steps

        session = self.session
        before = session.expected_board()
        n = len(session.log)
        session.put_out(seat, reason)
        new = session.log[n:]
        after = session.expected_board()
        changed = {s for s in set(before) | set(after) if before.get(s) != after.get(s)}
        steps = fixup_steps(before, after, changed, Occupant(seat, -1)) if changed else []
        self.undo_asked = None
        for s in self.seats:
            told = [ev.for_role(s) for ev in new if ev.public.get("event") == "notice" and (not ev.audience or s in ev.audience)]
            self._send(s, {"type": "reacted", "side": seat, "events": told, "steps": steps, "target": wire_board(after),
                           "changed": sorted(changed)})
        self._ended(new)
        self._publish_clock()

    def _react(self, seat: str, m: Mapping[str, Any], *, replay: bool = False) -> None:
        """``seat`` answers its reaction offer: judged here (the reaction desk's, journaled live), the outcome told
        to each seat as it may know it, with what the reaction changed on the board for every board to do."""
        from controller.referee.reaction_desk import ReactionRefused
        from controller.referee.recognizer import Occupant
        from controller.referee.steps import fixup_steps

        session = self.session
        offer, accept = m.get("offer"), m.get("accept")
        if not isinstance(offer, int) or isinstance(offer, bool) or not isinstance(accept, bool):
            log.warning("from %s: a reaction answer without its offer and answer: ignored", seat)
            return
        if not replay and m.get("ply") != session.state.ply:
            return  # an answer to an offer that lapsed with a move since
        before = session.expected_board()
        n = len(session.log)
        target = m.get("target") if isinstance(m.get("target"), str) else None
        try:
            session.answer_reaction(seat, offer, accept, target=target)
        except ReactionRefused as exc:
            log.warning("from %s: %s", seat, exc)
            return
        new = session.log[n:]
        after = session.expected_board()
        changed = {s for s in set(before) | set(after) if before.get(s) != after.get(s)}
        steps = fixup_steps(before, after, changed, Occupant(seat, -1)) if changed else []
        for s in self.seats:
            told = [ev.for_role(s) for ev in new if ev.public.get("event") in FORWARDED and (not ev.audience or s in ev.audience)]
            self._send(s, {"type": "reacted", "side": seat, "events": told, "steps": steps, "target": wire_board(after),
                           "changed": sorted(changed)})

    def _react_auto(self, seat: str, on: bool) -> None:
        from controller.referee.reaction_desk import ReactionRefused

        n = len(self.session.log)
        try:
            self.session.set_react_automatically(seat, on)
        except ReactionRefused as exc:
            log.warning("from %s: %s", seat, exc)
            return
        self._forward(self.session.log[n:])

    def _pause(self, on: bool) -> None:
        """Pause or resume the game (the arbiter desk's, so journaled live; replayed with the journal detached)."""
        n = len(self.session.log)
        if on:
            self.session.pause()
        else:
            self.session.resume()
        self._forward(self.session.log[n:])

    def _end(self, winners: tuple[str, ...], reason: Any) -> None:
        """The arbiter's end of the game (a flag fallen), replayed from the journal."""
        n = len(self.session.log)
        self.session.end(winners, reason)
        self._ended(self.session.log[n:])

    def _ended(self, events: list[Published]) -> None:
        for ev in events:
            if ev.public.get("event") == "game_over":
                for s in self.seats:
                    self._send(s, {"type": "over", "event": ev.for_role(s)})

    def _deploy(self, seat: str, placement: Any, *, commitment: Any = None, replay: bool = False, have: int = 0) -> None:
        st = self.session.state
        if seat in st.deployments:  # a resend: the seat has it already, or gets it now
            self._resend(seat, have)
            return
        if not isinstance(placement, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in placement.items()):
            self._send(seat, {"type": "setup_rejected", "problems": [{"station": None, "message": "not a deployment"}]})
            return
        if not replay:
            if not isinstance(commitment, dict) or set(commitment) != set(placement) \
                    or not all(isinstance(v, str) and len(v) == 64 for v in commitment.values()):
                self._send(seat, {"type": "setup_rejected",
                                  "problems": [{"station": None, "message": "the deployment came without its commitment"}]})
                return
        n = len(self.session.log)
        problems = self.session.register_setup(seat, placement)
        if problems:
            self._send(seat, {"type": "setup_rejected", "problems": [p.to_json() for p in problems]})
            return
        if not replay:
            self.commitments[seat] = dict(commitment)
            self._save_commitments()
            self._publish_public()
        self._forward(self.session.log[n:])
        if st.phase == "play":
            for s in self.seats:
                self._send(s, {"type": "start"})

    def _move(self, seat: str, m: Mapping[str, Any]) -> None:
        st = self.session.state
        frm, to = m.get("from"), m.get("to")
        if not isinstance(frm, str) or not isinstance(to, str):
            log.warning("from %s: a move whose stations are not station ids: ignored", seat)
            return
        if st.phase != "play" or self.session.paused or st.turn != seat or m.get("ply") != st.ply or m.get("try") != self._tries(seat) \
                or frm not in self.game.station_by_id or to not in self.game.station_by_id:
            self._resend(seat, _count(m.get("have")))  # stale (judged already) or out of turn: what it missed
            return
        stations = self.game.station_by_id  # the game's own strings: a long game's history keeps one copy of each
        self._judge(seat, stations[frm].id, stations[to].id)

    def _judge(self, seat: str, frm: str, to: str) -> None:
        session = self.session
        st = session.state
        n = len(session.log)
        ply = st.ply
        session.judge_reported(frm, to)
        new = session.log[n:]
        if st.ply == ply:  # refused: the mover puts the piece back; the other seats hear that a move was refused
            refused = next(ev for ev in new if ev.public.get("event") == "illegal")
            self._attempts[(seat, ply)] = self._attempts.get((seat, ply), 0) + 1
            for s in self.seats:
                if s == seat:
                    self._send(s, {"type": "illegal", "from": frm, "to": to, "event": refused.for_role(s),
                                   "target": wire_board(session.expected_board())})
                else:
                    self._send(s, {"type": "event", "event": refused.for_role(s)})
            return
        ruling = st.history[-1]
        offers = [ev for ev in new if ev.public.get("event") in OFFERS]
        plan = session.last_plan  # the session's own, as it published it
        fx = plan.fixup
        assert fx is not None
        self._publish_clock()
        common = {"type": "ruling", "side": seat, "from": frm, "to": to, "ply": ruling.ply, "event": plan.event,
                  "notices": plan.notices, "steps": fx.steps,  # the target board is the view's (each seat's own)
                  "involved": sorted(fx.involved), "must_lift": sorted(fx.must_lift),
                  "result": ruling.result.to_json() if ruling.result else None}  # public: the same for every seat
        for s in self.seats:
            self._send(s, {**common, "ruling": redact_ruling(ruling, s)})
        self._forward(offers)

    def _forward(self, events: list[Published]) -> None:
        for ev in events:
            if ev.public.get("event") not in FORWARDED:
                continue
            for s in self.seats:
                if not ev.audience or s in ev.audience:
                    self._send(s, {"type": "event", "event": ev.for_role(s)})


class HostGroup:
    """Many games' hosts in one process over one broker connection: paho watches its socket with select(), which
    cannot see a descriptor past 1023, and a connection per game costs a thread each. The group logs in once (its
    login needs ``topic readwrite facedown/remote/#``) and hands each seat's message to its game."""

    def __init__(self, broker: Broker, client_id: str = "facedown-hosts", *, every_game: bool = True) -> None:
        """``every_game``: one subscription for every game's messages (the only host on the broker); False: each
        game's own, made as it is added (one of several hosts sharing a league, each seeing only its games)."""
        self.hosts: dict[str, RemoteHost] = {}
        self.every_game = every_game
        subs = {f"{ROOT}/+/in/+": self._route, f"{ROOT}/+/seen/+": self._route_seen} if every_game else {}
        self.link = Link(broker, client_id, subs, on_connect=self._reconnected)
        self.routed = 0  # seats' messages this group's connection received (a league's hosts each get their own)
        self._stop = threading.Event()
        self._ticking = threading.Thread(target=self._tick_loop, name="facedown-clocks", daemon=True)

    def start(self, timeout: float = 10.0) -> None:
        """Connect first, so the connection's descriptor is a low one whatever the games open after it."""
        self.link.start(timeout)
        self._ticking.start()  # one thread looks at every game's clock

    def add(self, game: str, **kwargs: Any) -> RemoteHost:
        """Host one more game (``kwargs`` as for RemoteHost: journal_path, game_id, options, new)."""
        if kwargs.get("game_id") in self.hosts:
            raise RemoteError(f"game id {kwargs['game_id']} is hosted here already")
        host = RemoteHost(game, self.link.broker, link=self.link, **kwargs)
        if host.game_id in self.hosts:
            host.table.stop()
            raise RemoteError(f"game id {host.game_id} is hosted here already")
        self.hosts[host.game_id] = host
        if not self.every_game:
            self.link.subscribe(inbox_topic(host.game_id, "+"), self._route)
            self.link.subscribe(seen_topic(host.game_id, "+"), self._route_seen)
        host.start()
        return host

    def stop(self) -> None:
        self._stop.set()
        for host in self.hosts.values():
            host.stop()
        self.link.stop()

    def _tick_loop(self) -> None:
        while not self._stop.wait(0.1):
            for host in list(self.hosts.values()):
                try:
                    host.tick()
                except Exception:  # one game's clock fault must never stop the others
                    log.exception("the game clock of %s failed", host.game_id)

    def _route_seen(self, topic: str, payload: bytes) -> None:
        parts = topic.split("/")
        host = self.hosts.get(parts[2]) if len(parts) == 5 else None
        if host is not None:
            host.handle_seen(topic, payload)

    def _route(self, topic: str, payload: bytes) -> None:
        self.routed += 1
        parts = topic.split("/")
        host = self.hosts.get(parts[2]) if len(parts) == 5 else None
        if host is not None:
            host.handle(topic, payload)

    def _reconnected(self) -> None:
        for host in list(self.hosts.values()):
            host.reconnected()


__all__ = ["FORWARDED", "HostGroup", "NoBoard", "RemoteHost"]
