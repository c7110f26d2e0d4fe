"""Remote play through a real Mosquitto on loopback: one host referees, two simulated boards play (each seat's own
pieces real, the other's anonymous tokens moved as instructed), with attacks, fix-ups on both boards, a wrongly
moved token, a refused move, and an audit of every byte each board receives (no hidden kind of the other side)."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

from controller.club.broker import parse_broker
from controller.remote.host import RemoteHost
from controller.remote.mirror import HIDDEN
from controller.remote.protocol import RemoteError, parse_join, unseal
from controller.remote.seat import RemoteSeat
from controller.rules import load_game, redact_ruling
from controller.rules.deploy import random_deployment
from controller.sensing.sim import SimBoard
from harness.broker import Mosquitto, wait_for


class Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


class Board:
    """One seat's simulated board, driven synchronously by the test, and its remote seat."""

    def __init__(self, game: str, url: str, code: str, tmp: Path) -> None:
        self.clock = Clock()
        self.sim = SimBoard(load_game(game).station_ids, clock=self.clock)
        join = parse_join(code)
        self.seat = RemoteSeat(game, parse_broker(url), join, self.sim, state_path=tmp / f"{join.seat}.json", keep_wire=True)
        self.name = join.seat
        self.seat.start()

    @property
    def session(self) -> Any:
        return self.seat.session

    def settle(self) -> None:
        self.clock.t += 0.1
        snap = self.sim.tick()
        if snap is not None:
            self.session.on_snapshot(snap)

    def lift(self, s: str) -> None:
        self.sim.lift(s)
        self.settle()

    def place(self, s: str) -> None:
        self.sim.place(s)
        self.settle()

    def target(self) -> set[str]:
        with self.session.lock:
            awaited = self.session.recognizer.fixup_target()
            return set(awaited[0]) if awaited is not None else set(self.session.expected_board())

    def fix(self) -> None:
        """Do what this board's referee asks until it waits for nothing (laying out, fix-ups)."""
        for _ in range(4):
            want = self.target()
            have = set(self.sim.raw_occupied())
            for s in sorted(have - want):
                self.lift(s)
            for s in sorted(want - have):
                self.place(s)
            with self.session.lock:
                awaited = self.session.recognizer.fixup_target()
                left = awaited[1] if awaited is not None else frozenset()
            for s in sorted(left):  # one piece replaced by another: its station must be seen empty once
                self.lift(s)
                self.place(s)
            if not self.session.recognizer.fixing:
                return
        raise AssertionError(f"{self.name}'s board never matched: {self.session.view(self.name).guidance}")

    def move(self, frm: str, to: str) -> None:
        attack = to in self.sim.raw_occupied()
        self.lift(frm)
        if attack:
            self.lift(to)
        self.place(to)

    def messages(self) -> list[dict[str, Any]]:
        """Every message this board's link received, unsealed where it is the host's (public ones as sent)."""
        out = []
        assert self.seat.link.wire is not None
        for topic, payload in list(self.seat.link.wire):
            if "/public/" in topic:
                out.append({"topic": topic, "public": json.loads(payload)})
            else:
                out.append({"topic": topic, **unseal(self.seat.join.secret, payload)})
        return out

    def stop(self) -> None:
        self.seat.stop()


@pytest.fixture()
def broker(tmp_path: Path) -> Any:
    b = Mosquitto(tmp_path)
    b.start()
    yield b
    b.stop()


def start_game(game: str, broker: Any, tmp_path: Path, seed: int = 3,
               **settings: Any) -> tuple[RemoteHost, dict[str, Board]]:
    """A host (``settings``: more of RemoteHost's) and a board per seat, deployed at random and laid out."""
    host = RemoteHost(game, parse_broker(broker.url), journal_path=tmp_path / "host.sqlite", game_id="t1", **settings)
    host.start()
    codes = {s: str(c) for s, c in host.join_codes().items()}
    boards = {s: Board(game, broker.url, codes[s], tmp_path) for s in host.seats}
    rng = random.Random(seed)
    for side, b in boards.items():
        wait_for(lambda b=b: b.seat.synced, what=f"{side} synced")
        placement = random_deployment(b.session.game, side, rng, b.session.state.options)
        assert b.session.register_setup(side, placement) == []
    wait_for(lambda: host.session.state.phase == "play", what="the host's game to start")
    for side, b in boards.items():
        wait_for(lambda b=b: b.session.state.phase == "play", what=f"{side}'s board to start")
        b.fix()
    return host, boards


def choose(st: Any, rng: random.Random, *, spare_flag: bool = False) -> tuple[str, str]:
    """The scripted player's move: an attack when it has one (mostly; never on the flag if ``spare_flag``), else
    any legal move."""
    moves = st.legal_moves()
    attacks = [m for m in moves if m[1] in st.board and not (spare_flag and st.board[m[1]].type == "flag")]
    frm, to = rng.choice(attacks) if attacks and rng.random() < 0.7 else rng.choice(moves)
    return frm, to


def play_ply(host: RemoteHost, boards: dict[str, Board], rng: random.Random, *, wrong_first: bool = False) -> bool:
    """The side to move moves on its own board (an attack when it has one); the other board is told and moves the
    token (wrongly first, if asked and it can: True then); both boards do their fix-ups."""
    st = host.session.state
    mover, ply = st.turn, st.ply
    frm, to = choose(st, rng)
    boards[mover].move(frm, to)
    done = carry_out(boards, mover, frm, to, ply, wrong_first=wrong_first)
    assert host.session.state.ply == ply + 1
    return done


