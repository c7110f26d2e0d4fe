"""The flashing steps of docs/firmware.md, followed as written: the config step writes the file the copy step copies,
`facedown firmware flash` hands mpremote that same config (a stand-in mpremote on PATH records what it was asked),
and every command takes a profile by name or by file alike."""

from __future__ import annotations

import json
import os
import re
import shlex
import stat
import sys
from pathlib import Path

import pytest

from controller.cli import main
from controller.hardware.build import config_json, design, firmware_config
from controller.sensing.profile import find_profile

DOC = Path(__file__).resolve().parent.parent / "docs" / "firmware.md"


def _step(n: int) -> str:
    text = DOC.read_text(encoding="utf-8")
    m = re.search(rf"^{n}\. (.*?)(?=^\d+\. |^## )", text, re.S | re.M)
    assert m, f"docs/firmware.md has no step {n}"
    return m.group(1)


def test_the_config_step_writes_the_file_the_copy_step_copies(tmp_path: Path, monkeypatch, capsys) -> None:  # noqa: ANN001
    config_cmd = re.search(r"`(facedown firmware config PROFILE[^`]*)`", _step(4)).group(1)
    copy_cmd = re.search(r"`(mpremote cp [^`]*)`", _step(5)).group(1)
    args = shlex.split(config_cmd.replace("PROFILE", "stratego-pico"))[1:]
    out = args[args.index("--out") + 1]
    copied = shlex.split(copy_cmd)
    sources = [copied[i + 1] for i, w in enumerate(copied) if w == "cp" and copied[i + 2] == ":config.json"]
    assert sources == [out], f"step 5 copies {sources}, step 4 writes {out}"
    assert "firmware/config.json" not in sources, "never the shipped example"
    monkeypatch.chdir(tmp_path)
    assert main(args) == 0
    assert json.loads((tmp_path / out).read_text()) == firmware_config(design(find_profile("stratego-pico")))
    assert f"cp {out} :config.json" in capsys.readouterr().out
    assert "pipx install mpremote" in _step(1) and "'.[flash]'" in _step(1), "Bookworm: a venv extra or pipx"


def test_flash_hands_mpremote_the_profiles_config(tmp_path: Path, monkeypatch, capsys) -> None:  # noqa: ANN001
    log = tmp_path / "calls.json"
    tool = tmp_path / "bin" / "mpremote"
    tool.parent.mkdir()
    tool.write_text(f"#!{sys.executable}\nimport json, sys, pathlib\nargs = sys.argv[1:]\n"
                    "cfg = args[args.index(':config.json') - 1]\n"
                    f"pathlib.Path({str(log)!r}).write_text(json.dumps({{'args': args, 'config': "
                    "pathlib.Path(cfg).read_text()}))\n", encoding="utf-8")
    tool.chmod(tool.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{tool.parent}{os.pathsep}{os.environ.get('PATH', '')}")
    master, slave = os.openpty()
    try:
        port = os.ttyname(slave)
        assert main(["firmware", "flash", "siguo", "--port", port]) == 0, capsys.readouterr().err
    finally:
        os.close(master)
        os.close(slave)
    call = json.loads(log.read_text())
    assert call["args"][:3] == ["connect", port, "cp"] and call["args"][-2:] == ["+", "reset"]
    assert call["config"] == config_json(firmware_config(design(find_profile("siguo"))))
    assert "hw-test --board serial --profile siguo" in capsys.readouterr().out


@pytest.mark.parametrize("how", ["name", "file"])
def test_every_command_takes_a_profile_by_name_or_file(how: str, tmp_path: Path, capsys) -> None:  # noqa: ANN001
    prof = find_profile("stratego-pico")
    given = "stratego-pico" if how == "name" else prof.file
    assert main(["bom", "--profile", given]) == 0
    assert main(["firmware", "config", given, "--out", "-"]) == 0
    assert main(["print-board", "--profile", given, "--wiring"]) == 0
    assert main(["print-board", "--profile", given, "--out", str(tmp_path / "b.svg")]) == 0
    root = tmp_path / "root"
    assert main(["service", "install", "--profile", given, "--root", str(root), "--user", "pi",
                 "--scanner-serial", "E6614103E7452D2F"]) == 0
    unit = next(root.rglob("facedown.service")).read_text(encoding="utf-8")
    assert f"--profile {prof.file}" in unit and "--board serial" in unit, "the unit names the profile's file"
    capsys.readouterr()
    for cmd in (["bom", "--profile"], ["print-board", "--out", str(tmp_path / "c.svg"), "--profile"],
                ["hw-test", "--profile"]):
        assert main([*cmd, "no-such-board"]) == 2, cmd
        assert "shipped profiles: " in capsys.readouterr().err, cmd


def test_hw_test_picks_the_board_the_profile_is_wired_for_and_refuses_the_other(capsys) -> None:  # noqa: ANN001
    """A first-timer's slips: `--board gpio` on a Pico build (a traceback in hw-test and play), a station that is not
    the game's, and a profile name that is neither a file nor shipped."""
    assert main(["hw-test", "--board", "gpio", "--profile", "siguo"]) == 2
    assert "siguo.yaml is wired for a Pico scanner over USB: use --board serial" in capsys.readouterr().err
    assert main(["play", "--board", "gpio", "--profile", "stratego-pico", "--no-web"]) == 2
    assert "stratego-pico.yaml is wired for a Pico scanner over USB: use --board serial" in capsys.readouterr().err
    assert main(["hw-test", "--profile", "stratego-pico", "--stations", "zz9"]) == 2
    assert "zz9: not stations of stratego" in capsys.readouterr().err
    assert main(["print-board", "--profile", "stratego-pic", "--out", "x.svg"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("facedown print-board: stratego-pic: (name): no such file here and no shipped profile of that "
                          "name; a profile file (my-board.yaml) or one of the shipped profiles: "), err
