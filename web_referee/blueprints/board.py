"""The simulated board (``--board sim``): a seat or the arbiter lifts and places pieces by tapping stations, and a
seat lays out its whole deployment at once."""

from __future__ import annotations

from flask import Blueprint, Response, jsonify

from controller.rules import SPECTATOR

from ..http import changes_game, ctx, fail, guard_post, need_seat, role_of

bp = Blueprint("board", __name__)


def _sim_board() -> object:
    table = ctx().table
    if table.board_kind != "sim" or not hasattr(table.board, "toggle"):
        fail(409, "this table has a real board: move the pieces by hand")
    return table.board


@bp.post("/api/<key>/sim/toggle")
@changes_game
def sim_toggle(key: str) -> Response:
    role = role_of(key)
    if role == SPECTATOR:
        fail(403, "spectators watch: only a seat or the arbiter may move pieces on the simulated board")
    data = guard_post(role)
    board = _sim_board()
    station = data.get("station")
    if not isinstance(station, str) or station not in ctx().game.station_by_id:
        fail(400, f"unknown station {str(station)[:20]!r}")
    # ``read_by``: the board time of the first reading that has read this tap (readings carry theirs as ``read_at``),
    # so the page takes no older reading for the tap's confirmation
    occupied, read_by = board.tap(station)  # type: ignore[attr-defined]
    return jsonify({"ok": True, "occupied": occupied, "read_by": read_by})


@bp.post("/api/<key>/sim/layout")
@changes_game
def sim_layout(key: str) -> Response:
    """Put a piece on each of ``stations`` of this seat's area and lift every other piece of that area, in one
    reading (what a player does by hand before play starts, at once)."""
    role = role_of(key)
    need_seat(role)
    data = guard_post(role)
    board = _sim_board()
    table = ctx().table
    game = table.game
    zone = set(game.setup.zones[game.setup.deploy_zone][role])
    stations = data.get("stations")
    if not isinstance(stations, list) or not all(isinstance(s, str) for s in stations):
        fail(400, "'stations' must be a list of station ids")
    outside = sorted(set(stations) - zone)
    if outside:
        fail(400, f"outside {role}'s deployment area: {', '.join(outside[:5])}")
    want = set(stations)
    occupied = board.raw_occupied()  # type: ignore[attr-defined]
    todo = sorted(s for s in zone if (s in want) != (s in occupied))
    if todo and table.state.phase != "setup" and not table.session.status["waiting_for_board"]:
        fail(409, "the pieces are laid out before play starts; during play move them one at a time")
    t = board.now_ms()  # type: ignore[attr-defined]
    for s in todo:
        board.set_raw(s, (s in want, None), t)  # type: ignore[attr-defined]
    return jsonify({"ok": True, "changed": len(todo)})
