"""Start-up does only what the command needs: one subcommand module imported, the web page's Flask app built after the
referee is ready (on first use or warm_up()), and the post-game replay built once per game, not per request."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run_python(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_a_subcommand_imports_only_its_own_module() -> None:
    code = ("import sys, json, controller.cli as c\n"
            "args = c.build_parser(['hw-test', '--board', 'gpio', '--stations', 'a1']).parse_args("
            "['hw-test', '--board', 'gpio', '--stations', 'a1'])\n"
            "print(json.dumps([args.command, sorted(m for m in sys.modules if m.startswith('controller.commands.'))]))")
    command, modules = json.loads(run_python(code))
    assert command == "hw-test"
    assert modules == ["controller.commands.hw_test"]


def test_help_still_lists_every_subcommand() -> None:
    from controller.cli import COMMANDS, build_parser

    text = build_parser().format_help()
    for name in COMMANDS:
        assert name.replace("_", "-") in text


def test_the_web_server_listens_before_flask_is_imported_and_builds_the_app_on_first_use() -> None:
    code = ("import sys, tempfile\n"
            "from controller.referee.table import open_table\n"
            "from controller.rules import load_game\n"
            "from controller.sensing.sim import SimBoard\n"
            "from web_referee.server import WebServer\n"
            "t = open_table('stratego', board=SimBoard(load_game('stratego').station_ids), board_kind='sim',"
            " journal_path=tempfile.mkdtemp() + '/j.sqlite', resume=False)\n"
            "s = WebServer(t, host='127.0.0.1', port=0)\n"
            "before = 'flask' in sys.modules\n"
            "s.start()\n"
            "import http.client\n"
            "c = http.client.HTTPConnection('127.0.0.1', s.port, timeout=30); c.request('GET', '/')\n"
            "status = c.getresponse().status\n"
            "print(before, 'flask' in sys.modules, status)\n"
            "s.stop(); t.stop()\n")
    assert run_python(code).split() == ["False", "True", "200"]


def test_a_web_server_stopped_before_it_served_never_imports_flask() -> None:
    # facedown play stopped before the referee got ready (or right after, --exit-when-ready) closes its port only
    code = ("import sys, tempfile\n"
            "from controller.referee.table import open_table\n"
            "from controller.rules import load_game\n"
            "from controller.sensing.sim import SimBoard\n"
            "from web_referee.server import WebServer\n"
            "t = open_table('stratego', board=SimBoard(load_game('stratego').station_ids), board_kind='sim',"
            " journal_path=tempfile.mkdtemp() + '/j.sqlite', resume=False)\n"
            "s = WebServer(t, host='127.0.0.1', port=0)\n"
            "s.stop(); t.stop()\n"
            "print('flask' in sys.modules, 'waitress' in sys.modules)\n")
    assert run_python(code).split() == ["False", "False"]


def test_the_replay_is_built_once_per_game_once_it_is_over(tmp_path: Path) -> None:
    import random

    from controller.referee.table import open_table
    from controller.rules import load_game
    from controller.rules.deploy import random_deployment
    from controller.sensing.sim import SimBoard
    from web_referee import payloads

    table = open_table("stratego", board=SimBoard(load_game("stratego").station_ids), board_kind="sim",
                       journal_path=tmp_path / "j.sqlite", resume=False)
    rng = random.Random(2)
    for side in table.game.sides:
        table.session.register_setup(side, random_deployment(table.game, side, rng))
    st = table.state
    for _ in range(6):
        move = rng.choice(st.legal_moves())
        side = st.turn
        st.apply(move)
        table.journal.append(table.game_id, "move", {"side": side, "from": move.frm, "to": move.to})
    during = payloads.replay_json(table, "arbiter")
    assert payloads.replay_json(table, "arbiter")[1] is not during[1]  # in play: built afresh each time
    st.phase = "over"
    first = payloads.replay_json(table, "red")
    again = payloads.replay_json(table, "blue")
    assert again[1:] == first[1:] and all(a is b for a, b in zip(first[1:], again[1:], strict=True))
    body = json.loads(b"".join(again))
    assert body["role"] == "blue" and len(body["steps"]) == 7  # the laid-out board, then each of the six moves
    assert body == {"role": "blue", "steps": payloads.replay_for(table, "blue")["steps"]}
    table.session.announce({"event": "notice"})  # anything published afterwards (an undo) rebuilds it
    assert payloads.replay_json(table, "red")[1] is not first[1]
    table.stop()


def test_facedown_play_is_ready_before_importing_the_web_server_flask_the_bots_importlib_metadata_or_yaml(
        tmp_path: Path) -> None:
    # what is imported when the links are printed and the ready file written (the moment pi_budget measures)
    code = ("import json, os, pathlib, sys\n"
            "write = pathlib.Path.write_text\n"
            "def ready(self, data, *a, **k):\n"
            "    write(self, data, *a, **k)\n"
            "    if str(data).startswith('ready'):\n"
            "        names = ('importlib.metadata', 'waitress', 'flask', 'controller.bots', 'web_referee.app', 'yaml')\n"
            "        print(json.dumps({n: n in sys.modules for n in names}), flush=True)\n"
            "        os._exit(0)\n"
            "pathlib.Path.write_text = ready\n"
            "from controller.cli import main\n"
            f"main(['play', 'stratego', '--board', 'sim', '--journal', {str(tmp_path / 'j.sqlite')!r}, '--port', '0',"
            f" '--host', '127.0.0.1', '--announce', 'none', '--ready-file', {str(tmp_path / 'ready')!r}])\n")
    out = run_python(code).strip().splitlines()[-1]
    assert json.loads(out) == {"importlib.metadata": False, "waitress": False, "flask": False,
                               "controller.bots": False, "web_referee.app": False, "yaml": False}


def test_the_entry_point_reader_finds_what_importlib_metadata_finds() -> None:
    import importlib.metadata

    from controller.entrypoints import entry_points

    for group in ("facedown.hooks", "facedown.bots", "console_scripts"):
        ours = sorted((e.name, e.value, e.dist.name if e.dist else None) for e in entry_points(group))
        theirs = sorted((e.name, e.value, e.dist.name if e.dist else None)
                        for e in importlib.metadata.entry_points(group=group))
        assert ours == theirs, group
    assert {e.name for e in entry_points("facedown.hooks")} >= {"two_squares", "carry_flag"}
    two = next(e for e in entry_points("facedown.hooks") if e.name == "two_squares")
    from controller.rules.hooks import TwoSquares

    assert two.load() is TwoSquares
