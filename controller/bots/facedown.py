"""``facedown``: the built-in imperfect-information player, for every game the rules engine loads.

Determinized search. Each turn it draws many complete guesses of the hidden pieces from its belief (what the
seat saw: reveals, clash outcomes, which pieces moved, the armies' counts, a prior of where each kind starts), and
in each guess plays every legal move on a copy of the game through the rules engine, answers it with the opponent's
attacks that hurt most, and scores the result: material worth from the clash table, the game won or lost, how near
its attackers stand to the enemy flag and the enemy's to its own (an intruder nearer a flag that was found, or one
flight of a railway away, counts more; one beside it on its own turn is a lost game), how near the pieces that beat
a known enemy piece stand to it (a kind deduced from what the piece did counts as known), and how much each side
has given away. The best moves are looked at deeper: every enemy answer and our best reply. The move with the best
average over the guesses is played. A level is an amount of work (positions looked at), not of time:
the same level plays the same moves on a Pi Zero and on a desktop, only slower; the host's time budget is a cap.

Only the seat's redacted views reach it (through ``Belief``); the guesses are its own.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from controller.rules.errors import RulesError
from controller.rules.model import MoveSpec
from controller.rules.state import GameState, Move

from .base import BotError, Player
from .belief import Prior
from .setups import bot_setup, prior
from .values import WIN, Worth, bfs, way_down, worth


@dataclass(frozen=True)
class Level:
    """How hard the bot thinks: how many positions it may look at per move (a move tried in one guess and each
    reply to it is one position; the first guess is always finished), at most this many guesses, whether it looks
    at the opponent's replies. Work, not time: the same level plays alike on every machine, a slower one takes
    longer (a position costs ~0.07-0.2 ms on the CI machine, ~10x that on a Pi Zero 2 W)."""

    positions: int
    max_samples: int
    replies: bool
    #: The deeper look (our move, the enemy's answers, our reply to its most dangerous ones) for this many of the
    #: best moves of the first look, with this share of the positions; 0: none.
    deep: int = 0
    deep_share: float = 0.0


#: The levels of the bot as it was before the deeper look and the new terms (``facedown-classic``).
CLASSIC_LEVELS = {
    1: Level(400, 4, False),
    2: Level(900, 12, True),
    3: Level(1300, 60, True),
    4: Level(9000, 200, True),
    5: Level(28000, 600, True),
}
LEVELS = {
    1: Level(400, 4, False),
    2: Level(900, 12, True),
    3: Level(2000, 60, True, deep=3, deep_share=0.4),
    4: Level(12000, 200, True, deep=6, deep_share=0.4),
    5: Level(28000, 600, True, deep=8, deep_share=0.5),
}
DEFAULT_LEVEL = 3
#: What having pieces that can clear an enemy blocker is worth (the first such piece half of it, the next a quarter...).
BLOCKER = 4.0
#: An enemy two steps from our flag with the station between them empty: its next quiet move puts it beside the
#: flag, which the look-ahead (our move, the enemy's attacks) sees only when it is too late to close the door.
FLAG_DOOR = 1.5
#: An enemy beside our flag: one attack from winning (the look-ahead sees it only on the enemy's turn).
FLAG_NEXT = 3.0
#: An enemy piece that can take our flag beside it on its own turn: the game is as good as lost (our reply came
#: and went). The deeper look ends on the enemy's turn, so this is what it sees when an intruder steps in beside
#: the flag and no reply of ours removes it (Luzhanqi seed 1 against the bot before: a lieutenant walked round
#: our back rows and in beside the flag while our bomb followed it without striking, each step looking no worse
#: than FLAG_NEXT).
FLAG_LOST = WIN / 4
#: With an enemy three steps or fewer from our flag, each step between it and our nearest piece that beats it.
GUARD = 0.08
#: Chance the opponent dares an attack on a piece of ours it cannot see (a known one it attacks when it pays).
BLIND_ATTACK = 0.35
#: What each earlier visit to an arrangement of our own pieces costs a move that goes back to it.
REPEAT = 0.02
#: With an enemy this many steps from our flag (1, 2, 3), what each step between it and our nearest piece that
#: stops it (beats it or trades with it) costs: the nearer the intruder, the more a defender's distance matters.
GUARD_NEAR = {1: 0.45, 2: 0.22, 3: 0.1, 4: 0.05}
#: The same once our flag is found (the enemy has seen it, or struck a mine or bomb beside it: a cleared guard
#: shows where it stands), from farther off: an intruder that knows where to go walks straight in.
GUARD_FOUND = {1: 0.6, 2: 0.4, 3: 0.25, 4: 0.15, 5: 0.1, 6: 0.06}
#: A known enemy piece (shown, or deduced from what it did) is worth hunting: per unit of its worth, what our
#: nearest piece that beats it is worth standing next to it, less for each step farther (none from HUNT_RANGE on).
HUNT = 0.08
HUNT_RANGE = 6
#: A known enemy piece one move from a piece of ours that beats it is threatened: per unit of its worth, what the
#: threat is worth when the enemy is to move (it may flee or be covered: the most valuable one threatened) and when
#: we are, or it cannot move (a known mine or bomb), or it is the second of two threatened at once (a fork: only
#: one can be saved). The look-ahead scores a quiet move that sets up a strike as nothing more than HUNT's step:
#: Dover Patrol seed 1 against the bot before, our submarine stood two stations from the enemy's known flagship
#: for 300 plies and never stepped beside it.
THREAT = 0.2
THREAT_NOW = 0.45
#: What the last pieces that can move are worth beyond their rank (a side with none left loses on its turn): the
#: n-th last counts LAST_MOVERS / n.
LAST_MOVERS = 6.0
#: A stalled game: after STALL_FROM plies with no piece taken, an attack on an enemy piece we do not know (a probe)
#: gains up to STALL times the worth of our cheapest piece that can attack, reached STALL_RAMP plies later; the
#: first look already counts what the probe is likely to cost. Without it both bots shuffled behind their lines
#: until the ply cap (Stratego seed 1 and Navy chess Taiwan seeds 1 and 2 against the bot before: no piece taken
#: in the last 1,500 plies), and a player alone at the board wants an opponent that tries to win.
#: With an enemy this many steps from our flag, what each step our nearest piece that stops it is late to the door
#: it comes in by costs (up to three steps); farther off once the flag is found, as the guard.
LATE = {2: 1.0, 3: 0.6, 4: 0.35}
LATE_FOUND = {2: 1.5, 3: 1.0, 4: 0.6, 5: 0.35, 6: 0.2}
STALL_FROM = 60
STALL_RAMP = 120
STALL = 1.2
#: In that stall, once UNREACHED plies went by with no unknown enemy piece in reach to probe: a step that brings one
#: of our pieces that can take a flag nearer the nearest enemy piece gains APPROACH times the probe's worth, scaled by
#: how cheap the piece is (our cheapest counts whole), so the cheap pieces go and meet the enemy and the probe gets
#: something to strike (Navy chess Taiwan seeds 1, 2 and 4 against the bot before: four or five clashes in 2,000
#: plies, both fleets drawn back behind five empty rows, so the probe never had a piece to strike). While the armies
#: touch, the probe alone decides: given from the stall's start, the step lost Stratego seed 1 and three Dover Patrol
#: games that the probe alone won or drew.
APPROACH = 0.25
UNREACHED = 100
#: An enemy flag that the mines or bombs we know wall off from every piece of ours that cannot clear them is won only
#: by the pieces that can: the position is worth SEALED less, halved for each such piece that gets to it, so the
#: last of them is worth SEALED / 2 beyond its rank and clearing the wall gains as much. Dover Patrol seed 2 against
#: the bot before: with Red's harbour entrance mined (known since a submarine of ours struck it), our last minesweeper
#: was left beside an enemy piece to take a light cruiser; it was sunk, and no piece of ours could reach the flag
#: again: drawn at the ply cap, 17 of our ships to 6.
SEALED = 8.0


def _first(item: tuple[Any, ...]) -> Any:
    return item[0]


_HARMONIC = [0.0]
for _n in range(1, 200):
    _HARMONIC.append(_HARMONIC[-1] + LAST_MOVERS / _n)


def _harmonic(n: int) -> float:
    """What ``n`` pieces that can move are worth beyond their ranks: LAST_MOVERS * (1 + 1/2 + ... + 1/n)."""
    return _HARMONIC[n] if n < len(_HARMONIC) else _HARMONIC[-1]


class FaceDownBot(Player):
    """The determinized-search player (see the module docstring)."""

    name = "facedown"
    #: The clock the host's time cap is counted on: the wall clock at the table.
    clock: Callable[[], float] = staticmethod(time.perf_counter)  # type: ignore[assignment]
    #: The bot as it played before the deeper look, the guard that grows, the last movers and the reading of move
    #: patterns (``facedown-classic``: to measure the new one against).
    classic = False
    levels = LEVELS

    def __init__(self, level: int | None = None) -> None:
        super().__init__(level)
        lv = DEFAULT_LEVEL if level is None else level
        if lv not in self.levels:
            raise BotError("protocol", f"{self.name} has levels {', '.join(map(str, self.levels))}, not {level}")
        self.spec = self.levels[lv]
        self.looked = 0

    def prior(self) -> Prior | None:
        assert self.gdef is not None
        return prior(self.gdef, self.options)

    def new_game(self, game: str, seat: str, options: Mapping[str, Any], seed: int | None = None) -> None:
        super().new_game(game, seat, options, seed)
        assert self.gdef is not None and self.belief is not None
        self._friends = frozenset(s for s in self.gdef.sides if s == seat or self.gdef.ally(seat, s))
        self.visits: dict[Any, int] = {}  # arrangement of our own pieces -> turns we stood in it
        self.belief.reads_moves = not self.classic
        self.belief.deduces = not self.classic
        self._walls: dict[int, tuple[str, int]] | None = None  # our flag's uid -> its station, our blockers beside it
        self._rays, self._nets = self._flights(self.belief.options)
        #: the kinds that fly along some line: only their distance to our flag may be shorter in moves than in steps
        self._flyers = frozenset(k for runs in self._rays.values() for _, who in runs for k in who)
        clash = self.belief.base.clash
        takers = [p.id for p in self.gdef.pieces if p.movable and p.can_attack]
        #: piece id -> the kinds that stop it when they attack it: beat it, or trade with it (both removed)
        self._stoppers = {d.id: frozenset(a for a in takers if clash[(a, d.id)] in ("attacker", "both"))
                          for d in self.gdef.pieces}
        #: the stations a piece never moves from again (a Luzhanqi headquarters): one standing there is no mover
        self._frozen = frozenset(st.id for st in self.gdef.stations if self.gdef.station_kinds[st.kind].frozen)
        #: station -> its kind, for the stations that shelter their occupant (a Luzhanqi camp)
        self._shelters = {st.id: self.gdef.station_kinds[st.kind] for st in self.gdef.stations
                          if self.gdef.station_kinds[st.kind].shelter}
        no_moves = self.belief.options.get("no_moves", self.gdef.win.no_moves)
        self._stuck_loses = no_moves == "lose"  # a side with no move on its turn is out (not passing)
        self._pieces_seen = -1  # pieces on the board when we last looked, and the ply the last one was taken at
        self._quiet_from = 0
        self._in_reach_at = 0  # the last ply with an unknown enemy piece in reach to probe (or no stall)
        self._wary_of: dict[int, frozenset[str]] = {}  # this move's suspects near our flag's guards (``_suspects``)
        worth(self.belief.scratch({}, {}))  # the per-game figures (for a world's options), once, before the clock runs

    def choose_setup(self, view: Mapping[str, Any], time_ms: float) -> dict[str, str]:
        assert self.gdef is not None
        return bot_setup(self.gdef, self.seat, self.rng, self.options, open_base=not self.classic)

    # ------------------------------------------------------------------ the search
    def choose_move(self, view: Mapping[str, Any], time_ms: float) -> tuple[str, str]:
        clock = self.clock
        start = clock()
        self.sync(view)
        self._note_pieces(view)
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
        if self._walls is None:
            self._walls = self._flag_walls(first, w)
        w.ways.clear()  # last move's ways were to guessed flags behind guessed mines: a cache for this move only
        total = dict.fromkeys(moves, 0.0)
        seen = dict.fromkeys(moves, 0)
        samples = 0
        self.looked = 0  # positions looked at so far this move
        st = first
        order = list(moves)
        done = False
        first_look = spec.positions - int(spec.positions * spec.deep_share)  # the rest: the deeper look's
        while not done:
            legal_here = st.legal_specs(self.seat)  # move -> the spec that allows it, passed on to apply
            self.rng.shuffle(order)
            for m in order:
                if m in legal_here:
                    total[m] += self._score(st, m, w, legal_here[m])
                    seen[m] += 1
                if samples >= 1 and (self.looked >= first_look or clock() > cap) or clock() > hard:
                    done = clock() > cap or self.looked >= spec.positions
                    break
            else:
                samples += 1
                if samples < spec.max_samples and self.looked < first_look and clock() <= cap:
                    st = self.world(b.sample(self.rng))
                    continue
            break
        probe = self._probe_worth(view, first, w)
        probes = {m for m in moves if self._probes(first, m)} if probe else set()
        for m in probes:  # a stalled game: a probe counts from the first look on, so it is a candidate of the deeper
            total[m] += probe * seen[m]  # look too, which counts its cost once more (below: so does the probe)
        ply = int(view.get("ply", 0))
        if probes or not probe:
            self._in_reach_at = ply
        approach = self._approach(first, moves, w, probe) if ply - self._in_reach_at >= UNREACHED else {}
        for m, gain in approach.items():  # and so does a step towards the enemy when there is nothing to probe
            total[m] += gain * seen[m]
        self._wary_of = self._suspects(first, w) if spec.deep and not done else {}
        deeper = self._deeper(moves, total, seen, w, cap, hard) if spec.deep and not done else {}
        best, best_value = moves[0], -float("inf")
        here = self._visit()
        for m in (deeper or moves):
            if not seen[m]:
                continue
            mean = total[m] / seen[m] + deeper[m] if deeper else total[m] / seen[m]
            v = mean - self._shuttle_penalty(m) - self._repeat_penalty(here, m) + self.rng.random() * 1e-3
            if deeper and m in probes:
                v += probe
            if deeper and m in approach:
                v += approach[m]
            if v > best_value:
                best, best_value = m, v
        return tuple(best)  # type: ignore[return-value]

    def _deeper(self, moves: list[Move], total: Mapping[Move, float], seen: Mapping[Move, int], w: Worth, cap: float,
                hard: float) -> dict[Move, float]:
        """The deeper look, iterative deepening in the work left: the ``spec.deep`` best moves of the first look are
        played again in fresh guesses, each answered by every enemy move and the two most dangerous of those by our
        best reply (``_deep_score``). Every candidate is looked at in the same guesses, and only whole rounds count.
        Returns each candidate's average deeper value (to add to its first look's), or {} if not one round fitted."""
        spec, b, clock = self.spec, self.belief, self.clock
        assert b is not None
        ranked = sorted((m for m in moves if seen[m]), key=lambda m: -total[m] / seen[m])
        candidates = ranked[:spec.deep]
        if len(candidates) < 2:
            return {}
        sums = dict.fromkeys(candidates, 0.0)
        rounds = 0
        while self.looked < spec.positions and clock() <= cap and rounds < spec.max_samples:
            st = self.world(self._wary(b.sample(self.rng)))
            legal_here = st.legal_specs(self.seat)
            got: dict[Move, float] = {}
            for m in candidates:
                if clock() > hard:
                    break
                got[m] = self._deep_score(st, m, w, legal_here[m]) if m in legal_here else -WIN / 4
            else:
                for m, v in got.items():
                    sums[m] += v
                rounds += 1
                continue
            break
        if not rounds:
            return {}
        return {m: v / rounds for m, v in sums.items()}

    def _deep_score(self, st: GameState, m: Move, w: Worth, spec: MoveSpec) -> float:
        """Our move ``m`` in ``st``, every enemy answer, and for the two answers that hurt most (of the enemy's quiet
        moves and its attacks on pieces of ours it knows) and every answer that steps an enemy that can take a flag
        in beside ours, our best reply: the worst of those, less the risk of
        its attacks on pieces of ours it cannot see (as the first look counts them). Our reply is a quiet move or an
        attack on a piece we know: the best attack on an unknown piece in a guess is the one that wins in that guess,
        which in play we could not tell (every guess would pick its own, and the look would think us all-seeing)."""
        s1 = st.copy()
        try:
            s1.apply(m, spec=spec)
        except RulesError:
            return -WIN  # pragma: no cover - moves are checked legal in this guess first
        v = self.evaluate(s1, w)
        if s1.phase != "play" or not s1.enemies(self.seat, s1.turn):
            return v
        foe = s1.turn
        answers: list[tuple[float, int, GameState]] = []
        blind: dict[str, float] = {}
        doors = self._beside_flags(s1, w) if not self.classic else set()
        takers = w.takers
        intruders: set[int] = set()  # the answers that step an enemy that can take a flag in beside ours
        for n, (r, rspec) in enumerate(s1.legal_specs(foe).items()):
            s2 = s1.copy()
            try:
                s2.apply(r, spec=rspec)
            except RulesError:  # pragma: no cover
                continue
            e = self.evaluate(s2, w)
            target = s1.board.get(r.to)
            # an intruder: a piece that can take a flag, standing beside ours after the answer (a quiet step, or a
            # strike that took our guard there, blind or not: an engineer on the mine). Whether the enemy would
            # strike unseen is its guess, but once it has, the ruling shows where the striker stands, and unless
            # our reply removes it the flag falls (Luzhanqi seeds 1 and 2 and Navy chess mainland seed 2 against
            # the bot before: the strike at the mine beside the flag, which the enemy knew, was not answered)
            won = s2.board.get(r.to) if r.to in doors else None
            intrudes = won is not None and won.owner == foe and s1.board[r.frm].type in takers
            if intrudes:
                intruders.add(n)
            elif target is not None and self._friend(s1, target.owner) and not (target.public
                                                                               or foe in target.known_to):
                if e < blind.get(r.to, v):
                    blind[r.to] = e
                continue
            answers.append((e, n, s2))
        answers.sort(key=lambda a: (a[0], a[1]))
        worst = v
        # the two that hurt most, and every intruder: beside the flag on our turn it looks no worse than FLAG_NEXT,
        # below the loss of a good piece, yet it is the game unless our reply removes it (navy chess seed 3 against
        # the bot before: a torpedo ship stepped in beside our boxed-in flagship and took it on the next move)
        for e, _, s2 in answers[:2] + [a for a in answers[2:] if a[1] in intruders]:
            if s2.phase != "play" or s2.turn != self.seat:
                worst = min(worst, e)
                continue
            reply = -float("inf")
            seat = self.seat
            beside = self._beside_flags(s2, w) if not self.classic else ()
            for r, rspec in s2.legal_specs(seat).items():
                if r in self.forbidden:
                    continue
                target = s2.board.get(r.to)
                if target is not None and not (target.public or seat in target.known_to) and r.to not in beside:
                    continue  # an attack on a piece we do not know: in this guess we would know what it is
                s3 = s2.copy()
                try:
                    s3.apply(r, spec=rspec)
                except RulesError:  # pragma: no cover
                    continue
                reply = max(reply, self.evaluate(s3, w))
            worst = min(worst, reply if reply > -float("inf") else e)
        return worst + _blind_risk(blind, worst)

    def _suspects(self, st: GameState, w: Worth) -> dict[int, frozenset[str]]:
        """The hidden enemy pieces that, were they of a kind that clears a guard beside our flag (an engineer on the
        mine), could strike it this move: uid -> those kinds (of the kinds the piece may be). Asked once a move, on
        a world where every hidden enemy piece is of one such kind in turn (the counts do not matter for where a
        piece can go)."""
        b = self.belief
        assert b is not None
        clash, friends, capture = b.base.clash, self._friends, w.capture
        guards: dict[str, frozenset[str]] = {}  # station of a guard beside our flag -> the kinds that clear it
        for station, p in st.board.items():
            if p.type in capture and p.owner in friends:
                for g in b.nbrs.get(station, ()):
                    q = st.board.get(g)
                    if q is not None and q.owner in friends and q.type in w.fixed:
                        guards[g] = frozenset(a for a in w.movable if clash[(a, q.type)] == "attacker")
        if not guards:
            return {}
        hidden = [(s, u) for s, u in b.where.items() if b.owner.get(u) not in friends and u in b.possible
                  and u not in b.known]
        out: dict[int, frozenset[str]] = {}
        for kind in sorted(frozenset().union(*guards.values())):
            could = [(s, u) for s, u in hidden if kind in b.possible[u]]
            if not could:
                continue
            world = self.world({u: kind for _, u in could})
            for s, u in could:
                if any(t in guards and kind in guards[t] for t in world.destinations(s, attacks_only=True)):
                    out[u] = out.get(u, frozenset()) | {kind}
        return out

    def _wary(self, kinds: dict[int, str]) -> dict[int, str]:
        """A guess for the deeper look in which each suspect (``_suspects``) is of a kind that clears the guard it
        can strike: its kind traded with another hidden piece's that may be either, so the armies' counts hold (if none
        may, it is simply made one). The
        look's few guesses seldom put the one kind there (Luzhanqi seed 2 against the bot before: an enemy engineer
        one railway flight from the mine beside our flag struck it, and none of the 4 guesses had an engineer there,
        so the look never saw the strike): near the flag it is the worst case that counts."""
        b = self.belief
        suspects = self._wary_of
        if not suspects or b is None:
            return kinds
        for u, clear in suspects.items():
            mine = kinds.get(u)
            if mine is None or mine in clear:
                continue
            swaps = [v for v, k in kinds.items() if k in clear and v not in suspects and v in b.possible
                     and mine in b.possible[v] and b.owner.get(v) == b.owner.get(u)]
            if swaps:
                v = swaps[self.rng.randrange(len(swaps))]
                kinds[u], kinds[v] = kinds[v], mine
            else:  # no piece to trade with (the kind's last ones guessed elsewhere): one too many in this guess
                kinds[u] = sorted(clear)[self.rng.randrange(len(clear))]
        return kinds

    def _beside_flags(self, st: GameState, w: Worth) -> set[str]:
        """The stations beside our flags. In the deeper look our reply may strike an unknown piece there: that it
        picks the strike only in the guesses where it wins costs nothing, since in the others every reply loses the
        flag anyway (FLAG_LOST). Without it the look saw no defence against an intruder at the flag but known pieces."""
        assert self.belief is not None
        nbrs, friends, capture = self.belief.nbrs, self._friends, w.capture
        out: set[str] = set()
        for station, p in st.board.items():
            if p.type in capture and p.owner in friends:
                out.update(nbrs.get(station, ()))
        return out

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
        return v + _blind_risk(blind, v)

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
        foe_walls: list[tuple[str, str]] = []  # those of foe_fixed we know (shown or deduced)
        foe_known: list[tuple[str, str]] = []  # (station, kind) of the enemy pieces we know (shown or deduced)
        fixed = w.fixed
        clearers: list[tuple[str, str]] = []  # (station, kind) of our pieces that can remove an enemy blocker
        foe_blockers: dict[str, list[str]] = {}
        clears, blockers, tracked = w.clears, w.blockers, w.tracked
        capture, movable = w.capture, w.movable
        out = st.out
        front = w.front[me]
        behind = 0  # steps of our movers from the enemy's deployment stations
        frozen = self._frozen if not self.classic else frozenset()
        for station, p in st.board.items():
            owner, t = p.owner, p.type
            if out and owner in out:
                continue
            v = value[t]
            # a piece that never moves again (in a Luzhanqi headquarters) is no mover: neither a defender, nor one of
            # the last movers, nor one that can clear a blocker
            stuck = station in frozen and t in movable
            if owner in friends:
                if t in tracked and not stuck:
                    mine[t] = mine.get(t, 0) + 1
                    if t in clears:
                        clearers.append((station, t))
                score += v
                if p.public:
                    score -= 0.12 * v  # what the enemy knows of it
                if t in capture:
                    my_flags.append(station)
                elif t in movable and not stuck:
                    my_movers.append((station, t))
                    behind += front.get(station, 0)
                elif t in fixed:
                    my_fixed.append((station, t))
            else:
                if t in tracked and not stuck:
                    theirs[t] = theirs.get(t, 0) + 1
                    if t in blockers:
                        foe_blockers.setdefault(t, []).append(station)
                score -= v
                if p.public:
                    score += 0.12 * v
                if t in capture:
                    foe_flags.append(station)
                elif t in movable:
                    if not stuck:
                        foe_movers.append((station, t))
                    if p.public or me in p.known_to:
                        foe_known.append((station, t))
                elif t in fixed:
                    foe_fixed.append((station, t))
                    if p.public or me in p.known_to:
                        foe_known.append((station, t))
                        foe_walls.append((station, t))
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
            if foe_walls and not self.classic:
                score -= self._sealed(foe_flags, tuple(foe_walls), my_movers, w)
        if my_flags and foe_movers:
            walls = tuple(my_fixed)
            board = st.board
            classic = self.classic
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
                    if x == 2 and not door:  # one quiet move from standing next to the flag, through an open door
                        for m in dd[1][s]:
                            if m not in board and (classic or not self._covered(board, m, k)):
                                door = True
                                break
                    if x > 2 and not classic and k in self._flyers:
                        x = self._flown_steps(board, s, k, dd[0], x)  # a flight first: fewer moves than steps
                    if x < nearest:
                        nearest, near_at, near_kind = x, s, k
                if not door and not classic and self._rays:
                    door = self._flown_door(board, f)
                score += 0.04 * min(nearest, 8)
                if nearest == 1:
                    if not classic and board[near_at].owner == st.turn and near_kind in w.takers:
                        score -= FLAG_LOST  # and it is that enemy's turn: the flag falls now
                    else:
                        score -= FLAG_NEXT
                elif door:
                    score -= FLAG_DOOR
                near = GUARD_NEAR
                if not classic and self._found(st, f, w):
                    near = GUARD_FOUND
                    score -= 0.04 * min(nearest, 8)  # the intruder's own distance no longer counts: the defenders' does
                if classic and nearest <= 3 or not classic and nearest in near:
                    # bring a piece that stops it: only removing it shuts the door for good
                    beaters = w.beaten_by[near_kind] if classic else self._stoppers[near_kind]
                    to_threat = w.distance[near_at]
                    guard = 10
                    for s, k in my_movers:
                        if k in beaters:
                            y = to_threat.get(s, 10)
                            if y < guard:
                                guard = y
                    score -= (GUARD if classic else near[nearest]) * guard
                    if not classic and near_kind in w.takers and nearest > 1:
                        score -= self._late(st, f, near_at, near_kind, nearest, downs[profile[near_kind]], my_movers, near, w)
        if foe_known and my_movers and not self.classic:
            score += self._hunt(foe_known, my_movers, w, st.turn == me)
        score -= 0.004 * behind
        if self.classic:
            # the last pieces that move are worth more than their rank: a side with none left loses
            score += 4.0 / (1 + len(foe_movers)) - 4.0 / (1 + len(my_movers))
        else:
            score += self._movers_worth(st, my_movers, foe_movers)
        carried = st.hook_data.get("carry_flag")
        if carried:
            score += self._carrying(st, carried, w)
        return score

    @staticmethod
    def _sealed(flags: list[str], known: tuple[tuple[str, str], ...], movers: list[tuple[str, str]], w: Worth) -> float:
        """What the enemy flags walled off by the blockers we know (``known``: station, kind) cost (``SEALED``): none
        of our pieces that cannot clear those walls gets to the flag, and each of those that can, and gets to it,
        halves the cost."""
        walls = {k for _, k in known}
        clears, takers, profile = w.clears, w.takers, w.profile
        cost = 0.0
        for f in flags:
            n = 0
            for s, k in movers:
                if k not in takers or way_down(w, f, profile[k], known)[0].get(s, 30) >= 30:
                    continue
                if not walls & clears.get(k, frozenset()):
                    break  # a piece that needs no clearing gets there: the flag is not walled off
                n += 1
            else:
                cost += SEALED * 0.5 ** n
        return cost

    def _late(self, st: GameState, flag: str, at: str, kind: str, n: int, way: tuple[dict[str, int], dict[str, list[str]]],
              my_movers: list[tuple[str, str]], near: Mapping[int, float], w: Worth) -> float:
        """What it costs that none of our pieces that stop the intruder on ``at`` (``n`` steps from our ``flag``)
        can reach the door it comes in by in time: it stands beside the flag after ``n - 1`` steps, so a stopper must
        stand beside that station (to strike it) or on it by our ``n``-th move (the ``n - 1``-th on its turn). The
        doors are the stations beside the flag on its shortest ways, the one farthest from our stoppers counts (it
        picks its way). Counted in steps for both (a lane flight is a few), so it is a lean, not a proof: what
        counts is that a defender that is late is counted late before the intruder is beside the flag, where the
        guard (``near``) counts only the steps between them. The weakness this answers: Navy chess (mainland) seed 3
        against the bot before, a torpedo ship three steps from our flagship boxed in by its own mines, our cruiser
        two steps from the one door struck elsewhere and came back one move late."""
        steps, down = way
        doors: set[str] = set()
        todo, seen = [at], {at}
        while todo:
            s = todo.pop()
            if steps.get(s, 30) == 1:
                doors.add(s)
                continue
            for t in down.get(s, ()):
                if t not in seen and t != flag:
                    seen.add(t)
                    todo.append(t)
        if not doors:
            return 0.0
        stoppers = self._stoppers[kind]
        reach = w.reach
        late = 0
        allowed = n if st.turn in self._friends else n - 1
        # the stations it cannot be struck on nor passed: an enemy piece sheltered where it stands, and a shelter
        # every shortest way of the intruder runs through (it stands there on its way in; where it may go round,
        # the station may be free when our stopper passes)
        sheltered: list[tuple[str, str]] = []
        if self._shelters:
            sheltered = self._sheltered(st)
            layer = Counter(steps.get(s, 30) for s in seen)
            sheltered += [(s, kind) for s in seen
                          if s in self._shelters and s not in doors and s != at and layer[steps.get(s, 30)] == 1]
        # a stopper counted on time by the static reach may be late round those walls (the static reach runs
        # through them: Luzhanqi seed 1 against the bot before, an enemy major walked into the camp beside the one
        # door to our flag; our bomb, two steps from the door "through" that camp, was counted on time where the
        # way round was three, and the flag fell): steps round them, one search per door, lines and walls
        walls_of: dict[str, frozenset[str]] = {}  # our kind -> the walls it meets
        around: dict[tuple[str, frozenset[str], frozenset[str]], dict[str, int]] = {}
        for door in doors:
            best = 30
            for s, k in my_movers:
                if k in stoppers:
                    y = reach[k][door].get(s, 30)
                    if sheltered and y <= allowed and s != door:
                        walls = walls_of.get(k)
                        if walls is None:
                            walls = walls_of[k] = frozenset(b for b, d in sheltered if self._shelters_from(b, d, k))
                        if walls:
                            lines = w.profiles[w.profile[k]][0]
                            key = (door, lines, walls)
                            steps_round = around.get(key)
                            if steps_round is None:
                                steps_round = around[key] = bfs(w.lines_nbrs[lines], [door], walls, allowed + 3)
                            y = steps_round.get(s, 30)
                    if y < best:
                        best = y
            if best - allowed > late:
                late = best - allowed
        if late <= 0:
            return 0.0
        return (LATE_FOUND if near is GUARD_FOUND else LATE).get(n, 0.0) * min(late, 3)

    def _sheltered(self, st: GameState) -> list[tuple[str, str]]:
        """The enemy pieces standing on a station that shelters them, as (station, kind)."""
        board = st.board
        out = []
        for b in self._shelters:
            p = board.get(b)
            if p is not None and p.owner not in self._friends:
                out.append((b, p.type))
        return out

    def _shelters_from(self, station: str, kind: str, attacker: str) -> bool:
        """Does ``station`` shelter an enemy ``kind`` from our ``attacker`` (neither struck there nor passed)?"""
        sk = self._shelters[station]
        return attacker not in sk.shelter_except_attackers and kind not in sk.shelter_except_defenders

    def _flights(self, options: Mapping[str, Any]) -> tuple[dict[str, list[tuple[tuple[str, ...], dict[str, int]]]],
                                                              list[tuple[dict[str, tuple[str, ...]], frozenset[str]]]]:
        """Station -> the straight runs of stations going out from it along each line that some kind flies along
        (moves more than one station at a time: a Luzhanqi railway, a Stratego scout's road, a Navy chess lane),
        each with the kinds that fly along it and how many stations of it each may go at most (a Navy chess ship
        three); and the networks some kinds fly over turning where they like (a Luzhanqi engineer's railway), each as
        station -> neighbours with those kinds."""
        assert self.gdef is not None and self.belief is not None
        flyers: dict[str, dict[str, int]] = {}  # line kind -> piece id -> most stations along it in one move
        turners: dict[frozenset[str], set[str]] = {}
        longest = len(self.gdef.station_ids)
        for p in self.gdef.pieces:
            for m in p.moves:
                if m.when.holds(options) and (m.max_steps is None or m.max_steps > 1) and not m.attack_only:
                    most = longest if m.max_steps is None else m.max_steps
                    for kind in m.along:
                        by_kind = flyers.setdefault(kind, {})
                        by_kind[p.id] = max(by_kind.get(p.id, 0), most)
                    if m.turns:
                        turners.setdefault(frozenset(m.along), set()).add(p.id)
        topo = self.belief.base.topo
        nets = [(topo.neighbours(along), frozenset(who)) for along, who in turners.items()]
        rays: dict[str, list[tuple[tuple[str, ...], dict[str, int]]]] = {}
        for line in self.gdef.lines:
            who = flyers.get(line.kind)
            if not who:
                continue
            run = line.stations
            for i, q in enumerate(run):
                if i + 2 < len(run):
                    rays.setdefault(q, []).append((run[i + 1:], who))
                if i >= 2:
                    rays.setdefault(q, []).append((run[i - 1::-1], who))
        return rays, nets

    def _flown_steps(self, board: Mapping[str, Any], start: str, kind: str, steps: Mapping[str, int], x: int) -> int:
        """Steps to our flag for an enemy ``kind`` on ``start`` (``x`` counted station by station, ``steps`` each
        station's) when its first move may be a flight straight along a line through empty stations: one move,
        then the steps from where it lands. Navy chess (mainland) seed 2 against the bot before: an enemy
        minesweeper on J4 sailed three stations along an open lane, swept the mine beside our flagship and
        took it, three moves in all; counted in steps (four) the guard counted it a step farther than it was.
        Replayed with this count, that game is won."""
        for run, who in self._rays.get(start, ()):
            most = who.get(kind)
            if most is None:
                continue
            for i, q in enumerate(run):
                if i >= most or q in board:
                    break
                y = steps.get(q, 30) + 1
                if y < x:
                    x = y
        return x

    def _flown_door(self, board: Mapping[str, Any], flag: str) -> bool:
        """Is an empty station beside our ``flag`` one move from an enemy piece that flies along a straight line
        through empty stations to it (and not beside a piece of ours that stops it)? The door counted by steps
        misses it: Luzhanqi seed 1 against the bot before, an engineer cleared the mine beside our flag, and the next
        engineer rode the railway round a corner from five stations off to that station, then took the flag."""
        assert self.belief is not None
        friends = self._friends
        for q in self.belief.nbrs.get(flag, ()):
            if q in board:
                continue
            for run, who in self._rays.get(q, ()):
                for i, s in enumerate(run):
                    p = board.get(s)
                    if p is None:
                        continue
                    if (p.owner not in friends and who.get(p.type, 0) > i
                            and not self._covered(board, q, p.type)):
                        return True
                    break
            for nbrs, who in self._nets:  # round corners: every station reached through empty ones
                if q not in nbrs:
                    continue
                seen, todo = {q}, [q]
                while todo:
                    for n in nbrs.get(todo.pop(), ()):
                        if n in seen:
                            continue
                        seen.add(n)
                        p = board.get(n)
                        if p is None:
                            todo.append(n)
                        elif p.owner not in friends and p.type in who and not self._covered(board, q, p.type):
                            return True
        return False

    def _hunt(self, foe_known: list[tuple[str, str]], my_movers: list[tuple[str, str]], w: Worth,
              our_turn: bool) -> float:
        """Each enemy piece we know, worth going for: ``HUNT`` times its worth for our nearest piece that beats it
        standing beside it, less for each step farther. Without this, a known piece out of the look-ahead's reach
        was worth nothing until one stood next to it: in Navy chess (Taiwan) seed 1 against the bot before, the
        enemy's anti-submarine plane, known after its first clash, bounced our ships for 700 plies while the missile
        that sinks it stayed three stations off; one capture in 800 plies, a draw. Those one move from a piece of
        ours that beats them are threatened as well (``THREAT``)."""
        reach, value, beaten_by, fixed = w.reach, w.value, w.beaten_by, w.fixed
        score = 0.0
        fleeing: list[float] = []  # the worth of the threatened enemy pieces that may get away on the enemy's move
        for es, ek in foe_known:
            beaters = beaten_by[ek]
            if not beaters:
                continue
            best = HUNT_RANGE
            for s, k in my_movers:
                if k in beaters:
                    d = reach[k][s].get(es, HUNT_RANGE)
                    if d < best:
                        best = d
            if best < HUNT_RANGE:
                score += HUNT * value[ek] * (HUNT_RANGE - best) / HUNT_RANGE
                if best == 1:
                    if our_turn or ek in fixed:
                        score += THREAT_NOW * value[ek]
                    else:
                        fleeing.append(value[ek])
        if fleeing:  # the enemy saves the most valuable one; the next one falls
            fleeing.sort(reverse=True)
            score += THREAT * fleeing[0] + (THREAT_NOW * fleeing[1] if len(fleeing) > 1 else 0.0)
        return score

    def _flag_walls(self, st: GameState, w: Worth) -> dict[int, tuple[str, int]]:
        """Our flag's uid -> its station and how many of our blockers (mines, bombs) stand beside it, when play
        begins."""
        assert self.belief is not None
        out: dict[int, tuple[str, int]] = {}
        for station, p in st.board.items():
            if p.owner in self._friends and p.type in w.capture:
                out[p.uid] = (station, self._walls_beside(st, station, w))
        return out

    def _walls_beside(self, st: GameState, station: str, w: Worth) -> int:
        return self._ours_beside(st.board, station, w.fixed)

    def _ours_beside(self, board: Mapping[str, Any], station: str, kinds: frozenset[str]) -> int:
        """How many pieces of ours of ``kinds`` stand one step from ``station``."""
        assert self.belief is not None
        friends = self._friends
        n = 0
        for q in self.belief.nbrs.get(station, ()):
            p = board.get(q)
            if p is not None and p.owner in friends and p.type in kinds:
                n += 1
        return n

    def _found(self, st: GameState, station: str, w: Worth) -> bool:
        """Does the enemy know where our flag on ``station`` stands: shown to it, or fewer of our blockers beside it
        than when play began, on the station it began on (their removal showed what they guarded)? L'Attaque seed 2
        against the bot before: the enemy sapper struck the two mines beside our flag, and an unknown captain walked
        in along the back row."""
        p = st.board[station]
        if p.public or p.known_to - self._friends:
            return True
        began = (self._walls or {}).get(p.uid)
        return began is not None and began[0] == station and self._walls_beside(st, station, w) < began[1]

    def _covered(self, board: Mapping[str, Any], station: str, kind: str) -> bool:
        """Is the empty ``station`` beside a piece of ours that stops a ``kind`` (beats it or trades with it)? An
        enemy stepping in there beside our flag is then removed on our turn, before it can attack: that door is
        shut. (L'Attaque seed 3 against the bot before: a known captain two steps off, the door open, our captain
        one step from covering it played elsewhere, and the look-ahead saw the door as open either way.)"""
        return self._ours_beside(board, station, self._stoppers[kind]) > 0

    def _movers_worth(self, st: GameState, my_movers: list[tuple[str, str]], foe_movers: list[tuple[str, str]]) -> float:
        """The last pieces that can move, worth more than their rank (the n-th last ``LAST_MOVERS / n``); a side left
        with none, or with its few all boxed in when its turn comes, loses then: scored as nearly that loss here,
        where the look-ahead ends a ply before the referee would say so."""
        mine, theirs = len(my_movers), len(foe_movers)
        score = _harmonic(mine) - _harmonic(theirs)
        if not self._stuck_loses:
            return score
        me = self.seat
        if not mine or mine <= 2 and st.turn != me and not st.has_legal_move(me):
            score -= WIN / 2
        if not theirs:
            score += WIN / 4  # a guess: some of its unknown pieces may move after all
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
        here: Any
        if self.classic:  # a sum of hashes: two pieces that swapped stations often count as the same arrangement
            here = sum(hash((s, u)) for s, u in b.where.items() if b.owner.get(u) in mine)
        else:
            here = frozenset((s, u) for s, u in b.where.items() if b.owner.get(u) in mine)
        self.visits[here] = self.visits.get(here, 0) + 1
        return here

    def _repeat_penalty(self, here: Any, m: Move) -> float:
        """A little against a move back into an arrangement of our own pieces we stood in before, the more the
        oftener: where nothing better shows within the look-ahead, the bot tries something new instead of going
        round in circles until the ply cap (a Dover destroyer sat in the enemy harbour's only entrance while the
        minesweeper waited behind it). An attack counts as staying (a bounce changes nothing)."""
        b = self.belief
        assert b is not None
        uid = b.where.get(m.frm)
        if uid is None or m.to in b.where:
            return REPEAT * self.visits.get(here, 0)
        if self.classic:
            return REPEAT * self.visits.get(here - hash((m.frm, uid)) + hash((m.to, uid)), 0)
        return REPEAT * self.visits.get(here - {(m.frm, uid)} | {(m.to, uid)}, 0)

    def _probe_worth(self, view: Mapping[str, Any], st: GameState, w: Worth) -> float:
        """What an attack on an unknown enemy piece gains this move for the stall (0 until STALL_FROM plies passed
        with no piece taken, then growing to STALL times the worth of our cheapest attacker): a count of the pieces
        on the board in each view is all it needs, so a host that sends views only with 'go' sees the same."""
        self._note_pieces(view)
        quiet = int(view.get("ply", 0)) - self._quiet_from - STALL_FROM
        if self.classic or quiet <= 0:
            return 0.0
        friends, value, takers = self._friends, w.value, w.takers
        cheapest = min((value[p.type] for p in st.board.values() if p.owner in friends and p.type in takers),
                       default=0.0)
        return STALL * cheapest * min(1.0, quiet / STALL_RAMP)

    def _approach(self, st: GameState, moves: list[Move], w: Worth, probe: float) -> dict[Move, float]:
        """A stalled game with nothing to probe (``probe``: what a probe gains now): each quiet step of one of our
        pieces that can take a flag that brings it nearer the nearest enemy piece (steps along the lines) gains
        APPROACH x ``probe``, times our cheapest such piece's worth over its own, so the cheap ones go first."""
        friends, value, takers, dist = self._friends, w.value, w.takers, w.distance
        out_sides = st.out
        foes = [dist[s] for s, p in st.board.items() if p.owner not in friends and p.owner not in out_sides]
        ours = [value[p.type] for p in st.board.values() if p.owner in friends and p.type in takers]
        if not foes or not ours:
            return {}
        cheapest = min(ours)
        out: dict[Move, float] = {}
        for m in moves:
            p = st.board.get(m.frm)
            if p is None or p.type not in takers or m.to in st.board:
                continue
            before = min(d.get(m.frm, 99) for d in foes)
            after = min(d.get(m.to, 99) for d in foes)
            if after < before:
                out[m] = APPROACH * probe * cheapest / max(value[p.type], 1e-9)
        return out

    def _note_pieces(self, view: Mapping[str, Any]) -> None:
        """Keep the ply the last piece was taken at: every view counts, a turn with one legal move too."""
        pieces = len(view.get("pieces", ()))
        if pieces != self._pieces_seen:
            self._pieces_seen, self._quiet_from = pieces, int(view.get("ply", 0))

    def _probes(self, st: GameState, m: Move) -> bool:
        """Is ``m`` an attack on an enemy piece whose kind we do not know?"""
        target = st.board.get(m.to)
        return target is not None and not self._friend(st, target.owner) and not (target.public
                                                                                   or self.seat in target.known_to)

    def _shuttle_penalty(self, m: Move) -> float:
        """A little against going on with a shuttle: the more moves it has, the more (the rule will stop it soon)."""
        run = self.run
        if run is None or m.frm not in run.squares or m.to not in run.squares or self.belief is None:
            return 0.0
        return 0.15 * run.length if self.belief.where.get(m.frm) == run.uid else 0.0


class FaceDownClassic(FaceDownBot):
    """``facedown-classic``: the player as it was before the deeper look (one move and the replies, the small guard,
    the last movers barely counted, no reading of move patterns), kept to measure the new one against."""

    name = "facedown-classic"
    classic = True
    levels = CLASSIC_LEVELS


def _blind_risk(blind: dict[str, float], base: float) -> float:
    """What the pieces of ours the enemy can attack unseen cost below ``base`` (``blind``: station -> the worst such
    an attack does): the worst counts most, each next one half as much as the one before, so a piece walked into
    danger costs something even beside a worse risk."""
    weight, risk = BLIND_ATTACK, 0.0
    for e in sorted(blind.values()):
        if e >= base:
            break
        risk += weight * (e - base)
        weight *= 0.5
    return risk
