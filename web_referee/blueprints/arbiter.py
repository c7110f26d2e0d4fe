"""What only the arbiter does: pause, resume, undo, end the game, put a seat out, and hand out the links."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from ..http import changes_game, ctx, fail, guard_post, link, linked_roles, need_arbiter, role_of

bp = Blueprint("arbiter", __name__)

ARBITER_ACTIONS = ("pause", "resume", "undo", "end", "out")


def _arbiter(key: str) -> str:
    role = role_of(key)
    need_arbiter(role)
    return role


@bp.get("/api/<key>/links")
def links(key: str) -> Response:
    _arbiter(key)
    return jsonify({r: link(r) for r in linked_roles()})


@bp.get("/api/<key>/qr/<target>.svg")
def qr(key: str, target: str) -> Response:
    _arbiter(key)
    roles = linked_roles()
    if target not in roles:  # a computer seat has no link, so no code either: like a role that does not exist
        fail(404, f"no link for {target[:20]!r}; links are for {', '.join(roles)}")
    from ..qr import qr_svg

    return Response(qr_svg(link(target)), mimetype="image/svg+xml")


@bp.post("/api/<key>/arbiter/<action>")
@changes_game
def arbiter_action(key: str, action: str) -> Response:
    role = _arbiter(key)
    if action not in ARBITER_ACTIONS:
        fail(404, f"no arbiter action {action!r}; actions are {', '.join(ARBITER_ACTIONS)}")
    data = guard_post(role)
    table = ctx().table
    session = table.session
    if action == "pause":
        session.pause()
    elif action == "resume":
        session.resume()
    elif action == "undo":
        _undo(table)
    elif action == "out":
        _put_out(table, data)
    else:
        _end(table, data)
    return jsonify({"ok": True, "status": session.status})


def _undo(table: object) -> None:
    if table.state.phase == "setup":  # type: ignore[attr-defined]
        fail(409, "there is no ruling to undo yet")
    try:
        table.session.undo(table.rebuild)  # type: ignore[attr-defined]
    except (ValueError, RuntimeError) as exc:
        fail(409, str(exc))


def _put_out(table: object, data: dict) -> None:
    sides = table.game.sides  # type: ignore[attr-defined]
    side, reason = data.get("side"), data.get("reason") or "out by the club's time rule"
    if side not in sides or not isinstance(reason, str):
        fail(400, f"'side' must be one of {', '.join(sides)} and 'reason' a sentence")
    if len(sides) <= 2:
        fail(409, "in a two-seat game, end the game instead")
    try:
        table.session.put_out(side, reason[:200])  # type: ignore[attr-defined]
    except ValueError as exc:
        fail(409, str(exc))


def _end(table: object, data: dict) -> None:
    winners = data.get("winners", [])
    reason = data.get("reason") or ("draw agreed" if not winners else "ended by the arbiter")
    if not isinstance(winners, list) or not all(isinstance(w, str) for w in winners) or not isinstance(reason, str):
        fail(400, "'winners' must be a list of sides (empty for a draw) and 'reason' a sentence")
    if table.state.phase == "over":  # type: ignore[attr-defined]
        fail(409, "the game is already over")
    try:
        table.session.end(tuple(winners), reason[:200])  # type: ignore[attr-defined]
    except ValueError as exc:
        fail(400, str(exc))
