"""The boot-time service: unit and udev rule render into a temporary root, pass systemd-analyze verify when it is
installed, enable as systemctl would, uninstall cleanly; real installs need root and run the right commands."""

from __future__ import annotations

import configparser
import shutil
from pathlib import Path

import pytest

from controller.cli import main
from controller.hardware import service
from controller.hardware.service import UDEV_DIR, UDEV_NAME, UNIT_DIR, UNIT_NAME, WANTS_DIR
from controller.rules import load_game


def unit_of(root: Path) -> configparser.ConfigParser:
    cp = configparser.ConfigParser(strict=False, interpolation=None)
    cp.optionxform = str  # type: ignore[assignment,method-assign]
    cp.read(root / UNIT_DIR / UNIT_NAME)
    return cp


def test_install_renders_unit_rule_and_enable_link(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    assert main(["service", "install", "--game", "luzhanqi", "--root", str(tmp_path), "--user", "pi"]) == 0
    out = capsys.readouterr().out
    assert "skip (not the real root): systemctl enable facedown.service" in out
    unit = unit_of(tmp_path)
    exec_start = unit["Service"]["ExecStart"].split()
    assert exec_start[1:5] == ["play", "luzhanqi", "--board", "gpio"]
    assert Path(exec_start[0]).name == "facedown" and Path(exec_start[0]).is_absolute()
    profile = exec_start[exec_start.index("--profile") + 1]
    assert Path(profile).is_absolute() and profile.endswith("hardware/profiles/luzhanqi.yaml")
    assert "--new" not in exec_start, "play resumes the journal's unfinished game at boot"
    assert exec_start[exec_start.index("--announce") + 1] == "console,buzzer"
    assert unit["Service"]["User"] == "pi" and unit["Service"]["Restart"] == "on-failure"
    assert unit["Service"]["RestartPreventExitStatus"] == "4"  # a damaged journal waits for the arbiter
    assert unit["Install"]["WantedBy"] == "multi-user.target"
    link = tmp_path / WANTS_DIR / UNIT_NAME
    assert link.is_symlink() and str(link.readlink()) == f"/{UNIT_DIR}/{UNIT_NAME}"
    assert not (tmp_path / UDEV_DIR / UDEV_NAME).exists(), "a GPIO board has no scanner to name"
    assert main(["service", "uninstall", "--root", str(tmp_path)]) == 0
    assert not (tmp_path / UNIT_DIR / UNIT_NAME).exists() and not link.is_symlink()
    assert not (tmp_path / UDEV_DIR / UDEV_NAME).exists()


def test_serial_board_uses_the_stable_scanner_name(tmp_path: Path) -> None:
    scanner = tmp_path / "pico.yaml"
    stations = load_game("luzhanqi").station_ids
    scanner.write_text("format: 1\ngame: luzhanqi\nsensing: hybrid\nscanner: {kind: matrix, usb_vid: 0x2E8A, usb_pid: 0x000A}\n"
                       "pins: {buzzer: 18}\nchannels:\n" + "".join(f"  {s}: {i}\n" for i, s in enumerate(stations)))
    root = tmp_path / "root"
    assert main(["service", "install", "--profile", str(scanner), "--root", str(root), "--user", "club",
                 "--scanner-serial", "E6614103E7452D2F"]) == 0
    exec_start = unit_of(root)["Service"]["ExecStart"].split()
    assert exec_start[exec_start.index("--board") + 1] == "serial"
    assert exec_start[exec_start.index("--port-path") + 1] == "/dev/facedown-scanner"
    rule = (root / UDEV_DIR / UDEV_NAME).read_text()
    assert 'ATTRS{idVendor}=="2e8a", ATTRS{idProduct}=="000a", ATTRS{serial}=="E6614103E7452D2F"' in rule
    assert 'SYMLINK+="facedown-scanner"' in rule


def test_udev_rule_names_this_boards_pico_only(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    """Without a serial number and with no scanner plugged in, install refuses with the reason; a bad serial too."""
    from controller.hardware.usb import scanners

    root = tmp_path / "root"
    if not scanners(0x2E8A, 0x0005):
        assert main(["service", "install", "--game", "siguo", "--root", str(root), "--user", "pi"]) == 2
        err = capsys.readouterr().err
        assert "no scanner attached" in err and "--scanner-serial" in err
        assert not (root / UDEV_DIR / UDEV_NAME).exists()
    assert main(["service", "install", "--game", "siguo", "--root", str(root), "--user", "pi",
                 "--scanner-serial", 'x" RUN+="/bin/sh']) == 2
    assert "expected the USB serial number" in capsys.readouterr().err
    cfg = service.ServiceConfig(game="siguo", board="serial", profile="/p.yaml", user="pi", facedown="/f", workdir="/w",
                                port="/dev/facedown-scanner")
    with pytest.raises(service.ServiceError, match="plug the scanner in, or give --scanner-serial"):
        service.render_udev_rule(cfg)


def fake_sysfs(root: Path, ports: dict[str, tuple[str, str, str]]) -> Path:
    """A /sys tree as Linux lays it out for USB serial ports: class/tty/NAME/device -> the USB interface directory,
    whose parent (the USB device) holds idVendor, idProduct and serial."""
    for i, (name, (vid, pid, serial)) in enumerate(ports.items()):
        dev = root / "devices" / "platform" / "usb1" / f"1-{i + 1}"
        intf = dev / f"1-{i + 1}:1.0"
        intf.mkdir(parents=True)
        for key, value in (("idVendor", vid), ("idProduct", pid), ("serial", serial), ("product", "Board in FS mode")):
            (dev / key).write_text(value + "\n")
        tty = root / "class" / "tty" / name
        tty.mkdir(parents=True)
        (tty / "device").symlink_to(intf)
    (root / "class" / "tty" / "ttyS0").mkdir(parents=True)  # a UART: no USB device above it
    return root


def test_scanners_are_found_by_usb_id_with_their_serial(tmp_path: Path) -> None:
    from controller.hardware import usb

    sysfs = fake_sysfs(tmp_path / "sys", {"ttyACM0": ("2e8a", "0005", "E66141"), "ttyACM1": ("2e8a", "0005", "E66142"),
                                          "ttyUSB0": ("0403", "6001", "FT1")})
    found = usb.scanners(0x2E8A, 0x0005, sysfs)
    assert [(p.device, p.serial) for p in found] == [("/dev/ttyACM0", "E66141"), ("/dev/ttyACM1", "E66142")]
    with pytest.raises(usb.UsbError, match="2 scanners attached .*ttyACM0 \\(serial E66141\\)"):
        usb.one_scanner(0x2E8A, 0x0005, sysfs)
    assert usb.one_scanner(0x0403, 0x6001, sysfs).serial == "FT1"
    assert usb.serial_of_port("/dev/ttyACM1", sysfs) == "E66142"
    with pytest.raises(usb.UsbError, match="no scanner attached"):
        usb.one_scanner(0x2E8A, 0x000A, sysfs)


@pytest.mark.skipif(shutil.which("systemd-analyze") is None, reason="systemd-analyze is not installed")
def test_unit_passes_systemd_analyze_verify(tmp_path: Path) -> None:
    assert main(["service", "install", "--game", "stratego", "--root", str(tmp_path), "--user", "root"]) == 0
    result = service.verify_unit(tmp_path / UNIT_DIR / UNIT_NAME)
    assert result is not None
    ok, output = result
    assert ok and "facedown.service" not in output, output
    broken = tmp_path / "broken" / UNIT_NAME
    broken.parent.mkdir()
    broken.write_text((tmp_path / UNIT_DIR / UNIT_NAME).read_text().replace("ExecStart=", "ExecStrat="))
    assert service.verify_unit(broken)[0] is False or "ExecStrat" in service.verify_unit(broken)[1]


def test_bad_arguments_are_clear(tmp_path: Path, capsys) -> None:  # noqa: ANN001
    assert main(["service", "install", "--root", str(tmp_path)]) == 2
    assert "give --game GAME or --profile FILE" in capsys.readouterr().err
    profile = str(Path(__file__).resolve().parent.parent / "hardware" / "profiles" / "stratego.yaml")
    assert main(["service", "install", "--game", "luzhanqi", "--profile", profile, "--root", str(tmp_path)]) == 2
    assert "for 'stratego', not 'luzhanqi'" in capsys.readouterr().err
    assert main(["service", "install", "--game", "stratego", "--board", "serial", "--root", str(tmp_path)]) == 2
    assert "use --board gpio" in capsys.readouterr().err


def test_real_install_needs_root_and_runs_systemctl(tmp_path: Path) -> None:
    cfg = service.ServiceConfig(game="stratego", board="gpio", profile="/p.yaml", user="pi", facedown="/usr/bin/facedown",
                                workdir="/srv/facedown")
    plan = service.install_plan(cfg, tmp_path, start=True)
    with pytest.raises(service.ServiceError, match="needs root: run it with sudo"):
        service.apply(plan, real=True, euid=lambda: 1000, say=lambda s: None)
    assert not (tmp_path / UNIT_DIR / UNIT_NAME).exists(), "nothing is written when refused"
    ran: list[tuple[str, ...]] = []
    said: list[str] = []
    service.apply(plan, real=True, euid=lambda: 0, say=said.append, run=lambda c: ran.append(tuple(c)) or 0)
    assert ran[:2] == [("systemctl", "daemon-reload"), ("systemctl", "enable", UNIT_NAME)]
    assert ("systemctl", "restart", UNIT_NAME) in ran
    assert any(s.startswith("run systemctl enable") for s in said), "it prints what it does"
    assert (tmp_path / UNIT_DIR / UNIT_NAME).exists()
    assert not (tmp_path / WANTS_DIR / UNIT_NAME).exists(), "on the real root systemctl makes the link"
    with pytest.raises(service.ServiceError, match="systemctl daemon-reload failed with exit status 1"):
        service.apply(plan, real=True, euid=lambda: 0, say=lambda s: None, run=lambda c: 1)
    warned: list[str] = []
    service.apply(plan, real=True, euid=lambda: 0, say=warned.append, run=lambda c: 1 if c[0] == "udevadm" else 0)
    assert any(w.startswith("warning: udevadm") for w in warned), "a udev reload that fails is only a warning"
    ran.clear()
    service.apply(service.uninstall_plan(tmp_path), real=True, euid=lambda: 0, say=lambda s: None, run=lambda c: ran.append(tuple(c)) or 0)
    assert ran[0] == ("systemctl", "disable", "--now", UNIT_NAME) and not (tmp_path / UNIT_DIR / UNIT_NAME).exists()


def test_exec_start_quotes_paths_with_spaces() -> None:
    cfg = service.ServiceConfig(game="stratego", board="gpio", profile="/home/club board/p.yaml", user="pi",
                                facedown="/usr/bin/facedown", workdir="/srv")
    line = next(ln for ln in service.render_unit(cfg).splitlines() if ln.startswith("ExecStart="))
    assert '"/home/club board/p.yaml"' in line
