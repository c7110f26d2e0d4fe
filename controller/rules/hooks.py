"""Named rule hooks: the few rules a game file cannot say as data, each a small class a game file names.

Every hook, built in or not, is registered through the ``facedown.hooks`` entry-point group: a name (what a game
file's ``hooks:`` list says) pointing at a ``Hook`` instance or subclass. FaceDown's own are declared in its
pyproject.toml; a hook from another installed distribution registers the same way, so adding one edits no FaceDown
file (docs/game-format.md, "Writing a hook"). ``HOOKS`` maps names to hooks and loads each one the first time a
game asks for it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple

from ..entrypoints import EntryPoint, entry_points
from .base import ALL, Pending, Piece, Reveal
from .errors import RulesError
from .say import Say, say

if TYPE_CHECKING:
    from .model import GameDef, MoveSpec
    from .state import GameState, Ruling

#: The entry-point group hooks register in.
GROUP = "facedown.hooks"


class Hook:
    """A rule that watches the game: it may forbid a move, may stop a moving piece on its way, and may act after
    each ruling. Subclasses override what they need; every method here does nothing."""

    name = ""
    doc = ""

    def start(self, state: GameState) -> None:
        """Called once when play begins."""

    def forbid(self, state: GameState, frm: str, to: str) -> Say | None:
        """Why the move from ``frm`` to ``to`` is forbidden by this rule (a ``reason.*`` message object), else None."""
        return None

    def intercepts(self, state: GameState, frm: str, to: str, mover: Piece, spec: MoveSpec) -> bool:
        """True if this rule stops ``mover`` on its way from ``frm`` to ``to`` before the clash there (an aircraft
        shot down by the guns it flies over strikes nothing). Asked before every clash."""
        return False

    def after(self, state: GameState, ruling: Ruling, pending: Pending) -> None:
        """Called after each move is judged, before the turn passes; may reveal pieces, add notices, or put sides
        out of the game (``pending.out``)."""

    def annotate(self, state: GameState, station: str, piece: Piece) -> dict[str, Any]:
        """Extra fields for ``piece``'s entry in every view. Only facts anyone at the table can see (a flag riding
        on the piece), since the spectator gets them too."""
        return {}


class Run(NamedTuple):
    """One side's run of back-and-forth moves (two-squares rule)."""

    uid: int  # the piece
    squares: frozenset[str]  # the run's range: the first move's two ends, or every square it crossed (ISF form)
    length: int  # moves in the run so far
    ends: tuple[str, str]  # the first move's from and to, for the message


class TwoSquares(Hook):
    """Stratego's two-squares rule: a piece may not go back and forth between the same two squares more than N moves in a row.

    N is the option ``two_squares`` (5 in ISF rules, 3 in some clubs); ``None`` turns the rule off. A run is the
    side's consecutive moves of one piece that really went from square to square (an attack that bounces, or that
    the attacker wins without advancing, leaves the piece where it was: it ends the run instead of extending it).
    With ``two_squares_scouts`` (ISF 10.2), the run's first move fixes its range, every square the piece crossed
    from start to end; later moves with both ends inside that range continue the run, so a scout cannot dodge the
    rule by stopping one square short. Off, a run is only the exact same two squares.
    """

    name = "two_squares"

    def start(self, state: GameState) -> None:
        state.hook_data[self.name] = {}  # side -> its Run, or None

    @staticmethod
    def span(state: GameState, frm: str, to: str) -> frozenset[str]:
        """The squares of the straight line from ``frm`` to ``to``, both ends included (ISF form); else the two ends."""
        if state.options.get("two_squares_scouts", False):
            for _kind, stations, pos in state.topo.on_lines[frm]:
                if to in stations:
                    i = stations.index(to)
                    return frozenset(stations[min(pos, i):max(pos, i) + 1])
        return frozenset((frm, to))

    @classmethod
    def next_run(cls, state: GameState, run: Run | None, uid: int, frm: str, to: str, went: bool) -> Run | None:
        """A side's run after its piece ``uid`` moved ``frm`` -> ``to``; ``went`` says whether it really stands on
        ``to`` now (a bounce, or an attack won without advancing, ends the run). The rule keeps the count with this,
        and so does a bot for its own seat (a guessed world has no history)."""
        if not went:
            return None
        if run is not None and run.uid == uid and frm in run.squares and to in run.squares:
            return run._replace(length=run.length + 1)
        return Run(uid, cls.span(state, frm, to), 1, (frm, to))

    def forbid(self, state: GameState, frm: str, to: str) -> Say | None:
        limit = state.options.get("two_squares")
        if limit is None:
            return None
        piece = state.board.get(frm)
        if piece is None:
            return None
        run: Run | None = state.hook_data[self.name].get(piece.owner)
        if run and run.uid == piece.uid and run.length >= limit and frm in run.squares and to in run.squares:
            a, b = run.ends
            code = "reason.two_squares" if len(run.squares) == 2 else "reason.two_squares_range"
            return say(code, count=run.length, station=frm, **{"from": a, "to": b})
        return None

    def after(self, state: GameState, ruling: Ruling, pending: Pending) -> None:
        runs = state.hook_data[self.name]
        landed = state.board.get(ruling.to)
        went = landed is not None and landed.uid == ruling.mover_uid
        runs[ruling.side] = self.next_run(state, runs.get(ruling.side), ruling.mover_uid, ruling.frm, ruling.to, went)


