"""A computer seat has no seat link: no printed line, QR code, page or API route of a game with a computer seat opens
a view naming that seat's unrevealed pieces. Its token does not exist (a request with the token it would have had
is answered exactly as one with a made-up token), also after a restart without ``--seat``; the arbiter keeps the
only view of the computer's army, and the human's own seat page and the board page say what to do with its tokens."""

from __future__ import annotations

import io
import json
import re
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from cli_process import Cli
from test_web_leaks import assert_no_leak, walk

from controller.commands.play import computer_seats
from controller.referee.table import derive_tokens, table_key
from controller.setups_store import SetupStore
from harness.web_game import Game, sse_events
from web_referee.app import create_app
from web_referee.qr import qr_text
from web_referee.server import WebServer

FAKE = "0123456789abcdef01234567"


def names_hidden_pieces(payload: Any, owner: str) -> list[dict[str, Any]]:
    """Every piece of ``owner`` in ``payload`` that carries its rank though it is not public."""
    return [d for d in walk(payload) if d.get("owner") == owner and "piece" in d and not d.get("public")]


def _play_some(game: Game, seat: Any, plies: int) -> None:
    for _ in range(plies):
        st = game.table.state
        if st.phase != "play":
            return
        if st.turn == "blue":
            assert seat.instruction is not None, "the computer said which token to move"
            game.move(*seat.instruction)
        else:
            frm, to = game.rng.choice(st.legal_moves())
            game.move(frm, to)


