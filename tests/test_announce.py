"""Tests for the announcers: buzzer patterns read back from gpiozero's mock pins, console lines, voice phrases."""

from __future__ import annotations

import io
import itertools
import logging
import os
import re
import threading
from pathlib import Path

import pytest
from gpiozero.pins.mock import MockFactory, MockPWMPin
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.announce import (
    ANNOUNCER_NAMES,
    PATTERNS,
    BuzzerAnnouncer,
    ConsoleAnnouncer,
    EspeakMissingError,
    EventError,
    LightsAnnouncer,
    VoiceAnnouncer,
    available,
    describe,
    make_announcers,
    pattern_for,
    phrase,
)
from controller.announce.patterns import WINNER_GAP_MS
from controller.announce.voice import spoken_station
from controller.errors import FaceDownError
from controller.rules import game_ids, load_game

DOCS = Path(__file__).resolve().parents[1] / "docs" / "buzzer.md"


class RecordingPWMPin(MockPWMPin):
    """gpiozero's MockPWMPin, also keeping every frequency it was set to (MockPWMPin records only states)."""

    def __init__(self, factory, info):
        super().__init__(factory, info)
        self.frequencies: list[float | None] = []

    def _set_frequency(self, value):
        super()._set_frequency(value)
        self.frequencies.append(value)


@pytest.fixture
def recording_factory():
    factory = MockFactory(pin_class=RecordingPWMPin)
    try:
        yield factory
    finally:
        factory.reset()


class Tape:
    """An injected ``sleep`` that notes what the pin is doing for each wait: (frequency or None, ms).

    With a plain buzzer the "frequency" is the pin's state (1.0 on, None off)."""

    def __init__(self, gate: threading.Event | None = None) -> None:
        self.pin = None
        self.notes: list[tuple[float | None, int]] = []
        self.gate = gate
        self.started = threading.Event()

    def sleep(self, seconds: float) -> None:
        sounding = self.pin.state > 0
        value = (self.pin.frequency or self.pin.state) if sounding else None
        self.notes.append((value, round(seconds * 1000)))
        self.started.set()
        if self.gate is not None:
            assert self.gate.wait(10), "test gate never opened"


def tonal(factory, tape: Tape, **kwargs) -> BuzzerAnnouncer:
    buzzer = BuzzerAnnouncer(17, pin_factory=factory, sleep=tape.sleep, **kwargs)
    tape.pin = buzzer.device.pwm_device.pin
    tape.pin.frequencies.clear()  # forget the device's own set-up
    return buzzer


NOT_ALLOWED = {"code": "reason.not_allowed", "params": {"station": "a4"}}
AGREED = {"code": "verdict.arbiter", "params": {"note": "agreed"}}
FLAG_LOST = {"code": "verdict.piece_lost", "params": {"piece": "flag", "side": "blue"}}


def step(station: str, action: str, owner: str | None, to: str | None = None) -> dict:
    """A fix-up step as the session writes it."""
    params = {k: v for k, v in (("station", station), ("owner", owner), ("to", to)) if v is not None}
    return {"station": station, "action": action, "owner": owner, "by": owner, "to": to,
            "say": {"code": f"step.{action}", "params": params}}


ZH_OUTCOMES = {"attacker": "进攻方胜", "defender": "防守方胜", "both": "同归于尽", "bounce": "无效"}

ATTACK = {"event": "attack", "player": "red", "from": "a4", "to": "a5", "ply": 7, "defender": "blue"}

EVENT_PATTERNS = [
    ({**ATTACK, "outcome": "attacker"}, "attacker"),
    ({**ATTACK, "outcome": "defender"}, "defender"),
    ({**ATTACK, "outcome": "both"}, "both"),
    ({**ATTACK, "outcome": "bounce"}, "bounce"),
    ({"event": "illegal", "player": "red", "from": "a4", "to": "a6", "reason": NOT_ALLOWED}, "illegal"),
    ({"event": "mismatch", "stations": [{"station": "e5", "expected": "blue", "found": "empty"}],
      "steps": [step("e5", "put_back", "blue")], "say": {"code": "event.mismatch", "params": {"steps": [step("e5", "put_back", "blue")["say"]]}}},
     "mismatch"),
    ({"event": "start", "player": "red"}, "turn_1"),
    ({"event": "turn", "player": "red"}, "turn_1"),
    ({"event": "turn", "player": "blue"}, "turn_2"),
    ({"event": "game_over", "winners": [], "reason": AGREED}, "draw"),
]

