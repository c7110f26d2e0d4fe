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
