"""A computer seat on the simulated board through `facedown script`: the bot deploys and the scripted human lays out
its tokens, the referee instructs each computer move, the human carries it out (once deliberately wrongly, then
corrected), and every move is judged as between people. The bot is handed only its seat's view."""

from __future__ import annotations

import io
import json
import random
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as hs

from controller.bots import FaceDownBot, RandomBot
from controller.bots.facedown import Level
from controller.bots.setups import built_setup
from controller.commands.script import run_script
from controller.referee.session import Session
from controller.rules import load_game, view
from controller.rules.views import may_know


class Events(io.StringIO):
    """The script's output stream, parsed as it is written."""

    def __init__(self) -> None:
        super().__init__()
        self.events: list[dict[str, Any]] = []

    def write(self, s: str) -> int:
        for line in s.splitlines():
            if line.strip():
                self.events.append(json.loads(line))
        return len(s)


def _line(obj: dict[str, Any]) -> str:
    return json.dumps(obj)


def _human_game(game: str, seed: int, max_plies: int, *, misstep: bool, holder: dict[str, Any]):
    """The scripted human at red: deploys, moves red's pieces (a random player's choices from red's own view), does
    each fix-up the referee asks for, and carries out blue's (the computer's) instructed moves."""
    gdef = load_game(game)
    yield _line({"setup": "red", "pieces": built_setup(gdef, "red", random.Random(seed))})
    yield _line({"bot_setup": "blue"})
    yield _line({"tick_ms": 100})
    human = RandomBot()
    human.new_game(game, "red", gdef.resolve_options(), seed)
    wrong_done = not misstep
    for _ in range(6 * max_plies):
        session: Session = holder["session"]
        st = session.state
        if st.phase != "play" or st.ply >= max_plies:
            return
        if session.recognizer.fixing:
            yield _line({"fixup": True})
            continue
        if st.turn == "red":
            frm, to = human.choose_move(view(st, "red"), 100)
            if to in st.board:
                yield from map(_line, ({"lift": frm}, {"tick_ms": 100}, {"lift": to}, {"tick_ms": 100}, {"place": to}, {"tick_ms": 100}))
            else:
                yield from map(_line, ({"lift": frm}, {"tick_ms": 100}, {"place": to}, {"tick_ms": 100}))
            continue
        seat = holder["seat"]
        want = seat.instruction
        assert want is not None, "the referee gave the computer's move"
        if not wrong_done and want.to not in st.board:
            wrong = next(s for s in gdef.station_ids if s not in st.board and s != want.to and st.topo.passable[s])
            holder["wrong"] = (want, wrong)
            yield _line({"bot_move": "blue", "to": wrong})  # the human puts the token on the wrong station
            yield _line({"tick_ms": 100})
            yield from map(_line, ({"lift": wrong}, {"tick_ms": 100}, {"place": want.frm}, {"tick_ms": 100}))  # and takes it back
            wrong_done = True
        yield _line({"bot_move": "blue"})
        yield _line({"tick_ms": 100})


def _audited_bot(problems: list[str], holder: dict[str, Any]) -> FaceDownBot:
    class Audited(FaceDownBot):
        def _check(self, seen: dict[str, Any]) -> None:
            st = holder["session"].state
            for e in seen["pieces"]:
                p = st.board.get(e["station"])
                if "piece" in e and (p is None or p.type != e["piece"] or not may_know(st, p, "blue")):
                    problems.append(f"blue was handed {e['piece']} on {e['station']}")

        def observe(self, view: Any, event: Any = None) -> None:
            self._check(view)
            super().observe(view, event)

        def choose_move(self, view: Any, time_ms: float) -> tuple[str, str]:
            self._check(view)
            return super().choose_move(view, time_ms)

    bot = Audited(1)
    bot.spec = Level(positions=10**9, max_samples=2, replies=False)  # a fixed amount of thought: repeatable
    return bot


def _play(game: str, seed: int, max_plies: int, misstep: bool) -> tuple[list[dict[str, Any]], dict[str, Any], list[str]]:
    holder: dict[str, Any] = {}
    problems: list[str] = []
    out = Events()

    def on_session(session: Session, board: Any, computers: dict[str, Any]) -> None:
        holder["session"] = session
        holder["seat"] = computers["blue"]

    run_script(game, _human_game(game, seed, max_plies, misstep=misstep, holder=holder), out, everything=True,
               seats={"blue": _audited_bot(problems, holder)}, seed=seed, on_session=on_session)
    return out.events, holder, problems


