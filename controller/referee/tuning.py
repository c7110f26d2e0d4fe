"""Interpreter settings for a referee that must answer within milliseconds while web threads share its process.

Two causes of the verdict's tail latency are the interpreter's, not the referee's code:

- Garbage collection: a full collection walks every tracked object, and after start-up that is the whole of the
  rules engine, Flask, Jinja and waitress (tens of milliseconds here, far more on a Pi Zero), landing on whichever
  thread happens to allocate, often the board thread in the middle of a verdict. ``gc.freeze()`` once start-up is
  done moves everything alive then out of the collector's sight, so later collections only walk what the game made.
- The GIL's switch interval (5 ms by default): a board thread that wakes with a settled snapshot while a web
  thread is encoding JSON waits until the interval runs out. 1 ms bounds that wait at a small cost in throughput.
"""

from __future__ import annotations

import gc
import sys

SWITCH_INTERVAL_S = 0.001


def for_low_latency() -> None:
    """Apply both: call once the referee is ready (and again after anything big was built, e.g. the web app)."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)
    gc.collect()
    gc.freeze()