QUIET = [
    {"event": "move", "player": "red", "from": "a4", "to": "a5", "ply": 7},
    {"event": "fixup", "steps": [step("e5", "remove", "red")]},
    {"event": "fixup_done"},
    {"event": "paused"},
    {"event": "resumed"},
    {"event": "notice", "say": {"code": "notice.text", "params": {"text": "hello"}}},
    {"event": "setup", "player": "blue", "status": "registered"},
    {"event": "board", "occupied": ["a1", "b1"]},
    {"event": "undo", "ply": 6, "turn": "red"},
    {"event": "fixup", "steps": [], "say": {"code": "setup.lay_out", "params": {}}},
]

ALL_EVENTS = [e for e, _ in EVENT_PATTERNS] + QUIET + [
    {"event": "game_over", "winners": ["red"], "reason": FLAG_LOST},
    {"event": "fixup", "steps": [step("e5", "put_back", "blue"), step("a5", "return", "red", "a4")]},
    {"event": "mismatch", "stations": [{"station": "f5", "expected": None, "found": "occupied"}]},
]


# --- patterns as data -------------------------------------------------------------------------------------


def test_patterns_differ_in_notes_and_in_rhythm_alone():
    for a, b in itertools.combinations(PATTERNS.values(), 2):
        assert a.notes != b.notes, (a.name, b.name)
        assert a.rhythm() != b.rhythm(), f"{a.name} and {b.name} sound alike on an on/off buzzer"


def test_verdict_patterns_differ_in_pitches_too():
    def pitches(p):
        return [f for f, _ in p.notes if f is not None]

    verdicts = ["attacker", "defender", "both", "bounce", "illegal", "mismatch", "win", "draw", "turn_1"]
    for a, b in itertools.combinations(verdicts, 2):
        assert pitches(PATTERNS[a]) != pitches(PATTERNS[b])


def test_docs_table_matches_the_patterns():
    text = DOCS.read_text(encoding="utf-8")
    for pattern in PATTERNS.values():
        rows = [line for line in text.splitlines() if line.startswith(f"| `{pattern.name}` |")]
        assert len(rows) == 1, f"docs/buzzer.md needs one table row for {pattern.name}"
        assert rows[0].rstrip().endswith(f"| {pattern.notation()} |"), pattern.name


def test_win_is_fanfare_then_the_winners_pips():
    red = pattern_for({"event": "game_over", "winners": ["red"]})
    blue = pattern_for({"event": "game_over", "winners": ["blue"]})
    assert red.notes == (*PATTERNS["win"].notes, (None, WINNER_GAP_MS), *PATTERNS["turn_1"].notes)
    assert blue.notes == (*PATTERNS["win"].notes, (None, WINNER_GAP_MS), *PATTERNS["turn_2"].notes)
    assert red.rhythm() != blue.rhythm()


@pytest.mark.parametrize("event", QUIET, ids=lambda e: e["event"])
def test_quiet_events_have_no_pattern(event):
    assert pattern_for(event) is None


@pytest.mark.parametrize(
    "event, words",
    [
        ({"event": "explode"}, "unknown event kind 'explode'"),
        ({"event": "turn"}, "lacks 'player'"),
        ({**ATTACK, "outcome": "illegal"}, "attack outcome 'illegal'"),
        ({"event": "turn", "player": "green"}, "side 'green' is not one of"),
        ({"event": "mismatch", "stations": [{"expected": "red"}]}, "needs station, found"),
        ({"event": "game_over", "winners": "red"}, "winners must be a list"),
        (["event", "turn"], "must be a dict"),
    ],
)
def test_malformed_events_are_refused_clearly(event, words):
    with pytest.raises(EventError, match=re.escape(words)):
        pattern_for(event)


def test_turn_pips_follow_the_games_side_order():
    sides = ("red", "blue", "green", "yellow")
    assert pattern_for({"event": "turn", "player": "yellow"}, sides) is PATTERNS["turn_4"]
    with pytest.raises(EventError, match="at most 4 sides"):
        pattern_for({"event": "turn", "player": "e"}, ("a", "b", "c", "d", "e"))


# --- buzzer, read back from the mock pins -----------------------------------------------------------------


