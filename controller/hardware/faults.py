"""Points hw-test's findings at wires: which row, column, 74HC165 chip, input and pin each station hangs on, and the
faults that explain a set of dead, stuck or doubled stations (a cut row, a cut column, a dead chip, two lines shorted).

Pure: ``station_wires(profile)`` reads the profile's build design; ``diagnose`` takes hw-test's report and says what
to check, most likely first, in words for the builder ("column C3, GP13 (Pico pin 17)").

>>> from controller.sensing.profile import find_profile
>>> print(station_wires(find_profile("stratego-pico"))["d1"][1].text)
column C3, GP13 (Pico pin 17)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Wire:
    """One conductor a station's reading goes through: ``kind`` row / column / chip / input, its index, its words."""

    kind: str
    key: tuple[Any, ...]
    text: str


def station_wires(profile: Any) -> dict[str, list[Wire]]:
    """Station -> the wires its reading goes through (a matrix row and column, or a chip and its input)."""
    from .build import design, firmware_config
    from .chain import INPUT_NAMES, PIN_165
    from .wiring import header_pin, pico_pin

    out: dict[str, list[Wire]] = {}
    if profile.scanner is None:
        for s, (r, c) in profile.channels.items():
            rp, cp = profile.pins.rows[r], profile.pins.columns[c]
            out[s] = [Wire("row", ("row", r), f"row R{r}, GPIO{rp} (header pin {header_pin(rp)}: wire {header_pin(rp)} "
                                               "of the 40-way ribbon)"),
                      Wire("column", ("column", c), f"column C{c}, GPIO{cp} (header pin {header_pin(cp)}: wire "
                                                     f"{header_pin(cp)} of the 40-way ribbon)")]
        return out
    d = design(profile)
    if d.pico_matrix:
        cfg = firmware_config(d)
        cols = d.pico_matrix[1]
        rows_gp, cols_gp = cfg["matrix"]["rows"], cfg["matrix"]["cols"]
        for s, ch in profile.channels.items():
            r, c = divmod(ch, cols)
            out[s] = [Wire("row", ("row", r), f"row R{r}, GP{rows_gp[r]} (Pico pin {pico_pin(rows_gp[r])})"),
                      Wire("column", ("column", c), f"column C{c}, GP{cols_gp[c]} (Pico pin {pico_pin(cols_gp[c])})")]
        return out
    if d.chips_165:
        for s, ch in profile.channels.items():
            k, i = divmod(ch, 8)
            letter = INPUT_NAMES[i]
            out[s] = [Wire("chip", ("chip", k), f"74HC165 #{k}"),
                      Wire("input", ("input", k, i), f"74HC165 #{k} input {letter} (pin {PIN_165[letter]})")]
        return out
    for s, ch in profile.channels.items():
        out[s] = [Wire("reader", ("reader", ch), f"reader {ch}")]
    return out


def _groups(wires: Mapping[str, list[Wire]], kind: str) -> dict[tuple[Any, ...], tuple[Wire, list[str]]]:
    out: dict[tuple[Any, ...], tuple[Wire, list[str]]] = {}
    for s, ws in wires.items():
        for w in ws:
            if w.kind == kind:
                out.setdefault(w.key, (w, []))[1].append(s)
    return out


def _named(stations: Iterable[str], limit: int = 10) -> str:
    items = list(stations)
    return ", ".join(items[:limit]) + (f" and {len(items) - limit} more" if len(items) > limit else "")


