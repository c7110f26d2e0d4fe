"""Tests hardware profiles: every shipped profile loads and covers its game, and every kind of defect is located."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.rules import game_ids, load_game
from controller.sensing.profile import (
    BCM_PINS,
    FIXED_PULL_PINS,
    Profile,
    ProfileError,
    default_profile,
    find_profile,
    load_profile,
    profile_ids,
    profiles_dir,
)

LUZHANQI = load_game("luzhanqi").station_ids


def matrix_doc() -> dict:
    """A valid Luzhanqi profile: 12 x 5 reed matrix, row-major."""
    return {
        "format": 1,
        "game": "luzhanqi",
        "sensing": "reed",
        "pins": {
            "rows": [4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17],
            "columns": [19, 20, 21, 22, 23],
            "buzzer": 18,
            "leds": {"ready": 25, "turn": 26, "error": 27},
        },
        "channels": {s: [i // 5, i % 5] for i, s in enumerate(LUZHANQI)},
    }


def scanner_doc() -> dict:
    return {
        "format": 1,
        "game": "luzhanqi",
        "sensing": "hybrid",
        "scanner": {"kind": "shift_register", "port": None, "usb_vid": 0x2E8A, "usb_pid": 0x0005},
        "pins": {"buzzer": 18},
        "channels": {s: i for i, s in enumerate(LUZHANQI)},
    }


def write(tmp_path: Path, doc: dict | str, name: str = "board.yaml") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def rejects(tmp_path: Path, doc: dict | str, where: str, *expected: str) -> ProfileError:
    path = write(tmp_path, doc)
    with pytest.raises(ProfileError) as info:
        load_profile(path)
    err = info.value
    assert isinstance(err, ValueError)
    assert err.file == str(path)
    assert err.where == where, str(err)
    assert str(err).startswith(f"{path}: {where}: ")
    for word in expected:
        assert word in err.expected, str(err)
    return err


# --- shipped profiles ---------------------------------------------------------------------------------------------


def test_every_shipped_profile_is_for_a_known_game():
    """A game needs no profile (`facedown profile new GAME` drafts one); a profile needs its game."""
    assert {default_profile(p).game for p in profile_ids() if find_profile(p).game == p} <= set(game_ids())


@pytest.mark.parametrize("game", [g for g in game_ids() if g in profile_ids()])
def test_shipped_profile_loads_and_covers_exactly_its_stations(game):
    profile = default_profile(game)
    stations = load_game(game).station_ids
    assert profile.game == game
    assert profile.stations == stations
    assert set(profile.channels) == set(stations)
    assert len(set(profile.channels.values())) == len(stations)
    assert profile.sensing == "reed"
    if profile.scanner is None:
        rows, cols = profile.matrix_size
        assert all(0 <= r < rows and 0 <= c < cols for r, c in profile.channels.values())
    else:  # too many stations for the Pi's header (siguo's 129): a USB scanner reports integer channels
        assert not profile.pins.rows and not profile.pins.columns
        # a 74HC165 chain: each chip reads neighbouring stations, so its spare inputs may sit on any chip
        assert all(0 <= ch < profile.scanner.channel_count for ch in profile.channels.values())
        assert profile.scanner.channel_count >= len(stations) > profile.scanner.channel_count - 8
    pins = [*profile.pins.rows, *profile.pins.columns, profile.pins.buzzer, *profile.pins.leds.values()]
    assert len(pins) == len(set(pins)) and all(p in BCM_PINS for p in pins)
    assert {"ready", "turn", "error"} <= set(profile.pins.leds)
    assert profile.settle_ms <= 50 and profile.scan_period_ms <= profile.settle_ms
    assert Path(profile.file).parent == profiles_dir()


def test_shipped_matrix_sizes():
    assert default_profile("stratego").matrix_size == (10, 10)
    assert default_profile("lattaque").matrix_size == (10, 9)
    assert default_profile("luzhanqi").matrix_size == (12, 5)


def test_profile_is_frozen():
    profile = default_profile("luzhanqi")
    with pytest.raises(AttributeError):
        profile.settle_ms = 1  # type: ignore[misc]


def test_unknown_default_profile_names_the_shipped_ones():
    with pytest.raises(ProfileError, match="shipped profiles: .*stratego"):
        default_profile("chess")


def test_a_profile_file_that_is_not_there_is_named_as_given(tmp_path):
    for missing in (tmp_path / "board.yaml", tmp_path / "boards" / "mine"):
        with pytest.raises(ProfileError) as caught:
            find_profile(str(missing))
        assert str(caught.value).startswith(f"{missing}: (file): no such hardware profile; shipped profiles: "), caught.value


def test_profiles_dir_from_environment(tmp_path, monkeypatch):
    write(tmp_path, matrix_doc(), "luzhanqi.yaml")
    monkeypatch.setenv("FACEDOWN_PROFILES_DIR", str(tmp_path))
    assert profiles_dir() == tmp_path
    assert default_profile("luzhanqi").file == str(tmp_path / "luzhanqi.yaml")
    monkeypatch.setenv("FACEDOWN_PROFILES_DIR", str(tmp_path / "nowhere"))
    with pytest.raises(ProfileError, match="nowhere: \\(directory\\): .*FACEDOWN_PROFILES_DIR"):
        profiles_dir()


def test_default_profile_must_be_for_its_game(tmp_path, monkeypatch):
    write(tmp_path, matrix_doc(), "stratego.yaml")
    monkeypatch.setenv("FACEDOWN_PROFILES_DIR", str(tmp_path))
    with pytest.raises(ProfileError, match="game: expected 'stratego'"):
        default_profile("stratego")


# --- valid documents ------------------------------------------------------------------------------------------------


def test_matrix_profile_loads(tmp_path):
    profile = load_profile(write(tmp_path, matrix_doc()))
    assert isinstance(profile, Profile)
    assert profile.channels["A0"] == (0, 0) and profile.channels["L4"] == (11, 4)
    assert profile.pins.buzzer == 18 and profile.pins.leds == {"ready": 25, "turn": 26, "error": 27}
    assert (profile.scan_period_ms, profile.settle_ms) == (10, 40)  # the defaults


def test_channels_follow_game_order_whatever_the_file_order(tmp_path):
    doc = matrix_doc()
    doc["channels"] = dict(reversed(list(doc["channels"].items())))
    assert load_profile(write(tmp_path, doc)).stations == LUZHANQI


def test_scanner_profile_loads(tmp_path):
    profile = find_profile(write(tmp_path, scanner_doc()))
    assert profile.sensing == "hybrid" and profile.matrix_size is None
    assert profile.scanner.kind == "shift_register" and profile.scanner.port is None
    assert (profile.scanner.usb_vid, profile.scanner.usb_pid) == (0x2E8A, 0x0005)
    assert profile.scanner.channel_count == 64, "a 74HC165 chain reports all 8 inputs of its 8 chips"
    assert profile.channels["L4"] == 59 and profile.id == "board"
    assert profile.pins.rows == () and profile.pins.buzzer == 18


def test_hex_usb_ids_in_yaml(tmp_path):
    text = yaml.safe_dump(scanner_doc(), sort_keys=False).replace("usb_vid: 11914", "usb_vid: 0x2E8A")
    assert "0x2E8A" in text
    assert load_profile(write(tmp_path, text)).scanner.usb_vid == 0x2E8A


@settings(max_examples=30, deadline=None)
@given(st.permutations(range(60)))
def test_any_one_to_one_wiring_is_accepted_as_written(order):
    doc = matrix_doc()
    doc["channels"] = {s: [k // 5, k % 5] for s, k in zip(LUZHANQI, order, strict=True)}
    from controller.sensing.profile import parse_profile

    profile = parse_profile(yaml.safe_dump(doc), "perm.yaml")
    assert profile.channels == {s: (k // 5, k % 5) for s, k in zip(LUZHANQI, order, strict=True)}


# --- every defect, with file and path -------------------------------------------------------------------------------


def test_station_without_a_channel(tmp_path):
    doc = matrix_doc()
    del doc["channels"]["C1"], doc["channels"]["K4"]
    err = rejects(tmp_path, doc, "channels", "no channel for", "C1", "K4")
    assert "luzhanqi" in str(err)


def test_channel_used_twice(tmp_path):
    doc = matrix_doc()
    doc["channels"]["B3"] = [0, 2]
    rejects(tmp_path, doc, "channels.B3", "channel [0, 2] is already A2's")


def test_scanner_channel_used_twice(tmp_path):
    doc = scanner_doc()
    doc["channels"]["L4"] = 7
    rejects(tmp_path, doc, "channels.L4", "channel 7 is already B2's")


def test_pin_used_twice(tmp_path):
    doc = matrix_doc()
    doc["pins"]["leds"]["error"] = 21
    rejects(tmp_path, doc, "pins.leds.error", "GPIO21 is already used at pins.columns[2]")


def test_pin_used_twice_within_rows(tmp_path):
    doc = matrix_doc()
    doc["pins"]["rows"][5] = 4
    rejects(tmp_path, doc, "pins.rows[5]", "GPIO4 is already used at pins.rows[0]")


def test_station_not_in_the_game(tmp_path):
    doc = matrix_doc()
    doc["channels"]["M0"] = [11, 4]
    rejects(tmp_path, doc, "channels.M0", "no station 'M0'")


@pytest.mark.parametrize(
    ("where", "patch"),
    [
        ("colour", lambda d: d.update(colour="red")),
        ("pins.fan", lambda d: d["pins"].update(fan=14)),
    ],
)
def test_unknown_key(tmp_path, where, patch):
    doc = matrix_doc()
    patch(doc)
    rejects(tmp_path, doc, where, "unknown key", "expected one of")


def test_unknown_scanner_key(tmp_path):
    doc = scanner_doc()
    doc["scanner"]["baud"] = 115200
    rejects(tmp_path, doc, "scanner.baud", "unknown key")


def test_key_given_twice_in_the_file(tmp_path):
    text = yaml.safe_dump(matrix_doc(), sort_keys=False) + "game: stratego\n"
    rejects(tmp_path, text, f"line {text.count(chr(10))}, column 1", "'game' was already given at line 2")


@pytest.mark.parametrize(
    ("where", "patch", "expected"),
    [
        ("game", lambda d: d.update(game="chess"), "installed game"),
        ("format", lambda d: d.update(format=2), "format 1"),
        ("sensing", lambda d: d.update(sensing="sonar"), "sensing kind"),
        ("sensing", lambda d: d.update(sensing="rfid"), "scanner: section"),
        ("pins", lambda d: d.pop("pins"), "pins.rows and pins.columns"),
        ("pins.columns", lambda d: d["pins"].pop("columns"), "required key is missing"),
        ("pins.rows", lambda d: d["pins"].update(rows=[]), "non-empty list"),
        ("pins.rows[0]", lambda d: d["pins"]["rows"].__setitem__(0, 28), "BCM GPIO number from 0 to 27"),
        ("pins.buzzer", lambda d: d["pins"].update(buzzer="GPIO18"), "BCM GPIO number"),
        ("channels.A0", lambda d: d["channels"].update(A0=3), "[row, column]"),
        ("channels.A0[0]", lambda d: d["channels"].update(A0=[12, 0]), "row index"),
        ("channels.A0[1]", lambda d: d["channels"].update(A0=[0, 5]), "column index"),
        ("settle_ms", lambda d: d.update(settle_ms=5, scan_period_ms=10), "at least scan_period_ms"),
        ("scan_period_ms", lambda d: d.update(scan_period_ms=0), "milliseconds from 1"),
        ("channels", lambda d: d.update(channels=[1, 2]), "mapping"),
        ("format", lambda d: d.pop("format"), "required key is missing"),
    ],
)
def test_malformed_matrix_profile(tmp_path, where, patch, expected):
    doc = matrix_doc()
    patch(doc)
    rejects(tmp_path, doc, where, expected)


@pytest.mark.parametrize(("key", "index", "pin"), [("columns", 0, 2), ("columns", 4, 3), ("rows", 0, 2), ("rows", 11, 3)])
def test_matrix_lines_stay_off_pins_with_a_fixed_pull(tmp_path, key, index, pin):
    doc = matrix_doc()
    doc["pins"][key][index] = pin
    err = rejects(tmp_path, doc, f"pins.{key}[{index}]", f"off GPIO{pin}", "1.8 kOhm pull-up", "0.8 V")
    assert "I2C1" in err.expected


def test_pins_with_a_fixed_pull_still_drive_leds_and_the_buzzer(tmp_path):
    doc = matrix_doc()
    doc["pins"]["leds"] = {"ready": 2, "turn": 3, "error": 27}
    assert load_profile(write(tmp_path, doc)).pins.leds == {"ready": 2, "turn": 3, "error": 27}
    doc["pins"]["leds"] = {"ready": 3}
    doc["pins"]["buzzer"] = 2
    assert load_profile(write(tmp_path, doc)).pins.buzzer == 2


@settings(max_examples=40, deadline=None, derandomize=True)
@given(st.permutations([p for p in BCM_PINS if p not in (18,)]))
def test_a_matrix_is_refused_exactly_when_a_line_has_a_fixed_pull(pins):
    from controller.sensing.profile import parse_profile

    doc = matrix_doc()
    doc["pins"] = {"rows": pins[:12], "columns": pins[12:17], "buzzer": 18}
    clash = [p for p in pins[:17] if p in FIXED_PULL_PINS]
    if clash:
        with pytest.raises(ProfileError, match=f"off GPIO{clash[0]}"):
            parse_profile(yaml.safe_dump(doc), "pins.yaml")
    else:
        assert parse_profile(yaml.safe_dump(doc), "pins.yaml").matrix_size == (12, 5)


@pytest.mark.parametrize("pid", profile_ids())
def test_no_shipped_profile_puts_a_matrix_line_on_a_fixed_pull(pid):
    prof = find_profile(pid)
    assert not set(prof.pins.rows + prof.pins.columns) & set(FIXED_PULL_PINS), pid


@pytest.mark.parametrize(
    ("where", "patch", "expected"),
    [
        ("scanner.kind", lambda d: d["scanner"].update(kind="camera"), "matrix, shift_register"),
        ("scanner.usb_vid", lambda d: d["scanner"].update(usb_vid=0x10000), "16-bit USB id"),
        ("scanner.port", lambda d: d["scanner"].update(port=""), "null to autodetect"),
        ("scanner.channel_count", lambda d: d["scanner"].update(channel_count=10), "at least the game's 60"),
        ("channels.A0", lambda d: d["channels"].update(A0=[0, 0]), "scanner channel index"),
        ("channels.A0", lambda d: d["channels"].update(A0=64), "from 0 to 63"),
        ("scanner.channel_count", lambda d: d["scanner"].update(channel_count=61), "multiple of 8"),
        ("scanner.matrix", lambda d: d["scanner"].update(matrix=[8, 8]), "no matrix shape on a shift_register"),
        ("scanner.kind", lambda d: d["scanner"].update(kind="none"), "has reed switches to scan"),
        ("pins.rows", lambda d: d["pins"].update(rows=[4]), "the scanner drives the matrix"),
    ],
)
def test_malformed_scanner_profile(tmp_path, where, patch, expected):
    doc = scanner_doc()
    patch(doc)
    rejects(tmp_path, doc, where, expected)


def test_matrix_scanner_shape(tmp_path):
    doc = scanner_doc()
    doc["scanner"]["kind"] = "matrix"
    assert load_profile(write(tmp_path, doc)).scanner.matrix == (6, 10), "squarest matrix with the fewest lines"
    doc["scanner"]["matrix"] = [8, 8]
    prof = load_profile(write(tmp_path, doc))
    assert prof.scanner.matrix == (8, 8) and prof.scanner.channel_count == 64
    doc["scanner"]["channel_count"] = 60
    rejects(tmp_path, doc, "scanner.channel_count", "expected 64", "8 x 8 matrix")
    doc["scanner"].pop("channel_count")
    doc["scanner"]["matrix"] = [7, 8]
    rejects(tmp_path, doc, "scanner.matrix", "at least 60 crossings", "7 x 8 = 56")


def test_checkin_and_rfid_sensing(tmp_path):
    doc = scanner_doc()
    doc["sensing"] = "checkin"
    assert load_profile(write(tmp_path, doc)).sensing == "checkin"
    doc["sensing"] = "rfid"
    doc["scanner"] = {"kind": "none"}
    assert load_profile(write(tmp_path, doc)).scanner.channel_count == 60
    matrix = matrix_doc()
    matrix["sensing"] = "checkin"
    rejects(tmp_path, matrix, "sensing", "needs a scanner: section")


def test_bigger_scanner_leaves_spare_channels(tmp_path):
    doc = scanner_doc()
    doc["scanner"]["channel_count"] = 64
    doc["channels"]["A0"] = 63
    assert load_profile(write(tmp_path, doc)).channels["A0"] == 63


def test_unreadable_file_and_bad_yaml(tmp_path):
    with pytest.raises(ProfileError, match=r"missing\.yaml: \(file\): a readable hardware profile"):
        load_profile(tmp_path / "missing.yaml")
    rejects(tmp_path, "game: [luzhanqi\n", "line 2, column 1", "valid YAML")
    rejects(tmp_path, "- 1\n- 2\n", "(top level)", "a mapping")


# -- station lights ---------------------------------------------------------------------------------------------------
def test_ws2812_lights_load_with_a_chain_of_rows_and_default_to_the_stations(tmp_path):
    doc = scanner_doc()
    doc["lights"] = {"kind": "ws2812", "pin": 28, "chain": [list(LUZHANQI[:5]), [None, *LUZHANQI[5:]]]}
    lt = load_profile(write(tmp_path, doc)).lights
    assert (lt.kind, lt.pin, lt.brightness, lt.count) == ("ws2812", 28, 64, 61)
    assert lt.chain[:6] == (*LUZHANQI[:5], None)
    doc["lights"] = {"kind": "ws2812", "pin": 27, "brightness": 20}
    lt = load_profile(write(tmp_path, doc)).lights
    assert lt.chain == LUZHANQI and lt.brightness == 20
    assert load_profile(write(tmp_path, scanner_doc())).lights is None  # optional


def test_gpio_lights_load_on_a_pi_matrix(tmp_path):
    doc = matrix_doc()
    doc["lights"] = {"kind": "gpio", "pins": {"A0": 2, "A1": 3}}
    lt = load_profile(write(tmp_path, doc)).lights
    assert lt.pins == {"A0": 2, "A1": 3} and lt.count == 2


@pytest.mark.parametrize(
    ("doc", "lights", "where", "expected"),
    [
        (scanner_doc, {"kind": "laser"}, "lights.kind", "ws2812, gpio"),
        (scanner_doc, {"kind": "ws2812"}, "lights.pin", "required key is missing"),
        (scanner_doc, {"kind": "ws2812", "pin": 24}, "lights.pin", "edge pins"),
        (scanner_doc, {"kind": "ws2812", "pin": 28, "brightness": 0}, "lights.brightness", "from 1 to 255"),
        (scanner_doc, {"kind": "ws2812", "pin": 28, "chain": ["A0", "A0"]}, "lights.chain[1]", "already LED 0"),
        (scanner_doc, {"kind": "ws2812", "pin": 28, "chain": [["A0"], ["Z9"]]}, "lights.chain[1][0]", "'Z9'"),
        (scanner_doc, {"kind": "ws2812", "pin": 28, "pins": {"A0": 5}}, "lights.pins", "no per-station pins"),
        (scanner_doc, {"kind": "ws2812", "pin": 28, "color": "red"}, "lights.color", "unknown key"),
        (matrix_doc, {"kind": "ws2812", "pin": 28}, "lights.kind", "no scanner"),
        (matrix_doc, {"kind": "gpio", "pins": {"A0": 4}}, "lights.pins.A0", "already used at pins.rows"),
        (matrix_doc, {"kind": "gpio", "pins": {"A0": 2, "A1": 2}}, "lights.pins.A1", "already used at lights.pins.A0"),
        (matrix_doc, {"kind": "gpio", "pins": {"Q1": 2}}, "lights.pins.Q1", "no station 'Q1'"),
        (matrix_doc, {"kind": "gpio", "pins": {}}, "lights.pins", "at least one station"),
        (matrix_doc, {"kind": "gpio", "pins": {"A0": 2}, "brightness": 9}, "lights.brightness", "resistor sets it"),
    ],
)
def test_malformed_lights_are_refused_with_the_file_and_field(tmp_path, doc, lights, where, expected):
    d = doc()
    d["lights"] = lights
    rejects(tmp_path, d, where, expected)
