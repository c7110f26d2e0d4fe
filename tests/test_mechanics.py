"""The mechanical design in the drawings: every station's pilot, reed groove and LED on the drill, assembly and top
layers at the design's positions; the air gap within the reed's and magnet's ranges; LED holes clear of grooves and
pieces in every game; each 74HC165's spread and the longest wire within their stated limits."""

from __future__ import annotations

import dataclasses
import math
import re

import pytest

from controller.board_geometry import layout
from controller.board_svg import default_pitch, printable
from controller.hardware import chain, mechanics
from controller.hardware.build import BUILDS, BuildError, profile_for
from controller.rules import game_ids, load_game
from controller.sensing.profile import Lights, find_profile, profile_ids


def _points(game, pitch: float) -> dict[str, tuple[float, float]]:  # noqa: ANN001
    return dict(layout(game, pitch=pitch, margin=pitch * 0.75).points)


@pytest.mark.parametrize("pid", profile_ids())
def test_the_drawings_carry_every_reed_and_led_position(pid: str) -> None:
    profile = find_profile(pid)
    game = load_game(profile.game)
    n = len(game.stations)
    leds = mechanics.led_indices(profile)
    reeds = profile.sensing in ("reed", "checkin", "hybrid")
    drill = printable(game, profile=profile, layer="drill").whole
    assert drill.count('class="hole pilot"') == n and drill.count('class="hole led"') == len(leds)
    feats = {f.id: f for f in mechanics.stations(game, _points(game, default_pitch(profile, game)), profile)}
    board_y = float(re.search(r'<g class="board" transform="translate\(0,([\d.]+)\)"', drill).group(1))
    for sid, x, y in re.findall(r'data-station="([^"]+)" transform="translate\(([\d.]+),([\d.]+)\)"', drill):
        assert (float(x), float(y)) == pytest.approx((feats[sid].x, feats[sid].y)), sid
    assert board_y > 0
    under = printable(game, profile=profile, layer="assembly").whole
    assert under.count('class="groove"') == (n if reeds else 0) and under.count('class="glass"') == (n if reeds else 0)
    assert under.count('class="led"') == len(leds)
    top = printable(game, profile=profile).whole
    assert top.count('class="drill led"') == len(leds)
    assert all(f">L{k}<" in top and f">L{k} ⌀5<" in drill for k in leds.values())


@pytest.mark.parametrize("game_id", game_ids())
def test_led_holes_clear_every_groove_and_piece_in_every_game(game_id: str) -> None:
    game = load_game(game_id)
    for build in ("reed-pico", "hybrid-pico"):
        try:
            profile = profile_for(game_id, build)
        except BuildError:
            continue
        lit = dataclasses.replace(profile, lights=Lights(kind="ws2812", pin=28, chain=game.station_ids))
        feats = mechanics.stations(game, _points(game, default_pitch(lit, game)), lit)
        assert all(f.led is not None for f in feats)
        assert mechanics.clashes(feats) == [], (game_id, build)


@pytest.mark.parametrize("game_id", game_ids())
def test_the_air_gap_is_within_the_reed_and_magnet_ranges_in_every_game(game_id: str) -> None:
    game = load_game(game_id)
    gap = mechanics.board_air_gap(game, _points(game, 40.0))
    assert gap.closes and gap.opens_when_lifted and gap.neighbour_safe, "\n".join(gap.lines())
    assert gap.gap_mm < mechanics.BOARD_MM - mechanics.GROOVE_DEPTH_MM + 1, "the groove brings the reed near the top"
    assert mechanics.tag_gap_ok() and mechanics.tag_gap_ok(hybrid=True)


def test_the_air_gap_checks_can_fail() -> None:
    close = mechanics.reed_air_gap(neighbour_mm=25 - (mechanics.REED_OFFSET_MM + mechanics.REED.glass_mm / 2))
    assert not close.neighbour_safe, "a 25 mm pitch puts a magnet too near the next reed"
    big = dataclasses.replace(mechanics.MAGNET, dia_mm=10.0, thick_mm=3.0)
    assert not mechanics.reed_air_gap(magnet=big).opens_when_lifted, "a 10 x 3 mm magnet keeps the reed closed at 15 mm"
    weak = dataclasses.replace(mechanics.REED, pull_in_at=(60.0, 80.0))
    assert not mechanics.reed_air_gap(reed=weak).closes
    assert mechanics.axial_field_mt(mechanics.MAGNET, 1.0) > mechanics.axial_field_mt(mechanics.MAGNET, 2.0) > 0


def _chain_profiles() -> list:
    out = [find_profile(p) for p in profile_ids() if find_profile(p).scanner and find_profile(p).scanner.kind == "shift_register"]
    for g in game_ids():
        for build in BUILDS:
            try:
                prof = profile_for(g, build)
            except BuildError:
                continue
            if prof.scanner is not None and prof.scanner.kind == "shift_register" and prof.file.startswith("generated/"):
                out.append(prof)
    return out


