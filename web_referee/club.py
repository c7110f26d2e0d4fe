"""The club dashboard: every table's board, turn, clocks and last ruling live, results and standings, from the club's
MQTT broker. ``ClubState`` holds what the broker said (checked message by message: a malformed or foreign message is
counted and logged, never applied); ``ClubListener`` feeds it with paho-mqtt 2.x; ``create_club_app`` serves it with
the same look as the board page; ``ClubServer`` runs that with waitress.

The dashboard only ever receives what tables publish, which is built from the spectator's view, so it has nothing
secret to keep; it still draws every text with textContent, since names and reasons come from the tables."""

from __future__ import annotations

import json
import logging
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from typing import Any

from flask import Flask, Response, abort, jsonify, render_template, request

from controller.club.broker import SUBSCRIPTIONS, Broker, make_client, parse_topic
from controller.club.enrolled import Enrolment
from controller.club.results import ResultBook, ResultError, Unverified, verified_result
from controller.textfiles import decode, parse_json
from web_referee.common import install_security, stop_waitress

log = logging.getLogger(__name__)

MAX_MESSAGE = 256 * 1024
MAX_RESULT_MESSAGE = 4 * 1024 * 1024  # a result carries its game's signed record (a 5,000-ply game packs to ~100 kB)
KEPT_UNVERIFIED = 500  # unverified results whose message is kept, to be checked again when a table is enrolled
RECENT_EVENTS = 12


