"""A table's Ed25519 key and its signed game records: the key kept beside the journal, a finished game's record with
its digest chain signed by it, and the check that a record is intact, signed by a given key and replays to its result.

The key's 32 secret bytes (an Ed25519 seed) are made with the table's first start, in ``<journal>.sign`` (mode 600)
beside the journal's token key ``<journal>.key``; making them needs no crypto library, so ``facedown play`` starts
as fast as before. PyNaCl (libsodium) is imported only to derive the public key, sign or verify.

A signed record is a JSON object: the *statement* (what is signed: format, game, journal game number, start time,
the game file's SHA-256, event count, chain head, result, plies, seats, the table's public key, when it was signed)
plus the game file's text, every event of the game as stored (``[seq, kind, time, data, digest]``) and the
signature. The head is the digest chain's last link (controller.referee.chain), which covers every event and the
game file, so signing the statement signs the whole game.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
import time
import zlib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import chain
from .journal import ChainError, Event, Journal
from .signing_key import SignedRecordError, seed_path_of, signing_seed

FORMAT = "facedown-signed-record"
VERSION = 1
KEY_PREFIX = "ed25519:"
_DOMAIN = b"facedown signed game record v1\n"  # signatures made for this, and nothing else
STATEMENT = ("format", "version", "game", "journal_game", "started", "game_file_sha256", "events", "head", "result",
             "plies", "seats", "table_key", "signed_at")
MAX_RECORD_BYTES = 32 * 1024 * 1024  # a 5,000-ply game's record is about 1 MB


class NotOver(SignedRecordError):
    """The game is not over (in the journal yet): its record is signed only once it has ended."""


# ---------------------------------------------------------------------- the table's key
def _nacl() -> Any:
    try:
        import nacl.exceptions
        import nacl.signing
    except ImportError:
        raise SignedRecordError("signed records need PyNaCl: `pip install pynacl` (Raspberry Pi OS: "
                                "`sudo apt install python3-nacl`)") from None
    return nacl


def public_key(journal_path: str | os.PathLike[str]) -> str:
    """The table's public key as ``ed25519:BASE64`` (what `facedown table key` prints and a club enrolls)."""
    nacl = _nacl()
    raw = bytes(nacl.signing.SigningKey(signing_seed(journal_path)).verify_key)
    return format_key(raw)


def format_key(raw: bytes) -> str:
    return KEY_PREFIX + base64.b64encode(raw).decode("ascii")


def fingerprint(key: str) -> str:
    """A short name for a public key (the first 16 hex digits of its SHA-256), to compare by eye."""
    return hashlib.sha256(parse_key(key)).hexdigest()[:16]


def parse_key(text: str) -> bytes:
    """The 32 bytes of a public key written ``ed25519:BASE64`` (or bare base64, or 64 hex digits); a clear error else."""
    t = text.strip()
    body = t[len(KEY_PREFIX):] if t.startswith(KEY_PREFIX) else t
    raw: bytes | None = None
    if len(body) == 64 and all(c in "0123456789abcdefABCDEF" for c in body):
        raw = bytes.fromhex(body)
    else:
        try:
            raw = base64.b64decode(body, validate=True)
        except (binascii.Error, ValueError):
            raw = None
    if raw is None or len(raw) != 32:
        shown = t if len(t) <= 60 else t[:57] + "..."
        raise SignedRecordError(f"{shown!r} is not a table's public key: expected ed25519:BASE64 (32 bytes), as "
                                "`facedown table key` prints it")
    return raw


def read_key_argument(value: str) -> bytes:
    """``--key``: the key itself, or a file holding it (its first line)."""
    path = Path(value)
    if not value.startswith(KEY_PREFIX) and path.is_file():
        from controller.textfiles import InputFileError, read_text

        try:  # a key file is one short line: bounded, a regular file, UTF-8
            first = read_text(path, "key file", cap=4096).strip().splitlines()
        except InputFileError as exc:
            raise SignedRecordError(str(exc)) from None
        if not first:
            raise SignedRecordError(f"{path}: empty: expected a table's public key (ed25519:BASE64)")
        return parse_key(first[0])
    return parse_key(value)