def carry_out(boards: dict[str, Board], mover: str, frm: str, to: str, ply: int, *, wrong_first: bool = False) -> bool:
    """After ``mover`` moved ``frm``-``to`` on its board: its ruling and fix-up there, then the token moved (wrongly
    first, if asked and it can) and the fix-up on every other board."""
    wrong_done = False
    wait_for(lambda: boards[mover].session.state.ply == ply + 1, what=f"the ruling of {mover}'s {frm}-{to}")
    boards[mover].fix()
    for side, b in boards.items():
        if side == mover:
            continue
        wait_for(lambda b=b: b.session.instruction(mover) is not None, what=f"{side}'s board to be told {frm}-{to}")
        wrong = None
        if wrong_first:
            # a token moved to a wrong (empty) neighbour of the instructed one: a mismatch, nothing judged
            topo = b.session.state.topo
            wrong = next((n for n in sorted(topo.neighbours(topo.all_kinds)[frm])
                          if n not in b.sim.raw_occupied() and n != to), None)
        if wrong_first and wrong is not None:
            wrong_done = True
            b.move(frm, wrong)
            assert b.session.mismatch is not None
            assert any(e.public.get("kind") == "wrong_move" for e in b.session.log[-3:])
            assert b.session.state.ply == ply, "a wrong token move was judged"
            b.lift(wrong)
            b.place(frm)
            assert b.session.mismatch is None
        b.move(frm, to)
        assert b.session.state.ply == ply + 1, f"{side}'s board did not take {frm}-{to}"
        b.fix()
    return wrong_done


class Truth:
    """The game as the test knows it without the host (both boards' deployments, the moves made): an undisturbed
    run of the same moves, from which the scripted players choose."""

    def __init__(self, boards: dict[str, Board]) -> None:
        from controller.rules import new_game

        self.boards = boards
        self.st = new_game(next(iter(boards.values())).session.game)
        for side, b in boards.items():
            self.st.deploy(side, dict(b.seat.placement))
        self.pending: tuple[str, str, str, int] | None = None

    def phase(self) -> str:
        return self.st.phase

    def move_start(self, rng: random.Random) -> None:
        frm, to = choose(self.st, rng)
        self.pending = (self.st.turn, frm, to, self.st.ply)
        self.boards[self.st.turn].move(frm, to)

    def move_finish(self) -> None:
        from controller.rules import Move

        assert self.pending is not None
        mover, frm, to, ply = self.pending
        self.pending = None
        carry_out(self.boards, mover, frm, to, ply)
        ruling = self.st.apply(Move(frm, to))
        for b in self.boards.values():
            told = b.seat.received_rulings[-1]
            assert (told["ply"], told["kind"], told["outcome"]) == (ruling.ply, ruling.kind, ruling.outcome)
            assert b.session.state.phase == self.st.phase

    def play(self, rng: random.Random) -> None:
        self.move_start(rng)
        self.move_finish()


def audit(board: Board, host: RemoteHost, pages: list[dict[str, Any]] = (),  # type: ignore[assignment]
          undone: list[Any] = ()) -> int:  # type: ignore[assignment]
    """Every kind of another side named in a message this board received before the game was over was one this
    seat was entitled to (the redaction layer's rulings say which, with the rulings ``undone`` since, which the
    seats were told); no public message names a kind at all."""
    seat = board.name
    st = host.session.state
    entitled: set[tuple[str, int | None]] = {(p.owner, p.uid) for p in st.board.values() if p.public or seat in p.known_to}
    told_kinds: set[str] = set()
    told_at: set[tuple[Any, Any, str]] = set()  # (station, owner, kind) a ruling revealed to this seat
    for r in [*st.history, *undone]:
        if r in undone:  # what it showed this seat stays shown
            entitled |= {(x.owner, x.uid) for x in r.reveals if seat in x.to or "all" in x.to}
        red = redact_ruling(r, seat)
        if "piece" in red:
            entitled.add((r.side, r.mover_uid))
            told_kinds.add(r.mover_type)
        if "defender_piece" in red:
            entitled.add((r.defender_side or "", r.defender_uid))
            told_kinds.add(r.defender_type or "")
        told_kinds |= {x["piece"] for x in red["reveals"]} | {x["piece"] for x in red["removed"] if "piece" in x}
        # a removal is named where the piece stood before its move (a scout's origin), its reveal where it struck
        told_at |= {(x.get("station"), x.get("owner"), x["piece"]) for x in red["reveals"]}
        told_at |= {(x.get("station"), x.get("owner"), x["piece"]) for x in red["removed"] if "piece" in x}
    kinds = {p.id for p in st.game.pieces}
    checked = 0

    def walk(node: Any, where: str) -> None:
        nonlocal checked
        if isinstance(node, dict):
            for owner_key, piece_key in (("owner", "piece"), ("side", "piece"), ("player", "piece"),
                                         ("defender_side", "defender_piece"), ("defender", "defender_piece")):
                owner, kind = node.get(owner_key), node.get(piece_key)
                if isinstance(owner, str) and owner != seat and kind in kinds:
                    checked += 1
                    uid = node.get("uid")
                    held = st.board.get(node.get("station")) if isinstance(node.get("station"), str) else None
                    if uid is not None:
                        ok = (owner, uid) in entitled
                    elif held is not None and (held.owner, held.type) == (owner, kind):
                        # named by its station: that piece must be shown, or a ruling showed this seat that kind
                        # there (another piece of that kind may stand on the station now)
                        ok = (owner, held.uid) in entitled or (node.get("station"), owner, kind) in told_at
                    else:
                        ok = kind in told_kinds
                    assert ok, f"{seat} was sent {owner}'s hidden {kind} in {where}: {node}"
            for k, v in node.items():
                walk(v, f"{where}.{k}")
        elif isinstance(node, list):
            for i, v in enumerate(node):
                walk(v, f"{where}[{i}]")

    for m in board.messages():
        if "public" in m:
            if m["topic"].endswith("/record") or "/salts-" in m["topic"]:
                continue  # the post-game record: everything is shown once the game is over
            text = json.dumps(m["public"])
            assert not any(f'"{k}"' in text for k in kinds), f"a public message names a kind: {text[:200]}"
            continue
        if m["view"]["phase"] == "over":
            continue
        walk(m, f"{m['topic']}#{m['seq']}")
    for i, page in enumerate(pages):  # what the seat's page received (its state, each answer, each live event)
        state = page.get("state") if isinstance(page.get("state"), dict) else page
        status = state.get("status")
        if not isinstance(status, dict) or status.get("phase") != "over":
            walk(page, f"page#{i}")
    # and the mirror never held a kind it may not know
    for p in board.session.state.board.values():
        if p.owner != seat and p.type != HIDDEN:
            assert (p.owner, p.uid) in entitled or st.phase == "over"
    return checked


