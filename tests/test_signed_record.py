"""Signed records: `facedown table key`, `record export --signed` and `record verify FILE --key KEY` — a good record
verifies; a wrong key, a changed event, a rewritten chain, a changed result and a record that does not replay to
its result are each refused with what is wrong; the key is made at the table's first start without loading PyNaCl."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from controller.referee import chain
from controller.referee.journal import Journal
from controller.referee.signing import (
    _DOMAIN,
    STATEMENT,
    SignedRecordError,
    _canonical,
    make_record,
    pack,
    parse_key,
    public_key,
    seed_path_of,
    signing_seed,
    unpack,
    verify_record,
)

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))
from test_journal_chain import END, event_cells, flip_text, journal_game  # noqa: E402


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "controller.cli", *args], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))


@pytest.fixture
def signed(tmp_path: Path) -> tuple[Path, int, Path, str]:
    path = tmp_path / "journal.sqlite"
    gid = journal_game(path, "stratego_barrage", 10)
    out = tmp_path / "game.json"
    p = cli("record", "export", str(gid), "--signed", "--out", str(out), "--journal", str(path))
    assert p.returncode == 0, p.stderr
    return path, gid, out, public_key(path)


def resign(doc: dict, journal: Path) -> dict:
    """``doc`` signed again with the table's real key (what a table whose referee lied would send)."""
    import nacl.signing

    key = nacl.signing.SigningKey(signing_seed(journal))
    statement = {k: doc.get(k) for k in STATEMENT}
    return {**doc, "signature": base64.b64encode(key.sign(_DOMAIN + _canonical(statement)).signature).decode()}


def test_table_key_export_and_verify(signed: tuple[Path, int, Path, str], tmp_path: Path) -> None:
    path, gid, out, key = signed
    p = cli("table", "key", "--journal", str(path), "--table", "table-7")
    assert p.returncode == 0 and p.stdout.splitlines()[0] == key
    assert f"facedown club enroll table-7 {key}" in p.stdout
    assert oct(seed_path_of(path).stat().st_mode & 0o777) == "0o600"
    p = cli("record", "verify", str(out), "--key", key)
    assert p.returncode == 0, p.stderr
    assert "intact" in p.stdout and "replays through the engine to: red won" in p.stdout and "signed by the table key given" in p.stdout
    keyfile = tmp_path / "table-7.pub"
    keyfile.write_text(key + "\n")
    assert cli("record", "verify", str(out), "--key", str(keyfile)).returncode == 0
    p = cli("record", "verify", str(out))  # no key: checked against the key it names, and told so
    assert p.returncode == 0 and "give --key" in p.stdout
    doc = json.loads(out.read_text())
    assert doc["events"] == len(doc["rows"]) and doc["game_file"]["text"] and doc["result"]["winners"] == ["red"]


def test_wrong_key_changed_event_rewritten_chain_and_changed_result_are_refused(signed: tuple[Path, int, Path, str],
                                                                                tmp_path: Path) -> None:
    path, gid, out, key = signed
    other = public_key(tmp_path / "other.sqlite")
    p = cli("record", "verify", str(out), "--key", other)
    assert p.returncode == 2 and "not by the key given" in p.stderr
    doc = json.loads(out.read_text())
    move = next(i for i, r in enumerate(doc["rows"]) if r[1] == "move")
    # one move changed, its digest left: named
    bad = json.loads(json.dumps(doc))
    bad["rows"][move + 2][3] = bad["rows"][move + 2][3].replace('"from"', '"fsom"')
    (tmp_path / "bad.json").write_text(json.dumps(bad))
    p = cli("record", "verify", str(tmp_path / "bad.json"), "--key", key)
    assert p.returncode == 2 and f"event {bad['rows'][move + 2][0]} is damaged" in p.stderr, p.stderr
    # the chain rewritten to fit the change (every digest and the head made again): the signature gives it away
    prev = chain.root(doc["journal_game"], doc["game"], doc["started"], doc["game_file_sha256"])
    for r in bad["rows"]:
        prev = r[4] = chain.link(prev, r[1], r[2], r[3])
    bad["head"] = prev
    with pytest.raises(SignedRecordError, match="signature does not match"):
        verify_record(bad, parse_key(key))
    # the stated result changed
    with pytest.raises(SignedRecordError, match="signature does not match"):
        verify_record({**doc, "result": {**doc["result"], "winners": ["blue"]}}, parse_key(key))
    # a table that signs a result its moves do not reach is caught by the replay
    with pytest.raises(SignedRecordError, match="replay to red winning, but the record states blue winning"):
        verify_record(resign({**doc, "result": {**doc["result"], "winners": ["blue"]}}, path), parse_key(key))
    with pytest.raises(SignedRecordError, match="replay in 10 plies, but the record states 11"):
        verify_record(resign({**doc, "plies": 11}, path), parse_key(key))
    # not a record at all
    (tmp_path / "junk.json").write_text("[1, 2]")
    p = cli("record", "verify", str(tmp_path / "junk.json"), "--key", key)
    assert p.returncode == 2 and "not a FaceDown signed record" in p.stderr and "Traceback" not in p.stderr
    p = cli("record", "verify", str(out), "--key", "ed25519:nonsense")
    assert p.returncode == 2 and "not a table's public key" in p.stderr


def test_packed_for_the_club_and_a_repaired_game_still_verify(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    gid = journal_game(path, "stratego_barrage", 8, end=False)
    with Journal(path) as j:
        seq = [e.seq for e in j.events(gid) if e.kind == "move"][5]
    assert any(rowid == seq for rowid, _, _ in event_cells(path))
    flip_text(path, b'"to"', b'"tp"', seq)
    with Journal(path) as j:
        j.repair(gid)
        j.append(gid, "arbiter", END)
        record = make_record(j, gid)
    ok = verify_record(unpack(pack(record)), parse_key(public_key(path)))
    assert ok.plies == 5 and ok.result["winners"] == ["red"]
    with pytest.raises(SignedRecordError, match="larger than 1000 bytes"):
        unpack(pack(record), limit=1000)
    with pytest.raises(SignedRecordError, match="does not unpack"):
        unpack("not base64!")


def test_the_key_is_made_at_first_start_without_loading_pynacl(tmp_path: Path) -> None:
    code = ("import sys; from controller.referee.table import open_table; from controller.sensing.sim import SimBoard;"
            "from controller.rules import load_game;"
            f"t = open_table('stratego', board=SimBoard(load_game('stratego').station_ids), board_kind='sim', journal_path={str(tmp_path / 'j.sqlite')!r});"
            "t.stop(); print('nacl' in sys.modules)")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert p.returncode == 0 and p.stdout.strip() == "False", p.stderr
    assert len(seed_path_of(tmp_path / "j.sqlite").read_bytes()) == 32