@pytest.mark.parametrize("event, name", EVENT_PATTERNS, ids=lambda x: x if isinstance(x, str) else x["event"])
def test_each_event_plays_its_documented_pattern(recording_factory, event, name):
    tape = Tape()
    buzzer = tonal(recording_factory, tape)
    try:
        buzzer.announce(event)
        assert buzzer.flush(timeout=10)
        expected = PATTERNS[name].notes
        assert tape.notes == list(expected)
        # the frequencies the pin was driven at, in order, ending silent
        assert tape.pin.frequencies == [f for f, _ in expected] + [None]
        assert tape.pin.state == 0
    finally:
        buzzer.close()


def test_game_over_plays_winner_pips_on_the_pin(recording_factory):
    tape = Tape()
    buzzer = tonal(recording_factory, tape)
    try:
        buzzer.announce({"event": "game_over", "winners": ["blue"], "reason": "Flag lost"})
        assert buzzer.flush(timeout=10)
        played = [f for f in tape.pin.frequencies if f is not None]
        assert played == [523, 659, 784, 1047, 1760, 1760]
    finally:
        buzzer.close()


def test_quiet_events_leave_the_pin_alone(recording_factory):
    tape = Tape()
    buzzer = tonal(recording_factory, tape)
    try:
        for event in QUIET:
            buzzer.announce(event)
        assert buzzer.flush(timeout=10)
        assert tape.notes == [] and tape.pin.frequencies == []
    finally:
        buzzer.close()


def test_events_play_in_the_order_announced(recording_factory):
    tape = Tape()
    buzzer = tonal(recording_factory, tape)
    try:
        sequence = [EVENT_PATTERNS[1], EVENT_PATTERNS[8], EVENT_PATTERNS[4], EVENT_PATTERNS[7]]
        for event, _ in sequence:
            buzzer.announce(event)
        assert buzzer.flush(timeout=10)
        assert tape.notes == [n for _, name in sequence for n in PATTERNS[name].notes]
    finally:
        buzzer.close()


def test_plain_buzzer_plays_the_rhythm(mock_factory):
    tape = Tape()
    buzzer = BuzzerAnnouncer(17, tonal=False, sleep=tape.sleep)
    tape.pin = buzzer.device.pin
    try:
        buzzer.announce({**ATTACK, "outcome": "defender"})
        assert buzzer.flush(timeout=10)
        runs: list[tuple[bool, int]] = []
        for value, ms in tape.notes:
            on = value is not None
            runs = runs[:-1] + [(on, runs[-1][1] + ms)] if runs and runs[-1][0] == on else runs + [(on, ms)]
        assert tuple(runs) == PATTERNS["defender"].rhythm()
        assert [s.state for s in tape.pin.states][-1] == 0
    finally:
        buzzer.close()


def test_full_queue_drops_the_oldest_waiting_and_says_so(recording_factory, caplog):
    gate = threading.Event()
    tape = Tape(gate)
    buzzer = tonal(recording_factory, tape, maxsize=2)
    try:
        buzzer.announce(EVENT_PATTERNS[4][0])  # illegal: the worker starts it and waits at the gate
        assert tape.started.wait(10)
        with caplog.at_level(logging.WARNING, logger="controller.announce.worker"):
            buzzer.announce({"event": "turn", "player": "red"})
            buzzer.announce({"event": "turn", "player": "blue"})
            buzzer.announce(EVENT_PATTERNS[5][0])  # mismatch: pushes out the waiting red turn
        assert buzzer.dropped == 1
        assert "dropped the oldest" in caplog.text and "turn_1" in caplog.text
        gate.set()
        assert buzzer.flush(timeout=10)
        expected = [*PATTERNS["illegal"].notes, *PATTERNS["turn_2"].notes, *PATTERNS["mismatch"].notes]
        assert tape.notes == expected
    finally:
        gate.set()
        buzzer.close()


def test_close_releases_the_pin_and_refuses_more(recording_factory):
    tape = Tape()
    buzzer = tonal(recording_factory, tape)
    buzzer.close()
    assert buzzer.device.closed
    with pytest.raises(RuntimeError, match="closed"):
        buzzer.announce({"event": "turn", "player": "red"})
    buzzer.close()  # twice is harmless
    again = BuzzerAnnouncer(17, pin_factory=recording_factory, sleep=tape.sleep)  # the pin is free again
    again.close()


