"""What a seat may believe about the pieces it cannot see, built only from its redacted views and rulings.

For every piece of another side whose kind the seat does not know, the belief keeps the set of kinds it may still
be: at first those the setup rules allow on its starting station, then narrowed by what happened to it in front of
the seat - a piece that moved is no piece that never moves (and a long move rules out every kind that could not
make it, a move that went unshown every kind whose move shows it), a clash with one of the seat's own pieces keeps only the kinds that give that outcome, a reveal names it.
Pieces that left the game stay in the count, so every army adds up. ``sample`` draws a whole assignment of kinds
consistent with all of it (a determinization), weighted by a prior of where each kind tends to start.

The input is exactly what ``controller.rules.view`` and ``redact_ruling`` give the seat: never the game state.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

from controller.rules import GameDef, new_game
from controller.rules.deploy import allowed_stations
from controller.rules.effects import clash_outcome
from controller.rules.state import GameState, Piece

from .values import bfs

#: A prior: side -> station -> piece id -> weight (how often that kind starts there).
Prior = Mapping[str, Mapping[str, Mapping[str, float]]]


@lru_cache(maxsize=16)
def _template(gdef: GameDef, key: tuple[tuple[str, Any], ...]) -> GameState:
    return new_game(gdef, dict(key))


def template(gdef: GameDef, options: Mapping[str, Any]) -> GameState:
    """A fresh game of ``gdef`` under ``options`` (shared, never mutated): clash matrix, topology and hooks."""
    return _template(gdef, options_key(options))


def options_key(options: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Options as a hashable key (lists become tuples)."""
    return tuple(sorted((k, tuple(v) if isinstance(v, list) else v) for k, v in options.items()))


