"""The journal's digest chain (pure: no I/O): each event's SHA-256 covers the one before, the first the game's start.

A game's chain starts at its *root*, the digest of the game's journal number, game id, start time and the SHA-256 of
the game file it was started from (``-`` for a game built in code). Each event's digest is the SHA-256 of the
digest before it, its kind, its time and its data exactly as stored. So changing, removing or reordering any event
of a game changes every digest after it; the journal keeps the newest digest and the event count of each game
(its *head*), so an event lost from the end is found too.

:func:`walk` checks a game's stored rows against the chain and says where it first breaks. Events written before
the journal chained them (schema 2 and older) carry no digest: a game made wholly of them is *unchained* (nothing
proves it intact), and in a game resumed after the upgrade its older events are sealed by the first chained event
(from then on a change to them is found; before then nothing proves them).

An arbiter's ``repair`` event sets damaged events aside: it chains onto the last intact event (named in its
``after``), so the chain goes on past the events it set aside.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field

VERSION = "facedown-journal-chain/1"
NO_GAME_FILE = "-"


def root(game_id: int, game: str, started: float, game_file_sha256: str | None) -> str:
    """The digest a game's first event is chained to."""
    text = f"{VERSION}\n{game_id}\n{game}\n{float(started)!r}\n{game_file_sha256 or NO_GAME_FILE}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def link(prev: str, kind: str, time: float, data: str) -> str:
    """The digest of one event (``data``: its JSON text exactly as stored) chained to ``prev``."""
    return hashlib.sha256(f"{prev}\n{kind}\n{float(time)!r}\n{data}".encode()).hexdigest()


@dataclass(frozen=True)
class Row:
    """One stored event as the chain sees it: sequence number, kind, time, data text and stored digest (or None)."""

    seq: int
    kind: str
    time: float
    data: str
    digest: str | None


@dataclass(frozen=True)
class Break:
    """Where a game's chain first breaks: ``index`` of the first event that fails (``len(rows)`` when events are
    missing at the end or the head is damaged), its ``seq`` (None then) and why."""

    index: int
    seq: int | None
    why: str


@dataclass
class Walk:
    """What :func:`walk` found: the rows that verify (``intact``, in order, damaged ones set aside by a repair left
    out), the first break (None: intact), whether any event is chained, the newest digest and the sets aside."""

    intact: list[Row] = field(default_factory=list)
    damage: Break | None = None
    chained: bool = False
    head: str = ""
    set_aside: list[int] = field(default_factory=list)  # seqs of damaged events an arbiter's repair set aside


def _repair_after(row: Row) -> int | None:
    """The ``after`` seq of an arbiter repair event, or None if ``row`` is not one (or its data does not read)."""
    if row.kind != "arbiter":
        return None
    try:
        data = json.loads(row.data)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("action") != "repair":
        return None
    after = data.get("after")
    return after if isinstance(after, int) and not isinstance(after, bool) else None


def walk(rows: Sequence[Row], start: str, head: tuple[int, str] | None, *, tail: bool = True) -> Walk:
    """Check ``rows`` (one game's events, oldest first) against the chain from ``start`` (its :func:`root`) and the
    journal's ``head`` for the game (``(event count, newest digest)``; None: the journal keeps none). ``tail=False``
    checks the rows alone (the caller checks the head itself)."""
    out = Walk()
    prev = start
    i = 0
    n = len(rows)
    while i < n:
        row = rows[i]
        expected = link(prev, row.kind, row.time, row.data)
        if row.digest is None and not out.chained:
            prev = expected  # written before the chain: sealed by the first chained event after it
            out.intact.append(row)
            i += 1
            continue
        if row.digest == expected:
            out.chained = True
            prev = expected
            out.intact.append(row)
            i += 1
            continue
        # the chain breaks here: an arbiter's repair further on may have set this event (and those after it) aside
        last_seq = out.intact[-1].seq if out.intact else None
        resumed = None
        if last_seq is not None:
            for j in range(i + 1, n):
                cand = rows[j]
                if _repair_after(cand) == last_seq and cand.digest == link(prev, cand.kind, cand.time, cand.data):
                    resumed = j
                    break
        if resumed is None:
            why = "its checksum is missing" if row.digest is None else "its checksum does not match"
            if i == 0:
                why += ": the game's start (or the game file kept with it) was changed"
            else:
                why += ": it was changed, or an event before it is missing"
            out.damage = Break(i, row.seq, why)
            out.head = prev
            return out
        out.set_aside.extend(r.seq for r in rows[i:resumed])
        i = resumed
    out.head = prev
    if not tail:
        return out
    if head is None:
        if out.chained:
            out.damage = Break(n, None, "the journal's record of the game's newest event (its head) is missing")
        return out
    count, digest = head
    if count > n:
        last = f"after event {rows[-1].seq}" if rows else "of the game"
        out.damage = Break(n, None, f"{count - n} event(s) {last} are missing")
    elif count != n or digest != prev:
        out.damage = Break(n, None, "the journal's record of the game's newest event (its head) does not match it")
    return out
