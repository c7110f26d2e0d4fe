"""Rule hooks of Navy chess (海軍棋, Taiwan edition navy_tw): the rules its game file cannot say as data.

Each hook is general (its pieces and numbers are class attributes, its switches are house-rule options). They
subclass ``hooks.Hook`` and are registered as ``facedown.hooks`` entry points (pyproject.toml).

- ``wolf_pack``: three missile boats or torpedo boats next to an enemy aircraft carrier reveal together and sink it
  (狼群戰術), checked by the referee after every move.
- ``anti_sub_detects``: a submarine that meets an anti-submarine plane must be shown (亮牌); so must the flagship,
  as the seed's table says, unless the option turns that off.
- ``reveal_flag_on_flagship_loss``: losing the flagship is a "small loss" (小輸): the flag is turned face-up.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .base import ALL, Pending, Piece, Removal, Reveal
from .hooks import Hook, RevealFlagOnCommanderLoss
from .say import say

if TYPE_CHECKING:
    from .state import GameState, Ruling


def _show(state: GameState, station: str, pending: Pending) -> None:
    """Make the piece on ``station`` public, once, with a reveal to everyone in the ruling."""
    piece = state.board[station]
    if not piece.public:
        piece = state.own(station)
        piece.public = True
        pending.reveals.append(Reveal(station, piece.uid, piece.owner, piece.type, (ALL,)))


class WolfPack(Hook):
    """狼群戰術: after every move, an aircraft carrier with ``size`` enemy hunters (missile boats, torpedo boats) of
    one side on the stations next to it is sunk; the hunters are shown to everyone together, and so is the carrier.

    Option ``wolf_pack``: ``mixed`` (any mix of the hunters), ``same_kind`` (three of one kind), ``off``. A carrier
    in a shelter (island, headquarters) cannot be surrounded. The referee's fix-up tells the players to take the
    carrier off its station.
    """

    name = "wolf_pack"
    target = "carrier"
    hunters = ("missile_boat", "torpedo_boat")
    size = 3

    def after(self, state: GameState, ruling: Ruling, pending: Pending) -> None:
        mode = state.options.get("wolf_pack", "mixed")
        if mode == "off":
            return
        kinds = frozenset(line.kind for line in state.game.lines)
        nbrs = state.topo.neighbours(kinds)
        for station, carrier in sorted(state.board.items()):
            if carrier.type != self.target or state.board.get(station) is not carrier:
                continue
            kind = state.topo.kind_of[station]
            if kind.shelter and carrier.type not in kind.shelter_except_defenders:
                continue
            packs: dict[tuple[str, str], list[str]] = {}
            for n in nbrs[station]:
                p = state.board.get(n)
                if p is not None and p.type in self.hunters and state.enemies(p.owner, carrier.owner):
                    packs.setdefault((p.owner, p.type if mode == "same_kind" else "*"), []).append(n)
            full = [(key, where) for key, where in packs.items() if len(where) >= self.size]
            if not full:
                continue
            # the side that just moved hunts first; then the game's side order
            full.sort(key=lambda kw: (kw[0][0] != ruling.side, state.game.sides.index(kw[0][0]), kw[0][1]))
            (hunter_side, _), where = full[0]
            for n in sorted(where):
                _show(state, n, pending)
            _show(state, station, pending)
            pending.removed.append(Removal(station, carrier.uid, carrier.owner, carrier.type))
            del state.board[station]
            state.quiet_plies = 0
            pending.notices.append((ALL, say("notice.wolf_pack", by=hunter_side, stations=sorted(where), owner=carrier.owner,
                                             piece=self.target, station=station)))


class AntiSubDetects(Hook):
    """反潛機: a piece of ``spotted`` that meets an enemy anti-submarine plane must be shown to everyone.

    "Meets" is a clash between the two (either attacking), and with option ``anti_sub_detects: adjacent`` also
    standing next to each other after a move. The flagship is spotted too unless ``anti_sub_reveals_flagship`` is
    false (the seed's table says it of the flagship; its prose does not).
    """

    name = "anti_sub_detects"
    spotter = "anti_sub"
    spotted = ("submarine",)
    spotted_if_option = (("flagship", "anti_sub_reveals_flagship"),)

    def _targets(self, state: GameState) -> set[str]:
        out = set(self.spotted)
        out.update(p for p, opt in self.spotted_if_option if state.options.get(opt, True))
        return out

    def after(self, state: GameState, ruling: Ruling, pending: Pending) -> None:
        targets = self._targets(state)
        found: list[tuple[str, Piece]] = []
        if ruling.kind == "attack":
            pair = {ruling.mover_type, ruling.defender_type}
            if self.spotter in pair and pair & targets:
                spotted_uid = ruling.defender_uid if ruling.defender_type in targets else ruling.mover_uid
                found += [(s, p) for s, p in state.board.items() if p.uid == spotted_uid]
        if state.options.get("anti_sub_detects", "clash") == "adjacent":
            nbrs = state.topo.neighbours(frozenset(line.kind for line in state.game.lines))
            for s, p in state.board.items():
                if p.type in targets and not p.public and any(
                    (q := state.board.get(n)) is not None and q.type == self.spotter and state.enemies(q.owner, p.owner)
                    for n in nbrs[s]
                ):
                    found.append((s, p))
        for s, p in sorted(found, key=lambda sp: sp[0]):
            if state.board[s].public:  # found twice (the clash and standing next to it): shown once
                continue
            _show(state, s, pending)
            pending.notices.append((ALL, say("notice.anti_sub_found", owner=p.owner, piece=p.type, station=s)))


class RevealFlagOnFlagshipLoss(RevealFlagOnCommanderLoss):
    """旗艦被打倒就算「小輸」: a side that loses its flagship suffers a small loss, and its flag is turned face-up."""

    name = "reveal_flag_on_flagship_loss"
    commander = "flagship"
    flag = "flag"
    notice = "notice.flagship_sunk_flag_shown"  # said in this game's words: a small loss (小輸)
