"""Game state with hidden information: who stands where, who knows what, whose turn; judging one move at a time."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from .base import ALL, Piece, Removal, Reveal
from .base import Pending as _Pending
from .clash import clash_matrix
from .effects import after_clash, clash_outcome, open_stations
from .errors import GameOverError, IllegalMoveError, RulesError, SetupError
from .hooks import HOOKS
from .model import GameDef, MoveSpec
from .say import Say, note, say
from .setup import check_deployment
from .topology import topology_for

#: the audience of what every side may know, one tuple shared by every ruling of a long game
_EVERYONE = (ALL,)


class Move(NamedTuple):
    """A piece going from one station to another (onto an enemy piece, it is an attack)."""

    frm: str
    to: str

    def __str__(self) -> str:
        return f"{self.frm}-{self.to}"


@dataclass(frozen=True, slots=True)
class Result:
    """How the game ended: the winning sides (empty for a draw) and why."""

    winners: tuple[str, ...]
    reason: Say  # a ``verdict.*`` message object

    @property
    def draw(self) -> bool:
        return not self.winners

    def to_json(self) -> dict[str, Any]:
        return {"winners": list(self.winners), "draw": self.draw, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Ruling:
    """The full, unredacted judgement of one move; views.redact_ruling makes what each audience may see."""

    ply: int
    side: str
    kind: str  # "move" | "attack"
    frm: str
    to: str
    mover_uid: int
    mover_type: str
    defender_uid: int | None = None
    defender_type: str | None = None
    defender_side: str | None = None
    outcome: str | None = None  # attacker | defender | both | bounce
    removed: tuple[Removal, ...] = ()
    reveals: tuple[Reveal, ...] = ()
    notices: tuple[tuple[str, Say], ...] = ()  # (audience: 'all' or a side, message object)
    out: tuple[tuple[str, Say], ...] = ()  # (side, reason) knocked out by this ruling
    result: Result | None = None
    next_turn: str | None = None
    known: tuple[tuple[int, tuple[str, ...]], ...] = ()  # after the ruling, who may know the clash pieces ('all' = public)


@dataclass(frozen=True)
class Elimination:
    """A side put out of the game by the arbiter (a club's time rule), not by a move: who, why, and what followed."""

    side: str
    reason: Say
    removed: tuple[Removal, ...] = ()  # pieces that left the board with it (option ``out_pieces: removed``)
    notices: tuple[tuple[str, Say], ...] = ()
    out: tuple[tuple[str, Say], ...] = ()  # every side out because of it: this one, then any left with no move
    result: Result | None = None
    next_turn: str | None = None


def turn_order(game: GameDef, options: Mapping[str, Any]) -> tuple[str, ...]:
    """The order sides move in: as ``sides`` lists them (counter-clockwise round the table), or with option
    ``turn_order: clockwise`` the first side, then the others in reverse."""
    if options.get("turn_order", "counterclockwise") == "clockwise":
        return (game.sides[0], *reversed(game.sides[1:]))
    return game.sides


class GameState:
    """A game in progress: setup, then one move after another, judged by the game's rules and options."""

    def __init__(self, game: GameDef, options: Mapping[str, Any] | None = None) -> None:
        self.game = game
        self.options = game.resolve_options(options)
        self.topo = topology_for(game)
        matrix = clash_matrix(game, self.options)
        self.clash = {(a, d): o for a, row in matrix.items() for d, o in row.items()}
        self.hooks = tuple(HOOKS[name] for name in game.hooks)
        self.board: dict[str, Piece] = {}
        #: ids of the pieces on the board this state may change in place; None: all of them. A copy shares the
        #: pieces until one is changed (``own``): copying a board is the look-ahead's commonest step
        self.owned: set[int] | None = None
        self.phase = "setup"  # setup | play | over
        self.deployments: dict[str, dict[str, str]] = {}
        self.order = turn_order(game, self.options)
        self.turn = self.order[0]
        self.out: dict[str, Say] = {}  # side -> reason (a verdict.* message object)
        self.ply = 0
        self.quiet_plies = 0
        self.history: list[Ruling] = []
        self.result: Result | None = None
        self.hook_data: dict[str, Any] = {}
        #: piece id -> its move specs that hold under these options (options never change after the start; copies
        #: share this)
        self.active_moves: dict[str, tuple[MoveSpec, ...]] = {}

    # ------------------------------------------------------------------ setup
    def deploy(self, side: str, placement: Mapping[str, str]) -> None:
        """Register one side's deployment {station: piece id}; raises SetupError listing every defect."""
        if self.phase != "setup":
            raise SetupError([])  # pragma: no cover - guarded by callers
        problems = check_deployment(self.game, side, placement, self.options)
        if problems:
            raise SetupError(problems)
        self.deployments[side] = dict(placement)
        if all(s in self.deployments for s in self.game.sides):
            self._start()

    def _start(self) -> None:
        order = {s.id: i for i, s in enumerate(self.game.stations)}
        uid = 0
        for side in self.game.sides:
            for station in sorted(self.deployments[side], key=order.__getitem__):
                uid += 1
                self.board[station] = Piece(uid, self.deployments[side][station], side)
        self.phase = "play"
        self.turn = self.order[0]
        for hook in self.hooks:
            hook.start(self)
        self._settle_turn(None, [])

    # ------------------------------------------------------------------ queries
    def piece_at(self, station: str) -> Piece | None:
        return self.board.get(station)

    def active_sides(self) -> list[str]:
        return [s for s in self.game.sides if s not in self.out]

    def enemies(self, a: str, b: str) -> bool:
        return a != b and not self.game.ally(a, b)

    def destinations(self, station: str, attacks_only: bool = False) -> dict[str, MoveSpec]:
        """Every station the piece on ``station`` may legally go to now (empty or an enemy it may attack); with
        ``attacks_only``, only the enemies it may attack."""
        piece = self.board.get(station)
        if piece is None or self.phase != "play":
            return {}
        topo = self.topo
        if topo.kind_of[station].frozen:
            return {}
        specs = self.active_moves.get(piece.type)
        if specs is None:
            ptype = self.game.piece_by_id[piece.type]
            specs = self.active_moves[piece.type] = tuple(m for m in ptype.moves if m.when.holds(self.options))
        if not specs:
            return {}  # a piece that never moves (a bomb, a flag, a mine)
        board = self.board
        owner = piece.owner
        passable = open_stations(self.game, piece.type) or topo.passable
        out: dict[str, MoveSpec] = {}

        def consider_attack(target: str, spec: MoveSpec) -> None:
            if not spec.attack or target in out:
                return
            other = board[target]
            if other.owner == owner or not self.enemies(owner, other.owner) or other.owner in self.out:
                return  # a side's own or an ally's piece, or an obstacle left by a side that is out
            if self.clash[(piece.type, other.type)] == "illegal":
                return
            kind = topo.kind_of[target]
            if kind.shelter and piece.type not in kind.shelter_except_attackers and other.type not in kind.shelter_except_defenders:
                return
            out[target] = spec

        quiet = not attacks_only  # the stations a piece may only move to are not looked for when attacks are asked
        for spec in specs:
            if spec.turns:
                self._along_network(station, spec, passable, out, consider_attack, quiet)
            elif spec.max_steps == 1:  # one step to a neighbour along the spec's lines: most moves, so done here
                for n in topo.neighbours(spec.along)[station]:
                    if not passable[n]:
                        continue
                    other = board.get(n)
                    if other is None:
                        if quiet and not spec.attack_only:
                            out.setdefault(n, spec)
                    elif other.owner != owner:  # its own pieces it never attacks: not asked
                        consider_attack(n, spec)
            else:
                self._straight(station, spec, passable, out, consider_attack, quiet)
        if self.hooks and out:
            for target in list(out):
                for hook in self.hooks:
                    if hook.forbid(self, station, target) is not None:
                        del out[target]
                        break
        return out

    # the ways of moving further than a step: each adds the empty stations a spec reaches to ``out`` and hands
    # occupied ones to ``attack``
    def _straight(self, station: str, spec: MoveSpec, passable: Mapping[str, bool], out: dict[str, MoveSpec],
                  attack: Callable[[str, MoveSpec], None], quiet: bool = True) -> None:
        """Straight along one line, up to ``max_steps`` (exactly, with ``exact``), through empty stations (over
        occupied ones too, with ``over``)."""
        board = self.board
        limit = spec.max_steps
        for ray in self.topo.rays(spec.along)[station]:
            for steps, n in enumerate(ray, 1):
                if limit is not None and steps > limit:
                    break
                if not passable[n]:
                    break
                last = not spec.exact or steps == limit
                if n in board:
                    if last:
                        attack(n, spec)
                    if spec.over:
                        continue
                    break
                if last and quiet and not spec.attack_only:
                    out.setdefault(n, spec)

    def _along_network(self, station: str, spec: MoveSpec, passable: Mapping[str, bool], out: dict[str, MoveSpec],
                       attack: Callable[[str, MoveSpec], None], quiet: bool = True) -> None:
        """Any path over the network of the spec's lines, turning where they meet (an engineer on the railway),
        through empty stations (over occupied ones too, with ``over``), up to ``max_steps`` stations."""
        board = self.board
        limit = spec.max_steps
        seen = {station}
        frontier = deque([(station, 0)])
        nbrs = self.topo.neighbours(spec.along)
        while frontier:
            at, depth = frontier.popleft()
            if limit is not None and depth >= limit:
                continue
            for n in nbrs[at]:
                if n in seen or not passable[n]:
                    continue
                seen.add(n)
                if n in board:
                    attack(n, spec)
                    if spec.over:
                        frontier.append((n, depth + 1))
                else:
                    if quiet and not spec.attack_only:
                        out.setdefault(n, spec)
                    frontier.append((n, depth + 1))

    def legal_moves(self, side: str | None = None) -> list[Move]:
        """Every legal move of ``side`` (default: the side to move)."""
        side = side or self.turn
        if self.phase != "play":
            return []
        return [Move(s, t) for s, p in list(self.board.items()) if p.owner == side for t in self.destinations(s)]

    def legal_specs(self, side: str | None = None) -> dict[Move, MoveSpec]:
        """Every legal move of ``side`` (default: the side to move) with the move spec that allows it: look-ahead
        passes the spec to ``apply`` on a copy of this very position, which then need not judge the move again."""
        side = side or self.turn
        if self.phase != "play":
            return {}
        return {Move(s, t): spec for s, p in list(self.board.items()) if p.owner == side
                for t, spec in self.destinations(s).items()}

    def iter_attacks(self, side: str) -> Iterator[Move]:
        """The legal moves of ``side`` that attack a piece (look-ahead asks this for the replies that hurt)."""
        for move, _spec in self.attack_specs(side):
            yield move

    def attack_specs(self, side: str) -> Iterator[tuple[Move, MoveSpec]]:
        """``iter_attacks`` with the move spec that allows each (see ``legal_specs``)."""
        for s, p in list(self.board.items()):
            if p.owner == side:
                for t, spec in self.destinations(s, attacks_only=True).items():
                    yield Move(s, t), spec

    def has_legal_move(self, side: str) -> bool:
        """Whether ``side`` has a legal move now. Asked after every move (look-ahead asks it for each position), so
        the pieces with an empty or enemy station next to them are asked first, the pieces boxed in by their own after
        (one may still jump or fly out): the answer is the same, found sooner."""
        if self.phase != "play":
            return False
        board = self.board
        nbrs = self.topo.neighbours(self.topo.all_kinds)
        boxed = []
        for s, p in list(board.items()):
            if p.owner != side:
                continue
            for n in nbrs[s]:
                q = board.get(n)
                if q is None or q.owner != side:
                    if self.destinations(s):
                        return True
                    break
            else:
                boxed.append(s)
        return any(self.destinations(s) for s in boxed)

    def why_illegal(self, move: Move) -> Say | None:
        """None if ``move`` is legal for the side to move, else why not, as a message object (``reason.*`` code and
        its params: stations, the piece type, the rule). It names the mover's piece: views.refusal_for decides who
        may hear it."""
        if self.phase == "setup":
            return say("reason.not_started")
        if self.phase == "over":
            return say("reason.game_over")
        frm, to = move
        if frm not in self.topo.kind_of:
            return say("reason.no_station", station=frm)
        if to not in self.topo.kind_of:
            return say("reason.no_station", station=to)
        piece = self.board.get(frm)
        if piece is None:
            return say("reason.no_piece", station=frm)
        if piece.owner != self.turn:
            return say("reason.not_your_turn", side=self.turn, owner=piece.owner, station=frm)
        if to in self.destinations(frm):
            return None
        for hook in self.hooks:
            reason = hook.forbid(self, frm, to)
            if reason is not None:
                return reason
        ptype = self.game.piece_by_id[piece.type]
        if not ptype.movable:
            return say("reason.piece_immobile", piece=ptype.id, station=frm)
        if self.topo.kind_of[frm].frozen:
            return say("reason.station_frozen", station=frm, where=say(f"kind.{self.topo.kind_of[frm].id}"))
        target = self.board.get(to)
        if target is not None and not self.enemies(piece.owner, target.owner):
            return say("reason.own_piece" if target.owner == piece.owner else "reason.ally_piece", station=to)
        if target is not None and target.owner in self.out:
            return say("reason.obstacle", station=to, owner=target.owner)
        if not self.topo.passable[to]:
            return say("reason.impassable", station=to)
        if target is not None:
            kind = self.topo.kind_of[to]
            if kind.shelter:
                return say("reason.sheltered", station=to, where=say(f"kind.{kind.id}"))
            if self.clash[(piece.type, target.type)] == "illegal":
                return say("reason.may_not_attack", piece=ptype.id, station=to)
        return say("reason.cannot_reach", piece=ptype.id, **{"from": frm, "to": to})

    # ------------------------------------------------------------------ judging
    def legal_spec(self, move: Move | tuple[str, str]) -> MoveSpec | None:
        """The move spec by which ``move`` is legal for the side to move, or None if it is not: one pass of the move
        generator (a referee that journals a move before playing it checks with this, then passes it to apply)."""
        frm, to = move
        piece = self.board.get(frm) if self.phase == "play" else None
        return self.destinations(frm).get(to) if piece is not None and piece.owner == self.turn else None

    def apply(self, move: Move | tuple[str, str], *, spec: MoveSpec | None = None) -> Ruling:
        """Judge and play one move of the side to move; raises IllegalMoveError (nothing changes) if it is not legal.
        ``spec``: what ``legal_spec(move)`` just said of this very position (saves judging it twice)."""
        move = Move(*move)
        if self.phase == "over":
            raise GameOverError("the game is over")
        frm, to = move
        side = self.turn
        # the move generator once; only a refused move pays for working out the reason
        spec = spec or self.legal_spec(move)
        if spec is None:
            raise IllegalMoveError(self.why_illegal(move) or say("reason.not_legal", **{"from": frm, "to": to}))
        mover = self.own(frm)  # both may be changed below (shown, known): no longer shared with a copy
        defender = self.own(to) if to in self.board else None
        pend = _Pending()
        if spec.reveal and not mover.public:
            mover.public = True
            pend.reveals.append(Reveal(to, mover.uid, mover.owner, mover.type, (ALL,)))
        outcome = None
        if defender is None:
            del self.board[frm]
            self.board[to] = mover
            self.quiet_plies += 1
        else:
            outcome = clash_outcome(self, to, mover, defender, spec, self.clash[(mover.type, defender.type)])
            self._resolve_clash(frm, to, mover, defender, outcome, pend)
            after_clash(self, frm, to, mover, defender, spec, outcome, pend)
        self.ply += 1
        ruling_base = dict(
            ply=self.ply, side=side, kind="attack" if defender else "move", frm=frm, to=to,
            mover_uid=mover.uid, mover_type=mover.type,
            defender_uid=defender.uid if defender else None,
            defender_type=defender.type if defender else None,
            defender_side=defender.owner if defender else None,
            outcome=outcome,
        )
        draft = Ruling(**ruling_base, removed=tuple(pend.removed), reveals=tuple(pend.reveals))
        for hook in self.hooks:
            hook.after(self, draft, pend)
        knocked = self._knock_out(pend.removed)
        for out_side, why in pend.out:
            if out_side not in self.out:
                self.out[out_side] = why
                knocked.append((out_side, why))
        late_out = self._settle_turn(draft, knocked, pend)
        ruling = Ruling(
            **ruling_base,
            removed=tuple(pend.removed),
            reveals=tuple(pend.reveals),
            notices=tuple(pend.notices),
            out=tuple(knocked) + tuple(late_out),
            result=self.result,
            next_turn=None if self.result else self.turn,
            known=tuple((p.uid, _EVERYONE if p.public else tuple(sorted(p.known_to))) for p in (mover, defender) if p is not None),
        )
        self.history.append(ruling)
        return ruling

    def _resolve_clash(self, frm: str, to: str, mover: Piece, defender: Piece, outcome: str, pend: _Pending) -> None:
        open_reveal = self.options.get("reveal", "open") == "open"
        if open_reveal:
            # seeds: 將兩棋公開 - both pieces are shown openly at the table, so everyone may know them from now on
            for p, at in ((mover, frm), (defender, to)):
                if not p.public:
                    p.public = True
                    pend.reveals.append(Reveal(at, p.uid, p.owner, p.type, (ALL,)))
        if outcome in ("attacker", "both", "defender"):
            self.quiet_plies = 0
        else:
            self.quiet_plies += 1
        if outcome == "attacker":
            pend.removed.append(Removal(to, defender.uid, defender.owner, defender.type))
            del self.board[to]
            if self.options.get("winner_advances", True):
                del self.board[frm]
                self.board[to] = mover
        elif outcome == "defender":
            pend.removed.append(Removal(frm, mover.uid, mover.owner, mover.type))
            del self.board[frm]
        elif outcome == "both":
            pend.removed.append(Removal(frm, mover.uid, mover.owner, mover.type))
            pend.removed.append(Removal(to, defender.uid, defender.owner, defender.type))
            del self.board[frm]
            del self.board[to]
    def _knock_out(self, removed: list[Removal]) -> list[tuple[str, Say]]:
        knocked = []
        for r in removed:
            if r.type in self.game.win.capture and r.owner not in self.out:
                why = say("verdict.piece_lost", piece=r.type, side=r.owner)
                self.out[r.owner] = why
                knocked.append((r.owner, why))
        return knocked

    def _finish(self, winners: tuple[str, ...], reason: Say) -> None:
        self.result = Result(winners, reason)
        self.phase = "over"

    def _alliances_left(self) -> list[frozenset[str]]:
        active = set(self.active_sides())
        return [g for g in self.game.alliances if g & active]

    def _settle_turn(self, ruling: Ruling | None, knocked: list[tuple[str, Say]], pend: _Pending | None = None) -> list[tuple[str, Say]]:
        """After a ruling: end the game if it is decided, else clear the pieces of sides that are out (option
        ``out_pieces: removed``) and hand the turn to the next side that can move. A side with no legal move is out,
        or passes (option ``no_moves``: ``pass`` always, ``pass_while_ally`` while an ally is still in). Returns the sides put out on the way
        for having no legal move, as (side, reason)."""
        late_out: list[tuple[str, Say]] = []
        left = self._alliances_left()
        if len(left) == 1:
            winners = tuple(s for s in self.game.sides if s in left[0])
            reason = knocked[0][1] if knocked else say("verdict.others_out")
            self._finish(winners, reason)
            return late_out
        if not left:
            self._finish((), say("verdict.all_out"))
            return late_out
        self._clear_out_sides(pend)
        limit = self.options.get("no_capture_draw")
        if limit is not None and self.quiet_plies >= limit:
            self._finish((), say("verdict.no_capture", plies=limit))
            return late_out
        order = self.order
        no_moves = self.options.get("no_moves", self.game.win.no_moves)
        advance = ruling is not None
        for _ in range(len(order) * 2):
            if advance or self.turn in self.out:
                idx = order.index(self.turn)
                for k in range(1, len(order) + 1):
                    cand = order[(idx + k) % len(order)]
                    if cand not in self.out:
                        self.turn = cand
                        break
            advance = True
            if self.has_legal_move(self.turn):
                return late_out
            if not any(self.has_legal_move(s) for s in self.active_sides()):
                self._finish((), say("verdict.nobody_moves"))
                return late_out
            ally_in = any(s != self.turn and s not in self.out and self.game.ally(s, self.turn) for s in order)
            if no_moves == "pass" or (no_moves == "pass_while_ally" and ally_in):
                if pend is not None:
                    pend.notices.append((ALL, say("notice.passes", side=self.turn)))
                continue
            self.out[self.turn] = say("verdict.no_move", side=self.turn)
            late_out.append((self.turn, self.out[self.turn]))
            left = self._alliances_left()
            if len(left) == 1:
                self._finish(tuple(s for s in order if s in left[0]), say("verdict.no_move", side=self.turn))
                return late_out
            self._clear_out_sides(pend)
        # every side passed twice without a move: nobody can move
        self._finish((), say("verdict.nobody_moves"))  # pragma: no cover
        return late_out  # pragma: no cover

    def _clear_out_sides(self, pend: _Pending | None) -> None:
        """With option ``out_pieces: removed``, take every piece of a side that is out off the board (as removals of
        the ruling, so the referee says which stations to clear)."""
        if self.options.get("out_pieces", "obstacles") != "removed" or not self.out:
            return
        for station in self.game.station_ids:
            p = self.board.get(station)
            if p is not None and p.owner in self.out:
                del self.board[station]
                if pend is not None:
                    pend.removed.append(Removal(station, p.uid, p.owner, p.type))

    def end(self, winners: tuple[str, ...] | list[str], reason: Say | str) -> Result:
        """End the game now with this result (the arbiter's ruling, a flag fall on the clock): ``winners`` (empty:
        a draw) and why (a message object; a person's own words become ``verdict.arbiter``). Raises RulesError if
        the game is already over or a winner is not a side of this game."""
        if self.phase == "over":
            raise GameOverError("the game is over")
        unknown = [w for w in winners if w not in self.game.sides]
        if unknown:
            raise RulesError(f"unknown side(s) {unknown}; sides are {', '.join(self.game.sides)}")
        self._finish(tuple(winners), note(reason))
        assert self.result is not None
        return self.result

    def put_out(self, side: str, reason: Say | str) -> Elimination:
        """Put ``side`` out of the game without a move (the arbiter applying a club's time rule); the game goes on
        as after a ruling that knocked it out. Raises RulesError if the game is not in play or the side is out.
        ``reason``: a message object (a person's own words become ``verdict.arbiter``)."""
        reason = note(reason)
        if self.phase != "play":
            raise GameOverError("the game is over") if self.phase == "over" else RulesError("the game has not started")
        if side not in self.game.sides:
            raise RulesError(f"{self.game.id} has no side {side!r}; sides are {', '.join(self.game.sides)}")
        if side in self.out:
            raise RulesError(f"{side} is already out ({self.out[side].get('code')})")
        pend = _Pending()
        self.out[side] = reason
        late_out = self._settle_turn(None, [(side, reason)], pend)
        return Elimination(
            side, reason, removed=tuple(pend.removed), notices=tuple(pend.notices),
            out=((side, reason), *late_out), result=self.result, next_turn=None if self.result else self.turn,
        )

    # ------------------------------------------------------------------ copying
    def copy(self) -> GameState:
        """An independent copy (same game and options) for look-ahead and tests. The two share their pieces until
        one of them changes one: each then changes its own copy of it (``own``)."""
        new = object.__new__(GameState)
        new.__dict__.update(self.__dict__)
        new.board = dict(self.board)
        self.owned = set()
        new.owned = set()
        new.deployments = dict(self.deployments)  # each side's placement is replaced whole, never changed in place
        new.out = dict(self.out)
        new.history = list(self.history)
        new.hook_data = {k: (v.copy() if hasattr(v, "copy") else v) for k, v in self.hook_data.items()}
        return new

    def own(self, station: str) -> Piece:
        """The piece on ``station``, to be changed (shown, made known): one still shared with a copy of this state
        is copied first, so the copy never sees the change. Rule code changes a piece on the board only through
        this."""
        piece = self.board[station]
        owned = self.owned
        if owned is None or id(piece) in owned:
            return piece
        piece = self.board[station] = piece.copy()
        owned.add(id(piece))
        return piece

    def occupancy(self) -> dict[str, str]:
        """Station -> owning side, for every occupied station (what an occupancy-only board should read)."""
        return {s: p.owner for s, p in self.board.items()}
