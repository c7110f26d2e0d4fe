"""What each role receives: the game's public geometry, the live state (the referee's read model), events, replay
and record, all built from the rules layer's ``view``/``redact_ruling`` for that role (never from the game state's
pieces directly, and never re-derived from the event log)."""

from __future__ import annotations

import datetime as dt
import threading
from typing import Any

from controller.referee.session import Published
from controller.rules import ARBITER, SPECTATOR, GameDef, redact_ruling


def game_meta(game: GameDef) -> dict[str, Any]:
    """The game file's public data: stations, lines, station kinds, pieces and names, sides and deployment areas."""
    zones = game.setup.zones[game.setup.deploy_zone]
    return {
        "id": game.id,
        "name": game.name,
        "zh": game.zh,
        "zh_hans": getattr(game, "zh_hans", "") or game.zh,
        "sides": list(game.sides),
        "stations": [{"id": s.id, "x": s.x, "y": s.y, "kind": s.kind, "label": s.label} for s in game.stations],
        "lines": [{"kind": ln.kind, "stations": list(ln.stations)} for ln in game.lines],
        "station_kinds": {k: {"passable": v.passable, "shelter": v.shelter, "frozen": v.frozen, "doc": v.doc}
                          for k, v in game.station_kinds.items()},
        "pieces": [_piece_meta(p) for p in game.pieces],
        "home": {side: sorted(zones[side]) for side in game.sides},
    }


def _piece_meta(p: Any) -> dict[str, Any]:
    """A piece type's public data: names in each script (``zh_hans`` where the game file gives it) and its short
    label (the rank mark printed on the piece, or an abbreviation, so a name never has to be cut)."""
    out = {"id": p.id, "name": p.name, "zh": p.zh, "count": p.count, "rank": p.rank, "short": getattr(p, "short", "") or ""}
    zh_hans = getattr(p, "zh_hans", None)
    if zh_hans:
        out["zh_hans"] = zh_hans
    return out


def may_receive(ev: Published, role: str) -> bool:
    """Is ``role`` in the audience of this event (no audience: everyone; the arbiter receives everything)?"""
    return not ev.audience or role == ARBITER or role in ev.audience


def event_for(ev: Published, role: str) -> dict[str, Any] | None:
    """One published event as ``role`` may receive it, or None if it is not for them."""
    if not may_receive(ev, role):
        return None
    out = ev.for_role(role)  # a refusal's detailed reason only for the mover and the arbiter (views.refusal_for)
    out["seq"] = ev.seq
    if ev.ruling is not None:
        out["ruling"] = redact_ruling(ev.ruling, role)
    return out


def pushed_event(table: Any, ev: Published, role: str) -> dict[str, Any] | None:
    """The event as ``role`` may receive it on its live stream, carrying ``role``'s whole redacted state when no later
    event for ``role`` has been published yet: the page redraws from the stream alone and never fetches per move
    (a burst of events costs one state, on its last event)."""
    out = event_for(ev, role)
    if out is None:
        return None
    session = table.session
    with session.lock:
        later = session.since(ev.seq)
        if not any(may_receive(e, role) for e in later):
            out["state"] = state_for(table, role)
    return out


def state_for(table: Any, role: str) -> dict[str, Any]:
    """The live state as ``role`` may see it: the referee's read model for ``role`` (``Table.view``), with what only
    the web page needs (the board's kind, whether it can be tapped, the arbiter's sensor readings)."""
    with table.session.lock:  # the reading's time with the very reading the view holds
        table_view = table.view(role)
        snap = table.session.snapshot
    out = table_view.to_json()
    out.update({
        # the board time (ms) of the reading ``occupied`` comes from: a tap on the simulated board is shown until a
        # reading at or after its ``read_by`` confirms it (an older one may show the station as the tap left it by
        # chance: a piece taken off and put back)
        "read_at": None if snap is None else snap.t_ms,
        "board_kind": table.board_kind,
        "sim": table.board_kind == "sim" and hasattr(table.board, "toggle"),
        "has_journal": table.journal is not None and table.game_id is not None,
    })
    if role == ARBITER:
        snapshot_at = table.session.snapshot_at
        out["sensors"] = {
            "snapshot_at": snapshot_at,
            "snapshot_age_s": None if snapshot_at is None else round(max(0.0, _now() - snapshot_at), 1),
            "mismatch": table_view.status["mismatch"],
            "waiting_for_board": table_view.status["waiting_for_board"],
        }
    return out


