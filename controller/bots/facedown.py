"""``facedown``: the built-in imperfect-information player, for every game the rules engine loads.

Determinized search. Each turn it draws many complete guesses of the hidden pieces from its belief (what the
seat saw: reveals, clash outcomes, which pieces moved, the armies' counts, a prior of where each kind starts), and
in each guess plays every legal move on a copy of the game through the rules engine, answers it with the opponent's
attacks that hurt most, and scores the result: material worth from the clash table, the game won or lost, how near
its attackers stand to the enemy flag and the enemy's to its own, and how much each side has given away. The move
with the best average over the guesses is played. A level is an amount of work (positions looked at), not of time:
the same level plays the same moves on a Pi Zero and on a desktop, only slower; the host's time budget is a cap.

Only the seat's redacted views reach it (through ``Belief``); the guesses are its own.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from controller.rules.errors import RulesError
from controller.rules.model import MoveSpec
from controller.rules.state import GameState, Move

from .base import BotError, Player
from .belief import Prior
from .setups import bot_setup, prior
from .values import WIN, Worth, way_down, worth


@dataclass(frozen=True)
class Level:
    """How hard the bot thinks: how many positions it may look at per move (a move tried in one guess and each
    reply to it is one position; the first guess is always finished), at most this many guesses, whether it looks
    at the opponent's replies. Work, not time: the same level plays alike on every machine, a slower one takes
    longer (a position costs ~0.07-0.2 ms on the CI machine, ~10x that on a Pi Zero 2 W)."""

    positions: int
    max_samples: int
    replies: bool


LEVELS = {
    1: Level(400, 4, False),
    2: Level(900, 12, True),
    3: Level(1300, 60, True),
    4: Level(9000, 200, True),
    5: Level(28000, 600, True),
}
DEFAULT_LEVEL = 3
#: What having pieces that can clear an enemy blocker is worth (the first such piece half of it, the next a quarter...).
BLOCKER = 4.0
#: An enemy two steps from our flag with the station between them empty: its next quiet move puts it beside the
#: flag, which the look-ahead (our move, the enemy's attacks) sees only when it is too late to close the door.
FLAG_DOOR = 1.5
#: An enemy beside our flag: one attack from winning (the look-ahead sees it only on the enemy's turn).
FLAG_NEXT = 3.0
#: With an enemy three steps or fewer from our flag, each step between it and our nearest piece that beats it.
GUARD = 0.08
#: Chance the opponent dares an attack on a piece of ours it cannot see (a known one it attacks when it pays).
BLIND_ATTACK = 0.35
#: What each earlier visit to an arrangement of our own pieces costs a move that goes back to it.
REPEAT = 0.02


def _first(item: tuple[Any, ...]) -> Any:
    return item[0]


class FaceDownBot(Player):
    """The determinized-search player (see the module docstring)."""

    name = "facedown"
    #: The clock the host's time cap is counted on: the wall clock at the table.
    clock: Callable[[], float] = staticmethod(time.perf_counter)  # type: ignore[assignment]

    def __init__(self, level: int | None = None) -> None:
        super().__init__(level)
        lv = DEFAULT_LEVEL if level is None else level
        if lv not in LEVELS:
            raise BotError("protocol", f"facedown has levels {', '.join(map(str, LEVELS))}, not {level}")
        self.spec = LEVELS[lv]
        self.looked = 0

    def prior(self) -> Prior | None:
        assert self.gdef is not None
        return prior(self.gdef, self.options)

    def new_game(self, game: str, seat: str, options: Mapping[str, Any], seed: int | None = None) -> None:
        super().new_game(game, seat, options, seed)
        assert self.gdef is not None and self.belief is not None
        self._friends = frozenset(s for s in self.gdef.sides if s == seat or self.gdef.ally(seat, s))
        self.visits: dict[int, int] = {}  # arrangement of our own pieces (a hash) -> turns we stood in it
        worth(self.belief.scratch({}, {}))  # the per-game figures (for a world's options), once, before the clock runs

    def choose_setup(self, view: Mapping[str, Any], time_ms: float) -> dict[str, str]:
        assert self.gdef is not None
        return bot_setup(self.gdef, self.seat, self.rng, self.options)

    # ------------------------------------------------------------------ the search
    def choose_move(self, view: Mapping[str, Any], time_ms: float) -> tuple[str, str]:
        clock = self.clock
        start = clock()
        self.sync(view)
        b = self.belief
        assert b is not None
        spec = self.spec
        cap = start + time_ms * 0.8 / 1000.0  # the host's budget: a level's work that does not fit is cut short here
        hard = start + time_ms * 0.95 / 1000.0  # the first guess is finished unless the budget is nearly spent
        first, moves = self.playable()
        if not moves:
            raise BotError("illegal", f"facedown ({self.seat}) finds no legal move")
        if len(moves) == 1:
            return tuple(moves[0])  # type: ignore[return-value]
        w = worth(first)
        w.ways.clear()  # last move's ways were to guessed flags behind guessed mines: a cache for this move only
        total = dict.fromkeys(moves, 0.0)
        seen = dict.fromkeys(moves, 0)
        samples = 0
        self.looked = 0  # positions looked at so far this move
        st = first
        order = list(moves)
        done = False
        while not done:
            legal_here = st.legal_specs(self.seat)  # move -> the spec that allows it, passed on to apply
            self.rng.shuffle(order)
            for m in order:
                if m in legal_here:
                    total[m] += self._score(st, m, w, legal_here[m])
                    seen[m] += 1
                if samples >= 1 and (self.looked >= spec.positions or clock() > cap) or clock() > hard:
                    done = True
                    break
            samples += 1
            if samples >= spec.max_samples or self.looked >= spec.positions or clock() > cap:
                break
            st = self.world(b.sample(self.rng))
        best, best_value = moves[0], -float("inf")
        here = self._visit()
        for m in moves:
            if not seen[m]:
                continue
            v = total[m] / seen[m] - self._shuttle_penalty(m) - self._repeat_penalty(here, m) + self.rng.random() * 1e-3
            if v > best_value:
                best, best_value = m, v
        return tuple(best)  # type: ignore[return-value]

    def _score(self, st: GameState, m: Move, w: Worth, spec: MoveSpec) -> float:
        s1 = st.copy()
        try:
            s1.apply(m, spec=spec)
        except RulesError:
            return -WIN  # pragma: no cover - moves are checked legal in this guess first
        v = self.evaluate(s1, w)
        if s1.phase != "play" or not self.spec.replies or not s1.enemies(self.seat, s1.turn):
            return v
        foe = s1.turn
        worst_known = v
        blind: dict[str, float] = {}  # our station -> the worst that a blind attack on it does
        for r, rspec in s1.attack_specs(foe):
            target = s1.board.get(r.to)
            if target is None or not self._friend(s1, target.owner):
                continue
            s2 = s1.copy()
            try:
                s2.apply(r, spec=rspec)
            except RulesError:  # pragma: no cover
                continue
            e = self.evaluate(s2, w)
            if target.public or foe in target.known_to:
                worst_known = min(worst_known, e)
            elif e < blind.get(r.to, v):
                blind[r.to] = e
        v = min(v, worst_known)
        # every piece of ours left where the enemy can attack it unseen is a risk: the worst counts most, each next
        # one half as much as the one before (a piece walked into danger costs something even beside a worse risk)
        weight, risk = BLIND_ATTACK, 0.0
        for e in sorted(blind.values()):
            if e >= v:
                break
            risk += weight * (e - v)
            weight *= 0.5
        return v + risk

    def _friend(self, st: GameState, owner: str) -> bool:
        return owner in self._friends

    def evaluate(self, st: GameState, w: Worth) -> float:
        """How good ``st`` is for this seat (positive: better for it)."""
        self.looked += 1
        if st.result is not None:
            if not st.result.winners:
                return 0.0
            won = self.seat in st.result.winners
            return (WIN if won else -WIN) - st.ply * (1 if won else -1)
        me = self.seat
        if me in st.out:
            return -WIN / 2
        friends = self._friends
        value = w.value
        score = 0.0
        my_movers: list[tuple[str, str]] = []  # (station, kind)
        foe_movers: list[tuple[str, str]] = []
        my_flags: list[str] = []
        foe_flags: list[str] = []
        mine: dict[str, int] = {}  # counts of the kinds that block or clear blockers
        theirs: dict[str, int] = {}
        my_fixed: list[tuple[str, str]] = []  # (station, kind) of the pieces that never move and stand in the way
        foe_fixed: list[tuple[str, str]] = []
        fixed = w.fixed
        clearers: list[tuple[str, str]] = []  # (station, kind) of our pieces that can remove an enemy blocker
        foe_blockers: dict[str, list[str]] = {}
        clears, blockers, tracked = w.clears, w.blockers, w.tracked
        capture, movable = w.capture, w.movable
        out = st.out
        front = w.front[me]
        behind = 0  # steps of our movers from the enemy's deployment stations
        for station, p in st.board.items():
            owner, t = p.owner, p.type
            if out and owner in out:
                continue
            v = value[t]
            if owner in friends:
                if t in tracked:
                    mine[t] = mine.get(t, 0) + 1
                    if t in clears:
                        clearers.append((station, t))
                score += v
                if p.public:
                    score -= 0.12 * v  # what the enemy knows of it
                if t in capture:
                    my_flags.append(station)
                elif t in movable:
                    my_movers.append((station, t))
                    behind += front.get(station, 0)
                elif t in fixed:
                    my_fixed.append((station, t))
            else:
                if t in tracked:
                    theirs[t] = theirs.get(t, 0) + 1
                    if t in blockers:
                        foe_blockers.setdefault(t, []).append(station)
                score -= v
                if p.public:
                    score += 0.12 * v
                if t in capture:
                    foe_flags.append(station)
                elif t in movable:
                    foe_movers.append((station, t))
                elif t in fixed:
                    foe_fixed.append((station, t))
        for kind, answers in w.blockers.items():  # keep the last pieces that can clear a blocker still standing
            if theirs.get(kind):
                score += BLOCKER * (1.0 - 0.5 ** sum(mine.get(a, 0) for a in answers))
            if mine.get(kind):
                score -= BLOCKER * (1.0 - 0.5 ** sum(theirs.get(a, 0) for a in answers))
        reach = w.reach
        for station, kind in clearers:  # and bring them towards the blockers they clear (the way to the flag)
            d = reach[kind][station]
            near = 99
            for k in clears[kind]:
                for b in foe_blockers.get(k, ()):
                    x = d.get(b, 30)
                    if x < near:
                        near = x
            if near != 99:
                score -= 0.02 * (near if near < 12 else 12)
        profile = w.profile
        if foe_flags and my_movers:  # steps to the flag around the mines and bombs each piece cannot clear
            walls = tuple(foe_fixed)
            board = st.board
            takers = w.takers
            clash = st.clash
            for f in foe_flags:
                downs: list[tuple[dict[str, int], dict[str, list[str]]] | None] = [None] * len(w.profiles)
                steps = []
                for s, k in my_movers:
                    if k not in takers:
                        continue  # it can never take the flag: where it stands, it is only in the others' way
                    pr = profile[k]
                    dd = downs[pr]
                    if dd is None:
                        dd = downs[pr] = way_down(w, f, pr, walls)
                    steps.append((dd[0].get(s, 30), s, k, dd[1]))
                steps.sort(key=_first)
                # the nearest first: the three nearest lead the way (no obstacle to those behind them), unless held
                # up by a known enemy they cannot beat; of the six nearest (but those), the three with the shortest
                # way counting what stands in it count (a way is never shorter than its steps: once those reach the
                # third best, the rest cannot do better)
                leaders: dict[str, int] = {}
                ways: list[int] = []
                looked = 0
                for i, (n, s, k, down) in enumerate(steps):
                    if looked == 6 or len(ways) >= 3 and n >= ways[2]:
                        break
                    if n >= 30:
                        ways.append(n)
                        looked += 1
                        continue
                    extra, held = self._queue(board, s, n, down, leaders, k, clash)
                    if held and i < 3:
                        continue  # it cannot get through: only in the others' way
                    if i < 3:
                        leaders[s] = n
                    looked += 1
                    ways.append(n + extra)
                    ways.sort()
                for n in ways[:3]:
                    score -= 0.05 * n
        if my_flags and foe_movers:
            walls = tuple(my_fixed)
            board = st.board
            for f in my_flags:
                downs = [None] * len(w.profiles)
                nearest = 30
                near_at = near_kind = ""
                door = False
                for s, k in foe_movers:
                    pr = profile[k]
                    dd = downs[pr]
                    if dd is None:
                        dd = downs[pr] = way_down(w, f, pr, walls)
                    x = dd[0].get(s, 30)
                    if x < nearest:
                        nearest, near_at, near_kind = x, s, k
                    if x == 2 and not door:  # one quiet move from standing next to the flag, through an open door
                        for m in dd[1][s]:
                            if m not in board:
                                door = True
                                break
                score += 0.04 * min(nearest, 8)
                if nearest == 1:
                    score -= FLAG_NEXT
                elif door:
                    score -= FLAG_DOOR
                if nearest <= 3:  # bring a piece that beats it: only removing it shuts the door for good
                    beaters, to_threat = w.beaten_by[near_kind], w.distance[near_at]
                    guard = 10
                    for s, k in my_movers:
                        if k in beaters:
                            y = to_threat.get(s, 10)
                            if y < guard:
                                guard = y
                    score -= GUARD * guard
        score -= 0.004 * behind
        # the last pieces that move are worth more than their rank: a side with none left loses
        score += 4.0 / (1 + len(foe_movers)) - 4.0 / (1 + len(my_movers))
        carried = st.hook_data.get("carry_flag")
        if carried:
            score += self._carrying(st, carried, w)
        return score

    def _carrying(self, st: GameState, carried: Mapping[int, Any], w: Worth) -> float:
        """Games won by bringing a taken flag home: a taken flag is worth much, more the nearer it is to its base."""
        score = 0.0
        for station, p in st.board.items():
            flags = carried.get(p.uid)
            if not flags:
                continue
            if all(f.owner == p.owner for f in flags):
                continue  # a side's own flag riding home is no threat
            near = 4.0 - 0.25 * min(self._way_home(st, station, p.owner, p.type, w), 16)
            for f in flags:
                if f.owner == p.owner:
                    continue  # a side's own flag riding home is no threat
                gain = 8.0 + near
                score += gain if p.owner in self._friends else -gain
        return score

    def _queue(self, board: Mapping[str, Any], start: str, n: int, down: Mapping[str, list[str]],
               leaders: Mapping[str, int], kind: str, clash: Mapping[tuple[str, str], str]) -> tuple[int, bool]:
        """Extra steps on the way from ``start`` (``n`` steps) for a piece of ``kind`` to a flag (``down``: each
        station's next stations on its shortest ways, see ``way_down``). Each station on it held by one of our own
        pieces costs 3 (it must make way first), unless that piece is one of the ``leaders`` (the nearest pieces
        going for the flag: station -> their steps) and nearer the flag than ``start``: ahead on the way, not in it.
        An enemy piece we know and ``kind`` cannot beat costs 6 (another piece must remove it); other enemy pieces
        are counted by the clash terms. Step by step the cheapest next station is taken. Also returns whether the
        piece is held up: at some step every next station holds a known enemy piece it cannot beat.

        A Dover submarine sat in the enemy harbour's only entrance for 500 plies with the minesweeper queued behind
        it: one step aside was progress nobody counted. Exempting every leader then kept it there (its own way went
        round the mines, a step longer than the sweeper's); exempting none kept every ship out of the entrance (the
        first one in stood in the others' way). A flying boat sat beside the enemy flag for the rest of a game,
        bounced each time by the known flying boat guarding it, while the destroyer that sinks it waited outside;
        later a battle cruiser, bounced by the same, kept that destroyer queued behind it (a held-up piece leads
        nobody)."""
        friends, seat = self._friends, self.seat
        extra = 0
        held = False
        nxt = down.get(start)
        while nxt:
            best, cost = nxt[0], 9
            for q in nxt:
                piece = board.get(q)
                if piece is None:
                    c = 0
                elif piece.owner in friends:
                    c = 0 if leaders.get(q, 99) < n else 3
                elif (piece.public or seat in piece.known_to) and clash[(kind, piece.type)] not in ("attacker", "both"):
                    c = 6
                else:
                    c = 0
                if c < cost:
                    best, cost = q, c
                    if not c:
                        break
            extra += cost
            if cost == 6:
                held = True
            nxt = down.get(best)
        return extra, held

    @staticmethod
    def _way_home(st: GameState, start: str, side: str, kind: str, w: Worth) -> float:
        """Steps for a carrier on ``start`` to its side's base: a station held by one of its own ships costs 3 more
        (that ship must make way first: the count falls as each one does), its own mines it cannot pass at all."""
        goals = set(w.bases.get(side, ()))
        if not goals:
            return 16.0
        if start in goals:
            return 0.0
        nbrs = w.lines_nbrs[w.profiles[w.profile[kind]][0]]
        board = st.board
        fixed, capture = w.fixed, w.capture
        # Dijkstra with whole steps (1, 2 or 4) in buckets by cost; only stations under 16 are gone on from
        best = {start: 0}
        buckets: list[list[str]] = [[] for _ in range(20)]
        buckets[0].append(start)
        for cost in range(20):
            for at in buckets[cost]:
                if at in goals:
                    return float(cost)
                if best[at] < cost or cost >= 16:
                    continue
                for n in nbrs.get(at, ()):
                    q = board.get(n)
                    if q is None:
                        c = cost + 1
                    elif q.owner == side:
                        if q.type in fixed or q.type in capture:
                            continue
                        c = cost + 4
                    else:
                        c = cost + 2  # an enemy piece on the way: it must be beaten or go
                    if c < best.get(n, 99):
                        best[n] = c
                        buckets[c].append(n)
        return 16.0

    def _visit(self) -> int:
        """Count the arrangement of our own pieces we stand in now (a hash of their stations) and return it."""
        b = self.belief
        assert b is not None
        mine = self._friends
        here = sum(hash((s, u)) for s, u in b.where.items() if b.owner.get(u) in mine)
        self.visits[here] = self.visits.get(here, 0) + 1
        return here

    def _repeat_penalty(self, here: int, m: Move) -> float:
        """A little against a move back into an arrangement of our own pieces we stood in before, the more the
        oftener: where nothing better shows within the look-ahead, the bot tries something new instead of going
        round in circles until the ply cap (a Dover destroyer sat in the enemy harbour's only entrance while the
        minesweeper waited behind it). An attack counts as staying (a bounce changes nothing)."""
        b = self.belief
        assert b is not None
        uid = b.where.get(m.frm)
        if uid is None or m.to in b.where:
            return REPEAT * self.visits.get(here, 0)
        return REPEAT * self.visits.get(here - hash((m.frm, uid)) + hash((m.to, uid)), 0)

    def _shuttle_penalty(self, m: Move) -> float:
        """A little against going on with a shuttle: the more moves it has, the more (the rule will stop it soon)."""
        run = self.run
        if run is None or m.frm not in run.squares or m.to not in run.squares or self.belief is None:
            return 0.0
        return 0.15 * run.length if self.belief.where.get(m.frm) == run.uid else 0.0