def diagnose(profile: Any, tested: Sequence[str], dead: Iterable[str], stuck: Iterable[str],
             doubled: Mapping[str, Sequence[str]], miswired: Mapping[str, Sequence[str]]) -> list[str]:
    """What to check, in words: whole lines or chips first (two or more tested stations on it, all of them failing
    and nothing else on it working), then each station left with the wires it hangs on."""
    wires = station_wires(profile)
    tested_set = set(tested)
    dead_left = [s for s in tested if s in set(dead)]
    stuck_left = [s for s in tested if s in set(stuck)]
    out: list[str] = []
    chain = any(w.kind == "chip" for ws in wires.values() for w in ws)
    for kind in (("chip",) if chain else ("row", "column")):
        for _key, (wire, members) in sorted(_groups(wires, kind).items()):
            mine = [s for s in members if s in tested_set]
            if len(mine) < 2:
                continue
            if all(s in dead_left for s in mine):
                if kind == "chip":
                    out.append(f"{wire.text}: all {len(mine)} of its stations dead ({_named(mine)}): check the chip "
                               "in its socket (notch the right way), its VCC (pin 16) to 3.3 V and GND (pin 8), PL "
                               "(pin 1) and CP (pin 2) from the ribbon, CE (pin 15) to ground, and its Q7 (pin 9) to the "
                               "next chip's DS (pin 10) towards the Pico")
                else:
                    out.append(f"{wire.text}: all {len(mine)} of its stations dead ({_named(mine)}): a broken "
                               f"{kind} wire or joint, or it is on the wrong pin")
                dead_left = [s for s in dead_left if s not in mine]
            elif all(s in stuck_left for s in mine):
                what = ("inputs read low: its pull-ups' 3.3 V (the 10 kOhm resistors' common end) is missing"
                        if kind == "chip" else f"the {kind} touches ground or a crossing {kind}")
                out.append(f"{wire.text}: all {len(mine)} of its stations on with the board empty ({_named(mine)}): {what}")
                stuck_left = [s for s in stuck_left if s not in mine]
    pairs: dict[tuple[Any, ...], list[tuple[str, str]]] = {}
    for a, others in doubled.items():
        for b in others:
            pairs.setdefault(_short_key(wires, a, b), []).append((a, b))
    for key, seen in sorted(pairs.items(), key=lambda kv: str(kv[0])):
        a, b = seen[0]
        out.append(_short_text(wires, key, a, b, len(seen)))
    for a, others in sorted(miswired.items()):
        there = "; ".join(f"{b} ({', '.join(w.text for w in wires.get(b, []))})" for b in others)
        out.append(f"{a}: its magnet shows at {there}: {a}'s reed is wired to that crossing or input instead of "
                   f"its own ({', '.join(w.text for w in wires.get(a, []))})")
    readers = any(w.kind == "reader" for ws in wires.values() for w in ws)
    for s in dead_left:
        how = ("its reed, its joint to the input or its pull-up" if chain
               else "its reader never saw the tag: the tag on the piece, the module's cable, its chip select or its "
                    "3.3 V" if readers
               else "its reed, its diode (ring towards the row) or a joint")
        out.append(f"{s}: dead: {how}; it hangs on {' and '.join(w.text for w in wires.get(s, []))}")
    for s in stuck_left:
        out.append(f"{s}: on with the board empty: a shorted reed (or a magnet left nearby); it hangs on "
                   f"{' and '.join(w.text for w in wires.get(s, []))}")
    return out


def _short_key(wires: Mapping[str, list[Wire]], a: str, b: str) -> tuple[Any, ...]:
    wa = {w.kind: w for w in wires.get(a, [])}
    wb = {w.kind: w for w in wires.get(b, [])}
    for same, differ in (("column", "row"), ("row", "column"), ("chip", "input")):
        if same in wa and same in wb and wa[same].key == wb[same].key and wa[differ].key != wb[differ].key:
            return ("lines", *sorted([wa[differ].key, wb[differ].key]))
    return ("stations", *sorted([a, b]))


def _short_text(wires: Mapping[str, list[Wire]], key: tuple[Any, ...], a: str, b: str, count: int) -> str:
    evidence = f"a magnet on {a} also shows {b}" + (f" ({count} such pairs)" if count > 1 else "")
    if key[0] == "lines":
        wa = {w.key: w for w in wires.get(a, [])}
        wb = {w.key: w for w in wires.get(b, [])}
        first, second = wa.get(key[1]) or wb.get(key[1]), wa.get(key[2]) or wb.get(key[2])
        return f"{first.text} and {second.text} are shorted together: {evidence}; look for a bridge of solder or bare wire"
    return (f"{a} and {b} are shorted together: {evidence}; their wires touch "
            f"({', '.join(w.text for w in wires.get(a, []))} / {', '.join(w.text for w in wires.get(b, []))})")