class MoreSquares(Hook):
    """ISF more-squares rule (continuous chase): a player who keeps threatening pieces that keep evading may not make
    a chasing move that brings back a position the chase has already seen.

    Option ``more_squares`` (true: on). Words as in ISF Game Rules art. 11: to *threaten* is to move a piece next
    to (before, behind or beside) an enemy piece; to *evade* is to move a threatened piece away in the very next
    move; a *continuous chase* is one player threatening with every move while the other evades every time; it
    starts with the first threatening move and ends with the first move that does not threaten or does not evade.
    While the opponent has just evaded, a move of the chaser that threatens again is a chasing move: it may not
    leave the pieces standing as they already stood during the chase (counting the position just before its first
    move, with either side to move). Exception (11.2): a chasing move straight back to the square the chasing piece
    left on its side's previous move is always allowed (the two-squares rule limits it). A position is which kind
    of piece of which side stands on which square.
    """

    name = "more_squares"

    def start(self, state: GameState) -> None:
        # SIDE -> None, or that side's running chase (a Chase). Each move adds at most one position to a chase's set
        # in place (the bookkeeping is O(1) per move however long the chase); copies of the state copy the sets.
        state.hook_data[self.name] = Chases()

    @staticmethod
    def adjacent(state: GameState) -> dict[str, tuple[str, ...]]:
        """Station -> the stations next to it along any line of the board."""
        return state.topo.neighbours(_line_kinds(state.game))

    @staticmethod
    def position(board: dict[str, Piece], frm: str | None = None, to: str | None = None) -> frozenset[tuple[str, str, str]]:
        """The board as (station, owner, piece kind) triples, with the piece on ``frm`` moved to ``to`` if given."""
        return frozenset((to if station == frm else station, p.owner, p.type) for station, p in board.items())

    def forbid(self, state: GameState, frm: str, to: str) -> Say | None:
        if not state.options.get("more_squares", False):
            return None
        piece = state.board.get(frm)
        if piece is None or to in state.board:
            return None
        chase = state.hook_data[self.name].get(piece.owner)
        if chase is None or not chase.evaded:
            return None
        board = state.board
        if not any(n != frm and n in board and state.enemies(piece.owner, board[n].owner) for n in self.adjacent(state)[to]):
            return None
        if chase.last[0] == piece.uid and chase.last[1:] == (to, frm):
            return None
        if self.position(board, frm, to) in chase.positions:
            return say("reason.more_squares", station=frm, **{"from": frm, "to": to})
        return None

    def after(self, state: GameState, ruling: Ruling, pending: Pending) -> None:
        if not state.options.get("more_squares", False):
            return
        chases = state.hook_data[self.name]
        board = state.board
        here = self.position(board)
        side = ruling.side
        at = next((s for s in (ruling.to, ruling.frm) if (p := board.get(s)) is not None and p.uid == ruling.mover_uid), None)
        for chaser, chase in list(chases.items()):
            if chaser == side or chase is None:
                continue
            if not chase.evaded and not pending.removed and ruling.mover_uid in chase.threatened and at != ruling.frm:
                chase.evaded = True
                chase.positions.add(here)
            else:
                chases[chaser] = None
        threatened = frozenset(
            p.uid for n in (self.adjacent(state)[at] if at is not None else ()) if (p := board.get(n)) is not None and state.enemies(side, p.owner)
        )
        mine: Chase | None = chases.get(side)
        last = (ruling.mover_uid, ruling.frm, ruling.to)
        if not threatened:
            chases[side] = None
        elif mine is not None and mine.evaded and not pending.removed:
            mine.threatened, mine.evaded, mine.last = threatened, False, last
            mine.positions.add(here)
        elif ruling.kind == "move":
            chases[side] = Chase(threatened, False, last, {self.position(board, ruling.to, ruling.frm), here})
        else:
            chases[side] = Chase(threatened, False, last, {here})


