"""What every blueprint of the web referee shares: the table's context, the one way to refuse a request (``fail``),
who is asking (``role_of``), and the checks a state-changing request passes (``guard_post``)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar
from urllib.parse import urlsplit

from flask import Response, abort, current_app, request
from werkzeug.exceptions import HTTPException

from controller.rules import ARBITER, SPECTATOR
from controller.textfiles import InputFileError, decode, parse_json

from .hub import Hub
from .roles import Roles

MAX_BODY = 64 * 1024


@dataclass(frozen=True, slots=True)
class Context:
    """One table as the web app serves it: the table, its live-event hub, its roles and the setup store."""

    table: Any
    hub: Hub
    roles: Roles
    setups: Any
    meta: dict[str, Any]
    boards: dict[str, Any]
    keepalive_s: float

    @property
    def game(self) -> Any:
        return self.table.game


def ctx() -> Context:
    """The context of the app serving this request."""
    return current_app.extensions["facedown"]


def fail(status: int, message: str, **extra: Any) -> NoReturn:
    """Refuse the request: a JSON body ``{"error": message, ...extra}`` with ``status``."""
    body = {"error": message, **extra}
    abort(Response(json.dumps(body, ensure_ascii=False), status=status, mimetype="application/json"))


View = TypeVar("View", bound=Callable[..., Any])


def changes_game(view: View) -> View:
    """Mark a view that changes the game in progress: an unexpected error inside it (a bug, not a refusal) may have
    left the game half-changed, so it stops the referee visibly, as one on the board thread does (the supervisor's
    fault: every page's banner, the buzzer, exit 3 so the service restarts from the journal), and the request gets
    a 503 that says so instead of an anonymous 500."""

    @functools.wraps(view)
    def guarded(*args: Any, **kwargs: Any) -> Any:
        try:
            return view(*args, **kwargs)
        except HTTPException:
            raise
        except Exception as exc:
            sup = getattr(ctx().table, "supervisor", None)
            if sup is None:
                raise
            sup.fail(exc, "web")
            fail(503, "the referee has stopped on an internal error and is restarting from its journal",
                 fault=sup.fault_json())

    return guarded  # type: ignore[return-value]


def role_of(key: str) -> str:
    """The role behind a URL key, or a 403."""
    role = ctx().roles.role(key)
    if role is None:
        fail(403, "this link's token is not one of this game's: ask the arbiter for your seat's link")
    return role


def need_seat(role: str) -> None:
    if role not in ctx().game.sides:
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
    if not ctx().roles.csrf_ok(role, request.headers.get("X-CSRF-Token")):
        fail(403, "missing or wrong CSRF token: reload the page")
    sup = getattr(ctx().table, "supervisor", None)
    if sup is not None and sup.fault is not None:
        fail(503, "the referee has stopped and is restarting: try again shortly", fault=sup.fault_json())
    if not request.is_json:
        fail(415, "send JSON (Content-Type: application/json)")
    raw = request.get_data(cache=True)  # at most MAX_BODY: a longer body with a Content-Length is a 413 here
    if request.content_length is None and len(raw) >= MAX_BODY:  # no length given: werkzeug stops at the cap, silently
        from .common import too_large_text

        fail(413, too_large_text(None, MAX_BODY))
    try:  # our own parse: bounded nesting, long numbers and bad bytes are a 400 that says so, never a 500
        data = parse_json(decode(raw, "the request body", "request"), "the request body")
    except InputFileError as exc:
        fail(400, str(exc))
    if not isinstance(data, dict):
        fail(400, "the request body must be a JSON object")
    return data


def placement_of(data: dict[str, Any]) -> dict[str, str]:
    """The ``placement`` object of a request: station -> piece id."""
    placement = data.get("placement")
    if not isinstance(placement, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in placement.items()):
        fail(400, "'placement' must be an object of station to piece id, e.g. {\"a1\": \"flag\"}")
    if len(placement) > len(ctx().game.stations):
        fail(400, "more placements than the board has stations")
    return placement


def linked_roles() -> tuple[str, ...]:
    """The roles that have a page link: every seat a person plays (a computer seat has no token), the spectators and
    the arbiter."""
    table = ctx().table
    return (*(s for s in ctx().game.sides if s in table.tokens), SPECTATOR, ARBITER)


def link(role: str) -> str:
    """The page address of ``role`` as reached from this request's host (a role of ``linked_roles``)."""
    table = ctx().table
    base = request.host_url.rstrip("/")
    if role == SPECTATOR:
        return base + "/"
    kind = "arbiter" if role == ARBITER else "seat"
    return f"{base}/{kind}/{table.tokens['arbiter' if role == ARBITER else role]}"
