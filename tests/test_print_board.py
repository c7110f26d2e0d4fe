"""The printable board: every installed game's SVG parses, has one marker per station, the right pages for A4 and
Letter, channels from the profile; and the web page's static board comes from the same drawing code."""

from __future__ import annotations

import math
import xml.etree.ElementTree as ET

import pytest

from controller.board_svg import (
    HEADER_MM,
    OVERLAP_MM,
    PAGE_MARGIN_MM,
    PAPER_MM,
    BoardDrawingError,
    kind_names,
    page_grid,
    printable,
    quarter_turns,
    screen_board,
)
from controller.cli import main
from controller.rules import game_ids, load_game, parse_game
from controller.sensing.profile import default_profile, profile_ids

NS = "{http://www.w3.org/2000/svg}"


def stations_in(svg: str) -> list[str]:
    root = ET.fromstring(svg)
    return [g.get("data-station") for g in root.iter(f"{NS}g") if "station" in (g.get("class") or "").split()]


def expected_pages(width: float, height: float, paper: str) -> int:
    """Pages needed, counted independently of the drawing code: the better of portrait and landscape."""
    w, h = PAPER_MM[paper]
    best = math.inf
    for sw, sh in ((w, h), (h, w)):
        tw, th = sw - 2 * PAGE_MARGIN_MM, sh - 2 * PAGE_MARGIN_MM - HEADER_MM
        cols = 1 if width <= tw else math.ceil((width - OVERLAP_MM) / (tw - OVERLAP_MM))
        rows = 1 if height <= th else math.ceil((height - OVERLAP_MM) / (th - OVERLAP_MM))
        best = min(best, cols * rows)
    return int(best)


@pytest.mark.parametrize("paper", ["a4", "letter"])
@pytest.mark.parametrize("game_id", game_ids())
def test_every_game_prints(game_id: str, paper: str) -> None:
    game = load_game(game_id)
    profile = default_profile(game_id) if game_id in profile_ids() else None
    job = printable(game, profile=profile, paper=paper)
    ids = [s.id for s in game.stations]
    whole = stations_in(job.whole)
    assert sorted(whole) == sorted(ids), "the whole-board sheet has exactly one marker per station"
    assert len(job.pages) == expected_pages(job.width_mm, job.height_mm, paper)
    orientation, cols, rows = job.grid
    assert cols * rows == len(job.pages)
    sw, sh = PAPER_MM[paper] if orientation == "portrait" else PAPER_MM[paper][::-1]
    seen: set[str] = set()
    for page in job.pages:
        root = ET.fromstring(page)
        assert (root.get("width"), root.get("height")) == (f"{sw:g}mm", f"{sh:g}mm")
        on_page = stations_in(page)
        assert len(on_page) == len(set(on_page)), "a station is drawn once per page"
        seen |= set(on_page)
    assert seen == set(ids), "every station is on some page"
    if len(job.pages) > 1:
        assert job.whole.count('class="register"') >= 2, "tiled pages carry alignment marks"
    if profile is not None:
        text = "".join(ET.fromstring(job.whole).itertext())
        first = game.stations[0].id
        ch = profile.channels[first]
        assert (f"R{ch[0]} C{ch[1]}" if isinstance(ch, tuple) else f"ch {ch}") in text


def test_known_page_counts() -> None:
    """Stratego at 40 mm (10 x 10 stations, 420 mm square) is 3 x 2 A4 sheets; Luzhanqi three landscape ones."""
    assert printable(load_game("stratego"), paper="a4").grid == ("portrait", 3, 2)
    assert printable(load_game("luzhanqi"), paper="a4").grid == ("landscape", 1, 3)
    assert page_grid(150, 200, "letter") == ("portrait", 1, 1)


SMALL = """
format: 1
id: tiny
name: Tiny
zh: 小
sides: [red, blue]
station_kinds: {normal: {}, fort: {shelter: true, doc: "要塞: a fort."}, pond: {passable: false}}
stations: [[a1, 0, 0], [b1, 1, 0, fort], [a2, 0, 1, pond], [b2, 1, 1]]
lines: [{kind: road, path: "a1 b1"}, {kind: canal, path: "b1 b2"}]
pieces: [{id: flag, name: Flag, zh: 軍旗, count: 1}]
clash: {by_rank: false, rules: [{attacker: "*", defender: flag, outcome: attacker}]}
setup: {zones: {home: {red: [a1], blue: [b2]}}, deploy: home}
win: {capture: [flag]}
"""


