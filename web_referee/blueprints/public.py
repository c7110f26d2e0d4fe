"""What every role reads: the three pages, the game's geometry, the message catalogs, the live state, the live
event stream (each event carrying the role's redacted view, so a page never fetches after an event), the replay and
the record."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, jsonify, render_template, request

import controller
from controller.referee.journal import JournalError
from controller.rules import ARBITER, SPECTATOR

from .. import payloads
from ..http import ctx, fail, need_arbiter, need_seat, role_of
from ..roles import PUBLIC_KEY

bp = Blueprint("public", __name__)

#: The languages a page speaks; each has a catalog controller/messages/catalogs/<lang>.json.
LANGS = ("en", "zh-Hans", "zh-Hant")
CATALOGS = Path(controller.__file__).parent / "messages" / "catalogs"


def _page(role: str, key: str) -> str:
    c = ctx()
    roles = c.roles
    game = c.game
    seat = role in game.sides
    return render_template("page.html", role=role, key=key, csrf=roles.csrf(role) if role != SPECTATOR else "",
                           game=game, sides=game.sides, board=c.boards.get(role, c.boards[game.sides[0]]),
                           landscape=None if seat or not c.boards.get("landscape") else c.boards["landscape"])


@bp.get("/")
def spectator_page() -> str:
    return _page(SPECTATOR, PUBLIC_KEY)


@bp.get("/seat/<token>")
def seat_page(token: str) -> str:
    role = role_of(token)
    need_seat(role)
    return _page(role, token)


@bp.get("/arbiter/<token>")
def arbiter_page(token: str) -> str:
    role = role_of(token)
    need_arbiter(role)
    return _page(role, token)


@bp.get("/api/game")
def game_data() -> Response:
    return jsonify(ctx().meta)


@bp.get("/i18n/<lang>.json")
def catalog(lang: str) -> Response:
    """One language's message catalog, as the page's i18n.js reads it."""
    if lang not in LANGS:
        fail(404, f"no catalog {lang[:20]!r}; languages are {', '.join(LANGS)}")
    text = (CATALOGS / f"{lang}.json").read_text(encoding="utf-8")
    json.loads(text)  # a broken catalog is a server error here, not a blank page
    resp = Response(text, mimetype="application/json")
    return resp


@bp.get("/api/<key>/state")
def state(key: str) -> Response:
    return jsonify(payloads.state_for(ctx().table, role_of(key)))


@bp.get("/api/<key>/events")
def events(key: str) -> Response:
    role = role_of(key)
    c = ctx()
    raw = request.headers.get("Last-Event-ID") or request.args.get("after") or "0"
    try:
        after = int(raw)
    except ValueError:
        fail(400, f"Last-Event-ID must be an event number, not {raw[:20]!r}")
    if after < 0:
        fail(400, "Last-Event-ID must not be negative")
    opened = c.hub.open(role, after, request.remote_addr)
    if opened is None:
        r = Response(json.dumps({"error": "too many live pages open: try again shortly"}), status=503, mimetype="application/json")
        r.headers["Retry-After"] = "5"
        return r
    client, backlog = opened
    table = c.table

    def encode(ev: payloads.Published, who: str) -> dict | None:
        return payloads.pushed_event(table, ev, who)

    from flask import current_app

    keepalive = current_app.config.get("SSE_KEEPALIVE_S", c.keepalive_s)
    body = c.hub.stream(client, backlog, after, encode, keepalive_s=keepalive,
                        disconnected=request.environ.get("waitress.client_disconnected"))
    resp = Response(body, mimetype="text/event-stream")
    resp.headers["Cache-Control"] = "no-cache"
    resp.headers["X-Accel-Buffering"] = "no"
    return resp


def _after_the_game(key: str, refusal: str) -> tuple[str, Any]:
    """The role and table for something that opens once the game is over (the arbiter may look at any time)."""
    role = role_of(key)
    table = ctx().table
    if table.state.phase != "over" and role != ARBITER:
        fail(409, refusal)
    return role, table


def _journal_refusal(exc: JournalError) -> str:
    """Why the journal cannot give the replay, without the server's paths (ChainError: the game and event)."""
    brief = getattr(exc, "brief", None)
    return f"the journal's {brief}: the arbiter can see it with `facedown record verify`" if brief else \
        "the journal cannot be read: the arbiter can see why with `facedown record verify`"


@bp.get("/api/<key>/replay")
def replay(key: str) -> Response:
    role, table = _after_the_game(key, "the replay opens when the game is over")
    try:
        return Response(payloads.replay_json(table, role), mimetype="application/json")
    except LookupError as exc:
        fail(404, str(exc))
    except JournalError as exc:  # a damaged event is named, never replayed
        fail(409, _journal_refusal(exc))


@bp.get("/api/<key>/record.txt")
def record(key: str) -> Response:
    _, table = _after_the_game(key, "the record can be downloaded when the game is over")
    lang = request.args.get("lang", "en")
    if lang not in LANGS:
        fail(400, f"no record in {lang[:20]!r}; languages are {', '.join(LANGS)}")
    try:
        text = payloads.record_text(table, lang)
    except LookupError as exc:
        fail(404, str(exc))
    except JournalError as exc:
        fail(409, _journal_refusal(exc))
    resp = Response(text, mimetype="text/plain; charset=utf-8")
    suffix = "" if lang == "en" else f"-{lang}"
    resp.headers["Content-Disposition"] = f'attachment; filename="facedown-{table.game.id}-{table.game_id}{suffix}.txt"'
    return resp