class Belief:
    """One seat's knowledge of the other sides' pieces, updated event by event."""

    def __init__(self, gdef: GameDef, seat: str, options: Mapping[str, Any], prior: Prior | None = None) -> None:
        self.base = template(gdef, options)
        self.game = self.base.game  # the army as played under these options
        self.seat = seat
        self.options = dict(self.base.options)
        #: the options of a guessed world: the more-squares rule judges a chase over many moves, which a world
        #: (no history) cannot know, so it is off there (the referee still refuses such a move, and the bot is told)
        self.look_options = dict(self.options, more_squares=False) if self.options.get("more_squares") else self.base.options
        # a state's move specs are found once per piece type under its options: worlds under other options keep
        # their own table instead of sharing the template's
        self._look_moves = {} if self.look_options is not self.base.options else self.base.active_moves
        self.prior = prior
        self.counts = {p.id: p.count for p in self.game.pieces}
        self.movable = frozenset(p.id for p in self.game.pieces if p.movable)
        self.kinds = tuple(self.counts)
        self.owner: dict[int, str] = {}
        self.start: dict[int, str] = {}
        self.possible: dict[int, frozenset[str]] = {}  # other sides' pieces whose kind is not known for sure
        self.known: dict[int, str] = {}  # every piece whose kind the seat knows (its own included)
        self.moved: set[int] = set()
        self.alive: set[int] = set()
        self.where: dict[str, int] = {}  # station -> uid, as of the latest view
        self.started = False
        self.turn = self.game.sides[0]
        self.out: dict[str, str] = {}
        self.ply = 0
        self.public: set[int] = set()
        self.carries: dict[int, tuple[Mapping[str, str], ...]] = {}  # a carrier's uid -> the flags riding on it
        #: Read move patterns (``lean``): off, the kinds are drawn as before (the classic bot).
        self.reads_moves = False
        #: Treat a piece whose possible kinds are down to one as known in the guesses (its attacks and our replies
        #: to it are then judged as a known piece's): off, only a shown piece is known (the classic bot).
        self.deduces = False
        #: uid -> kind -> how much likelier than its counts that kind is, read from how the piece moved: a piece that
        #: steps up to one of our pieces it has seen is likelier one that beats it, one that steps away one that does not
        self.lean: dict[int, dict[str, float]] = {}
        #: station -> the stations one step away along any line
        self.nbrs = self.base.topo.neighbours(frozenset(line.kind for line in self.game.lines))
        #: the kinds whose loss loses the game and that move (a Navy chess (Taiwan) flag sails): read by where they are
        self.mobile_flags = frozenset(self.game.win.capture) & self.movable
        self._from_home: dict[str, dict[str, int]] = {}  # side -> station -> steps from its deployment area
        #: uid -> steps outside its side's deployment area, for the moved pieces of other sides that stand there
        #: (as of the latest view; only read, and only kept, where the flag moves)
        self.abroad: dict[int, int] = {}

    # ------------------------------------------------------------------ updates
    def update(self, view: Mapping[str, Any], event: Mapping[str, Any] | None = None) -> None:
        """Take in the seat's view after an event (and the seat's redacted ruling of it, if it was a move)."""
        if view.get("phase") == "setup":
            return
        before = self.where
        if not self.started:
            self._first(view)
        if event is not None and "from" in event and before:
            self._ruling(event, before)
        self._view(view)

    def _first(self, view: Mapping[str, Any]) -> None:
        self.started = True
        allowed = allowed_table(self.game, options_key(self.options))
        for e in view["pieces"]:
            uid, owner = e["uid"], e["owner"]
            self.owner[uid] = owner
            self.start[uid] = e["station"]
            self.alive.add(uid)
            if owner != self.seat:
                kinds = frozenset(k for k in self.kinds if e["station"] in allowed[(owner, k)])
                self.possible[uid] = kinds or frozenset(self.kinds)

    def _view(self, view: Mapping[str, Any]) -> None:
        seen: set[int] = set()
        where: dict[str, int] = {}
        for e in view["pieces"]:
            uid = e["uid"]
            seen.add(uid)
            where[e["station"]] = uid
            self.owner.setdefault(uid, e["owner"])
            if "piece" in e:
                self.learn(uid, e["piece"])
        self.alive &= seen
        self.where = where
        self.turn = view.get("turn") or self.turn
        self.out = dict(view.get("out") or {})
        self.ply = view.get("ply", 0)
        self.public = {e["uid"] for e in view["pieces"] if e.get("public")}
        self.carries = {e["uid"]: tuple(e["carries"]) for e in view["pieces"] if e.get("carries")}
        if self.reads_moves and self.mobile_flags:
            self.abroad = self._abroad()

    def learn(self, uid: int, kind: str) -> None:
        """The seat now knows that piece ``uid`` is a ``kind``."""
        self.known[uid] = kind
        self.possible.pop(uid, None)

    def refused(self, frm: str, to: str) -> None:
        """The referee refused the seat's move ``frm``-``to``. Where that hangs on the kind of the piece attacked (a
        Navy chess camp shelters every piece but the flagship), that piece is none of the kinds the move would be
        legal against. A refusal for another reason (a chase rule's history) rules out no kind and changes nothing."""
        uid, mover = self.where.get(to), self.where.get(frm)
        if uid is None or mover is None or uid in self.known or uid not in self.possible:
            return
        st = self.scratch(self.where, {})
        st.turn = self.seat
        keep = []
        for kind in self.possible[uid]:
            st.board[to] = Piece(uid, kind, self.owner[uid])
            if to not in st.destinations(frm):
                keep.append(kind)
        self._narrow(uid, frozenset(keep))

    def _narrow(self, uid: int, keep: frozenset[str]) -> None:
        if uid in self.known or uid not in self.possible:
            return
        narrowed = self.possible[uid] & keep
        if narrowed:  # an empty set means an effect the model does not follow (a proxy rank, a reaction): keep the old
            self.possible[uid] = narrowed

    def _ruling(self, r: Mapping[str, Any], before: Mapping[str, int]) -> None:
        mover = before.get(r["from"])
        if mover is None:
            return
        if r.get("piece"):
            self.learn(mover, r["piece"])
        defender = before.get(r["to"]) if r.get("kind") == "attack" else None
        if defender is not None and r.get("defender_piece"):
            self.learn(defender, r["defender_piece"])
        for gone in r.get("removed", ()):
            uid = self._removed(gone, r, before, mover)
            if uid is not None and gone.get("piece"):
                self.learn(uid, gone["piece"])
        if mover not in self.known:
            self.moved.add(mover)
            self._narrow(mover, self._could_make(r["from"], r["to"], before))
            if self.reads_moves and r.get("kind") != "attack" and mover in self.possible:
                self._read_move(mover, r["from"], r["to"], before)
        outcome = r.get("outcome")
        if defender is None or outcome is None:
            return
        if mover in self.known and defender not in self.known:
            self._narrow(defender, self._judged(r["from"], r["to"], before, mover, defender, outcome, defender))
        elif defender in self.known and mover not in self.known:
            self._narrow(mover, self._judged(r["from"], r["to"], before, mover, defender, outcome, mover))

    def _read_move(self, mover: int, frm: str, to: str, before: Mapping[str, int]) -> None:
        """Lean the kinds of a piece that went from ``frm`` to ``to`` by what it went towards or away from: a piece of
        ours the enemy has seen (shown to everyone) that it now stands beside (a chase, or a bluff) or no longer does
        (a flight). Only a lean: the kinds it may be stay the same."""
        clash = self.base.clash
        nbrs = self.nbrs
        near_to, near_from = set(nbrs.get(to, ())), set(nbrs.get(frm, ()))
        lean = self.lean.setdefault(mover, {})
        for station, uid in before.items():
            if self.owner.get(uid) != self.seat or uid not in self.public or uid not in self.known or station == to:
                continue
            ours = self.known[uid]
            chased, fled = station in near_to and station not in near_from, station in near_from and station not in near_to
            if not (chased or fled):
                continue
            for k in self.possible[mover]:
                outcome = clash.get((k, ours))
                if outcome == "attacker":
                    f = 1.8 if chased else 0.6
                elif outcome in ("defender", "both"):
                    f = 0.6 if chased else 1.6
                else:
                    continue
                lean[k] = min(8.0, max(0.125, lean.get(k, 1.0) * f))

    def _removed(self, gone: Mapping[str, Any], r: Mapping[str, Any], before: Mapping[str, int], mover: int) -> int | None:
        """The piece a ruling's ``removed`` entry names: the one that stood on its station, if of its owner, else the
        mover fallen where it went. A Sanjunqi fighter won its clash on j0 and an AA gun then shot it down there: both
        removals name j0, and reading the fighter's as the defender's made the defender a fighter (the real one
        was then thought gone, and every ground piece in turn tried to strike it: three refused moves lost a game)."""
        uid = before.get(gone["station"])
        owner = gone.get("owner")
        if uid is not None and (owner is None or self.owner.get(uid) == owner):
            return uid
        if owner is not None and self.owner.get(mover) == owner and gone["station"] == r.get("to"):
            return mover
        return None

    def _judged(self, frm: str, to: str, before: Mapping[str, int], mover: int, defender: int, outcome: str,
                unknown: int) -> frozenset[str]:
        """The kinds of piece ``unknown`` (the mover or the defender; the other is known) that give ``outcome`` in
        this very clash, judged as the referee judges it: the clash table, and where the game says so the station
        it happens on, an interception, a strike the target cannot answer (a Sanjunqi gunboat bombarding artillery
        bounces, which the table alone would call a loss)."""
        scratch = self.scratch(before, {})
        scratch.turn = self.owner[mover]
        out = []
        for kind in self.possible.get(unknown, self.kinds):
            a = Piece(mover, kind if unknown == mover else self.known[mover], self.owner[mover])
            d = Piece(defender, kind if unknown == defender else self.known[defender], self.owner[defender])
            scratch.board[frm], scratch.board[to] = a, d
            spec = scratch.destinations(frm).get(to)
            if spec is not None and clash_outcome(scratch, to, a, d, spec, scratch.clash[(a.type, d.type)]) == outcome:
                out.append(kind)
        return frozenset(out)

    def _could_make(self, frm: str, to: str, before: Mapping[str, int]) -> frozenset[str]:
        """The kinds that could go from ``frm`` to ``to`` over the board as it stood (``to`` taken as empty, or as the
        piece attacked there for a strike that only attacks) without being shown: a move that always shows its piece (a Navy chess flagship's, a flying boat's flight) is not
        how an unshown piece moved."""
        scratch = self.scratch(before, {})
        target = scratch.board.pop(to, None)
        if target is not None and target.uid in self.known:
            target = Piece(target.uid, self.known[target.uid], target.owner)
        out = []
        owner = scratch.board[frm].owner
        scratch.turn = owner
        for kind in self.movable:
            scratch.board[frm] = Piece(0, kind, owner)
            spec = scratch.destinations(frm).get(to)
            if spec is None and target is not None:  # a strike that only attacks (and may return): onto the target
                scratch.board[to] = target
                spec = scratch.destinations(frm).get(to)
                del scratch.board[to]
            if spec is not None and not spec.reveal:
                out.append(kind)
        return frozenset(out)

    def scratch(self, where: Mapping[str, int], kinds: Mapping[int, str]) -> GameState:
        """A game state in play with the pieces of ``where`` (station -> uid), of kinds ``kinds`` where given, else
        any kind: for movement questions and look-ahead. Hooks start afresh (the seat cannot see their history)."""
        st = object.__new__(GameState)
        st.__dict__.update(self.base.__dict__)
        st.board = {}
        st.owned = None  # its pieces are its own: made here, shared with no copy
        st.options = self.look_options
        st.active_moves = self._look_moves
        any_kind = self.kinds[0]
        deduces, possible = self.deduces, self.possible
        for station, uid in where.items():
            kind = kinds.get(uid) or self.known.get(uid) or any_kind
            piece = st.board[station] = Piece(uid, kind, self.owner[uid])
            piece.public = uid in self.public
            if uid in self.known or deduces and len(possible.get(uid, ())) == 1:
                piece.known_to = piece.known_to | {self.seat}
        st.phase = "play"
        st.turn = self.turn
        st.ply = self.ply
        st.quiet_plies = 0
        st.history = []
        st.hook_data = {}
        st.out = dict(self.out)
        st.result = None
        st.deployments = {}
        for hook in st.hooks:
            hook.start(st)
        if self.carries and "carry_flag" in st.hook_data:
            from controller.rules.hooks_dover import CarriedFlag

            st.hook_data["carry_flag"] = {
                uid: tuple(CarriedFlag(-1, f["owner"], f["piece"]) for f in flags) for uid, flags in self.carries.items()
            }
        return st

    # ------------------------------------------------------------------ sampling
    def hidden(self) -> list[int]:
        """The other sides' pieces (alive or gone) whose kind the seat does not know."""
        return [u for u in self.possible if u not in self.known]

    def sample(self, rng: random.Random) -> dict[int, str]:
        """A kind for every piece whose kind the seat does not know, consistent with the armies' counts and with
        everything the seat saw (each piece's possible kinds), weighted by the prior for unmoved pieces."""
        out: dict[int, str] = {}
        by_side: dict[str, list[int]] = {}
        for uid in self.hidden():
            by_side.setdefault(self.owner[uid], []).append(uid)
        for side, uids in by_side.items():
            left = Counter(self.counts)
            for uid, kind in self.known.items():
                if self.owner.get(uid) == side:
                    left[kind] -= 1
            out.update(self._sample_side(side, uids, left, rng))
        return out

    def _abroad(self) -> dict[int, int]:
        """Each moved piece of another side standing outside its side's deployment area -> its steps from it: a
        flag that moves is kept at home by whoever plays it, so a piece far from home is hardly the flag."""
        out = {}
        for station, uid in self.where.items():
            side = self.owner.get(uid)
            if uid not in self.moved or side is None or side == self.seat:
                continue
            home = self._from_home.get(side)
            if home is None:
                zone = self.game.setup.zones[self.game.setup.deploy_zone][side]
                home = self._from_home[side] = bfs(self.nbrs, sorted(zone))
            far = home.get(station, 0)
            if far:
                out[uid] = far
        return out

    def _sample_side(self, side: str, uids: list[int], left: Counter[str], rng: random.Random) -> dict[int, str]:
        """Kinds for ``uids`` drawn from the ``left`` counts, most constrained piece first. A draw that runs into a
        dead end is drawn again; after ten, a piece may take a kind outside its set (the belief missed an effect)."""
        prior = (self.prior or {}).get(side, {})
        abroad = self.abroad if self.reads_moves else {}
        chosen: dict[int, str] = {}
        for attempt in range(12):
            order = sorted(uids, key=lambda u: (len(self.possible[u]), rng.random()))
            remaining = Counter(left)
            chosen = {}
            for uid in order:
                kinds = [k for k in sorted(self.possible[uid]) if remaining[k] > 0]
                if not kinds and attempt >= 10:
                    kinds = [k for k in self.kinds if remaining[k] > 0]
                if not kinds:
                    break
                at = self.start.get(uid)
                station_prior = prior.get(at) if at is not None and uid not in self.moved else None
                if station_prior:
                    weights = [(station_prior.get(k, 0.0) + 0.02) * remaining[k] ** 0.5 for k in kinds]
                else:
                    weights = [float(remaining[k]) for k in kinds]
                lean = self.lean.get(uid) if self.reads_moves else None
                if lean:
                    weights = [wt * lean.get(k, 1.0) for wt, k in zip(weights, kinds, strict=True)]
                far = abroad.get(uid)
                if far:
                    weights = [wt * FLAG_ABROAD ** far if k in self.mobile_flags else wt
                               for wt, k in zip(weights, kinds, strict=True)]
                kind = rng.choices(kinds, weights)[0]
                chosen[uid] = kind
                remaining[kind] -= 1
            else:
                return chosen
        return {u: chosen.get(u) or sorted(self.possible[u])[0] for u in uids}  # pragma: no cover - counts never all fail


#: How much less likely, for each step a moved piece stands outside its side's deployment area, it is the flag,
#: where the flag moves (Navy chess, Taiwan): seed 2 against the bot before, a piece that had sailed from our
#: enemy's rows to J0, in our half, was the enemy's flag in one guess of six (the real flag shuffled on A2, at home,
#: one in ten), and our destroyer struck it and sank.
FLAG_ABROAD = 0.25


@lru_cache(maxsize=32)
def allowed_table(gdef: GameDef, key: tuple[tuple[str, Any], ...]) -> dict[tuple[str, str], frozenset[str]]:
    options = dict(key)
    return {(side, p.id): frozenset(allowed_stations(gdef, side, p.id, options)) for side in gdef.sides for p in gdef.pieces}
