"""Rebuilds a game from its journaled events by replaying them through the rules engine (pure: no I/O).

Replay rules, in journal order:

- ``game`` (first, once): a new game with the journaled game id and options; the caller may hand over the game as
  the journal kept its file (``gamefile.journaled``), else the game id is loaded.
- ``deploy``: one side's deployment; play starts when every side has deployed.
- ``move``: judged by the engine; it must be the journaled side's turn and a legal move.
- ``illegal``, ``arbiter`` pause/resume, away/back (a remote seat's link lost and back): a record only; they change
  nothing.
- ``arbiter`` repair: the arbiter's decision to go on from the last intact event of a damaged game; the journal
  leaves the damaged events it set aside out of the game's events (controller.referee.chain), so it changes nothing.
- ``arbiter`` undo: takes back the last accepted move (and any end of the game recorded after it: the game
  is back in play where it stood before that move). The undone move is dropped, never replayed.
- ``arbiter`` end: the arbiter's result ends the game (it overrides a result the engine reached).
- ``arbiter`` out: the arbiter puts a side out of the game (a club's time rule); the engine goes on as after a
  ruling that knocked it out. An undo takes back the last move together with any side put out after it.
- ``result``: ends the game if it is still running; if the engine has already ended it, the journaled
  winners must agree with the engine's.
- ``clock`` (optional, in ``move`` and ``arbiter`` events of a game on a club clock): each side's seconds left just
  after that event. It never changes the game; :func:`last_clock` gives the newest reading, from which a resumed
  game's clock goes on.
- ``reaction`` answer: a seat takes or declines an optional reaction the engine offered it (``reactions: ask``);
  the offer must be open and the seat's, as when it was answered. An offer nobody answered lapsed with the next
  move, which the engine does again by itself: a lapse is never journaled. An undo takes back the last move with
  the answers given after it.
- ``reaction`` auto: a seat's standing choice to take its optional reactions without being asked (kept by undo).

An event that does not replay raises ReplayError naming its sequence number.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from controller.errors import FaceDownError
from controller.messages import refusal_words
from controller.rules import GameDef, GameState, Result, RulesError, Ruling, new_game
from controller.rules.say import note

from .journal import Event


class ReplayError(FaceDownError):
    """A journaled event does not replay through the engine; ``seq`` is the event's sequence number."""

    def __init__(self, seq: int | None, message: str) -> None:
        self.seq = seq
        super().__init__(f"event {seq}: {message}" if seq is not None else message)


def effective(events: Iterable[Event]) -> list[Event]:
    """The events that shape the game, in order: the game, deployments, moves not taken back and ends.

    Undo events are resolved here (each removes the last move and any end recorded after it); illegal attempts,
    pauses and resumes are left out.
    """
    out: list[Event] = []
    for ev in events:
        if ev.kind == "game":
            if out:
                raise ReplayError(ev.seq, "a second game event: a game starts only once")
            out.append(ev)
            continue
        if not out:
            raise ReplayError(ev.seq, f"a {ev.kind} event before the game event")
        if ev.kind in ("deploy", "move", "result", "reaction"):
            out.append(ev)
        elif ev.kind == "arbiter":
            action = ev.data.get("action")
            if action in ("end", "out"):
                out.append(ev)
            elif action == "undo":
                standing: list[Event] = []  # a seat's standing choice outlives the move it followed
                while out and out[-1].kind in ("result", "arbiter", "reaction"):
                    gone = out.pop()
                    if gone.kind == "reaction" and gone.data.get("action") == "auto":
                        standing.append(gone)
                if out[-1].kind != "move":
                    raise ReplayError(ev.seq, "undo with no accepted move to take back")
                out.pop()
                out.extend(reversed(standing))
            elif action not in ("pause", "resume", "repair", "away", "back", "ask_undo"):
                raise ReplayError(ev.seq, f"unknown arbiter action {action!r}")
        elif ev.kind != "illegal":
            raise ReplayError(ev.seq, f"unknown event kind {ev.kind!r}")
    if not out:
        raise ReplayError(None, "no events: a journaled game starts with its game event")
    return out


