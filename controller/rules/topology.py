"""The board as a graph: which stations each line kind joins, precomputed once per game for fast move generation."""

from __future__ import annotations

from functools import lru_cache

from .model import GameDef


class Topology:
    """Neighbours and straight runs of a game's board, by line kind."""

    def __init__(self, game: GameDef) -> None:
        self.game = game
        self.kind_of = {s.id: game.station_kinds[s.kind] for s in game.stations}
        self.passable = {sid: k.passable for sid, k in self.kind_of.items()}
        # station -> list of (line kind, stations of the line, position of the station in it)
        self.on_lines: dict[str, list[tuple[str, tuple[str, ...], int]]] = {s.id: [] for s in game.stations}
        for line in game.lines:
            for pos, sid in enumerate(line.stations):
                self.on_lines[sid].append((line.kind, line.stations, pos))
        self._neighbours: dict[frozenset[str], dict[str, tuple[str, ...]]] = {}
        #: the line kinds of the board: ``neighbours(all_kinds)`` joins stations one step apart along any line
        self.all_kinds = frozenset(line.kind for line in game.lines)
        self._rays: dict[frozenset[str], dict[str, tuple[tuple[str, ...], ...]]] = {}

    def neighbours(self, kinds: frozenset[str]) -> dict[str, tuple[str, ...]]:
        """Station -> stations one step away along a line of one of ``kinds``."""
        table = self._neighbours.get(kinds)
        if table is None:
            table = {}
            for sid, entries in self.on_lines.items():
                seen: dict[str, None] = {}
                for kind, stations, pos in entries:
                    if kind not in kinds:
                        continue
                    if pos > 0:
                        seen[stations[pos - 1]] = None
                    if pos + 1 < len(stations):
                        seen[stations[pos + 1]] = None
                table[sid] = tuple(seen)
            self._neighbours[kinds] = table
        return table

    def rays(self, kinds: frozenset[str]) -> dict[str, tuple[tuple[str, ...], ...]]:
        """Station -> straight runs leaving it (each run in order, nearest first) along lines of ``kinds``."""
        table = self._rays.get(kinds)
        if table is None:
            table = {}
            for sid, entries in self.on_lines.items():
                runs = []
                for kind, stations, pos in entries:
                    if kind not in kinds:
                        continue
                    if pos + 1 < len(stations):
                        runs.append(stations[pos + 1:])
                    if pos > 0:
                        runs.append(tuple(reversed(stations[:pos])))
                table[sid] = tuple(runs)
            self._rays[kinds] = table
        return table


@lru_cache(maxsize=64)
def topology_for(game: GameDef) -> Topology:
    """The (cached) topology of a game definition."""
    return Topology(game)
