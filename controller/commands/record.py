"""`facedown record list|show|export`: reads the game journal; hidden ranks appear only once a game has ended."""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from typing import TYPE_CHECKING, Any

from controller.errors import FaceDownError

if TYPE_CHECKING:
    from controller.referee.journal import Event, GameSummary, Journal
    from controller.rules import GameDef, GameState

OUTCOME = {"attacker": "attacker survives", "defender": "defender survives", "both": "both removed", "bounce": "no effect"}


def register(sub: argparse._SubParsersAction) -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--journal", metavar="PATH", help="journal file (default: $XDG_DATA_HOME/facedown/journal.sqlite)")
    p = sub.add_parser("record", help="list, show or export journaled games")
    rec = p.add_subparsers(dest="record_command", metavar="ACTION")
    rec.required = True
    rec.add_parser("list", parents=[common], help="one line per journaled game").set_defaults(func=run_list)
    show = rec.add_parser("show", parents=[common], help="a game's moves, one a line")
    show.add_argument("id", type=int, help="game id (see `facedown record list`)")
    show.set_defaults(func=run_show)
    export = rec.add_parser("export", parents=[common], help="a readable record of a game (ranks only after it ended)")
    export.add_argument("id", type=int, help="game id (see `facedown record list`)")
    export.add_argument("--out", metavar="FILE", help="write the record to FILE instead of standard output")
    export.add_argument("--format", choices=["text", "gravon"], default="text",
                        help="text: a readable record; gravon: a Gravon Stratego XML file (finished Stratego games)")
    export.add_argument("--signed", action="store_true",
                        help="the full record (every event with its digest chain) signed by this table's key, as JSON "
                             "(finished games): `facedown record verify FILE --key KEY` checks it")
    export.set_defaults(func=run_export)
    verify = rec.add_parser("verify", parents=[common],
                            help="check a journal's digest chain (every game, or game ID), or a signed record FILE")
    verify.add_argument("target", nargs="?", metavar="ID|FILE", help="a game id, or a signed record file (default: every game)")
    verify.add_argument("--key", metavar="KEY", help="the table's public key (ed25519:..., or a file holding it) a signed "
                                                     "record must be signed by")
    verify.set_defaults(func=run_verify)
    repair = rec.add_parser("repair", parents=[common],
                            help="the arbiter's choice for a damaged game: go on from its last intact event")
    repair.add_argument("id", type=int, help="game id (see `facedown record verify`)")
    repair.set_defaults(func=run_repair)
    imp = rec.add_parser("import", parents=[common], help="replay Gravon Stratego XML files and journal them as finished games")
    imp.add_argument("files", nargs="+", metavar="FILE", help="Gravon XML file(s) (strados2 format)")
    imp.add_argument("--option", "-o", action="append", default=[], metavar="NAME=VALUE", help="house-rule option for the replay")
    imp.set_defaults(func=run_import)


# ---------------------------------------------------------------------- helpers
def _when(t: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(t)) if t is not None else "-"


def words(message: Any, game: Any = None) -> str:
    """A message object in English words (a record is read in English); older journals' sentences as they are."""
    from controller.messages import MessageError, is_say, render

    if not is_say(message):
        return str(message)
    try:
        return render(message, "en", game)
    except MessageError:
        return str(message.get("code"))


def _game(game_id: str) -> Any:
    """The installed game ``game_id`` (for piece names), or None."""
    from controller.rules import RulesError, load_game

    try:
        return load_game(game_id)
    except RulesError:
        return None


def result_text(result: dict[str, Any] | None, game: Any = None) -> str:
    """'red won: Blue's Flag lost', 'draw: no side can move', or 'unfinished'."""
    if result is None:
        return "unfinished"
    winners = result.get("winners") or []
    head = f"{', '.join(winners)} won" if winners else "draw"
    reason = result.get("reason")
    return f"{head}: {words(reason, game)}" if reason else head


def _open(args: argparse.Namespace) -> Journal:
    from controller.referee.journal import Journal, default_path

    return Journal(args.journal or default_path(), create=False)


