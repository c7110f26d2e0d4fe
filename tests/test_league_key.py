"""A league's key file is read bounded: a made key reads back, and a FIFO, a huge file or a wrong one is refused by name."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from controller.remote.league import read_key
from controller.remote.protocol import RemoteError


def test_a_new_key_reads_back_and_is_private(tmp_path: Path) -> None:
    key = read_key(tmp_path / "league.key", create=True)
    assert len(key) == 32 and read_key(tmp_path / "league.key") == key
    assert (tmp_path / "league.key").stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("kind", ["fifo", "huge", "short", "missing"])
def test_a_file_that_is_no_key_is_refused_with_its_name(tmp_path: Path, kind: str) -> None:
    p = tmp_path / "league.key"
    if kind == "fifo":
        os.mkfifo(p)  # reading it would block for ever
    elif kind == "huge":
        p.write_bytes(b"0" * (8 << 20))
    elif kind == "short":
        p.write_text("abcd\n")
    with pytest.raises(RemoteError) as err:
        read_key(p)
    assert str(p) in str(err.value)