def test_no_route_opens_the_computers_view(tmp_path: Path) -> None:
    game = Game("luzhanqi", tmp_path, seed=4)
    would_be = game.table.tokens["blue"]  # the token blue has as a person's seat...
    (seat,) = computer_seats(game.table, ["blue=bot:random"])  # ...and not any more, once the computer plays it
    assert "blue" not in game.table.tokens and game.table.computers == {"blue": "random"}
    try:
        game.deploy("red")
        game.lay_out()
        assert game.table.state.phase == "play"
        _play_some(game, seat, 12)
        app = create_app(game.table, setups=SetupStore(tmp_path / "setups"), keepalive_s=0.02)
        client = app.test_client()
        red, arb = game.table.tokens["red"], game.table.tokens["arbiter"]
        last = game.session.log[-1].seq
        # every GET route that takes a key: blue's would-be token is answered as a made-up one, byte for byte
        keyed = [r for r in app.url_map.iter_rules() if "GET" in r.methods and r.arguments & {"key", "token"}]
        assert len(keyed) >= 8, [r.rule for r in keyed]
        for rule in keyed:
            arg = "key" if "key" in rule.arguments else "token"
            extra = {a: "red" for a in rule.arguments - {arg}}
            path = rule.rule
            for a, v in extra.items():
                path = re.sub(rf"<(?:\w+:)?{a}>", v, path)
            got = client.get(re.sub(rf"<(?:\w+:)?{arg}>", would_be, path))
            fake = client.get(re.sub(rf"<(?:\w+:)?{arg}>", FAKE, path))
            assert (got.status_code, got.get_data()) == (fake.status_code, fake.get_data()), rule.rule
            assert got.status_code in (403, 404), rule.rule
            assert not names_hidden_pieces(got.get_json(silent=True), "blue")
        for method_rule in [r for r in app.url_map.iter_rules() if "POST" in r.methods and "key" in r.arguments]:
            path = re.sub(r"<(?:\w+:)?key>", would_be, method_rule.rule)
            path = re.sub(r"<(?:\w+:)?\w+>", "pause", path)
            assert client.post(path, json={}).status_code in (403, 404), method_rule.rule
        # the human's seat, the spectators: nothing of the computer's army, on any route (pages, state, events)
        for audience, key in (("red", red), ("spectator", "public")):
            page = client.get(f"/seat/{key}" if audience == "red" else "/")
            assert page.status_code == 200
            state = client.get(f"/api/{key}/state").get_json()
            assert not names_hidden_pieces(state, "blue"), audience
            assert_no_leak(game, audience, {k: v for k, v in state.items() if k != "setup"}, f"{audience} state")
            for ev in sse_events(client, f"/api/{key}/events", last):
                assert not names_hidden_pieces(ev, "blue"), ev
                assert_no_leak(game, audience, ev, f"{audience} event {ev['seq']}")
            assert client.get(f"/api/{key}/replay").status_code == 409
        # ...and they do get what moving its tokens takes: the computer's instructions, public
        told = [e for e in sse_events(client, "/api/public/events", last) if e["event"] == "bot"]
        assert any(e["kind"] in ("move", "attack") for e in told) or game.table.state.turn != "blue"
        assert all(e["kind"] != "failed_detail" for e in told)
        # the arbiter keeps the only view of it, and hands out no link or QR code for it
        assert names_hidden_pieces(client.get(f"/api/{arb}/state").get_json(), "blue"), "the arbiter sees the army"
        links = client.get(f"/api/{arb}/links").get_json()
        assert set(links) == {"red", "spectator", "arbiter"} and would_be not in json.dumps(links)
        assert client.get(f"/api/{arb}/qr/blue.svg").status_code == 404
        assert client.get(f"/api/{arb}/qr/red.svg").status_code == 200
        arbiter_page = client.get(f"/arbiter/{arb}").get_data(as_text=True)
        assert would_be not in arbiter_page
    finally:
        seat.close()
        game.table.stop()


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_printed_links_and_qr_codes_leave_out_the_computer(tmp_path: Path) -> None:
    game = Game("stratego", tmp_path)
    would_be = game.table.tokens["blue"]
    (seat,) = computer_seats(game.table, ["blue=bot:random"])
    server = WebServer(game.table, host="127.0.0.1", port=0)
    try:
        out = Terminal()
        server.print_links(out)
        text = out.getvalue()
        base = server.base_url()
        assert would_be not in text and f"{base}/seat/{would_be}" not in text
        assert "Blue seat: played by the computer (random); it has no seat link" in text
        red = f"{base}/seat/{game.table.tokens['red']}"
        assert f"Red seat: {red}" in text and qr_text(red) in text
        assert qr_text(f"{base}/seat/{would_be}") not in text
        assert text.count("\u2588") == qr_text(red).count("\u2588"), "one QR code: the human's"
        assert set(server.links()) == {"red", "spectator", "arbiter"}
    finally:
        server.stop()
        seat.close()
        game.table.stop()


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as r:  # noqa: S310 - our own referee on loopback
            return r.status, r.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_facedown_play_prints_no_link_for_the_computer_and_a_restart_keeps_it_so(tmp_path: Path) -> None:
    journal = tmp_path / "journal.sqlite"
    ready = tmp_path / "ready"
    base_args = ["play", "luzhanqi", "--journal", str(journal), "--host", "127.0.0.1", "--port", "0",
                 "--announce", "none", "--ready-file", str(ready)]
    for round_, extra in enumerate((["--new", "--seat", "blue=bot:facedown"], [])):  # then resumed without --seat
        cli = Cli([*base_args, *extra])
        try:
            cli.wait_until(ready.exists, "the referee to get ready", timeout=60)
            cli.wait_for("Arbiter (keep private)")
            text = cli.output
            game_id = int(re.search(r"game (\d+)", text).group(1))  # type: ignore[union-attr]
            would_be = derive_tokens(table_key(journal), game_id, ["blue"])["blue"]
            assert would_be not in text, text
            assert "Blue seat: played by the computer" in text, text
            urls = re.findall(r"http://\S+", text)
            base = re.search(r"Web referee at (http://\S+?)/ ", text).group(1)  # type: ignore[union-attr]
            assert {u.rsplit("/", 2)[-2] for u in urls if "/seat/" in u or "/arbiter/" in u} == {"seat", "arbiter"}
            arb = next(u for u in urls if "/arbiter/" in u).rsplit("/", 1)[1]
            red = next(u for u in urls if "/seat/" in u).rsplit("/", 1)[1]
            for url in urls:  # every printed link opens, and none names the computer's army
                status, body = _get(url)
                assert status == 200 and would_be.encode() not in body
            for key in (red, "public"):
                status, body = _get(f"{base}/api/{key}/state")
                assert status == 200 and not names_hidden_pieces(json.loads(body), "blue")
            status, body = _get(f"{base}/api/{arb}/state")  # (in setup the arbiter too sees who deployed, not what)
            assert status == 200
            for path in (f"/seat/{would_be}", f"/api/{would_be}/state", f"/api/{would_be}/events",
                         f"/api/{would_be}/setups"):
                assert _get(base + path) == _get(base + path.replace(would_be, FAKE)), path
            assert _get(f"{base}/api/{arb}/qr/blue.svg")[0] == 404
            assert "blue" not in json.loads(_get(f"{base}/api/{arb}/links")[1])
            if round_ == 1:
                assert "played by the computer (facedown)" in text  # the journal remembers who played it
        finally:
            assert cli.stop() == 0
            ready.unlink(missing_ok=True)