# ---------------------------------------------------------------------- making a record
def _canonical(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


def make_record(journal: Journal, game_id: int, journal_path: str | os.PathLike[str] | None = None,
                *, now: float | None = None) -> dict[str, Any]:
    """The signed record of a finished, intact game of ``journal`` (signed with the key beside ``journal_path``,
    by default the journal's own path). SignedRecordError (or ChainError) says why a game cannot be signed."""
    from .gamefile import journaled
    from .replay import rebuild

    check = journal.check(game_id)
    if check.damage is not None:
        raise check.damage
    if not check.chained:
        raise SignedRecordError(f"{journal.path}: game {game_id} was journaled before FaceDown chained its events, "
                                "so nothing proves it intact: its record cannot be signed")
    # the rows signed are read once; their chain is walked again here, so the statement fits them exactly even if
    # the referee journals something more meanwhile
    rows, game, started = journal.chain_rows(game_id)
    kept = journal.game_file(game_id)
    walked = chain.walk(rows, chain.root(game_id, game, started, kept.sha256 if kept else None), None, tail=False)
    if walked.damage is not None or len(rows) < len(check.events):
        raise SignedRecordError(f"{journal.path}: game {game_id} changed while its record was made: try again")
    events = [Event(r.seq, r.kind, json.loads(r.data), r.time) for r in walked.intact]
    state = rebuild(events, journaled(journal, game_id))
    if state.phase != "over" or state.result is None:
        raise NotOver(f"{journal.path}: game {game_id} is not over: its record would show the hidden pieces, "
                      "so it is signed only once the game has ended")
    nacl = _nacl()
    key = nacl.signing.SigningKey(signing_seed(journal_path or journal.path))
    statement = {
        "format": FORMAT, "version": VERSION, "game": game, "journal_game": game_id, "started": started,
        "game_file_sha256": kept.sha256 if kept else None, "events": len(rows), "head": walked.head,
        "result": state.result.to_json(), "plies": state.ply, "seats": dict(events[0].data.get("seats") or {}),
        "table_key": format_key(bytes(key.verify_key)), "signed_at": round(time.time() if now is None else now, 3),
    }
    signature = key.sign(_DOMAIN + _canonical(statement)).signature
    return {**statement, "game_file": {"file": kept.file, "text": kept.text} if kept else None,
            "rows": [[r.seq, r.kind, r.time, r.data, r.digest] for r in rows],
            "signature": base64.b64encode(signature).decode("ascii")}


def dumps(record: Mapping[str, Any]) -> str:
    """A record as the file `facedown record export --signed` writes (one JSON object, keys sorted)."""
    return json.dumps(record, sort_keys=True, ensure_ascii=False, indent=1, allow_nan=False) + "\n"


def pack(record: Mapping[str, Any]) -> str:
    """A record made small for the club's broker: compact JSON, zlib-compressed, base64, without the per-event
    digests (random, so they do not compress; kept for a game an arbiter repaired, whose set-aside events need them):
    the verifier walks the chain again from the events to the signed head, which any change to an event breaks all
    the same; only a damaged event is then not named by number."""
    rows = record.get("rows", [])
    repaired = any(r[1] == "arbiter" and '"repair"' in r[3] for r in rows)  # set-aside events need their digests
    light = record if repaired else {**record, "rows": [[*r[:4], None] for r in rows]}
    return base64.b64encode(zlib.compress(_canonical(light), 9)).decode("ascii")


def unpack(text: Any, limit: int = MAX_RECORD_BYTES) -> dict[str, Any]:
    """A record from :func:`pack`'s text, its expanded size bounded by ``limit`` (a zip bomb is refused)."""
    if not isinstance(text, str):
        raise SignedRecordError("the signed record should be the packed text the table sends")
    try:
        packed = base64.b64decode(text, validate=True)
        inflater = zlib.decompressobj()
        raw = inflater.decompress(packed, limit)
        if inflater.unconsumed_tail or not inflater.eof:
            raise SignedRecordError(f"the signed record is larger than {limit} bytes, or cut short")
    except (binascii.Error, ValueError, zlib.error) as exc:
        raise SignedRecordError(f"the signed record does not unpack ({exc})") from None
    return loads(raw, "the signed record")


def loads(raw: bytes | str, where: str) -> dict[str, Any]:
    from controller.textfiles import decode, parse_json

    try:  # the project's own parse: bounded nesting and numbers, a bad byte named
        doc = parse_json(raw if isinstance(raw, str) else decode(raw, where, "signed record"), where)
    except ValueError as exc:
        raise SignedRecordError(f"{where}: not a FaceDown signed record (not JSON: {exc})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise SignedRecordError(f"{where}: not a FaceDown signed record (no \"format\": \"{FORMAT}\")")
    return doc


def read_record(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A signed record file, read with a size cap."""
    from controller.textfiles import InputFileError, read_bytes

    p = Path(path)
    try:  # bounded and a regular file (a FIFO or a device is refused by what it is)
        raw = read_bytes(p, "signed record", cap=MAX_RECORD_BYTES)
    except InputFileError as exc:
        raise SignedRecordError(str(exc)) from None
    return loads(raw, str(p))


# ---------------------------------------------------------------------- checking a record
@dataclass(frozen=True)
class Verified:
    """A record that checked out: signed by ``table_key``, intact, replaying to ``result`` in ``plies`` plies."""

    game: str
    journal_game: int
    result: dict[str, Any]
    plies: int
    seats: dict[str, str]
    sides: tuple[str, ...]
    head: str
    table_key: str
    events: int
    reasons: tuple[str, ...] = ()  # the result's reason in words, one per catalog (or the sentence it holds)


def _field(doc: Mapping[str, Any], name: str, typ: type | tuple[type, ...], where: str) -> Any:
    value = doc.get(name)
    if not isinstance(value, typ) or (isinstance(value, bool) and typ is not bool):
        raise SignedRecordError(f"{where}: field {name!r} is missing or of the wrong type")
    return value


def verify_record(doc: Mapping[str, Any], key: bytes | None = None, where: str = "record") -> Verified:
    """Check a signed record: its chain (a damaged event is named), its signature (by ``key`` when given, else by
    the key it names) and that its moves replay through the engine to the result it states."""
    from controller.rules import GameFileError, RulesError, load_game, parse_game

    from .replay import ReplayError, rebuild

    if doc.get("format") != FORMAT:
        raise SignedRecordError(f"{where}: not a FaceDown signed record")
    if doc.get("version") != VERSION:
        raise SignedRecordError(f"{where}: record version {doc.get('version')!r}; this FaceDown reads version {VERSION}")
    game = _field(doc, "game", str, where)
    gid = _field(doc, "journal_game", int, where)
    started = _field(doc, "started", (int, float), where)
    head = _field(doc, "head", str, where)
    count = _field(doc, "events", int, where)
    stated = _field(doc, "result", dict, where)
    plies = _field(doc, "plies", int, where)
    seats = doc.get("seats") or {}
    table_key = _field(doc, "table_key", str, where)
    signature = _field(doc, "signature", str, where)
    raw_rows = _field(doc, "rows", list, where)
    if not isinstance(seats, dict):
        raise SignedRecordError(f"{where}: field 'seats' should map sides to names")
    kept = doc.get("game_file")
    sha = doc.get("game_file_sha256")
    text = None
    if kept is not None:
        if not isinstance(kept, dict) or not isinstance(kept.get("text"), str) or not isinstance(sha, str):
            raise SignedRecordError(f"{where}: the game file kept with the record is malformed")
        text = kept["text"]
        if hashlib.sha256(text.encode("utf-8")).hexdigest() != sha:
            raise SignedRecordError(f"{where}: the game file kept with the record is damaged (its SHA-256 does not match)")
    elif sha is not None:
        raise SignedRecordError(f"{where}: the record names a game file ({sha[:16]}...) but does not hold it")
    rows = []
    for n, r in enumerate(raw_rows):
        if not (isinstance(r, list) and len(r) == 5 and isinstance(r[0], int) and isinstance(r[1], str)
                and isinstance(r[2], int | float) and isinstance(r[3], str) and (r[4] is None or isinstance(r[4], str))):
            raise SignedRecordError(f"{where}: event #{n + 1} is malformed (expected [seq, kind, time, data, digest])")
        rows.append(chain.Row(r[0], r[1], float(r[2]), r[3], r[4]))
    walked = chain.walk(rows, chain.root(gid, game, float(started), sha), (count, head))
    if walked.damage is not None:
        what = f"event {walked.damage.seq}" if walked.damage.seq is not None else "its end"
        raise SignedRecordError(f"{where}: game {gid}, {what} is damaged ({walked.damage.why})")
    # the signature: over the statement, by the key the caller trusts (or, without one, the key the record names)
    nacl = _nacl()
    named = parse_key(table_key)
    if key is not None and named != key:
        raise SignedRecordError(f"{where}: signed by table key {fingerprint(table_key)}, not by the key given "
                                f"({fingerprint(format_key(key))})")
    statement = {k: doc.get(k) for k in STATEMENT}
    try:
        sig = base64.b64decode(signature, validate=True)
        nacl.signing.VerifyKey(named).verify(_DOMAIN + _canonical(statement), sig)
    except (binascii.Error, ValueError, nacl.exceptions.BadSignatureError):
        raise SignedRecordError(f"{where}: the signature does not match: the record was changed after it was signed, "
                                "or not signed by this key") from None
    # the moves, through the engine, to the stated result
    events = []
    for row in walked.intact:
        try:
            data = json.loads(row.data)
        except ValueError:
            data = None
        if not isinstance(data, dict):
            raise SignedRecordError(f"{where}: event {row.seq}'s data does not read")
        events.append(Event(row.seq, row.kind, data, row.time))
    try:
        gdef = parse_game(text, f"{where}: the game file") if text is not None else load_game(game)
        state = rebuild(events, gdef)
    except (ReplayError, RulesError, GameFileError) as exc:
        raise SignedRecordError(f"{where}: the moves do not replay: {exc}") from None
    if state.result is None or state.phase != "over":
        raise SignedRecordError(f"{where}: the moves replay to an unfinished game, not to the result it states")
    found = state.result.to_json()
    if sorted(found["winners"]) != sorted(stated.get("winners") or []) or found.get("reason") != stated.get("reason"):
        raise SignedRecordError(f"{where}: the moves replay to {_said(found)}, but the record states {_said(stated)}")
    if state.ply != plies:
        raise SignedRecordError(f"{where}: the moves replay in {state.ply} plies, but the record states {plies}")
    return Verified(game, gid, found, plies, {str(k): str(v) for k, v in seats.items()}, tuple(state.game.sides), head,
                    table_key, count, _reason_words(found.get("reason"), gdef))


def _reason_words(reason: Any, game: Any) -> tuple[str, ...]:
    """A result's reason as each catalog words it (a sentence from an older journal as it is)."""
    from controller.messages import LANGS, MessageError, is_say, render

    if not is_say(reason):
        return (str(reason),)
    out = []
    for lang in LANGS:
        try:
            out.append(render(reason, lang, game))
        except MessageError:
            out.append(str(reason.get("code")))
    return tuple(out)


def _said(result: Mapping[str, Any]) -> str:
    winners = result.get("winners") or []
    return f"{', '.join(map(str, winners))} winning" if winners else "a draw"


__all__ = ["ChainError", "SignedRecordError", "Verified", "make_record", "verify_record", "public_key", "seed_path_of",
           "signing_seed"]
