"""The immutable description of a game, as read from its game file: board, pieces, clash table, setup, win rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from .errors import OptionError

OUTCOMES = ("attacker", "defender", "both", "bounce", "illegal")
REVEALS = ("open", "silent")
PUSHES = ("attacker", "defender")  # which piece of a clash a rule may push one step away
TURN_ORDERS = ("counterclockwise", "clockwise")  # sides as listed (counter-clockwise round the table), or reversed after the first
NO_MOVES = ("lose", "pass", "pass_while_ally")  # what a side with no legal move on its turn does
OUT_PIECES = ("obstacles", "removed")  # what becomes of the pieces of a side that is out


@dataclass(frozen=True, slots=True)
class Condition:
    """A test on house-rule options: every ``require`` option must equal its value, every ``forbid`` must not."""

    require: tuple[tuple[str, Any], ...] = ()
    forbid: tuple[tuple[str, Any], ...] = ()

    def holds(self, options: Mapping[str, Any]) -> bool:
        return all(options[k] == v for k, v in self.require) and not any(options[k] == v for k, v in self.forbid)


ALWAYS = Condition()


@dataclass(frozen=True, slots=True)
class StationKind:
    """What a kind of station does: can it be entered, does it shelter its occupant, may its occupant move on."""

    id: str
    passable: bool = True
    shelter: bool = False
    shelter_except_attackers: frozenset[str] = frozenset()
    shelter_except_defenders: frozenset[str] = frozenset()
    frozen: bool = False
    doc: str = ""
    closed_to: frozenset[str] = frozenset()  # pieces that may neither enter nor cross a station of this kind


@dataclass(frozen=True, slots=True)
class Station:
    """A point of the board where one piece can stand."""

    id: str
    x: float
    y: float
    kind: str
    label: str = ""


@dataclass(frozen=True, slots=True)
class Line:
    """An ordered run of stations joined by one kind of line (road, rail, sea route...)."""

    kind: str
    stations: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class MoveSpec:
    """One way a piece may move: along which line kinds, how far, straight or turning, and what it reveals."""

    along: frozenset[str]
    max_steps: int | None = 1  # None: any distance
    exact: bool = False  # True: exactly max_steps, no fewer
    turns: bool = False  # True: may turn at any station of the network of these line kinds
    attack: bool = True  # may this move end on an enemy piece
    reveal: bool = False  # the mover is shown to everyone when it moves this way
    when: Condition = ALWAYS
    over: bool = False  # True: flies over occupied stations (aircraft); it still ends on an empty or enemy station
    attack_only: bool = False  # True: the move must end on an enemy piece (a bombardment)
    returns: bool = False  # True: strike and return - after the clash the mover goes back to its own station
    spared: bool = False  # True: the target cannot hit back (defender -> bounce, both -> attacker)


@dataclass(frozen=True, slots=True)
class PieceType:
    """A kind of piece in a game: its names, how many each side has, its rank and how it moves."""

    id: str
    name: str
    zh: str  # as the rule source writes it (most sources: Traditional)
    count: int
    rank: int | None
    moves: tuple[MoveSpec, ...]
    can_attack: bool
    doc: str = ""
    counts: tuple[tuple[Condition, int], ...] = ()  # option-dependent counts: the first whose condition holds wins
    zh_hans: str = ""  # the name in Simplified Chinese (the game file's ``zh_hans``; ``zh`` when the file has none)
    short: str = ""  # a short label for a piece face on screen: the rank mark printed on the piece (10, S, B) or an abbreviation

    @property
    def movable(self) -> bool:
        return bool(self.moves)

    def count_for(self, options: Mapping[str, Any]) -> int:
        """How many of this piece each side has under ``options`` (0: the piece is not in the game)."""
        for when, n in self.counts:
            if when.holds(options):
                return n
        return self.count


@dataclass(frozen=True, slots=True)
class ClashRule:
    """A clash exception: which attackers against which defenders give which outcome (``None`` = any)."""

    attackers: frozenset[str] | None
    defenders: frozenset[str] | None
    outcome: str
    when: Condition = ALWAYS
    doc: str = ""
    push: str | None = None  # "attacker" / "defender": that piece moves one step away (an evasion, a repulse)
    show: bool = False  # the defender is shown to the attacking side only (reconnaissance)

    def matches(self, attacker: str, defender: str, options: Mapping[str, Any]) -> bool:
        return (
            (self.attackers is None or attacker in self.attackers)
            and (self.defenders is None or defender in self.defenders)
            and self.when.holds(options)
        )


@dataclass(frozen=True, slots=True)
class ClashTable:
    """Explicit cells, then exceptions in order, then rank order (lower rank number wins, equal ranks both go)."""

    cells: Mapping[tuple[str, str], str]
    rules: tuple[ClashRule, ...]
    by_rank: bool = True
    fights_as: tuple[FightsAs, ...] = ()  # proxies, applied before the cells, rules and ranks


@dataclass(frozen=True, slots=True)
class FightsAs:
    """A proxy rank: ``piece`` fights as ``as_`` against ``against`` (None = any piece), on stations of kinds ``at``
    (None: anywhere) - a landed battleship fights as a division commander against officers. It applies whether the
    piece attacks or defends; the clash matrix (where no station is known) shows it as if the kind matched."""

    piece: str
    against: frozenset[str] | None
    as_: str
    at: frozenset[str] | None = None
    when: Condition = ALWAYS


@dataclass(frozen=True, slots=True)
class SetupConstraint:
    """A deployment rule: which pieces may (or may not) stand where, or which stations stay empty."""

    pieces: frozenset[str] | None  # None: the constraint is about stations, not pieces
    only_zone: str | None = None
    not_zone: str | None = None
    only_kinds: frozenset[str] | None = None
    empty_kinds: frozenset[str] | None = None
    message: str = ""
    when: Condition = ALWAYS


@dataclass(frozen=True, slots=True)
class SetupRules:
    """Where each side deploys and what its deployment must respect."""

    deploy_zone: str
    zones: Mapping[str, Mapping[str, frozenset[str]]]  # zone -> side -> stations
    constraints: tuple[SetupConstraint, ...]


@dataclass(frozen=True, slots=True)
class WinRules:
    """How a game ends: which lost pieces lose it, what having no move means, and when it is drawn."""

    capture: frozenset[str]
    no_moves: str = "lose"  # lose | pass | pass_while_ally
    both_stuck: str = "draw"


@dataclass(frozen=True, slots=True)
class OptionDef:
    """A named house-rule option with its default, allowed values and the reason for the default."""

    id: str
    default: Any
    choices: tuple[Any, ...] | None
    doc: str


@dataclass(frozen=True, eq=False)
class GameDef:
    """A whole game as its file describes it."""

    id: str
    name: str
    zh: str  # as the rule source writes it (most sources: Traditional)
    zh_hans: str  # the name in Simplified Chinese (the game file's ``zh_hans``; ``zh`` when the file has none)
    source: str
    doc: str
    sides: tuple[str, ...]
    alliances: tuple[frozenset[str], ...]
    station_kinds: Mapping[str, StationKind]
    stations: tuple[Station, ...]
    lines: tuple[Line, ...]
    pieces: tuple[PieceType, ...]
    clash: ClashTable
    setup: SetupRules
    win: WinRules
    options: Mapping[str, OptionDef]
    hooks: tuple[str, ...]
    decisions: tuple[Mapping[str, str], ...] = ()
    file: str = ""
    text: str = field(default="", repr=False)  # the game file's text as read: journaled with every game played
    piece_by_id: Mapping[str, PieceType] = field(default_factory=dict)
    station_by_id: Mapping[str, Station] = field(default_factory=dict)
    station_index: Mapping[str, int] = field(default_factory=dict)  # station id -> its place in the game file
    _armies: dict[tuple[int, ...], GameDef] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "piece_by_id", {p.id: p for p in self.pieces})
        object.__setattr__(self, "station_by_id", {s.id: s for s in self.stations})
        object.__setattr__(self, "station_index", {s.id: i for i, s in enumerate(self.stations)})

    @property
    def station_ids(self) -> tuple[str, ...]:
        return tuple(self.station_index)  # in the game file's order (a view walks these twice a move per game)

    def resolve_options(self, overrides: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The full option set: every default, with ``overrides`` checked and applied."""
        chosen = {k: o.default for k, o in self.options.items()}
        for k, v in (overrides or {}).items():
            if k not in self.options:
                raise OptionError(f"{self.id} has no option {k!r}; options are: {', '.join(sorted(self.options))}")
            o = self.options[k]
            if o.choices is not None and v not in o.choices:
                raise OptionError(f"option {k!r} of {self.id} takes one of {list(o.choices)}, not {v!r}")
            if o.choices is None and o.default is not None and v is not None and type(v) is not type(o.default):
                raise OptionError(f"option {k!r} of {self.id} takes a {type(o.default).__name__}, not {v!r}")
            chosen[k] = v
        return chosen

    def for_options(self, options: Mapping[str, Any]) -> GameDef:
        """The game as played under ``options`` (fully resolved): pieces with option-dependent ``counts`` get their
        count for these options, and pieces whose count is 0 are left out. Without such pieces, the game itself."""
        if not any(p.counts for p in self.pieces):
            return self
        army = tuple(p.count_for(options) for p in self.pieces)
        if army not in self._armies:
            pieces = tuple(replace(p, count=n, counts=()) for p, n in zip(self.pieces, army, strict=True) if n > 0)
            self._armies[army] = replace(self, pieces=pieces, piece_by_id={}, _armies={})
        return self._armies[army]

    def ally(self, a: str, b: str) -> bool:
        return any(a in group and b in group for group in self.alliances)