def test_join_codes_are_checked_with_clear_messages() -> None:
    with pytest.raises(RemoteError, match="expected fdj1"):
        parse_join("nonsense")
    with pytest.raises(RemoteError, match="damaged"):
        parse_join("fdj1.g1.red.zz")
    with pytest.raises(RemoteError, match="red's, not blue's"):
        parse_join("fdj1.g1.red." + "a" * 32, seat="blue")


def test_two_boards_play_stratego_through_the_host(broker: Any, tmp_path: Path) -> None:
    host, boards = start_game("stratego", broker, tmp_path)
    try:
        rng = random.Random(5)
        attacks = 0
        wrong = False
        for _ in range(24):
            if host.session.state.phase != "play":
                break
            wrong = play_ply(host, boards, rng, wrong_first=not wrong) or wrong
            attacks += host.session.state.history[-1].kind == "attack"
        assert attacks >= 2, "the scripted game made too few attacks to test fix-ups"
        assert wrong, "no token was moved wrongly"
        # both boards are in step with the host: same ply, turn, and the same stations held by the same owners
        truth = {s: (p.owner, p.uid) for s, p in host.session.state.board.items()}
        for b in boards.values():
            st = b.session.state
            assert (st.ply, st.turn) == (host.session.state.ply, host.session.state.turn)
            assert {s: (p.owner, p.uid) for s, p in st.board.items()} == truth
            assert set(b.sim.raw_occupied()) == set(truth)
            assert b.session.pending is None and b.session.mismatch is None
            assert audit(b, host) > 0
            # more messages than the host keeps in memory: the older ones, rebuilt from its journal for a board far
            # behind, are the very messages this board received live
            from controller.remote.outbox import WINDOW

            assert len(host.outbox[b.name]) > WINDOW
            live = {m["seq"]: m for m in b.messages() if m["topic"].endswith(f"/out/{b.name}")}
            rebuilt = [unseal(b.seat.join.secret, p) for p in host.messages(b.name)]
            assert [m["seq"] for m in rebuilt] == list(range(1, len(host.outbox[b.name]) + 1)) == sorted(live)
            assert rebuilt == [{k: v for k, v in live[m["seq"]].items() if k != "topic"} for m in rebuilt]
    finally:
        for b in boards.values():
            b.stop()
        host.stop()


def test_a_refused_move_is_put_back_on_the_movers_board_only(broker: Any, tmp_path: Path) -> None:
    host, boards = start_game("stratego", broker, tmp_path, seed=4)
    try:
        st = host.session.state
        mover = st.turn
        from controller.rules import Move

        bomb, empty = next((s, t) for s, p in sorted(st.board.items()) if p.owner == mover and p.type == "bomb"
                           for t in st.game.station_ids if t not in st.board and st.topo.passable[t]
                           and st.why_illegal(Move(s, t)) is not None)
        b = boards[mover]
        b.move(bomb, empty)
        wait_for(lambda: b.session.pending is not None and b.session.pending.kind == "illegal", what="the refusal")
        assert host.session.state.ply == 0
        said = [e.public for e in b.session.log if e.public.get("event") == "illegal"]
        assert said and said[-1]["reason"]["code"] != "reason.not_allowed"  # the mover hears why
        other = next(s for s in boards if s != mover)
        wait_for(lambda: any(e.public.get("event") == "illegal" for e in boards[other].session.log), what="the notice")
        theirs = next(e.public for e in boards[other].session.log if e.public.get("event") == "illegal")
        assert theirs["reason"]["code"] == "reason.not_allowed"  # the other seat only hears a move was refused
        b.lift(empty)
        b.place(bomb)
        assert b.session.pending is None
        rng = random.Random(1)
        play_ply(host, boards, rng)  # and play goes on, the refused try not judged twice
        assert host.session.state.ply == 1
    finally:
        for b in boards.values():
            b.stop()
        host.stop()


