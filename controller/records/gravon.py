"""Gravon Stratego records ("strados2" XML files from gravon.de): read, replay through the rules engine, write.

Squares: Gravon columns ``A B C D E F G H I K`` (there is no ``J``) and rows ``1``-``9`` with ``:`` for row 10;
FaceDown stations are ``a1`` .. ``j10``, so ``K:`` is ``j10``. Row 1 is Red's back row in both.

>>> station_of("K:"), square_of("j10"), station_of("E4")
('j10', 'K:', 'e4')
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any
from xml.sax.saxutils import escape, quoteattr

from controller.messages import refusal_words
from controller.rules import GameState, RulesError, load_game, new_game

from . import RecordError

if TYPE_CHECKING:
    from controller.referee.journal import Event, Journal

COLUMNS = "ABCDEFGHIK"
FILES = "abcdefghij"
ROWS = "123456789:"
SIDES = ("red", "blue")
#: Gravon's piece letters in order; Red uses B..M, Blue the same order twelve letters later (N..Y).
PIECES = ("bomb", "spy", "scout", "miner", "sergeant", "lieutenant", "captain", "major", "colonel", "general", "marshal", "flag")
RED_LETTERS = "BCDEFGHIJKLM"
BLUE_LETTERS = "NOPQRSTUVWXY"
EMPTY = "A"
LAKE = "_"
LAKES = frozenset({"c5", "d5", "g5", "h5", "c6", "d6", "g6", "h6"})
#: Gravon game types FaceDown can replay, and the FaceDown game each is played as.
GAME_FOR_TYPE = {"classic": "stratego", "classicfree": "stratego", "barrage": "stratego_barrage"}
TYPE_FOR_GAME = {"stratego": "classic", "stratego_barrage": "barrage"}
#: Gravon ``result type`` codes (see the corpus README) and how FaceDown words them.
RESULT_TYPES = {
    0: "the loser could not move", 1: "flag captured", 2: "neither player could move", 3: "forfeit or resignation",
    4: "tie agreed", 10: "both players missing", 11: "a player's clock ran out", 12: "the game clock ran out",
    13: "a player's clock ran out while that player was missing", 14: "opponent missing",
}

_LETTER = {**{c: ("red", p) for c, p in zip(RED_LETTERS, PIECES, strict=True)},
           **{c: ("blue", p) for c, p in zip(BLUE_LETTERS, PIECES, strict=True)}}
_LETTER_OF = {v: k for k, v in _LETTER.items()}


@dataclass
class GravonGame:
    """One Gravon game: its type, the board before the first move, the moves (as FaceDown stations), players and result."""

    type: str
    field: str
    moves: list[tuple[str, str]] = field(default_factory=list)
    players: tuple[str, str] = ("Player 1", "Player 2")
    result_type: int | None = None
    winner: int | None = None  # 1 Red, 2 Blue, 3 draw
    file: str = "<gravon>"
    spacer: str = " "  # the whitespace-only line the archive writes before <field> (" " or "  ")

    @property
    def game(self) -> str:
        """The FaceDown game this record is played as."""
        if self.type not in GAME_FOR_TYPE:
            raise RecordError(f"{self.file}: game type {self.type!r} has no FaceDown game (known: {', '.join(GAME_FOR_TYPE)})")
        return GAME_FOR_TYPE[self.type]

    def winners(self) -> list[str]:
        """The winning sides the record states ([] for a draw)."""
        return [] if self.winner in (None, 3) else [SIDES[self.winner - 1]]


# ---------------------------------------------------------------------- squares
def station_of(square: str, where: str = "square") -> str:
    """The FaceDown station of a Gravon square (``A1`` -> ``a1``, ``K:`` -> ``j10``); RecordError if it is not one."""
    if len(square) != 2 or square[0] not in COLUMNS or square[1] not in ROWS:
        hint = " (Gravon has no column J: the last column is K)" if square[:1] == "J" else ""
        raise RecordError(f"{where}: {square!r} is not a Gravon square (a column {COLUMNS} and a row 1-9 or ':'){hint}")
    return f"{FILES[COLUMNS.index(square[0])]}{ROWS.index(square[1]) + 1}"


def square_of(station: str) -> str:
    """The Gravon square of a FaceDown station (``j10`` -> ``K:``)."""
    if len(station) < 2 or station[0] not in FILES or not station[1:].isdigit() or not 1 <= int(station[1:]) <= 10:
        raise RecordError(f"station {station!r} is not on the Stratego board (a1..j10)")
    return f"{COLUMNS[FILES.index(station[0])]}{ROWS[int(station[1:]) - 1]}"


def _station_at(index: int) -> str:
    return f"{FILES[index % 10]}{index // 10 + 1}"


# ---------------------------------------------------------------------- reading
def read(path: str | Path) -> GravonGame:
    """Read one Gravon XML file."""
    path = Path(path)
    from controller.textfiles import InputFileError, read_text

    try:
        text = read_text(path, "Gravon file")
    except InputFileError as exc:
        raise RecordError(str(exc)) from None
    return parse(text, str(path))


def parse(text: str, file: str = "<gravon>") -> GravonGame:
    """Parse the text of a Gravon XML file; ``file`` names it in error messages."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError as exc:
        line, col = exc.position
        raise RecordError(f"{file}: line {line}, column {col + 1}: not well-formed XML") from None
    if root.tag == "stratego" and len(root.findall("game")) > 1:
        raise RecordError(f"{file}: holds {len(root.findall('game'))} games, and a Gravon file is one game: nothing "
                          "was imported (split it into one file per game)")
    game = root if root.tag == "game" else root.find("game")
    if root.tag not in ("stratego", "game") or game is None:
        raise RecordError(f"{file}: expected a <stratego> document with a <game> element, found <{root.tag}>")
    gtype = game.get("type")
    if not gtype:
        raise RecordError(f"{file}: <game> has no type attribute")
    fld = game.find("field")
    content = fld.get("content") if fld is not None else None
    if content is None:
        raise RecordError(f"{file}: <field content=...> is missing")
    if len(content) != 100:
        raise RecordError(f"{file}: <field content>: expected 100 characters (squares A1..K:), got {len(content)}")
    for i, ch in enumerate(content):
        station = _station_at(i)
        if station in LAKES:
            if ch != LAKE:
                raise RecordError(f"{file}: <field content>: character {i + 1} ({square_of(station)}) is a lake and must be '_', got {ch!r}")
        elif ch != EMPTY and ch not in _LETTER:
            raise RecordError(f"{file}: <field content>: character {i + 1} ({square_of(station)}): unknown piece letter {ch!r} "
                              f"(Red {RED_LETTERS}, Blue {BLUE_LETTERS}, empty {EMPTY})")
    moves: list[tuple[str, str]] = []
    for n, el in enumerate(game.iter("move"), 1):
        where = f"{file}: move {n}"
        if el.get("id") != str(n):
            raise RecordError(f"{where}: expected id=\"{n}\", got {el.get('id')!r}")
        src, dst = el.get("source"), el.get("target")
        if src is None or dst is None:
            raise RecordError(f"{where}: needs both source and target")
        moves.append((station_of(src, f"{where} source"), station_of(dst, f"{where} target")))
    names = {p.get("id"): (p.text or "") for p in game.iter("player")}
    players = (names.get("1", "Player 1"), names.get("2", "Player 2"))
    result_type = winner = None
    res = game.find("result")
    if res is not None:
        result_type = _int_attr(res, "type", f"{file}: <result>")
        winner = _int_attr(res, "winner", f"{file}: <result>")
        if winner not in (1, 2, 3):
            raise RecordError(f"{file}: <result winner=...> must be 1 (Red), 2 (Blue) or 3 (draw), got {winner}")
    spacer = re.search(r"<game[^>]*>\r?\n([ \t]*)\r?\n", text)
    return GravonGame(gtype, content, moves, players, result_type, winner, file, spacer.group(1) if spacer else " ")


