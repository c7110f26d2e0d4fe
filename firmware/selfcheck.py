"""Runs every hardware-free module's self-check and prints one line per module, then 'ALL OK'.

Works on the device (mpremote run firmware/selfcheck.py), under CPython and under MicroPython's WebAssembly port.
"""

import fd_debounce
import fd_device
import fd_lights
import fd_mfrc522
import fd_proto
import fd_scan


def main():
    total = 0
    for mod in (fd_proto, fd_debounce, fd_scan, fd_mfrc522, fd_lights, fd_device):
        n = mod.selfcheck()
        print("selfcheck", mod.__name__, n)
        total += n
    print("ALL OK", total)
    return total


main()
