"""The Flask app factory: one table's context, security headers, and the blueprints of each role (``blueprints/``).
Every response is built from the requester's role's view."""

from __future__ import annotations

from typing import Any

from flask import Flask

from controller.board_svg import screen_board

from . import payloads
from .blueprints import ALL as BLUEPRINTS
from .common import install_security
from .http import MAX_BODY, Context
from .hub import Hub
from .roles import Roles


def create_app(table: Any, *, setups: Any = None, keepalive_s: float = 15.0, max_streams: int = 40,
               queue_size: int = 256, streams_per_role: int = 4, per_address_streams: int | None = None) -> Flask:
    """The web referee for ``table``. ``setups`` is a SetupStore (default: the user's data dir)."""
    if setups is None:
        from controller.setups_store import SetupStore

        setups = SetupStore()
    app = Flask(__name__)
    app.config["MAX_CONTENT_LENGTH"] = MAX_BODY
    app.json.ensure_ascii = False  # type: ignore[attr-defined]
    game = table.game
    # the static board layer, drawn by controller/board_svg.py with the viewer's side at the bottom (first side for
    # the spectator and the arbiter); the page adds the pieces on top
    boards = {side: screen_board(game, side) for side in game.sides}
    # the same on its side (the first side on the left), offered to the spectator and arbiter pages for a tall board on
    # a wide screen
    upright = boards[game.sides[0]]
    _, _, w, h = map(float, upright.viewbox.split())
    if h > 1.25 * w:
        boards["landscape"] = screen_board(game, game.sides[0], extra_turns=1)
    app.extensions["facedown"] = Context(
        table=table, hub=Hub(table.session, queue_size=queue_size, max_clients=max_streams, per_role=streams_per_role,
                             per_address=per_address_streams), roles=Roles(table),
        setups=setups, meta=payloads.game_meta(game), boards=boards, keepalive_s=keepalive_s)
    install_security(app)
    for bp in BLUEPRINTS:
        app.register_blueprint(bp)
    return app