def _int_attr(el: ET.Element, name: str, where: str) -> int:
    raw = el.get(name)
    if raw is None or not raw.lstrip("-").isdigit():
        raise RecordError(f"{where}: attribute {name} must be a whole number, got {raw!r}")
    return int(raw)


def placements(game: GravonGame) -> dict[str, dict[str, str]]:
    """Each side's deployment {station: piece id} from the record's board; a piece outside its side's four rows is an error."""
    out: dict[str, dict[str, str]] = {"red": {}, "blue": {}}
    for i, ch in enumerate(game.field):
        if ch in (EMPTY, LAKE):
            continue
        side, piece = _LETTER[ch]
        out[side][_station_at(i)] = piece
    return out


def field_of(deployments: Mapping[str, Mapping[str, str]]) -> str:
    """The 100-character Gravon board of two deployments (the inverse of ``placements``)."""
    cells = [LAKE if _station_at(i) in LAKES else EMPTY for i in range(100)]
    index = {_station_at(i): i for i in range(100)}
    for side in SIDES:
        for station, piece in deployments.get(side, {}).items():
            if station not in index:
                raise RecordError(f"{side}'s deployment: station {station!r} is not on the Stratego board")
            if (side, piece) not in _LETTER_OF:
                raise RecordError(f"{side}'s deployment: {piece!r} on {station} has no Gravon letter")
            cells[index[station]] = _LETTER_OF[(side, piece)]
    return "".join(cells)


