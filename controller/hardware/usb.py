"""Finds the scanner Picos plugged into this computer, with their USB serial numbers, by reading /sys (no pyudev).

Each USB serial port under /sys/class/tty (ttyACM0 ...) links to its USB interface; the interface's parent holds the
device's ``idVendor``, ``idProduct`` and ``serial``. MicroPython on a Pico answers as 2e8a:0005 with the board's
unique id as its serial number, so a udev rule can name one particular Pico (two Picos never fight over a name).
``serial_of_port`` does the same for one device node, through /sys or ``udevadm info`` where /sys says nothing.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from controller.errors import FaceDownError


class UsbError(FaceDownError, RuntimeError):
    """No scanner attached, several where one was expected, or a port that is not a USB serial device."""


@dataclass(frozen=True, slots=True)
class UsbSerialPort:
    """One USB serial port: its device node, USB ids and serial number (may be empty when the device gives none)."""

    device: str
    vid: int
    pid: int
    serial: str
    product: str = ""


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace").strip()
    except OSError:
        return ""


def _usb_device_dir(tty_dir: Path) -> Path | None:
    """The USB device directory (with idVendor) above a /sys/class/tty entry, or None for a non-USB tty."""
    dev = tty_dir / "device"
    if not dev.exists():
        return None
    here = dev.resolve()
    for _ in range(4):
        if (here / "idVendor").exists():
            return here
        here = here.parent
    return None


def serial_ports(sys_root: Path = Path("/sys")) -> list[UsbSerialPort]:
    """Every USB serial port /sys knows, sorted by device name."""
    found = []
    base = sys_root / "class" / "tty"
    for tty in sorted(base.iterdir()) if base.is_dir() else ():
        usb = _usb_device_dir(tty)
        if usb is None:
            continue
        try:
            vid, pid = int(_read(usb / "idVendor"), 16), int(_read(usb / "idProduct"), 16)
        except ValueError:
            continue
        found.append(UsbSerialPort(f"/dev/{tty.name}", vid, pid, _read(usb / "serial"), _read(usb / "product")))
    return found


def scanners(vid: int, pid: int, sys_root: Path = Path("/sys")) -> list[UsbSerialPort]:
    """The attached USB serial ports with this vendor and product id."""
    return [p for p in serial_ports(sys_root) if (p.vid, p.pid) == (vid, pid)]


def one_scanner(vid: int, pid: int, sys_root: Path = Path("/sys")) -> UsbSerialPort:
    """The one attached scanner; a clear error when there is none, or several."""
    found = scanners(vid, pid, sys_root)
    if not found:
        raise UsbError(f"no scanner attached: no USB serial device {vid:04x}:{pid:04x} (a Pico running MicroPython) is "
                       f"plugged in. Plug it in with a data cable, or give its serial number with --scanner-serial")
    if len(found) > 1:
        listed = ", ".join(f"{p.device} (serial {p.serial or 'none'})" for p in found)
        raise UsbError(f"{len(found)} scanners attached ({listed}): give the one for this board with --scanner-serial, "
                       f"or unplug the others")
    if not found[0].serial:
        raise UsbError(f"{found[0].device}: the device reports no USB serial number; give one with --scanner-serial")
    return found[0]


def serial_of_port(device: str, sys_root: Path = Path("/sys")) -> str:
    """The USB serial number of one device node (/dev/ttyACM0): from /sys, else from ``udevadm info``."""
    name = Path(device).resolve().name if Path(device).exists() else Path(device).name
    for port in serial_ports(sys_root):
        if Path(port.device).name == name and port.serial:
            return port.serial
    tool = shutil.which("udevadm")
    if tool:
        proc = subprocess.run([tool, "info", "--query=property", f"--name={device}"], capture_output=True, text=True,
                              check=False, timeout=10)
        for line in proc.stdout.splitlines():
            if line.startswith("ID_SERIAL_SHORT="):
                return line.split("=", 1)[1].strip()
    raise UsbError(f"{device}: not a USB serial device with a serial number (is the scanner plugged in?)")
