"""The referee never freezes silently, never forks or loses a game (issue 16): faults injected into journaling,
sensing and the command line, each checked by what the players see (the state of every role, the published
event, the buzzer's pattern, the exit status) and by the journal staying intact."""

from __future__ import annotations

import os
import select
import signal
import stat
import subprocess
import sys
import threading
import time
import tty
from pathlib import Path

import pytest

from controller.announce.patterns import PATTERNS, pattern_for
from controller.messages import LANGUAGES, catalog, render
from controller.referee.journal import Journal, JournalBusy, JournalError, JournalLock
from controller.referee.supervisor import Supervisor
from controller.referee.table import open_table
from controller.rules import load_game
from controller.sensing.serial_link import LinkState, SerialScannerBoard
from controller.sensing.sim import SimBoard
from tests.physical import random_game_script
from web_referee.payloads import state_for

ROOT = Path(__file__).resolve().parent.parent


class Player:
    """Plays a scripted game on a journaled sim table through the supervisor, as the board thread would."""

    def __init__(self, tmp_path: Path, game: str = "stratego", seed: int = 3) -> None:
        self.script = random_game_script(game, seed, max_plies=40)
        self.board = SimBoard(load_game(game).station_ids, settle_ms=20, clock=lambda: 0.0)
        self.table = open_table(game, board=self.board, board_kind="sim", journal_path=tmp_path / "j.sqlite", resume=False)
        self.sup = self.table.supervise()
        self.lines = iter(self.script.lines)
        self.now = 0

    def play_until(self, ply: int) -> None:
        session = self.table.session
        for line in self.lines:
            if "setup" in line:
                session.register_setup(line["setup"], line["pieces"])
                for s in line["pieces"]:
                    self.board.place(s, self.now)
            elif "lift" in line:
                self.board.lift(line["lift"], self.now)
            elif "place" in line:
                self.board.place(line["place"], self.now)
            else:
                self.now += line["tick_ms"]
                snap = self.board.tick(self.now)
                if snap is not None:
                    self.sup.on_snapshot(snap)
            if session.state.ply >= ply or self.sup.fault is not None:
                return


class FailingWrites:
    """The journal as a full or read-only SD card leaves it: every write fails, reads still work."""

    def __init__(self, journal: Journal) -> None:
        self.journal = journal

    def append(self, game_id: int, kind: str, data: dict) -> int:
        raise JournalError(f"{self.journal.path}: cannot write to the journal: disk I/O error")

    def __getattr__(self, name: str):
        return getattr(self.journal, name)


def test_an_unwritable_journal_stops_the_referee_visibly_and_keeps_the_journal(tmp_path: Path) -> None:
    p = Player(tmp_path)
    p.play_until(2)
    table, sup = p.table, p.sup
    before = [(e.seq, e.kind) for e in table.journal.events(table.game_id)]
    heard: list[dict] = []
    table.session.subscribe(lambda ev: heard.append(ev.public))
    sup_journal = table.session.journal  # the supervisor watches whatever the session writes to
    sup_journal._journal = FailingWrites(table.journal)  # the SD card fails from here on
    p.play_until(10)
    assert sup.fault is not None and sup.fault.code == "fault.journal" and sup.failed.is_set()
    # every role sees why, in words from every catalog
    for role in (*table.game.sides, "arbiter", "spectator"):
        st = state_for(table, role)
        assert st["fault"]["say"]["params"]["why"]["code"] == "fault.journal"
        for lang in LANGUAGES:
            assert render(st["fault"]["say"], lang)
    faults = [e for e in heard if e["event"] == "fault"]
    assert len(faults) == 1 and pattern_for(faults[0]) == PATTERNS["fault"]
    # the voice and the console say it (in words from the catalogs)
    from controller.announce.console import describe
    from controller.announce.voice import phrase

    assert phrase(faults[0], "zh", table.game).startswith("裁判已停止：无法保存棋局")
    assert phrase(faults[0], "en", table.game).startswith("The referee has stopped: it cannot save the game")
    assert describe(faults[0], table.game) == phrase(faults[0], "en", table.game)
    # no more rulings: later snapshots are not judged, and the journal holds exactly what was ruled before
    ply = table.state.ply
    p.play_until(20)
    assert table.state.ply == ply
    assert [(e.seq, e.kind) for e in table.journal.events(table.game_id)] == before
    table.stop()