def test_tonal_buzzer_needs_a_pwm_pin():
    factory = MockFactory()  # plain MockPin: no PWM
    try:
        with pytest.raises(ValueError, match="cannot do PWM.*tonal=False"):
            BuzzerAnnouncer(17, pin_factory=factory, sleep=lambda s: None)
        plain = BuzzerAnnouncer(17, tonal=False, pin_factory=factory, sleep=lambda s: None)
        plain.close()
    finally:
        factory.reset()


# --- console ----------------------------------------------------------------------------------------------


def test_console_lines_for_every_kind():
    lines = [describe(e) for e in ALL_EVENTS if e["event"] != "board"]
    assert lines[0] == "Red attacks Blue from a4 at a5: attacker wins."
    assert lines[1] == "Red attacks Blue from a4 at a5: defender wins."
    assert lines[3] == "Red attacks Blue from a4 at a5: no effect."
    assert lines[4] == "Illegal move by Red: that move is not allowed: put the piece back on a4."
    assert lines[5] == "Board mismatch: e5: put Blue's piece back."
    assert lines[6] == "Game starts: Red to move."
    assert lines[8] == "Blue to move."
    assert lines[9] == "Game over: draw (agreed)."  # the arbiter's own words
    assert "Red: a4 to a5." in lines
    assert "Game over: Red won (Blue's flag lost)." in lines  # no game given: the piece's id
    assert "Fix the board: e5: put Blue's piece back; a5: return Red's piece to a4." in lines
    assert "Board mismatch: check f5." in lines
    assert "Blue's deployment is registered." in lines
    assert "The arbiter took back the last ruling; Red to move." in lines
    assert "Lay out every deployment; play starts when the board matches." in lines
    assert describe({"event": "board", "occupied": []}) is None
    assert len(set(lines)) == len(lines)


def test_public_reveals_are_named_and_nothing_else():
    game = load_game("luzhanqi")
    notice = {"code": "notice.commander_lost_flag_shown",
              "params": {"side": "blue", "piece": "commander", "station": "B0", "flag_piece": "flag"}}
    event = {**ATTACK, "outcome": "both", "reveals": [{"station": "B0", "owner": "blue", "piece": "flag"}], "notices": [notice]}
    line = describe(event, game)
    assert line == ("Red attacks Blue from a4 at a5: both removed. Revealed: Blue Flag at B0. "
                    "Blue's Field Marshal is lost: its Flag stands on B0.")
    assert phrase(event, "zh", game) == "红方 A 4 进攻蓝方 A 5：同归于尽。公开：蓝方军旗 B 0。蓝方的司令阵亡，军旗在 B 0。"
    assert describe(event, game, "zh-Hant").startswith("紅方 a4 進攻藍方 a5：同歸於盡。")
    assert phrase(event, "en", game).startswith("Red attacks Blue from a4 at a5: both removed. Revealed: Blue Flag at b0.")
    with pytest.raises(EventError, match="needs station, owner, piece"):
        describe({**event, "reveals": [{"station": "B0"}]}, game)


@pytest.mark.parametrize("language", ["zh", "en", None])
def test_unknown_kinds_are_skipped_and_logged_once(mock_factory, caplog, language):
    out = io.StringIO()
    tape = Tape()
    announcers = [ConsoleAnnouncer(out), BuzzerAnnouncer(17, sleep=tape.sleep), LightsAnnouncer({"red": 5})]
    tape.pin = announcers[1].device.pwm_device.pin
    if language and available():
        announcers.append(VoiceAnnouncer(language))
    try:
        with caplog.at_level(logging.WARNING):
            for _ in range(3):
                for announcer in announcers:
                    announcer.announce({"event": "teleport", "player": "red"})
        assert announcers[1].flush(timeout=10)
        assert out.getvalue() == "" and tape.notes == []
        warnings = [r for r in caplog.records if "unknown kind 'teleport'" in r.getMessage()]
        assert len(warnings) == len(announcers)
        with pytest.raises(EventError, match="lacks 'player'"):
            announcers[0].announce({"event": "turn"})
    finally:
        for announcer in announcers:
            announcer.close()


def test_console_names_pieces_only_when_the_event_does():
    game = load_game("stratego")
    line = describe({**ATTACK, "outcome": "defender", "piece": "marshal", "defender_piece": "general"}, game)
    assert line == "Red Marshal attacks Blue General from a4 at a5: defender wins."
    assert describe({**ATTACK, "outcome": "defender", "piece": "marshal", "defender_piece": "general"}, game, "zh-Hant") \
        == "紅方元帥 a4 進攻藍方將軍 a5：防守方勝。"
    assert describe({**ATTACK, "outcome": "defender", "piece": "marshal"}, game, "zh-Hans") == "红方元帅 a4 进攻蓝方 a5：防守方胜。"
    with pytest.raises(EventError, match="does not have"):
        describe({**ATTACK, "outcome": "both", "reveals": [{"station": "a5", "owner": "red", "piece": "wizard"}]}, game)