@pytest.mark.parametrize("profile", _chain_profiles(), ids=lambda p: p.file.rsplit("/", 1)[-1])
def test_every_74hc165_sits_among_its_stations(profile) -> None:  # noqa: ANN001
    plan = chain.chain_plan(profile)
    assert plan.spread_ok, [(c.index, c.spread_mm) for c in plan.chips if c.spread_mm > plan.spread_limit_mm]
    assert plan.runs_ok, (plan.longest_run_mm, plan.run_limit_mm)
    assert sum(len(c.stations) for c in plan.chips) == len(profile.channels)
    assert all(c.ribbon_in_mm > 0 for c in plan.chips)


def _matrix_profiles() -> list:
    out = [find_profile(p) for p in profile_ids()]
    for g in game_ids():
        for build in BUILDS:
            try:
                prof = profile_for(g, build)
            except BuildError:
                continue
            if prof.file.startswith("generated/"):
                out.append(prof)
    return [p for p in out if p.scanner is None or p.scanner.kind == "matrix"]


@pytest.mark.parametrize("profile", _matrix_profiles(), ids=lambda p: p.file.rsplit("/", 1)[-1])
def test_every_matrix_line_is_within_its_stated_limit(profile) -> None:  # noqa: ANN001
    from controller.hardware.build import design

    runs = chain.matrix_runs(profile, design(profile).pitch)
    cols = {k: v for k, v in runs.items() if k[0] == "C"}
    rows = {k: v for k, v in runs.items() if k[0] == "R"}
    assert cols and rows
    assert max(cols.values()) <= chain.MATRIX_COLUMN_LIMIT_MM, max(cols.items(), key=lambda kv: kv[1])
    assert max(rows.values()) <= chain.MATRIX_ROW_LIMIT_MM, max(rows.items(), key=lambda kv: kv[1])


