"""A table's publisher to the club's broker: what spectators may know, and nothing else, over MQTT (paho-mqtt 2.x).

The session calls :meth:`TableBus.on_event` from the referee's thread; it only appends the event to a bounded
outbox and wakes the bus thread, so publishing never blocks or slows the referee. The bus thread publishes when the
broker is reachable and holds on when it is not: the table referees on and catches up when the broker returns
(the latest status, the newest ``outbox_size`` events, and every result, which is never dropped).

An event leaves the outbox only when the broker has acknowledged it (QoS 1 PUBACK, ``MQTTMessageInfo.is_published``),
not when paho has accepted it: paho keeps a message it has taken until that acknowledgement, across a lost
connection, and sends it again on reconnect, so the bus hands each event to paho exactly once and never again.

What leaves the Pi is built only from ``Published.public`` of events with no audience and from the rules layer's
``view(state, SPECTATOR)`` / ``redact_ruling(ruling, SPECTATOR)``:

- ``facedown/tables/NAME/status``   retained, QoS 1: game, players, phase, turn, board as a spectator sees it,
  last ruling, mismatch, pause, clocks, result;
- ``facedown/tables/NAME/presence`` retained, QoS 1: online; offline on a clean stop, or by the broker's last will
  when the table loses power or its network;
- ``facedown/tables/NAME/events``   QoS 1: each public event;
- ``facedown/results/NAME/GAME``    retained, QoS 1: one per game, so no result is lost to a late dashboard; it
  carries the game's signed record (controller.referee.signing, packed), made by the bus thread from the journal
  once the game is over, so the club can verify the result (the record holds every hidden piece, and is only made
  after the game has ended, when they are no secret).
"""

from __future__ import annotations

import hashlib
import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Mapping
from typing import Any

from controller.announce.console import event_words
from controller.announce.events import EventError
from controller.messages import MessageError, render
from controller.referee.session import Published
from controller.rules import SPECTATOR

from .broker import (
    Broker,
    check_table_name,
    events_topic,
    make_client,
    presence_topic,
    result_topic,
    status_topic,
)

log = logging.getLogger(__name__)

STATUS_REFRESH_S = 5.0  # a running clock's status is republished this often (pages count down between)
# paho's MQTTErrorCode values that mean "paho holds the message and will deliver it": sent now, or queued until the
# connection is back (bus.py does not import paho at module load, so a table that plays alone never pays for it)
_PAHO_HOLDS = (0, 4)  # MQTT_ERR_SUCCESS, MQTT_ERR_NO_CONN


class _Pending:
    """One public event in the outbox: its payload, and paho's receipt once it was handed over."""

    __slots__ = ("data", "info")

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data
        self.info: Any = None  # MQTTMessageInfo once handed to paho; the event leaves the outbox when it is_published()


def _dumps(data: Any) -> bytes:
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode()


def game_key(table: Any) -> str:
    """A game's name in result topics: its journal number and a hash that tells apart two journals' game 1."""
    salt = hashlib.sha256(str(table.tokens.get("arbiter", "")).encode()).hexdigest()[:8]
    return f"{table.game_id or 0}-{salt}"


def _result_words(result: Mapping[str, Any] | None, game: Any, lang: str) -> dict[str, Any] | None:
    if result is None:
        return None
    reason = result.get("reason")
    if not isinstance(reason, Mapping):
        return dict(result)
    return {**result, "reason": render(dict(reason), lang, game), "verdict": reason}


def public_status(table: Any, name: str, *, players: Mapping[str, str], clock: Any = None, web: str | None = None,
                  lang: str = "en") -> dict[str, Any]:
    """The table's status as any spectator may know it, from the referee's read model for the spectator (call with
    the session's lock held or from its thread)."""
    session = table.session
    seen = table.view(SPECTATOR)  # the read model: status, board, last ruling, what the table must do now
    status = seen.status
    last_public = next((e for e in reversed(session.log) if not e.audience), None)
    out: dict[str, Any] = {
        "table": name,
        "game": table.game.id,
        "game_name": table.game.name,
        "zh": table.game.zh,
        "zh_hans": table.game.zh_hans,
        "game_key": game_key(table),
        "sides": list(table.game.sides),
        "players": {s: players.get(s, "") for s in table.game.sides},
        "phase": status["phase"],
        "turn": status["turn"],
        "ply": status["ply"],
        "paused": status["paused"],
        "waiting_for_board": status["waiting_for_board"],
        "mismatch": status["mismatch"],
        "setups": status["setups"],
        # the result's verdict in words for the dashboard (the club's language), and as a message object
        "result": _result_words(status["result"], table.game, lang),
        "view": seen.board,
        "last_ruling": seen.last_ruling,
        # what the table must do now (a fix-up with its steps left, a mismatch, the computer's move), as every page
        "guidance": seen.guidance,
        "instruction": seen.instruction,
        "last_event": dict(last_public.public) if last_public is not None else None,
        "seq": seen.seq,
        "clock": clock.to_json() if clock is not None else None,
        # the dashboard marks a table whose referee has stopped, or whose sensors are not heard
        "fault": seen.extra.get("fault"),
        "link": seen.extra.get("link"),
        "web": web,
        "sent_at": time.time(),
    }
    return out


