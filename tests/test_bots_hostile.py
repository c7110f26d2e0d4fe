"""Outside engines as an attacker writes them (tests/hostile_engine.py, a real program): through `facedown match`,
through a table game with a computer seat (`facedown script`'s path, and `facedown play` itself), each hostile mode
is refused or contained with its stated reason, nothing of the journal or the referee's environment reaches the
engine, no process of it outlives the game, and the game's journal is intact and resumes."""

from __future__ import annotations

import json
import os
import pwd
import random
import shutil
import signal
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_process import Cli

from controller.bots import RandomBot
from controller.bots.jail import ENV_ALLOWED, Jail, harden_referee, prctl
from controller.bots.process import ProcessBot
from controller.bots.setups import built_setup
from controller.cli import main
from controller.commands.script import run_script
from controller.referee.gamefile import journaled
from controller.referee.journal import Journal
from controller.referee.replay import rebuild
from controller.referee.table import open_table
from controller.rules import load_game, new_game, view
from controller.sensing.sim import SimBoard

ROOT = Path(__file__).resolve().parents[1]
ENGINE = ROOT / "tests" / "hostile_engine.py"
SYSTEM_PY = "/usr/bin/python3"  # readable by any user, unlike a virtualenv under /root
AS_ROOT = os.geteuid() == 0
SECRET = "club-secret-8d1f"

#: mode -> (why, words of the reason) for a mode that costs the engine the game at its first move
FAILING = {
    "endless": ("protocol", "sent a line longer than 64 kB"),
    "flood": ("protocol", "more than 1000 log lines"),
    "binary": ("protocol", "not UTF-8"),
    "twice": ("protocol", "a second answer"),
    "early": ("protocol", "answer"),
}


@pytest.fixture
def shared() -> Iterator[Path]:
    """A directory any user may read and write: setups, the engine's graph, its reports."""
    path = Path(tempfile.mkdtemp(prefix="facedown-hostile-"))
    path.chmod(0o777)
    gdef = load_game("stratego")
    st = new_game("stratego")
    nb = st.topo.neighbours(frozenset(st.topo.all_kinds))
    (path / "graph.json").write_text(json.dumps({s: [n for n in nb[s] if st.topo.passable[n]] for s in gdef.station_ids}))
    for i, side in enumerate(gdef.sides):
        (path / f"{side}.json").write_text(json.dumps(built_setup(gdef, side, random.Random(10 + i))))
    for f in path.iterdir():
        f.chmod(0o666)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def engine(shared: Path, mode: str, side: str, *, py: str = sys.executable, journal: Path | None = None) -> str:
    """The command of a hostile engine (after ``cmd:``)."""
    cmd = f"{py} {ENGINE} {mode} --setup {shared / f'{side}.json'} --graph {shared / 'graph.json'} --report {shared / mode}"
    return cmd + (f" --journal {journal}" if journal else "")


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def assert_nothing_survives(shared: Path, mode: str) -> None:
    pids = [int((shared / f"{mode}{suffix}").read_text()) for suffix in (".pid", ".grandchild")
            if (shared / f"{mode}{suffix}").exists()]
    assert pids, "the engine said who it was"
    end = time.monotonic() + 3
    while any(alive(p) for p in pids) and time.monotonic() < end:
        time.sleep(0.02)
    assert not [p for p in pids if alive(p)], f"a process of the {mode} engine outlived the game"


def replays(journal_path: Path, game_id: int) -> Any:
    j = Journal(journal_path)
    try:
        return rebuild(j.events(game_id), journaled(j, game_id))
    finally:
        j.close()