def health_for(table: Any) -> dict[str, Any]:
    """``fault`` (None, or why the referee stopped) and ``link`` (connected / resyncing / lost, since when)."""
    return table.health()


def _now() -> float:
    import time

    return time.time()


def _kept_game(table: Any) -> Any:
    """The game file the journal kept for this game (so a replay or record holds after the file moved or changed)."""
    from controller.referee.gamefile import journaled

    return journaled(table.journal, table.game_id)


def _full_events(table: Any) -> list[Any]:
    if table.journal is None or table.game_id is None:
        raise LookupError("this table keeps no journal, so there is no replay")
    return table.journal.events(table.game_id)


def replay_for(table: Any, role: str) -> dict[str, Any]:
    """Every accepted ruling with the whole board after it, fully revealed: for after the game (or the arbiter).

    The caller checks that the game is over or ``role`` is the arbiter; only then is everything revealed."""
    from controller.referee.replay import replay_steps

    return {"role": role, "steps": replay_steps(_full_events(table), ARBITER, _kept_game(table))}


def replay_json(table: Any, role: str) -> list[bytes]:
    """:func:`replay_for` as JSON, in chunks (one per step: a response can send them without joining them).

    The steps are built in one pass over the journal and encoded as they come; once the game is over they are
    kept, per game, until anything more is published (an arbiter's undo reopens the game), so ten phones opening
    the replay at the end cost one replay, not ten. The steps are the same for every role (all revealed), only the
    ``role`` field differs."""
    from controller.referee.replay import iter_replay_steps

    def build() -> list[bytes]:
        chunks: list[bytes] = []
        for step in iter_replay_steps(_full_events(table), ARBITER, _kept_game(table)):
            chunks.append((b"," if chunks else b"") + _json_bytes(step))
        return chunks

    steps = _cached(table, "replay", build)
    return [b'{"role":' + _json_bytes(role) + b',"steps":[', *steps, b"]}"]


def _json_bytes(obj: Any) -> bytes:
    import json

    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode()


_cache_lock = threading.Lock()


def _cached(table: Any, name: str, build: Any) -> Any:
    """``build()``, kept on ``table`` while its game is over and nothing more has been published (the key is the
    game and the session's published-event count). One build at a time: simultaneous requests wait for it."""
    if table.state.phase != "over":
        return build()
    key = (name, table.game_id, len(table.session.log))
    with _cache_lock:
        cache = table.__dict__.setdefault("_payload_cache", {})
        hit = cache.get(name)
        if hit is not None and hit[0] == key:
            return hit[1]
        value = build()
        cache[name] = (key, value)
        return value


def record_text(table: Any, lang: str = "en") -> str:
    """The game's journal as a plain-text record in ``lang`` (everything revealed: for after the game, or the
    arbiter).

    One pass over the journal (O(plies)); kept per game and language once it is over, as :func:`replay_json` is."""
    from controller.messages import LANGS

    if lang not in LANGS:
        raise ValueError(f"no record in {lang[:20]!r}; languages are {', '.join(LANGS)}")
    return _cached(table, f"record-{lang}", lambda: _record_text(table, lang))