def _result(seq: int, data: Any) -> Result:
    if not isinstance(data, dict) or not isinstance(data.get("winners"), list) or not isinstance(data.get("reason"), str | dict):
        raise ReplayError(seq, f"a result needs 'winners' (a list) and 'reason' (a message object), not {data!r}")
    return Result(tuple(data["winners"]), note(data["reason"]))


def _end(state: GameState, result: Result, seq: int) -> None:
    try:
        state.end(result.winners, result.reason)
    except RulesError as exc:
        raise ReplayError(seq, f"cannot end the game: {exc}") from None


def _start(ev: Event, gdef: GameDef | None = None) -> GameState:
    game = ev.data.get("game")
    if not isinstance(game, str):
        raise ReplayError(ev.seq, f"the game event names no game ({game!r})")
    if gdef is not None and gdef.id != game:
        raise ReplayError(ev.seq, f"the game event names {game!r}, the game file kept with it is {gdef.id!r}")
    try:
        return new_game(gdef if gdef is not None else game, ev.data.get("options") or {})
    except RulesError as exc:
        raise ReplayError(ev.seq, f"cannot start {game!r}: {exc}") from None


def _step(state: GameState, ev: Event) -> Ruling | None:
    """Replay one effective event onto ``state``; the ruling if it was a move."""
    data = ev.data
    if ev.kind == "deploy":
        side = data.get("side")
        if state.phase != "setup":
            raise ReplayError(ev.seq, f"{side} deploys after play has started")
        if side not in state.game.sides:
            raise ReplayError(ev.seq, f"no side {side!r} in {state.game.id} (sides: {', '.join(state.game.sides)})")
        if side in state.deployments:
            raise ReplayError(ev.seq, f"{side} has already deployed")
        placement = data.get("placement")
        if not isinstance(placement, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in placement.items()):
            raise ReplayError(ev.seq, f"{side}'s deployment should map stations to pieces: the event is damaged")
        try:
            state.deploy(side, data.get("placement") or {})
        except RulesError as exc:
            raise ReplayError(ev.seq, f"{side}'s deployment is refused: {exc}") from None
        return None
    if ev.kind == "move":
        side, frm, to = data.get("side"), data.get("from"), data.get("to")
        if not all(isinstance(x, str) for x in (side, frm, to)):
            missing = [k for k in ("side", "from", "to") if not isinstance(data.get(k), str)]
            raise ReplayError(ev.seq, f"the move event has no {' or '.join(repr(k) for k in missing)}: it is damaged")
        if state.phase == "setup":
            raise ReplayError(ev.seq, f"{side} moves {frm}-{to} before every side has deployed")
        if state.phase == "over":
            raise ReplayError(ev.seq, f"{side} moves {frm}-{to} after the game is over")
        if side != state.turn:
            raise ReplayError(ev.seq, f"{side} moves {frm}-{to} but it is {state.turn}'s turn")
        try:
            return state.apply((frm, to))
        except RulesError as exc:
            raise ReplayError(ev.seq, f"the engine refuses {side}'s move {frm}-{to}: {_words(exc, state.game)}") from None
    if ev.kind == "reaction":
        _react(state, ev)
        return None
    if ev.kind == "arbiter" and data.get("action") == "out":
        try:
            reason = data.get("reason")
            state.put_out(str(data.get("side")), reason if isinstance(reason, dict) else str(reason))
        except RulesError as exc:
            raise ReplayError(ev.seq, f"the arbiter cannot put {data.get('side')} out: {exc}") from None
        return None
    if ev.kind == "arbiter":  # only "end" reaches here
        _end(state, _result(ev.seq, data.get("result")), ev.seq)
        return None
    if ev.kind == "result":
        result = _result(ev.seq, data)
        if state.result is None:
            _end(state, result, ev.seq)
        elif set(state.result.winners) != set(result.winners):
            said = ", ".join(result.winners) or "a draw"
            found = ", ".join(state.result.winners) or "a draw"
            raise ReplayError(ev.seq, f"the journal's result says {said} but the replayed game ended with {found}")
        return None
    raise ReplayError(ev.seq, f"unexpected {ev.kind} event")  # pragma: no cover - effective() filters


