"""Tag map and enrolment: prompts in order, a new tag per piece, duplicates refused, resumable, CLI list/clear."""

from __future__ import annotations

import threading

import pytest

from controller.rules import load_game
from controller.sensing.sim import SimBoard
from controller.sensing.tagmap import DuplicateTagError, TagEntry, TagMap, enroll


def feed(snaps):
    return iter(snaps)


def test_enrol_records_each_new_tag_and_refuses_duplicates(tmp_path):
    from controller.sensing.base import Snapshot

    game = load_game("stratego")
    tm = TagMap("stratego", tmp_path / "t.json")
    said: list[str] = []
    snaps = [Snapshot(0, frozenset({"a1"}), {"a1": "OLD1"}),  # already there: ignored
             Snapshot(1, frozenset({"a1", "b1"}), {"a1": "OLD1", "b1": "04aa"}),
             Snapshot(2, frozenset({"a1"}), {"a1": "OLD1"}),
             Snapshot(3, frozenset({"a1", "c1"}), {"a1": "OLD1", "c1": "04AA"}),  # the Marshal's tag again
             Snapshot(4, frozenset({"a1", "c1", "d1"}), {"a1": "OLD1", "c1": "04AA", "d1": "04BB"})]
    assert enroll(tm, game, feed(snaps), said.append, limit=2) == 2
    assert said[0] == "place red's Marshal #1 on any station"
    assert tm.lookup("04AA") == TagEntry("red", "marshal", 1)
    assert tm.lookup("04bb") == TagEntry("red", "general", 1)
    assert any("already enrolled as red's marshal #1" in s for s in said)
    again = TagMap.load("stratego", tmp_path / "t.json")  # saved after each tag: resumable
    assert again.entries == tm.entries
    assert again.missing(game)[0] == TagEntry("red", "colonel", 1)
    with pytest.raises(DuplicateTagError):
        again.add("04AA", TagEntry("blue", "spy", 1))


def test_enrol_from_the_simulated_board(tmp_path):
    game = load_game("stratego")
    tm = TagMap("stratego", tmp_path / "t.json")
    board = SimBoard(game.station_ids, settle_ms=20)
    import queue

    q: queue.Queue = queue.Queue()
    t = threading.Thread(target=board.run, args=(q.put,), daemon=True)
    t.start()

    def snaps():
        yield board.current()
        while True:
            yield q.get(timeout=5)

    def place(station, uid):
        board.place(station, tag=uid)

    threading.Timer(0.1, place, ("e5", "0411")).start()
    threading.Timer(0.3, place, ("f5", "0422")).start()
    try:
        assert enroll(tm, game, snaps(), lambda s: None, limit=2) == 2
    finally:
        board.stop()
        t.join(5)
    assert tm.lookup("0411").piece == "marshal" and tm.lookup("0422").piece == "general"


def test_cli_list_and_clear(tmp_path, capsys):
    from controller.cli import main

    tm = TagMap("stratego", tmp_path / "t.json")
    tm.add("04CC", TagEntry("blue", "spy", 1))
    tm.save()
    assert main(["tags", "list", "stratego", "--map", str(tmp_path / "t.json")]) == 0
    out = capsys.readouterr().out
    assert "04CC" in out and "blue" in out and "Spy" in out and "79 pieces without a tag" in out
    assert main(["tags", "clear", "stratego", "--map", str(tmp_path / "t.json"), "--yes"]) == 0
    assert not (tmp_path / "t.json").exists()
