"""Reads a game file (YAML) into a GameDef, rejecting any error with the file, the path in the document and what was expected."""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from controller.docreader import DocReader, DocumentProblem, kind_of, load_yaml
from controller.docreader import join as _join

from .clash import resolve
from .errors import GameFileError
from .hooks import HOOKS
from .mirror import mirrored
from .model import (
    ALWAYS,
    NO_MOVES,
    OUT_PIECES,
    OUTCOMES,
    PUSHES,
    REVEALS,
    TURN_ORDERS,
    ClashRule,
    ClashTable,
    Condition,
    FightsAs,
    GameDef,
    Line,
    MoveSpec,
    OptionDef,
    PieceType,
    SetupConstraint,
    SetupRules,
    Station,
    StationKind,
    WinRules,
)

FORMAT_VERSION = 1
#: The largest whole number a game file may hold anywhere (counts, ranks, steps): far beyond any board.
MAX_WHOLE = 1_000_000_000
ID_RE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_\-]*$")

#: Options the engine itself reads; a game file that declares one must give a value of this kind.
ENGINE_OPTIONS: dict[str, tuple[str, tuple[Any, ...] | None]] = {
    "reveal": ("'open' or 'silent'", REVEALS),
    "winner_advances": ("true or false", (True, False)),
    "winner_face_up": ("true or false", (True, False)),
    "no_capture_draw": ("a number of plies, or null for no limit", None),
    "allies_see": ("true or false", (True, False)),
    "turn_order": ("'counterclockwise' or 'clockwise'", TURN_ORDERS),
    "no_moves": ("'lose', 'pass' or 'pass_while_ally'", NO_MOVES),
    "out_pieces": ("'obstacles' or 'removed'", OUT_PIECES),
}