class ClubState:
    """What the dashboard knows of every table, updated from broker messages; thread-safe, with a change counter
    pages wait on."""

    def __init__(self, results: ResultBook | None = None, *, now: Callable[[], float] = time.time,
                 enrolled: Enrolment | None = None) -> None:
        self.results = results or ResultBook()
        self.enrolled = enrolled if enrolled is not None else Enrolment()
        self._enrolled_seen = self.enrolled.version
        self._held: dict[str, bytes] = {}  # topic -> the payload of a result not verified yet (checked again later)
        self._verifying = threading.RLock()  # one result checked at a time (the broker's thread, pages' rechecks)
        self.now = now
        self.tables: dict[str, dict[str, Any]] = {}
        self.version = 0
        self.results_version = 0
        self.rejected = 0
        self.problems: deque[str] = deque(maxlen=20)
        self.listeners: list[Callable[[str, str, dict[str, Any]], None]] = []  # (table, kind, data): benchmarks, tests
        self._cond = threading.Condition()

    # ------------------------------------------------------------------ messages in
    def reject(self, topic: str, why: str) -> None:
        with self._cond:
            self.rejected += 1
            self.problems.append(f"{topic[:80]}: {why}")
        log.warning("club dashboard ignored a message on %s: %s", topic[:80], why)

    def on_message(self, topic: str, payload: bytes) -> None:
        """One broker message: checked, then applied; anything malformed is refused with a reason."""
        where = parse_topic(topic)
        if where is None:
            self.reject(topic, "not a FaceDown club topic")
            return
        kind, name, key = where
        limit = MAX_RESULT_MESSAGE if kind == "result" else MAX_MESSAGE
        if len(payload) > limit:
            self.reject(topic, f"message of {len(payload)} bytes is larger than {limit}")
            return
        if not payload:
            if kind in ("status", "presence"):
                with self._cond:  # a retained message cleared: the table was taken out of the club
                    if self.tables.pop(name, None) is not None:
                        self._changed()
            return
        try:  # our own parse: bounded nesting and numbers, bad bytes named (a deep payload is refused, not a crash)
            data = parse_json(decode(payload, topic[:80], "message"), topic[:80])
        except ValueError as exc:
            self.reject(topic, f"not JSON ({exc})")
            return
        if not isinstance(data, dict):
            self.reject(topic, "expected a JSON object")
            return
        if kind == "result":
            self._recheck()
            self._on_result(topic, name, key, data, payload)
        else:
            problem = _check(kind, name, data)
            if problem:
                self.reject(topic, problem)
                return
            with self._cond:
                t = self.tables.setdefault(name, {"name": name, "online": None, "status": None, "events": deque(maxlen=RECENT_EVENTS),
                                                  "updated": 0.0, "web": None, "seq": 0})
                now = self.now()
                if kind == "presence":
                    t["online"] = bool(data["online"])
                    t["offline_reason"] = None if data["online"] else str(data.get("reason", ""))[:40]
                    if isinstance(data.get("web"), str):
                        t["web"] = data["web"][:300]
                elif kind == "status":
                    t["status"] = data
                    t["status_at"] = now
                    if isinstance(data.get("web"), str):
                        t["web"] = data["web"][:300]
                else:
                    t["events"].append(data)
                    t["seq"] = max(t["seq"], data["seq"])
                t["updated"] = now
                self._changed(name)
        for fn in list(self.listeners):
            fn(name, kind, data)

    def _on_result(self, topic: str, name: str, key: str, data: dict[str, Any], payload: bytes) -> None:
        """Count a result only once verified; keep it aside, with why, otherwise."""
        with self._verifying:
            self._check_result(topic, name, key, data, payload)

    def _check_result(self, topic: str, name: str, key: str, data: dict[str, Any], payload: bytes) -> None:
        if data.get("table") != name or data.get("game_key") != key:
            self.reject(topic, "the result names another table or game than its topic")
            return
        try:
            try:
                result = verified_result(data, self.enrolled)
                changed = self.results.add(result)
                self._held.pop(topic, None)
            except Unverified as u:
                changed = self.results.set_unverified(u.result, u.why)
                if changed:
                    log.warning("club dashboard: %s's result for game %s is not counted: %s", name, key, u.why)
                self._held[topic] = payload
                while len(self._held) > KEPT_UNVERIFIED:
                    self._held.pop(next(iter(self._held)))
        except ResultError as exc:
            self.reject(topic, str(exc))
            return
        if changed:
            with self._cond:
                self.results_version += 1
                self._changed()

    def _recheck(self) -> None:
        """When the enrolled tables changed, check the results held as unverified again (a table enrolled late)."""
        with self._verifying:
            try:
                version = self.enrolled.refresh()
            except ResultError as exc:  # the table list became unreadable: keep what was read, say why
                self.reject("club-tables", str(exc))
                return
            if version == self._enrolled_seen:
                return
            self._enrolled_seen = version
            for topic, payload in list(self._held.items()):
                where = parse_topic(topic)
                if where is not None:
                    self._check_result(topic, where[1], where[2] or "", json.loads(payload.decode("utf-8")), payload)

    def _changed(self, name: str | None = None) -> None:
        self.version += 1
        if name is not None:
            self.tables[name]["version"] = self.version
        self._cond.notify_all()

    # ------------------------------------------------------------------ reading
    def wait(self, version: int, timeout: float) -> int:
        """Wait until something changed after ``version`` (or ``timeout``); the current version."""
        with self._cond:
            self._cond.wait_for(lambda: self.version > version, timeout=timeout)
            return self.version

    def table(self, name: str) -> dict[str, Any] | None:
        with self._cond:
            t = self.tables.get(name)
            return None if t is None else self._table_json(t)

    def snapshot(self, since: int = 0) -> dict[str, Any]:
        """Every table changed after ``since`` (0: all), with results and standings when they changed."""
        with self._cond:
            tables = {n: self._table_json(t) for n, t in sorted(self.tables.items()) if t.get("version", 0) > since}
            out: dict[str, Any] = {"version": self.version, "tables": tables, "names": sorted(self.tables),
                                   "rejected": self.rejected, "problems": list(self.problems)[-5:]}
        # results and standings are small: always sent, so a page never shows stale standings
        self._recheck()
        out["results"] = [r.to_json() for r in self.results.all()]
        out["unverified"] = [{**r.to_json(), "why": why} for r, why in self.results.unverified()]
        out["standings"] = {g: [s.to_json() for s in rows] for g, rows in self.results.standings().items()}
        return out

    def _table_json(self, t: dict[str, Any]) -> dict[str, Any]:
        status = t["status"]
        clock = None
        if status is not None and isinstance(status.get("clock"), dict):
            clock = _clock_now(status["clock"], self.now() - t.get("status_at", self.now()), t["online"] is not False)
        return {"name": t["name"], "online": t["online"], "offline_reason": t.get("offline_reason"), "web": t["web"],
                "status": status, "clock": clock, "events": list(t["events"]), "seq": t["seq"], "updated": t["updated"],
                "version": t.get("version", 0)}


