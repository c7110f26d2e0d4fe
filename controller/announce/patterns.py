"""The buzzer's vocabulary as data: one documented pattern of (pitch, duration) notes per kind of verdict.

Each pattern is distinct by pitch *and* by rhythm, so a plain on/off buzzer (which can only play the
rhythm) still tells them apart. ``docs/buzzer.md`` is the table a club learns them from; a test keeps
that table and these patterns the same.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .events import EventError, check_event

#: One note: a frequency in Hz (None: silence) and how long it lasts in milliseconds.
Note = tuple[float | None, int]

# Pitches used (equal temperament, rounded to whole Hz): all inside a passive piezo's comfortable range.
A4, C5, E5, G5, C6, E6, A6 = 440, 523, 659, 784, 1047, 1319, 1760

#: Silence between a game-over fanfare and the winner's turn pips.
WINNER_GAP_MS = 300


@dataclass(frozen=True, slots=True)
class Pattern:
    """A named buzzer pattern and what it means."""

    name: str
    meaning: str
    notes: tuple[Note, ...]

    def __post_init__(self) -> None:
        if not self.notes:
            raise ValueError(f"pattern {self.name!r} has no notes")
        for freq, ms in self.notes:
            if ms <= 0 or (freq is not None and freq <= 0):
                raise ValueError(f"pattern {self.name!r}: bad note ({freq!r}, {ms!r})")

    @property
    def duration_ms(self) -> int:
        return sum(ms for _, ms in self.notes)

    def rhythm(self) -> tuple[tuple[bool, int], ...]:
        """What an on/off buzzer plays: runs of (sounding, ms), adjacent runs of the same kind merged."""
        runs: list[tuple[bool, int]] = []
        for freq, ms in self.notes:
            on = freq is not None
            if runs and runs[-1][0] == on:
                runs[-1] = (on, runs[-1][1] + ms)
            else:
                runs.append((on, ms))
        while runs and not runs[-1][0]:  # trailing silence is not heard
            runs.pop()
        return tuple(runs)

    def notation(self) -> str:
        """The notes as written in docs/buzzer.md, e.g. ``523 Hz 80 ms, rest 40 ms``."""
        return ", ".join(f"rest {ms} ms" if f is None else f"{f:g} Hz {ms} ms" for f, ms in self.notes)

    def then(self, other: Pattern, gap_ms: int) -> Pattern:
        """This pattern, a silence of ``gap_ms``, then ``other``."""
        return Pattern(f"{self.name}+{other.name}", f"{self.meaning}; {other.meaning}",
                       (*self.notes, (None, gap_ms), *other.notes))


def _pips(count: int) -> Pattern:
    notes: list[Note] = []
    for i in range(count):
        if i:
            notes.append((None, 120))
        notes.append((A6, 60))
    ordinal = ("first", "second", "third", "fourth")[count - 1]
    return Pattern(f"turn_{count}", f"{ordinal} side to move: {count} short high pip{'s' if count > 1 else ''}", tuple(notes))


#: Every pattern, by name. ``turn_N`` is for the N-th side in the game file's order (red first).
PATTERNS: dict[str, Pattern] = {
    p.name: p
    for p in (
        Pattern("attacker", "attacker survives: rising, short-short-LONG",
                ((C5, 80), (None, 40), (G5, 80), (None, 40), (C6, 320))),
        Pattern("defender", "defender survives: falling, LONG-short-short",
                ((C6, 320), (None, 40), (G5, 80), (None, 40), (C5, 80))),
        Pattern("both", "both removed: a low rattle of five clicks",
                ((A4, 60), (None, 30), (C5, 60), (None, 30), (A4, 60), (None, 30), (C5, 60), (None, 30),
                 (A4, 60))),
        Pattern("bounce", "no effect, both pieces go back: two flat middle notes",
                ((G5, 200), (None, 200), (G5, 200))),
        Pattern("illegal", "illegal move, put it back: one long low buzz", ((A4, 800),)),
        Pattern("mismatch", "board does not match, check it: beep-beep ... beep-beep",
                ((E6, 100), (None, 100), (E6, 100), (None, 400), (E6, 100), (None, 100), (E6, 100))),
        _pips(1),
        _pips(2),
        _pips(3),
        _pips(4),
        Pattern("win", "game over with a winner: rising fanfare (then the winner's turn pips)",
                ((C5, 100), (None, 30), (E5, 100), (None, 30), (G5, 100), (None, 30), (C6, 500))),
        Pattern("draw", "game over, drawn: slow low-high-low-high",
                ((C5, 250), (None, 50), (G5, 250), (None, 50), (C5, 250), (None, 50), (G5, 250))),
        Pattern("fault", "the referee has stopped: a two-tone siren, one unbroken two-second wail",
                ((E6, 250), (A4, 250), (E6, 250), (A4, 250), (E6, 250), (A4, 250), (E6, 250), (A4, 250))),
        Pattern("link_lost", "the board's sensors are disconnected: three slow low beeps",
                ((A4, 150), (None, 350), (A4, 150), (None, 350), (A4, 150))),
    )
}

#: The sides of the games we ship, in turn order; an announcer can be given a game's own ``sides``.
DEFAULT_SIDES: tuple[str, ...] = ("red", "blue")


def turn_pattern(player: str, sides: Sequence[str] = DEFAULT_SIDES) -> Pattern:
    """The pips for ``player``: one for the first side, two for the second, and so on."""
    if player not in sides:
        raise EventError(f"side {player!r} is not one of this game's sides: {', '.join(sides)}")
    index = list(sides).index(player) + 1
    if f"turn_{index}" not in PATTERNS:
        raise EventError(f"no turn pattern for side number {index} ({player!r}); at most 4 sides have one")
    return PATTERNS[f"turn_{index}"]


def pattern_for(event: Mapping[str, Any], sides: Sequence[str] = DEFAULT_SIDES) -> Pattern | None:
    """The pattern that announces ``event``, or None for events the buzzer keeps quiet about.

    Quiet: plain moves (the next turn's pips follow), fix-up instructions (the verdict already sounded),
    pause, resume, notices, setup, board readings and undo (they are for the screen), and a computer seat's
    instructions (its turn's pips already sounded; the voice, the console and the pages say which token to move).
    """
    kind = check_event(event)
    if kind in ("start", "turn"):
        return turn_pattern(event["player"], sides)
    if kind == "attack":
        return PATTERNS[event["outcome"]]
    if kind in ("illegal", "mismatch", "fault"):
        return PATTERNS[kind]
    if kind == "link":
        return PATTERNS["link_lost"] if event["status"] == "lost" else None
    if kind == "game_over":
        winners = list(event["winners"])
        if not winners:
            return PATTERNS["draw"]
        pattern = PATTERNS["win"]
        for winner in winners:
            pattern = pattern.then(turn_pattern(winner, sides), WINNER_GAP_MS)
        return pattern
    return None
