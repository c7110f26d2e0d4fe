"""Property: in random refereed games of every game file (setups in random order, illegal tries of every kind the
board lets a player make, arbiter undos, reactions), nothing sent to the spectator, to the other seats, to the voice
and console announcers (in every language) or to the club's MQTT feed names a piece that is hidden from them then.

What is searched, for the spectator and every public output (console en / zh-Hans / zh-Hant, voice en / zh, the
club feed's payloads): the piece's English name (whole words, any case), its ``zh`` (Traditional) and ``zh_hans``
names (exact text), and its game-file id (as a JSON string, ``"bomb"``). Only kinds hidden now and not shown
anywhere else count: a kind with a face-up or revealed piece may be named (about that piece). False positives are
kept out so: the names of shown kinds are cut out of the text first (so Flagship is not found inside a shown
Vice-Flagship, nor 司令 inside a shown 兵團司令). The catalogs' own words hold no piece name (checked below: the
flag is said as ``{flag_piece}``), so nothing else is left out. For the other seats, whose own army has the same kinds, every message object
they receive is checked by structure: a piece named with another side's owner must be one that seat was shown, and
a piece named without an owner (a refusal's reason) reaches only the seat that made the move.

Hypothesis is derandomized with a small example count (``FACEDOWN_LEAK_EXAMPLES`` raises it for a soak run).
"""

from __future__ import annotations

import io
import json
import os
import random
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from controller.announce.console import ConsoleAnnouncer
from controller.announce.voice import phrase
from controller.club.broker import Broker
from controller.club.bus import TableBus, public_status
from controller.messages import LANGS, catalog, render
from controller.rules import SPECTATOR, game_ids, load_game
from controller.rules import reactions as _reactions
from controller.rules.say import codes, is_say
from controller.rules.state import ALL
from harness.web_game import Game
from web_referee.payloads import event_for, state_for

EXAMPLES = int(os.environ.get("FACEDOWN_LEAK_EXAMPLES", "2"))
GAME_OPTIONS = {"sanjunqi": {"reactions": "ask"}, "luzhanqi": {"reveal": "silent"}, "stratego": {"reveal": "silent"}}
OWNER_KEYS = ("owner", "side", "player")


class VoiceText:
    """What the voices would say: the voice module's own phrase() for every public event (espeak only plays it)."""

    def __init__(self, game: Any) -> None:
        self.game = game
        self.lines: list[str] = []

    def announce(self, event: dict) -> None:
        for lang in ("zh", "en"):
            text = phrase(event, lang, self.game)
            if text is not None:
                self.lines.append(text)

    def close(self) -> None:
        pass