def test_a_whole_game_against_the_computer_on_the_simulated_board() -> None:
    events, holder, problems = _play("luzhanqi", 3, 400, misstep=True)
    session: Session = holder["session"]
    kinds = [e["event"] for e in events]
    setup = next(e for e in events if e["event"] == "bot" and e["kind"] == "setup")
    assert setup["player"] == "blue" and setup["count"] == 25 and setup["say"]["code"] == "bot.setup"
    assert sorted(setup["stations"]) == sorted(session.state.deployments["blue"])
    assert "start" in kinds
    instructions = [e for e in events if e["event"] == "bot" and e["kind"] == "move"]
    judged = [e for e in events if e["event"] in ("move", "attack") and e["player"] == "blue"]
    assert len(judged) >= 5
    # every computer move judged is the one the referee told the human to make, in order
    told = []
    for e in instructions:
        if not told or told[-1] != (e["from"], e["to"]):
            told.append((e["from"], e["to"]))
    assert [(e["from"], e["to"]) for e in judged] == told[:len(judged)]
    for e in instructions:
        assert e["say"]["code"] in ("bot.move", "bot.attack") and e["say"]["params"]["from"] == e["from"]
    # the deliberate mistake: guidance and a mismatch, nothing judged, then the instruction carried out
    want, wrong = holder["wrong"]
    i = next(i for i, e in enumerate(events) if e["event"] == "bot" and e["kind"] == "wrong_move")
    assert events[i]["from"] == want.frm and events[i]["done_to"] == wrong and events[i]["say"]["code"] == "bot.wrong_move"
    assert events[i + 1]["event"] == "mismatch"
    assert {d["station"] for d in events[i + 1]["stations"]} == {want.frm, wrong}
    after = next(e for e in events[i:] if e["event"] in ("move", "attack") and e["player"] == "blue")
    assert (after["from"], after["to"]) == tuple(want)  # the next move judged is the instructed one, not the mistake
    # the game ran to its end, judged as between people
    assert kinds[-1] == "game_over" or session.state.phase == "over", kinds[-5:]
    assert not any(e["event"] == "bot" and e["kind"] == "failed" for e in events)
    assert problems == []