def _clock_now(clock: dict[str, Any], age: float, online: bool) -> dict[str, Any]:
    """The clock as it stands now: the running side's time counts down from when the status arrived."""
    out = dict(clock)
    left = dict(clock.get("left") or {})
    running = clock.get("running")
    if online and running in left and isinstance(left[running], int | float) and not clock.get("paused") and not clock.get("stopped"):
        left[running] = max(0.0, round(left[running] - max(0.0, age), 1))
    out["left"] = left
    return out


def _check(kind: str, name: str, data: dict[str, Any]) -> str | None:
    """What is wrong with a table's presence, status or event message, or None."""
    if data.get("table") != name:
        return "the message names another table than its topic"
    if kind == "presence":
        return None if isinstance(data.get("online"), bool) else "presence needs 'online': true or false"
    if kind == "events":
        if not isinstance(data.get("event"), str) or not isinstance(data.get("seq"), int):
            return "an event needs 'event' (a kind) and 'seq' (a number)"
        return None
    for key, typ in (("game", str), ("sides", list), ("phase", str), ("view", dict), ("seq", int)):
        if not isinstance(data.get(key), typ):
            return f"status field {key!r} missing or of the wrong type"
    pieces = data["view"].get("pieces")
    if not isinstance(pieces, list) or not all(isinstance(p, dict) and isinstance(p.get("station"), str) for p in pieces):
        return "status view needs a list of pieces with stations"
    return None


class ClubListener:
    """Subscribes to every table of the club and feeds ``state``; reconnects by itself when the broker comes back."""

    def __init__(self, state: ClubState, broker: Broker, *, client_id: str = "facedown-club-dashboard",
                 client_factory: Callable[..., Any] = make_client) -> None:
        self.state = state
        self.broker = broker
        self.connected = threading.Event()
        # a kept session: events published while the dashboard reconnects (or the broker restarts, with its
        # persistence on) are queued for it by the broker instead of lost
        self._client = client_factory(broker, client_id, clean_session=False)
        self._client.on_connect = self._on_connect
        self._client.on_disconnect = self._on_disconnect
        self._client.on_message = self._on_message
        self._client.on_subscribe = self._on_subscribe

    def start(self) -> None:
        self._client.connect_async(self.broker.host, self.broker.port, keepalive=10)
        self._client.loop_start()

    def stop(self) -> None:
        self._client.disconnect()
        self._client.loop_stop()

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any) -> None:
        if reason_code.is_failure:
            log.warning("club broker %s refused the dashboard: %s", self.broker.url(), reason_code)
            return
        client.subscribe([(t, 1) for t in SUBSCRIPTIONS])
        log.info("club dashboard connected to %s", self.broker.url())

    def _on_subscribe(self, client: Any, userdata: Any, mid: int, reason_codes: Any, properties: Any) -> None:
        # connected means subscribed: from now on every table's QoS 1 message reaches the dashboard
        if all(not rc.is_failure for rc in reason_codes):
            self.connected.set()
        else:
            log.warning("club broker %s refused the dashboard's subscriptions: %s", self.broker.url(), reason_codes)

    def _on_disconnect(self, client: Any, userdata: Any, flags: Any, reason_code: Any, properties: Any) -> None:
        self.connected.clear()

    def _on_message(self, client: Any, userdata: Any, msg: Any) -> None:
        try:
            self.state.on_message(msg.topic, bytes(msg.payload))
        except Exception:  # one bad message must not stop the dashboard's feed
            log.exception("club dashboard: message on %s failed", msg.topic)


