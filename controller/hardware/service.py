"""The Raspberry Pi's boot-time referee: a systemd unit that runs ``facedown play`` and a udev rule for the scanner.

The udev rule matches this board's scanner by its USB serial number (read from /sys by controller/hardware/usb.py,
or given), so two Picos plugged into one Pi never fight over /dev/facedown-scanner.

``render_unit`` and ``render_udev_rule`` are pure; ``install`` writes them under a root directory (``/`` on the Pi,
a temporary directory in tests), enables the unit the way ``systemctl enable`` does, and on the real root runs
``systemctl daemon-reload``/``enable`` and reloads udev, printing each command first. ``uninstall`` undoes it.
``facedown play`` resumes the journal's unfinished game by default, so after a power cut the Pi carries on.

Outside bot engines (``--seat SIDE=bot:cmd:...``) run as a user of their own (``facedown-bot`` by default): install
creates it (a system user with no home, no shell, no password) and writes a sudoers rule that lets the referee's
user start programs as that user and no other (``/etc/sudoers.d/facedown-bot``, checked with ``visudo -c``), and
the unit passes ``--bot-user``. That user cannot read the journal, its key or the club password file (all 0600,
the referee's), nor the referee's descriptors or environment.

>>> cfg = ServiceConfig(game="luzhanqi", board="gpio", profile="/opt/fd/hardware/profiles/luzhanqi.yaml",
...                     user="pi", facedown="/opt/fd/.venv/bin/facedown", workdir="/opt/fd")
>>> "ExecStart=/opt/fd/.venv/bin/facedown play luzhanqi --board gpio" in render_unit(cfg)
True
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from controller.errors import FaceDownError

UNIT_NAME = "facedown.service"
UNIT_DIR = Path("etc/systemd/system")
WANTS_DIR = UNIT_DIR / "multi-user.target.wants"
UDEV_DIR = Path("etc/udev/rules.d")
UDEV_NAME = "99-facedown-scanner.rules"
SUDOERS_DIR = Path("etc/sudoers.d")
#: The user outside bot engines run as on a service install (created by install).
BOT_USER = "facedown-bot"
#: The stable name the udev rule gives the scanner.
SCANNER_LINK = "facedown-scanner"
#: Raspberry Pi Pico running MicroPython (docs/firmware.md: `mpremote connect list` shows 2e8a:0005).
PICO_VID, PICO_PID = 0x2E8A, 0x0005
BOARDS = ("gpio", "serial")


class ServiceError(FaceDownError, RuntimeError):
    """Installing or removing the service failed: not root, a bad profile, a command that failed."""


@dataclass(frozen=True, slots=True)
class ServiceConfig:
    """What the unit runs: which game on which board with which profile, as which user, from where."""

    game: str
    board: str
    profile: str | None
    user: str
    facedown: str
    workdir: str
    port: str | None = None  # the serial device for --board serial (the udev link), None for GPIO
    announce: str = "console"
    web_port: int = 8080
    usb_vid: int = PICO_VID
    usb_pid: int = PICO_PID
    #: The USB serial number of THIS board's scanner (a Pico's unique id): the udev rule names only that device.
    scanner_serial: str | None = None
    #: Computer seats, as ``facedown play --seat`` takes them (SIDE=bot:NAME).
    seats: tuple[str, ...] = ()
    #: The user outside engines run as (None: the referee's own user; docs/bots.md says what that allows).
    bot_user: str | None = BOT_USER


def _quote(arg: str) -> str:
    """An argument for ExecStart: systemd splits on spaces and honours double quotes like a shell."""
    if arg and all(c.isalnum() or c in "-_./:=,@+" for c in arg):
        return arg
    return '"' + arg.replace("\\", "\\\\").replace('"', '\\"') + '"'


def exec_args(cfg: ServiceConfig) -> list[str]:
    """The command line the unit runs."""
    args = [cfg.facedown, "play", cfg.game, "--board", cfg.board]
    if cfg.profile:
        args += ["--profile", cfg.profile]
    if cfg.port:
        args += ["--port-path", cfg.port]
    args += ["--announce", cfg.announce, "--port", str(cfg.web_port)]
    for seat in cfg.seats:
        args += ["--seat", seat]
    if cfg.bot_user:
        args += ["--bot-user", cfg.bot_user]
    return args


def valid_user_name(name: str) -> str:
    """A user name useradd and sudoers take as is (lower-case letters, digits, - and _), or a ServiceError."""
    if not name or len(name) > 32 or not (name[0].isascii() and name[0].islower()) or \
            not all(c.isascii() and (c.islower() or c.isdigit() or c in "-_") for c in name):
        raise ServiceError(f"user name {name!r}: expected lower-case letters, digits, - and _ (e.g. {BOT_USER})")
    return name


def render_sudoers(cfg: ServiceConfig) -> str:
    """The sudoers rule: the referee's user may run programs as the bot user, without a password, and as no one else."""
    if not cfg.bot_user:
        raise ServiceError("no bot user: nothing for a sudoers rule to allow")
    user, bot = valid_user_name(cfg.user), valid_user_name(cfg.bot_user)
    if user == bot:
        raise ServiceError(f"--bot-user {bot}: that is the referee's own user; engines need a user of their own")
    return (
        "# Written by `facedown service install`; removed by `facedown service uninstall`.\n"
        f"# The referee ({user}) starts outside bot engines as {bot}, a user with no home, no shell and no password,\n"
        "# which cannot read the journal. It allows becoming that user only, never root.\n"
        f"{user} ALL=({bot}) NOPASSWD: ALL\n"
    )