def test_console_announcer_writes_one_line_per_event():
    out = io.StringIO()
    console = ConsoleAnnouncer(out)
    for event in ALL_EVENTS:
        console.announce(event)
    console.close()
    assert out.getvalue().splitlines() == [describe(e) for e in ALL_EVENTS if e["event"] != "board"]
    with pytest.raises(RuntimeError, match="closed"):
        console.announce(ALL_EVENTS[0])


stations = st.from_regex(r"[a-kA-K][0-9]{1,2}", fullmatch=True)


@settings(max_examples=60, deadline=None)
@given(
    game_id=st.sampled_from(game_ids()),
    outcome=st.sampled_from(["attacker", "defender", "both", "bounce"]),
    src=stations,
    dst=stations,
)
def test_no_piece_name_leaks_from_an_anonymous_attack(game_id, outcome, src, dst):
    game = load_game(game_id)
    event = {"event": "attack", "player": "blue", "from": src, "to": dst, "outcome": outcome, "defender": "red"}
    texts = [describe(event, game), phrase(event, "en", game), phrase(event, "zh", game)]
    for piece in game.pieces:
        for text in texts:
            assert piece.zh not in text
            assert not re.search(rf"\b{re.escape(piece.name)}\b", text), (piece.name, text)


# --- voice ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("outcome", ["attacker", "defender", "both", "bounce"])
def test_voice_says_the_outcome_at_the_station(outcome):
    event = {**ATTACK, "outcome": outcome}
    zh, en = phrase(event, "zh"), phrase(event, "en")
    assert zh == f"红方 A 4 进攻蓝方 A 5：{ZH_OUTCOMES[outcome]}。"
    assert en.startswith("Red attacks Blue from a4 at a5: ")


def test_voice_phrases_for_every_kind_in_both_languages():
    spoken = [e for e in ALL_EVENTS if e["event"] != "board"]
    zh = [phrase(e, "zh") for e in spoken]
    en = [phrase(e, "en") for e in spoken]
    assert len(set(zh)) == len(zh) and len(set(en)) == len(en)
    assert zh[4] == "红方走法违规：此步不允许，请把棋子放回 A 4。"
    assert en[4] == "Illegal move by Red: that move is not allowed: put the piece back on a4."
    assert zh[5] == "棋盘不符：E 5：放回蓝方的棋子。"
    assert zh[6] == "开始，红方先走。" and zh[8] == "轮到蓝方。"
    assert zh[9] == "游戏结束，和棋（agreed）。" and en[9] == "Game over: draw (agreed)."
    won = {"event": "game_over", "winners": ["red"], "reason": FLAG_LOST}
    assert phrase(won, "zh", load_game("stratego")) == "游戏结束，红方胜（蓝方失去军旗）。"
    assert "Game over: Red won (Blue's flag lost)." in en
    assert "请整理棋盘：E 5：放回蓝方的棋子；A 5：把红方的棋子退回 A 4。" in zh
    assert phrase({"event": "notice", "say": {"code": "notice.text", "params": {"text": "请暂停"}}}, "zh") == "请暂停"
    assert "蓝方布阵完毕。" in zh and "裁判撤销上一步，轮到红方。" in zh and "请摆好各方布阵，棋盘相符后开始。" in zh
    assert "The arbiter took back the last ruling; Red to move." in en
    assert phrase({"event": "board", "occupied": []}, "zh") is None
    with pytest.raises(ValueError, match="language must be one of"):
        phrase(ALL_EVENTS[0], "fr")


def test_voice_uses_zh_piece_names_from_the_game_file():
    game = load_game("stratego")
    event = {**ATTACK, "outcome": "attacker", "piece": "miner", "defender_piece": "general"}
    assert phrase(event, "zh", game) == "红方除雷兵 A 4 进攻蓝方将军 A 5：进攻方胜。"  # Simplified: 将 not 將
    assert phrase(event, "en", game) == "Red Miner attacks Blue General from a4 at a5: attacker wins."


