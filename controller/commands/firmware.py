"""`facedown firmware`: the scanner's config.json made from a hardware profile, and flashing it with mpremote.

    facedown firmware config PROFILE [--out FILE]   write config.json for the profile's build (- for stdout)
    facedown firmware flash PROFILE [--port DEV]    copy firmware/ and that config onto the Pico, then reset it
    facedown firmware list                          the Picos plugged in, with their serial numbers
    facedown firmware profile GAME --build B        write a starting profile for a game and build
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from controller.errors import FaceDownError

PICO_VID, PICO_PID = 0x2E8A, 0x0005
#: RP2040's boot ROM (BOOTSEL held at power-on): a USB drive, not a serial port; MicroPython is not on it yet.
BOOTSEL_PID = 0x0003


class FirmwareError(FaceDownError, RuntimeError):
    """Flashing or configuring cannot go on: a profile without a scanner, no Pico, no mpremote."""


def _clear_errors(func):  # noqa: ANN001, ANN202 - a command runner
    """Run a subcommand; any FaceDownError it raises (FirmwareError, UsbError, a profile's ProfileError...) becomes
    one line on stderr and exit status 2."""

    def run(args: argparse.Namespace) -> int:
        try:
            return func(args)
        except FaceDownError as exc:
            print(f"facedown firmware: {exc}", file=sys.stderr)
            return 2

    run.__doc__ = func.__doc__
    return run


def register(sub: argparse._SubParsersAction) -> None:
    from controller.hardware.build import BUILDS

    p = sub.add_parser("firmware", help="the Pico scanner's config.json from a hardware profile, and flashing it")
    fsub = p.add_subparsers(dest="action", metavar="ACTION")
    fsub.required = True
    c = fsub.add_parser("config", help="write the scanner's config.json for a profile")
    c.add_argument("profile", help="hardware profile: a file, or a shipped profile's name (facedown firmware config siguo)")
    c.add_argument("--out", default="config.json", help="file to write (default config.json here; - prints it)")
    c.set_defaults(func=_clear_errors(run_config))
    f = fsub.add_parser("flash", help="copy firmware/ and the profile's config.json onto the Pico with mpremote")
    f.add_argument("profile", help="hardware profile: a file, or a shipped profile's name")
    f.add_argument("--port", help="the Pico's serial device (default: the one Pico plugged in)")
    f.add_argument("--dry-run", action="store_true", help="print the mpremote command and the config; run nothing")
    f.set_defaults(func=_clear_errors(run_flash))
    ls = fsub.add_parser("list", help="the Picos running MicroPython that are plugged in, with their serial numbers")
    ls.set_defaults(func=_clear_errors(run_list))
    pr = fsub.add_parser("profile", help="write a starting hardware profile for a game and build")
    pr.add_argument("game", help="game id")
    pr.add_argument("--build", choices=[b for b in BUILDS], required=True, help="which build")
    pr.add_argument("--out", default="-", help="file to write (default: print it)")
    pr.set_defaults(func=_clear_errors(run_profile))


def firmware_dir() -> Path:
    """firmware/ of this checkout."""
    import controller

    return Path(controller.__file__).resolve().parent.parent / "firmware"


def firmware_files(directory: Path | None = None) -> list[Path]:
    """The files the Pico needs: every fd_*.py module and main.py (sorted)."""
    directory = firmware_dir() if directory is None else directory
    files = sorted(directory.glob("fd_*.py")) + [directory / "main.py"]
    missing = [f for f in files if not f.is_file()]
    if missing or len(files) < 2:
        raise FirmwareError(f"{directory}: the firmware files are missing ({', '.join(map(str, missing)) or 'fd_*.py'})")
    return files


def _design(profile_arg: str):  # noqa: ANN202 - (Design, config dict)
    from controller.hardware.build import BuildError, design, firmware_config
    from controller.sensing.profile import find_profile

    profile = find_profile(profile_arg)
    try:
        d = design(profile)
        return d, firmware_config(d)
    except BuildError as exc:
        raise FirmwareError(f"{exc}") from None


def run_config(args: argparse.Namespace) -> int:
    from controller.hardware.build import config_json

    d, cfg = _design(args.profile)
    text = config_json(cfg)
    if args.out == "-":
        sys.stdout.write(text)
        return 0
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    print(f"wrote {out}: {d.profile.id} ({d.build}), {cfg['channels']} channels, sensing {cfg['sensing']}")
    print(f"copy it with the firmware: facedown firmware flash {args.profile} (or by hand, from the checkout: mpremote cp "
          f"firmware/fd_*.py firmware/main.py : + cp {out} :config.json)")
    return 0


def mpremote_command() -> list[str] | None:
    """How to run mpremote: the tool on PATH, or beside this Python (a virtual environment); None when absent."""
    found = shutil.which("mpremote") or shutil.which("mpremote", path=str(Path(sys.executable).parent))
    return [found] if found else None


def _bootsel_attached(sys_root: Path = Path("/sys")) -> bool:
    base = sys_root / "bus" / "usb" / "devices"
    for dev in base.iterdir() if base.is_dir() else ():
        try:
            ids = ((dev / "idVendor").read_text().strip(), (dev / "idProduct").read_text().strip())
        except OSError:
            continue
        if ids == (f"{PICO_VID:04x}", f"{BOOTSEL_PID:04x}"):
            return True
    return False


def pico_port(port: str | None, vid: int, pid: int) -> str:
    """The Pico's serial device: ``port`` if given (it must exist), else the one attached Pico."""
    from controller.hardware.usb import UsbError, scanners

    if port:
        if not Path(port).exists():
            raise FirmwareError(f"--port {port}: no such device (is the Pico plugged in? "
                             f"facedown firmware list shows the ones that are)")
        return port
    found = scanners(vid, pid)
    if not found:
        hint = (" A Pico in BOOTSEL mode is attached: copy MicroPython's UF2 onto its RPI-RP2 drive first "
                "(docs/firmware.md, step 2)." if _bootsel_attached() else
                " Plug it in with a data cable (a charge-only cable shows nothing); a new Pico needs MicroPython "
                "first (docs/firmware.md, step 2).")
        raise FirmwareError(f"no Pico attached: no USB serial device {vid:04x}:{pid:04x} (a Pico running "
                         f"MicroPython) is plugged in.{hint}")
    if len(found) > 1:
        raise UsbError(f"{len(found)} Picos attached ({', '.join(p.device for p in found)}): give --port")
    return found[0].device


def run_flash(args: argparse.Namespace) -> int:
    from controller.hardware.build import config_json

    d, cfg = _design(args.profile)
    sc = d.profile.scanner
    port = pico_port(args.port, sc.usb_vid or PICO_VID, sc.usb_pid or PICO_PID)
    files = firmware_files()
    tool = mpremote_command()
    if tool is None and not args.dry_run:
        raise FirmwareError("mpremote is not installed: pip install 'facedown[flash]' into the venv that runs "
                            "facedown (.venv/bin/pip install -e '.[flash]' in the checkout), or pipx install mpremote "
                            "(Raspberry Pi OS Bookworm refuses a plain pip install outside a venv); then run this again")
    with tempfile.TemporaryDirectory(prefix="facedown-fw-") as tmp:
        cfg_path = Path(tmp) / "config.json"
        cfg_path.write_text(config_json(cfg), encoding="utf-8")
        cmd = [*(tool or ["mpremote"]), "connect", port, "cp", *map(str, files), ":", "+", "cp", str(cfg_path),
               ":config.json", "+", "reset"]
        print(f"{d.profile.id} ({d.build}): {len(files)} firmware files and config.json ({cfg['channels']} channels, "
              f"sensing {cfg['sensing']}) to the Pico on {port}")
        if args.dry_run:
            print("would run: " + " ".join(cmd))
            sys.stdout.write(config_json(cfg))
            return 0
        print("run: " + " ".join(cmd))
        code = subprocess.run(cmd, check=False, env={**os.environ, "PYTHONUNBUFFERED": "1"}).returncode
    if code != 0:
        print(f"facedown firmware: mpremote failed with exit status {code} (is another program, such as the referee, "
              f"holding {port}? stop it: sudo systemctl stop facedown)", file=sys.stderr)
        return 2
    print(f"flashed; the Pico restarted. Check it: facedown hw-test --board serial --profile {args.profile}")
    return 0


def run_list(args: argparse.Namespace) -> int:
    from controller.hardware.usb import scanners

    found = scanners(PICO_VID, PICO_PID)
    if not found:
        print("no Pico running MicroPython is plugged in" + (" (one is in BOOTSEL mode: put MicroPython on it first)"
                                                              if _bootsel_attached() else ""))
        return 1
    for p in found:
        print(f"{p.device}  serial {p.serial or '(none)'}  {p.product}".rstrip())
    return 0


def run_profile(args: argparse.Namespace) -> int:
    from controller.hardware.build import BuildError, profile_text

    try:
        text = profile_text(args.game, args.build)
    except BuildError as exc:
        print(f"facedown firmware: {exc}", file=sys.stderr)
        return 2
    if args.out == "-":
        sys.stdout.write(text)
    else:
        Path(args.out).write_text(text, encoding="utf-8")
        print(f"wrote {args.out}; check it with: facedown bom --profile {args.out}")
    return 0