def test_a_small_game_fits_one_page_with_kind_names_in_both_languages() -> None:
    game = parse_game(SMALL, "tiny.yaml")
    job = printable(game, paper="letter")
    assert len(job.pages) == 1 and job.grid[1:] == (1, 1)
    assert sorted(stations_in(job.pages[0])) == ["a1", "a2", "b1", "b2"]
    text = "".join(ET.fromstring(job.pages[0]).itertext())
    assert "要塞" in text and "fort" in text, "kind names in English and Chinese (from the kind's doc)"
    assert kind_names(game, "pond") == ("pond", "")
    assert 'class="line line-canal"' in job.pages[0] and "stroke-dasharray" in job.pages[0]


def test_bad_requests_say_what_is_wrong() -> None:
    game = load_game("stratego")
    with pytest.raises(BoardDrawingError, match="paper 'a3'"):
        printable(game, paper="a3")
    with pytest.raises(BoardDrawingError, match="pitch 5 mm"):
        printable(game, pitch=5)
    with pytest.raises(BoardDrawingError, match="for 'luzhanqi', not 'stratego'"):
        printable(game, profile=default_profile("luzhanqi"))


def test_command_writes_one_file_per_page(tmp_path, capsys) -> None:  # noqa: ANN001
    out = tmp_path / "board.svg"
    assert main(["print-board", "stratego", "--paper", "letter", "--out", str(out), "--pitch", "30"]) == 0
    job = printable(load_game("stratego"), profile=default_profile("stratego"), paper="letter", pitch=30)
    pages = sorted(tmp_path.glob("board-*.svg"))
    assert len(pages) == len(job.pages) > 1 and out.exists()
    for p in pages:
        ET.parse(p)
    assert "print at 100 %" in capsys.readouterr().out


def test_command_refuses_a_bad_pitch_and_a_missing_out(capsys) -> None:  # noqa: ANN001
    assert main(["print-board", "stratego", "--pitch", "500", "--out", "/tmp/x.svg"]) == 2
    assert "pitch 500 mm" in capsys.readouterr().err
    assert main(["print-board", "stratego"]) == 2
    assert "--out" in capsys.readouterr().err


def test_screen_board_turns_each_seat_home_to_the_bottom() -> None:
    game = load_game("luzhanqi")
    for side in game.sides:
        board = screen_board(game, side)
        root = ET.fromstring(f'<svg xmlns="http://www.w3.org/2000/svg">{board.layer}</svg>')
        ys = {g.get("data-station"): float(g.get("data-y")) for g in root.iter(f"{NS}g") if g.get("data-station")}
        home = game.setup.zones[game.setup.deploy_zone][side]
        mid = (max(ys.values()) + min(ys.values())) / 2
        assert all(ys[s] > mid for s in home), f"{side}'s home is drawn at the bottom for {side}"
    assert {quarter_turns(game, s) for s in game.sides} == {0, 2}


def test_web_page_serves_the_same_drawing(tmp_path) -> None:  # noqa: ANN001
    from controller.referee.table import open_table
    from controller.sensing.sim import SimBoard
    from controller.setups_store import SetupStore
    from web_referee.app import create_app

    game = load_game("stratego")
    table = open_table("stratego", board=SimBoard(game.station_ids, settle_ms=20), board_kind="sim",
                       journal_path=tmp_path / "j.sqlite", resume=False)
    try:
        html = create_app(table, setups=SetupStore(tmp_path / "setups")).test_client().get("/").get_data(as_text=True)
    finally:
        table.stop()
    assert screen_board(game, game.sides[0]).layer in html
    assert html.count('class="station ') == len(game.stations)


# ---------------------------------------------------------------------------------------------------- rendered
CHROMIUM = "/usr/bin/chromium"


def _png_pixels(data: bytes) -> tuple[int, int, list[bytes]]:
    """Width, height and rows of RGBA bytes of an 8-bit, non-interlaced PNG (what Chromium's screenshots are)."""
    import struct
    import zlib

    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks, ihdr = 8, [], b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            ihdr = body
        elif kind == b"IDAT":
            chunks.append(body)
        pos += 12 + length
    width, height, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", ihdr)
    assert depth == 8 and interlace == 0 and colour in (2, 6)
    bpp = 4 if colour == 6 else 3
    raw = zlib.decompress(b"".join(chunks))
    stride = width * bpp
    rows: list[bytes] = []
    prev = bytearray(stride)
    for y in range(height):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line) if bpp == 4 else bytes(v for k in range(width) for v in (*line[k * 3:k * 3 + 3], 255)))
        prev = line
    return width, height, rows