def render_unit(cfg: ServiceConfig) -> str:
    """The systemd unit: start at boot once the network is up, run the referee as ``cfg.user``, restart on failure."""
    if cfg.board not in BOARDS:
        raise ServiceError(f"--board {cfg.board!r}: expected one of {', '.join(BOARDS)}")
    lines = [
        "# Written by `facedown service install`; remove with `facedown service uninstall`.",
        "[Unit]",
        f"Description=FaceDown referee ({cfg.game}, {cfg.board} board)",
        f"Documentation=file://{cfg.workdir}/docs/raspberry-pi.md",
        "Wants=network-online.target",
        "After=network-online.target",
        "StartLimitIntervalSec=0",
        "",
        "[Service]",
        "Type=simple",
        f"User={cfg.user}",
        f"WorkingDirectory={cfg.workdir}",
        "Environment=PYTHONUNBUFFERED=1",
        *(["Environment=GPIOZERO_PIN_FACTORY=lgpio"] if cfg.board == "gpio" else []),
        "ExecStart=" + " ".join(_quote(a) for a in exec_args(cfg)),
        "Restart=on-failure",
        "RestartSec=3",
        # a damaged journal does not mend itself: the referee waits for the arbiter (`facedown record repair`)
        "RestartPreventExitStatus=4",
        "KillSignal=SIGTERM",
        "TimeoutStopSec=10",
        "",
        "[Install]",
        "WantedBy=multi-user.target",
    ]
    return "\n".join(lines) + "\n"


def valid_serial(serial: str) -> str:
    """A USB serial number as a udev rule may quote it (letters, digits, a few marks), or a ServiceError."""
    if not serial or not all(c.isalnum() or c in "-_.:" for c in serial) or len(serial) > 64:
        raise ServiceError(f"scanner serial {serial!r}: expected the USB serial number of the Pico (letters and digits, "
                           f"as `facedown firmware list` shows it)")
    return serial


def render_udev_rule(cfg: ServiceConfig) -> str:
    """The udev rule: this board's scanner (matched by USB ids AND its own serial number, so a second Pico never takes
    the name) also appears as /dev/facedown-scanner, readable by group dialout."""
    if not cfg.scanner_serial:
        raise ServiceError("the udev rule names one scanner by its USB serial number: plug the scanner in, or give "
                           "--scanner-serial")
    serial = valid_serial(cfg.scanner_serial)
    return (
        "# Written by `facedown service install`: a stable name for this board's FaceDown scanner (a Pico running\n"
        f"# MicroPython, USB serial {serial}). Another Pico plugged in keeps its own ttyACM name.\n"
        f'SUBSYSTEM=="tty", ATTRS{{idVendor}}=="{cfg.usb_vid:04x}", ATTRS{{idProduct}}=="{cfg.usb_pid:04x}", '
        f'ATTRS{{serial}}=="{serial}", SYMLINK+="{SCANNER_LINK}", GROUP="dialout", MODE="0660", TAG+="systemd"\n'
    )


@dataclass(frozen=True, slots=True)
class Plan:
    """What install or uninstall does: files to write (path -> text), links to make, files to remove, commands,
    and the mode of files that need one (the sudoers rule: 0440)."""

    files: dict[Path, str]
    links: dict[Path, str]
    remove: tuple[Path, ...]
    commands: tuple[tuple[str, ...], ...]
    modes: dict[Path, int] = field(default_factory=dict)


