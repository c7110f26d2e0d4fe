"""The wire of a remote game: its topic names, the join code that carries a seat's secret, and the signed JSON
messages the host and the seats exchange (each authenticated with the seat's secret, so a forger without it is
ignored even on a broker that lets anyone publish)."""

from __future__ import annotations

import hmac
import json
import re
from dataclasses import dataclass
from typing import Any

from controller.errors import FaceDownError

ROOT = "facedown/remote"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")
#: the most a message may hold (a view of the biggest game is ~20 kB); anything bigger is refused unread
MAX_MESSAGE = 256 * 1024
JOIN_PREFIX = "fdj1"


class RemoteError(FaceDownError, ValueError):
    """A remote game's setting or message that cannot work (a bad join code, game id, forged message...)."""


def check_name(what: str, name: str) -> str:
    """A game id or seat as it appears in topics: 1-32 letters, digits, ``-`` and ``_`` (no MQTT wildcards)."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise RemoteError(f"{what} {str(name)[:40]!r}: use 1-32 letters, digits, '-' or '_' (e.g. sunday-1)")
    return name


# ---------------------------------------------------------------------- topics
def inbox_topic(game_id: str, seat: str) -> str:
    """QoS 1: what a seat's board sends the host (its deployment, its moves, hello after a (re)connect)."""
    return f"{ROOT}/{game_id}/in/{seat}"


def outbox_topic(game_id: str, seat: str) -> str:
    """QoS 1: the host's numbered messages for one seat only (its redacted view, rulings, fix-ups)."""
    return f"{ROOT}/{game_id}/out/{seat}"


def sync_topic(game_id: str, seat: str) -> str:
    """Retained: the seat's latest message number and its redacted view, for a board that (re)starts."""
    return f"{ROOT}/{game_id}/sync/{seat}"


def public_topic(game_id: str, part: str) -> str:
    """Retained, readable by every seat: ``commitments`` (each side's salted deployment digests), ``record`` (the
    post-game record), ``salts-SEAT`` (a side's salts, revealed after the game)."""
    return f"{ROOT}/{game_id}/public/{part}"


def presence_topic(game_id: str) -> str:
    """Retained: the host is online, or offline (its last will)."""
    return f"{ROOT}/{game_id}/presence"


def seen_topic(game_id: str, seat: str) -> str:
    """Retained, QoS 1, sealed with the seat's secret: its board is ``here`` (said on each connect) or ``away`` (its
    last will, said by the broker when the board's link is lost), each naming the connection it is about."""
    return f"{ROOT}/{game_id}/seen/{seat}"


def seat_of_inbox(game_id: str, topic: str, part: str = "in") -> str | None:
    """The seat whose ``part`` topic (``in``: its inbox, ``seen``: its presence) ``topic`` is, if it is one."""
    prefix = f"{ROOT}/{game_id}/{part}/"
    if not topic.startswith(prefix):
        return None
    seat = topic[len(prefix):]
    return seat if _NAME.match(seat) else None


# ---------------------------------------------------------------------- join codes
@dataclass(frozen=True)
class JoinCode:
    """What a seat needs to join: the game id, the seat and its secret (also its broker password)."""

    game_id: str
    seat: str
    secret: str

    def __str__(self) -> str:
        return f"{JOIN_PREFIX}.{self.game_id}.{self.seat}.{self.secret}"

    @property
    def username(self) -> str:
        return broker_user(self.game_id, self.seat)


def parse_join(code: str, *, seat: str | None = None) -> JoinCode:
    """A join code ``fdj1.GAME.SEAT.SECRET`` as `facedown host` printed it; ``seat`` must agree if given."""
    parts = (code or "").strip().split(".")
    if len(parts) != 4 or parts[0] != JOIN_PREFIX:
        raise RemoteError(f"join code {str(code)[:20]!r}...: expected {JOIN_PREFIX}.GAME.SEAT.SECRET as `facedown host` printed it")
    _, game_id, who, secret = parts
    check_name("game id", game_id)
    check_name("seat", who)
    if not re.fullmatch(r"[0-9a-f]{32}", secret):
        raise RemoteError("join code: its secret part is damaged (expected 32 hex digits); copy the whole code again")
    if seat is not None and seat != who:
        raise RemoteError(f"the join code is {who}'s, not {seat}'s: use --seat {who} or the other seat's code")
    return JoinCode(game_id, who, secret)


def broker_user(game_id: str, role: str) -> str:
    """The broker login of a seat (or of the host, role ``host``) of one remote game."""
    return f"fd-{game_id}-{role}"


# ---------------------------------------------------------------------- signed messages
#: one encoder for every message (made once: a view is encoded twice a move for each game)
_ENCODE = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False).encode


def _mac(secret: str, body: bytes) -> str:
    return hmac.digest(secret.encode(), body, "sha256").hex()[:32]


def seal(secret: str, message: dict[str, Any]) -> bytes:
    """``message`` as bytes on the wire: its MAC under ``secret`` (32 hex digits), a newline, then the JSON itself
    (the MAC is over those exact bytes, so nothing needs re-encoding to check it)."""
    body = _ENCODE(message).encode()
    return _mac(secret, body).encode() + b"\n" + body


def unseal(secret: str, payload: bytes) -> dict[str, Any]:
    """The message in ``payload`` if its MAC is right under ``secret``; RemoteError otherwise."""
    if len(payload) > MAX_MESSAGE:
        raise RemoteError(f"a message of {len(payload)} bytes is over the {MAX_MESSAGE}-byte limit")
    mac, sep, body = bytes(payload).partition(b"\n")
    if not sep or len(mac) != 32 or not mac.isascii():
        raise RemoteError("not a FaceDown remote message")
    if not hmac.compare_digest(_mac(secret, body).encode(), mac):
        raise RemoteError("a message whose signature is wrong (not from this game's host or seat): ignored")
    try:
        message = json.loads(body)
    except ValueError:
        raise RemoteError("a signed message that is not JSON") from None
    if not isinstance(message, dict) or not isinstance(message.get("type"), str):
        raise RemoteError("a message with no type")
    return message


__all__ = ["JoinCode", "RemoteError", "broker_user", "check_name", "inbox_topic", "outbox_topic", "parse_join",
           "presence_topic", "public_topic", "seal", "seat_of_inbox", "seen_topic", "sync_topic", "unseal"]