# ---------------------------------------------------------------------------------------------- facedown match
@pytest.mark.parametrize("mode", sorted(FAILING))
def test_match_refuses_each_hostile_mode_with_its_reason(tmp_path: Path, shared: Path, mode: str,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "j.sqlite"
    t0 = time.monotonic()
    assert main(["match", "stratego", "--red", f"cmd:{engine(shared, mode, 'red')}", "--blue", "random", "--games", "1",
                 "--max-plies", "40", "--time-ms", "5000", "--journal", str(journal), "--json"]) == 0
    took = time.monotonic() - t0
    out = json.loads(capsys.readouterr().out)
    game = out["records"][0]
    why, words = FAILING[mode]
    assert [f["why"] for f in game["failures"]] == [why], game["failures"]
    assert words in game["failures"][0]["message"]
    assert "timeout" not in game["failures"][0]["message"] and "no answer" not in game["failures"][0]["message"]
    assert game["winners"] == ["blue"]
    assert took < 5.0 + 4.0, f"the breach was reported within the move's budget, not after {took:.1f} s"
    assert_nothing_survives(shared, mode)
    st = replays(journal, game["journal_id"])  # the game's journal is whole and replays to its end
    assert st.phase == "over" and st.result is not None and st.result.winners == ("blue",)


def test_a_detached_grandchild_does_not_outlive_the_match(tmp_path: Path, shared: Path,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "stratego", "--red", f"cmd:{engine(shared, 'fork', 'red')}", "--blue", "random", "--games", "1",
                 "--max-plies", "12", "--time-ms", "5000", "--json"]) == 0
    game = json.loads(capsys.readouterr().out)["records"][0]
    assert game["failures"] == [] and game["plies"] == 12  # it played: only what it left behind was ended
    assert (shared / "fork.grandchild").exists()
    assert_nothing_survives(shared, "fork")


def test_an_engine_that_stops_reading_never_blocks_the_referee(tmp_path: Path, shared: Path) -> None:
    bot = ProcessBot(engine(shared, "deaf", "red"), grace_s=0.5)
    try:
        record = __import__("controller.bots.arena", fromlist=["play_game"]).play_game(
            "stratego", {"red": bot, "blue": RandomBot()}, {"red": "deaf", "blue": "random"}, seed=1, max_plies=20,
            time_ms=300)
    finally:
        bot.close()
    assert [f["why"] for f in record.failures] == ["timeout"]
    assert_nothing_survives(shared, "deaf")


