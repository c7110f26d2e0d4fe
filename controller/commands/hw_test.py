"""`facedown hw-test`: a live station check for bring-up and club maintenance, on any sensing backend.

A magnet goes on each station in turn; ``analyse`` (pure) then names dead, stuck and flickering stations, wrong
channel mappings (the magnet showed up at another station than the one asked for) and doubled ones (it showed up
there and elsewhere too), and controller/hardware/faults.py points them at wires: a cut row or column, a dead
74HC165, two lines shorted, each by its pin. On a board with station lights the light under the station asked for
shows the way (as the computer's ``to``): a light elsewhere, or none, means the chain order or that LED is wrong.
``--guided`` asks for nothing in order: every station not yet seen is lit (where there are lights) and listed, and
each goes off the list when a magnet has been on it.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass, field

from controller.sensing.base import Snapshot


@dataclass(frozen=True, slots=True)
class Step:
    """The board's snapshots while the magnet was asked on ``asked`` (then lifted)."""

    asked: str
    snapshots: tuple[Snapshot, ...]


@dataclass
class Report:
    dead: list[str] = field(default_factory=list)  # never seen occupied
    stuck: list[str] = field(default_factory=list)  # occupied with nothing on the board
    flickering: dict[str, int] = field(default_factory=dict)  # station -> transitions seen
    miswired: dict[str, list[str]] = field(default_factory=dict)  # asked -> where it appeared instead
    doubled: dict[str, list[str]] = field(default_factory=dict)  # asked -> where it appeared as well
    ok: list[str] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return not (self.dead or self.stuck or self.flickering or self.miswired or self.doubled)

    def lines(self) -> list[str]:
        out = [f"stuck (on with the board empty): {', '.join(self.stuck)}"] if self.stuck else []
        out += [f"dead (never seen): {', '.join(self.dead)}"] if self.dead else []
        out += [f"flickering: {s} changed {n} times" for s, n in sorted(self.flickering.items())]
        out += [f"wrong mapping: magnet on {a} appeared at {', '.join(b)}" for a, b in sorted(self.miswired.items())]
        out += [f"doubled: magnet on {a} also showed {', '.join(b)}" for a, b in sorted(self.doubled.items())]
        out.append(f"{len(self.ok)} stations ok" + ("" if self.passed else "; fix the stations above"))
        return out


def analyse(stations: Sequence[str], baseline: Snapshot, steps: Sequence[Step], flicker_limit: int = 4) -> Report:
    """Judge a run: ``baseline`` is the board with nothing on it; each step is one station asked for."""
    rep = Report()
    rep.stuck = [s for s in stations if s in baseline.occupied]
    stuck = set(rep.stuck)
    seen: set[str] = set()
    transitions = dict.fromkeys(stations, 0)
    prev = baseline.occupied
    for step in steps:
        appeared: set[str] = set()
        for snap in step.snapshots:
            for s in prev ^ snap.occupied:
                if s in transitions:
                    transitions[s] += 1
            appeared |= snap.occupied - stuck
            prev = snap.occupied
        seen |= appeared
        others = sorted(appeared - {step.asked})
        if step.asked not in appeared and others:
            rep.miswired[step.asked] = others
        elif others:
            rep.doubled[step.asked] = others
    asked = {st.asked for st in steps}
    rep.dead = [s for s in stations if s in asked and s not in seen and s not in stuck and s not in rep.miswired]
    rep.flickering = {s: n for s, n in transitions.items() if n > flicker_limit}
    bad = stuck | set(rep.dead) | set(rep.flickering) | set(rep.miswired)
    bad |= {s for targets in rep.miswired.values() for s in targets}
    bad |= set(rep.doubled) | {s for targets in rep.doubled.values() for s in targets}
    rep.ok = [s for s in stations if s in asked and s not in bad]
    return rep


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("hw-test", help="check every station with a magnet: dead, stuck, flickering, miswired, and "
                                       "which wire")
    p.add_argument("--board", choices=["gpio", "serial"], default=None,
                   help="gpio: a reed matrix on the Pi's header; serial: a Pico scanner over USB (default: what the "
                        "profile is wired for)")
    p.add_argument("--profile", help="hardware profile: a file or a shipped profile's name (default: the game's "
                                     "default profile)")
    p.add_argument("--game", default="stratego", help="game whose default profile to use without --profile")
    p.add_argument("--port", help="serial device (default: from the profile, else found by USB id)")
    p.add_argument("--stations", help="comma-separated subset to test (default: all)")
    p.add_argument("--step-timeout", type=float, default=10.0, help="seconds to wait for each station")
    p.add_argument("--guided", action="store_true",
                   help="no order: light (where there are lights) and list every station not yet seen, until a magnet "
                        "has been on each")
    p.add_argument("--guided-timeout", type=float, default=900.0, help="seconds a guided run lasts at most")
    p.set_defaults(func=run)