class _Reader(DocReader):
    """Walks a parsed game file, remembering the path so every complaint can say where it is."""

    error = GameFileError

    def ident(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not ID_RE.match(value):
            raise self.fail(where, f"expected an id (letters, digits, '_' or '-'), got {value!r}")
        return value

    def integer(self, value: Any, where: str, *, minimum: int | None = None) -> int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(where, f"expected a whole number, got {value!r}")
        if minimum is not None and value < minimum:
            raise self.fail(where, f"expected a number of at least {minimum}, got {_short_number(value)}")
        if abs(value) > MAX_WHOLE:
            raise self.fail(where, f"expected a number of at most {MAX_WHOLE:,}, got {_short_number(value)}")
        return value

    def number(self, value: Any, where: str) -> float:
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(where, f"expected a number, got {value!r}")
        if not math.isfinite(value) or abs(value) > MAX_WHOLE:
            raise self.fail(where, f"expected a number of at most {MAX_WHOLE:,}, got {_short_number(value)}")
        return float(value)


def _short_number(value: float) -> str:
    """A number as a message shows it: a 4,000-digit number is shown by its length, not spelt out."""
    text = repr(value)
    return text if len(text) <= 24 else f"a number of {len(text.lstrip('-')):,} digits"


def load_game_file(path: str | Path) -> GameDef:
    """Read and validate one game file."""
    from controller.textfiles import InputFileError, read_text

    path = Path(path)
    try:
        text = read_text(path, "game file")
    except InputFileError as exc:
        raise GameFileError(str(path), "(file)", str(exc).removeprefix(f"{path}: ")) from None
    doc = mirrored(path, text)  # a shipped, unchanged file: its document without PyYAML
    if doc is not None:
        return replace(_build(_Reader(str(path)), doc), text=text)
    return parse_game(text, str(path))


def parse_game(text: str, file: str = "<game>") -> GameDef:
    """Validate a game document given as YAML text; ``file`` names it in error messages."""
    import yaml

    r = _Reader(file)
    try:
        doc = load_yaml(text)
    except DocumentProblem as exc:
        raise GameFileError(file, exc.where, exc.expected) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "(document)"
        raise GameFileError(file, where, f"expected valid YAML ({getattr(exc, 'problem', None) or exc})") from None
    return replace(_build(r, doc), text=text)


def _build(r: _Reader, doc: Any) -> GameDef:
    top = r.mapping(
        doc,
        "",
        allowed={
            "format", "id", "name", "zh", "zh_hans", "source", "doc", "sides", "alliances", "station_kinds", "stations",
            "lines", "movements", "pieces", "clash", "setup", "win", "options", "hooks", "decisions",
        },
        required={"format", "id", "name", "sides", "stations", "lines", "pieces", "clash", "setup", "win"},
    )
    if top["format"] != FORMAT_VERSION:
        raise r.fail("format", f"expected format {FORMAT_VERSION}, got {top['format']!r}")
    game_id = r.ident(top["id"], "id")

    options = _options(r, top.get("options", {}))
    sides = tuple(r.ident(s, f"sides[{i}]") for i, s in enumerate(r.seq(top["sides"], "sides", nonempty=True)))
    if len(set(sides)) != len(sides) or len(sides) < 2:
        raise r.fail("sides", "expected at least two different side names")
    alliances = _alliances(r, top.get("alliances"), sides)

    kinds = _station_kinds(r, top.get("station_kinds", {"normal": {}}))
    stations = _stations(r, top["stations"], kinds)
    station_ids = {s.id for s in stations}
    lines = _lines(r, top["lines"], station_ids)
    line_kinds = {ln.kind for ln in lines}

    movements = _movements(r, top.get("movements", {}), line_kinds, options)
    pieces = _pieces(r, top["pieces"], movements, line_kinds, options)
    piece_ids = {p.id for p in pieces}
    _check_shelter_exceptions(r, top.get("station_kinds", {}), piece_ids)
    clash = _clash(r, top["clash"], pieces, options)
    setup = _setup(r, top["setup"], sides, stations, kinds, piece_ids, options)
    win = _win(r, top["win"], piece_ids)
    hooks = _hooks(r, top.get("hooks", []))
    decisions = _decisions(r, top.get("decisions", []), options)

    game = GameDef(
        id=game_id,
        name=r.text(top["name"], "name"),
        zh=r.text(top.get("zh", ""), "zh"),
        zh_hans=r.text(top.get("zh_hans", top.get("zh", "")), "zh_hans"),
        source=r.text(top.get("source", ""), "source"),
        doc=r.text(top.get("doc", ""), "doc"),
        sides=sides,
        alliances=alliances,
        station_kinds=kinds,
        stations=stations,
        lines=lines,
        pieces=pieces,
        clash=clash,
        setup=setup,
        win=win,
        options=options,
        hooks=hooks,
        decisions=decisions,
        file=r.file,
    )
    _check_clash_complete(r, game)
    _check_army_fits(r, game)
    return game


def _options(r: _Reader, raw: Any) -> dict[str, OptionDef]:
    out: dict[str, OptionDef] = {}
    for key, spec in r.mapping(raw, "options").items():
        where = _join("options", key)
        r.ident(key, where)
        spec = r.mapping(spec, where, allowed={"default", "choices", "doc"}, required={"default", "doc"})
        choices = spec.get("choices")
        if choices is not None:
            choices = tuple(r.seq(choices, _join(where, "choices"), nonempty=True))
            for i, c in enumerate(choices):
                _option_value(r, c, _join(_join(where, "choices"), i))
        elif isinstance(spec["default"], bool):
            choices = (True, False)
        _option_value(r, spec["default"], _join(where, "default"))
        if choices is not None and spec["default"] not in choices:
            raise r.fail(_join(where, "default"), f"expected one of the choices {list(choices)}, got {spec['default']!r}")
        if key in ENGINE_OPTIONS:
            what, allowed = ENGINE_OPTIONS[key]
            for v in (spec["default"], *(choices or ())):
                ok = v in allowed if allowed else (v is None or (isinstance(v, int) and not isinstance(v, bool) and v > 0))
                if not ok:
                    raise r.fail(where, f"the engine option {key!r} takes {what}, got {v!r}")
        out[key] = OptionDef(key, spec["default"], choices, r.text(spec["doc"], _join(where, "doc")))
    return out


def _option_value(r: _Reader, value: Any, where: str) -> None:
    """An option's default or choice is one value a player can name with ``-o NAME=VALUE``: text, a number, true or
    false, or null; never a list or mapping (which could be an alias bomb, or could never be typed)."""
    if value is not None and not isinstance(value, str | int | float | bool):
        raise r.fail(where, f"expected one value (text, a number, true/false or null), got {kind_of(value)}")
    if isinstance(value, int | float) and not isinstance(value, bool) and not (math.isfinite(value) and abs(value) <= MAX_WHOLE):
        raise r.fail(where, f"expected a number of at most {MAX_WHOLE:,}, got {_short_number(value)}")
    if isinstance(value, str) and len(value) > 200:
        raise r.fail(where, f"expected a short value (at most 200 characters), got {len(value):,}")


def _condition(r: _Reader, spec: Mapping[str, Any], where: str, options: Mapping[str, OptionDef]) -> Condition:
    """Reads the optional ``if`` / ``unless`` keys: an option name (true) or a mapping {option: value}."""
    parts: dict[str, list[tuple[str, Any]]] = {"if": [], "unless": []}
    for key in ("if", "unless"):
        if key not in spec:
            continue
        raw = spec[key]
        pairs = [(raw, True)] if isinstance(raw, str) else list(r.mapping(raw, _join(where, key)).items())
        for name, value in pairs:
            if name not in options:
                raise r.fail(_join(where, key), f"expected the name of a declared option, got {name!r}")
            choices = options[name].choices
            if choices is not None and value not in choices:
                raise r.fail(_join(where, key), f"option {name!r} takes one of {list(choices)}, got {value!r}")
            parts[key].append((name, value))
    if not parts["if"] and not parts["unless"]:
        return ALWAYS
    return Condition(tuple(parts["if"]), tuple(parts["unless"]))


def _alliances(r: _Reader, raw: Any, sides: tuple[str, ...]) -> tuple[frozenset[str], ...]:
    if raw is None:
        return tuple(frozenset([s]) for s in sides)
    groups = []
    seen: set[str] = set()
    for i, group in enumerate(r.seq(raw, "alliances", nonempty=True)):
        members = frozenset(r.one_of(s, f"alliances[{i}][{j}]", sides, "a side") for j, s in enumerate(r.seq(group, f"alliances[{i}]", nonempty=True)))
        if members & seen:
            raise r.fail(f"alliances[{i}]", "expected each side in one alliance only")
        seen |= members
        groups.append(members)
    if seen != set(sides):
        raise r.fail("alliances", f"expected every side in an alliance; missing {sorted(set(sides) - seen)}")
    return tuple(groups)


def _station_kinds(r: _Reader, raw: Any) -> dict[str, StationKind]:
    out = {}
    for key, spec in r.mapping(raw, "station_kinds").items():
        where = _join("station_kinds", key)
        r.ident(key, where)
        spec = r.mapping(spec or {}, where, allowed={"passable", "shelter", "shelter_except", "frozen", "doc", "closed_to"})
        exc = r.mapping(spec.get("shelter_except", {}), _join(where, "shelter_except"), allowed={"attackers", "defenders"})
        out[key] = StationKind(
            id=key,
            passable=r.boolean(spec.get("passable", True), _join(where, "passable")),
            shelter=r.boolean(spec.get("shelter", False), _join(where, "shelter")),
            shelter_except_attackers=frozenset(r.seq(exc.get("attackers", []), _join(where, "shelter_except.attackers"))),
            shelter_except_defenders=frozenset(r.seq(exc.get("defenders", []), _join(where, "shelter_except.defenders"))),
            frozen=r.boolean(spec.get("frozen", False), _join(where, "frozen")),
            doc=r.text(spec.get("doc", ""), _join(where, "doc")),
            closed_to=frozenset(r.seq(spec.get("closed_to", []), _join(where, "closed_to"))),
        )
    if not out:
        raise r.fail("station_kinds", "expected at least one station kind")
    return out


def _check_shelter_exceptions(r: _Reader, raw: Any, piece_ids: set[str]) -> None:
    """The pieces named under each kind's ``shelter_except`` must exist (checked once the pieces are read)."""
    for key, spec in raw.items():
        for j, pid in enumerate((spec or {}).get("closed_to", [])):
            if pid not in piece_ids:
                raise r.fail(f"station_kinds.{key}.closed_to[{j}]", f"expected a piece id, got {pid!r}")
        exc = (spec or {}).get("shelter_except", {})
        for role in ("attackers", "defenders"):
            where = f"station_kinds.{key}.shelter_except.{role}"
            for j, pid in enumerate(exc.get(role, [])):
                if pid not in piece_ids:
                    raise r.fail(f"{where}[{j}]", f"expected a piece id, got {pid!r}")


def _stations(r: _Reader, raw: Any, kinds: Mapping[str, StationKind]) -> tuple[Station, ...]:
    out: list[Station] = []
    seen: set[str] = set()
    for i, item in enumerate(r.seq(raw, "stations", nonempty=True)):
        where = f"stations[{i}]"
        if isinstance(item, list):
            if len(item) not in (3, 4):
                raise r.fail(where, "expected [id, x, y] or [id, x, y, kind]")
            item = dict(zip(("id", "x", "y", "kind"), item, strict=False))
        spec = r.mapping(item, where, allowed={"id", "x", "y", "kind", "label"}, required={"id", "x", "y"})
        sid = r.ident(str(spec["id"]) if isinstance(spec["id"], int) else spec["id"], _join(where, "id"))
        if sid in seen:
            raise r.fail(_join(where, "id"), f"expected a new station id, {sid!r} is used twice")
        seen.add(sid)
        kind = spec.get("kind", "normal")
        if kind not in kinds:
            raise r.fail(_join(where, "kind"), f"expected a kind declared under station_kinds ({', '.join(sorted(kinds))}), got {kind!r}")
        out.append(Station(sid, r.number(spec["x"], _join(where, "x")), r.number(spec["y"], _join(where, "y")), kind, r.text(spec.get("label", ""), _join(where, "label"))))
    return tuple(out)


def _lines(r: _Reader, raw: Any, station_ids: set[str]) -> tuple[Line, ...]:
    out = []
    for i, item in enumerate(r.seq(raw, "lines", nonempty=True)):
        where = f"lines[{i}]"
        spec = r.mapping(item, where, allowed={"kind", "stations", "path"}, required={"kind"})
        kind = r.ident(spec["kind"], _join(where, "kind"))
        if ("stations" in spec) == ("path" in spec):
            raise r.fail(where, "expected exactly one of 'stations' (a list) or 'path' (ids separated by spaces)")
        if "path" in spec:
            ids = r.text(spec["path"], _join(where, "path")).split()
            key = "path"
        else:
            ids = [str(s) for s in r.seq(spec["stations"], _join(where, "stations"))]
            key = "stations"
        if len(ids) < 2:
            raise r.fail(_join(where, key), "expected at least two stations")
        for j, sid in enumerate(ids):
            if sid not in station_ids:
                raise r.fail(f"{where}.{key}[{j}]", f"expected a declared station, got {sid!r}")
        if len(set(ids)) != len(ids):
            raise r.fail(_join(where, key), "expected each station once per line")
        out.append(Line(kind, tuple(ids)))
    return tuple(out)


def _move_spec(r: _Reader, raw: Any, where: str, line_kinds: set[str], options: Mapping[str, OptionDef]) -> MoveSpec:
    spec = r.mapping(raw, where, allowed={"along", "max_steps", "exact", "turns", "attack", "reveal", "if", "unless", "over", "attack_only",
                                          "returns", "spared"}, required={"along"})
    along = r.seq(spec["along"], _join(where, "along"), nonempty=True)
    for j, k in enumerate(along):
        if k not in line_kinds:
            raise r.fail(f"{where}.along[{j}]", f"expected a line kind used in lines ({', '.join(sorted(line_kinds))}), got {k!r}")
    max_steps = spec.get("max_steps", 1)
    if max_steps is not None:
        max_steps = r.integer(max_steps, _join(where, "max_steps"), minimum=1)
    exact = r.boolean(spec.get("exact", False), _join(where, "exact"))
    if exact and max_steps is None:
        raise r.fail(_join(where, "exact"), "expected max_steps to be a number when exact is true")
    turns = r.boolean(spec.get("turns", False), _join(where, "turns"))
    if turns and exact:
        raise r.fail(where, "expected 'turns' and 'exact' not both true")
    return MoveSpec(
        along=frozenset(along),
        max_steps=max_steps,
        exact=exact,
        turns=turns,
        attack=r.boolean(spec.get("attack", True), _join(where, "attack")),
        reveal=r.boolean(spec.get("reveal", False), _join(where, "reveal")),
        when=_condition(r, spec, where, options),
        over=r.boolean(spec.get("over", False), _join(where, "over")),
        attack_only=r.boolean(spec.get("attack_only", False), _join(where, "attack_only")),
        returns=r.boolean(spec.get("returns", False), _join(where, "returns")),
        spared=r.boolean(spec.get("spared", False), _join(where, "spared")),
    )


def _movements(r: _Reader, raw: Any, line_kinds: set[str], options: Mapping[str, OptionDef]) -> dict[str, tuple[MoveSpec, ...]]:
    out = {}
    for key, specs in r.mapping(raw, "movements").items():
        where = _join("movements", key)
        r.ident(key, where)
        out[key] = tuple(_move_spec(r, s, f"{where}[{j}]", line_kinds, options) for j, s in enumerate(r.seq(specs, where)))
    return out


#: the longest short label a piece face shows without cutting it
SHORT_MAX = 6


def _short(r: _Reader, raw: Any, where: str) -> str:
    text = r.text(str(raw) if isinstance(raw, int) and not isinstance(raw, bool) else raw, where)
    if len(text) > SHORT_MAX:
        raise r.fail(where, f"expected a label of at most {SHORT_MAX} characters for a piece face, got {text!r}")
    return text


def _pieces(r: _Reader, raw: Any, movements: Mapping[str, tuple[MoveSpec, ...]], line_kinds: set[str], options: Mapping[str, OptionDef]) -> tuple[PieceType, ...]:
    out = []
    seen: set[str] = set()
    for i, item in enumerate(r.seq(raw, "pieces", nonempty=True)):
        where = f"pieces[{i}]"
        spec = r.mapping(item, where, allowed={"id", "name", "zh", "zh_hans", "short", "count", "counts", "rank", "moves", "can_attack", "doc"}, required={"id", "name", "zh", "count"})
        pid = r.ident(spec["id"], _join(where, "id"))
        if pid in seen:
            raise r.fail(_join(where, "id"), f"expected a new piece id, {pid!r} is used twice")
        seen.add(pid)
        rank = spec.get("rank")
        if rank is not None:
            rank = r.integer(rank, _join(where, "rank"), minimum=0)
        moves_raw = spec.get("moves", [])
        if isinstance(moves_raw, str):
            if moves_raw not in movements:
                raise r.fail(_join(where, "moves"), f"expected a movement named under movements ({', '.join(sorted(movements))}) or a list, got {moves_raw!r}")
            moves = movements[moves_raw]
        else:
            moves = tuple(_move_spec(r, s, f"{where}.moves[{j}]", line_kinds, options) for j, s in enumerate(r.seq(moves_raw, _join(where, "moves"))))
        can_attack = r.boolean(spec.get("can_attack", bool(moves)), _join(where, "can_attack"))
        if can_attack and not moves:
            raise r.fail(_join(where, "can_attack"), "expected false for a piece that cannot move")
        out.append(PieceType(
            id=pid,
            name=r.text(spec["name"], _join(where, "name")),
            zh=r.text(spec["zh"], _join(where, "zh")),
            count=r.integer(spec["count"], _join(where, "count"), minimum=1),
            rank=rank,
            moves=moves,
            can_attack=can_attack,
            doc=r.text(spec.get("doc", ""), _join(where, "doc")),
            counts=_counts(r, spec.get("counts", []), _join(where, "counts"), options),
            zh_hans=r.text(spec.get("zh_hans", spec["zh"]), _join(where, "zh_hans")),
            short=_short(r, spec.get("short", ""), _join(where, "short")),
        ))
    return tuple(out)


def _counts(r: _Reader, raw: Any, where: str, options: Mapping[str, OptionDef]) -> tuple[tuple[Condition, int], ...]:
    """Option-dependent counts: ``[{count: N, if: ..., unless: ...}]``, the first that holds wins; 0 leaves the piece out."""
    out = []
    for j, item in enumerate(r.seq(raw, where)):
        at = f"{where}[{j}]"
        c = r.mapping(item, at, allowed={"count", "if", "unless"}, required={"count"})
        when = _condition(r, c, at, options)
        if when is ALWAYS:
            raise r.fail(at, "expected 'if' or 'unless' (an unconditional count belongs in 'count')")
        out.append((when, r.integer(c["count"], _join(at, "count"), minimum=0)))
    return tuple(out)


def _piece_set(r: _Reader, raw: Any, where: str, piece_ids: set[str]) -> frozenset[str] | None:
    if raw == "*":
        return None
    items = [raw] if isinstance(raw, str) else r.seq(raw, where, nonempty=True)
    for j, p in enumerate(items):
        if p not in piece_ids:
            raise r.fail(where if isinstance(raw, str) else f"{where}[{j}]", f"expected a piece id or '*', got {p!r}")
    return frozenset(items)


def _clash(r: _Reader, raw: Any, pieces: tuple[PieceType, ...], options: Mapping[str, OptionDef]) -> ClashTable:
    spec = r.mapping(raw, "clash", allowed={"by_rank", "rules", "table", "fights_as"})
    piece_ids = {p.id for p in pieces}
    rules = []
    for i, item in enumerate(r.seq(spec.get("rules", []), "clash.rules")):
        where = f"clash.rules[{i}]"
        rs = r.mapping(item, where, allowed={"attacker", "defender", "outcome", "if", "unless", "doc", "push", "show"},
                       required={"attacker", "defender", "outcome"})
        rules.append(ClashRule(
            attackers=_piece_set(r, rs["attacker"], _join(where, "attacker"), piece_ids),
            defenders=_piece_set(r, rs["defender"], _join(where, "defender"), piece_ids),
            outcome=r.one_of(rs["outcome"], _join(where, "outcome"), OUTCOMES, "an outcome"),
            when=_condition(r, rs, where, options),
            doc=r.text(rs.get("doc", ""), _join(where, "doc")),
            push=r.one_of(rs["push"], _join(where, "push"), PUSHES, "the piece pushed one step away") if "push" in rs else None,
            show=r.boolean(rs.get("show", False), _join(where, "show")),
        ))
    cells: dict[tuple[str, str], str] = {}
    for att, row in r.mapping(spec.get("table", {}), "clash.table").items():
        where = _join("clash.table", att)
        if att not in piece_ids:
            raise r.fail(where, f"expected an attacking piece id, got {att!r}")
        for dfd, outcome in r.mapping(row, where).items():
            if dfd not in piece_ids:
                raise r.fail(_join(where, dfd), f"expected a defending piece id, got {dfd!r}")
            cells[(att, dfd)] = r.one_of(outcome, _join(where, dfd), OUTCOMES, "an outcome")
    proxies = []
    for i, item in enumerate(r.seq(spec.get("fights_as", []), "clash.fights_as")):
        where = f"clash.fights_as[{i}]"
        fa = r.mapping(item, where, allowed={"piece", "against", "as", "at", "if", "unless"}, required={"piece", "as"})
        for key in ("piece", "as"):
            r.one_of(fa[key], _join(where, key), piece_ids, "a piece id")
        at = fa.get("at")
        proxies.append(FightsAs(
            piece=fa["piece"],
            against=_piece_set(r, fa.get("against", "*"), _join(where, "against"), piece_ids),
            as_=fa["as"],
            at=None if at is None else frozenset(r.text(k, f"{_join(where, 'at')}[{j}]") for j, k in enumerate(r.seq(at, _join(where, "at"), nonempty=True))),
            when=_condition(r, fa, where, options),
        ))
    return ClashTable(cells=cells, rules=tuple(rules), by_rank=r.boolean(spec.get("by_rank", True), "clash.by_rank"), fights_as=tuple(proxies))


def _zone(r: _Reader, raw: Any, where: str, stations: tuple[Station, ...], kinds: Mapping[str, StationKind]) -> frozenset[str]:
    ids = {s.id for s in stations}
    if isinstance(raw, list):
        for j, sid in enumerate(raw):
            if str(sid) not in ids:
                raise r.fail(f"{where}[{j}]", f"expected a declared station, got {sid!r}")
        return frozenset(str(s) for s in raw)
    spec = r.mapping(raw, where, allowed={"x", "y", "except", "except_kinds"})
    xs = spec.get("x")
    ys = spec.get("y")
    for key, values in (("x", xs), ("y", ys)):
        if values is not None:
            for j, v in enumerate(r.seq(values, _join(where, key), nonempty=True)):
                r.number(v, f"{_join(where, key)}[{j}]")
    excl = set(map(str, r.seq(spec.get("except", []), _join(where, "except"))))
    excl_kinds = set(r.seq(spec.get("except_kinds", []), _join(where, "except_kinds")))
    for k in excl_kinds:
        if k not in kinds:
            raise r.fail(_join(where, "except_kinds"), f"expected a station kind, got {k!r}")
    chosen = frozenset(
        s.id for s in stations
        if (xs is None or s.x in xs) and (ys is None or s.y in ys) and s.id not in excl and s.kind not in excl_kinds
    )
    if not chosen:
        raise r.fail(where, "expected the selector to match at least one station")
    return chosen


def _setup(r: _Reader, raw: Any, sides: tuple[str, ...], stations: tuple[Station, ...], kinds: Mapping[str, StationKind], piece_ids: set[str], options: Mapping[str, OptionDef]) -> SetupRules:
    spec = r.mapping(raw, "setup", allowed={"zones", "deploy", "constraints"}, required={"zones", "deploy"})
    zones: dict[str, dict[str, frozenset[str]]] = {}
    for name, per_side in r.mapping(spec["zones"], "setup.zones").items():
        where = _join("setup.zones", name)
        per_side = r.mapping(per_side, where, allowed=set(sides), required=set(sides))
        zones[name] = {side: _zone(r, per_side[side], _join(where, side), stations, kinds) for side in sides}
    deploy = r.one_of(spec["deploy"], "setup.deploy", set(zones), "a zone name")
    cons = []
    for i, item in enumerate(r.seq(spec.get("constraints", []), "setup.constraints")):
        where = f"setup.constraints[{i}]"
        c = r.mapping(item, where, allowed={"pieces", "zone", "not_zone", "kinds", "empty_kinds", "message", "if", "unless"})
        pieces = _piece_set(r, c["pieces"], _join(where, "pieces"), piece_ids) if "pieces" in c else None
        for key in ("zone", "not_zone"):
            if key in c:
                r.one_of(c[key], _join(where, key), set(zones), "a zone name")
        for key in ("kinds", "empty_kinds"):
            for k in c.get(key, []):
                r.one_of(k, _join(where, key), set(kinds), "a station kind")
        if pieces is None and "empty_kinds" not in c:
            raise r.fail(where, "expected 'pieces' with 'zone', 'not_zone' or 'kinds', or 'empty_kinds'")
        if pieces is not None and not any(k in c for k in ("zone", "not_zone", "kinds")):
            raise r.fail(where, "expected one of 'zone', 'not_zone' or 'kinds' to say where the pieces may stand")
        cons.append(SetupConstraint(
            pieces=pieces,
            only_zone=c.get("zone"),
            not_zone=c.get("not_zone"),
            only_kinds=frozenset(c["kinds"]) if "kinds" in c else None,
            empty_kinds=frozenset(c["empty_kinds"]) if "empty_kinds" in c else None,
            message=r.text(c.get("message", ""), _join(where, "message")),
            when=_condition(r, c, where, options),
        ))
    return SetupRules(deploy_zone=deploy, zones=zones, constraints=tuple(cons))


def _win(r: _Reader, raw: Any, piece_ids: set[str]) -> WinRules:
    spec = r.mapping(raw, "win", allowed={"capture", "no_moves", "both_stuck"}, required={"capture"})
    capture = _piece_set(r, spec["capture"], "win.capture", piece_ids)
    if capture is None:
        raise r.fail("win.capture", "expected the ids of the pieces whose loss loses the game")
    return WinRules(
        capture=capture,
        no_moves=r.one_of(spec.get("no_moves", "lose"), "win.no_moves", NO_MOVES, "what a side with no legal move does"),
        both_stuck=r.one_of(spec.get("both_stuck", "draw"), "win.both_stuck", ("draw",), "what happens when no side can move"),
    )


def _hooks(r: _Reader, raw: Any) -> tuple[str, ...]:
    names = r.seq(raw, "hooks")
    known = set(HOOKS)
    for j, name in enumerate(names):
        if not known:  # not even FaceDown's own: its entry points are read from the installed distribution
            raise r.fail(f"hooks[{j}]", f"a rule hook, but none is registered ({name!r}): FaceDown runs from a checkout that "
                         "is not installed; install it (`./dev setup`, or `pip install -e .`)")
        r.one_of(name, f"hooks[{j}]", known, "a rule hook")
    return tuple(names)


def _decisions(r: _Reader, raw: Any, options: Mapping[str, OptionDef]) -> tuple[dict[str, str], ...]:
    out = []
    for i, item in enumerate(r.seq(raw, "decisions")):
        where = f"decisions[{i}]"
        d = r.mapping(item, where, allowed={"topic", "decision", "reason", "option"}, required={"topic", "decision", "reason"})
        if "option" in d and d["option"] not in options:
            raise r.fail(_join(where, "option"), f"expected a declared option, got {d['option']!r}")
        out.append({k: r.text(v, _join(where, k)) for k, v in d.items()})
    return tuple(out)


def _check_clash_complete(r: _Reader, game: GameDef) -> None:
    """Every attacker that can attack has an outcome against every piece, under the default options."""
    opts = game.resolve_options()
    for a in game.pieces:
        if not a.can_attack:
            continue
        for d in game.pieces:
            if resolve(game.clash, game.piece_by_id, a.id, d.id, opts) is None:
                raise r.fail("clash", f"expected an outcome for {a.id} attacking {d.id} (neither table, rules nor ranks give one)")


def _check_army_fits(r: _Reader, game: GameDef) -> None:
    """Refuse a setup no player could lay out, with the counts: sides' deployment zones that overlap; an army (the
    largest any option gives) bigger than the usable stations of its zone (impassable stations and kinds that must
    start empty, like camps, do not count); a piece kind with more pieces than stations it may stand on (kinds
    closed to it left out); pieces a constraint keeps to a zone or to station kinds with too few such stations."""
    most = {p.id: max([p.count, *(n for _, n in p.counts)]) for p in game.pieces}  # the largest count any option gives
    army = sum(most.values())
    rules = game.setup
    where = f"setup.zones.{rules.deploy_zone}"
    zones = rules.zones[rules.deploy_zone]
    for i, a in enumerate(game.sides):
        for b in game.sides[i + 1:]:
            both = sorted(zones[a] & zones[b])
            if both:
                raise r.fail(where, f"expected each side's zone apart from the others', but {a}'s and {b}'s share {len(both)} stations: {', '.join(both[:8])}")
    empty = frozenset().union(*(c.empty_kinds for c in rules.constraints if c.empty_kinds and c.when == ALWAYS))
    kind_of = {s.id: game.station_kinds[s.kind] for s in game.stations}
    for side in game.sides:
        zone = zones[side]
        blocked = sorted(s for s in zone if not kind_of[s].passable)
        kept_empty = sorted(s for s in zone if kind_of[s].passable and kind_of[s].id in empty)
        usable = [s for s in zone if kind_of[s].passable and kind_of[s].id not in empty]
        if len(usable) < army:
            parts = [f"{len(zone)} stations"]
            if kept_empty:
                parts.append(f"{len(kept_empty)} of them must start empty ({', '.join(kept_empty)})")
            if blocked:
                parts.append(f"{len(blocked)} impassable")
            raise r.fail(f"{where}.{side}", f"expected room for the army of {army} pieces; the zone has {', '.join(parts)}: {len(usable)} usable")
        for pid, n in most.items():
            room = [s for s in usable if pid not in kind_of[s].closed_to]
            if n > len(room):
                raise r.fail(f"{where}.{side}", f"expected room for {n} {pid}; only {len(room)} usable stations of the zone are open to it")
        for i, c in enumerate(rules.constraints):
            if c.pieces is None or c.when != ALWAYS or (c.only_zone is None and c.only_kinds is None):
                continue
            room = [s for s in usable
                    if (c.only_zone is None or s in rules.zones[c.only_zone][side])
                    and (c.only_kinds is None or kind_of[s].id in c.only_kinds)]
            n = sum(most[pid] for pid in c.pieces)
            if n > len(room):
                raise r.fail(f"setup.constraints[{i}]", f"expected room for {side}'s {n} pieces it places ({', '.join(sorted(c.pieces))}); only {len(room)} usable stations of {side}'s zone qualify")