def test_the_engine_inherits_no_descriptor_and_no_secret(tmp_path: Path, shared: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FACEDOWN_CLUB_PASSWORD", SECRET)
    monkeypatch.setenv("MQTT_PASSWORD", SECRET)
    monkeypatch.setenv("API_TOKEN", SECRET)
    journal = tmp_path / "j.sqlite"
    assert main(["match", "stratego", "--red", f"cmd:{engine(shared, 'spy', 'red', journal=journal)}", "--blue", "random",
                 "--games", "1", "--max-plies", "4", "--journal", str(journal), "--json"]) == 0
    capsys.readouterr()
    report = json.loads((shared / "spy").read_text())
    for when in ("at_new_game", "at_setup", "at_move"):
        seen = report[when]
        assert set(seen["own_fds"]) <= {0, 1, 2, 3}, f"{when}: inherited descriptors {seen['own_fds']} (3: its listing)"
        assert SECRET not in json.dumps(seen["env"])
        allowed = set(ENV_ALLOWED) | {"HOME", "USER", "LOGNAME", "PYTHONUNBUFFERED"}
        assert {k for k in seen["env"] if not k.startswith("LC_")} <= allowed, seen["env"]
    assert prctl(3) == 0, "the referee made itself non-dumpable before the first engine started"
    assert_nothing_survives(shared, "spy")


@pytest.mark.skipif(not AS_ROOT or not Path(SYSTEM_PY).exists(), reason="needs root (to start the engine as nobody)")
def test_an_engine_run_as_its_own_user_cannot_read_the_journal_or_the_referee(tmp_path: Path, shared: Path,
                                                                               monkeypatch: pytest.MonkeyPatch,
                                                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("FACEDOWN_CLUB_PASSWORD", SECRET)
    journal = tmp_path / "j.sqlite"
    tmp_path.chmod(0o755)  # even a directory it may enter does not open the journal (0600, the referee's)
    cmd = engine(shared, "spy", "red", py=SYSTEM_PY, journal=journal)
    # a journal that already holds a game, both deployments and all (what the engine would like to read)
    assert main(["match", "stratego", "--red", "random", "--blue", "random", "--games", "1", "--max-plies", "4",
                 "--journal", str(journal)]) == 0
    capsys.readouterr()
    assert b"placement" in journal.read_bytes() or b"placement" in (tmp_path / "j.sqlite-wal").read_bytes()
    # the spy is no straw man: run as the referee's user (root here, whom nothing stops) it reads it all
    assert main(["match", "stratego", "--red", f"cmd:{cmd}", "--blue", "random", "--games", "1", "--max-plies", "4",
                 "--journal", str(journal)]) == 0
    capsys.readouterr()
    found = json.loads((shared / "spy").read_text())["at_setup"]["secrets"]
    assert any("holds a deployment" in s for s in found) and "the journal by its path" in found, found
    for left in shared.glob("spy*"):
        left.unlink()  # root's files: nobody may not write over them
    assert main(["match", "stratego", "--red", f"cmd:{cmd}", "--blue", "random", "--games", "1", "--max-plies", "4",
                 "--journal", str(journal), "--bot-user", "nobody", "--json"]) == 0
    rec = json.loads(capsys.readouterr().out)["records"][0]
    assert rec["plies"] > 0, rec["failures"]  # it played
    report = json.loads((shared / "spy").read_text())
    for when in ("at_new_game", "at_setup", "at_move"):
        seen = report[when]
        assert seen["secrets"] == [], f"{when}: {seen['secrets']}"
        assert str(seen["parent_fd_list"]).startswith("refused"), seen["parent_fd_list"]
        assert str(seen["parent_environ"]).startswith("refused")
        assert str(seen["journal"]).startswith("refused") and str(seen["journal.key"]).startswith("refused")
        assert seen["env"]["USER"] == "nobody" and SECRET not in json.dumps(seen["env"])
    assert_nothing_survives(shared, "spy")
    with pytest.raises(ValueError, match="no such user"):
        Jail(user="no-such-user-here").check()
    with pytest.raises(ValueError, match="that is root|referee's own user"):
        Jail(user=pwd.getpwuid(os.geteuid()).pw_name).check()


def test_limits_are_set_in_the_engine(shared: Path) -> None:
    harden_referee()
    bot = ProcessBot(f"{sys.executable} -c \"import resource,json,sys,os; sys.stdin.readline(); "
                     f"print(json.dumps({{'type':'hello','name':json.dumps([resource.getrlimit(resource.RLIMIT_AS)[0],"
                     f"resource.getrlimit(resource.RLIMIT_NOFILE)[0],resource.getrlimit(resource.RLIMIT_CORE)[0],"
                     f"os.getsid(0)==os.getpid(),os.nice(0),'NoNewPrivs:\\t1' in open('/proc/self/status').read()])}}), "
                     f"flush=True); sys.stdin.readline()\"",
                     jail=Jail(memory_mb=900, open_files=77, nice=5))
    try:
        bot._start()
        limits = json.loads(bot.name[4:])
    finally:
        bot.close()
    assert limits[:3] == [900 << 20, 77, 0] and limits[3] is True and limits[4] >= 5
    assert limits[5] is True, "no setuid program (sudo) gives it more rights"


# ---------------------------------------------------------------------------------------------- a table game
def _table_game(journal: Journal, bot: ProcessBot, holder: dict[str, Any], plies: int = 30) -> Iterator[str]:
    gdef = load_game("stratego")
    yield json.dumps({"setup": "red", "pieces": built_setup(gdef, "red", random.Random(3))})
    yield json.dumps({"bot_setup": "blue"})
    yield json.dumps({"tick_ms": 100})
    human = RandomBot()
    human.new_game("stratego", "red", gdef.resolve_options(), 3)
    for _ in range(6 * plies):
        session = holder["session"]
        seat = holder["seat"]
        st = session.state
        if st.phase != "play" or st.ply >= plies:
            return
        if session.recognizer.fixing:
            yield json.dumps({"fixup": True})
            continue
        if st.turn == "red":
            frm, to = human.choose_move(view(st, "red"), 100)
            steps = [{"lift": frm}, {"tick_ms": 100}] + ([{"lift": to}, {"tick_ms": 100}] if to in st.board else [])
            yield from map(json.dumps, [*steps, {"place": to}, {"tick_ms": 100}])
            continue
        if seat.failed is not None or seat.instruction is None:
            return  # the computer stopped: the arbiter takes it from here
        yield json.dumps({"bot_move": "blue"})
        yield json.dumps({"tick_ms": 100})


def _play_table(tmp_path: Path, shared: Path, mode: str, plies: int = 30) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    path = tmp_path / "table.sqlite"
    journal = Journal(path)
    bot = ProcessBot(engine(shared, mode, "blue", journal=path))
    holder: dict[str, Any] = {}
    events: list[dict[str, Any]] = []

    class Out:
        def write(self, s: str) -> int:
            events.extend(json.loads(x) for x in s.splitlines() if x.strip())
            return len(s)

        def flush(self) -> None:
            return None

    def on_session(session: Any, board: Any, computers: dict[str, Any]) -> None:
        holder["session"], holder["seat"] = session, computers["blue"]

    try:
        run_script("stratego", _table_game(journal, bot, holder, plies), Out(), journal=journal, seats={"blue": bot},
                   seed=1, on_session=on_session)  # type: ignore[arg-type]
    finally:
        journal.close()
    holder["path"] = path
    return holder, events


def _resumes(holder: dict[str, Any]) -> None:
    """The table's journal reopens on the same game, at the same ply, with both deployments."""
    st = holder["session"].state
    table = open_table("stratego", board=SimBoard(load_game("stratego").station_ids), board_kind="sim",
                       journal_path=holder["path"])
    try:
        assert table.state.ply == st.ply and table.state.phase == st.phase
        assert table.state.deployments == st.deployments
        assert {s: (p.owner, p.type) for s, p in table.state.board.items()} == \
            {s: (p.owner, p.type) for s, p in st.board.items()}
    finally:
        table.stop()


@pytest.mark.parametrize("mode", sorted(FAILING))
def test_a_computer_seat_refuses_each_hostile_mode_and_the_game_resumes(tmp_path: Path, shared: Path, mode: str) -> None:
    holder, events = _play_table(tmp_path, shared, mode)
    failed = [e for e in events if e["event"] == "bot" and e["kind"] == "failed"]
    why, words = FAILING[mode]
    assert [e["why"] for e in failed] == [why]
    detail = [e for e in holder["session"].log if e.public.get("kind") == "failed_detail"]
    assert words in detail[0].public["detail"] and detail[0].audience == ("arbiter",)
    assert holder["session"].state.phase == "play", "nothing of the game was lost: the arbiter carries on"
    assert_nothing_survives(shared, mode)
    _resumes(holder)


def test_a_computer_seat_that_forks_leaves_nothing_when_the_game_ends(tmp_path: Path, shared: Path) -> None:
    holder, events = _play_table(tmp_path, shared, "fork", plies=8)
    assert not [e for e in events if e["event"] == "bot" and e["kind"] == "failed"]
    assert holder["session"].state.ply >= 8
    assert_nothing_survives(shared, "fork")
    _resumes(holder)


def _ready(cli: Cli, ready: Path) -> None:
    cli.wait_until(ready.exists, "the referee to get ready", timeout=60)


@pytest.mark.skipif(not AS_ROOT or not Path(SYSTEM_PY).exists(), reason="needs root (to start the engine as nobody)")
def test_facedown_play_a_spying_engine_as_its_own_user_learns_nothing(tmp_path: Path, shared: Path) -> None:
    journal = tmp_path / "play.sqlite"
    red_file = shared / "red.json"
    ready = tmp_path / "ready"
    cmd = engine(shared, "spy", "blue", py=SYSTEM_PY, journal=journal)
    cli = Cli(["play", "stratego", "--journal", str(journal), "--no-web", "--announce", "none", "--new",
               "--setup", f"red={red_file}", "--seat", f"blue=bot:cmd:{cmd}", "--bot-user", "nobody",
               "--ready-file", str(ready)], env={"FACEDOWN_CLUB_PASSWORD": SECRET})
    try:
        _ready(cli, ready)
        cli.wait_until(lambda: "at_setup" in (json.loads((shared / "spy").read_text()) if (shared / "spy").exists()
                                              else {}), "the engine's report at setup", timeout=20)
    finally:
        assert cli.stop() == 0
    seen = json.loads((shared / "spy").read_text())["at_setup"]
    assert seen["secrets"] == [], seen["secrets"]
    assert str(seen["parent_fd_list"]).startswith("refused") and str(seen["journal"]).startswith("refused")
    assert seen["env"]["USER"] == "nobody" and SECRET not in json.dumps(seen["env"])
    assert "blue seat" not in cli.output.lower() or "played by the computer" in cli.output
    assert_nothing_survives(shared, "spy")
    st = replays(journal, 1)
    assert set(st.deployments) == {"red", "blue"}, "the journal holds both deployments, and the engine did not read them"


@pytest.mark.parametrize("mode", sorted(set(FAILING) - {"twice"}))
def test_facedown_play_with_a_hostile_computer_seat_stops_it_and_the_game_resumes(tmp_path: Path, shared: Path,
                                                                                   mode: str) -> None:
    """The real command: simulated players lay out the board and play red, the engine plays blue. (A second answer
    is caught at the next exchange, once its first is carried out on the board, which no one does here: the table
    game above carries it out.)"""
    journal = tmp_path / "play.sqlite"
    ready = tmp_path / "ready"
    args = ["play", "stratego", "--journal", str(journal), "--no-web", "--announce", "console",
            "--ready-file", str(ready)]
    cli = Cli([*args, "--new", "--demo-side", "red", "--pace", "0.005",
               "--seat", f"blue=bot:cmd:{engine(shared, mode, 'blue', journal=journal)}"])
    try:
        cli.wait_for("has stopped (it broke the bot protocol)", timeout=90)
        why, words = FAILING[mode]
        assert f"stopped ({why})" in cli.output and words in cli.output
        assert "gave no answer" not in cli.output
    finally:
        assert cli.stop() == 0
    assert_nothing_survives(shared, mode)
    st = replays(journal, 1)
    assert st.phase == "play" and st.ply >= 1 and set(st.deployments) == {"red", "blue"}
    ready.unlink(missing_ok=True)
    again = Cli(args)  # resumed: the arbiter (or a person) carries on from the journal
    try:
        again.wait_until(ready.exists, "the referee to get ready", timeout=60)
        assert f"game 1, play at ply {st.ply}" in again.output
    finally:
        assert again.stop() == 0


@pytest.mark.parametrize("mode", ["fork", "endless"])
def test_facedown_play_ends_the_engine_and_what_it_left_when_it_stops(tmp_path: Path, shared: Path, mode: str) -> None:
    journal = tmp_path / "play.sqlite"
    ready = tmp_path / "ready"
    args = ["play", "stratego", "--journal", str(journal), "--no-web", "--announce", "none",
            "--seat", f"blue=bot:cmd:{engine(shared, mode, 'blue')}", "--ready-file", str(ready)]
    cli = Cli([*args, "--new"])
    try:
        _ready(cli, ready)
        assert (shared / f"{mode}.pid").exists()
    finally:
        assert cli.stop() == 0
    assert_nothing_survives(shared, mode)
    ready.unlink()
    again = Cli(args)  # and the game resumes from its journal
    try:
        _ready(again, ready)
        assert "game 1, setup" in again.output
    finally:
        again.stop()
    assert_nothing_survives(shared, mode)


def test_signals_reach_no_one_else(shared: Path) -> None:
    """Ending an engine's tree never touches the referee's own process group or other children."""
    import subprocess

    other = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    bot = ProcessBot(engine(shared, "fork", "red"))
    try:
        bot._start()
        bot.new_game("stratego", "red", {}, 1)
        time.sleep(0.2)
    finally:
        bot.close()
    try:
        assert other.poll() is None, "a child of the referee that is no engine's was left alone"
        assert os.getpgid(0) == os.getpgid(os.getpid())
    finally:
        other.send_signal(signal.SIGKILL)
        other.wait()
    assert_nothing_survives(shared, "fork")


def test_the_engine_ends_with_the_game_and_comes_back_for_an_undo(shared: Path) -> None:
    """game_over ends it and all it started at once (a table's referee runs on after the game); asked again (the
    arbiter undid the last move), it is started afresh and told the same game."""
    bot = ProcessBot(engine(shared, "fork", "red"))
    bot.new_game("stratego", "red", {}, 1)
    first = int((shared / "fork.pid").read_text())
    bot.game_over(None)
    assert bot.proc is None
    assert_nothing_survives(shared, "fork")
    bot.observe({"game": "stratego", "audience": "red", "phase": "play", "turn": "blue", "ply": 9, "pieces": []})
    try:
        assert bot.proc is not None and int((shared / "fork.pid").read_text()) != first
        assert [line for d, line in bot.transcript if d == ">"][-3:-1] == [
            '{"type":"hello","protocol":1}', '{"type":"new_game","game":"stratego","seat":"red","options":{},"seed":1}']
    finally:
        bot.close()
    assert_nothing_survives(shared, "fork")


@pytest.mark.skipif(not AS_ROOT or not Path(SYSTEM_PY).exists(), reason="needs root (to start the engine as nobody)")
def test_an_engine_of_its_own_user_is_held_to_a_few_processes() -> None:
    bot = ProcessBot(f"{SYSTEM_PY} -c \"import resource,json,sys,os; sys.stdin.readline(); "
                     f"print(json.dumps({{'type':'hello','name':json.dumps([resource.getrlimit(resource.RLIMIT_NPROC)[0],"
                     f"os.getuid()])}}), flush=True); sys.stdin.readline()\"", jail=Jail(user="nobody"))
    try:
        bot._start()
        nproc, uid = json.loads(bot.name[4:])
    finally:
        bot.close()
    assert nproc == 64 and uid == pwd.getpwnam("nobody").pw_uid


def test_an_engines_name_cannot_carry_terminal_escapes() -> None:
    bot = ProcessBot(f"{sys.executable} -c \"import json,sys; sys.stdin.readline(); "
                     f"print(json.dumps({{'type':'hello','name':'\\x1b[2Jevil\\x07'}}), flush=True); sys.stdin.readline()\"")
    try:
        bot._start()
    finally:
        bot.close()
    assert bot.name == "cmd:[2Jevil"


def test_an_outside_engine_without_a_user_of_its_own_is_warned_of(shared: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["match", "stratego", "--red", f"cmd:{engine(shared, 'play', 'red')}", "--blue", "random", "--games", "1",
                 "--max-plies", "2"]) == 0
    assert "can read the journal by its path" in capsys.readouterr().err
    assert main(["match", "stratego", "--red", "random", "--blue", "random", "--games", "1", "--max-plies", "2"]) == 0
    assert "warning" not in capsys.readouterr().err


def test_an_engine_dies_with_a_killed_referee(tmp_path: Path, shared: Path) -> None:
    """kill -9 of the referee (no chance to clean up): the engine it started from its main thread goes too."""
    ready = tmp_path / "ready"
    cli = Cli(["play", "stratego", "--journal", str(tmp_path / "j.sqlite"), "--no-web", "--announce", "none", "--new",
               "--seat", f"blue=bot:cmd:{engine(shared, 'play', 'blue')}", "--ready-file", str(ready)])
    try:
        cli.wait_until(ready.exists, "the referee to get ready", timeout=60)
        pid = int((shared / "play.pid").read_text())
        assert alive(pid)
        cli.proc.send_signal(signal.SIGKILL)
        cli.proc.wait(10)
        end = time.monotonic() + 5
        while alive(pid) and time.monotonic() < end:
            time.sleep(0.02)
        assert not alive(pid), "the engine outlived its killed referee"
    finally:
        cli.stop()


def test_an_engine_that_writes_stderr_without_end_still_plays(shared: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Only the end of its stderr is kept, and reading it never holds the referee: the game goes on."""
    assert main(["match", "stratego", "--red", f"cmd:{engine(shared, 'noise', 'red')}", "--blue", "random", "--games", "1",
                 "--max-plies", "20", "--time-ms", "5000", "--json"]) == 0
    game = json.loads(capsys.readouterr().out)["records"][0]
    assert game["failures"] == [] and game["plies"] == 20
    assert_nothing_survives(shared, "noise")