def _fail(message: object) -> int:
    print(f"facedown: {message}", file=sys.stderr)
    return 2


def _load(args: argparse.Namespace) -> tuple[GameSummary, list[Event], GameDef | None]:
    """The game's summary, its events, and the game as the journal kept its file (None for an older journal)."""
    from controller.referee.gamefile import journaled

    with _open(args) as journal:
        return journal.summary(args.id), journal.events(args.id), journaled(journal, args.id)


def move_lines(events: list[Event], game: GameDef | None = None) -> tuple[GameState, list[str]]:
    """The replayed final state and one line per accepted move, redacted for the spectator until the game is over."""
    from controller.referee.replay import rebuild, rulings
    from controller.rules import ARBITER, SPECTATOR, redact_ruling

    final = rebuild(events, game)
    over = final.phase == "over"
    audience = ARBITER if over else SPECTATOR
    lines = []
    # station -> piece type of every face-up piece before the current move (None before the first move). Kept as a
    # small dict rather than a copy of the state: rulings() hands out one live state, and copying it every ply
    # would make the record quadratic in its length.
    face_up: dict[str, str] | None = None
    for ruling, after in rulings(events, game):
        r = redact_ruling(ruling, audience, game_over=over)
        if face_up is not None:
            # a piece already face-up before this move is public knowledge (the ruling only lists new reveals)
            for key, station in (("piece", ruling.frm), ("defender_piece", ruling.to)):
                kind = face_up.get(station)
                if key not in r and kind is not None and (key == "piece" or ruling.kind == "attack"):
                    r[key] = kind
        face_up = {s: p.type for s, p in after.board.items() if p.public}
        mover = f"{r['piece']} " if "piece" in r else ""
        line = f"{r['ply']:>4}. {r['side']:<6} {mover}{r['from']}-{r['to']}"
        if r["kind"] == "attack":
            target = f" {r['defender_piece']}" if "defender_piece" in r else ""
            line += f"  attacks{target}: {OUTCOME.get(r['outcome'], r['outcome'])}"
        extras = [f"{o['side']} out ({words(o['reason'], after.game)})" for o in r["out"]]
        extras += [words(n, after.game) for n in r["notices"]]
        if r["result"]:
            extras.append(f"game over, {result_text(r['result'], after.game)}")
        if extras:
            line += "; " + "; ".join(extras)
        lines.append(line)
    return final, lines


def export_text(summary: GameSummary, events: list[Event], gdef: GameDef | None = None) -> str:
    """The readable record of one game: header, setups (once the game is over) and moves."""
    final, lines = move_lines(events, gdef)
    over = final.phase == "over"
    start = events[0].data
    game = final.game
    seats = start.get("seats") or {}
    players = ", ".join(f"{side}: {seats.get(side, '-')}" for side in game.sides)
    options = ", ".join(f"{k}={v!r}" for k, v in sorted(final.options.items())) or "-"
    result = final.result.to_json() if final.result else None
    out = [
        "FaceDown game record",
        f"Game:     {game.name} ({game.id}), journal game {summary.id}",
        f"Started:  {_when(summary.started)}",
        f"Finished: {_when(summary.finished) if over else 'not yet (spectator view: hidden ranks withheld)'}",
        f"Board:    {start.get('board', '-')}" + (f", profile {start['profile']}" if start.get("profile") else ""),
        f"Players:  {players}",
        f"Options:  {options}",
        f"Result:   {result_text(result, game)}",
        "",
    ]
    if over:
        out.append("Setups")
        order = {s: i for i, s in enumerate(game.station_ids)}
        for side in game.sides:
            placement = final.deployments.get(side, {})
            # a no-break space keeps each "station piece" pair on one line when wrapped
            text = ", ".join(f"{st}\xa0{placement[st]}" for st in sorted(placement, key=lambda s: order.get(s, len(order))))
            wrapped = textwrap.wrap(f"{side}: {text or '-'}", width=100, initial_indent="  ", subsequent_indent="    ")
            out.extend(line.replace("\xa0", " ") for line in wrapped)
    else:
        deployed = ", ".join(final.deployments) or "nobody yet"
        out.append(f"Setups:   hidden until the game ends (deployed: {deployed})")
    out.append("")
    out.append("Moves" if lines else "Moves:    none yet")
    out.extend(lines)
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------- commands
def run_list(args: argparse.Namespace) -> int:
    from controller.referee.journal import JournalError, default_path

    path = args.journal or default_path()
    try:
        with _open(args) as journal:
            games = journal.games()
    except JournalError as exc:
        if args.journal is None and not default_path().exists():
            print(f"no games recorded yet (no journal at {path})")
            return 0
        return _fail(exc)
    if not games:
        print(f"no games recorded yet in {path}")
    for g in games:
        print(f"{g.id:>5}  {g.game:<12} {_when(g.started)}  {g.moves:>4} moves  {result_text(g.result, _game(g.game))}")
    return 0


