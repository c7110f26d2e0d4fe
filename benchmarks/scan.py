"""Times the scan of a reed matrix (default: Stratego's 100 stations, 10 x 10) through gpiozero mock pins.

Two figures: the real threaded loop (GpioMatrixBoard.run at the profile's scan period, its thread's CPU time from
/proc, which includes waking the thread every period and the debouncer's bookkeeping), as a share of a core and per
scan; and one hot pass (scan_once called back to back: drive each row, read its columns, debounce), p50/p99/max.

Leaves out: real pins. Mock pins cost about what a Python call costs; on a real Pi each pin access goes through lgpio
and costs more, so run this on the Pi with GPIOZERO_PIN_FACTORY unset and --real to measure the wired board itself.
Nothing moves on the board while it is timed (a change costs one debouncer update more).

    python benchmarks/scan.py [--profile stratego] [--scans 20000] [--seconds 10] [--real]
"""

from __future__ import annotations

import argparse
import statistics
import time


def percentile(sorted_values: list[int], q: float) -> int:
    return sorted_values[min(len(sorted_values) - 1, round(q * (len(sorted_values) - 1)))]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="stratego", help="shipped profile name or a profile .yaml (default stratego)")
    parser.add_argument("--scans", type=int, default=20000, help="number of timed scans (default 20000)")
    parser.add_argument("--seconds", type=float, default=10, help="how long to run the threaded loop (default 10)")
    parser.add_argument("--real", action="store_true", help="use gpiozero's default pin factory (the Pi's GPIO) instead of mock pins")
    args = parser.parse_args(argv)

    from controller.sensing.gpio_matrix import GpioMatrixBoard
    from controller.sensing.profile import find_profile

    profile = find_profile(args.profile)
    factory = None
    if not args.real:
        from gpiozero.pins.mock import MockFactory

        factory = MockFactory()
    board = GpioMatrixBoard(profile, pin_factory=factory)
    rows, cols = profile.matrix_size or (0, 0)
    mock_pins = list(factory.pins.values()) if factory else []
    for _ in range(200):  # warm up
        board.scan_once(0)
    times_ns: list[int] = []
    clock = time.perf_counter_ns
    try:
        for i in range(args.scans):
            if mock_pins and i % 1000 == 0:
                for pin in mock_pins:  # mock pins record every change; keep that history from growing all run
                    pin.clear_states()
            start = clock()
            board.scan_once(i * profile.scan_period_ms)
            times_ns.append(clock() - start)
    finally:
        board.stop()

    share, per_scan_us = threaded_loop(profile, factory if factory is None else MockFactory(), args.seconds)

    times_ns.sort()
    us = 1000
    print(f"threaded loop (GpioMatrixBoard.run every {profile.scan_period_ms} ms, {args.seconds:.0f} s): "
          f"{share * 100:.2f} % of a core, {per_scan_us:.0f} us CPU per scan (its thread's CPU time)")
    print(f"profile {profile.file}: {len(profile.stations)} stations, {rows} x {cols} matrix, "
          f"{'real GPIO' if args.real else 'gpiozero MockFactory pins'}, {args.scans} scans")
    print(f"hot full scan, scan_once back to back (drive {rows} rows, read {len(profile.stations)} crossings, debounce):")
    print(f"  p50 {percentile(times_ns, 0.50) / us:8.1f} us")
    print(f"  p99 {percentile(times_ns, 0.99) / us:8.1f} us")
    print(f"  max {times_ns[-1] / us:8.1f} us")
    print(f"  mean {statistics.fmean(times_ns) / us:7.1f} us  "
          f"({statistics.fmean(times_ns) / 1e6 / profile.scan_period_ms * 100:.1f}% of the {profile.scan_period_ms} ms scan period)")
    return 0


def threaded_loop(profile: object, factory: object, seconds: float) -> tuple[float, float]:
    """Run the board's own scan thread for ``seconds``; its share of a core and CPU microseconds per scan."""
    import threading
    from pathlib import Path

    from controller.sensing.gpio_matrix import GpioMatrixBoard

    board = GpioMatrixBoard(profile, pin_factory=factory)  # type: ignore[arg-type]
    tid: dict[str, int] = {}
    started = threading.Event()

    def run() -> None:
        tid["id"] = threading.get_native_id()
        started.set()
        board.run(lambda snap: None)

    th = threading.Thread(target=run, daemon=True)
    th.start()
    started.wait()

    def cpu_ns() -> int:
        return int(Path(f"/proc/self/task/{tid['id']}/schedstat").read_text().split()[0])

    c0, w0 = cpu_ns(), time.monotonic()
    time.sleep(seconds)
    c1, w1 = cpu_ns(), time.monotonic()
    board.stop()
    th.join(5)
    scans = (w1 - w0) * 1000 / profile.scan_period_ms  # type: ignore[attr-defined]
    return (c1 - c0) / 1e9 / (w1 - w0), (c1 - c0) / 1e3 / scans


if __name__ == "__main__":
    raise SystemExit(main())