# ---------------------------------------------------------------------- writing
def format_game(game: GravonGame) -> str:
    """The Gravon XML text of ``game``, laid out exactly as the archive's files are."""
    out = ['<?xml version="1.0" encoding="UTF-8"?>', "<stratego>", f" <game type={quoteattr(game.type)}>", game.spacer,
           f'  <field content="{game.field}"/>']
    out += [f'  <move id="{n}" source="{square_of(a)}" target="{square_of(b)}"/>' for n, (a, b) in enumerate(game.moves, 1)]
    out += [f'  <player id="{i}">{escape(name)}</player>' for i, name in enumerate(game.players, 1)]
    if game.result_type is not None:
        out.append(f'  <result type="{game.result_type}" winner="{game.winner}"/>')
    out += [" </game>", "</stratego>"]
    return "\n".join(out)


# ---------------------------------------------------------------------- replaying
def replay(game: GravonGame, options: Mapping[str, Any] | None = None, *, check_result: bool = True) -> GameState:
    """Replay the record through the engine: every move must be legal and, with ``check_result``, the final
    position must agree with the recorded result. RecordError names the move number and why."""
    state = new_game(game.game, dict(options or {}))
    for side, placement in placements(game).items():
        try:
            state.deploy(side, placement)
        except RulesError as exc:
            raise RecordError(f"{game.file}: {side}'s setup is refused: {exc}") from None
    for n, (frm, to) in enumerate(game.moves, 1):
        side = SIDES[(n - 1) % 2]
        said = f"{game.file}: move {n} ({side} {square_of(frm)}-{square_of(to)}, {frm}-{to})"
        if state.phase == "over":
            raise RecordError(f"{said}: the game is already over ({state.result.reason.get('code') if state.result else ''})")
        if state.turn != side:
            raise RecordError(f"{said}: it is {state.turn}'s turn")
        try:
            state.apply((frm, to))
        except RulesError as exc:
            raise RecordError(f"{said}: the engine refuses it: {refusal_words(exc, state.game)}") from None
    if check_result:
        _check_result(game, state)
    return state


def _check_result(game: GravonGame, state: GameState) -> None:
    if game.result_type is None:
        return
    said = f"{game.file}: the record's result ({RESULT_TYPES.get(game.result_type, game.result_type)}, winner {game.winner})"
    winners = game.winners()
    got = state.result
    if game.result_type == 1:
        last = state.history[-1] if state.history else None
        took = last is not None and any(r.type == "flag" and r.owner not in winners for r in last.removed)
        if got is None or list(got.winners) != winners or not took:
            raise RecordError(f"{said} does not match the replay: the last move does not take the loser's flag")
    elif game.result_type == 0:
        if got is None or list(got.winners) != winners or got.reason.get("code") != "verdict.no_move":
            raise RecordError(f"{said} does not match the replay: the loser still has a legal move")
    elif game.result_type == 2:
        if got is None or got.winners:
            raise RecordError(f"{said} does not match the replay: a side can still move")
    elif got is not None:
        raise RecordError(f"{said} does not match the replay: the engine already ended the game ({got.reason.get('code')})")