def run_show(args: argparse.Namespace) -> int:
    from controller.referee.journal import default_path
    from controller.referee.replay import ReplayError

    try:
        summary, events, game = _load(args)
        final, lines = move_lines(events, game)
    except FaceDownError as exc:
        return _fail(f"{args.journal or default_path()}: game {args.id}: {exc}" if isinstance(exc, ReplayError) else exc)
    print(f"game {summary.id}: {final.game.name}, {_when(summary.started)}, {result_text(final.result.to_json() if final.result else None, final.game)}")
    for line in lines:
        print(line)
    return 0


def run_export(args: argparse.Namespace) -> int:

    from controller.records import RecordError
    from controller.referee.journal import default_path
    from controller.referee.replay import ReplayError

    if getattr(args, "signed", False):
        return _export_signed(args)
    try:
        summary, events, game = _load(args)
        if getattr(args, "format", "text") == "gravon":
            from controller.records.gravon import format_game
            from controller.referee.gravon_journal import export_game

            text = format_game(export_game(events, summary.id))
        else:
            text = export_text(summary, events, game)
    except RecordError as exc:
        return _fail(f"{args.journal or default_path()}: {exc}")
    except FaceDownError as exc:
        return _fail(f"{args.journal or default_path()}: game {args.id}: {exc}" if isinstance(exc, ReplayError) else exc)
    return _write_out(args, text, summary.id)


