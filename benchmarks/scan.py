"""Times one full scan of a reed matrix (default: Stratego's 100 stations, 10 x 10) through gpiozero mock pins.

Prints p50 / p99 / max of GpioMatrixBoard.scan_once (drive each row, read its columns, debounce) over many scans.
Mock pins cost about what a Python call costs; on a real Pi each pin access goes through lgpio and costs more, so
run this on the Pi with GPIOZERO_PIN_FACTORY unset and --real to measure the wired board itself.

    python benchmarks/scan.py [--profile stratego] [--scans 20000] [--real]
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

    times_ns.sort()
    us = 1000
    print(f"profile {profile.file}: {len(profile.stations)} stations, {rows} x {cols} matrix, "
          f"{'real GPIO' if args.real else 'gpiozero MockFactory pins'}, {args.scans} scans")
    print(f"full scan (drive {rows} rows, read {len(profile.stations)} crossings, debounce):")
    print(f"  p50 {percentile(times_ns, 0.50) / us:8.1f} us")
    print(f"  p99 {percentile(times_ns, 0.99) / us:8.1f} us")
    print(f"  max {times_ns[-1] / us:8.1f} us")
    print(f"  mean {statistics.fmean(times_ns) / us:7.1f} us  "
          f"({statistics.fmean(times_ns) / 1e6 / profile.scan_period_ms * 100:.1f}% of the {profile.scan_period_ms} ms scan period)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