def install_plan(cfg: ServiceConfig, root: Path, *, start: bool = False) -> Plan:
    """The files and commands of an install under ``root``; ``start`` also starts the service now."""
    unit = root / UNIT_DIR / UNIT_NAME
    files = {unit: render_unit(cfg)}
    if cfg.board == "serial":  # a GPIO board has no scanner to name
        files[root / UDEV_DIR / UDEV_NAME] = render_udev_rule(cfg)
    modes: dict[Path, int] = {}
    bot_commands: list[tuple[str, ...]] = []
    if cfg.bot_user:
        rule = root / SUDOERS_DIR / BOT_USER
        files[rule] = render_sudoers(cfg)
        modes[rule] = 0o440
        if not user_exists(cfg.bot_user):
            bot_commands.append(("useradd", "--system", "--no-create-home", "--home-dir", "/nonexistent",
                                 "--shell", "/usr/sbin/nologin", "--user-group", cfg.bot_user))
        bot_commands.append(("visudo", "-c", "-f", f"/{SUDOERS_DIR / BOT_USER}"))
    return Plan(
        files=files,
        links={root / WANTS_DIR / UNIT_NAME: f"/{UNIT_DIR / UNIT_NAME}"},
        remove=(),
        commands=(("systemctl", "daemon-reload"), ("systemctl", "enable", UNIT_NAME), *bot_commands,
                  ("udevadm", "control", "--reload-rules"), ("udevadm", "trigger", "--subsystem-match=tty"),
                  *([("systemctl", "restart", UNIT_NAME)] if start else [])),
        modes=modes,
    )


def user_exists(name: str) -> bool:
    import pwd

    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def uninstall_plan(root: Path) -> Plan:
    """The files and commands of an uninstall under ``root``."""
    return Plan(
        files={},
        links={},
        remove=(root / WANTS_DIR / UNIT_NAME, root / UNIT_DIR / UNIT_NAME, root / UDEV_DIR / UDEV_NAME,
                root / SUDOERS_DIR / BOT_USER),
        commands=(("systemctl", "disable", "--now", UNIT_NAME), ("systemctl", "daemon-reload"),
                  ("udevadm", "control", "--reload-rules")),
    )


Runner = Callable[[Sequence[str]], int]


def _run(cmd: Sequence[str]) -> int:
    try:
        return subprocess.run(list(cmd), check=False).returncode
    except FileNotFoundError:
        raise ServiceError(f"{cmd[0]}: command not found (is this a systemd system such as Raspberry Pi OS?)") from None


def _optional(cmd: Sequence[str]) -> bool:
    """Commands whose failure leaves a working install: udev reloads (a reboot does it) and disabling what is gone."""
    return cmd[0] == "udevadm" or tuple(cmd[:2]) == ("systemctl", "disable")


def apply(plan: Plan, *, real: bool, say: Callable[[str], None] = print, run: Runner = _run,
          euid: Callable[[], int] = os.geteuid) -> None:
    """Carry out a plan. ``real``: the target is the running system (needs root; runs the commands); otherwise the
    commands are only printed, and links are made as ``systemctl enable`` would make them."""
    if real and euid() != 0:
        raise ServiceError("writing to /etc and running systemctl needs root: run it with sudo "
                           "(sudo \"$(command -v facedown)\" service ...), or give --root DIR to render the files into DIR")
    uninstalling = bool(plan.remove)
    if uninstalling and real:
        _commands(plan.commands[:1], say, run, real)
    for path in plan.remove:
        if path.is_symlink() or path.exists():
            say(f"remove {path}")
            path.unlink()
    for path, text in plan.files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        say(f"write {path}")
        mode = plan.modes.get(path)
        if mode is None:
            path.write_text(text, encoding="utf-8")
        else:  # created with its mode: a sudoers rule is never readable by others, not even for a moment
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.chmod(path, mode)
    if not real:
        for link, target in plan.links.items():
            link.parent.mkdir(parents=True, exist_ok=True)
            if link.is_symlink() or link.exists():
                link.unlink()
            say(f"link {link} -> {target}")
            link.symlink_to(target)
    _commands(plan.commands[1:] if uninstalling and real else plan.commands, say, run, real)


def _commands(commands: Sequence[Sequence[str]], say: Callable[[str], None], run: Runner, real: bool) -> None:
    for cmd in commands:
        shown = " ".join(shlex.quote(c) for c in cmd)
        if not real:
            say(f"skip (not the real root): {shown}")
            continue
        say(f"run {shown}")
        code = run(cmd)
        if code != 0 and _optional(cmd):
            say(f"warning: {shown} failed with exit status {code}; a reboot (or replugging the scanner) applies the udev rule")
        elif code != 0:
            raise ServiceError(f"{shown} failed with exit status {code}")


def facedown_executable() -> str:
    """The absolute path of this installation's ``facedown`` script (next to the running Python, else on PATH)."""
    beside = Path(sys.executable).with_name("facedown")
    if beside.exists():
        return str(beside)
    found = shutil.which("facedown")
    if found:
        return str(Path(found).resolve())
    raise ServiceError("cannot find the facedown command: install FaceDown (pip install -e .) into the Python that runs this")


def verify_unit(path: Path) -> tuple[bool, str] | None:
    """``systemd-analyze verify`` on a unit file: (passed, output), or None when the tool is not installed."""
    tool = shutil.which("systemd-analyze")
    if tool is None:
        return None
    proc = subprocess.run([tool, "verify", str(path)], capture_output=True, text=True, check=False, timeout=60)
    return proc.returncode == 0, (proc.stdout + proc.stderr).strip()