def _write_out(args: argparse.Namespace, text: str, game_id: int) -> int:
    from pathlib import Path

    if args.out is None:
        sys.stdout.write(text)
        return 0
    out = Path(args.out)
    tmp = out.with_name(out.name + ".part")
    try:
        tmp.write_text(text, encoding="utf-8")
        tmp.replace(out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        return _fail(f"cannot write {out}: {exc.strerror}")
    print(f"wrote game {game_id} to {out}", file=sys.stderr)
    return 0


def _export_signed(args: argparse.Namespace) -> int:
    from controller.referee.journal import default_path
    from controller.referee.signing import dumps, fingerprint, make_record

    if getattr(args, "format", "text") != "text":
        return _fail("--signed writes FaceDown's own signed record (JSON); leave out --format")
    path = args.journal or default_path()
    with _open(args) as journal:
        record = make_record(journal, args.id, path)
    code = _write_out(args, dumps(record), args.id)
    if code == 0 and args.out is not None:
        print(f"signed by table key {record['table_key']} (fingerprint {fingerprint(record['table_key'])})", file=sys.stderr)
    return code


def run_verify(args: argparse.Namespace) -> int:
    """A journal's games (all, or one) against their digest chains and the engine; or a signed record file."""
    from pathlib import Path

    target = args.target
    if target is not None and not (target.isdigit() and not Path(target).exists()):
        return _verify_file(args, target)
    if args.key:
        return _fail("--key checks a signed record FILE; a journal is checked against its own chain")
    with _open(args) as journal:
        ids = [int(target)] if target is not None else [g.id for g in journal.games()]
        bad = 0
        for gid in ids:
            line, ok = _verify_game(journal, gid)
            print(line)
            bad += not ok
        orphans = journal.orphans() if target is None else []
        for seq in orphans:
            print(f"event {seq}: belongs to no game in this journal (damaged)")
        if target is None:
            print(f"{journal.path}: {len(ids)} game(s), " + (f"{bad} damaged or not replaying" if bad or orphans
                                                            else "all intact"))
    return 2 if bad or orphans else 0


def _verify_game(journal: Journal, gid: int) -> tuple[str, bool]:
    from controller.referee.gamefile import journaled
    from controller.referee.replay import ReplayError, rebuild
    from controller.rules import GameFileError, RulesError

    summary = journal.summary(gid)
    found = journal.check(gid)
    head = f"game {gid} ({summary.game})"
    if found.damage is not None:
        exc = found.damage
        more = (f"; intact up to event {exc.intact[-1].seq}: `facedown record repair {gid}` goes on from there"
                if exc.repairable else "; its start is damaged: it cannot go on")
        return f"{head}: DAMAGED: {exc.brief}{more}", False
    try:
        state = rebuild(found.events, journaled(journal, gid))
    except (ReplayError, RulesError, GameFileError) as exc:
        return f"{head}: its events are intact but do not replay: {exc}", False
    result = result_text(state.result.to_json() if state.result else None, state.game)
    aside = f", {len(found.set_aside)} damaged event(s) set aside by the arbiter" if found.set_aside else ""
    if not found.chained:
        return (f"{head}: {len(found.events)} events journaled before FaceDown chained them (nothing proves them "
                f"intact); replays to: {result}"), True
    return f"{head}: intact, {len(found.events)} events chained{aside}; replays to: {result} (head {found.head[:16]})", True


def _verify_file(args: argparse.Namespace, target: str) -> int:
    from controller.referee.signing import fingerprint, read_key_argument, read_record, verify_record

    key = read_key_argument(args.key) if args.key else None
    doc = read_record(target)
    ok = verify_record(doc, key, where=target)
    rule = result_text(ok.result, _game(ok.game))
    print(f"{target}: game {ok.journal_game} ({ok.game}): intact ({ok.events} events chained), replays through the "
          f"engine to: {rule} in {ok.plies} plies")
    if key is not None:
        print(f"  signed by the table key given ({fingerprint(ok.table_key)})")
    else:
        print(f"  signed by table key {ok.table_key} (fingerprint {fingerprint(ok.table_key)}): give --key with the "
              "table's enrolled key to check it is that table's")
    return 0


def run_repair(args: argparse.Namespace) -> int:
    """The arbiter goes on from the last intact event of a damaged game (an arbiter's repair, journaled)."""
    from controller.referee.journal import JournalLock, default_path

    path = args.journal or default_path()
    with JournalLock(path), _open(args) as journal:
        found = journal.check(args.id)
        if found.damage is None:
            return _fail(f"{journal.path}: game {args.id} is intact: there is nothing to repair")
        seq = journal.repair(args.id)
        after = journal.check(args.id)
    last = found.damage.intact[-1].seq if found.damage.intact else None
    print(f"game {args.id}: {found.damage.brief}; the arbiter goes on from event {last} (repair journaled as event {seq}, "
          f"{len(after.set_aside)} event(s) set aside, kept in the journal). `facedown play` resumes it from there.")
    return 0


def run_import(args: argparse.Namespace) -> int:
    """Replay each Gravon file through the engine and journal it; a file that does not replay is refused, with the
    move number and why, and nothing of it is written."""
    from controller.commands.rules import parse_options
    from controller.records import RecordError
    from controller.records.gravon import read, result_of
    from controller.referee.gravon_journal import import_game
    from controller.referee.journal import Journal, default_path

    options = parse_options(args.option)
    failed = 0
    with Journal(args.journal or default_path()) as journal:
        for name in args.files:
            try:
                record = read(name)
                gid = import_game(journal, record, options)
            except RecordError as exc:
                print(f"facedown: not imported: {exc}", file=sys.stderr)
                failed += 1
                continue
            print(f"{gid:>5}  {name}: {record.game}, {len(record.moves)} moves, {result_text(result_of(record))}")
    return 2 if failed else 0