def test_an_unexpected_error_while_judging_is_a_fault(tmp_path: Path) -> None:
    p = Player(tmp_path)
    p.play_until(1)

    def broken(snap):
        raise IndexError("list index out of range")

    p.table.session.on_snapshot = broken  # an engine bug
    p.play_until(5)
    assert p.sup.fault is not None and p.sup.fault.code == "fault.referee"
    p.table.stop()


def test_a_board_thread_that_dies_is_a_fault(tmp_path: Path) -> None:
    board = SerialScannerBoard(["a1"], {"a1": 0}, port=str(tmp_path / "nothing"))

    def crash(on_snapshot):
        raise OSError("sensor bus gone")

    board.run = crash
    table = open_table("stratego", board=board, board_kind="serial", journal_path=tmp_path / "j.sqlite")
    sup = table.supervise()
    sup.start()
    assert sup.failed.wait(5) and sup.fault.code == "fault.sensing"
    table.stop()


def test_fault_and_link_words_exist_in_every_language() -> None:
    keys = {k for k in catalog("en") if k.startswith(("fault.", "link."))}
    assert {"fault.stopped", "fault.journal", "fault.sensing", "fault.referee", "link.connected", "link.lost",
            "link.resyncing", "link.lost_notice", "link.back_notice"} <= keys
    for lang in LANGUAGES:
        assert set(catalog(lang)) == set(catalog("en")), lang


# ---------------------------------------------------------------------------------------------- one writer
def _play_cmd(journal: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "controller.cli", "play", "stratego", "--board", "sim", "--no-web", "--announce", "none",
            "--journal", str(journal), *extra]


