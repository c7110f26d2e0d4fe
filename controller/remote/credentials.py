"""A remote game's credentials: each seat's secret (derived from the host journal's key, so a restarted host
issues the same ones), and the Mosquitto password file and ACL that let each seat read only its own messages."""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
from collections.abc import Sequence

from .protocol import ROOT, JoinCode, broker_user

HOST = "host"
#: PBKDF2 rounds of Mosquitto 2's ``$7$`` password hashes (its own default)
PBKDF2_ROUNDS = 101


def derive_secrets(key: bytes, game_id: str, game_number: int, roles: Sequence[str]) -> dict[str, str]:
    """One unguessable secret per role (each seat and ``host``), the same after a restart of the host."""
    return {r: hmac.new(key, f"remote:{game_id}:{game_number}:{r}".encode(), hashlib.sha256).hexdigest()[:32]
            for r in roles}


def join_codes(game_id: str, secrets_: dict[str, str], seats: Sequence[str]) -> dict[str, JoinCode]:
    return {s: JoinCode(game_id, s, secrets_[s]) for s in seats}


def password_line(user: str, password: str, salt: bytes | None = None) -> str:
    """One line of a Mosquitto 2 password file (``$7$``: PBKDF2-SHA512 with a 12-byte salt), as mosquitto_passwd
    writes it."""
    salt = os.urandom(12) if salt is None else salt
    digest = hashlib.pbkdf2_hmac("sha512", password.encode(), salt, PBKDF2_ROUNDS)
    return f"{user}:$7${PBKDF2_ROUNDS}${base64.b64encode(salt).decode()}${base64.b64encode(digest).decode()}"


def password_file(game_id: str, secrets_: dict[str, str]) -> str:
    """The broker logins of one game: the host and each seat, each with its secret as password."""
    return "".join(password_line(broker_user(game_id, role), pw) + "\n" for role, pw in sorted(secrets_.items()))


def acl_file(game_id: str, seats: Sequence[str]) -> str:
    """The Mosquitto ACL of one game: the host reads and writes the game's topics; each seat writes its own inbox
    (and its presence) and its salts after the game, and reads only its own outbox and sync, the game's public topics and the host's
    presence."""
    base = f"{ROOT}/{game_id}"
    out = [f"# FaceDown remote game {game_id}", f"user {broker_user(game_id, HOST)}", f"topic readwrite {base}/#", ""]
    for s in seats:
        out += [f"user {broker_user(game_id, s)}", f"topic write {base}/in/{s}", f"topic read {base}/out/{s}",
                f"topic read {base}/sync/{s}", f"topic read {base}/public/#",
                f"topic write {base}/public/salts-{s}", f"topic read {base}/presence",
                f"topic write {base}/seen/{s}", ""]
    return "\n".join(out)


__all__ = ["HOST", "acl_file", "derive_secrets", "join_codes", "password_file", "password_line"]
