"""The table's secret signing key beside its journal: made once with the table's first start, read back after (no
crypto library: an Ed25519 key is 32 random bytes; controller.referee.signing derives its public half)."""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from .journal import JournalError


class SignedRecordError(JournalError):
    """A signed record (or the key that signs it) that cannot be made, read or trusted; says what and where."""


def seed_path_of(journal_path: str | os.PathLike[str]) -> Path:
    p = Path(journal_path)
    return p.with_name(p.name + ".sign")


def signing_seed(journal_path: str | os.PathLike[str]) -> bytes:
    """The table's secret signing seed (32 bytes), made once beside the journal (mode 600) if it is not there yet."""
    path = seed_path_of(journal_path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        data = b""
    except OSError as exc:
        raise SignedRecordError(f"{path}: cannot read the table's signing key: {exc.strerror}") from None
    if len(data) == 32:
        from .journal import secure_file

        secure_file(path)
        return data
    if data:
        raise SignedRecordError(f"{path}: the table's signing key is damaged ({len(data)} bytes, not 32); move it away "
                                "to make a new key, then enroll the new public key with the club")
    seed = secrets.token_bytes(32)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it just now: use theirs
        return signing_seed(journal_path)
    except OSError as exc:
        raise SignedRecordError(f"{path}: cannot make the table's signing key: {exc.strerror}") from None
    with os.fdopen(fd, "wb") as f:
        f.write(seed)
        f.flush()
        os.fsync(f.fileno())
    return seed
