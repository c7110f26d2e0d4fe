"""The journal's digest chain: a damaged, changed or lost event is named and never replayed; every byte of a game's
events flipped in the file is either caught or provably harmless; older journals upgrade; a damaged game resumes
only by the arbiter's choice, from its last intact event."""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from controller.referee.gamefile import file_of, journaled
from controller.referee.journal import ChainError, Journal, JournalError
from controller.referee.replay import rebuild
from controller.referee.table import open_table
from controller.rules import new_game
from controller.rules.deploy import random_deployment
from controller.sensing.sim import SimBoard

ROOT = Path(__file__).resolve().parent.parent
KINDS = {"game", "deploy", "move", "illegal", "arbiter", "result", "reaction"}
END = {"action": "end", "result": {"winners": ["red"], "reason": {"code": "verdict.resigned", "params": {"side": "blue"}}}}


def journal_game(path: Path, game: str, moves: int, seed: int = 3, *, end: bool = True) -> int:
    """A seeded random game journaled into ``path`` (with its game file), ended by the arbiter if still running."""
    rng = random.Random(seed)
    st = new_game(game)
    with Journal(path) as j:
        gid = j.new_game(game, dict(st.options), board="sim", seats={"red": "Ann", "blue": "Bo"}, game_file=file_of(st.game))
        for side in st.game.sides:
            placement = random_deployment(st.game, side, rng)
            st.deploy(side, placement)
            j.append(gid, "deploy", {"side": side, "placement": placement})
        for _ in range(moves):
            if st.phase != "play":
                break
            side = st.turn
            move = rng.choice(st.legal_moves())
            ruling = st.apply(move)
            j.append(gid, "move", {"side": side, "from": move.frm, "to": move.to})
            if ruling.result is not None:
                j.append(gid, "result", ruling.result.to_json())
        if end and st.phase == "play":
            j.append(gid, "arbiter", END)
    return gid


def snap(path: Path, gid: int) -> tuple[Any, ...]:
    """What a game is: its events (kind, data, time) and the replayed board, turn, phase and result."""
    with Journal(path, create=False) as j:
        events = j.events(gid)
        st = rebuild(events, journaled(j, gid))
    board = tuple(sorted((s, p.owner, p.type) for s, p in st.board.items()))
    return tuple((e.kind, repr(sorted(e.data.items())), e.time) for e in events), board, st.turn, st.phase, st.result


def flip_text(path: Path, old: bytes, new: bytes, seq: int) -> None:
    """Replace ``old`` in event ``seq``'s cell of the journal file with ``new`` (same length), as a bad sector would."""
    data = bytearray(path.read_bytes())
    [(start, end)] = [(a, b) for rowid, a, b in event_cells(path) if rowid == seq]
    at = data.index(old, start, end)
    data[at:at + len(old)] = new
    path.write_bytes(bytes(data))


def _varint(buf: bytes, at: int) -> tuple[int, int]:
    value = 0
    for i in range(9):
        b = buf[at + i]
        if i == 8:
            return (value << 8) | b, at + 9
        value = (value << 7) | (b & 0x7F)
        if b < 0x80:
            return value, at + i + 1
    raise AssertionError("unreachable")