class Watch:
    """Collects every output of a table and checks each against what its audience may know right then."""

    def __init__(self, game: Game) -> None:
        self.g = game
        self.table = game.table
        self.gdef = game.table.game
        self.consoles = {lang: io.StringIO() for lang in LANGS}
        for lang, out in self.consoles.items():
            self.table.add_announcer(ConsoleAnnouncer(out, game=self.gdef, lang=lang))
        self.voice = VoiceText(self.gdef)
        self.table.add_announcer(self.voice)
        self.bus = TableBus(self.table, Broker("127.0.0.1", 1), "t1", outbox_size=100_000)  # never started: its outbox is what it would send
        self.seen_codes: set[str] = set()
        self.sent_public = 0
        self.table.session.subscribe(self.on_event)
        self.army = {p.id: p for p in self.gdef.pieces}
        self.ever_public: set[int] = set()
        self.refusals: set[str] = set()

    # ------------------------------------------------------------------ truth from the engine
    def public_kinds(self) -> tuple[set[str], set[str]]:
        """(kinds of pieces hidden from everyone now, kinds anyone may name because one of them has been shown)."""
        st = self.table.state
        shown = {p.type for p in st.board.values() if p.public}
        for r in st.history:
            shown |= {rv.type for rv in r.reveals if ALL in rv.to}
        hidden = {p.type for p in st.board.values() if not p.public}
        for r in st.history:
            hidden |= {rm.type for rm in r.removed if not any(rv.uid == rm.uid and ALL in rv.to for h in st.history for rv in h.reveals)}
        return hidden - shown, shown

    def known_to(self, seat: str, owner: str) -> set[str]:
        st = self.table.state
        out = {p.type for p in st.board.values() if p.owner == owner and (p.public or seat in p.known_to)}
        for r in st.history:
            out |= {rv.type for rv in r.reveals if rv.owner == owner and (ALL in rv.to or seat in rv.to)}
        return out

    # ------------------------------------------------------------------ checks
    def forbidden_words(self, lang_text: dict[str, str], forbidden: set[str], shown: set[str]) -> None:
        """Search rendered text for the names of ``forbidden`` kinds (see the module docstring for what is left out)."""
        visible_names = sorted({n for k in shown for n in (self.army[k].name, self.army[k].zh, self.army[k].zh_hans)}, key=len, reverse=True)
        for lang, text in lang_text.items():
            for name in visible_names:  # a shown kind's name is fine, and may hold a hidden one's (Vice-Flagship)
                text = re.sub(re.escape(name), " ", text, flags=re.I)
            for kind in forbidden:
                p = self.army[kind]
                if lang == "en":
                    assert not re.search(rf"\b{re.escape(p.name)}\b", text, re.I), f"{lang}: hidden {p.name} in {text!r}"
                else:
                    for name in {p.zh, p.zh_hans}:
                        assert name not in text, f"{lang}: hidden {kind} ({name}) in {text!r}"

    def public_json(self, payload: Any, forbidden: set[str], where: str) -> None:
        text = json.dumps(payload, ensure_ascii=False)
        for kind in forbidden:
            assert f'"{kind}"' not in text, f"{where}: hidden piece id {kind!r} in {text[:400]}"

    def seat_payload(self, seat: str, payload: Any, where: str, mover: str | None) -> None:
        for d in _walk(payload):
            if not is_say(d):
                continue
            self.seen_codes.add(d["code"])
            params = d.get("params", {})
            pieces = [v for k, v in params.items() if (k == "piece" or k.endswith("_piece")) and isinstance(v, str)]
            if not pieces:
                continue
            # whose piece a message names: its ``owner``, else ``side``, else ``player`` (docs/messages.md)
            owner = next((params[k] for k in OWNER_KEYS if isinstance(params.get(k), str)), None)
            if owner is None:
                assert mover == seat, f"{where}: {seat} got an ownerless piece name {d}"
                continue
            if owner != seat and owner in self.gdef.sides:
                for piece in pieces:
                    assert piece in self.known_to(seat, owner), f"{where}: {seat} learned {owner}'s {piece} from {d}"

    def on_event(self, ev: Any) -> None:
        # every event has its line as a message object (setup-phase board readings are not lines), and every
        # language can say it: a missing key or param raises here
        assert is_say(ev.public.get("say")) or ev.public["event"] == "board", ev.public
        for lang in LANGS if ev.public["event"] != "board" else ():
            render(ev.public["say"], lang, self.gdef)
        st = self.table.state
        if st.phase == "over":
            return  # the post-game reveal: everything may be known
        forbidden, shown = self.public_kinds()
        public = event_for(ev, SPECTATOR)
        if public is not None:
            self.public_json(public, forbidden, f"spectator event {ev.seq}")
            self.seen_codes |= codes(public)
        for seat in self.gdef.sides:
            mine = event_for(ev, seat)
            if mine is not None:
                self.seen_codes |= codes(mine)
                self.seat_payload(seat, mine, f"{seat} event {ev.seq} {ev.public.get('event')}", ev.public.get("player"))
        if ev.public.get("event") == "illegal":
            full = event_for(ev, str(ev.public["player"]))
            if full is not None:
                self.refusals.add(full["reason"]["code"])
                self.seen_codes |= codes(full)

    def check_outputs(self) -> None:
        """Everything the announcers and the feed produced since the last check, and every role's state now."""
        st = self.table.state
        if st.phase == "over":
            return
        forbidden, shown = self.public_kinds()
        texts = {lang: out.getvalue() for lang, out in self.consoles.items()}
        texts["voice"] = "\n".join(self.voice.lines)
        self.forbidden_words({k: v for k, v in texts.items() if k in LANGS}, forbidden, shown)
        self.forbidden_words({"en": "\n".join(x for x in self.voice.lines if x.isascii()),
                              "zh-Hans": "\n".join(x for x in self.voice.lines if not x.isascii())}, forbidden, shown)
        for out in self.consoles.values():
            out.seek(0)
            out.truncate()
        self.voice.lines.clear()
        feed = [entry.data for entry in self.bus.outbox][self.sent_public:]
        self.sent_public += len(feed)
        with self.table.session.lock:
            feed.append(public_status(self.table, "t1", players={}))
        self.public_json(feed, forbidden, "club feed")
        self.forbidden_words({"en": "\n".join(str(e.get("text") or "") for e in feed)}, forbidden, shown)
        self.public_json({k: v for k, v in state_for(self.table, SPECTATOR).items() if k != "options"}, forbidden, "spectator state")
        for seat in self.gdef.sides:
            state = state_for(self.table, seat)
            assert "setup" not in state or state["setup"].get("guided_order") is not None
            self.seat_payload(seat, {k: v for k, v in state.items() if k != "setup"}, f"{seat} state", None)