@pytest.fixture(scope="module")
def browser():  # noqa: ANN201
    import os
    from pathlib import Path

    reason = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        reason = "playwright is not installed (pip install playwright)"
    if reason is None and not Path(CHROMIUM).exists():
        reason = f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"the rendering test needs a browser under CI: {reason}")
        pytest.skip(reason)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


_BOXES = """() => {
  const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  const tile = box(document.querySelector('rect.tile-edge'));
  const cross = [...document.querySelectorAll('path.drill.cross')].map(box)
      .find(([l, t, r, b]) => l > tile[0] && t > tile[1] && r < tile[2] && b < tile[3]);
  return {bar: box(document.querySelector('g.scale')),
          text: [...document.querySelectorAll('text.page-title, text.page-note')].map(box), cross, tile};
}"""


@pytest.mark.parametrize(("game_id", "paper"), [("siguo", "a4"), ("stratego", "letter"), ("navy_tw", "a4")])
def test_rendered_pages_keep_the_header_clear_of_the_scale_bar_and_drill_blue(browser, tmp_path, game_id, paper) -> None:  # noqa: ANN001
    """Every page rendered by Chromium: the header's text never overlaps the 50 mm scale bar nor runs into the board,
    and the drill crosses come out blue (hardware/README.md), not black."""
    job = printable(load_game(game_id), profile=default_profile(game_id), paper=paper)
    context = browser.new_context(device_scale_factor=3)
    page = context.new_page()
    try:
        for i, svg in enumerate(job.pages):
            path = tmp_path / f"p{i}.svg"
            path.write_text(svg, encoding="utf-8")
            root = ET.fromstring(svg)
            w_mm, h_mm = float(root.get("width")[:-2]), float(root.get("height")[:-2])
            page.set_viewport_size({"width": round(w_mm * 96 / 25.4), "height": round(h_mm * 96 / 25.4)})
            page.goto(path.as_uri())
            boxes = page.evaluate(_BOXES)
            bl, bt, br, bb = boxes["bar"]
            for left, top, right, bottom in boxes["text"]:
                overlap = left < br and right > bl and top < bb and bottom > bt
                assert not overlap, f"page {i + 1}: header text {left, top, right, bottom} runs over the scale bar {boxes['bar']}"
                assert bottom <= boxes["tile"][1] + 0.5, f"page {i + 1}: header text runs into the board"
            if boxes["cross"] is None:
                continue
            left, t, r, b = boxes["cross"]
            width, height, rows = _png_pixels(page.screenshot(clip={"x": left, "y": t, "width": r - left, "height": b - t}))
            scale = width / (r - left)
            cy = round((b - t) / 2 * scale)
            xs = [round((r - left) * f * scale) for f in (0.78, 0.82, 0.86, 0.9)]  # the right arm, beyond the ring
            pixels = [tuple(rows[cy + dy][x * 4:x * 4 + 3]) for x in xs for dy in (-1, 0, 1)]
            inked = [p for p in pixels if sum(p) < 600]
            assert inked, f"page {i + 1}: no drill cross drawn at {boxes['cross']}"
            assert all(bl_ > rd + 40 and bl_ > gr for rd, gr, bl_ in inked), f"page {i + 1}: drill cross not blue: {inked}"
    finally:
        context.close()


def test_reader_boards_print_at_the_pitch_their_modules_need() -> None:
    from controller.hardware import bom
    from controller.sensing.profile import find_profile

    rfid = find_profile("luzhanqi-rfid")
    job = printable(load_game("luzhanqi"), profile=rfid)
    assert job.pitch == bom.bill_for(rfid).design.pitch == 65.0, "the BOM's fit check and the printed board agree"
    assert 'class="drill tag"' in job.whole
    pad = printable(load_game("stratego"), profile=find_profile("stratego-pad"))
    assert pad.pitch == 40.0 and 'class="drill reed"' in pad.whole, "a check-in pad board is a reed board"
