"""Who is asking: turns a URL key (a seat or arbiter token, or "public") into a role, and derives per-role CSRF tokens."""

from __future__ import annotations

import hashlib
import hmac
import secrets

from controller.rules import ARBITER, SPECTATOR

PUBLIC_KEY = "public"


class Roles:
    """The roles of one table: each seat token, the arbiter token and the public spectator key."""

    def __init__(self, table: object) -> None:
        self.table = table
        self._secret = secrets.token_bytes(32)  # new per process: a CSRF token is only good for the page that got it

    def role(self, key: str | None) -> str | None:
        """The role behind ``key`` (a side, ``arbiter`` or ``spectator``), or None for a forged or missing one."""
        if key == PUBLIC_KEY:
            return SPECTATOR
        role = self.table.role_for_token(key)  # type: ignore[attr-defined]
        if role == "arbiter":
            return ARBITER
        return role

    def csrf(self, role: str) -> str:
        """The CSRF token a page of ``role`` must send back with each POST."""
        return hmac.new(self._secret, f"csrf:{role}".encode(), hashlib.sha256).hexdigest()[:32]

    def csrf_ok(self, role: str, sent: str | None) -> bool:
        # a header is Latin-1 text: anything not ASCII is no token (and compare_digest refuses non-ASCII text)
        return bool(sent) and (sent or "").isascii() and hmac.compare_digest(self.csrf(role), sent or "")