class TableBus:
    """Publishes one table to the club broker from a background thread; see the module docstring for the topics."""

    def __init__(self, table: Any, broker: Broker, name: str, *, players: Mapping[str, str] | None = None,
                 clock: Any = None, web: str | None = None, outbox_size: int = 1000,
                 client_factory: Callable[..., Any] = make_client, lang: str = "en") -> None:
        self.table = table
        self.lang = lang  # the feed's words: each event's public message rendered from this catalog
        self.broker = broker
        self.name = check_table_name(name)
        self.players = dict(players or {})
        self.clock = clock
        self.web = web
        self.outbox: deque[_Pending] = deque(maxlen=outbox_size)  # events the broker has not acknowledged yet
        self._out_lock = threading.Lock()  # held only around deque steps, never across I/O
        self.dropped = 0  # events the outbox had to let go while the broker was away (the status still catches up)
        self.results: dict[str, dict[str, Any]] = {}  # every result this table produced: never dropped
        self._sent: dict[str, Any] = {}  # result key -> paho's MQTTMessageInfo of its latest publish
        self._unsent: set[str] = set()  # result keys to (re)publish at the next chance
        self._unsigned: dict[str, int | None] = {}  # result key -> journal game whose signed record is still to make
        self.connected = False
        self.published = 0
        self._dirty = True
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._resend = False
        self._client = client_factory(broker, f"facedown-table-{self.name}",
                                      will=(presence_topic(self.name), _dumps({"table": self.name, "online": False, "reason": "lost"})))
        self._client.on_connect = self._on_connect
        self._client.on_disconnect = self._on_disconnect
        self._thread = threading.Thread(target=self._run, name=f"facedown-bus-{self.name}", daemon=True)
        with table.session.lock:
            table.session.subscribe(self.on_event)
            if table.state.result is not None:  # a finished game reopened: its result still counts
                self._record_result(table.state.result.to_json())

    # ------------------------------------------------------------------ the referee's side (never blocks)
    def on_event(self, ev: Published) -> None:
        """The session's subscriber: queue the public event and wake the bus thread; O(1), no I/O, no waiting."""
        self._dirty = True
        if not ev.audience:
            # only the public form ever reaches the feed: the structured event plus its words in the club's language
            entry = _Pending({"table": self.name, "seq": ev.seq, **ev.public, "text": self._words(ev.public)})
            with self._out_lock:
                if len(self.outbox) == self.outbox.maxlen and self.outbox[0].info is None:
                    self.dropped += 1  # never handed to paho: this one is gone (one already handed over still arrives)
                self.outbox.append(entry)
            if ev.public.get("event") == "game_over":
                self._record_result({"winners": list(ev.public.get("winners") or []), "reason": ev.public.get("reason", "")})
        self._wake.set()

    def _words(self, public: Mapping[str, Any]) -> str | None:
        try:
            return event_words(public, self.lang, self.table.game)
        except (EventError, MessageError) as exc:  # a malformed event must not stop the feed
            log.warning("table %s: no words for event %r: %s", self.name, public.get("event"), exc)
            return None

    def _record_result(self, result: Mapping[str, Any]) -> None:
        table = self.table
        key = game_key(table)
        reason = result.get("reason", "")
        if isinstance(reason, Mapping):  # a verdict.* message object: the results sheet keeps its words
            reason = render(dict(reason), self.lang, table.game)
        self.results[key] = {
            "table": self.name, "game_key": key, "game": table.game.id, "game_name": table.game.name,
            "sides": list(table.game.sides), "players": {s: self.players.get(s, "") for s in table.game.sides},
            "winners": list(result.get("winners") or []), "reason": reason,
            "plies": table.state.ply, "ended_at": round(time.time(), 3),
        }
        self._unsigned[key] = table.game_id  # the record is made by the bus thread (it reads the journal and signs)
        self._unsent.add(key)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        """Connect in the background (a broker that is down now is retried every few seconds) and start publishing."""
        self._client.connect_async(self.broker.host, self.broker.port, keepalive=10)
        self._client.loop_start()
        self._thread.start()

    def stop(self, timeout: float = 2.0) -> None:
        """Say the table is offline (a clean stop), flush what the broker can take within ``timeout``, disconnect."""
        deadline = time.monotonic() + timeout
        while self.connected and (self.unacknowledged or self.results_pending or self._dirty) and time.monotonic() < deadline:
            self._wake.set()
            time.sleep(0.02)
        self._stop.set()
        self._wake.set()
        self._thread.join(timeout=max(0.1, deadline - time.monotonic()))
        if self.connected:
            info = self._client.publish(presence_topic(self.name), _dumps({"table": self.name, "online": False, "reason": "stopped"}), qos=1, retain=True)
            try:
                info.wait_for_publish(timeout=max(0.1, deadline - time.monotonic()))
            except (RuntimeError, ValueError):
                pass
        self._client.disconnect()
        self._client.loop_stop()

    # ------------------------------------------------------------------ paho callbacks (paho's network thread)
    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any) -> None:
        if reason_code.is_failure:
            log.warning("club broker %s refused table %s: %s", self.broker.url(), self.name, reason_code)
            return
        log.info("table %s connected to the club broker %s", self.name, self.broker.url())
        self.connected = True
        self._resend = True
        self._dirty = True
        self._wake.set()

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any) -> None:
        if self.connected:
            log.warning("table %s lost the club broker (%s); refereeing on, will catch up", self.name, reason_code)
        self.connected = False

    # ------------------------------------------------------------------ the bus thread
    def _publish(self, topic: str, data: Any, *, retain: bool = False) -> Any:
        """Hand one message to paho; its MQTTMessageInfo if paho holds it (sent, or queued for the reconnect), else
        None (paho refused it: it must be handed over again later)."""
        info = self._client.publish(topic, _dumps(data), qos=1, retain=retain)
        if info.rc not in _PAHO_HOLDS:
            return None
        self.published += 1
        return info

    @property
    def unacknowledged(self) -> int:
        """Events in the outbox: not yet handed to paho, or handed and not yet acknowledged by the broker."""
        with self._out_lock:
            return len(self.outbox)

    def _flush_events(self) -> None:
        """Forget the events the broker has acknowledged; hand the ones never handed over to paho, in order."""
        with self._out_lock:
            while self.outbox and self.outbox[0].info is not None and self.outbox[0].info.is_published():
                self.outbox.popleft()
            todo = [e for e in self.outbox if e.info is None]
        topic = events_topic(self.name)
        for entry in todo:
            if not self.connected:
                break
            info = self._publish(topic, entry.data)
            if info is None:
                break
            entry.info = info

    @property
    def results_pending(self) -> bool:
        """Is a result not yet acknowledged by the broker?"""
        return bool(self._unsent) or not all(info.is_published() for info in list(self._sent.values()))

    def _run(self) -> None:
        last_status = 0.0
        while not self._stop.is_set():
            running = self.clock is not None and self.table.state.phase == "play"
            self._wake.wait(timeout=1.0 if running else 5.0)
            self._wake.clear()
            if not self.connected:
                continue
            try:
                if self._resend:
                    self._resend = False
                    self._publish(presence_topic(self.name), {"table": self.name, "online": True, "web": self.web}, retain=True)
                    self._unsent.update(self.results)
                for key in sorted(self._unsent):
                    if self._send_result(key):
                        self._unsent.discard(key)
                now = time.monotonic()
                if self._dirty or (running and now - last_status >= STATUS_REFRESH_S):
                    self._dirty = False
                    with self.table.session.lock:
                        status = public_status(self.table, self.name, players=self.players, clock=self.clock, web=self.web,
                                               lang=self.lang)
                    self._publish(status_topic(self.name), status, retain=True)
                    last_status = now
                self._flush_events()
            except Exception:  # the bus must never stop; the next wake retries
                log.exception("table %s: publishing to the club broker failed", self.name)
                time.sleep(0.5)

    def _sign(self, key: str) -> bool:
        """Attach the game's signed record to its result (False: the journal has not got the end yet, try again)."""
        from controller.referee.journal import JournalError
        from controller.referee.signing import NotOver, make_record, pack

        game_id = self._unsigned.get(key)
        entry = self.results[key]
        journal = self.table.journal
        if game_id == self.table.game_id and self.table.state.phase != "over":
            return False  # reopened by the arbiter's undo: its record waits for the game's new end
        try:
            if journal is None or game_id is None:
                raise JournalError("this table keeps no journal, so it has no record to sign")
            entry["record"] = pack(make_record(journal, game_id))
            entry.pop("record_error", None)
        except NotOver:
            return False
        except JournalError as exc:  # damaged, unchained, no PyNaCl: the club is told why it cannot verify
            log.warning("table %s: the result of game %s goes out unsigned: %s", self.name, key, exc)
            entry.pop("record", None)
            entry["record_error"] = str(getattr(exc, "brief", None) or exc)[:300]
        self._unsigned.pop(key, None)
        return True

    def _send_result(self, key: str) -> bool:
        if key in self._unsigned and not self._sign(key):
            return False
        info = self._publish(result_topic(self.name, key), self.results[key], retain=True)
        if info is None:
            return False
        self._sent[key] = info
        return True