class Phone:
    """A seat played from its page alone: a simulated board tapped through the web referee's own routes (the
    Flask test client), every answer kept for the audit. The player reads only what the page says."""

    def __init__(self, board: Board) -> None:
        import re

        from web_referee.app import create_app

        self.board = board
        self.key = board.seat.table.tokens[board.name]
        self.client = create_app(board.seat.table).test_client()
        html = self.client.get(f"/seat/{self.key}").get_data(as_text=True)
        found = re.search(r'name="facedown-csrf" content="([0-9a-f]+)"', html)
        assert found, "the seat page carries its CSRF token"
        self.csrf = found.group(1)
        self.pages: list[dict[str, Any]] = []

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        r = self.client.post(f"/api/{self.key}{path}", json=body, headers={"X-CSRF-Token": self.csrf})
        assert r.status_code == 200, r.get_data(as_text=True)
        self.pages.append(r.get_json())
        return r.get_json()

    def state(self) -> dict[str, Any]:
        r = self.client.get(f"/api/{self.key}/state")
        assert r.status_code == 200
        self.pages.append(r.get_json())
        return r.get_json()

    def tap(self, station: str) -> None:
        self.post("/sim/toggle", {"station": station})
        self.board.settle()

    def deploy(self) -> None:
        placement = self.post("/setup/random", {})["placement"]
        self.post("/setup", {"placement": placement})

    def do_as_told(self) -> None:
        """Tap what the page's guidance asks, step by step, until it asks for nothing."""
        for _ in range(200):
            page = self.state()
            todo = [s for s in (page["guidance"] or {}).get("steps", []) if not s.get("done")]
            if not todo:
                return
            occupied = set(page["occupied"])
            st = todo[0]
            station, action = st["station"], st["action"]
            if action in ("remove", "take_off", "return", "wrong_piece"):
                if station in occupied:
                    self.tap(station)
                elif st.get("to") and st["to"] not in occupied:
                    self.tap(st["to"])
                else:  # emptied already, but a piece must replace it: put it back
                    self.tap(station)
            elif station not in occupied:
                self.tap(station)
            else:  # occupied, but the piece must be seen lifted once (one piece replaces another)
                self.tap(station)
        raise AssertionError(f"the page kept asking: {self.state()['guidance']}")

    def move(self, frm: str, to: str) -> None:
        attack = to in set(self.state()["occupied"])
        self.tap(frm)
        if attack:
            self.tap(to)
        self.tap(to)

    def follow_instruction(self) -> None:
        ins = self.state()["instruction"]
        assert ins is not None, "the page shows the other side's move to make"
        self.move(ins["from"], ins["to"])


def test_one_side_plays_from_its_phone_page(broker: Any, tmp_path: Path) -> None:
    host = RemoteHost("stratego", parse_broker(broker.url), journal_path=tmp_path / "host.sqlite", game_id="t2")
    host.start()
    codes = {s: str(c) for s, c in host.join_codes().items()}
    red, blue = (Board("stratego", broker.url, codes[s], tmp_path) for s in host.seats)
    phone = Phone(blue)
    try:
        wait_for(lambda: red.seat.synced and blue.seat.synced, what="both seats synced")
        assert red.session.register_setup("red", random_deployment(red.session.game, "red", random.Random(1),
                                                                     red.session.state.options)) == []
        phone.deploy()
        wait_for(lambda: red.session.state.phase == "play" and blue.session.state.phase == "play", what="the start")
        red.fix()
        phone.do_as_told()  # its own pieces and red's tokens, as the page lists them
        assert blue.session.pending is None
        rng = random.Random(2)
        for _ in range(60):  # blue's deployment is the page's (random): play on until an attack was judged
            st = host.session.state
            if st.phase != "play" or (st.ply >= 12 and any(r.kind == "attack" for r in st.history)):
                break
            ply = st.ply
            moves = st.legal_moves()
            # never the flag: taking it with the first attack ends the game, and an audit of a game already over
            # checks nothing (blue's page draws its deployment with SystemRandom, so this happened ~2 % of runs)
            attacks = [m for m in moves if m[1] in st.board and st.board[m[1]].type != "flag"]
            frm, to = rng.choice(attacks) if attacks else rng.choice(moves)
            if st.turn == "red":
                red.move(frm, to)
                wait_for(lambda ply=ply: red.session.state.ply == ply + 1, what="red's ruling")
                red.fix()
                wait_for(lambda: phone.state()["instruction"] is not None, what="the phone to show red's move")
                phone.follow_instruction()
                phone.do_as_told()
            else:
                phone.move(frm, to)
                wait_for(lambda ply=ply: blue.session.state.ply == ply + 1, what="blue's ruling")
                phone.do_as_told()
                wait_for(lambda: red.session.instruction("blue") is not None, what="red's board to be told")
                red.move(frm, to)
                red.fix()
            assert red.session.state.ply == blue.session.state.ply == host.session.state.ply == ply + 1
        truth = {s: p.owner for s, p in host.session.state.board.items()}
        assert {s: p.owner for s, p in blue.session.state.board.items()} == truth
        assert set(phone.state()["occupied"]) == set(truth)
        assert audit(blue, host, phone.pages) > 0
        assert audit(red, host) > 0
    finally:
        red.stop()
        blue.stop()
        host.stop()


