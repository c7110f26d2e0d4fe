"""What every FaceDown web app shares: security headers, JSON/plain error pages, and stopping a waitress server."""

from __future__ import annotations

import json
import threading
from typing import Any

from flask import Flask, Response, current_app, request
from werkzeug.exceptions import HTTPException

#: No inline script or style, nothing from elsewhere, never framed.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
       "font-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")

ERROR_TEXT = {404: "no such page", 405: "method not allowed here", 413: "request too large"}


def install_security(app: Flask) -> None:
    """Security headers on every response, and errors as JSON under /api/ (plain text elsewhere)."""

    @app.after_request
    def secure(resp: Response) -> Response:
        resp.headers["Content-Security-Policy"] = CSP
        resp.headers["X-Content-Type-Options"] = "nosniff"
        resp.headers["Referrer-Policy"] = "no-referrer"  # tokens live in URLs: never send them on
        resp.headers["X-Frame-Options"] = "DENY"
        resp.headers["Cross-Origin-Opener-Policy"] = "same-origin"
        if not request.path.startswith("/static/"):
            resp.headers["Cache-Control"] = "no-store"
        return resp

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Response:
        if exc.response is not None:
            return exc.response  # type: ignore[return-value]
        msg = ERROR_TEXT.get(exc.code or 0, exc.description)
        if exc.code == 413:
            msg = too_large_text(request.content_length, current_app.config.get("MAX_CONTENT_LENGTH"))
        if request.path.startswith("/api/"):
            return Response(json.dumps({"error": msg}), status=exc.code, mimetype="application/json")
        return Response(f"{exc.code}: {msg}\n", status=exc.code, mimetype="text/plain")


def too_large_text(size: int | None, cap: int | None) -> str:
    """Why a request was refused as too large: its size when it said it, and the most a request may carry."""
    from controller.textfiles import size_text

    got = f" ({size_text(size)})" if size is not None else ""
    most = f"; a request may carry at most {size_text(cap)}" if cap else ""
    return f"request too large{got}{most}: nothing was read"


def stop_waitress(server: Any, thread: threading.Thread | None, *, drain_s: float = 1.0) -> None:
    """Stop a waitress server started in ``thread``: stop its workers, then close its sockets from its own loop
    thread (closing them from another thread can raise 'Bad file descriptor'), and wait for it briefly."""
    from waitress import wasyncore

    server.task_dispatcher.shutdown(timeout=drain_s)
    server_map = server._map
    if thread is not None and thread.is_alive():
        try:
            server.trigger.pull_trigger(lambda: wasyncore.close_all(server_map))
        except OSError:  # the loop is already closing its sockets (its trigger is gone): let it finish
            pass
        thread.join(timeout=3)
    if thread is None or not thread.is_alive():
        wasyncore.close_all(server_map)  # what is left (close_all ignores sockets that are already closed)
