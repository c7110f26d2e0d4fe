"""The move recognizer: a pure state machine that turns settled board snapshots into one physical action at a time.

It compares each snapshot with the *expected board* (what the referee believes is on the table):
- in a turn: a move, an attack (either lift order), a change of mind, or a mismatch it cannot explain;
- after a ruling or a refused move: the fix-up the referee asked for, until the board matches again.
It never touches hardware or clocks, and never produces an action from a board it cannot explain.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from controller.sensing.base import Snapshot


@dataclass(frozen=True, slots=True)
class Occupant:
    """What the referee expects on a station: whose piece, which piece (opaque uid) and its RFID tag if known."""

    owner: str
    uid: int
    tag: str | None = None


ExpectedBoard = Mapping[str, Occupant]


@dataclass(frozen=True, slots=True)
class Difference:
    """One station that does not hold what the referee expects."""

    station: str
    expected: str | None  # owner expected there, None = empty
    found: str  # "empty" | "occupied" | "wrong piece"

    def to_json(self) -> dict[str, str | None]:
        return {"station": self.station, "expected": self.expected, "found": self.found}


# ---------------------------------------------------------------------- actions
@dataclass(frozen=True, slots=True)
class MoveAction:
    """A piece of the side to move went from ``frm`` to the empty station ``to``."""

    frm: str
    to: str


@dataclass(frozen=True, slots=True)
class AttackAction:
    """A piece of the side to move left ``frm`` and now stands on ``to``, whose enemy piece was lifted."""

    frm: str
    to: str


@dataclass(frozen=True, slots=True)
class Waiting:
    """The board is between two explainable states (pieces in hand, or a fix-up under way); nothing to judge yet."""

    lifted: tuple[str, ...]
    differences: tuple[Difference, ...] = ()


@dataclass(frozen=True, slots=True)
class Mismatch:
    """The board cannot be explained as one legal physical action: these stations differ."""

    differences: tuple[Difference, ...]


@dataclass(frozen=True, slots=True)
class FixupDone:
    """The board now matches what the referee expects."""


@dataclass(frozen=True, slots=True)
class Idle:
    """The board is back to the expected position (a change of mind)."""


Action = MoveAction | AttackAction | Waiting | Mismatch | FixupDone | Idle


@dataclass
class _Fixup:
    target: dict[str, Occupant]
    involved: frozenset[str] | None  # None: any station may differ meanwhile
    must_lift: frozenset[str]
    lifted: set[str] = field(default_factory=set)


class Recognizer:
    """Feed it snapshots; it says what happened. The session tells it the side to move and each new expected board."""

    def __init__(self, expected: ExpectedBoard, side: str, *, use_tags: bool = False) -> None:
        self.expected: dict[str, Occupant] = dict(expected)
        self.side = side
        self.use_tags = use_tags
        self._touched: set[str] = set()  # stations empty in the last snapshot
        self._swapped: set[str] = set()  # enemy stations re-occupied while a piece of the side to move was in hand
        self._fixup: _Fixup | None = None

    # ------------------------------------------------------------------ session -> recognizer
    def expect(self, target: ExpectedBoard, side: str, *, involved: frozenset[str] | None = None, must_lift: frozenset[str] = frozenset()) -> None:
        """Wait until the board shows ``target`` (after a ruling or a refused move), then play on with ``side`` to move.

        ``involved`` are the stations that may differ while the players fix the board (None: any station, as when a
        setup is being laid out or a game resumed); ``must_lift`` are stations where one piece replaces another, so
        they must be seen empty at least once.
        """
        target = dict(target)
        self._fixup = _Fixup(target, involved, must_lift)
        self.side = side
        self._touched.clear()
        self._swapped.clear()

    @property
    def fixing(self) -> bool:
        return self._fixup is not None

    def fixup_involved(self) -> frozenset[str] | None:
        """The stations the awaited fix-up may change (None: any); empty when no fix-up is awaited."""
        return frozenset() if self._fixup is None else self._fixup.involved

    def fixup_target(self) -> tuple[dict[str, Occupant], frozenset[str]] | None:
        """While a fix-up is awaited: the board it must reach, and the stations still to be emptied once on the way
        (where one piece replaces another, so occupancy alone cannot show it). None when no fix-up is awaited."""
        if self._fixup is None:
            return None
        return dict(self._fixup.target), frozenset(self._fixup.must_lift - self._fixup.lifted)

    # ------------------------------------------------------------------ snapshots in
    def feed(self, snap: Snapshot) -> Action:
        """The action this snapshot completes, or Waiting / Mismatch / Idle."""
        if self._fixup is not None:
            return self._feed_fixup(snap, self._fixup)
        return self._feed_turn(snap)

    def _diff(self, snap: Snapshot, board: Mapping[str, Occupant]) -> list[Difference]:
        out = []
        for s, occ in board.items():
            if s not in snap.occupied:
                out.append(Difference(s, occ.owner, "empty"))
            elif self.use_tags and occ.tag is not None and snap.tag(s) != occ.tag:
                out.append(Difference(s, occ.owner, "wrong piece"))
        for s in snap.occupied:
            if s not in board:
                out.append(Difference(s, None, "occupied"))
        out.sort(key=lambda d: d.station)
        return out

    def _feed_fixup(self, snap: Snapshot, fx: _Fixup) -> Action:
        for s in fx.must_lift:
            if s not in snap.occupied:
                fx.lifted.add(s)
        diff = self._diff(snap, fx.target)
        if not diff and fx.must_lift <= fx.lifted:
            self.expected = fx.target
            self._fixup = None
            self._touched.clear()
            self._swapped.clear()
            return FixupDone()
        stray = [] if fx.involved is None else [d for d in diff if d.station not in fx.involved]
        if stray:
            return Mismatch(tuple(diff))
        return Waiting(tuple(d.station for d in diff), tuple(diff))

    def _other(self, owner: str) -> bool:
        """A piece of another side, enemy or ally: lifting one and putting your own piece in its place is an
        attempted attack (the rules refuse an attack on an ally, so the referee says why instead of a mismatch)."""
        return owner != self.side

    def _feed_turn(self, snap: Snapshot) -> Action:
        exp = self.expected
        occ = snap.occupied
        lifted = [s for s in exp if s not in occ]
        added = [s for s in occ if s not in exp]
        wrong = [s for s in exp if s in occ and self.use_tags and exp[s].tag is not None and snap.tag(s) != exp[s].tag]
        own_lifted = [s for s in lifted if exp[s].owner == self.side]
        enemy_lifted = [s for s in lifted if self._other(exp[s].owner)]
        # Another side's station (an enemy's, or an ally's: an attack the rules will refuse) that was empty in the last
        # snapshot and is occupied again while a piece of the side to move is in hand now holds that piece: the
        # attack convention (either lift first).
        if own_lifted:
            for b in self._touched:
                if b in occ and self._other(exp[b].owner):
                    self._swapped.add(b)
        else:
            self._swapped.clear()
        self._touched = set(lifted)
        if not lifted and not added and not wrong:
            self._swapped.clear()
            return Idle()
        other_lifted = [s for s in lifted if s not in own_lifted and s not in enemy_lifted]
        if not other_lifted and len(own_lifted) <= 1 and len(enemy_lifted) <= 1:
            if len(own_lifted) == 1 and not enemy_lifted:
                a = own_lifted[0]
                mover_tag = exp[a].tag if self.use_tags else None
                if len(added) == 1 and not wrong:
                    b = added[0]
                    if mover_tag is None or snap.tag(b) == mover_tag:
                        return MoveAction(a, b)
                if not added:
                    candidates = sorted(self._swapped)
                    if mover_tag is not None:
                        # with tags the piece on the station says who it is: the mover, or the enemy put back
                        candidates = [b for b in candidates if snap.tag(b) == mover_tag]
                        wrong = [s for s in wrong if s not in candidates]
                    if len(candidates) == 1 and not wrong:
                        return AttackAction(a, candidates[0])
                    if not candidates and not wrong:
                        return Waiting((a,))
            elif not added and not wrong:
                return Waiting(tuple(lifted))
        return Mismatch(tuple(self._diff(snap, exp)))