def _record_text(table: Any, lang: str) -> str:
    from controller.messages import catalog, render
    from controller.referee.replay import rulings
    from controller.rules.say import is_say, say

    game = table.game
    words = catalog(lang)

    def w(code: str, **params: Any) -> str:
        return render(say(code, **params), lang, game)

    def reason(r: Any) -> Any:  # a message object, or a person's own words
        return r if is_say(r) else say("notice.text", text=str(r or ""))

    def sides(xs: list[str]) -> str:
        return words["list.names_sep"].join(words.get(f"side.{x}", x) for x in xs)

    name = game.name if lang == "en" else game.zh_hans if lang == "zh-Hans" else game.zh
    events = _full_events(table)
    lines = [w("record.title", game=name or game.name, id=table.game_id)]
    if events:
        lines.append(w("record.started", time=dt.datetime.fromtimestamp(events[0].time).isoformat(" ", timespec="seconds")))
    for e in events:
        when = dt.datetime.fromtimestamp(e.time).strftime("%H:%M:%S")
        d = e.data
        side = d.get("side")
        if e.kind == "game":
            options = d.get("options") or {}
            # the options by their ids (as the game file and `facedown play --option` write them), values in words
            shown = {True: words["record.yes"], False: words["record.no"], None: "-"}
            text = w("record.game", game=d.get("game"), options=", ".join(
                f"{k}={shown.get(v, v) if isinstance(v, bool | None) else v}" for k, v in options.items())
                or words["record.no_options"])
        elif e.kind == "deploy":
            placed = [w("record.placed", station=s, piece=p) for s, p in sorted((d.get("placement") or {}).items())]
            text = w("record.deploy", side=side, placed=words["list.names_sep"].join(placed))
        elif e.kind == "move":
            text = w("record.move", side=side, **{"from": d.get("from"), "to": d.get("to")})
        elif e.kind == "illegal":
            text = w("record.illegal", side=side, reason=reason(d.get("reason")), **{"from": d.get("from"), "to": d.get("to")})
        elif e.kind == "arbiter":
            action = str(d.get("action"))
            text = w(f"record.arbiter.{action}" if f"record.arbiter.{action}" in words else "record.arbiter.other",
                     action=action, side=d.get("side"))
            result = d.get("result")
            if result:
                text += " " + _result_words(w, sides, result, reason)
        elif e.kind == "result":
            text = _result_words(w, sides, d, reason)
        elif e.kind == "reaction" and d.get("action") == "answer":
            text = w("record.reaction_yes" if d.get("accept") else "record.reaction_no", side=side, offer=d.get("offer"))
        elif e.kind == "reaction":
            text = w("record.reaction_auto" if d.get("auto") else "record.reaction_ask", side=side)
        else:
            text = f"{e.kind} {d}"
        lines.append(f"{e.seq:5d} {when} {text}")
    lines.append("")
    lines.append(w("record.rulings"))
    for ruling, _state in rulings(events, _kept_game(table)):
        r = redact_ruling(ruling, ARBITER, game_over=True)
        fields = {"ply": f"{r['ply']:4d}", "side": r["side"], "piece": r.get("piece") or "?", "from": r["from"], "to": r["to"]}
        if r["kind"] == "attack":
            outcome = r["outcome"] if f"record.outcome.{r['outcome']}" in words else "other"
            line = w("record.attack", **fields, defender_side=r["defender_side"], defender_piece=r.get("defender_piece") or "?",
                     outcome=say(f"record.outcome.{outcome}", outcome=r["outcome"]))
        else:
            line = w("record.ruling", **fields)
        lines.append(line)
    return "\n".join(lines) + "\n"


def _result_words(w: Any, sides: Any, result: dict[str, Any], reason: Any) -> str:
    winners = result.get("winners") or []
    if winners:
        return w("record.result_win", winners=sides(winners), reason=reason(result.get("reason")))
    return w("record.result_draw", reason=reason(result.get("reason")))


__all__ = ["ARBITER", "SPECTATOR", "event_for", "game_meta", "may_receive", "record_text", "replay_for", "replay_json", "state_for"]