def _asked(board, q, stations, baseline, lights, timeout: float) -> list[Step]:  # noqa: ANN001 - live parts
    """One station after another: the magnet on it, then lifted."""
    import queue
    import time

    steps = []
    for s in stations:
        if lights is not None:
            lights.show({s: "to"})
        print(f"put the magnet on {s}, then lift it" + (" (its light is on: is it the right one?)" if lights else ""))
        snaps: list[Snapshot] = []
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                snap = q.get(timeout=0.1)
            except queue.Empty:
                continue
            snaps.append(snap)
            print(f"  now on: {', '.join(sorted(snap.occupied - baseline.occupied)) or '-'}")
            if snaps and not (snap.occupied - baseline.occupied) and any(x.occupied - baseline.occupied for x in snaps):
                break  # placed and lifted again
        steps.append(Step(s, tuple(snaps)))
    return steps


def _guided(q, stations, baseline, lights, timeout: float, out=print) -> list[Step]:  # noqa: ANN001 - live parts
    """Any order: every station not yet seen stays lit and listed; each seen one drops off the list."""
    import queue
    import time

    left = list(stations)
    steps: list[Step] = []
    snaps: list[Snapshot] = []

    def show() -> None:
        if lights is not None:
            lights.show(dict.fromkeys(left, "to"))
        out(f"{len(left)} left: {', '.join(left[:24])}{' ...' if len(left) > 24 else ''}" if left else "every station seen")

    out("put a magnet on each station, in any order, and lift it again" + (" (the lit ones are left)" if lights else ""))
    show()
    end = time.monotonic() + timeout
    try:
        while left and time.monotonic() < end:
            try:
                snap = q.get(timeout=0.1)
            except queue.Empty:
                continue
            snaps.append(snap)
            new = sorted((snap.occupied - baseline.occupied) & set(left))
            if new:
                steps.append(Step(new[0], tuple(snaps)))
                snaps = []
                left = [s for s in left if s not in new]
                out(f"seen {', '.join(new)}" + (" (together: a short?)" if len(new) > 1 else ""))
                show()
    except KeyboardInterrupt:
        out("interrupted")
    steps += [Step(s, ()) for s in left]  # never seen: dead
    return steps


def run(args: argparse.Namespace) -> int:
    import queue
    import sys
    import threading
    import time

    from controller.hardware.faults import diagnose
    from controller.sensing.profile import ProfileError, default_profile, find_profile

    try:
        prof = find_profile(args.profile) if args.profile else default_profile(args.game)
    except ProfileError as exc:
        print(f"facedown hw-test: {exc}", file=sys.stderr)
        return 2
    stations = args.stations.split(",") if args.stations else list(prof.stations)
    unknown = [s for s in stations if s not in prof.channels]
    if unknown:
        print(f"facedown hw-test: --stations: {', '.join(unknown)}: not stations of {prof.game}", file=sys.stderr)
        return 2
    kind = args.board or ("serial" if prof.scanner is not None else "gpio")
    if kind == "gpio" and prof.scanner is not None:
        print(f"facedown hw-test: --board gpio: {prof.file} is wired for a Pico scanner over USB: use --board serial",
              file=sys.stderr)
        return 2
    if kind == "gpio":
        from controller.sensing.gpio_matrix import GpioMatrixBoard

        board = GpioMatrixBoard(prof)
    else:
        from controller.sensing.serial_link import SerialScannerBoard

        sc = prof.scanner
        board = SerialScannerBoard(prof.stations, prof.channels, port=args.port or (sc.port if sc else None),
                                   vid=sc.usb_vid if sc else None, pid=sc.usb_pid if sc else None)
    from controller.lights import lights_driver

    lights = lights_driver(prof, board)
    q: queue.Queue = queue.Queue()
    t = threading.Thread(target=board.run, args=(q.put,), daemon=True)
    t.start()
    steps: list[Step] = []
    baseline = Snapshot(0, frozenset(), {})
    try:
        if hasattr(board, "wait_known") and not board.wait_known(10):
            print(f"scanner not ready: {board.status}. Plug the Pico in with a data cable (`facedown firmware list` "
                  "shows it; a new Pico needs MicroPython and `facedown firmware flash PROFILE` first, docs/firmware.md), "
                  "or give its port with --port")
            return 1
        print("take every piece and magnet off the board")
        time.sleep(1.5)
        baseline = board.current()
        while not q.empty():
            baseline = q.get()
        if baseline.occupied:
            print(f"occupied with the board empty: {', '.join(sorted(baseline.occupied))}")
        if args.guided:
            steps = _guided(q, stations, baseline, lights, args.guided_timeout)
        else:
            steps = _asked(board, q, stations, baseline, lights, args.step_timeout)
    except KeyboardInterrupt:
        print("interrupted; judging the stations done so far")
    finally:
        if lights is not None:
            lights.show({})
            lights.close()
        board.stop()
    rep = analyse(list(prof.stations), baseline, steps)
    for line in rep.lines():
        print(line)
    if not rep.passed:
        print("where to look:")
        for line in diagnose(prof, [st.asked for st in steps], rep.dead, rep.stuck, rep.doubled, rep.miswired):
            print(f"  - {line}")
    return 0 if rep.passed else 1
