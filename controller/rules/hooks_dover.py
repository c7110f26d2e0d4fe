"""Carried flags (Dover Patrol, 法国海军棋): a taken flag rides on its taker; bring the enemy flag to your base to win.

Any game with a ``flag`` piece and a ``base`` setup zone can name the hook ``carry_flag``. It reads two options:

- ``flag_win``: ``home`` (default) a side wins when one of its pieces carrying an enemy flag stands on its own base;
  ``both_home`` as ``home``, and the side's own flag must be on its base too (standing there, or carried by one of its
  pieces standing there); ``first_capture`` taking the enemy flag wins at once (the engine's ordinary capture rule:
  the flag leaves the game, so ``win.capture`` must name the flag).
- ``dropped_flag``: where a flag goes when its carrier sinks and nobody wins the clash (outcome ``both``): ``base``
  (default) back to the station it started on, else another empty station of its side's base, else the empty
  station nearest that base (fewest ordinary moves from it; ties in board order) — never inside the enemy's waters
  by default; ``here`` where its carrier sank.

The registry in ``hooks.py`` imports this module; import it through ``controller.rules.hooks``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .base import ALL, Pending, Piece, Removal, Reveal
from .hooks import Hook
from .say import Say, say

if TYPE_CHECKING:
    from .state import GameState, Ruling


@dataclass(frozen=True, slots=True)
class CarriedFlag:
    """A flag riding on a piece: the flag's own uid, owner and piece type."""

    uid: int
    owner: str
    type: str


def _station_of(state: GameState, uid: int) -> str | None:
    for station, piece in state.board.items():
        if piece.uid == uid:
            return station
    return None


def _describe(state: GameState, piece: Piece, station: str) -> Say:
    """A piece as everyone may name it: its kind only when it is public."""
    if piece.public:
        return say("notice.piece_on", owner=piece.owner, piece=piece.type, station=station)
    return say("notice.hidden_piece_on", owner=piece.owner, station=station)


