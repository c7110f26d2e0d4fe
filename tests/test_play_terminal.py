"""What `facedown play` shows on its terminal (issue 37): `--help` names every announcer, a QR code for each human
seat's link (none for a seat without a token of its own, such as a computer seat), and no waitress line per closed
live stream."""

from __future__ import annotations

import io
import logging
import urllib.request
from pathlib import Path

from controller.announce import ANNOUNCER_NAMES
from controller.cli import main
from controller.referee.table import open_table
from controller.rules import load_game
from controller.sensing.sim import SimBoard
from web_referee.server import WebServer


def test_help_names_every_announcer_and_the_qr_choice(capsys) -> None:  # noqa: ANN001
    try:
        main(["play", "--help"])
    except SystemExit:
        pass
    text = " ".join(capsys.readouterr().out.split())
    for name in ANNOUNCER_NAMES:
        assert name.replace("-", "- ") in text or name in text, name
    assert "--qr {auto,always,never}" in text


def _server(tmp_path: Path) -> tuple[WebServer, object]:
    board = SimBoard(load_game("stratego").station_ids, settle_ms=20)
    table = open_table("stratego", board=board, board_kind="sim", journal_path=tmp_path / "j.sqlite", resume=False)
    return WebServer(table, host="127.0.0.1", port=0), table


def test_a_qr_code_for_each_human_seat_and_none_for_a_seat_without_a_token(tmp_path: Path) -> None:
    server, table = _server(tmp_path)
    out = io.StringIO()
    server.print_links(out, qr=True)
    text = out.getvalue()
    assert "Red seat:" in text and "Blue seat:" in text and text.count("█▀▀▀▀▀█") + text.count("▄▄▄▄▄") >= 2
    blocks = [len([ln for ln in part.splitlines() if "█" in ln]) for part in text.split(" seat: ")[1:]]
    assert all(b > 10 for b in blocks), blocks  # a whole code under each seat's link
    plain = io.StringIO()
    server.print_links(plain)  # not a terminal: the links alone (a service's log)
    assert "█" not in plain.getvalue() and "Red seat:" in plain.getvalue()
    # a computer seat has no link of its own (issue 34): no link and no code, only the line saying so
    del table.tokens["blue"]
    server.links = lambda: {"red": "http://x/seat/r", "spectator": "http://x/", "arbiter": "http://x/arbiter/a"}
    out = io.StringIO()
    server.print_links(out, qr=True)
    blue = out.getvalue().split("Blue seat:")[1].split("Arbiter")[0]
    assert "http" not in blue and "█" not in blue and "no seat link" in blue, blue
    assert "Red seat: http://x/seat/r" in out.getvalue()


def test_closed_streams_leave_no_info_lines_from_waitress(tmp_path: Path, caplog) -> None:  # noqa: ANN001
    server, table = _server(tmp_path)
    logging.getLogger("waitress").setLevel(logging.NOTSET)
    server.start()
    try:
        assert logging.getLogger("waitress").level == logging.WARNING
        with caplog.at_level(logging.INFO):
            for _ in range(3):
                with urllib.request.urlopen(f"http://127.0.0.1:{server.port}/api/public/state", timeout=5) as r:
                    assert r.status == 200
        assert not [r for r in caplog.records if r.name.startswith("waitress") and r.levelno < logging.WARNING]
    finally:
        server.stop()
        table.stop()