def _walk(obj: Any):  # noqa: ANN202
    if isinstance(obj, dict):
        yield obj
        for v in obj.values():
            yield from _walk(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _walk(v)


def _illegal_tries(g: Game, rng: random.Random) -> list[tuple[str, str]]:
    """Moves the side to move could physically make that the rules refuse: from its own pieces to an empty station or
    onto an enemy piece, each with a different reason if possible."""
    st = g.table.state
    side = st.turn
    own = [s for s, p in st.board.items() if p.owner == side]
    by_reason: dict[str, tuple[str, str]] = {}
    for frm in rng.sample(own, min(len(own), 12)):
        for to in rng.sample(st.game.station_ids, min(len(st.game.station_ids), 25)):
            target = st.board.get(to)
            if to == frm or (target is not None and not st.enemies(side, target.owner)):
                continue
            why = st.why_illegal((frm, to))
            if why is not None:
                by_reason.setdefault(why["code"], (frm, to))
    return list(by_reason.values())


def _play(game_id: str, seed: int) -> Watch:
    tmp = Path(tempfile.mkdtemp(prefix="leaks-"))
    g = Game(game_id, tmp, options=GAME_OPTIONS.get(game_id), seed=seed)
    watch = Watch(g)
    rng = random.Random(seed)
    sides = list(g.table.game.sides)
    rng.shuffle(sides)  # setups in random order
    for side in sides[:-1]:
        g.deploy(side)
        watch.check_outputs()
    g.start()
    watch.check_outputs()
    for _ply in range(40):
        st = g.table.state
        if st.phase != "play":
            break
        roll = rng.random()
        offers = _reactions.offers(st) if st.phase == "play" else []
        if offers and roll < 0.9:
            o = rng.choice(offers)
            g.session.answer_reaction(o.side, o.id, rng.random() < 0.7)
            g.lay_out()
        elif roll < 0.03 and len(st.game.sides) > 2 and not st.out:
            g.session.put_out(rng.choice(st.active_sides()), "time rule")  # the arbiter applies a club's time rule
            g.lay_out()
        elif roll < 0.3:
            tries = _illegal_tries(g, rng)
            if tries:
                frm, to = rng.choice(tries)
                g.move(frm, to)
        elif roll < 0.36 and st.history:
            g.session.undo(g.table.rebuild)
            g.lay_out()
        else:
            g.random_move()
        watch.check_outputs()
    g.table.stop()  # closes the journal too
    shutil.rmtree(tmp, ignore_errors=True)
    return watch


@pytest.mark.parametrize("game_id", game_ids())
@settings(max_examples=EXAMPLES, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000))
def test_no_hidden_piece_name_reaches_anyone_not_entitled(game_id: str, seed: int) -> None:
    watch = _play(game_id, seed)
    assert watch.table.state.ply > 0 or watch.table.state.phase == "over"
    for lang in LANGS:  # every code the games emitted is in every catalog
        assert not sorted(watch.seen_codes - set(catalog(lang))), lang


def test_no_catalog_words_are_a_piece_name():
    """So the search above needs no exceptions: no template's own text (nor a side's name) holds a piece's name."""
    for lang in LANGS:
        words = " ".join(catalog(lang).values())
        for gid in game_ids():
            for p in load_game(gid).pieces:
                if lang == "en":
                    assert not re.search(rf"\b{re.escape(p.name)}\b", words, re.I), (lang, p.name)
                else:
                    assert p.zh not in words and p.zh_hans not in words, (lang, gid, p.id)


def test_illegal_tries_cover_the_reasons_a_board_allows():
    """The random tries above really reach the refusals the issue names: immobile pieces, camps, scouts, ..."""
    seen: set[str] = set()
    for game_id, seed in (("stratego", 1), ("luzhanqi", 2), ("stratego", 3), ("luzhanqi", 4)):
        seen |= _play(game_id, seed).refusals
    assert {"reason.piece_immobile", "reason.cannot_reach"} <= seen, seen
    assert seen & {"reason.sheltered", "reason.impassable", "reason.station_frozen", "reason.may_not_attack"}, seen
