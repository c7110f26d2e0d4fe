"""`facedown profile new GAME`: drafts a hardware profile for a game that has none (docs/profiles.md): a reed
matrix on the Pi's GPIO header, its rows and columns sized to the board, each station on one crossing in board
order (rows of the board first), the buzzer on GPIO18 and the status LEDs on GPIO25-27. The draft is checked by the
profile loader before it is written; edit the channels to match how you wire the board."""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

#: BCM pins a drafted matrix may use, in the order they are taken: never 0-1 (HAT EEPROM), 18 (PWM buzzer) or 25-27
#: (LEDs); I2C (2-3) and the UART (14-15) only when a big board needs them (as the shipped Stratego profile does).
MATRIX_PINS = (4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 19, 20, 21, 22, 23, 24, 2, 3, 14, 15)
BUZZER = 18
LEDS = {"ready": 25, "turn": 26, "error": 27}


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("profile", help="draft a hardware profile for a game")
    act = p.add_subparsers(dest="profile_command", metavar="ACTION")
    act.required = True
    new = act.add_parser("new", help="draft a GPIO reed-matrix profile for GAME (printed, or written with --out)")
    new.add_argument("game", help="game id or game file")
    new.add_argument("--out", metavar="FILE", help="write it here (refuses to overwrite) instead of printing it")
    new.set_defaults(func=run_new)


def matrix_shape(stations: int) -> tuple[int, int]:
    """(rows, columns) of the smallest near-square matrix with a crossing for every station, within the free pins."""
    if stations < 1:
        raise ValueError("a board with no stations needs no profile")
    best: tuple[int, int] | None = None
    for rows in range(1, len(MATRIX_PINS)):
        cols = math.ceil(stations / rows)
        if rows + cols <= len(MATRIX_PINS) and (best is None or (rows + cols, abs(rows - cols)) < (sum(best), abs(best[0] - best[1]))):
            best = (rows, cols)
    if best is None:
        raise ValueError(f"{stations} stations need more than the {len(MATRIX_PINS)} free GPIO pins of a reed matrix "
                         "allow; build the board with the Pico scanner instead (docs/firmware.md, docs/profiles.md)")
    return best


def draft(game_id: str) -> str:
    """The text of a draft profile for the game (raises ValueError when the board is too big for the GPIO header)."""
    from controller.rules import load_game

    game = load_game(game_id)
    stations = sorted(game.stations, key=lambda s: (s.y, s.x))
    rows, cols = matrix_shape(len(stations))
    row_pins, col_pins = MATRIX_PINS[:rows], MATRIX_PINS[rows:rows + cols]
    out = [
        f"# Draft hardware profile for {game.name} ({game.id}), made by `facedown profile new`: a reed-switch matrix of",
        f"# {rows} x {cols} on the Pi's GPIO header, one reed switch and one diode per station (anode on the column).",
        "# Stations are numbered in board order (by row of the board, then along it); change the channels to match",
        "# your wiring, then check the board with `facedown hw-test --board gpio --profile THIS_FILE`. Format: docs/profiles.md.",
        "format: 1",
        f"name: {game.id}-reed-{rows}x{cols}",
        f"description: {game.name}, reed matrix {rows} x {cols} on the Pi's GPIO (draft)",
        f"game: {game.id}",
        "sensing: reed",
        "scan_period_ms: 10",
        "settle_ms: 40",
        "pins:",
        f"  rows: [{', '.join(map(str, row_pins))}]",
        f"  columns: [{', '.join(map(str, col_pins))}]",
        f"  buzzer: {BUZZER}",
        "  leds: {" + ", ".join(f"{k}: {v}" for k, v in LEDS.items()) + "}",
        "channels:             # station: [row, column] (indexes into pins.rows / pins.columns)",
    ]
    for i, st in enumerate(stations):
        r, c = divmod(i, cols)
        if c == 0:
            out.append(f"  # row {r}: GPIO{row_pins[r]}")
        out.append(f"  {st.id!r}: [{r}, {c}]" if not str(st.id).isidentifier() else f"  {st.id}: [{r}, {c}]")
    return "\n".join(out) + "\n"


def run_new(args: argparse.Namespace) -> int:
    from controller.sensing.profile import parse_profile

    try:
        text = draft(args.game)
        parse_profile(text, f"draft profile for {args.game}")  # the loader's own checks: a draft that loads
    except ValueError as exc:  # a ProfileError, or a board too big for the header
        print(f"facedown profile new: {exc}", file=sys.stderr)
        return 2
    if args.out is None:
        sys.stdout.write(text)
        return 0
    path = Path(args.out)
    if path.exists():
        print(f"facedown profile new: {path} exists; not overwritten", file=sys.stderr)
        return 2
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}: edit its channels to match your wiring")
    return 0