def paho_client(port: int, user: str | None, password: str | None) -> Any:
    import paho.mqtt.client as mqtt

    got: list[tuple[str, bytes]] = []
    result: dict[str, Any] = {}
    c = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"probe-{user}-{time.monotonic_ns()}")
    if user:
        c.username_pw_set(user, password)
    c.on_connect = lambda cl, u, f, rc, p: result.setdefault("rc", rc)
    c.on_message = lambda cl, u, msg: got.append((msg.topic, bytes(msg.payload)))
    c.connect("127.0.0.1", port)
    c.loop_start()
    wait_for(lambda: "rc" in result, what="the broker's answer")
    return c, result["rc"], got


def test_generated_logins_and_acl_keep_each_seat_to_its_own_messages(tmp_path: Path) -> None:
    broker = Mosquitto(tmp_path)
    host = RemoteHost("stratego", parse_broker(broker.url), journal_path=tmp_path / "host.sqlite", game_id="t3")
    passwd, acl = host.write_broker_files(tmp_path / "broker")
    assert oct(passwd.stat().st_mode & 0o777) == "0o600"
    text = broker.conf.read_text().replace("allow_anonymous true",
                                           f"allow_anonymous false\npassword_file {passwd}\nacl_file {acl}")
    broker.conf.write_text(text)
    broker.start()
    clients = []
    try:
        host.start()
        codes = host.join_codes()
        red = Board("stratego", broker.url, str(codes["red"]), tmp_path)
        blue = Board("stratego", broker.url, str(codes["blue"]), tmp_path)
        clients += [red, blue]
        # nobody without a login, or with a wrong password, gets in
        for user, pw in ((None, None), ("fd-t3-red", "0" * 32)):
            c, rc, _ = paho_client(broker.port, user, pw)
            c.loop_stop()
            assert rc.is_failure, f"{user} logged in with a wrong password"
        # red's own login cannot read blue's messages, nor write blue's moves
        spy, rc, got = paho_client(broker.port, "fd-t3-red", codes["red"].secret)
        assert not rc.is_failure
        spy.subscribe("facedown/remote/t3/out/blue", qos=1)
        spy.subscribe("facedown/remote/t3/sync/blue", qos=1)
        spy.subscribe("facedown/remote/t3/in/blue", qos=1)
        time.sleep(0.2)
        wait_for(lambda: red.seat.synced and blue.seat.synced, what="both seats synced through the ACL")
        assert blue.session.register_setup("blue", random_deployment(blue.session.game, "blue", random.Random(3),
                                                                       blue.session.state.options)) == []
        wait_for(lambda: "blue" in host.session.state.deployments, what="blue's deployment at the host")
        wait_for(lambda: host.outbox["blue"] and blue.seat.last_seq == len(host.outbox["blue"]), what="blue's messages")
        forged = spy.publish("facedown/remote/t3/in/blue", b'{"m":"{}","mac":"x"}', qos=1)
        forged.wait_for_publish(2)
        time.sleep(0.3)
        spy.loop_stop()
        assert got == [], f"red's login read blue's topics: {[t for t, _ in got]}"
    finally:
        for b in clients:
            b.stop()
        host.stop()
        broker.stop()


def test_a_whole_luzhanqi_game_and_its_record_checked_against_the_commitments(broker: Any, tmp_path: Path) -> None:
    from controller.remote import commitment

    host, boards = start_game("luzhanqi", broker, tmp_path, seed=2)
    try:
        rng = random.Random(0)
        for _ in range(200):
            if host.session.state.phase != "play":
                break
            play_ply(host, boards, rng)
        st = host.session.state
        assert st.ply >= 10 and sum(r.kind == "attack" for r in st.history) >= 3
        assert st.phase == "over", f"the scripted game did not finish in 200 plies (ply {st.ply})"
        for side, b in boards.items():
            assert b.session.state.phase == "over" and b.session.state.result is not None
            assert b.session.state.result.winners == st.result.winners
            audit(b, host)  # Luzhanqi tells outcomes only: no kind of the other side may be named at all
            # the record is out, both sides' salts too: each board checks both deployments and every ruling
            wait_for(lambda b=b: b.seat.audit == [] and len(b.seat.revealed) == 2, what=f"{side}'s check of the record")
        # a referee that judged another deployment than the one committed to is caught
        red = boards["red"].seat
        rec = red.record
        assert rec is not None
        judged = dict(rec["deployments"]["blue"])
        a, b2 = next((x, y) for x in judged for y in judged if judged[x] != judged[y])
        judged[a], judged[b2] = judged[b2], judged[a]
        assert commitment.check_deployment("t1", "blue", judged, red.commitments["blue"], red.revealed["blue"])
        told = [dict(r) for r in rec["rulings"]]
        attack = next(i for i, r in enumerate(told) if r["kind"] == "attack")
        told[attack]["outcome"] = {"attacker": "defender"}.get(told[attack]["outcome"], "attacker")
        assert commitment.replay_problems(rec["rules"], rec["options"], rec["deployments"], rec["moves"], told)
    finally:
        for b in boards.values():
            b.stop()
        host.stop()


