"""Where board readings come from: each backend turns raw sensor readings into debounced whole-board snapshots."""

from .base import Debouncer, Reading, SensingBackend, Snapshot

__all__ = ["Debouncer", "Reading", "SensingBackend", "Snapshot"]