def _words(exc: RulesError, game: GameDef) -> str:
    """The engine's refusal in words; its code when the words cannot be made (a damaged event's odd values)."""
    from controller.messages import MessageError

    try:
        return refusal_words(exc, game)
    except MessageError:
        reason = getattr(exc, "reason", None)
        return str(reason.get("code")) if isinstance(reason, dict) else str(exc)


def _react(state: GameState, ev: Event) -> None:
    from controller.rules.reactions import answer, set_auto

    data = ev.data
    side = data.get("side")
    if side not in state.game.sides:
        raise ReplayError(ev.seq, f"no side {side!r} in {state.game.id} (sides: {', '.join(state.game.sides)})")
    try:
        if data.get("action") == "auto":
            set_auto(state, side, bool(data.get("auto")))
            return
        if state.phase != "play":
            raise ReplayError(ev.seq, f"{side} answers a reaction offer while the game is not in play")
        offer = data.get("offer")
        if not isinstance(offer, int) or isinstance(offer, bool):
            raise ReplayError(ev.seq, f"a reaction answer names its offer by number, not {offer!r}")
        answer(state, side, offer, bool(data.get("accept")))
    except RulesError as exc:
        raise ReplayError(ev.seq, f"{side}'s reaction does not replay: {exc}") from None


def rebuild(events: Iterable[Event], game: GameDef | None = None) -> GameState:
    """The game state the journaled events lead to (``game``: the game as its kept file says; else by its id)."""
    seq = effective(events)
    state = _start(seq[0], game)
    for ev in seq[1:]:
        _step(state, ev)
    return state


def rulings(events: Iterable[Event], game: GameDef | None = None) -> Iterator[tuple[Ruling, GameState]]:
    """Each accepted move's ruling (undone moves left out) with the game state just after it.

    Linear in the game's length: the moves are applied to ONE state, which is handed out after each ruling and
    changes when the iteration goes on. Read what you need from it (a view, a few pieces) before asking for the
    next ruling, or ``copy()`` it to keep it (a copy costs O(plies) itself: copying at every ply is quadratic)."""
    seq = effective(events)
    state = _start(seq[0], game)
    for ev in seq[1:]:
        ruling = _step(state, ev)
        if ruling is not None:
            yield ruling, state



def iter_replay_steps(events: Sequence[Event], audience: str, game: GameDef | None = None) -> Iterator[dict[str, Any]]:
    """The whole game as ``audience`` sees it after it: the board once every side has deployed (if any side did),
    then each accepted move's ruling (redacted as after the game) with the board just after it.

    One pass over the journal applying each move to one state: O(plies) time, and O(1) memory beyond the step
    being handed out (a consumer that encodes each step as it comes never holds the game twice)."""
    from controller.rules import redact_ruling, view

    first_move = next((i for i, e in enumerate(events) if e.kind == "move"), len(events))
    if first_move > 1:
        yield {"ruling": None, "view": view(rebuild(events[:first_move], game), audience)}
    for ruling, state in rulings(events, game):
        yield {"ruling": redact_ruling(ruling, audience, game_over=True), "view": view(state, audience)}


def replay_steps(events: Sequence[Event], audience: str, game: GameDef | None = None) -> list[dict[str, Any]]:
    """:func:`iter_replay_steps` as a list (``game``: the journal's kept game file, as for :func:`rebuild`)."""
    return list(iter_replay_steps(events, audience, game))

def paused(events: Iterable[Event]) -> bool:
    """Was the game left paused by the arbiter (a pause not followed by a resume)?"""
    state = False
    for ev in events:
        if ev.kind == "arbiter" and ev.data.get("action") in ("pause", "resume"):
            state = ev.data["action"] == "pause"
    return state


def last_clock(events: Iterable[Event]) -> dict[str, float] | None:
    """The game clock's newest journaled reading (each side's seconds left), None if nothing was played on a clock.

    Journal order, not the effective game: an undo carries the reading of the moment it was made, which is the clock
    the players had then (undo hands the move back, not the time)."""
    reading = None
    for ev in events:
        clock = ev.data.get("clock") if ev.kind in ("move", "arbiter") else None
        if isinstance(clock, dict) and clock:
            reading = {str(k): float(v) for k, v in clock.items()}
    return reading