def replayed_result(host_state: Any) -> Any:
    """The result of the same moves on the same deployments, judged by the rules alone (an undisturbed game)."""
    from controller.rules import Move, new_game

    st = new_game(host_state.game, dict(host_state.options))
    for side in st.game.sides:
        st.deploy(side, dict(host_state.deployments[side]))
    for r in host_state.history:
        st.apply(Move(r.frm, r.to))
    return st


def check_undisturbed(host: Any, boards: dict[str, Board]) -> None:
    """Nothing judged twice or lost: the host's journal holds each move once, every board was told each ruling
    exactly once, in order, and the game is what the same moves give undisturbed."""
    st = host.session.state
    events = host.table.journal.events(host.table.game_id)
    moves = [(e.data["from"], e.data["to"]) for e in events if e.kind == "move"]
    assert moves == [(r.frm, r.to) for r in st.history]
    again = replayed_result(st)
    assert [(r.kind, r.outcome) for r in again.history] == [(r.kind, r.outcome) for r in st.history]
    assert (again.result.to_json() if again.result else None) == (st.result.to_json() if st.result else None)
    for side, b in boards.items():
        plies = [r["ply"] for r in b.seat.received_rulings]
        assert plies == sorted(set(plies)), f"{side} was told a ruling twice or out of order: {plies}"
        assert b.session.state.ply == st.ply


def test_broker_restart_and_a_board_restarted_mid_game(broker: Any, tmp_path: Path) -> None:
    host, boards = start_game("luzhanqi", broker, tmp_path, seed=7)
    try:
        rng = random.Random(4)
        for _ in range(3):
            play_ply(host, boards, rng)
        # the broker goes away while the side to move moves: its move waits on the board, nothing is lost
        broker.stop()
        st = host.session.state
        mover = st.turn
        frm, to = next(m for m in st.legal_moves())
        boards[mover].move(frm, to)
        time.sleep(0.3)
        assert host.session.state.ply == 3
        broker.start()
        wait_for(lambda: boards[mover].session.state.ply == 4, what="the move judged once the broker is back")
        boards[mover].fix()
        other = next(s for s in boards if s != mover)
        wait_for(lambda: boards[other].session.instruction(mover) is not None, what="the other board told")
        # the other board's process dies before its player moved the token; a new one starts from nothing but its
        # state file, on the board as the player left it
        old = boards[other]
        occupied = set(old.sim.raw_occupied())
        old.stop()
        fresh = Board("luzhanqi", broker.url, str(old.seat.join), tmp_path)
        fresh.sim.fill(occupied)
        fresh.settle()
        boards[other] = fresh
        wait_for(lambda: fresh.seat.synced and fresh.session.state.ply == 4, what="the restarted board resumed")
        assert fresh.session.pending is not None and fresh.session.pending.kind == "board"  # the whole board checked
        fresh.fix()  # the player makes the board match: the token moved, the fix-up done
        assert fresh.seat.placement == old.seat.placement and fresh.seat.salts == old.seat.salts
        for _ in range(200):
            if host.session.state.phase != "play":
                break
            play_ply(host, boards, rng)
        assert host.session.state.phase == "over"
        check_undisturbed(host, {s: b for s, b in boards.items() if s != other})
        wait_for(lambda: all(b.seat.audit == [] for b in boards.values()), what="both boards' check of the record")
    finally:
        for b in boards.values():
            b.stop()
        host.stop()


def test_the_host_killed_and_restarted_from_its_journal(broker: Any, tmp_path: Path) -> None:
    import re
    import signal

    from cli_process import Cli

    journal = tmp_path / "host.sqlite"
    cmd = ["host", "luzhanqi", "--broker", broker.url, "--game-id", "t9", "--journal", str(journal)]
    proc = Cli(cmd)
    boards: dict[str, Board] = {}
    try:
        proc.wait_for("blue: facedown play", timeout=30)
        codes = dict(re.findall(r"  (\w+): facedown play .* --join (\S+)", proc.output))
        boards = {s: Board("luzhanqi", broker.url, codes[s], tmp_path) for s in ("red", "blue")}
        rng = random.Random(8)
        for side, b in boards.items():
            wait_for(lambda b=b: b.seat.synced, what=f"{side} synced")
            assert b.session.register_setup(side, random_deployment(b.session.game, side, rng, b.session.state.options)) == []
        for side, b in boards.items():
            wait_for(lambda b=b: b.session.state.phase == "play", what=f"{side}'s start")
            b.fix()
        truth = Truth(boards)
        plies = 0
        for round_ in range(200):
            if truth.phase() != "play":
                break
            if round_ in (2, 5):
                proc.proc.send_signal(signal.SIGKILL)
                proc.proc.wait()
                if round_ == 5:  # and a move made while the host is down waits for it
                    truth.move_start(rng)
                proc = Cli(cmd)
                proc.wait_for("blue: facedown play", timeout=30)
                assert dict(re.findall(r"  (\w+): facedown play .* --join (\S+)", proc.output)) == codes
                if round_ == 5:
                    truth.move_finish()
                    plies += 1
                    continue
            truth.play(rng)
            plies += 1
        assert truth.phase() == "over", "the game did not finish"
        for side, b in boards.items():
            told = [r["ply"] for r in b.seat.received_rulings]
            assert told == list(range(1, plies + 1)), f"{side} was told {told}"
    finally:
        for b in boards.values():
            b.stop()
        proc.stop()