class Chase:
    """One side's continuous chase (more-squares rule): ``threatened``, the enemy uids its last move threatened;
    ``evaded``, did the opponent's reply evade; ``last``, its last move as (uid, frm, to); ``positions``, every
    position the chase has had. Changed in place move by move (O(1) per move); ``copy()`` for a copy of the state."""

    __slots__ = ("threatened", "evaded", "last", "positions")

    def __init__(self, threatened: frozenset[int], evaded: bool, last: tuple[int, str, str],
                 positions: set[frozenset[tuple[str, str, str]]]) -> None:
        self.threatened, self.evaded, self.last, self.positions = threatened, evaded, last, positions

    def copy(self) -> Chase:
        return Chase(self.threatened, self.evaded, self.last, set(self.positions))


class Chases(dict):
    """SIDE -> Chase or None; ``copy()`` (which GameState.copy calls) copies each chase, so copies share nothing mutable."""

    def copy(self) -> Chases:
        return Chases({side: None if c is None else c.copy() for side, c in self.items()})


@lru_cache(maxsize=64)
def _line_kinds(game: GameDef) -> frozenset[str]:
    return frozenset(line.kind for line in game.lines)


class RevealFlagOnCommanderLoss(Hook):
    """Luzhanqi: when a side loses its 司令 (commander), the referee shows everyone where that side's flag stands."""

    name = "reveal_flag_on_commander_loss"
    commander = "commander"
    flag = "flag"
    notice = "notice.commander_lost_flag_shown"

    def after(self, state: GameState, ruling: Ruling, pending: Pending) -> None:
        for removal in ruling.removed:
            if removal.type != self.commander:
                continue
            if not any(r.uid == removal.uid and ALL in r.to for r in pending.reveals):
                # showing the flag tells everyone the piece lost there was the commander: say so openly
                pending.reveals.append(Reveal(removal.station, removal.uid, removal.owner, removal.type, (ALL,)))
            for station, piece in state.board.items():
                if piece.owner == removal.owner and piece.type == self.flag and not piece.public:
                    piece = state.own(station)
                    piece.public = True
                    pending.reveals.append(Reveal(station, piece.uid, piece.owner, piece.type, (ALL,)))
                    pending.notices.append((ALL, say(self.notice, side=removal.owner, piece=self.commander, station=station,
                                                          flag_piece=self.flag)))


class Registry(Mapping[str, Hook]):
    """Hook name -> hook, from the ``facedown.hooks`` entry points of every installed distribution. Names are read
    once; a hook's module is imported the first time its name is looked up, so a broken plugin only stops the games
    that name it, with a message that says which plugin it is."""

    def __init__(self, group: str = GROUP) -> None:
        self.group = group
        self._loaded: dict[str, Hook] = {}

    @property
    def entry_points(self) -> dict[str, EntryPoint]:
        return _entry_points(self.group)

    def origin(self, name: str) -> str:
        """Which distribution registered ``name``, and where its hook lives (``facedown: controller.rules...``)."""
        ep = self.entry_points[name]
        return f"{ep.dist.name if ep.dist else '?'}: {ep.value}"

    def __getitem__(self, name: str) -> Hook:
        if name not in self._loaded:
            ep = self.entry_points[name]  # KeyError for an unknown name, as a mapping should
            try:
                obj = ep.load()
            except Exception as exc:  # a plugin's import error, whatever it is, named with the plugin
                raise RulesError(f"rule hook {name!r} ({self.origin(name)}) cannot be loaded: {type(exc).__name__}: {exc}") from exc
            hook = obj() if isinstance(obj, type) and issubclass(obj, Hook) else obj
            if not isinstance(hook, Hook):
                raise RulesError(f"rule hook {name!r} ({self.origin(name)}) is not a Hook (a {type(obj).__name__})")
            if hook.name != name:
                raise RulesError(f"rule hook {name!r} ({self.origin(name)}) calls itself {hook.name!r}; the two names must match")
            self._loaded[name] = hook
        return self._loaded[name]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self.entry_points))

    def __len__(self) -> int:
        return len(self.entry_points)

    def refresh(self) -> None:
        """Read the entry points again (after a distribution was installed in this process)."""
        _entry_points.cache_clear()
        self._loaded.clear()


@lru_cache(maxsize=8)
def _entry_points(group: str) -> dict[str, EntryPoint]:
    found: dict[str, EntryPoint] = {}
    for ep in entry_points(group):
        other = found.get(ep.name)
        if other is not None and other.value != ep.value:
            mine = ep.dist.name if ep.dist else "?"
            theirs = other.dist.name if other.dist else "?"
            raise RulesError(f"rule hook {ep.name!r} is registered twice: by {theirs} ({other.value}) and by {mine} ({ep.value})")
        found[ep.name] = ep
    return found


HOOKS = Registry()
