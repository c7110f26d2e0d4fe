"""Harnesses shared by the tests and the benchmarks (the firmware on a stand-in chip or an emulated RP2040, a real
Mosquitto broker, a web table driven by hand): neither product nor tests, never imported by the product."""