class CarryFlag(Hook):
    """A piece that takes an enemy flag carries it; a piece that beats a carrier takes its flags over; a side wins by
    bringing an enemy flag to its own base (see the module docstring for the options)."""

    name = "carry_flag"
    flag = "flag"
    base_zone = "base"

    def start(self, state: GameState) -> None:
        state.hook_data[self.name] = {}  # carrier uid -> tuple of CarriedFlag (tuples: copies share nothing mutable)

    # ------------------------------------------------------------------ queries
    def carried(self, state: GameState) -> dict[int, tuple[CarriedFlag, ...]]:
        """Carrier uid -> the flags riding on it (empty before play starts)."""
        return state.hook_data.get(self.name, {})

    def annotate(self, state: GameState, station: str, piece: Piece) -> dict[str, Any]:
        flags = self.carried(state).get(piece.uid)
        if not flags:
            return {}
        return {"carries": [{"owner": f.owner, "piece": f.type} for f in flags]}

    # ------------------------------------------------------------------ after each ruling
    def after(self, state: GameState, ruling: Ruling, pending: Pending) -> None:
        mode = state.options.get("flag_win", "home")
        if ruling.kind == "attack":
            if ruling.defender_type == self.flag and ruling.outcome == "attacker" and mode == "first_capture":
                return  # the flag leaves the game; the engine's capture rule ends it
            self._after_clash(state, ruling, pending)
        if mode != "first_capture":
            self._check_home(state, pending, both=mode == "both_home")

    def _after_clash(self, state: GameState, ruling: Ruling, pending: Pending) -> None:
        carried = self.carried(state)
        taker_uid = {"attacker": ruling.mover_uid, "defender": ruling.defender_uid}.get(ruling.outcome or "")
        if ruling.defender_type == self.flag and ruling.outcome == "attacker":
            # the flag is taken, not destroyed: it leaves its station and rides on the attacker
            pending.removed[:] = [r for r in pending.removed if r.uid != ruling.defender_uid]
            flag = CarriedFlag(ruling.defender_uid, ruling.defender_side or "", ruling.defender_type)
            self._hand_over(state, pending, carried, (flag,), ruling.mover_uid, taken_from=None)
        for removal in list(pending.removed):
            flags = carried.pop(removal.uid, None)
            if not flags:
                continue
            if taker_uid is not None and taker_uid != removal.uid:
                self._hand_over(state, pending, carried, flags, taker_uid, taken_from=removal.type)
            else:
                self._drop(state, ruling, pending, flags, removal.station)

    def _hand_over(self, state: GameState, pending: Pending, carried: dict[int, tuple[CarriedFlag, ...]],
                   flags: tuple[CarriedFlag, ...], taker_uid: int, taken_from: str | None) -> None:
        carried[taker_uid] = carried.get(taker_uid, ()) + flags
        station = _station_of(state, taker_uid)
        if station is None:  # pragma: no cover - the winner of a clash is always on the board
            return
        taker = state.board[station]
        if state.options.get("reveal", "open") != "open":
            taken_from = None  # the sunken carrier was not shown: do not name it
        for f in flags:
            code = "notice.flag_taken_back" if f.owner == taker.owner else "notice.flag_taken"
            if taken_from is not None:
                code += "_from_sunk"
            pending.notices.append((ALL, say(code, taker=_describe(state, taker, station), side=f.owner, flag_piece=f.type,
                                             sunk_piece=taken_from)))

    def _drop(self, state: GameState, ruling: Ruling, pending: Pending, flags: tuple[CarriedFlag, ...], sank_at: str) -> None:
        """Flags whose carrier sank with nobody winning: back to their base, or where the carrier sank."""
        for f in flags:
            candidates: list[str] = []
            if state.options.get("dropped_flag", "base") == "base":
                start = [s for s, pid in state.deployments.get(f.owner, {}).items() if pid == f.type]
                base = state.game.setup.zones.get(self.base_zone, {}).get(f.owner, frozenset())
                candidates += start + [s.id for s in state.game.stations if s.id in base]
                candidates += _nearest_first(state, base)
            candidates += [sank_at, ruling.frm, ruling.to]
            dest = next((s for s in candidates if s not in state.board and state.topo.passable[s]), None)
            if dest is None:  # pragma: no cover - needs more flags on one carrier than two sides can give
                pending.removed.append(Removal(sank_at, f.uid, f.owner, f.type))
                pending.notices.append((ALL, say("notice.flag_sank", side=f.owner, flag_piece=f.type)))
                continue
            piece = Piece(f.uid, f.type, f.owner)
            piece.public = True
            state.board[dest] = piece
            pending.reveals.append(Reveal(dest, f.uid, f.owner, f.type, (ALL,)))
            code = "notice.flag_back_to_base" if dest not in (sank_at, ruling.frm, ruling.to) else "notice.flag_set_down"
            pending.notices.append((ALL, say(code, side=f.owner, station=dest, flag_piece=f.type)))

    def _check_home(self, state: GameState, pending: Pending, *, both: bool) -> None:
        """Put out every side whose flag an enemy has brought to that enemy's base."""
        bases = state.game.setup.zones.get(self.base_zone)
        if not bases:
            return
        carried = self.carried(state)
        already = {s for s, _ in pending.out} | set(state.out)
        for side in state.game.sides:
            if side in already:
                continue
            brought: list[tuple[CarriedFlag, str]] = []
            own_home = False
            for station in sorted(bases[side]):
                piece = state.board.get(station)
                if piece is None or piece.owner != side:
                    continue
                if piece.type == self.flag:
                    own_home = True
                for f in carried.get(piece.uid, ()):
                    if f.owner == side:
                        own_home = True
                    elif state.enemies(side, f.owner):
                        brought.append((f, station))
            if not brought or (both and not own_home):
                continue
            for f, station in brought:
                if f.owner not in already:
                    already.add(f.owner)
                    pending.out.append((f.owner, say("verdict.flag_home", by=side, side=f.owner, station=station, flag_piece=f.type)))



def _nearest_first(state: GameState, base: frozenset[str] | set[str]) -> list[str]:
    """Every station reachable from ``base`` by ordinary moves (the lines the game's pieces sail along, walls
    included), nearest first; stations at the same distance in board order. Used when both base squares are taken."""
    # the ordinary way of moving: the line kinds most pieces take one step along (Dover Patrol: sea, not air)
    ways = Counter(spec.along for p in state.game.pieces for spec in p.moves if spec.max_steps == 1)
    kinds = ways.most_common(1)[0][0] if ways else frozenset(ln.kind for ln in state.game.lines)
    nbrs = state.topo.neighbours(kinds)
    order = {s.id: i for i, s in enumerate(state.game.stations)}
    seen = set(base)
    ring = sorted(seen, key=order.__getitem__)
    out: list[str] = []
    while ring:
        nxt = {n for s in ring for n in nbrs.get(s, ()) if n not in seen}
        seen |= nxt
        ring = sorted(nxt, key=order.__getitem__)
        out += ring
    return out