def test_mandarin_voice_reads_the_fixups_the_session_really_emits():
    """Every fix-up a real refereed game asks for is read in Mandarin, step by step, with no English left in it."""
    import json

    from controller.commands.script import run_script
    from tests.physical import random_game_script

    game_id = "luzhanqi"
    state_game = load_game(game_id)
    fixups: list[dict] = []
    for seed in range(4):
        out = io.StringIO()
        run_script(game_id, random_game_script(game_id, seed, max_plies=60).text(), out, everything=True)
        fixups += [e for e in map(json.loads, out.getvalue().splitlines()) if e["event"] == "fixup" and e["steps"]]
    assert fixups, "the games asked for no fix-up"
    for e in fixups:
        words = phrase(e, "zh", state_game)
        assert words is not None and words.startswith("请整理棋盘：")
        assert not re.search(r"[A-Za-z]{2,}", words), words  # stations are spelled "A 4"; no English word
        for x in e["steps"]:
            assert spoken_station(x["station"], "zh") in words


@given(stations)
def test_mandarin_stations_keep_letters_and_numbers_apart(station):
    spoken = spoken_station(station, "zh")
    letter, number = re.fullmatch(r"([A-Z]) (\d+)", spoken).groups()
    assert letter + number == station.upper()


def test_missing_espeak_is_a_clear_error(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert not available()
    with pytest.raises(EspeakMissingError, match="apt install espeak-ng"):
        VoiceAnnouncer("zh")
    with pytest.raises(EspeakMissingError):
        make_announcers(["voice-en"])


@pytest.mark.skipif(not available() and not os.environ.get("CI"), reason="espeak-ng is not installed")
@pytest.mark.parametrize("language", ["zh", "en"])
def test_voice_renders_a_wav(tmp_path, language):
    # under CI the package is installed by .ci/run: a missing espeak-ng fails here instead of skipping
    assert available(), "espeak-ng is missing (apt-get install espeak-ng)"
    voice = VoiceAnnouncer(language, wav_dir=tmp_path)
    try:
        voice.announce({**ATTACK, "outcome": "both"})
        assert voice.flush(timeout=60)
    finally:
        voice.close()
    wav = tmp_path / "0001.wav"
    data = wav.read_bytes()
    assert data[:4] == b"RIFF" and data[8:12] == b"WAVE" and len(data) > 1000
    assert list(voice.recent) == [phrase({**ATTACK, "outcome": "both"}, language)]


# --- lights and the factory -------------------------------------------------------------------------------


def test_lights_follow_the_turn_and_the_trouble(mock_factory):
    lights = LightsAnnouncer({"red": 23, "blue": 24}, alert=25)
    try:
        red, blue, alert = lights.leds["red"], lights.leds["blue"], lights.alert
        lights.announce({"event": "start", "player": "red"})
        assert (red.is_lit, blue.is_lit, alert.is_lit) == (True, False, False)
        lights.announce(EVENT_PATTERNS[5][0])  # mismatch
        assert alert.is_lit
        lights.announce({"event": "fixup_done"})
        assert not alert.is_lit
        lights.announce({"event": "turn", "player": "blue"})
        assert (red.is_lit, blue.is_lit) == (False, True)
        lights.announce({"event": "paused"})
        assert not red.is_lit and not blue.is_lit
        lights.announce({"event": "resumed"})
        assert blue.is_lit
        lights.announce({"event": "undo", "ply": 3, "turn": "red"})
        assert (red.is_lit, blue.is_lit) == (True, False)
        lights.announce({"event": "turn", "player": "blue"})
        lights.announce({"event": "game_over", "winners": ["red"]})
        assert (red.is_lit, blue.is_lit) == (True, False)
        lights.announce({"event": "game_over", "winners": []})
        assert red.is_lit and blue.is_lit
        with pytest.raises(EventError, match="no LED for side 'green'"):
            lights.announce({"event": "turn", "player": "green"})
    finally:
        lights.close()
    assert mock_factory.pin(23).state == 0


def test_make_announcers_by_name(mock_factory):
    game = load_game("luzhanqi")
    built = make_announcers(["console", "buzzer"], game, pin=18)
    try:
        assert isinstance(built[0], ConsoleAnnouncer) and built[0].game is game
        assert isinstance(built[1], BuzzerAnnouncer) and built[1].tonal and built[1].sides == game.sides
    finally:
        for announcer in built:
            announcer.close()
    with pytest.raises(ValueError, match="unknown announcer 'bell'; choose from console, buzzer") as refused:
        make_announcers(["console", "bell"])
    assert isinstance(refused.value, FaceDownError)  # the command line prints it as a message, not a traceback
    with pytest.raises(ValueError, match="needs lights="):
        make_announcers(["buzzer", "lights"], pin=18)
    plain = make_announcers(["buzzer"], pin=18)  # the failed call above released its buzzer pin
    plain[0].close()
    assert set(ANNOUNCER_NAMES) >= {"console", "buzzer", "voice-zh", "voice-en"}


def test_console_speaks_the_chosen_language():
    out = io.StringIO()
    [console] = make_announcers(["console"], load_game("stratego"), lang="zh-Hant")
    console.stream = out
    console.announce({"event": "turn", "player": "blue"})
    console.announce({"event": "illegal", "player": "red", "from": "a4", "to": "a6", "reason": NOT_ALLOWED})
    assert out.getvalue().splitlines() == ["輪到藍方。", "紅方走法違規：此步不允許，請把棋子放回 a4。"]
    with pytest.raises(ValueError, match="console language must be one of"):
        ConsoleAnnouncer(out, lang="fr")


def test_a_computer_seats_instructions_are_read_aloud_and_printed_in_every_language():
    """The human at the board moves the computer's tokens: the voice and the console say which, where; the buzzer
    leaves it to the turn's pips; a failure is said as a code, in the listener's language."""
    luzhanqi = load_game("luzhanqi")
    move = {"event": "bot", "kind": "move", "player": "blue", "from": "e7", "to": "e6", "attack": False,
            "say": {"code": "bot.move", "params": {"player": "blue", "from": "e7", "to": "e6"}}}
    failed = {"event": "bot", "kind": "failed", "player": "blue", "why": "timeout", "bot": "facedown",
              "say": {"code": "bot.failed", "params": {"player": "blue", "bot": "facedown",
                                                       "why": {"code": "bot.why.timeout", "params": {}}}}}
    assert phrase(move, "en", luzhanqi) == "Blue (computer): move the token on e7 to e6"
    assert phrase(move, "zh", luzhanqi).count("E 7") == 1 and "E 6" in phrase(move, "zh", luzhanqi)
    assert describe(move, luzhanqi, "zh-Hant") and "e7" in describe(move, luzhanqi, "zh-Hant")
    assert "took too long" in describe(failed, luzhanqi)
    for lang in ("zh-Hans", "zh-Hant"):
        line = describe(failed, luzhanqi, lang)
        assert line and not re.search(r"[A-Za-z]{3,}", line.replace("facedown", "")), line
    assert pattern_for(move) is None
    out = io.StringIO()
    ConsoleAnnouncer(out, game=luzhanqi).announce(move)
    assert out.getvalue() == "Blue (computer): move the token on e7 to e6\n"


def test_a_scout_that_attacked_is_revealed_where_it_came_from():
    """A Stratego scout runs a7 -> a4 onto a stronger piece and loses (issue 37): the console and the voice say the
    scout shown came from a7 - it never stood on a4 - and the piece attacked is named where it stands."""
    import random

    from controller.referee.ruling_plan import ruling_event
    from controller.rules import Move, new_game
    from controller.rules.deploy import random_deployment

    game = load_game("stratego")
    rng = random.Random(5)
    st = new_game(game)
    for side in ("red", "blue"):
        placement = random_deployment(game, side, rng, st.options)
        if side == "red":  # a scout on a4 with the a-file open to a7, Blue's marshal on a7
            other = next(s for s, p in placement.items() if p == "scout")
            placement[other], placement["a4"] = placement["a4"], "scout"
        else:
            other = next(s for s, p in placement.items() if p == "marshal")
            placement[other], placement["a7"] = placement["a7"], "marshal"
        st.deploy(side, placement)
    st.apply(("a4", "a5"))  # the scout steps up; Blue moves elsewhere; then the scout runs a5 -> a7 over a6
    blue = next(m for m in st.legal_moves() if m[0] != "a7")
    st.apply(blue)
    frm, to = "a5", "a7"
    ruling = st.apply((frm, to))
    event = ruling_event(ruling, Move(frm, to), "red")
    line = describe(event, game)
    assert "Revealed:" in line and "Red Scout (moved from a5)" in line and "Blue Marshal at a7" in line, line
    assert "Scout at a7" not in line
    assert "（从a5走出）" in describe(event, game, "zh-Hans")
