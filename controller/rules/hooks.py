"""Named rule hooks: the few rules a game file cannot say as data, each a small class a game file names."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .state import GameState, Piece, Ruling, _Pending


class Hook:
    """A rule that watches the game: it may forbid a move and may act after each ruling."""

    name = ""
    doc = ""

    def start(self, state: GameState) -> None:
        """Called once when play begins."""

    def forbid(self, state: GameState, frm: str, to: str) -> str | None:
        """A sentence if the move from ``frm`` to ``to`` is forbidden by this rule, else None."""
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

    N is the option ``two_squares`` (5 in ISF rules, 3 in some clubs); ``None`` turns the rule off.
    """

    name = "two_squares"

    def start(self, state: GameState) -> None:
        state.hook_data[self.name] = {}  # side -> (uid, frozenset of the two squares, run length)

    def forbid(self, state: GameState, frm: str, to: str) -> str | None:
        limit = state.options.get("two_squares")
        if limit is None:
            return None
        piece = state.board.get(frm)
        if piece is None:
            return None
        last = state.hook_data[self.name].get(piece.owner)
        if last and last[0] == piece.uid and last[1] == frozenset((frm, to)) and last[2] >= limit:
            return f"two-squares rule: this piece has already moved {limit} times in a row between {frm} and {to}"
        return None

    def after(self, state: GameState, ruling: Ruling, pending: _Pending) -> None:
        runs = state.hook_data[self.name]
        pair = frozenset((ruling.frm, ruling.to))
        last = runs.get(ruling.side)
        if last and last[0] == ruling.mover_uid and last[1] == pair:
            runs[ruling.side] = (ruling.mover_uid, pair, last[2] + 1)
        else:
            runs[ruling.side] = (ruling.mover_uid, pair, 1)


class RevealFlagOnCommanderLoss(Hook):
    """Luzhanqi: when a side loses its 司令 (commander), the referee shows everyone where that side's flag stands."""

    name = "reveal_flag_on_commander_loss"
    commander = "commander"
    flag = "flag"

    def after(self, state: GameState, ruling: Ruling, pending: _Pending) -> None:
        from .state import ALL, Reveal

        for removal in ruling.removed:
            if removal.type != self.commander:
                continue
            for station, piece in state.board.items():
                if piece.owner == removal.owner and piece.type == self.flag and not piece.public:
                    piece.public = True
                    pending.reveals.append(Reveal(station, piece.uid, piece.owner, piece.type, (ALL,)))
                    pending.notices.append((ALL, f"{removal.owner}'s commander is lost: its flag stands on {station}"))


# Game hook modules subclass Hook (defined above), so they are imported here, after it; import them through this module.
from .hooks_dover import CarryFlag  # noqa: E402
from .hooks_navy import AntiSubDetects, RevealFlagOnFlagshipLoss, WolfPack  # noqa: E402

HOOKS: dict[str, Hook] = {h.name: h for h in (
    TwoSquares(), RevealFlagOnCommanderLoss(), CarryFlag(), WolfPack(), AntiSubDetects(), RevealFlagOnFlagshipLoss(),
)}
