"""`facedown service install` and outside engines: the unit runs computer seats with --bot-user, install creates that
user and a sudoers rule (0440, checked by visudo) that lets the referee's user become it and no one else; the user
install would create really runs an engine that cannot read the journal."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from controller.bots.jail import Jail
from controller.bots.process import ProcessBot
from controller.cli import main
from controller.hardware import service
from controller.hardware.service import BOT_USER, SUDOERS_DIR, UNIT_DIR, UNIT_NAME


def exec_start(root: Path) -> list[str]:
    text = (root / UNIT_DIR / UNIT_NAME).read_text()
    return next(ln for ln in text.splitlines() if ln.startswith("ExecStart=")).split()


def test_install_runs_computer_seats_as_the_bot_user(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["service", "install", "--game", "luzhanqi", "--root", str(tmp_path), "--user", "pi",
                 "--seat", "blue=bot:cmd:/opt/engines/xq --level 3"]) == 0
    out = capsys.readouterr().out
    args = exec_start(tmp_path)
    assert args[args.index("--bot-user") + 1] == BOT_USER
    assert '"blue=bot:cmd:/opt/engines/xq' in " ".join(args)  # quoted for systemd: one argument
    rule = tmp_path / SUDOERS_DIR / BOT_USER
    assert stat.S_IMODE(rule.stat().st_mode) == 0o440
    text = rule.read_text()
    assert "pi ALL=(facedown-bot) NOPASSWD: ALL" in text and "root" not in text.split("\n", 3)[-1]
    assert f"skip (not the real root): visudo -c -f /{SUDOERS_DIR / BOT_USER}" in out
    if not service.user_exists(BOT_USER):
        assert "useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin" in out
    assert main(["service", "uninstall", "--root", str(tmp_path)]) == 0
    assert not rule.exists()


def test_install_without_a_bot_user_and_bad_names(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["service", "install", "--game", "stratego", "--root", str(tmp_path), "--user", "pi", "--no-bot-user"]) == 0
    assert "--bot-user" not in exec_start(tmp_path)
    assert not (tmp_path / SUDOERS_DIR / BOT_USER).exists()
    capsys.readouterr()
    assert main(["service", "install", "--game", "stratego", "--root", str(tmp_path / "b"), "--user", "pi",
                 "--bot-user", "Bad User;"]) == 2
    assert "expected lower-case letters" in capsys.readouterr().err
    assert main(["service", "install", "--game", "stratego", "--root", str(tmp_path / "c"), "--user", "pi",
                 "--bot-user", "pi"]) == 2
    assert "referee's own user" in capsys.readouterr().err
    assert main(["service", "install", "--game", "stratego", "--root", str(tmp_path / "d"), "--user", "pi",
                 "--seat", "green=bot:random"]) == 2
    assert "no seat 'green'" in capsys.readouterr().err


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("useradd") is None or not Path("/usr/bin/python3").exists(),
                    reason="needs root and useradd")
def test_the_user_install_creates_runs_an_engine_that_cannot_read_the_journal(tmp_path: Path) -> None:
    name = "fd-bot-test"
    cfg = service.ServiceConfig(game="stratego", board="gpio", profile=None, user="root", facedown="/f", workdir="/w",
                                bot_user=name)
    plan = service.install_plan(cfg, tmp_path)
    (useradd,) = [c for c in plan.commands if c[0] == "useradd"] or [None]
    if useradd is None:
        pytest.skip(f"{name} exists already")
    assert subprocess.run(list(useradd), check=False).returncode == 0  # the very command install runs
    here = Path(tempfile.mkdtemp(prefix="facedown-bot-user-"))  # a directory any user may enter (tmp_path is not)
    here.chmod(0o755)
    try:
        journal = here / "journal.sqlite"
        journal.write_text('{"deploy": {"placement": {"a1": "flag"}}}')
        journal.chmod(0o600)  # as the journal makes it
        probe = here / "probe.py"
        probe.write_text(
            "import json, os, sys\n"
            "sys.stdin.readline()\n"
            "try:\n    open(sys.argv[1]).read(); got = 'read it'\n"
            "except OSError as e:\n    got = e.strerror\n"
            "print(json.dumps({'type': 'hello', 'name': json.dumps([got[:20], os.getuid(), [k for k in os.environ if 'FACEDOWN' in k]])}), flush=True)\n"
            "sys.stdin.readline()\n")
        probe.chmod(0o644)
        bot = ProcessBot(f"/usr/bin/python3 {probe} {journal}", jail=Jail(user=name))
        try:
            bot._start()
            got, uid, env = json.loads(bot.name[4:])
        finally:
            bot.close()
        import pwd

        assert got == "Permission denied" and uid == pwd.getpwnam(name).pw_uid != 0
        assert not any(k.startswith("FACEDOWN") for k in env)
    finally:
        subprocess.run(["userdel", name], check=False, stderr=subprocess.DEVNULL)
        shutil.rmtree(here, ignore_errors=True)


SUDO_REFEREE = r'''
import json, os, sys, time
sys.path.insert(0, sys.argv[1])
from controller.bots.jail import Jail
from controller.bots.process import ProcessBot

engine, setup, graph, report, journal, bot_user = sys.argv[2:8]
# (the game files need an installed FaceDown: this referee only needs the pipes, so it hands a view by hand)
seen = {"game": "stratego", "audience": "red", "phase": "setup", "turn": None, "ply": 0, "pieces": []}
bot = ProcessBot(f"/usr/bin/python3 {engine} fork --setup {setup} --graph {graph} --report {report}", jail=Jail(user=bot_user))
bot.new_game("stratego", "red", {}, 1)
spy = ProcessBot(f"/usr/bin/python3 {engine} spy --setup {setup} --graph {graph} --report {report}.spy --journal {journal}",
                 jail=Jail(user=bot_user))
spy.new_game("stratego", "red", {}, 1)
spy.choose_setup(seen, 1000)
spy.close()
held = open(journal, "rb")  # the referee holds its journal open, as a table does
same = ProcessBot(f"/usr/bin/python3 {engine} spy --setup {setup} --graph {graph} --report {report}.same "
                  f"--journal {journal}")  # the referee's own user, no --bot-user
same.new_game("stratego", "red", {}, 1)
same.choose_setup(seen, 1000)
same.close()
time.sleep(0.2)
bot.close()
try:
    Jail(user="nobody").check()  # a user the sudoers rule does not name
    refused = ""
except ValueError as exc:
    refused = str(exc)
print(json.dumps({"ended": sorted(bot.ended), "me": os.getuid(), "refused": refused}))
'''


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("sudo") is None or shutil.which("useradd") is None
                    or not Path("/usr/bin/python3").exists(), reason="needs root, sudo and useradd")
def test_a_referee_that_is_not_root_starts_and_ends_engines_through_sudo() -> None:
    """The service's way: the referee (not root) starts the engine as the bot user through the sudoers rule install
    writes; the engine reads nothing of the referee's, and it and its detached grandchild end with the game."""
    import pwd
    import random

    from controller.bots.setups import built_setup
    from controller.rules import load_game, new_game

    root = Path(__file__).resolve().parents[1]
    try:
        __import__("yaml")
        subprocess.run(["/usr/bin/python3", "-c", "import yaml"], check=True, capture_output=True)
    except (ImportError, subprocess.CalledProcessError):
        pytest.skip("the system Python has no PyYAML to run a referee with")
    referee, bot_user = "fd-ref-test", "fd-bot-test2"
    here = Path(tempfile.mkdtemp(prefix="facedown-sudo-"))
    here.chmod(0o777)
    rule = Path("/etc/sudoers.d/fd-sudo-test")
    try:
        for name in (referee, bot_user):
            if not service.user_exists(name):
                subprocess.run(["useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent", "--shell",
                                "/usr/sbin/nologin", "--user-group", name], check=True)
        cfg = service.ServiceConfig(game="stratego", board="gpio", profile=None, user=referee, facedown="/f",
                                    workdir="/w", bot_user=bot_user)
        rule.write_text(service.render_sudoers(cfg))
        rule.chmod(0o440)
        assert subprocess.run(["visudo", "-c", "-f", str(rule)], capture_output=True).returncode == 0
        gdef, st = load_game("stratego"), new_game("stratego")
        nb = st.topo.neighbours(frozenset(st.topo.all_kinds))
        (here / "graph.json").write_text(json.dumps({s: list(nb[s]) for s in gdef.station_ids}))
        (here / "red.json").write_text(json.dumps(built_setup(gdef, "red", random.Random(1))))
        journal = here / "journal.sqlite"
        journal.write_text('{"kind": "deploy", "placement": {"a1": "flag"}}')
        os.chown(journal, pwd.getpwnam(referee).pw_uid, -1)
        journal.chmod(0o600)
        for f in here.iterdir():
            if f != journal:
                f.chmod(0o666)
        script = here / "referee.py"
        script.write_text(SUDO_REFEREE)
        script.chmod(0o644)
        out = subprocess.run(["sudo", "-n", "-u", referee, "--", "/usr/bin/env", "FACEDOWN_CLUB_PASSWORD=s3cret",
                              "/usr/bin/python3", str(script), str(root),
                              str(root / "tests" / "hostile_engine.py"), str(here / "red.json"), str(here / "graph.json"),
                              str(here / "fork"), str(journal), bot_user], capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr[-2000:]
        result = json.loads(out.stdout.strip().splitlines()[-1])
        assert result["me"] == pwd.getpwnam(referee).pw_uid
        assert f"{referee} may not start programs as nobody" in result["refused"]
        grandchild = int((here / "fork.grandchild").read_text())
        engine_pid = int((here / "fork.pid").read_text())
        time.sleep(0.3)
        for pid in (grandchild, engine_pid):
            assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1][:3]
        seen = json.loads((here / "fork.spy").read_text())["at_setup"]
        assert seen["secrets"] == [] and str(seen["journal"]).startswith("refused")
        assert str(seen["parent_fd_list"]).startswith("refused") and seen["env"]["USER"] == bot_user
        # the referee's own user, not root: non-dumpable keeps /proc/<referee> shut, the environment is clean; the
        # journal by its path is open to it, as docs/bots.md says (hence --bot-user)
        same = json.loads((here / "fork.same").read_text())["at_setup"]
        assert str(same["parent_fd_list"]).startswith("refused"), same["parent_fd_list"]
        assert str(same["parent_environ"]).startswith("refused") and "s3cret" not in json.dumps(same["env"])
        assert same["env"]["USER"] == referee and same["secrets"] == ["the journal by its path"]
    finally:
        rule.unlink(missing_ok=True)
        for name in (referee, bot_user):
            subprocess.run(["pkill", "-KILL", "-u", name], check=False)
            subprocess.run(["userdel", name], check=False, stderr=subprocess.DEVNULL)
        shutil.rmtree(here, ignore_errors=True)
