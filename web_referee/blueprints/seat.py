"""What only a seat does: check, draw at random, submit and save its deployment, and answer reaction offers."""

from __future__ import annotations

import random

from flask import Blueprint, Response, jsonify

from controller.referee.session import ReactionRefused
from controller.rules.deploy import random_deployment
from controller.rules.setup import check_deployment
from controller.setups_store import SetupStoreError

from ..http import changes_game, ctx, fail, guard_post, need_seat, placement_of, role_of

bp = Blueprint("seat", __name__)


def _seat(key: str) -> str:
    role = role_of(key)
    need_seat(role)
    return role


@bp.post("/api/<key>/setup/check")
def setup_check(key: str) -> Response:
    role = _seat(key)
    table = ctx().table
    placement = placement_of(guard_post(role))
    problems = check_deployment(table.game, role, placement, table.state.options)
    return jsonify({"problems": [p.to_json() for p in problems]})


@bp.post("/api/<key>/setup/random")
def setup_random(key: str) -> Response:
    """A valid random deployment for this seat to start from (nothing is registered)."""
    role = _seat(key)
    guard_post(role)
    table = ctx().table
    placement = random_deployment(table.game, role, random.SystemRandom(), table.state.options)
    return jsonify({"placement": placement})


@bp.post("/api/<key>/setup")
@changes_game
def setup_submit(key: str) -> Response:
    role = _seat(key)
    table = ctx().table
    placement = placement_of(guard_post(role))
    if table.state.phase != "setup":
        fail(409, "the game has already started")
    if role in table.state.deployments:
        fail(409, f"{role} has already deployed")
    problems = table.session.register_setup(role, placement)
    if problems:
        fail(422, f"deployment refused: {len(problems)} problem(s)", problems=[p.to_json() for p in problems])
    return jsonify({"ok": True, "status": table.session.status})


@bp.post("/api/<key>/remote/<action>")
def remote_ask(key: str, action: str) -> Response:
    """A remote seat asks its host, the game's arbiter, to pause or resume the game, or resigns."""
    from controller.remote.protocol import RemoteError

    role = _seat(key)
    guard_post(role)
    table = ctx().table
    if table.remote is None:
        fail(404, "this table's referee is here, not a remote host: its arbiter pauses the game")
    try:
        table.remote.ask(action)
    except RemoteError as exc:
        fail(409, str(exc))
    return jsonify({"ok": True, "asked": action})


@bp.get("/api/<key>/setups")
def setups_list(key: str) -> Response:
    role = _seat(key)
    c = ctx()
    return jsonify({"setups": [s.to_json() for s in c.setups.list(c.game, role)]})


@bp.post("/api/<key>/setups")
def setups_save(key: str) -> Response:
    role = _seat(key)
    c = ctx()
    data = guard_post(role)
    placement = placement_of(data)
    name = data.get("name")
    if not isinstance(name, str):
        fail(400, "'name' must be a string")
    try:
        saved = c.setups.save(c.game, role, name, placement, c.table.state.options)
    except SetupStoreError as exc:
        fail(422, str(exc), problems=[p.to_json() for p in exc.problems])
    return jsonify({"ok": True, "setup": saved.to_json()})


@bp.post("/api/<key>/reaction")
@changes_game
def reaction_answer(key: str) -> Response:
    """Answer an optional reaction offer (reactions: ask)."""
    role = _seat(key)
    data = guard_post(role)
    offer, react, target = data.get("offer"), data.get("react"), data.get("target")
    if not isinstance(offer, int) or isinstance(offer, bool) or not isinstance(react, bool):
        fail(400, "send {\"offer\": the offer's number, \"react\": true or false}")
    if target is not None and not isinstance(target, str):
        fail(400, "'target' must be the station the offer named")
    try:
        done = ctx().table.session.answer_reaction(role, offer, react, target=target)
    except ReactionRefused as exc:
        fail(exc.status, str(exc))
    return jsonify({"ok": True, **done})


@bp.post("/api/<key>/reaction/auto")
@changes_game
def reaction_auto(key: str) -> Response:
    role = _seat(key)
    on = guard_post(role).get("on")
    if not isinstance(on, bool):
        fail(400, "send {\"on\": true or false}")
    try:
        ctx().table.session.set_react_automatically(role, on)
    except ReactionRefused as exc:
        fail(exc.status, str(exc))
    return jsonify({"ok": True, "automatic": on})