# ---------------------------------------------------------------------- the web app
def _board_for(game_id: str) -> dict[str, Any] | None:
    """The static board drawing and public piece names of a known game; None for a game id this install lacks."""
    from controller.board_svg import screen_board
    from controller.rules import game_ids, load_game

    if game_id not in game_ids():
        return None
    game = load_game(game_id)
    board = screen_board(game, game.sides[0])
    return {"id": game.id, "name": game.name, "zh": game.zh, "zh_hans": game.zh_hans, "sides": list(game.sides), "viewbox": board.viewbox,
            "layer": board.layer, "pieces": {p.id: {"name": p.name, "zh": p.zh} for p in game.pieces}}


def create_club_app(state: ClubState, *, broker_url: str = "", keepalive_s: float = 15.0) -> Flask:
    """The dashboard's Flask app over ``state``."""
    app = Flask(__name__)
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    app.extensions["facedown-club"] = {"state": state}
    boards: dict[str, dict[str, Any] | None] = {}

    install_security(app)

    def fail(status: int, message: str) -> None:
        abort(Response(json.dumps({"error": message}), status=status, mimetype="application/json"))

    @app.get("/")
    def dashboard() -> str:
        return render_template("club.html", table=None, broker=broker_url)

    @app.get("/table/<name>")
    def table_page(name: str) -> str:
        if state.table(name) is None:
            abort(404)
        return render_template("club.html", table=name, broker=broker_url)

    @app.get("/api/club")
    def club() -> Response:
        return jsonify(state.snapshot())

    @app.get("/api/board/<game_id>")
    def board(game_id: str) -> Response:
        if game_id not in boards:
            boards[game_id] = _board_for(game_id)
        if boards[game_id] is None:
            fail(404, f"no game {game_id[:40]!r} in this install: update FaceDown on the dashboard's machine")
        resp = jsonify(boards[game_id])
        return resp

    @app.get("/api/club/events")
    def events() -> Response:
        raw = request.headers.get("Last-Event-ID") or request.args.get("after") or "0"
        try:
            after = int(raw)
        except ValueError:
            fail(400, f"Last-Event-ID must be a number, not {raw[:20]!r}")
        ka = app.config.get("SSE_KEEPALIVE_S", keepalive_s)

        def stream() -> Iterator[str]:
            last = after
            yield "retry: 2000\n\n"
            while True:
                version = state.wait(last, ka)
                if version <= last:
                    yield ": keepalive\n\n"
                    continue
                snap = state.snapshot(since=last if last <= version else 0)
                last = snap["version"]
                yield f"id: {last}\ndata: {json.dumps(snap, ensure_ascii=False, separators=(',', ':'))}\n\n"

        resp = Response(stream(), mimetype="text/event-stream")
        resp.headers["X-Accel-Buffering"] = "no"
        return resp

    @app.get("/results.csv")
    def results_csv() -> Response:
        resp = Response(state.results.csv(), mimetype="text/csv; charset=utf-8")
        resp.headers["Content-Disposition"] = 'attachment; filename="facedown-club-results.csv"'
        return resp

    @app.get("/api/standings")
    def standings() -> Response:
        return jsonify({g: [s.to_json() for s in rows] for g, rows in state.results.standings().items()})

    return app


class ClubServer:
    """The dashboard served by waitress on ``host:port`` (port 0: any free port) in a background thread."""

    def __init__(self, state: ClubState, *, host: str = "0.0.0.0", port: int = 8090, threads: int = 24, broker_url: str = "") -> None:
        from waitress.server import create_server

        self.app = create_club_app(state, broker_url=broker_url)
        self._server = create_server(self.app, host=host, port=port, threads=threads, ident="facedown-club",
                                     clear_untrusted_proxy_headers=True)
        self.host = host
        self.port: int = self._server.effective_port  # type: ignore[union-attr]
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._server.run, name="facedown-club-web", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        stop_waitress(self._server, self._thread, drain_s=1)
        self._thread = None
