"""Station lights: which stations light up, and how, from the referee's published events; and the two drivers that
show them (a WS2812 chain on the Pico scanner through its `LIT` command, or one GPIO LED per station on a small
board).

A station lights up in one of four roles and nothing else: ``from`` and ``to`` of the computer seat's instructed
move, ``fixup`` (a station a fix-up asks the players to change) and ``mismatch`` (a station where the board differs
from what the referee can explain). The colour is a function of the role alone (``ROLE_COLOURS``): never of a
piece's rank, nor of whose piece it is, so the lights tell the table nothing the board and the voice do not.
When a station has several roles the strongest shows: mismatch, then fix-up, then to, then from.

The picture is made from the referee's read model (``Session.guidance``: the instructed move's ``from``/``to``, the
``station``/``to`` of the fix-up steps not yet done and of the mismatch's steps), never from sentences nor from the
event log, so a step ticks off the moment the board does it and a settled mismatch gives back the fix-up's lights.
Decided here (the issue is silent): the lights go out at game over and when the program stops (after an undo they
show the stations to set right); a sensing fault lights nothing (the pages, the voice and the buzzer
say what is wrong; a fault colour on every station would only dazzle, and a scanner whose link is down cannot be
told anyway).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

log = logging.getLogger(__name__)

#: Roles from weakest to strongest (a station with several roles shows the strongest).
ROLES = ("from", "to", "fixup", "mismatch")
#: The scanner protocol's colour code for each role (firmware/PROTOCOL.md `LIT`): white, cyan, amber, magenta. No
#: role uses red or blue, which are side colours in several games.
ROLE_COLOURS = {"from": "w", "to": "c", "fixup": "y", "mismatch": "m"}
#: GPIO LEDs have one colour: the role is told by how the LED lights, (on seconds, off seconds); (1, 0) = steady.
ROLE_BLINKS = {"from": (1.0, 0.0), "to": (0.5, 0.5), "fixup": (0.15, 0.15), "mismatch": (0.15, 0.15)}
#: A `LIT` line's body at most: the firmware takes 120 bytes, but it parses a line within one scan pass (~0.2 ms a
#: byte on a Pico), so a long picture goes as several short lines, each parsed in a pass of its own.
MAX_LIT_BODY = 48

Picture = dict[str, str]  # station -> role


def picture(instructed: tuple[str, str] | None, fixups: Iterable[str], mismatches: Iterable[str]) -> Picture:
    """The stations to light and their roles, from the only three inputs the lights may use."""
    out: Picture = {}
    if instructed is not None:
        out[instructed[0]] = "from"
        out[instructed[1]] = "to"
    for s in fixups:
        out[s] = "fixup"
    for s in mismatches:
        out[s] = "mismatch"
    return out


def _step_stations(steps: Any) -> tuple[str, ...]:
    out: list[str] = []
    for st in steps or ():
        if isinstance(st, Mapping) and not st.get("done"):
            out += [s for s in (st.get("station"), st.get("to")) if isinstance(s, str) and s not in out]
    return tuple(out)


def picture_of(guidance: Mapping[str, Any]) -> Picture:
    """The picture of the referee's read model (``Session.guidance()``, or a ``TableView``'s JSON): the instructed
    move, the fix-up's steps not yet done, the mismatch's stations; nothing once the game is over."""
    if (guidance.get("status") or {}).get("phase", guidance.get("phase")) == "over":
        return {}
    ins = guidance.get("instruction")
    instructed = (ins["from"], ins["to"]) if isinstance(ins, Mapping) and isinstance(ins.get("from"), str) else None
    pending = guidance.get("pending") or {}
    mismatch = guidance.get("mismatch") or {}
    return picture(instructed, _step_stations(pending.get("steps")), _step_stations(mismatch.get("steps")))


class LightsTracker:
    """Shows the picture of the referee's read model: ``read()`` gives it (``Session.guidance``), ``update`` is
    called on every published event and occupancy change (subscribed by :func:`station_lights`), and ``show`` is
    called each time the picture changes."""

    def __init__(self, show: Callable[[Picture], None], read: Callable[[], Mapping[str, Any]]) -> None:
        self._show = show
        self._read = read
        self.picture: Picture = {}
        self.shown: Picture | None = None

    def update(self, *_: Any) -> None:
        pic = picture_of(self._read())
        self.picture = pic
        if pic != self.shown:
            self.shown = dict(pic)
            try:
                self._show(pic)
            except Exception:  # the lights must never stop the referee
                log.exception("showing the station lights failed")


def lit_commands(pic: Picture, channels: Mapping[str, int], limit: int = MAX_LIT_BODY) -> list[str]:
    """`LIT` command bodies that make the chain show ``pic`` (every other channel off): the first starts with
    ``all=k``; a long picture is split over several lines of at most ``limit`` bytes."""
    by_code: dict[str, list[int]] = {}
    for station, role in pic.items():
        by_code.setdefault(ROLE_COLOURS[role], []).append(channels[station])
    lines: list[str] = []
    body = "LIT all=k"
    for code in sorted(by_code):
        field = ""
        for ch in sorted(by_code[code]):
            item = f"{code}={ch}" if not field else f",{ch}"
            if len(body) + 1 + len(field) + len(item) > limit:
                if field:
                    body += " " + field
                lines.append(body)
                body, field, item = "LIT", "", f"{code}={ch}"
            field += item
        body += " " + field
    lines.append(body)
    return lines


class ScannerLights:
    """Shows pictures on the scanner's WS2812 chain: `LIT` lines sent through ``board.request`` (SerialScannerBoard)
    from a thread of its own, so the referee never waits on the serial port. The picture is sent again every
    ``every_s`` and when the scanner restarted (it starts dark), since `LIT` has no reply; the firmware rewrites its
    chain only when a colour changed."""

    def __init__(self, board: Any, channels: Mapping[str, Any], every_s: float = 5.0) -> None:
        bad = [s for s, ch in channels.items() if not isinstance(ch, int)]
        if bad:
            raise ValueError(f"scanner lights need scanner channels, not matrix crossings ({', '.join(bad[:3])})")
        self.board = board
        self.channels = dict(channels)
        self.every_s = every_s
        self._pic: Picture = {}
        self._lock = threading.Lock()
        self._changed = threading.Event()
        self._boot: Any = None
        self.refused = False  # the scanner said it has no lights (its HELLO caps lack `lit`)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._keep, name="station-lights", daemon=True)
        self._thread.start()

    def show(self, pic: Picture) -> None:
        with self._lock:
            self._pic = dict(pic)
        self._changed.set()

    def _send(self) -> None:
        with self._lock:
            pic = dict(self._pic)
        link = getattr(self.board, "link", None)
        self._boot = getattr(link, "boot", None)
        hello = getattr(link, "hello", None)
        if hello is not None and "lit" not in hello.get("caps", "").split(","):
            if not self.refused:
                self.refused = True
                log.warning("station lights: the scanner's config.json has no lights (HELLO caps %s): flash it again "
                            "with `facedown firmware flash PROFILE`; the lights stay dark", hello.get("caps"))
            return
        self.refused = False
        for body in lit_commands(pic, self.channels):
            self.board.request(body)

    def _keep(self) -> None:
        waited = 0.0
        while not self._stop.is_set():
            changed = self._changed.wait(0.25)
            waited += 0.25
            link = getattr(self.board, "link", None)
            restarted = link is not None and link.known and link.boot != self._boot
            if changed or restarted or waited >= self.every_s:
                self._changed.clear()
                waited = 0.0
                try:
                    self._send()
                except Exception as exc:  # noqa: BLE001 - a port that went away: the next resend tries again
                    log.warning("station lights: %s", exc)
        self._send()  # the last picture (all off when closing)

    def close(self) -> None:
        self._stop.set()
        self._changed.set()
        self._thread.join(2)


class GpioLights:
    """One LED per station on the Pi's GPIO (gpiozero ``LED``): steady for ``from``, a slow blink for ``to``, a fast
    blink for a station to fix (``ROLE_BLINKS``)."""

    def __init__(self, pins: Mapping[str, int], pin_factory: Any = None) -> None:
        from gpiozero import LED

        self.leds: dict[str, Any] = {}
        try:
            for station, pin in pins.items():
                self.leds[station] = LED(pin, pin_factory=pin_factory)
        except Exception:
            self.close()
            raise
        self._roles: dict[str, str | None] = dict.fromkeys(self.leds)

    def show(self, pic: Picture) -> None:
        for station, led in self.leds.items():
            role = pic.get(station)
            if role == self._roles[station]:
                continue
            self._roles[station] = role
            if role is None:
                led.off()
            else:
                on, off = ROLE_BLINKS[role]
                if off:
                    led.blink(on_time=on, off_time=off, background=True)
                else:
                    led.on()

    def close(self) -> None:
        for led in self.leds.values():
            led.close()


def lights_driver(profile: Any, board: Any, pin_factory: Any = None) -> Any:
    """The driver (``show(picture)``, ``close()``) of ``profile``'s station lights, or None when it declares none or
    they cannot be reached from this board (a scanner's chain without the scanner: said in the log)."""
    lt = getattr(profile, "lights", None)
    if lt is None:
        return None
    if lt.kind == "ws2812":
        if not hasattr(board, "request"):
            log.warning("station lights: %s declares a WS2812 chain on the scanner, but the board is not read by the "
                        "scanner (--board serial): the lights stay dark", profile.file)
            return None
        return ScannerLights(board, {s: profile.channels[s] for s in lt.chain if s is not None})
    return GpioLights(lt.pins, pin_factory=pin_factory)


def station_lights(session: Any, profile: Any, board: Any, pin_factory: Any = None) -> Any:
    """Lights for ``profile`` (None when it declares none), following ``session``; close it when the game stops."""
    driver = lights_driver(profile, board, pin_factory)
    if driver is None:
        return None
    tracker = LightsTracker(driver.show, session.guidance)
    session.subscribe(tracker.update)
    session.watch_occupancy(tracker.update)
    tracker.update()
    return _Lights(tracker, driver)


class _Lights:
    def __init__(self, tracker: LightsTracker, driver: Any) -> None:
        self.tracker = tracker
        self.driver = driver

    def close(self) -> None:
        """Everything off (the program is stopping), and the pins or the resend thread released."""
        try:
            self.driver.show({})
        finally:
            self.driver.close()
