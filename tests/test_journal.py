"""The game journal and its replay: round trips, append-only storage, corrupt files, undo, and SIGKILL survival."""

from __future__ import annotations

import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.referee.journal import EventError, Journal, JournalError, default_path
from controller.referee.replay import ReplayError, paused, rebuild, rulings
from controller.rules import GameState, game_ids, new_game
from controller.rules.deploy import random_deployment

REPO = Path(__file__).resolve().parent.parent


def snap(state: GameState) -> tuple[Any, ...]:
    """What must survive a replay: the board (station -> owner, piece), turn, phase and result."""
    board = {s: (p.owner, p.type) for s, p in state.board.items()}
    return board, state.turn, state.phase, state.result


def play(journal: Journal | None, seed: int, moves: int, game: str = "stratego") -> list[tuple[str, dict, tuple]]:
    """A seeded random legal game, journaled if ``journal`` is given; every event with the live state after it.

    Also run by the crash test's child process, so it must be deterministic for a seed.
    """
    rng = random.Random(seed)
    state = new_game(game)
    log: list[tuple[str, dict, tuple]] = []
    gid = journal.new_game(game, dict(state.options), board="sim", seats={"red": "Ann", "blue": "Bo"}) if journal else 0

    def record(kind: str, data: dict) -> None:
        if journal is not None:
            journal.append(gid, kind, data)
        log.append((kind, data, snap(state)))

    for side in state.game.sides:
        placement = random_deployment(state.game, side, rng)
        state.deploy(side, placement)
        record("deploy", {"side": side, "placement": placement})
    for _ in range(moves):
        if state.phase != "play":
            break
        if rng.random() < 0.05:  # a player's illegal attempt: journaled for the record, ignored by replay
            record("illegal", {"side": state.turn, "from": "a1", "to": "j10", "reason": "not a move"})
        move = rng.choice(state.legal_moves())
        side = state.turn
        ruling = state.apply(move)
        record("move", {"side": side, "from": move.frm, "to": move.to})
        if ruling.result is not None:
            record("result", {"winners": list(ruling.result.winners), "reason": ruling.result.reason})
    return log


# ---------------------------------------------------------------------- journal storage
def test_round_trip_with_times_and_sequence(tmp_path: Path) -> None:
    clock = iter([100.0, 101.5, 102.25]).__next__
    with Journal(tmp_path / "j.sqlite", clock=clock) as j:
        gid = j.new_game("stratego", {"reveal": "silent"}, board="gpio", profile="boards/club.yaml", seats={"red": "Ann"})
        seq = j.append(gid, "move", {"side": "red", "from": "a4", "to": "a5"})
        seq2 = j.append(gid, "arbiter", {"action": "pause", "note": "tea"})
        events = j.events(gid)
    assert [e.kind for e in events] == ["game", "move", "arbiter"]
    assert events[0].data == {"game": "stratego", "options": {"reveal": "silent"}, "profile": "boards/club.yaml",
                              "board": "gpio", "seats": {"red": "Ann"}}
    assert events[1].data == {"side": "red", "from": "a4", "to": "a5"}
    assert [e.seq for e in events[1:]] == [seq, seq2] and events[0].seq < seq < seq2
    assert [e.time for e in events] == [100.0, 101.5, 102.25]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    side=st.text(min_size=1, max_size=8),
    extra=st.dictionaries(
        st.text(min_size=1, max_size=6).filter(lambda k: k not in ("side", "from", "to")),
        st.recursive(st.none() | st.booleans() | st.integers() | st.text(), lambda c: st.lists(c, max_size=3), max_leaves=5),
        max_size=3,
    ),
)
def test_any_json_data_round_trips(tmp_path: Path, side: str, extra: dict) -> None:
    data = {"side": side, "from": "a4", "to": "a5", **extra}
    with Journal(tmp_path / "prop.sqlite") as j:
        gid = j.new_game("stratego", {}, board="sim")
        j.append(gid, "illegal", data)
        assert j.events(gid)[-1].data == data


