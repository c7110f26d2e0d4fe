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
    mid, passes, mountains = front
    assert len(passes) == 3 and len(mountains) == 2  # the rails on both edges and the middle road cross; columns 2, 4 do not
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
