"""Land-sea-air chess on the physical referee: a scripted game through `facedown script` (run_script) with a landing,
a submarine's evasion, AA fire intercepting a fighter and a fort's strike. Every consequence the rules add (a piece
pushed away, an aircraft shot down, a ship sunk by a fort) reaches the table as fix-up steps, and the referee waits
until the board matches before the next move."""

from __future__ import annotations

import io
import json

from benchmarks.seeded_games import play_physically
from controller.commands.script import run_script
from controller.rules import load_game, new_game

GAME = "sanjunqi"
SETTLE = 30

RED = {
    "a0": "recon", "a7": "fighter",
    "g1": "battleship", "g2": "gunboat", "g3": "submarine", "g5": "cruiser", "g6": "destroyer",
    "a3h": "flag", "a2": "infantry", "a5": "cavalry",
    "c0": "aa_gun", "e4": "missile", "f5": "fort",
    "b0": "commander", "b7": "army_commander", "c2h": "corps_commander", "c3h": "division_commander", "c4h": "regiment_commander",
    "c7": "battalion_commander", "d3": "company_commander", "d4": "platoon_leader", "e1": "engineer",
    "e2": "bomb", "e3": "atomic_bomb", "e5": "tank", "e6": "artillery", "f1": "machine_gun", "f2": "mine", "f3": "trap", "f6": "poison_gas",
}

MOVES = [
    ("g1", "f0"),  # red battleship lands on the west bridge end
    ("o0", "j0"),  # blue fighter flies down column 0 to its bridge end
    ("e4", "i4"),  # red missile strikes blue's submarine: a miss, the submarine slips away to i3
    ("j0", "b0"),  # blue fighter strikes b0 flying over red's AA gun on c0: shot down
    ("g5", "g4"),  # red cruiser
    ("i5", "h5"),  # blue gunboat
    ("g6", "h6"),  # red destroyer
    ("h5", "g5"),  # blue gunboat next to red's fort on f5: the fort strikes and sinks it
]


def _turned() -> dict[str, str]:
    game = load_game(GAME)
    where = {(s.x, s.y): s.id for s in game.stations}
    return {s.id: where[(7 - s.x, 14 - s.y)] for s in game.stations}


def _script() -> tuple[list[str], list]:
    turned = _turned()
    blue = {turned[s]: p for s, p in RED.items()}
    state = new_game(GAME)
    lines: list[dict] = [{"setup": "red", "pieces": RED}, {"setup": "blue", "pieces": blue}, {"tick_ms": SETTLE + 10}]
    state.deploy("red", RED)
    state.deploy("blue", blue)
    rulings = []

    def act(kind: str, station: str) -> None:
        lines.append({kind: station})
        lines.append({"tick_ms": SETTLE + 5})

    for frm, to in MOVES:
        rulings.append(play_physically(state, frm, to, act))
    return [json.dumps(x) for x in lines], rulings


def _events(lines: list[str]) -> list[dict]:
    out = io.StringIO()
    run_script(GAME, lines, out, settle_ms=SETTLE, everything=True)
    return [json.loads(x) for x in out.getvalue().splitlines()]


def test_scripted_game_with_a_landing_an_evasion_an_aa_interception_and_a_fort_strike() -> None:
    lines, rulings = _script()
    events = _events(lines)
    assert not [e for e in events if e["event"] in ("mismatch", "illegal")]
    judged = [e for e in events if e["event"] in ("move", "attack")]
    assert [(e["from"], e["to"], e.get("outcome")) for e in judged] == [(r.frm, r.to, r.outcome) for r in rulings]
    # every ruling's fix-up was done before the next move was judged
    kinds = [e["event"] for e in events]
    for i, e in enumerate(events):
        if e["event"] == "fixup" and e["steps"] and i > kinds.index("start"):
            assert "fixup_done" in kinds[i + 1:]

    fixups = [e for e in events if e["event"] == "fixup" and e["steps"]]
    # 1. the landing is an ordinary move: no fix-up
    assert judged[0]["event"] == "move" and judged[0]["to"] == "f0"
    # 3. the missile is spent, the submarine slips away from i4 to i3
    miss = judged[2]
    assert miss["outcome"] == "defender" and {"code": "notice.pushed", "params": {"station": "i4", "to": "i3"}} in miss["notices"]
    assert {'station': 'i3', 'action': 'put_in_hand', 'owner': 'blue', 'by': 'blue', 'to': None, 'say': {'code': 'step.put_in_hand', 'params': {'station': 'i3', 'owner': 'blue'}}} in fixups[0]["steps"]
    assert {'station': 'i4', 'action': 'remove', 'owner': 'red', 'by': 'red', 'to': None, 'say': {'code': 'step.remove', 'params': {'station': 'i4', 'owner': 'red'}}} in fixups[0]["steps"]
    # 4. AA fire: the fighter is shot down over c0, the AA gun is shown to everyone, b0 keeps its piece
    shot = judged[3]
    assert shot["outcome"] == "bounce" and shot["reveals"] == [{"station": "c0", "owner": "red", "piece": "aa_gun"}]
    assert any(n["code"] == "notice.shot_down_overhead" and n["params"]["station"] == "c0" for n in shot["notices"])
    # 8. the fort strikes the gunboat that came next to it: shown, and the gunboat is taken off g5
    fort = judged[7]
    assert fort["event"] == "move" and fort["reveals"] == [{"station": "f5", "owner": "red", "piece": "fort"}]
    last = [e for e in fixups if any(st["station"] == "g5" for st in e["steps"])]
    assert last and last[-1]["steps"][0]["action"] == "remove"
    assert kinds[-1] == "turn" and events[-1]["player"] == "red"


def test_the_referee_waits_for_the_pushed_submarine_before_the_next_move() -> None:
    lines, _ = _script()
    # drop the fix-up that puts the submarine on i3 (and everything after it): blue's next move must not be judged
    cut = next(i for i, x in enumerate(lines) if json.loads(x) == {"place": "i3"})
    tail = [json.dumps({"lift": "j0"}), json.dumps({"tick_ms": SETTLE + 5}), json.dumps({"place": "b0"})]
    events = _events(lines[:cut] + tail)
    judged = [e for e in events if e["event"] in ("move", "attack")]
    assert len(judged) == 3  # the landing, the fighter's flight, the missile: nothing after
    assert events[-1]["event"] == "mismatch" or any(e["event"] == "mismatch" for e in events[-3:])