def test_wal_mode_full_sync_and_reopen(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    j = Journal(path)
    gid = j.new_game("stratego", {}, board="sim")
    first = j.append(gid, "move", {"side": "red", "from": "a4", "to": "a5"})
    assert j._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    j.close()
    raw = sqlite3.connect(path)
    assert raw.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    raw.close()
    with Journal(path) as j:
        assert [e.kind for e in j.events(gid)] == ["game", "move"]
        later = j.append(gid, "move", {"side": "blue", "from": "a7", "to": "a6"})
        assert later > first
        assert j.new_game("lattaque", {}, board="sim") == gid + 1


def test_events_and_games_are_append_only_in_the_file(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as j:
        gid = j.new_game("stratego", {}, board="sim")
        j.append(gid, "move", {"side": "red", "from": "a4", "to": "a5"})
    raw = sqlite3.connect(path)
    for sql in ("UPDATE events SET data = '{}'", "DELETE FROM events", "UPDATE games SET game = 'x'", "DELETE FROM games"):
        with pytest.raises(sqlite3.DatabaseError, match="append-only"):
            raw.execute(sql)
    raw.close()
    with Journal(path) as j:
        assert [e.data for e in j.events(gid)][1] == {"side": "red", "from": "a4", "to": "a5"}


def test_bad_events_are_refused_and_nothing_is_written(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as j:
        gid = j.new_game("stratego", {}, board="sim")
        with pytest.raises(EventError, match="unknown event kind 'teleport'"):
            j.append(gid, "teleport", {})
        with pytest.raises(EventError, match="missing 'to'"):
            j.append(gid, "move", {"side": "red", "from": "a4"})
        with pytest.raises(EventError, match="'action' should be one of"):
            j.append(gid, "arbiter", {"action": "explode"})
        with pytest.raises(EventError, match="'end' needs a 'result'"):
            j.append(gid, "arbiter", {"action": "end"})
        with pytest.raises(EventError, match="'winners'"):
            j.append(gid, "result", {"winners": "red", "reason": "x"})
        with pytest.raises(EventError, match="only by Journal.new_game"):
            j.append(gid, "game", {"game": "stratego", "options": {}, "board": "sim"})
        with pytest.raises(EventError, match="not JSON"):
            j.append(gid, "illegal", {"side": "red", "from": "a1", "to": "a2", "when": object()})
        with pytest.raises(JournalError, match=r"j\.sqlite: no game 99 in this journal"):
            j.append(99, "move", {"side": "red", "from": "a4", "to": "a5"})
        with pytest.raises(JournalError, match="no game 99"):
            j.events(99)
        assert [e.kind for e in j.events(gid)] == ["game"]


def test_missing_journal_is_not_created_when_reading(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "none.sqlite"
    with pytest.raises(JournalError, match="none.sqlite: no journal here"):
        Journal(path, create=False)
    assert not path.exists()
    with Journal(path) as j:  # creating makes the folders
        assert j.games() == []


def test_default_path_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_path() == tmp_path / "facedown" / "journal.sqlite"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_path() == tmp_path / "home" / ".local" / "share" / "facedown" / "journal.sqlite"


def test_not_a_journal_gives_a_clear_error_and_leaves_the_file_alone(tmp_path: Path) -> None:
    text = tmp_path / "notes.sqlite"
    text.write_bytes(b"shopping: eggs, milk\n" * 50)
    with pytest.raises(JournalError, match=r"notes\.sqlite: not a FaceDown journal \(not an SQLite database"):
        Journal(text)
    assert text.read_bytes() == b"shopping: eggs, milk\n" * 50

    other = tmp_path / "other.sqlite"
    raw = sqlite3.connect(other)
    raw.execute("CREATE TABLE birds (name TEXT)")
    raw.commit()
    raw.close()
    with pytest.raises(JournalError, match=r"other\.sqlite: an SQLite database but not a FaceDown journal \(tables: birds\)"):
        Journal(other)


def test_corrupt_journal_gives_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path) as j:
        play(j, seed=3, moves=40)
    data = bytearray(path.read_bytes())
    assert len(data) > 4 * 4096
    rng = random.Random(0)
    for page in range(1, len(data) // 4096):  # scribble over every page but the header page
        for k in range(64):
            data[page * 4096 + rng.randrange(4096)] = rng.randrange(256) if k % 2 else 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(JournalError, match=r"j\.sqlite: .*corrupt"):
        Journal(path)


def test_games_summary_and_unfinished(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as j:
        assert j.unfinished() is None
        a = j.new_game("stratego", {}, board="sim")
        b = j.new_game("lattaque", {}, board="sim")
        for side, frm, to in (("red", "a4", "a5"), ("blue", "a7", "a6"), ("red", "a5", "b5")):
            j.append(a, "move", {"side": side, "from": frm, "to": to})
        j.append(a, "arbiter", {"action": "undo"})
        j.append(a, "illegal", {"side": "red", "from": "a1", "to": "a9"})
        assert j.unfinished() == b
        j.append(b, "result", {"winners": ["blue"], "reason": "Flag lost"})
        assert j.unfinished() == a
        j.append(a, "arbiter", {"action": "end", "result": {"winners": [], "reason": "agreed draw"}})
        assert j.unfinished() is None
        ga, gb = j.games()
        assert (ga.id, ga.game, ga.moves, ga.result) == (a, "stratego", 2, {"winners": [], "reason": "agreed draw"})
        assert (gb.id, gb.game, gb.moves, gb.result) == (b, "lattaque", 0, {"winners": ["blue"], "reason": "Flag lost"})
        assert ga.finished is not None and ga.started <= ga.finished
        j.append(b, "arbiter", {"action": "undo"})  # taking back the deciding move reopens the game
        assert j.unfinished() == b and j.summary(b).finished is None


# ---------------------------------------------------------------------- replay
@pytest.mark.parametrize("game", game_ids())
@pytest.mark.parametrize("seed", [1, 2])
def test_replay_of_a_random_game_equals_the_live_game(tmp_path: Path, game: str, seed: int) -> None:
    with Journal(tmp_path / "j.sqlite") as j:
        log = play(j, seed=seed, moves=250, game=game)
        events = j.events(1)
    assert len(events) == len(log) + 1
    assert snap(rebuild(events)) == log[-1][2]
    live_after_moves = [s for kind, _, s in log if kind == "move"]
    replayed = [(r, snap(after)) for r, after in rulings(events)]  # rulings() hands out one live state
    assert [after for _, after in replayed] == live_after_moves
    assert [r.ply for r, _ in replayed] == list(range(1, len(live_after_moves) + 1))


@settings(max_examples=8, deadline=None)
@given(seed=st.integers(0, 10**6), moves=st.integers(0, 120))
def test_replay_of_every_prefix_matches(seed: int, moves: int) -> None:
    from controller.referee.journal import Event

    log = play(None, seed=seed, moves=moves)
    events = [Event(1, "game", {"game": "stratego", "options": {}, "board": "sim"}, 0.0)]
    events += [Event(i + 2, kind, data, 0.0) for i, (kind, data, _) in enumerate(log)]
    for n in {1, len(log) // 2, len(log)}:
        if n:
            assert snap(rebuild(events[: n + 1])) == log[n - 1][2]


@pytest.mark.parametrize("seed", [6, 5])  # seed 5: blue takes the flag on move 20, and the undo reopens the game
def test_undo_drops_the_last_move_and_play_goes_on(tmp_path: Path, seed: int) -> None:
    with Journal(tmp_path / "j.sqlite") as j:
        log = play(j, seed=seed, moves=30)
        gid = 1
        moves = [s for kind, _, s in log if kind == "move"]
        j.append(gid, "arbiter", {"action": "undo"})
        state = rebuild(j.events(gid))
        assert snap(state) == moves[-2] and state.ply == len(moves) - 1
        assert state.phase == "play" and state.result is None and j.unfinished() == gid
        other = state.copy()
        move = sorted(other.legal_moves())[0]
        side = other.turn
        other.apply(move)
        j.append(gid, "move", {"side": side, "from": move.frm, "to": move.to})
        assert snap(rebuild(j.events(gid))) == snap(other)
        assert len(list(rulings(j.events(gid)))) == len(moves)


def test_arbiter_end_and_undo_after_it(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as j:
        log = play(j, seed=8, moves=10)
        j.append(1, "arbiter", {"action": "pause"})
        assert paused(j.events(1))
        j.append(1, "arbiter", {"action": "resume"})
        j.append(1, "arbiter", {"action": "end", "result": {"winners": ["blue"], "reason": "red resigned"}})
        state = rebuild(j.events(1))
        assert state.phase == "over" and state.result is not None
        # an older journal's sentence is kept as the arbiter's own words
        assert (state.result.winners, state.result.reason) == (("blue",), {"code": "verdict.arbiter", "params": {"note": "red resigned"}})
        assert not paused(j.events(1))
        j.append(1, "arbiter", {"action": "undo"})  # takes back the last move and the end with it
        state = rebuild(j.events(1))
        assert state.phase == "play" and state.result is None
        assert snap(state) == [s for kind, _, s in log if kind == "move"][-2]


def test_events_that_do_not_replay_name_their_seq(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as j:
        gid = j.new_game("stratego", {}, board="sim")
        undo = j.append(gid, "arbiter", {"action": "undo"})
        with pytest.raises(ReplayError, match=rf"event {undo}: undo with no accepted move"):
            rebuild(j.events(gid))

        gid = j.new_game("stratego", {}, board="sim")
        early = j.append(gid, "move", {"side": "red", "from": "a4", "to": "a5"})
        with pytest.raises(ReplayError, match=rf"event {early}: red moves a4-a5 before every side has deployed"):
            rebuild(j.events(gid))

        j2 = j.new_game("stratego", {}, board="sim")
        rng = random.Random(4)
        state = new_game("stratego")
        for side in state.game.sides:
            placement = random_deployment(state.game, side, rng)
            state.deploy(side, placement)
            j.append(j2, "deploy", {"side": side, "placement": placement})
        wrong = j.append(j2, "move", {"side": "blue", "from": "a7", "to": "a6"})
        with pytest.raises(ReplayError, match=rf"event {wrong}: blue moves a7-a6 but it is red's turn") as info:
            rebuild(j.events(j2))
        assert info.value.seq == wrong

        j3 = j.new_game("stratego", {}, board="sim")
        for side in state.game.sides:
            j.append(j3, "deploy", {"side": side, "placement": state.deployments[side]})
        flag = next(s for s, p in state.board.items() if p.owner == "red" and p.type == "flag")
        bad = j.append(j3, "move", {"side": "red", "from": flag, "to": "a5"})
        with pytest.raises(ReplayError, match=rf"event {bad}: the engine refuses red's move {flag}-a5: a Flag never moves"):
            rebuild(j.events(j3))

        j4 = j.new_game("stratego", {"reveal": "upside-down"}, board="sim")
        with pytest.raises(ReplayError, match="cannot start 'stratego'"):
            rebuild(j.events(j4))


def test_journaled_result_must_agree_with_the_engine(tmp_path: Path) -> None:
    with Journal(tmp_path / "j.sqlite") as j:
        log = play(j, seed=11, moves=5000)
        assert log[-1][0] == "result"
        loser = [s for s in ("red", "blue") if s not in log[-1][1]["winners"]]
        seq = j.append(1, "result", {"winners": loser, "reason": "made up"})
        with pytest.raises(ReplayError, match=rf"event {seq}: the journal's result says {loser[0]}"):
            rebuild(j.events(1))


# ---------------------------------------------------------------------- crash survival
CHILD = """
import sys
sys.path.insert(0, {tests!r})
from controller.referee.journal import Journal
from test_journal import play
j = Journal({path!r})
print("ready", flush=True)
play(j, seed={seed}, moves=100000)
print("done", flush=True)
"""


def test_sigkill_at_random_points_leaves_a_replayable_prefix(tmp_path: Path) -> None:
    seed = 21
    reference = play(None, seed=seed, moves=100000)
    rng = random.Random(7)
    cut = []
    for k in range(5):
        path = tmp_path / f"crash{k}.sqlite"
        code = CHILD.format(tests=str(REPO / "tests"), path=str(path), seed=seed)
        child = subprocess.Popen([sys.executable, "-c", code], cwd=REPO, stdout=subprocess.PIPE, text=True)
        assert child.stdout is not None
        assert child.stdout.readline().strip() == "ready"
        time.sleep(rng.uniform(0.01, 0.3))
        child.send_signal(signal.SIGKILL)
        child.wait(timeout=30)
        child.stdout.close()
        with Journal(path) as j:
            games = j.games()
            if not games:
                continue  # killed before the game was created: an empty, valid journal
            events = j.events(games[0].id)
            written = [(e.kind, e.data) for e in events[1:]]
            cut.append(len(written))
            assert written == [(kind, data) for kind, data, _ in reference[: len(written)]]
            if written:
                assert snap(rebuild(events)) == reference[len(written) - 1][2]
            j.append(games[0].id, "arbiter", {"action": "pause"})  # still writable after the crash
    assert any(0 < n < len(reference) for n in cut), f"no kill landed mid-game: {cut} of {len(reference)} events"


def test_append_many_is_one_transaction_all_or_none(tmp_path: Path) -> None:
    from controller.referee.journal import EventError

    with Journal(tmp_path / "j.sqlite") as j:
        gid = j.new_game("stratego", {}, board="sim")
        seqs = j.append_many(gid, [("arbiter", {"action": "pause"}), ("arbiter", {"action": "resume"})])
        assert len(seqs) == 2 and seqs[1] == seqs[0] + 1
        before = len(j.events(gid))
        with pytest.raises(EventError):
            j.append_many(gid, [("arbiter", {"action": "pause"}), ("nonsense", {})])
        assert len(j.events(gid)) == before  # nothing of the refused batch was written