def _cells(path: Path) -> list[tuple[int, int, int, list[int], int, bytes]]:
    """Every table-leaf cell of the SQLite file: (rowid, first byte, end, column serial types, body start, file)."""
    buf = path.read_bytes()
    page = int.from_bytes(buf[16:18], "big") or 65536
    out = []
    for n in range(len(buf) // page):
        base = n * page
        hdr = base + (100 if n == 0 else 0)
        if buf[hdr] != 0x0D:
            continue
        for c in range(int.from_bytes(buf[hdr + 3:hdr + 5], "big")):
            cell = base + int.from_bytes(buf[hdr + 8 + 2 * c:hdr + 10 + 2 * c], "big")
            size, at = _varint(buf, cell)
            rowid, body = _varint(buf, at)
            head_len, at = _varint(buf, body)
            types = []
            while at < body + head_len:
                t, at = _varint(buf, at)
                types.append(t)
            if body + size <= base + page:  # rows that spill onto overflow pages (a game file's text) are left out
                out.append((rowid, cell, body + size, types, body + head_len, buf))
    return out


def event_cells(path: Path) -> list[tuple[int, int, int]]:
    """(rowid, first byte, end) of every events row's cell in the SQLite file: its length and rowid varints, its
    record header and its columns (read from the b-tree leaf pages)."""
    out = []
    for rowid, start, end, types, values, buf in _cells(path):
        if len(types) != 6 or types[0] != 0 or types[4] != 7:  # events: seq (the rowid), game, kind, data, time, digest
            continue
        kind_at = values + {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 6, 6: 8, 8: 0, 9: 0}[types[1]]
        kind_len = (types[2] - 13) // 2
        if buf[kind_at:kind_at + kind_len].decode("ascii", "replace") in KINDS:
            out.append((rowid, start, end))
    return sorted(out)


def game_and_head_cells(path: Path) -> list[tuple[int, int, int]]:
    """The cells of the ``games`` rows (id, game, started) and ``chain_heads`` rows (game, events, digest)."""
    return sorted((rowid, start, end) for rowid, start, end, types, _, _ in _cells(path)
                  if len(types) == 3 and types[0] == 0 and (types[2] == 7 or types[2] == 13 + 2 * 64))


# ---------------------------------------------------------------------- named damage
def test_the_issues_flipped_bit_is_named_by_show_and_export_never_a_traceback(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    gid = journal_game(path, "stratego_barrage", 12)
    with Journal(path) as j:
        seqs = [e.seq for e in j.events(gid) if e.kind == "move"]
    flip_text(path, b'"from"', b'"fsom"', seqs[3])  # the fourth move
    with Journal(path, create=False) as j, pytest.raises(ChainError) as caught:
        j.events(gid)
    assert caught.value.seq == seqs[3] and f"game {gid}, event {seqs[3]} is damaged" in str(caught.value)
    assert [e.seq for e in caught.value.intact][-1] == seqs[3] - 1 and caught.value.repairable
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    for cmd in (["record", "show", str(gid)], ["record", "export", str(gid)], ["record", "export", str(gid), "--signed"],
                ["record", "verify"], ["record", "verify", str(gid)]):
        p = subprocess.run([sys.executable, "-m", "controller.cli", *cmd, "--journal", str(path)], capture_output=True,
                           text=True, env=env, timeout=60)
        assert p.returncode == 2, (cmd, p.stdout, p.stderr)
        said = p.stdout + p.stderr
        assert f"event {seqs[3]} is damaged" in said and "Traceback" not in said, (cmd, said)
        assert "MessageError" not in said


def test_changed_removed_and_lost_events_are_named(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    gid = journal_game(path, "stratego_barrage", 10)
    base = tmp_path / "base.sqlite"
    shutil.copy(path, base)
    with Journal(path) as j:
        events = j.events(gid)
    moves = [e for e in events if e.kind == "move"]

    def tamper(sql: str, *params: Any) -> Path:
        bad = tmp_path / f"t{abs(hash(sql))}.sqlite"
        shutil.copy(base, bad)
        db = sqlite3.connect(bad)
        db.execute("DROP TRIGGER events_no_update")
        db.execute("DROP TRIGGER events_no_delete")
        db.execute(sql, params)
        db.commit()
        db.close()
        return bad

    # a move changed to another legal-looking one (f5-f6 becomes f5-f4 in the issue): named
    bad = tamper("UPDATE events SET data = replace(data, ?, ?) WHERE seq = ?", f'"to": "{moves[2].data["to"]}"',
                 '"to": "a1"', moves[2].seq)
    with Journal(bad) as j, pytest.raises(ChainError, match=f"event {moves[2].seq} is damaged"):
        j.events(gid)
    # a move removed from the middle: the event after it is named
    bad = tamper("DELETE FROM events WHERE seq = ?", moves[4].seq)
    with Journal(bad) as j, pytest.raises(ChainError, match=f"event {moves[5].seq} is damaged"):
        j.events(gid)
    # the last event removed: the head says it is missing, after the last one left
    bad = tamper("DELETE FROM events WHERE seq = ?", events[-1].seq)
    with Journal(bad) as j, pytest.raises(ChainError, match=f"1 event\\(s\\) after event {events[-2].seq} are missing"):
        j.events(gid)
    # a time changed
    bad = tamper("UPDATE events SET time = time + 1 WHERE seq = ?", moves[0].seq)
    with Journal(bad) as j, pytest.raises(ChainError, match=f"event {moves[0].seq} is damaged"):
        j.events(gid)
    # the game file kept with the game swapped for another: its start is named, and it cannot go on
    bad = tmp_path / "swapped.sqlite"
    shutil.copy(base, bad)
    db = sqlite3.connect(bad)
    db.execute("DROP TRIGGER game_files_no_update")
    text = db.execute("SELECT text FROM game_files").fetchone()[0] + "\n# changed\n"
    import hashlib

    db.execute("UPDATE game_files SET text = ?, sha256 = ?", (text, hashlib.sha256(text.encode()).hexdigest()))
    db.commit()
    db.close()
    with Journal(bad) as j, pytest.raises(ChainError, match=f"event {events[0].seq} is damaged.*game's start") as caught:
        j.events(gid)
    assert not caught.value.repairable


# ---------------------------------------------------------------------- every byte flipped
FULL = bool(os.environ.get("FACEDOWN_FLIP_FULL"))  # the long run: two games, longer, every bit of every byte
FLIP_GAME = os.environ.get("FACEDOWN_FLIP_GAME", "stratego_barrage")
FLIP_MOVES = int(os.environ.get("FACEDOWN_FLIP_MOVES", "12" if FULL else "2"))


def test_every_byte_of_the_events_flipped_is_caught_with_the_event_named_or_harmless(tmp_path: Path) -> None:
    """Each byte of each event's cell in the file (length, rowid, record header, every column) flipped one at a time:
    the chain names the game and event, SQLite refuses the file with its name, or the game is exactly the same.
    By default one short game and one bit a byte (the bit turns byte by byte); FACEDOWN_FLIP_FULL=1 adds a second
    game (so an event can be flipped into another game), longer games and all 8 bits of every byte
    (FACEDOWN_FLIP_GAME / FACEDOWN_FLIP_MOVES choose the game and its length)."""
    path = tmp_path / "journal.sqlite"
    games = [journal_game(path, FLIP_GAME, 2, seed=8)] if FULL else []
    gid = journal_game(path, FLIP_GAME, FLIP_MOVES, seed=9)
    games.append(gid)
    truth = {g: snap(path, g) for g in games}
    cells = event_cells(path)
    assert len(cells) == sum(len(t[0]) for t in truth.values())
    others = game_and_head_cells(path)  # the games' rows and chain heads too: the chain covers them
    assert len(others) == 2 * len(games)
    original = path.read_bytes()
    work = tmp_path / "flipped.sqlite"
    n = 0
    for what, where in (("events", cells), ("games and heads", others)):
        counts = {"named": 0, "refused": 0, "harmless": 0}
        flips = 0
        for _, start, end in where:
            for at in range(start, end):
                for bit in range(8) if FULL else (n % 8,):
                    n += 1
                    flips += 1
                    data = bytearray(original)
                    data[at] ^= 1 << bit
                    work.write_bytes(bytes(data))
                    counts[_judge(work, truth, at, bit)] += 1
        print(f"{flips} flips over the {len(where)} cells of {what}: {counts}")
        assert counts["named"] > flips // 2


def _judge(path: Path, truth: dict[int, tuple[Any, ...]], at: int, bit: int) -> str:
    where = f"byte {at} bit {bit}"
    try:
        j = Journal(path, create=False)
    except JournalError as exc:
        assert str(path) in str(exc), where
        return "refused"
    try:
        named = False
        for gid, want in truth.items():
            try:
                found = j.check(gid)
            except JournalError as exc:  # SQLite found the page damaged while reading
                assert str(path) in str(exc), where
                return "refused"
            if found.damage is not None:
                msg = str(found.damage)
                assert msg.startswith(f"{path}: game {gid}"), (where, msg)
                assert found.damage.seq is not None or "missing" in msg or "head" in msg, (where, msg)
                named = True
                continue
            events = found.events
            st = rebuild(events, journaled(j, gid))
            board = tuple(sorted((s, p.owner, p.type) for s, p in st.board.items()))
            got = (tuple((e.kind, repr(sorted(e.data.items())), e.time) for e in events), board, st.turn, st.phase, st.result)
            assert got == want, f"{where}: game {gid} replays as a different game with no complaint"
        if j.orphans():
            named = True
        return "named" if named else "harmless"
    finally:
        j.close()


# ---------------------------------------------------------------------- resume
def test_resume_on_a_damaged_journal_stops_and_goes_on_from_the_last_intact_event_only_when_asked(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    gid = journal_game(path, "stratego_barrage", 10, end=False)
    with Journal(path) as j:
        events = j.events(gid)
    moves = [e for e in events if e.kind == "move"]
    flip_text(path, b'"from"', b'"fsom"', moves[6].seq)
    game = new_game("stratego_barrage").game

    def board() -> SimBoard:
        return SimBoard(game.station_ids, settle_ms=20, clock=lambda: 0.0)

    with pytest.raises(ChainError, match=f"game {gid}, event {moves[6].seq} is damaged"):
        open_table("stratego_barrage", board=board(), board_kind="sim", journal_path=path)
    # the play command says so and names the ways on, with no traceback
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    p = subprocess.run([sys.executable, "-m", "controller.cli", "play", "stratego_barrage", "--journal", str(path)],
                       capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL)
    assert p.returncode == 4 and "Traceback" not in p.stderr, p.stderr  # 4: the service waits for the arbiter
    assert f"event {moves[6].seq} is damaged" in p.stderr and "--resume-from-intact" in p.stderr
    assert f"facedown record repair {gid}" in p.stderr and "--new" in p.stderr
    # the arbiter goes on: the game stands where it stood before the damaged move, and the repair is journaled
    table = open_table("stratego_barrage", board=board(), board_kind="sim", journal_path=path, repair=True)
    try:
        assert table.game_id == gid and table.state.ply == 6
        kept = table.journal.events(gid)
        assert kept[-1].kind == "arbiter" and kept[-1].data["action"] == "repair"
        assert kept[-1].data["after"] == moves[5].seq and moves[6].seq in kept[-1].data["set_aside"]
        assert [e.seq for e in kept[:-1]] == [e.seq for e in events if e.seq < moves[6].seq]
    finally:
        table.stop()
    # from now on the game resumes without asking, and the journal says what was set aside
    table = open_table("stratego_barrage", board=board(), board_kind="sim", journal_path=path)
    try:
        assert table.game_id == gid and table.state.ply == 6
        check = table.journal.check(gid)
        assert check.damage is None and check.chained and len(check.set_aside) == len(events) - len(kept) + 1
    finally:
        table.stop()
    p = subprocess.run([sys.executable, "-m", "controller.cli", "record", "verify", str(gid), "--journal", str(path)],
                       capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0 and "set aside by the arbiter" in p.stdout, p.stdout + p.stderr


def test_record_repair_is_the_arbiters_way_on_for_a_service(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    gid = journal_game(path, "stratego_barrage", 8, end=False)
    env = dict(os.environ, PYTHONPATH=str(ROOT))

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "controller.cli", "record", *args, "--journal", str(path)],
                              capture_output=True, text=True, env=env, timeout=60)

    p = cli("repair", str(gid))
    assert p.returncode == 2 and "intact: there is nothing to repair" in p.stderr
    flip_text(path, b'"to"', b'"tp"', 5)
    p = cli("repair", str(gid))
    assert p.returncode == 0 and "the arbiter goes on from event" in p.stdout, p.stderr
    with Journal(path) as j:
        assert j.events(gid)[-1].data["action"] == "repair"


def test_a_damaged_start_cannot_go_on(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    gid = journal_game(path, "stratego_barrage", 4, end=False)
    flip_text(path, b'"board"', b'"boars"', 1)
    with Journal(path) as j:
        with pytest.raises(ChainError) as caught:
            j.events(gid)
        assert not caught.value.repairable
        with pytest.raises(JournalError, match="cannot go on"):
            j.repair(gid)


# ---------------------------------------------------------------------- older journals
def _make_schema2(path: Path) -> int:
    """A journal as FaceDown wrote it before the chain: schema 2, no digests, no heads, an unfinished game."""
    gid = journal_game(path, "stratego_barrage", 4, end=False)
    db = sqlite3.connect(path)
    db.executescript("""
        DROP TABLE chain_heads;
        ALTER TABLE events DROP COLUMN digest;
        PRAGMA user_version = 2;
    """)
    db.close()
    return gid


def test_an_older_journal_upgrades_its_games_are_unchained_and_sealed_by_the_next_event(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    gid = _make_schema2(path)
    with Journal(path) as j:
        assert j._db.execute("PRAGMA user_version").fetchone()[0] == 3
        found = j.check(gid)
        assert found.damage is None and not found.chained and len(found.events) == 7
        # resumed after the upgrade: the first chained event seals the older ones
        j.append(gid, "arbiter", {"action": "pause"})
        found = j.check(gid)
        assert found.damage is None and found.chained
    db = sqlite3.connect(path)
    db.execute("DROP TRIGGER events_no_update")
    db.execute("UPDATE events SET data = replace(data, '\"from\"', '\"fsom\"') WHERE seq = 5")
    db.commit()
    db.close()
    with Journal(path) as j, pytest.raises(ChainError, match="event 8 is damaged.*an event before it"):
        j.events(gid)


def test_signed_export_refuses_unfinished_and_unchained_games(tmp_path: Path) -> None:
    from controller.referee.signing import SignedRecordError, make_record

    path = tmp_path / "j.sqlite"
    gid = journal_game(path, "stratego_barrage", 4, end=False)
    with Journal(path) as j, pytest.raises(SignedRecordError, match="not over"):
        make_record(j, gid)
    old = tmp_path / "old.sqlite"
    gid = _make_schema2(old)
    with Journal(old) as j:
        j.append(gid, "arbiter", END)  # finished after the upgrade: chained from here, so it can be signed
        assert make_record(j, gid)["events"] == 8
    old2 = tmp_path / "old2.sqlite"
    gid = _make_schema2(old2)
    db = sqlite3.connect(old2)
    db.execute("INSERT INTO events (game_id, kind, data, time) VALUES (?, 'arbiter', ?, 5.0)",
               (gid, '{"action": "end", "result": {"reason": "resigned", "winners": ["red"]}}'))
    db.commit()
    db.close()
    with Journal(old2) as j, pytest.raises(SignedRecordError, match="before FaceDown chained"):
        make_record(j, gid)


# ---------------------------------------------------------------------- the web replay
def test_the_web_replay_and_record_name_a_damaged_event_instead_of_replaying_it(tmp_path: Path) -> None:
    sys.path.insert(0, str(Path(__file__).parent))
    from harness.web_game import Game
    from web_referee.app import create_app

    game = Game("stratego", tmp_path)
    game.start()
    for _ in range(4):
        game.random_move()
    game.table.session.end(("red",), {"code": "verdict.resigned", "params": {"side": "blue"}})
    app = create_app(game.table, keepalive_s=0.05)
    app.testing = True
    client = app.test_client()
    arb = game.table.tokens["arbiter"]
    with Journal(game.table.journal.path) as j:
        moves = [e.seq for e in j.events(game.table.game_id) if e.kind == "move"]
    db = sqlite3.connect(game.table.journal.path)
    db.execute("DROP TRIGGER events_no_update")
    db.execute("UPDATE events SET data = replace(data, '\"from\"', '\"fsom\"') WHERE seq = ?", (moves[1],))
    db.commit()
    db.close()
    for url in (f"/api/{arb}/replay", "/api/public/replay", f"/api/{arb}/record.txt"):
        r = client.get(url)
        assert r.status_code == 409, (url, r.status_code)
        said = r.get_json()["error"]
        assert f"game {game.table.game_id}, event {moves[1]} is damaged" in said and str(tmp_path) not in said
    game.table.stop()


def test_a_journal_whose_sqlite_structure_is_damaged_is_refused_whole_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "journal.sqlite"
    journal_game(path, "stratego_barrage", 4, end=False)
    data = bytearray(path.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    _, start, _ = event_cells(path)[0]
    hdr = start // page * page
    data[hdr + 3:hdr + 5] = b"\xff\xff"  # the events page claims 65,535 cells
    path.write_bytes(bytes(data))
    p = subprocess.run([sys.executable, "-m", "controller.cli", "play", "stratego_barrage", "--journal", str(path)],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=60,
                       stdin=subprocess.DEVNULL)
    assert p.returncode == 4 and "Traceback" not in p.stderr, p.stderr
    assert f"{path}: the journal is corrupt" in p.stderr and "restore the journal from a backup" in p.stderr


def test_the_issues_flip_in_a_journal_from_before_the_chain_is_a_clean_refusal(tmp_path: Path) -> None:
    """Nothing proves an unchained game intact, but a damaged event of one still never ends in a traceback."""
    path = tmp_path / "old.sqlite"
    gid = _make_schema2(path)
    with Journal(path) as j:
        seq = [e.seq for e in j.events(gid) if e.kind == "move"][1]
    db = sqlite3.connect(path)
    db.execute("DROP TRIGGER events_no_update")
    db.execute("UPDATE events SET data = replace(data, '\"from\"', '\"fsom\"') WHERE seq = ?", (seq,))
    db.commit()
    db.close()
    p = subprocess.run([sys.executable, "-m", "controller.cli", "record", "show", str(gid), "--journal", str(path)],
                       capture_output=True, text=True, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=60)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "MessageError" not in p.stderr, p.stderr
    assert f"event {seq}: the move event has no 'from': it is damaged" in p.stderr


def test_an_unreadable_event_from_before_the_chain_is_named_and_cannot_be_skipped(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    gid = _make_schema2(path)
    db = sqlite3.connect(path)
    db.execute("DROP TRIGGER events_no_update")
    db.execute("UPDATE events SET data = '{\"side\": ' WHERE seq = 5")
    db.commit()
    db.close()
    with Journal(path) as j:
        with pytest.raises(ChainError, match="event 5 is damaged \\(its data does not read") as caught:
            j.events(gid)
        assert not caught.value.repairable and [e.seq for e in caught.value.intact] == [1, 2, 3, 4]
        with pytest.raises(JournalError, match="nothing chains past it, so it cannot go on"):
            j.repair(gid)


def test_a_schema_1_journal_upgrades_to_the_chain_in_one_step(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite"
    gid = _make_schema2(path)
    db = sqlite3.connect(path)
    sql = db.execute("SELECT sql FROM sqlite_master WHERE name = 'events'").fetchone()[0]
    db.executescript("PRAGMA writable_schema = ON;")
    db.execute("UPDATE sqlite_master SET sql = ? WHERE name = 'events'", (sql.replace(", 'reaction'", ""),))
    db.executescript("PRAGMA writable_schema = OFF; PRAGMA user_version = 1;")
    db.close()
    with Journal(path) as j:
        assert j._db.execute("PRAGMA user_version").fetchone()[0] == 3
        assert "digest" in {r[1] for r in j._db.execute("PRAGMA table_info(events)")}
        found = j.check(gid)
        assert found.damage is None and not found.chained and len(found.events) == 7
        j.append(gid, "reaction", {"action": "auto", "side": "red", "auto": True})
        assert j.check(gid).chained and j.events(gid)[-1].kind == "reaction"
