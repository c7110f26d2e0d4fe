"""Reactions: strikes the rules make happen after a move, out of turn, run by the referee.

A game lists its reactions in a ``Reactions`` hook (see ``hooks_sanjunqi.py``); each reaction is one of these
general kinds, with its pieces and lines as data:

- ``Flyover``: an enemy aircraft whose flight passes over a guard's station is shot down before it gets anywhere
  (an attack it was making has no effect); the guard is shown to everyone.
- ``Sentinel``: a guard that never moves strikes an enemy piece that stops next to it, and returns at once; the
  outcome is the clash table's, as if the guard attacked, on the target's station (pushes included).
- ``Engage``: a guard may go out to an enemy aircraft that stopped within ``reach`` steps (through empty stations),
  show itself, shoot it down and go back; if an enemy piece stands on its station when it comes back it is destroyed
  instead. Optional: with option ``reactions: ask`` it is offered to the guard's owner (``offers``, ``answer``) and
  lapses when that side moves without answering; with ``automatic`` (the default) it is always taken. A side may
  also ask for its own optional reactions to be taken without asking (``set_auto``: a standing choice).

Only the reacting guard is shown (to everyone); the pieces it strikes stay hidden, and the outcome is public.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .base import ALL, Pending, Piece, Removal, Reveal
from .effects import clash_rule, push, station_of
from .errors import RulesError
from .hooks import Hook
from .say import Say, say

if TYPE_CHECKING:
    from .model import MoveSpec
    from .state import GameState, Ruling

@dataclass(frozen=True)
class Offer:
    """An optional reaction waiting for ``side``'s answer: its guard on ``guard`` may strike ``target``."""

    id: int
    side: str
    reaction: str
    guard: str
    target: str
    guard_uid: int
    target_uid: int
    ply: int

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "side": self.side, "reaction": self.reaction, "guard": self.guard, "target": self.target}


@dataclass(frozen=True)
class Answered:
    """What answering an offer did: pieces removed, reveals and notices (as a ruling carries them)."""

    offer: Offer
    accepted: bool
    removed: tuple[Removal, ...] = ()
    reveals: tuple[Reveal, ...] = ()
    notices: tuple[tuple[str, Say], ...] = ()


def _show_all(state: GameState, station: str, pend: Pending) -> None:
    piece = state.board[station]
    if not piece.public:
        piece = state.own(station)
        piece.public = True
        pend.reveals.append(Reveal(station, piece.uid, piece.owner, piece.type, (ALL,)))


def _remove(state: GameState, station: str, pend: Pending) -> None:
    piece = state.board.pop(station)
    pend.removed.append(Removal(station, piece.uid, piece.owner, piece.type))
    state.quiet_plies = 0


def flight_path(state: GameState, piece: str, frm: str, to: str) -> tuple[str, ...]:
    """The stations a piece flying (a move spec with ``over``) from ``frm`` to ``to`` passes over, in order, ends
    excluded; empty when it did not fly there in a straight line."""
    for spec in state.game.piece_by_id[piece].moves:
        if not spec.over or not spec.when.holds(state.options):
            continue
        for ray in state.topo.rays(spec.along)[frm]:
            if to in ray:
                return ray[:ray.index(to)]
    return ()


@dataclass(frozen=True)
class Flyover:
    """Guards that shoot down enemy ``aircraft`` flying over their station."""

    name: str
    guards: tuple[str, ...]
    aircraft: tuple[str, ...]

    def guard_below(self, state: GameState, mover: Piece, frm: str, to: str) -> str | None:
        if mover.type not in self.aircraft:
            return None
        for s in flight_path(state, mover.type, frm, to):
            g = state.board.get(s)
            if g is not None and g.type in self.guards and state.enemies(g.owner, mover.owner):
                return s
        return None


