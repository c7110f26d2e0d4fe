"""Shared test fixtures: the GPIO mock pin factory, saved and restored around each test that asks for it."""

from __future__ import annotations

import pytest


@pytest.fixture
def mock_factory():
    """gpiozero's own MockFactory installed as the pin factory for one test, then reset and restored."""
    from gpiozero import Device
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    saved = Device.pin_factory
    factory = MockFactory(pin_class=MockPWMPin)
    Device.pin_factory = factory
    try:
        yield factory
    finally:
        factory.reset()
        Device.pin_factory = saved
