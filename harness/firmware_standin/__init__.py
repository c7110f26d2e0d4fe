"""CPython stand-ins for MicroPython's `machine` and `utime`, and the electrical world behind them, for firmware tests."""