@dataclass(frozen=True)
class Sentinel:
    """Immobile guards that strike an enemy piece stopping next to them along ``lines`` (not ``immune`` pieces)."""

    name: str
    guards: tuple[str, ...]
    lines: frozenset[str]
    immune: tuple[str, ...] = ()


@dataclass(frozen=True)
class Engage:
    """Guards that may go out ``reach`` steps along their ``lines`` to shoot down an enemy aircraft that stopped."""

    name: str
    reach: dict[str, frozenset[str]]  # guard piece -> the lines it goes out along
    aircraft: tuple[str, ...]
    steps: int = 2
    optional: bool = True
    # how an offer is put to its owner (catalog keys): "Your AA gun at e4 may fire at the aircraft at g4: [Fire] [Hold]"
    ask: str = "reaction.fire_at_aircraft"
    accept: str = "reaction.fire"
    decline: str = "reaction.hold"

    def can_reach(self, state: GameState, guard_at: str, target_at: str) -> bool:
        lines = self.reach[state.board[guard_at].type]
        nbrs = state.topo.neighbours(lines)
        seen = {guard_at}
        frontier = deque([(guard_at, 0)])
        while frontier:
            at, depth = frontier.popleft()
            if depth >= self.steps:
                continue
            for n in nbrs[at]:
                if n == target_at:
                    return True
                if n in seen or n in state.board or not state.topo.passable[n]:
                    continue
                seen.add(n)
                frontier.append((n, depth + 1))
        return False


