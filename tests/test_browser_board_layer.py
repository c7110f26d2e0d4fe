"""The page's static board (controller/board_svg.py, web part): Junqi's front with its mountains where no line
crosses, opened wider than a row as on the printed board; railways drawn as tracks the names show through; no front
on boards that have none."""

from __future__ import annotations

import re

from controller.board_svg import (
    SCREEN_MARGIN,
    SCREEN_PITCH,
    front_line,
    layout,
    printable,
    quarter_turns,
    screen_board,
    widen_front,
)
from controller.rules import load_game


def test_luzhanqi_has_a_front_with_two_mountains_and_three_passes() -> None:
    game = load_game("luzhanqi")
    lay = widen_front(game, layout(game, pitch=SCREEN_PITCH, margin=SCREEN_MARGIN, turns=quarter_turns(game, "red")))
    front = front_line(game, lay)
    assert front is not None
    axis, mid, passes, mountains = front
    assert axis == "y" and len(passes) == 3 and len(mountains) == 2  # the rails on both edges and the middle road cross; columns 2, 4 do not
    rows = sorted({y for _, y in lay.points.values()})
    gap = min(y for y in rows if y > mid) - max(y for y in rows if y < mid)
    assert gap > SCREEN_PITCH * 1.5  # wider than any other row gap
    layer = screen_board(game, "red").layer
    assert layer.count('class="mountain"') == 2 and 'data-t="page.front_line"' in layer


def test_boards_without_a_front_get_none() -> None:
    for gid in ("stratego", "siguo", "sanjunqi", "dover_patrol", "navy_cn"):
        game = load_game(gid)
        lay = layout(game, pitch=SCREEN_PITCH, margin=SCREEN_MARGIN)
        assert front_line(game, lay) is None, gid
        assert 'class="front"' not in screen_board(game, game.sides[0]).layer


def test_railways_are_tracks_on_screen_and_plain_on_paper() -> None:
    game = load_game("luzhanqi")
    screen = screen_board(game, "red").layer
    rails = len(re.findall(r'class="line line-rail"', screen))
    assert rails and len(re.findall(r'class="line line-rail-ties"', screen)) == rails
    assert "line-rail-ties" not in printable(game).whole


def test_a_board_on_its_side_keeps_its_front() -> None:
    """Turned a quarter (Red on the left, for a wide screen), the front stands upright with the same mountains."""
    game = load_game("luzhanqi")
    lay = widen_front(game, layout(game, pitch=SCREEN_PITCH, margin=SCREEN_MARGIN, turns=(quarter_turns(game, "red") + 1) % 4))
    front = front_line(game, lay)
    assert front is not None and front.axis == "x" and len(front.mountains) == 2
    side = screen_board(game, "red", extra_turns=1)
    width, height = map(float, side.viewbox.split()[2:])
    assert width > height and side.layer.count('class="mountain"') == 2
