"""Named rule hooks: the few rules a game file cannot say as data, each a small class a game file names."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Any

from .say import Say, say

if TYPE_CHECKING:
    from .model import GameDef
    from .state import GameState, Piece, Ruling, _Pending


class Hook:
    """A rule that watches the game: it may forbid a move and may act after each ruling."""

    name = ""
    doc = ""

    def start(self, state: GameState) -> None:
        """Called once when play begins."""

    def forbid(self, state: GameState, frm: str, to: str) -> Say | None:
        """Why the move from ``frm`` to ``to`` is forbidden by this rule (a ``reason.*`` message object), else None."""
        return None

    def after(self, state: GameState, ruling: Ruling, pending: _Pending) -> None:
        """Called after each move is judged, before the turn passes; may reveal pieces, add notices, or put sides
        out of the game (``pending.out``)."""

    def annotate(self, state: GameState, station: str, piece: Piece) -> dict[str, Any]:
        """Extra fields for ``piece``'s entry in every view. Only facts anyone at the table can see (a flag riding
        on the piece), since the spectator gets them too."""
        return {}


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
        state.hook_data[self.name] = {}  # side -> (uid, squares of the run's range, run length, first move's ends)

    @staticmethod
    def span(state: GameState, frm: str, to: str) -> frozenset[str]:
        """The squares of the straight line from ``frm`` to ``to``, both ends included (ISF form); else the two ends."""
        if state.options.get("two_squares_scouts", False):
            for _kind, stations, pos in state.topo.on_lines[frm]:
                if to in stations:
                    i = stations.index(to)
                    return frozenset(stations[min(pos, i):max(pos, i) + 1])
        return frozenset((frm, to))

    def forbid(self, state: GameState, frm: str, to: str) -> Say | None:
        limit = state.options.get("two_squares")
        if limit is None:
            return None
        piece = state.board.get(frm)
        if piece is None:
            return None
        last = state.hook_data[self.name].get(piece.owner)
        if last and last[0] == piece.uid and last[2] >= limit and frm in last[1] and to in last[1]:
            a, b = last[3]
            code = "reason.two_squares" if len(last[1]) == 2 else "reason.two_squares_range"
            return say(code, count=last[2], station=frm, **{"from": a, "to": b})
        return None

    def after(self, state: GameState, ruling: Ruling, pending: _Pending) -> None:
        runs = state.hook_data[self.name]
        landed = state.board.get(ruling.to)
        if landed is None or landed.uid != ruling.mover_uid:
            runs[ruling.side] = None  # the piece did not go from one square to the other: no shuttle step
            return
        last = runs.get(ruling.side)
        if last and last[0] == ruling.mover_uid and ruling.frm in last[1] and ruling.to in last[1]:
            runs[ruling.side] = (ruling.mover_uid, last[1], last[2] + 1, last[3])
        else:
            runs[ruling.side] = (ruling.mover_uid, self.span(state, ruling.frm, ruling.to), 1, (ruling.frm, ruling.to))


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
        # SIDE -> None, or that side's chase: (uids its last move threatened, did the reply evade, its last move as
        # (uid, frm, to), positions of the chase). Values are immutable, so copies of the state may share them.
        state.hook_data[self.name] = {}

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
        if chase is None or not chase[1]:
            return None
        board = state.board
        if not any(n != frm and n in board and state.enemies(piece.owner, board[n].owner) for n in self.adjacent(state)[to]):
            return None
        if chase[2][0] == piece.uid and chase[2][1:] == (to, frm):
            return None
        if self.position(board, frm, to) in chase[3]:
            return say("reason.more_squares", station=frm, **{"from": frm, "to": to})
        return None

    def after(self, state: GameState, ruling: Ruling, pending: _Pending) -> None:
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
            evaded = not chase[1] and not pending.removed and ruling.mover_uid in chase[0] and at != ruling.frm
            chases[chaser] = (chase[0], True, chase[2], chase[3] | {here}) if evaded else None
        threatened = frozenset(
            p.uid for n in (self.adjacent(state)[at] if at is not None else ()) if (p := board.get(n)) is not None and state.enemies(side, p.owner)
        )
        mine = chases.get(side)
        last = (ruling.mover_uid, ruling.frm, ruling.to)
        if not threatened:
            chases[side] = None
        elif mine is not None and mine[1] and not pending.removed:
            chases[side] = (threatened, False, last, mine[3] | {here})
        elif ruling.kind == "move":
            chases[side] = (threatened, False, last, frozenset({self.position(board, ruling.to, ruling.frm), here}))
        else:
            chases[side] = (threatened, False, last, frozenset({here}))


@lru_cache(maxsize=64)
def _line_kinds(game: GameDef) -> frozenset[str]:
    return frozenset(line.kind for line in game.lines)


class RevealFlagOnCommanderLoss(Hook):
    """Luzhanqi: when a side loses its 司令 (commander), the referee shows everyone where that side's flag stands."""

    name = "reveal_flag_on_commander_loss"
    commander = "commander"
    flag = "flag"
    notice = "notice.commander_lost_flag_shown"

    def after(self, state: GameState, ruling: Ruling, pending: _Pending) -> None:
        from .state import ALL, Reveal

        for removal in ruling.removed:
            if removal.type != self.commander:
                continue
            if not any(r.uid == removal.uid and ALL in r.to for r in pending.reveals):
                # showing the flag tells everyone the piece lost there was the commander: say so openly
                pending.reveals.append(Reveal(removal.station, removal.uid, removal.owner, removal.type, (ALL,)))
            for station, piece in state.board.items():
                if piece.owner == removal.owner and piece.type == self.flag and not piece.public:
                    piece.public = True
                    pending.reveals.append(Reveal(station, piece.uid, piece.owner, piece.type, (ALL,)))
                    pending.notices.append((ALL, say(self.notice, side=removal.owner, piece=self.commander, station=station,
                                                          flag_piece=self.flag)))


# Game hook modules subclass Hook (defined above), so they are imported here, after it; import them through this module.
from .hooks_dover import CarryFlag  # noqa: E402
from .hooks_navy import AntiSubDetects, RevealFlagOnFlagshipLoss, WolfPack  # noqa: E402

HOOKS: dict[str, Hook] = {h.name: h for h in (
    TwoSquares(), MoreSquares(), RevealFlagOnCommanderLoss(), CarryFlag(), WolfPack(), AntiSubDetects(), RevealFlagOnFlagshipLoss(),
)}

from .hooks_sanjunqi import SANJUNQI_REACTIONS  # noqa: E402

HOOKS[SANJUNQI_REACTIONS.name] = SANJUNQI_REACTIONS