@dataclass
class Reactions(Hook):
    """Runs a game's reactions after every move, in the order listed."""

    name: str = "reactions"
    flyovers: tuple[Flyover, ...] = ()
    sentinels: tuple[Sentinel, ...] = ()
    engages: tuple[Engage, ...] = ()
    doc: str = field(default="")

    def start(self, state: GameState) -> None:
        auto = state.hook_data.get(self.name, {}).get("auto", frozenset())  # a standing choice made during setup stays
        state.hook_data[self.name] = {"offers": (), "next": 1, "auto": auto}

    def _data(self, state: GameState) -> dict[str, Any]:
        data = state.hook_data.setdefault(self.name, {"offers": (), "next": 1, "auto": frozenset()})
        data.setdefault("auto", frozenset())
        return data

    # called by effects.clash_outcome before a clash: an aircraft shot down on the way strikes nothing
    def intercepts(self, state: GameState, frm: str, to: str, mover: Piece, spec: MoveSpec) -> bool:
        return spec.over and any(f.guard_below(state, mover, frm, to) is not None for f in self.flyovers)

    def after(self, state: GameState, ruling: Ruling, pending: Pending) -> None:
        data = self._data(state)
        data["offers"] = ()  # unanswered offers lapse with the next move
        mover = next((p for p in state.board.values() if p.uid == ruling.mover_uid), None)
        if mover is None:
            return
        at = station_of(state, mover)
        assert at is not None
        for f in self.flyovers:
            below = f.guard_below(state, mover, ruling.frm, ruling.to)
            if below is not None:
                guard = state.board[below]
                _show_all(state, below, pending)
                _remove(state, at, pending)
                pending.notices.append((ALL, say("notice.shot_down_overhead", owner=guard.owner, piece=guard.type, station=below,
                                                 target_side=mover.owner, at=at)))
                return
        if at == ruling.frm:
            return  # it did not come anywhere new
        for s in self.sentinels:
            if mover.type in s.immune:
                continue
            for n in state.topo.neighbours(s.lines)[at]:
                guard = state.board.get(n)
                if guard is None or guard.type not in s.guards or not state.enemies(guard.owner, mover.owner):
                    continue
                self._strike(state, n, guard, at, mover, pending)
                if station_of(state, mover) != at:
                    return
        for e in self.engages:
            if mover.type not in e.aircraft:
                continue
            for g_at, guard in sorted(state.board.items()):
                if guard.type not in e.reach or not state.enemies(guard.owner, mover.owner) or not e.can_reach(state, g_at, at):
                    continue
                if e.optional and state.options.get("reactions", "automatic") == "ask" and guard.owner not in data["auto"]:
                    offer = Offer(data["next"], guard.owner, e.name, g_at, at, guard.uid, mover.uid, state.ply)
                    data["next"] += 1
                    data["offers"] = (*data["offers"], offer)
                    pending.notices.append((guard.owner, say("notice.may_engage", owner=guard.owner, piece=guard.type, station=g_at, at=at,
                                                                 offer=offer.id)))
                    continue
                self._engage(state, g_at, guard, at, pending)
                return

    def _strike(self, state: GameState, g_at: str, guard: Piece, at: str, target: Piece, pend: Pending) -> None:
        outcome, rule = clash_rule(state, guard.type, target.type, at, striking=True)
        if outcome in (None, "illegal"):
            return
        _show_all(state, g_at, pend)
        guard = state.board[g_at]  # the guard as shown (a copy of the state no longer shares it)
        pend.notices.append((ALL, say(f"notice.strike_{outcome}", owner=guard.owner, piece=guard.type, station=g_at, at=at,
                                      target_side=target.owner)))
        if outcome in ("attacker", "both"):
            _remove(state, at, pend)
        if outcome in ("defender", "both"):
            _remove(state, g_at, pend)
        if rule is not None and rule.push == "defender" and state.board.get(at) is target:
            push(state, target, at, away_from=g_at, pend=pend)

    def _engage(self, state: GameState, g_at: str, guard: Piece, at: str, pend: Pending) -> None:
        _show_all(state, g_at, pend)
        guard = state.board[g_at]  # the guard as shown (a copy of the state no longer shares it)
        aircraft = state.board[at]
        home = state.board.get(g_at)
        if home is not None and home is not guard and state.enemies(home.owner, guard.owner):
            pend.notices.append((ALL, say("notice.engage_station_taken", owner=guard.owner, piece=guard.type, station=g_at, at=at)))
            return
        _remove(state, at, pend)
        pend.notices.append((ALL, say("notice.engage", owner=guard.owner, piece=guard.type, station=g_at, at=at,
                                      target_side=aircraft.owner)))

    # ------------------------------------------------------------------ asking
    def mirror(self, state: GameState, side: str, told: Any, automatic: bool) -> None:
        """See :func:`mirror_offers`."""
        data = self._data(state)
        kept = []
        for o in told or ():
            guard, target = state.board.get(str(o.get("guard"))), state.board.get(str(o.get("target")))
            if guard is None or target is None or guard.owner != side or not isinstance(o.get("id"), int):
                continue
            kept.append(Offer(int(o["id"]), side, str(o.get("reaction")), str(o["guard"]), str(o["target"]), guard.uid,
                              target.uid, state.ply))
        data["offers"] = tuple(kept)
        data["auto"] = frozenset({side}) if automatic else frozenset()

    def offers(self, state: GameState, side: str | None = None) -> list[Offer]:
        return [o for o in self._data(state)["offers"] if side is None or o.side == side]

    def asks(self, state: GameState) -> bool:
        """Does this game offer optional reactions to their owners (option ``reactions: ask``)?"""
        return state.options.get("reactions", "automatic") == "ask" and any(e.optional for e in self.engages)

    def set_auto(self, state: GameState, side: str, on: bool) -> None:
        data = self._data(state)
        data["auto"] = data["auto"] | {side} if on else data["auto"] - {side}

    def auto(self, state: GameState, side: str) -> bool:
        return side in self._data(state)["auto"]

    def offer_view(self, state: GameState, offer: Offer) -> dict[str, Any]:
        """The offer as its owner may see it: its own guard's station and kind, the target's station only, the
        reaction and the two answers' labels as message objects (``say``, ``accept``, ``decline``)."""
        engage = next((e for e in self.engages if e.name == offer.reaction), None)
        guard = state.board.get(offer.guard)
        kind = guard.type if guard is not None and guard.uid == offer.guard_uid else None
        ask = engage.ask if engage is not None and kind is not None else "reaction.react_to"
        return {**offer.to_json(), "guard_piece": kind, "say": say(ask, owner=offer.side, piece=kind, station=offer.guard, at=offer.target),
                "accept": say(engage.accept if engage else "reaction.react"), "decline": say(engage.decline if engage else "reaction.hold")}

    def answer(self, state: GameState, side: str, offer_id: int, accept: bool) -> Answered:
        data = self._data(state)
        offer = next((o for o in data["offers"] if o.id == offer_id), None)
        if offer is None or offer.side != side:
            raise RulesError(f"{side} has no open reaction offer {offer_id}")
        data["offers"] = tuple(o for o in data["offers"] if o.id != offer_id)
        pend = Pending()
        guard, target = state.board.get(offer.guard), state.board.get(offer.target)
        if accept and guard is not None and guard.uid == offer.guard_uid and target is not None and target.uid == offer.target_uid:
            self._engage(state, offer.guard, guard, offer.target, pend)
            # one aircraft, one shot: other offers against it lapse
            data["offers"] = tuple(o for o in data["offers"] if o.target_uid != offer.target_uid)
        return Answered(offer, accept, tuple(pend.removed), tuple(pend.reveals), tuple(pend.notices))