def test_a_matrix_numbered_in_the_games_order_broke_the_column_limit_the_generator_keeps() -> None:
    """sanjunqi's staggered board on the Pi's 20 lines: numbered in the game's order (as generated profiles were), its
    columns zigzag over the whole board, 2.9 m; laid out from the coordinates they stay under 2 m."""
    from controller.sensing.profile import squarest_matrix

    new = profile_for("sanjunqi", "reed-gpio")
    rows, cols = squarest_matrix(len(new.channels))
    old = dataclasses.replace(new, channels={s: (i // cols, i % cols) for i, s in enumerate(load_game("sanjunqi").station_ids)})
    worst = max(v for k, v in chain.matrix_runs(old).items() if k[0] == "C")
    assert worst > chain.MATRIX_COLUMN_LIMIT_MM
    assert max(v for k, v in chain.matrix_runs(new).items() if k[0] == "C") <= chain.MATRIX_COLUMN_LIMIT_MM < worst


def test_the_old_station_order_chain_broke_the_limits_the_generator_keeps() -> None:
    siguo = find_profile("siguo")
    ordered = dataclasses.replace(siguo, channels={s: i for i, s in enumerate(siguo.stations)})
    old = chain.chain_plan(ordered)
    new = chain.chain_plan(siguo)
    assert not old.spread_ok and old.widest_spread_mm > 250
    assert new.spread_ok and new.widest_spread_mm < old.widest_spread_mm / 2
    assert new.reed_wire_mm < old.reed_wire_mm


@pytest.mark.parametrize("pid", [p for p in profile_ids() if find_profile(p).lights is not None])
def test_each_led_chain_link_is_a_short_hop_and_the_bom_buys_the_ribbon(pid: str) -> None:
    from controller.hardware import bom

    profile = find_profile(pid)
    game = load_game(profile.game)
    pitch = default_pitch(profile, game)
    feats = {f.id: f for f in mechanics.stations(game, _points(game, pitch), profile)}
    leds = [feats[s].led for s in profile.lights.chain if s is not None]
    hops = [abs(a[0] - b[0]) + abs(a[1] - b[1]) for a, b in zip(leds, leds[1:], strict=False)]
    assert max(hops) <= 2 * pitch, "a chain order that jumps across the board needs long data wires"
    ribbon, feed = chain.light_runs(profile, leds, pitch)
    assert ribbon >= sum(hops) and feed > 0
    assert bom.qty(bom.bill_for(profile), "Ribbon cable, 3-way") == math.ceil(ribbon / 1000 * 1.1)


@pytest.mark.parametrize("profile", [find_profile("luzhanqi-rfid"), profile_for("stratego", "hybrid-pico")],
                         ids=["luzhanqi-rfid", "stratego-hybrid-pico"])
def test_each_reader_pocket_is_drawn_centred_under_its_station_as_the_docs_say(profile) -> None:  # noqa: ANN001
    """The module centred under the station: the assembly layer's pocket sits on the pilot, the module plus 1 mm, turned
    as the fit check says; the mechanics table, the README's rfid-pico steps and the BOM's fit text say the same."""
    from pathlib import Path

    from controller.hardware import bom
    from controller.hardware.build import design
    from controller.hardware.readers import RC522, orientation

    game = load_game(profile.game)
    under = printable(game, profile=profile, layer="assembly").whole
    across, along = (RC522.width_mm, RC522.depth_mm) if orientation(game, RC522) == "long side left-right" else \
        (RC522.depth_mm, RC522.width_mm)
    stations = re.findall(r'<g class="station" data-station="([^"]+)" transform="translate\([\d.]+,[\d.]+\)">(.*?)</g>', under)
    assert len(stations) == len(game.stations)
    for sid, body in stations:
        m = re.search(r'<rect class="pocket" x="([-\d.]+)" y="([-\d.]+)" width="([\d.]+)" height="([\d.]+)" '
                      r'transform="translate\(([-\d.]+),([-\d.]+)\) rotate\(0\)"', body)
        assert m, sid
        x, y, w, h, cx, cy = map(float, m.groups())
        assert (cx, cy) == (0.0, 0.0) and (x + w / 2, y + h / 2) == pytest.approx((0.0, 0.0)), sid
        assert (w, h) == pytest.approx((across + 1, along + 1)), sid
        assert 'class="hole pilot"' in body, "the pocket is centred on the station's own pilot"
    table = mechanics.mechanics_markdown()
    assert "the module centred on the pilot" in table
    readme = (Path(__file__).resolve().parent.parent / "hardware" / "README.md").read_text(encoding="utf-8")
    steps = readme.split("### `rfid-pico`")[1].split("###")[0]
    assert "the module centred under the station's cross" in steps and "antenna** (the coil" not in steps
    assert "the module centred under its station" in bom.fit_text(design(profile))


def _reader_profiles() -> list:
    out = [find_profile(p) for p in profile_ids() if find_profile(p).sensing in ("rfid", "hybrid")]
    for g in game_ids():
        for build in ("rfid-pico", "hybrid-pico"):
            prof = profile_for(g, build)
            if prof.file.startswith("generated/"):
                out.append(prof)
    return out


@pytest.mark.parametrize("profile", _reader_profiles(), ids=lambda p: p.file.rsplit("/", 1)[-1])
def test_every_reader_reaches_its_hub_with_the_cable_the_bom_buys(profile) -> None:  # noqa: ANN001
    """Each hub of 16 readers sits among them (its decoder selects readers 16g..16g+15): the farthest reader is within
    the longest cable's reach, and the BOM buys the cable that reaches it."""
    from controller.hardware import bom
    from controller.hardware.build import design
    from controller.hardware.chain import reader_stations

    d = design(profile)
    far = max(mm for _, mm in chain.hub_reach(profile, d.pitch))
    cable = chain.hub_cable_cm(far)
    assert cable is not None, f"a reader {far:.0f} mm from its hub: no cable reaches"
    bill = bom.bill_for(profile)
    assert bom.qty(bill, f"Female-female jumper wires, {cable} cm") == d.readers
    ribbons = chain.hub_ribbons(profile, d.pitch)  # each hub's own ribbon from the Pico, cut to its run
    assert len(ribbons) == math.ceil(d.readers / 16) and all(mm > 0 for mm in ribbons)
    assert bom.qty(bill, "Ribbon cable, 10-way") == math.ceil(sum(ribbons) / 1000 * 1.1)
    assert bom.qty(bill, "IDC socket, 2 x 5") == 2 * len(ribbons)
    assert sorted(reader_stations(profile)) == sorted(profile.stations)


def test_readers_in_the_games_order_left_hubs_out_of_reach() -> None:
    """siguo's readers numbered in the game's order (as generated profiles were) put a reader 731 mm from its hub's
    centre, beyond any cable; hubs chosen from the coordinates bring the farthest within 50 cm."""
    from controller.hardware.build import design

    new = profile_for("siguo", "rfid-pico")
    old = dataclasses.replace(new, channels={s: i for i, s in enumerate(load_game("siguo").station_ids)})
    pitch = design(new).pitch
    worst_old = max(mm for _, mm in chain.hub_reach(old, pitch))
    worst_new = max(mm for _, mm in chain.hub_reach(new, pitch))
    assert chain.hub_cable_cm(worst_old) is None and worst_old > 700
    assert chain.hub_cable_cm(worst_new) is not None and worst_new < worst_old * 0.65