def test_facedown_play_remote_joins_from_the_command_line(broker: Any, tmp_path: Path) -> None:
    from cli_process import Cli

    host = RemoteHost("stratego", parse_broker(broker.url), journal_path=tmp_path / "host.sqlite", game_id="t5")
    host.start()
    code = str(host.join_codes()["red"])
    placement = random_deployment(host.game, "red", random.Random(1), host.session.state.options)
    (tmp_path / "red.json").write_text(json.dumps(placement))
    env = {"XDG_DATA_HOME": str(tmp_path / "data")}
    base = ["play", "stratego", "--board", "sim", "--no-web", "--announce", "none", "--remote", broker.url]
    try:
        # clumsy newcomers: another seat's code, no code, a damaged one
        for extra, said in ((["--seat", "blue", "--join", code], "the join code is red's, not blue's"),
                            (["--seat", "red"], "needs --join CODE"),
                            (["--seat", "red", "--join", code[:-3]], "damaged")):
            bad = Cli([*base, *extra], env=env)
            assert bad.proc.wait(30) != 0
            assert said in bad.output, bad.output
        proc = Cli([*base, "--seat", "red", "--join", code, "--setup", f"red={tmp_path / 'red.json'}",
                    "--ready-file", str(tmp_path / "ready")], env=env)
        try:
            proc.wait_until(lambda: "red" in host.session.state.deployments, "red's deployment at the host", 20)
            assert host.session.state.deployments["red"] == placement
            assert host.commitments["red"].keys() == placement.keys()
            saved = json.loads((tmp_path / "data" / "facedown" / "remote-t5-red.json").read_text())
            assert saved["placement"] == placement and len(saved["salts"]) == len(placement)
        finally:
            assert proc.stop() == 0
    finally:
        host.stop()


def test_a_host_group_serves_two_games_over_one_connection(broker: Any, tmp_path: Path) -> None:
    from controller.remote.host import HostGroup

    group = HostGroup(parse_broker(broker.url))
    group.start()
    boards: list[Board] = []
    try:
        hosts = [group.add("stratego", journal_path=tmp_path / f"g{i}.sqlite", game_id=f"grp{i}") for i in range(2)]
        rng = random.Random(9)
        games = []
        for h in hosts:
            pair = {s: Board("stratego", broker.url, str(c), tmp_path / h.game_id) for s, c in h.join_codes().items()}
            boards += pair.values()
            for side, b in pair.items():
                wait_for(lambda b=b: b.seat.synced, what="synced")
                assert b.session.register_setup(side, random_deployment(b.session.game, side, rng,
                                                                         b.session.state.options)) == []
            for b in pair.values():
                wait_for(lambda b=b: b.session.state.phase == "play", what="the start")
                b.fix()
            games.append((h, pair))
        for h, pair in games:
            play_ply(h, pair, rng)
            play_ply(h, pair, rng)
        assert [h.session.state.ply for h in hosts] == [2, 2]
        with pytest.raises(RemoteError, match="hosted here already"):
            group.add("stratego", journal_path=tmp_path / "other.sqlite", game_id="grp0")
    finally:
        for b in boards:
            b.stop()
        group.stop()


def test_forged_replayed_and_out_of_turn_messages_are_never_judged(broker: Any, tmp_path: Path) -> None:
    from controller.remote.protocol import inbox_topic, seal

    host, boards = start_game("stratego", broker, tmp_path, seed=11)
    spy, rc, _ = paho_client(broker.port, None, None)
    try:
        rng = random.Random(3)
        play_ply(host, boards, rng)
        st = host.session.state
        ply = st.ply
        judged = len(host.table.journal.events(host.table.game_id))
        mover, waiting = st.turn, next(s for s in host.seats if s != st.turn)
        frm, to = next(iter(st.legal_moves()))
        first = host.session.state.history[-1]
        sent = [
            # a forger without the seat's secret
            (mover, seal("0" * 32, {"type": "move", "ply": st.ply, "try": 0, "from": frm, "to": to})),
            # the last move again (a replay of a message already judged)
            (first.side, seal(host.secrets[first.side], {"type": "move", "ply": 0, "try": 0, "from": first.frm,
                                                         "to": first.to})),
            # the side not to move, with its own secret
            (waiting, seal(host.secrets[waiting], {"type": "move", "ply": st.ply, "try": 0, "from": frm, "to": to})),
            # the right seat and ply, but a try it has not reached, and nonsense fields
            (mover, seal(host.secrets[mover], {"type": "move", "ply": st.ply, "try": 5, "from": frm, "to": to})),
            (mover, seal(host.secrets[mover], {"type": "move", "ply": st.ply, "try": 0, "from": ["x"], "to": 7})),
            (mover, seal(host.secrets[mover], {"type": "deploy", "placement": {"a1": "flag"}})),
            (mover, b"\xff\x00 not a message at all"),
        ]
        for seat, payload in sent:
            spy.publish(inbox_topic("t1", seat), payload, qos=1).wait_for_publish(2)
        time.sleep(0.4)
        assert host.session.state.ply == ply and len(host.table.journal.events(host.table.game_id)) == judged
        # the game goes on as if nothing had been sent
        play_ply(host, boards, rng)
        assert host.session.state.ply == ply + 1
    finally:
        spy.loop_stop()
        for b in boards.values():
            b.stop()
        host.stop()


