"""Shared test fixtures: the GPIO mock pin factory, saved and restored around each test that asks for it; and the
hypothesis profiles: ``ci`` (derandomized: the same examples every run, so a failure is a real regression, not a
lucky draw) is the default under CI and for ``./dev test``; ``explore`` draws fresh examples
(``pytest --hypothesis-profile=explore``) to hunt for new failures."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile

import pytest
from hypothesis import settings

# The suite sees the package's games only, not the developer's own ($FACEDOWN_GAMES_DIR, ~/.config/facedown/games):
# set before any test module lists the games for its parameters. Tests of those folders set them themselves.
os.environ.pop("FACEDOWN_GAMES_DIR", None)
_CONFIG = tempfile.mkdtemp(prefix="facedown-test-config-")
atexit.register(shutil.rmtree, _CONFIG, ignore_errors=True)
os.environ["XDG_CONFIG_HOME"] = _CONFIG

settings.register_profile("ci", derandomize=True, print_blob=True)
settings.register_profile("explore", derandomize=False, print_blob=True)
settings.load_profile(os.environ.get("FACEDOWN_HYPOTHESIS_PROFILE", "ci"))


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


# ---------------------------------------------------------------------- the club's broker and dashboard (club tests)
@pytest.fixture
def broker(tmp_path):  # noqa: ANN001, ANN201 - a real Mosquitto on a free loopback port, the club configuration's limits
    from harness.broker import Mosquitto

    b = Mosquitto(tmp_path)
    b.start()
    try:
        yield b
    finally:
        b.stop()


@pytest.fixture
def dashboard(broker, tmp_path):  # noqa: ANN001, ANN201 - the club dashboard's state, listening on that broker
    import time

    from controller.club.broker import parse_broker
    from controller.club.enrolled import Enrolment
    from controller.club.results import ResultBook
    from web_referee.club import ClubListener, ClubState

    state = ClubState(ResultBook(tmp_path / "results.jsonl"), enrolled=Enrolment(tmp_path / "club-tables.json"))
    listener = ClubListener(state, parse_broker(broker.url), client_id=f"dash-{time.monotonic_ns()}")
    listener.start()
    assert listener.connected.wait(5)
    try:
        yield state
    finally:
        listener.stop()