@settings(max_examples=3, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(seed=hs.integers(0, 10_000), game=hs.sampled_from(["luzhanqi", "stratego", "navy_tw"]))
def test_the_computer_is_handed_no_rank_its_seat_may_not_know(seed: int, game: str) -> None:
    events, holder, problems = _play(game, seed, 16, misstep=False)
    assert problems == []
    seat = holder["seat"]
    assert seat.inputs, "the bot was handed views"
    for seen, _event in seat.inputs:
        assert seen["audience"] == "blue"
    assert not any(e["event"] == "bot" and e["kind"] == "failed" for e in events)


def test_the_bot_message_keys_are_in_every_catalog_with_the_params_the_events_carry() -> None:
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parents[1] / "controller" / "messages" / "catalogs"
    catalogs = {lang: json.loads((root / f"{lang}.json").read_text(encoding="utf-8")) for lang in ("en", "zh-Hans", "zh-Hant")}
    bot_keys = {lang: {k for k in c if k.startswith("bot.")} for lang, c in catalogs.items()}
    assert bot_keys["en"] == bot_keys["zh-Hans"] == bot_keys["zh-Hant"]
    events, _holder, _problems = _play("luzhanqi", 5, 40, misstep=True)
    said = [e["say"] for e in events if e["event"] == "bot"]
    assert {s["code"] for s in said} >= {"bot.setup", "bot.move", "bot.wrong_move"}
    for say in said:
        for lang, catalog in catalogs.items():
            wanted = set(re.findall(r"{(\w+)}", catalog[say["code"]]))
            assert wanted <= set(say["params"]), (lang, say["code"], wanted - set(say["params"]))


def test_facedown_script_with_a_computer_seat_from_a_file(tmp_path: Any, capsys: Any) -> None:
    from controller.cli import main
    from controller.rules import new_game

    gdef = load_game("luzhanqi")
    red = built_setup(gdef, "red", random.Random(8))
    probe = new_game("luzhanqi")
    probe.deploy("red", red)
    probe.deploy("blue", built_setup(gdef, "blue", random.Random(9)))
    frm, to = next(m for m in probe.legal_moves("red") if m.to not in probe.board)  # red's own quiet first move
    lines = [{"setup": "red", "pieces": red}, {"bot_setup": "blue"}, {"tick_ms": 100},
             {"lift": frm}, {"tick_ms": 100}, {"place": to}, {"tick_ms": 100},
             {"fixup": True}, {"bot_move": "blue"}, {"tick_ms": 100}, {"fixup": True}]
    path = tmp_path / "game.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    assert main(["script", "luzhanqi", str(path), "--seat", "blue=bot:facedown:1", "--seed", "3"]) == 0
    events = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    told = [e for e in events if e["event"] == "bot" and e["kind"] == "move"]
    assert told and told[0]["player"] == "blue"
    blue = [e for e in events if e["event"] in ("move", "attack") and e["player"] == "blue"]
    assert [(e["from"], e["to"]) for e in blue] == [(told[0]["from"], told[0]["to"])]
    assert main(["script", "luzhanqi", str(path), "--seat", "blue=facedown"]) == 2
    assert "expected SIDE=bot:NAME" in capsys.readouterr().err


def test_a_computer_seat_whose_bot_fails_says_so_and_the_seat_can_be_played_by_hand() -> None:
    class Crashing(RandomBot):
        name = "crashing"

        def choose_move(self, view: Any, time_ms: float) -> tuple[str, str]:
            raise RuntimeError("out of its mind")

    gdef = load_game("luzhanqi")
    holder: dict[str, Any] = {}
    out = Events()

    def on_session(session: Session, board: Any, computers: dict[str, Any]) -> None:
        holder["session"] = session

    def script():
        yield _line({"setup": "red", "pieces": built_setup(gdef, "red", random.Random(1))})
        yield _line({"bot_setup": "blue"})
        yield _line({"tick_ms": 100})
        st = holder["session"].state
        frm, to = next(m for m in st.legal_moves("red") if m.to not in st.board)
        yield from map(_line, ({"lift": frm}, {"tick_ms": 100}, {"place": to}, {"tick_ms": 100}))
        # the arbiter (or anyone) now moves blue's tokens by hand: it is judged like any move
        st = holder["session"].state
        frm, to = next(m for m in st.legal_moves("blue") if m.to not in st.board)
        holder["hand"] = (frm, to)
        yield from map(_line, ({"lift": frm}, {"tick_ms": 100}, {"place": to}, {"tick_ms": 100}))

    run_script("luzhanqi", script(), out, everything=True, seats={"blue": Crashing()}, seed=1, on_session=on_session)
    failed = [e for e in out.events if e["event"] == "bot" and e["kind"] == "failed"]
    assert len(failed) == 1 and failed[0]["why"] == "crashed" and failed[0]["say"]["code"] == "bot.failed"
    # the bot's own words may name its hidden pieces: only the arbiter gets them, never the public event
    assert "out of its mind" not in json.dumps(failed[0])
    private = [e for e in holder["session"].log if e.public.get("kind") == "failed_detail"]
    assert len(private) == 1 and private[0].audience == ("arbiter",) and "out of its mind" in private[0].public["detail"]
    blue = [(e["from"], e["to"]) for e in out.events if e["event"] == "move" and e["player"] == "blue"]
    assert blue == [holder["hand"]]


def test_a_stray_hand_in_the_middle_of_a_wrong_strikes_fix_up_keeps_the_wrong_piece_on_the_checklist() -> None:
    """The human carries the computer's quiet move out wrongly, onto red's piece on a5 (a strike it must not make:
    nothing is judged, the checklist says a5 holds the wrong piece and the token's station wants it back). Then a
    stray hand lifts red's j1 and puts it back. A reed switch reads a5 as occupied, as expected, so the checklist
    had dropped a5, and while j1 was up there was no checklist at all (a piece in hand is no mismatch) though the
    referee still waited. Now a5 stays on it until it is seen empty; once the wrong piece is off and both pieces
    are back, the board is explainable and the computer's move is said again."""
    gdef = load_game("stratego")
    red = built_setup(gdef, "red", random.Random(4))
    frm = next(s for s in sorted(red) if s.endswith("4") and red[s] not in ("bomb", "flag"))
    to = frm[0] + "5"
    holder: dict[str, Any] = {}
    seen: list[Any] = []

    def human():
        yield _line({"setup": "red", "pieces": red})
        yield _line({"tick_ms": 100})
        yield _line({"bot_setup": "blue"})
        yield _line({"tick_ms": 100})
        yield from map(_line, ({"lift": frm}, {"tick_ms": 60}, {"place": to}, {"tick_ms": 100}))
        want = holder["seat"].instruction
        assert want is not None and want.to != to
        holder["want"] = want
        yield _line({"bot_move": "blue", "to": to})  # the token struck red's piece on a5: a wrong strike
        yield _line({"tick_ms": 100})
        yield from map(_line, ({"lift": "j1"}, {"tick_ms": 60}))  # a stray hand
        seen.append(holder["session"].mismatch)
        yield from map(_line, ({"place": "j1"}, {"tick_ms": 60}))
        seen.append(holder["session"].mismatch)
        # the token off a5 and home, then red's piece back on a5
        yield from map(_line, ({"lift": to}, {"tick_ms": 60}, {"place": want.frm}, {"tick_ms": 60}))
        seen.append(holder["session"].mismatch)
        yield from map(_line, ({"place": to}, {"tick_ms": 100}))
        seen.append(holder["session"].mismatch)

    def on_session(session: Session, board: Any, computers: dict[str, Any]) -> None:
        holder["session"] = session
        holder["seat"] = computers["blue"]

    out = Events()
    run_script("stratego", human(), out, everything=True, seats={"blue": RandomBot()}, seed=3, on_session=on_session)
    want = holder["want"]
    found = [None if m is None else {(d.station, d.found) for d in m} for m in seen]
    assert found == [{(to, "wrong piece"), (want.frm, "empty"), ("j1", "empty")},
                     {(to, "wrong piece"), (want.frm, "empty")},
                     None,  # red's piece in hand, every other station as expected: the first half of a move
                     None], found
    told = [e for e in out.events if e["event"] == "bot" and e["kind"] == "move"]
    assert told[-1].get("again") and (told[-1]["from"], told[-1]["to"]) == (want.frm, want.to)
    assert not [e for e in out.events if e["event"] in ("move", "attack") and e["player"] == "blue"]
