"""The Flask app factory: routes for the spectator, seat and arbiter pages and their JSON/SSE API, with role checks,
CSRF protection and security headers. Every response is built from the requester's role's view."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

from flask import Flask, Response, abort, jsonify, render_template, request

from controller.board_svg import screen_board
from controller.rules import ARBITER, SPECTATOR
from controller.rules.setup import check_deployment

from . import payloads
from .common import install_security
from .hub import Hub
from .roles import PUBLIC_KEY, Roles

ARBITER_ACTIONS = ("pause", "resume", "undo", "end", "out")
MAX_BODY = 64 * 1024


def create_app(table: Any, *, setups: Any = None, keepalive_s: float = 15.0, max_streams: int = 40,
               queue_size: int = 256, streams_per_role: int = 4, per_address_streams: int | None = None) -> Flask:
    """The web referee for ``table``. ``setups`` is a SetupStore (default: the user's data dir)."""
    if setups is None:
        from controller.setups_store import SetupStore

        setups = SetupStore()
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    roles = Roles(table)
    hub = Hub(table.session, queue_size=queue_size, max_clients=max_streams, per_role=streams_per_role,
              per_address=per_address_streams)
    app.extensions["facedown"] = {"table": table, "hub": hub, "roles": roles, "setups": setups}
    game = table.game
    meta = payloads.game_meta(game)
    # the static board layer, drawn by controller/board_svg.py with the viewer's side at the bottom (first side for
    # the spectator and the arbiter); the page adds the pieces on top
    boards = {side: screen_board(game, side) for side in game.sides}

    # ------------------------------------------------------------------ helpers
    def fail(status: int, message: str, **extra: Any) -> Response:
        body = {"error": message, **extra}
        abort(Response(json.dumps(body, ensure_ascii=False), status=status, mimetype="application/json"))

    def role_of(key: str) -> str:
        role = roles.role(key)
        if role is None:
            fail(403, "this link's token is not one of this game's: ask the arbiter for your seat's link")
        return role  # type: ignore[return-value]

    def need_seat(role: str) -> None:
        if role not in game.sides:
            fail(403, "only a seat may do this")

    def need_arbiter(role: str) -> None:
        if role != ARBITER:
            fail(403, "only the arbiter may do this")

    def guard_post(role: str) -> dict[str, Any]:
        """Refuse cross-site or forged state changes; the JSON object the request carries."""
        site = request.headers.get("Sec-Fetch-Site")
        if site is not None and site not in ("same-origin", "none"):
            fail(403, f"cross-site request refused ({site})")
        origin = request.headers.get("Origin")
        if origin is not None:
            o, h = urlsplit(origin), urlsplit(request.host_url)
            if (o.scheme, o.netloc) != (h.scheme, h.netloc):
                fail(403, "request from another origin refused")
        if not roles.csrf_ok(role, request.headers.get("X-CSRF-Token")):
            fail(403, "missing or wrong CSRF token: reload the page")
        sup = getattr(table, "supervisor", None)
        if sup is not None and sup.fault is not None:
            fail(503, "the referee has stopped and is restarting: try again shortly", fault=sup.fault_json())
        if not request.is_json:
            fail(415, "send JSON (Content-Type: application/json)")
        from controller.textfiles import InputFileError, decode, parse_json

        try:  # our own parse: bounded nesting, long numbers and bad bytes are a 400 that says so, never a 500
            data = parse_json(decode(request.get_data(cache=True), "the request body", "request"), "the request body")
        except InputFileError as exc:
            fail(400, str(exc))
        if not isinstance(data, dict):
            fail(400, "the request body must be a JSON object")
        return data  # type: ignore[return-value]

    def placement_of(data: dict[str, Any]) -> dict[str, str]:
        placement = data.get("placement")
        if not isinstance(placement, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in placement.items()):
            fail(400, "'placement' must be an object of station to piece id, e.g. {\"a1\": \"flag\"}")
        if len(placement) > len(game.stations):
            fail(400, "more placements than the board has stations")
        return placement  # type: ignore[return-value]

    def link(role: str) -> str:
        base = request.host_url.rstrip("/")
        if role == SPECTATOR:
            return base + "/"
        kind = "arbiter" if role == ARBITER else "seat"
        return f"{base}/{kind}/{table.tokens['arbiter' if role == ARBITER else role]}"

    def page(role: str, key: str) -> str:
        return render_template("page.html", role=role, key=key, csrf=roles.csrf(role) if role != SPECTATOR else "",
                               game=game, sides=game.sides, board=boards.get(role, boards[game.sides[0]]))

    # ------------------------------------------------------------------ headers and errors
    install_security(app)

    # ------------------------------------------------------------------ pages
    @app.get("/")
    def spectator_page() -> str:
        return page(SPECTATOR, PUBLIC_KEY)

    @app.get("/seat/<token>")
    def seat_page(token: str) -> str:
        role = role_of(token)
        need_seat(role)
        return page(role, token)

    @app.get("/arbiter/<token>")
    def arbiter_page(token: str) -> str:
        role = role_of(token)
        need_arbiter(role)
        return page(role, token)

    # ------------------------------------------------------------------ read
    @app.get("/i18n/<lang>.json")
    def words(lang: str) -> Response:
        """One language's message catalog, for the page's words (the referee's health banner among them)."""
        from controller.messages import LANGUAGES, catalog

        if lang not in LANGUAGES:
            fail(404, f"no words for language {lang[:20]!r}: expected one of {', '.join(LANGUAGES)}")
        return jsonify(catalog(lang))

    @app.get("/api/game")
    def game_data() -> Response:
        return jsonify(meta)

    @app.get("/api/<key>/state")
    def state(key: str) -> Response:
        return jsonify(payloads.state_for(table, role_of(key)))

    @app.get("/api/<key>/events")
    def events(key: str) -> Response:
        role = role_of(key)
        raw = request.headers.get("Last-Event-ID") or request.args.get("after") or "0"
        try:
            after = int(raw)
        except ValueError:
            fail(400, f"Last-Event-ID must be an event number, not {raw[:20]!r}")
        if after < 0:
            fail(400, "Last-Event-ID must not be negative")
        opened = hub.open(role, after, request.remote_addr)
        if opened is None:
            r = Response(json.dumps({"error": "too many live pages open: try again shortly"}), status=503, mimetype="application/json")
            r.headers["Retry-After"] = "5"
            return r
        client, backlog = opened
        body = hub.stream(client, backlog, after, payloads.event_for, keepalive_s=app.config.get("SSE_KEEPALIVE_S", keepalive_s),
                          disconnected=request.environ.get("waitress.client_disconnected"))
        resp = Response(body, mimetype="text/event-stream")
        resp.headers["Cache-Control"] = "no-cache"
        resp.headers["X-Accel-Buffering"] = "no"
        return resp

    @app.get("/api/<key>/replay")
    def replay(key: str) -> Response:
        role = role_of(key)
        if table.state.phase != "over" and role != ARBITER:
            fail(409, "the replay opens when the game is over")
        try:
            return Response(payloads.replay_json(table, role), mimetype="application/json")
        except LookupError as exc:
            fail(404, str(exc))
        raise AssertionError("unreachable")

    @app.get("/api/<key>/record.txt")
    def record(key: str) -> Response:
        role = role_of(key)
        if table.state.phase != "over" and role != ARBITER:
            fail(409, "the record can be downloaded when the game is over")
        try:
            text = payloads.record_text(table)
        except LookupError as exc:
            fail(404, str(exc))
        resp = Response(text, mimetype="text/plain; charset=utf-8")
        resp.headers["Content-Disposition"] = f'attachment; filename="facedown-{game.id}-{table.game_id}.txt"'
        return resp

    @app.get("/api/<key>/links")
    def links(key: str) -> Response:
        need_arbiter(role_of(key))
        return jsonify({r: link(r) for r in (*game.sides, SPECTATOR, ARBITER)})

    @app.get("/api/<key>/qr/<target>.svg")
    def qr(key: str, target: str) -> Response:
        need_arbiter(role_of(key))
        if target not in (*game.sides, SPECTATOR, ARBITER):
            fail(404, f"no role {target!r}; roles are {', '.join((*game.sides, SPECTATOR, ARBITER))}")
        from .qr import qr_svg

        return Response(qr_svg(link(target)), mimetype="image/svg+xml")

    # ------------------------------------------------------------------ setup
    @app.post("/api/<key>/setup/check")
    def setup_check(key: str) -> Response:
        role = role_of(key)
        need_seat(role)
        placement = placement_of(guard_post(role))
        problems = check_deployment(game, role, placement, table.state.options)
        return jsonify({"problems": [p.to_json() for p in problems]})

    @app.post("/api/<key>/setup/random")
    def setup_random(key: str) -> Response:
        """A valid random deployment for this seat to start from (nothing is registered)."""
        import random

        from controller.rules.deploy import random_deployment

        role = role_of(key)
        need_seat(role)
        guard_post(role)
        placement = random_deployment(game, role, random.SystemRandom(), table.state.options)
        return jsonify({"placement": placement})

    @app.post("/api/<key>/setup")
    def setup_submit(key: str) -> Response:
        role = role_of(key)
        need_seat(role)
        placement = placement_of(guard_post(role))
        if table.state.phase != "setup":
            fail(409, "the game has already started")
        if role in table.state.deployments:
            fail(409, f"{role} has already deployed")
        problems = table.session.register_setup(role, placement)
        if problems:
            fail(422, f"deployment refused: {len(problems)} problem(s)", problems=[p.to_json() for p in problems])
        return jsonify({"ok": True, "status": table.session.status})

    @app.get("/api/<key>/setups")
    def setups_list(key: str) -> Response:
        role = role_of(key)
        need_seat(role)
        return jsonify({"setups": [s.to_json() for s in setups.list(game, role)]})

    @app.post("/api/<key>/setups")
    def setups_save(key: str) -> Response:
        from controller.setups_store import SetupStoreError

        role = role_of(key)
        need_seat(role)
        data = guard_post(role)
        placement = placement_of(data)
        name = data.get("name")
        if not isinstance(name, str):
            fail(400, "'name' must be a string")
        try:
            saved = setups.save(game, role, name, placement, table.state.options)
        except SetupStoreError as exc:
            fail(422, str(exc), problems=[p.to_json() for p in exc.problems])
        return jsonify({"ok": True, "setup": saved.to_json()})

    # ------------------------------------------------------------------ simulated board
    @app.post("/api/<key>/sim/toggle")
    def sim_toggle(key: str) -> Response:
        role = role_of(key)
        if role == SPECTATOR:
            fail(403, "spectators watch: only a seat or the arbiter may move pieces on the simulated board")
        data = guard_post(role)
        if table.board_kind != "sim" or not hasattr(table.board, "toggle"):
            fail(409, "this table has a real board: move the pieces by hand")
        station = data.get("station")
        if not isinstance(station, str) or station not in game.station_by_id:
            fail(400, f"unknown station {str(station)[:20]!r}")
        table.board.toggle(station)
        return jsonify({"ok": True, "occupied": station in table.board.raw_occupied()})

    # ------------------------------------------------------------------ optional reactions (reactions: ask)
    @app.post("/api/<key>/reaction")
    def reaction_answer(key: str) -> Response:
        from controller.referee.session import ReactionRefused

        role = role_of(key)
        need_seat(role)
        data = guard_post(role)
        offer, react, target = data.get("offer"), data.get("react"), data.get("target")
        if not isinstance(offer, int) or isinstance(offer, bool) or not isinstance(react, bool):
            fail(400, "send {\"offer\": the offer's number, \"react\": true or false}")
        if target is not None and not isinstance(target, str):
            fail(400, "'target' must be the station the offer named")
        try:
            done = table.session.answer_reaction(role, offer, react, target=target)
        except ReactionRefused as exc:
            fail(exc.status, str(exc))
        return jsonify({"ok": True, **done})

    @app.post("/api/<key>/reaction/auto")
    def reaction_auto(key: str) -> Response:
        from controller.referee.session import ReactionRefused

        role = role_of(key)
        need_seat(role)
        on = guard_post(role).get("on")
        if not isinstance(on, bool):
            fail(400, "send {\"on\": true or false}")
        try:
            table.session.set_react_automatically(role, on)
        except ReactionRefused as exc:
            fail(exc.status, str(exc))
        return jsonify({"ok": True, "automatic": on})

    # ------------------------------------------------------------------ arbiter
    @app.post("/api/<key>/arbiter/<action>")
    def arbiter_action(key: str, action: str) -> Response:
        role = role_of(key)
        need_arbiter(role)
        if action not in ARBITER_ACTIONS:
            fail(404, f"no arbiter action {action!r}; actions are {', '.join(ARBITER_ACTIONS)}")
        data = guard_post(role)
        session = table.session
        if action == "pause":
            session.pause()
        elif action == "resume":
            session.resume()
        elif action == "undo":
            if table.state.phase == "setup":
                fail(409, "there is no ruling to undo yet")
            try:
                session.undo(table.rebuild)
            except (ValueError, RuntimeError) as exc:
                fail(409, str(exc))
        elif action == "out":
            side, reason = data.get("side"), data.get("reason") or "out by the club's time rule"
            if side not in table.game.sides or not isinstance(reason, str):
                fail(400, f"'side' must be one of {', '.join(table.game.sides)} and 'reason' a sentence")
            if len(table.game.sides) <= 2:
                fail(409, "in a two-seat game, end the game instead")
            try:
                session.put_out(side, reason[:200])
            except ValueError as exc:
                fail(409, str(exc))
        else:
            winners = data.get("winners", [])
            reason = data.get("reason") or ("draw agreed" if not winners else "ended by the arbiter")
            if not isinstance(winners, list) or not all(isinstance(w, str) for w in winners) or not isinstance(reason, str):
                fail(400, "'winners' must be a list of sides (empty for a draw) and 'reason' a sentence")
            if table.state.phase == "over":
                fail(409, "the game is already over")
            try:
                session.end(tuple(winners), reason[:200])
            except ValueError as exc:
                fail(400, str(exc))
        return jsonify({"ok": True, "status": session.status})

    return app