def result_of(game: GravonGame) -> dict[str, Any]:
    """The journal result event for the record's result (the Gravon codes kept under ``gravon`` for export)."""
    reason = RESULT_TYPES.get(game.result_type or 0, f"Gravon result {game.result_type}")
    return {"winners": game.winners(), "reason": reason,
            "gravon": {"type": game.type, "result": game.result_type, "winner": game.winner, "spacer": game.spacer}}


# ---------------------------------------------------------------------- journal
def journal_events(game: GravonGame, options: Mapping[str, Any] | None = None) -> tuple[dict[str, Any], list[tuple[str, dict[str, Any]]]]:
    """Replay the record (RecordError with the move number and why if the engine cannot), then give the journal's
    game event data and the events that follow it: both deployments, every move, the result."""
    if game.result_type is None:
        raise RecordError(f"{game.file}: the record has no <result>; only finished games are imported")
    state = replay(game, options)
    start = {"game": game.game, "options": dict(state.options), "board": "import", "profile": None,
             "seats": {"red": game.players[0], "blue": game.players[1]}}
    events: list[tuple[str, dict[str, Any]]] = [("deploy", {"side": side, "placement": state.deployments[side]}) for side in SIDES]
    events += [("move", {"side": SIDES[n % 2], "from": frm, "to": to}) for n, (frm, to) in enumerate(game.moves)]
    events.append(("result", result_of(game)))
    return start, events


def import_game(journal: Journal, game: GravonGame, options: Mapping[str, Any] | None = None) -> int:
    """Write the record to the journal as a finished game once it replays (nothing is written if it does not).
    Returns the journal's game id. The moves go in as one transaction, so a long game imports in one fsync."""
    start, events = journal_events(game, options)
    gdef = load_game(start["game"])
    gid = journal.new_game(start["game"], start["options"], board=start["board"], seats=start["seats"],
                           game_file=(gdef.file, gdef.text) if gdef.text else None)
    journal.append_many(gid, events)
    return gid


def export_game(events: list[Event], game_id: int | str = "") -> GravonGame:
    """The Gravon record of a journaled game (replayed first, so it is the game the referee saw)."""
    from controller.referee.replay import effective, rebuild

    final = rebuild(events)
    where = f"game {game_id}" if game_id != "" else "the game"
    gtype = TYPE_FOR_GAME.get(final.game.id)
    if gtype is None:
        raise RecordError(f"{where} is {final.game.name}; Gravon records hold only {', '.join(TYPE_FOR_GAME)}")
    if final.result is None:
        raise RecordError(f"{where} is not finished; a Gravon record needs its result")
    moves = [(ev.data["from"], ev.data["to"]) for ev in effective(events) if ev.kind == "move"]
    start = events[0].data
    seats = start.get("seats") or {}
    players = (str(seats.get("red", "Player 1")), str(seats.get("blue", "Player 2")))
    ends = [ev for ev in effective(events) if ev.kind in ("result", "arbiter")]
    kept = ends[-1].data.get("gravon") if ends and ends[-1].kind == "result" else None
    if isinstance(kept, dict) and isinstance(kept.get("result"), int) and kept.get("winner") in (1, 2, 3):
        gtype = str(kept.get("type") or gtype)
        result_type, winner = int(kept["result"]), int(kept["winner"])
    else:
        result_type, winner = _gravon_result(final, bool(ends and ends[-1].kind == "arbiter"))
    spacer = str(kept.get("spacer", " ")) if isinstance(kept, dict) and not str(kept.get("spacer", " ")).strip() else " "
    return GravonGame(gtype, field_of(final.deployments), moves, players, result_type, winner, where, spacer)


def _gravon_result(state: GameState, by_arbiter: bool) -> tuple[int, int]:
    result = state.result
    assert result is not None
    winner = SIDES.index(result.winners[0]) + 1 if len(result.winners) == 1 and result.winners[0] in SIDES else 3
    code = result.reason.get("code")
    if by_arbiter:
        return (3 if winner != 3 else 4), winner
    if code == "verdict.piece_lost" and result.reason.get("params", {}).get("piece") == "flag":
        return 1, winner
    if code == "verdict.no_move":
        return 0, winner
    if code == "verdict.nobody_moves":
        return 2, 3
    return (3 if winner != 3 else 4), winner