def test_a_second_referee_on_the_same_journal_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    table = open_table("stratego", board=SimBoard(load_game("stratego").station_ids), board_kind="sim", journal_path=journal)
    games = [g.id for g in table.journal.games()]
    size = journal.stat().st_size
    t0 = time.monotonic()
    r = subprocess.run(_play_cmd(journal, "--new"), capture_output=True, text=True, cwd=ROOT, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == 2, r.stderr
    assert f"pid {os.getpid()}" in r.stderr and "already in use" in r.stderr and "Traceback" not in r.stderr
    assert time.monotonic() - t0 < 30
    assert [g.id for g in table.journal.games()] == games and journal.stat().st_size == size
    table.stop()
    with JournalLock(journal) as lock:  # released by stop(): the next referee gets it
        assert lock.held


def test_the_lock_names_its_holder_and_dies_with_it(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    holder = subprocess.Popen([sys.executable, "-c", "import sys,time; from controller.referee.journal import JournalLock;"
                               f"l = JournalLock({str(journal)!r}); print('held', flush=True); time.sleep(60)"],
                              stdout=subprocess.PIPE, text=True, cwd=ROOT, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert holder.stdout.readline().strip() == "held"
    with pytest.raises(JournalBusy) as err:
        JournalLock(journal)
    assert err.value.pid == holder.pid
    holder.send_signal(signal.SIGKILL)  # a crash leaves no stale lock
    holder.wait()
    JournalLock(journal).release()


def test_journal_key_and_lock_are_private(tmp_path: Path) -> None:
    journal = tmp_path / "j.sqlite"
    old = os.umask(0o022)
    try:
        p = Player(tmp_path)
        p.play_until(1)
        for f in (journal, journal.with_name("j.sqlite-wal"), journal.with_name("j.sqlite.key"), journal.with_name("j.sqlite.lock")):
            assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
        p.table.stop()
    finally:
        os.umask(old)
    journal.chmod(0o644)  # an older journal is made private when next opened
    Journal(journal).close()
    assert stat.S_IMODE(journal.stat().st_mode) == 0o600


@pytest.mark.parametrize("damage", ["truncate", "delete"])
def test_an_emptied_journal_is_reported_not_replaced(tmp_path: Path, damage: str) -> None:
    journal = tmp_path / "j.sqlite"
    p = Player(tmp_path)
    p.play_until(2)
    p.table.stop()
    for suffix in ("-wal", "-shm"):
        journal.with_name(journal.name + suffix).unlink(missing_ok=True)
    if damage == "truncate":
        journal.write_bytes(b"")
    else:
        journal.unlink()
    r = subprocess.run(_play_cmd(journal), capture_output=True, text=True, cwd=ROOT, timeout=60,
                       env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert ("is empty" if damage == "truncate" else "is missing") in r.stderr and "key file" in r.stderr
    assert not journal.exists() or journal.stat().st_size == 0  # nothing was started in its place


def test_setup_files_that_match_the_journal_resume_and_others_are_refused(tmp_path: Path) -> None:
    from controller.commands.play import setup_differences

    p = Player(tmp_path)
    p.play_until(2)
    deployments = p.table.state.deployments
    p.table.stop()
    files = []
    for side, placement in deployments.items():
        f = tmp_path / f"{side}.yaml"
        f.write_text("".join(f"{s}: {piece}\n" for s, piece in placement.items()))
        files += ["--setup", f"{side}={f}"]
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    ready = tmp_path / "ready"
    child = subprocess.Popen(_play_cmd(tmp_path / "j.sqlite", *files, "--ready-file", str(ready)), cwd=ROOT, env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for _ in range(300):
        if ready.exists() or child.poll() is not None:
            break
        time.sleep(0.1)
    assert ready.exists(), child.stderr.read() if child.poll() is not None else "not ready"
    child.send_signal(signal.SIGTERM)
    out, _err = child.communicate(timeout=30)
    assert child.returncode == 0 and "at ply 2" in out
    red = next(iter(deployments))
    changed = dict(deployments[red])
    a, b = sorted(changed)[:2]
    changed[a], changed[b] = changed[b], changed[a]
    assert setup_differences(deployments[red], changed)  # (when the two pieces differ)
    (tmp_path / f"{red}.yaml").write_text("".join(f"{s}: {piece}\n" for s, piece in changed.items()))
    r = subprocess.run(_play_cmd(tmp_path / "j.sqlite", *files), capture_output=True, text=True, cwd=ROOT, env=env, timeout=60)
    if changed[a] != changed[b]:
        assert r.returncode == 2 and "differs from the one journaled" in r.stderr and f"{a}: journaled" in r.stderr


# ---------------------------------------------------------------------------------------------- the scanner
STATIONS = [f"s{i}" for i in range(12)]
CHANNELS = {s: i for i, s in enumerate(STATIONS)}


def _line(body: str) -> bytes:
    from controller.sensing import scanner_protocol as sp

    return sp.frame(body)


def test_a_hello_with_another_channel_count_resyncs_instead_of_crashing() -> None:
    link = LinkState(STATIONS, CHANNELS)
    link.on_line(_line("HELLO proto=1 fw=1 board=t b=00AA n=12 scanner=mux sensing=reed caps=snap").decode(), 0)
    _, snap = link.on_line(_line("SNAP b=00AA seq=1 occ=100 tags=-").decode(), 1)
    assert link.known and snap is not None
    reqs, snap = link.on_line(_line("HELLO proto=1 fw=1 board=t b=00AA n=200 scanner=mux sensing=reed caps=snap").decode(), 2)
    assert not link.known and "SNAP?" in reqs and snap is None
    reqs, snap = link.on_line(_line("CHG b=00AA seq=2 c=150+").decode(), 3)  # was an IndexError
    assert snap is None and not link.known
    occ = "1" + "0" * 49
    _, snap = link.on_line(_line(f"SNAP b=00AA seq=3 occ={occ} tags=-").decode(), 4)
    assert link.known and snap is None  # known again, and the stations read as before (nothing new to report)
    _, snap = link.on_line(_line("CHG b=00AA seq=4 c=150+").decode(), 5)  # a channel no station uses: no change
    assert link.known


def test_a_scanner_on_a_pty_that_sends_nonsense_is_resynced_and_the_link_status_says_so(tmp_path: Path) -> None:
    master, slave = os.openpty()
    tty.setraw(slave)
    port = tmp_path / "ttyFD"
    port.symlink_to(os.ttyname(slave))
    board = SerialScannerBoard(STATIONS, CHANNELS, port=str(port), heartbeat_timeout_s=30)
    table = open_table("stratego", board=board, board_kind="serial", journal_path=tmp_path / "j.sqlite")
    sup = Supervisor(table, poll_s=0.05)
    table.supervisor = sup
    heard: list[dict] = []
    table.session.subscribe(lambda ev: heard.append(ev.public))

    def send(body: str) -> None:
        os.write(master, _line(body))

    def wait_for(cond, what: str) -> None:
        for _ in range(200):
            if cond():
                return
            time.sleep(0.02)
        raise AssertionError(what)

    def wait_for_request(word: bytes) -> None:
        heard = b""
        end = time.monotonic() + 5
        while word not in heard and time.monotonic() < end:
            ready, _, _ = select.select([master], [], [], 0.1)
            if ready:
                heard += os.read(master, 4096)
        assert word in heard, heard

    try:
        sup.start()
        wait_for_request(b"HELLO?")  # the host opened the port (pyserial drops what came before) and asks
        send("HELLO proto=1 fw=1 board=t b=00AA n=12 scanner=mux sensing=reed caps=snap")
        send("SNAP b=00AA seq=1 occ=000 tags=-")
        wait_for(lambda: sup.link.status == "connected", "connected")
        send("HELLO proto=1 fw=1 board=t b=00AA n=200 scanner=mux sensing=reed caps=snap")
        send("CHG b=00AA seq=2 c=150+")
        wait_for(lambda: sup.link.status == "resyncing", "resyncing")
        assert state_for(table, "spectator")["link"]["status"] == "resyncing"
        send("SNAP b=00AA seq=3 occ=" + "0" * 50 + " tags=-")
        wait_for(lambda: sup.link.status == "connected", "connected again")
        assert sup.fault is None and board.link.known
        # the scanner is unplugged: lost (told), then back (told)
        os.close(slave)
        slave = -1
        os.close(master)
        master = -1
        wait_for(lambda: sup.link.status == "lost", "lost")
        assert [e["status"] for e in heard if e["event"] == "link"] == ["lost"]
        st = state_for(table, "red")
        assert st["link"]["status"] == "lost" and st["link"]["since"] is not None and st["fault"] is None
        # plugged back in (a new device behind the same name): the host reopens it, resyncs, and says so
        master, slave = os.openpty()
        tty.setraw(slave)
        tmp = tmp_path / "ttyFD.new"
        tmp.symlink_to(os.ttyname(slave))
        tmp.replace(port)
        wait_for_request(b"HELLO?")
        send("HELLO proto=1 fw=1 board=t b=00BB n=12 scanner=mux sensing=reed caps=snap")
        send("SNAP b=00BB seq=1 occ=000 tags=-")
        wait_for(lambda: sup.link.status == "connected", "back")
        wait_for(lambda: [e["status"] for e in heard if e["event"] == "link"] == ["lost", "connected"], "told back")
        back = [e for e in heard if e["event"] == "link"][-1]
        assert back["say"]["code"] == "link.back_notice" and sup.fault is None
    finally:
        table.stop()
        for fd in (master, slave):
            if fd >= 0:
                os.close(fd)


def test_the_sync_barrier_makes_the_next_write_wait_for_the_last_fsync(tmp_path: Path) -> None:
    """Deferred durability: an append returns before its fsync, and the *next* append waits for it."""
    j = Journal(tmp_path / "j.sqlite", durability="deferred")
    gid = j.new_game("stratego", {}, board="sim")
    j.wait_durable()
    syncer = j._syncer
    release = threading.Event()
    real = syncer._sync

    def slow_sync() -> None:
        release.wait(10)  # an SD card taking its time
        real()

    syncer._sync = slow_sync
    t0 = time.monotonic()
    j.append(gid, "move", {"side": "red", "from": "a4", "to": "a5"})
    assert time.monotonic() - t0 < 1.0  # announced without waiting for the fsync
    done = threading.Event()
    threading.Thread(target=lambda: (j.append(gid, "move", {"side": "blue", "from": "a7", "to": "a6"}), done.set())).start()
    assert not done.wait(0.3)  # the next move is not accepted before the last one is on the disk
    release.set()
    assert done.wait(5)
    j.close()
    assert [e.kind for e in Journal(tmp_path / "j.sqlite").events(gid)] == ["game", "move", "move"]


def test_facedown_play_exits_non_zero_when_the_journal_fails_so_the_service_restarts_it(tmp_path: Path) -> None:
    """`facedown play` on a journal that starts failing mid-game: the console says why, the process exits 3 (not
    0: systemd's Restart=on-failure restarts it), and the journal replays to the last ruling it holds."""
    from controller.referee.replay import rebuild

    journal = tmp_path / "j.sqlite"
    r = subprocess.run([sys.executable, "-m", "tests.fault_child", "6", "--", "play", "stratego", "--board", "sim",
                        "--no-web", "--demo", "--pace", "0.01", "--fault-linger", "0.2", "--journal", str(journal)],
                       capture_output=True, text=True, cwd=ROOT, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert r.returncode == 3, r.stderr[-2000:]
    assert "The referee has stopped: it cannot save the game" in r.stdout
    with Journal(journal) as j:
        events = j.events(j.games()[-1].id)
        assert len(events) == 6 + 1  # the game event, then the six writes that succeeded
        rebuild(events)  # and it replays


def test_a_failed_background_sync_is_a_fault(tmp_path: Path) -> None:
    p = Player(tmp_path)
    p.play_until(1)
    syncer = p.table.journal._syncer

    def eio() -> None:
        raise OSError(5, "Input/output error")

    syncer._sync = eio
    p.play_until(3)  # the next ruling's sync fails in the background
    p.sup.check()  # what the watcher does every 0.25 s
    assert p.sup.fault is not None and p.sup.fault.code == "fault.journal"
    with pytest.raises(JournalError, match="cannot make the journal durable: Input/output error"):
        p.table.journal.wait_durable()
    p.table.stop()


def test_an_unexpected_error_in_an_arbiters_action_from_the_web_is_a_fault_not_a_500(tmp_path: Path) -> None:
    """A bug inside a request that changes the game may leave it half-changed: the referee stops visibly (as on the
    board thread) and the page is told why, instead of an anonymous 500 while play goes on."""
    import re

    from web_referee.app import create_app

    p = Player(tmp_path)
    p.play_until(2)
    app = create_app(p.table, setups=_no_setups(tmp_path))
    client = app.test_client()
    key = p.table.tokens["arbiter"]
    csrf = re.search(r'name="facedown-csrf" content="([0-9a-f]+)"', client.get(f"/arbiter/{key}").get_data(as_text=True))
    assert csrf

    def broken(rebuild):  # noqa: ANN001, ANN202
        raise KeyError("a bug in undo")

    p.table.session.undo = broken
    r = client.post(f"/api/{key}/arbiter/undo", json={}, headers={"X-CSRF-Token": csrf.group(1)})
    assert r.status_code == 503 and r.get_json()["fault"]["code"] == "fault.referee"
    assert p.sup.fault is not None and p.sup.fault.where == "web" and p.sup.failed.is_set()
    assert state_for(p.table, "spectator")["fault"]["code"] == "fault.referee"
    # a refusal is still a refusal, not a fault: the next action is refused because the referee stopped
    r = client.post(f"/api/{key}/arbiter/pause", json={}, headers={"X-CSRF-Token": csrf.group(1)})
    assert r.status_code == 503 and "stopped" in r.get_json()["error"]
    p.table.stop()


def _no_setups(tmp_path: Path):  # noqa: ANN202
    from controller.setups_store import SetupStore

    return SetupStore(tmp_path / "setups")