class HttpPhone(Phone):
    """The seat page of a `facedown play --remote --board sim` process, tapped over real HTTP."""

    def __init__(self, url: str) -> None:  # noqa: D107 - the page's own address, as the command printed it
        import re
        import urllib.request

        self.url = url
        self.base, self.key = url.split("/seat/")
        html = urllib.request.urlopen(url, timeout=10).read().decode()
        found = re.search(r'name="facedown-csrf" content="([0-9a-f]+)"', html)
        assert found
        self.csrf = found.group(1)
        self.pages = []

    def _call(self, path: str, body: dict[str, Any] | None) -> dict[str, Any]:
        import urllib.request

        req = urllib.request.Request(f"{self.base}/api/{self.key}{path}", method="POST" if body is not None else "GET",
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"X-CSRF-Token": self.csrf, "Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as r:
            out = json.loads(r.read())
        self.pages.append(out)
        return out

    def post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        return self._call(path, body)

    def state(self) -> dict[str, Any]:
        return self._call("/state", None)

    def tap(self, station: str) -> None:
        now = self.post("/sim/toggle", {"station": station})["occupied"]
        wait_for(lambda: (station in self.state()["occupied"]) == now, what=f"the tap on {station} read")


def test_a_board_process_killed_and_restarted_mid_game(broker: Any, tmp_path: Path) -> None:
    import re
    import signal

    from cli_process import Cli

    from harness.broker import free_port

    host = RemoteHost("stratego", parse_broker(broker.url), journal_path=tmp_path / "host.sqlite", game_id="t7")
    host.start()
    codes = {s: str(c) for s, c in host.join_codes().items()}
    red = Board("stratego", broker.url, codes["red"], tmp_path)
    port = free_port()
    cmd = ["play", "stratego", "--board", "sim", "--announce", "none", "--remote", broker.url, "--seat", "blue",
           "--join", codes["blue"], "--host", "127.0.0.1", "--port", str(port)]
    env = {"XDG_DATA_HOME": str(tmp_path / "data")}
    proc = Cli(cmd, env=env)
    try:
        proc.wait_for("Web page of seat blue", timeout=30)
        url = re.search(r"(http://\S+/seat/\S+)", proc.output).group(1)
        phone = HttpPhone(url)
        wait_for(lambda: red.seat.synced, what="red synced")
        assert red.session.register_setup("red", random_deployment(red.session.game, "red", random.Random(1),
                                                                     red.session.state.options)) == []
        phone.deploy()
        wait_for(lambda: host.session.state.phase == "play", what="the start")
        wait_for(lambda: red.session.state.phase == "play", what="red's start")
        red.fix()
        wait_for(lambda: phone.state()["status"]["phase"] == "play", what="blue's start")
        phone.do_as_told()
        rng = random.Random(2)
        for i in range(6):
            st = host.session.state
            ply = st.ply
            # never the flag: blue's page deploys with SystemRandom, and a flag taken early ended the game before
            # the restart (its page then waits for a board in a game that is over: 1 run in 15 timed out)
            frm, to = choose(st, rng, spare_flag=True)
            if st.turn == "red":
                red.move(frm, to)
                carry_out({"red": red}, "red", frm, to, ply)
                wait_for(lambda phone=phone: phone.state()["instruction"] is not None, what="blue's page told red's move")
                if i == 2:  # blue's process dies before its player moved the token; it starts again
                    proc.proc.send_signal(signal.SIGKILL)
                    proc.proc.wait()
                    proc = Cli(cmd, env=env)
                    proc.wait_for("Web page of seat blue", timeout=30)
                    assert url in proc.output  # the same page address: the token comes from the seat's secret
                    phone = HttpPhone(url)
                    # the new process replays what it missed from the broker before its page says play (a new
                    # connection, retained state, the host's numbered messages): seconds on a loaded 2-core machine
                    wait_for(lambda phone=phone: phone.state()["status"]["phase"] == "play", timeout=30, what="blue resumed")
                    # a new process, a new (empty) simulated board: the page asks for the whole board again, the
                    # red token already moved as the ruling left it
                    assert phone.state()["guidance"]["kind"] == "board"
                    assert phone.state()["instruction"] is None
                    phone.do_as_told()
                else:
                    phone.follow_instruction()
                    phone.do_as_told()
            else:
                phone.move(frm, to)
                wait_for(lambda ply=ply, phone=phone: phone.state()["status"]["ply"] == ply + 1, what="blue's ruling")
                phone.do_as_told()
                wait_for(lambda: red.session.instruction("blue") is not None, what="red told")
                red.move(frm, to)
                red.fix()
            assert host.session.state.ply == ply + 1
        page = phone.state()
        assert page["status"]["ply"] == host.session.state.ply and page["guidance"] is None
        assert set(page["occupied"]) == set(host.session.state.board)
        events = host.table.journal.events(host.table.game_id)
        assert [(e.data["from"], e.data["to"]) for e in events if e.kind == "move"] == \
            [(r.frm, r.to) for r in host.session.state.history]
    finally:
        proc.stop()
        red.stop()
        host.stop()