def reactions_hook(state: GameState) -> Reactions | None:
    """The game's reactions hook, if it has one."""
    return next((h for h in state.hooks if isinstance(h, Reactions)), None)


def mirror_offers(state: GameState, side: str, told: Any, automatic: bool) -> None:
    """Set ``side``'s open offers and standing choice as its view told them (``told``: each offer's ``id``,
    ``reaction``, ``guard`` and ``target``): a remote seat's mirror cannot work them out, not knowing the other sides'
    pieces. An offer whose stations do not hold what it names is left out."""
    hook = reactions_hook(state)
    if hook is not None:
        hook.mirror(state, side, told, automatic)


def offers(state: GameState, side: str | None = None) -> list[Offer]:
    """The optional reactions waiting for an answer (of ``side``, or of anyone)."""
    hook = reactions_hook(state)
    return hook.offers(state, side) if hook else []


def asks(state: GameState) -> bool:
    """Are optional reactions offered to their owners in this game (a reactions hook and ``reactions: ask``)?"""
    hook = reactions_hook(state)
    return hook is not None and hook.asks(state)


def offer_view(state: GameState, offer: Offer) -> dict[str, Any]:
    """What ``offer``'s owner is told of it (its own guard, the target's station, the reaction in words)."""
    hook = reactions_hook(state)
    assert hook is not None
    return hook.offer_view(state, offer)


def set_auto(state: GameState, side: str, on: bool = True) -> None:
    """``side``'s standing choice: take its optional reactions at once without being asked (``on``), or be asked.
    Open offers stay open; the choice applies from the next move. Raises RulesError if the game does not ask."""
    hook = reactions_hook(state)
    if hook is None or not hook.asks(state):
        raise RulesError(f"{state.game.id} does not ask before reactions (option reactions: ask)")
    if side not in state.game.sides:
        raise RulesError(f"no side {side!r} in {state.game.id}")
    hook.set_auto(state, side, on)


def auto(state: GameState, side: str) -> bool:
    """Does ``side`` take its optional reactions without being asked?"""
    hook = reactions_hook(state)
    return hook is not None and hook.auto(state, side)


def answer(state: GameState, side: str, offer_id: int, accept: bool = True) -> Answered:
    """``side`` takes (``accept``) or declines the reaction offer ``offer_id``; raises RulesError if there is none."""
    hook = reactions_hook(state)
    if hook is None:
        raise RulesError(f"{state.game.id} has no reactions")
    return hook.answer(state, side, offer_id, accept)
