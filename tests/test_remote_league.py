"""Several hosts sharing a league's games through a real Mosquitto (2.0: MQTT shared subscriptions, ``$share``): the
organizer's requests are handed out one host each, every game is refereed by exactly one host, each host's
connection carries only its own games' messages, games on both hosts are played by boards with the league's join
codes, a host restarted goes on with the games it took, and a request sealed with another key is taken by no one."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pytest
from test_remote import Board, Truth, audit

from controller.club.broker import parse_broker
from controller.remote.league import LeagueHost, ask_for_game, league_codes, read_key
from controller.remote.protocol import RemoteError
from controller.rules.deploy import random_deployment
from harness.broker import Mosquitto, wait_for


@pytest.fixture()
def broker(tmp_path: Path) -> Any:
    b = Mosquitto(tmp_path)
    b.start()
    yield b
    b.stop()


def boards_for(game_id: str, key: bytes, url: str, tmp: Path, seed: int) -> dict[str, Board]:
    codes = league_codes(key, "stratego", game_id)
    boards = {s: Board("stratego", url, str(c), tmp) for s, c in codes.items()}
    rng = random.Random(seed)
    for side, b in boards.items():
        wait_for(lambda b=b: b.seat.synced, what=f"{game_id} {side} synced")
        assert b.session.register_setup(side, random_deployment(b.session.game, side, rng, b.session.state.options)) == []
    for side, b in boards.items():
        wait_for(lambda b=b: b.session.state.phase == "play", what=f"{game_id} {side}'s board to start")
        b.fix()
    return boards


def test_a_league_shares_its_games_among_hosts_through_shared_subscriptions(broker: Any, tmp_path: Path) -> None:
    url = parse_broker(broker.url)
    key = read_key(tmp_path / "league.key", create=True)
    assert read_key(tmp_path / "league.key") == key and (tmp_path / "league.key").stat().st_mode & 0o077 == 0
    hosts = {n: LeagueHost(url, key, tmp_path / n, client_id=f"league-{n}") for n in ("a", "b")}
    for h in hosts.values():
        h.link.wire = []  # every byte each host's connection receives
        h.start()
    boards: list[Board] = []
    try:
        taken = {f"g{i}": ask_for_game(url, key, "stratego", f"g{i}")[0] for i in range(6)}
        by = {n: sorted(h.hosts.hosts) for n, h in hosts.items()}
        assert sorted(by["a"] + by["b"]) == sorted(taken), "every game is hosted exactly once"
        assert by["a"] and by["b"], f"the broker gave every request to one host: {by}"
        assert all(taken[g] == f"league-{n}" for n, games in by.items() for g in games)
        # asking again for a game already taken answers at once, the same host and codes
        again, codes = ask_for_game(url, key, "stratego", by["a"][0])
        assert again == "league-a" and codes == league_codes(key, "stratego", by["a"][0])
        with pytest.raises(RemoteError, match="no host of the league took"):
            ask_for_game(url, os.urandom(32), "stratego", "forged", timeout=1.5)
        assert all("forged" not in h.hosts.hosts for h in hosts.values())

        # a game on each host, played by boards holding only the league's join codes
        games = {n: by[n][0] for n in hosts}
        played = {}
        for i, (n, gid) in enumerate(games.items()):
            bs = boards_for(gid, key, broker.url, tmp_path / f"boards-{n}", seed=i)
            boards += bs.values()
            truth = Truth(bs)
            rng = random.Random(10 + i)
            for _ in range(3):
                truth.play(rng)
            played[n] = (bs, truth, rng)
            host = hosts[n].hosts.hosts[gid]
            assert host.session.state.ply == 3
            for b in bs.values():
                assert audit(b, host) >= 0
        for n, h in hosts.items():
            assert h.link.wire is not None
            games_seen = {t.split("/")[2] for t, _ in h.link.wire if "/in/" in t or "/seen/" in t}
            assert games_seen <= set(by[n]), f"host {n} was sent other hosts' games: {games_seen - set(by[n])}"
            assert games[n] in games_seen

        # host b restarts (the same directory and key): it goes on with the games it took
        hosts["b"].stop()
        hosts["b"] = LeagueHost(url, key, tmp_path / "b", client_id="league-b")
        hosts["b"].start()
        assert sorted(hosts["b"].hosts.hosts) == by["b"]
        bs, truth, rng = played["b"]
        truth.play(rng)
        assert hosts["b"].hosts.hosts[games["b"]].session.state.ply == 4
    finally:
        for b in boards:
            b.stop()
        for h in hosts.values():
            h.stop()


def test_facedown_host_league_and_ask_league_from_the_command_line(broker: Any, tmp_path: Path) -> None:
    import re

    from cli_process import Cli

    env = {"XDG_DATA_HOME": str(tmp_path / "data")}
    key = tmp_path / "league.key"
    base = ["host", "--broker", broker.url, "--league-key", str(key)]
    lonely = Cli(["host", "--broker", broker.url, "--league", str(tmp_path / "x")], env=env)
    assert lonely.proc.wait(30) != 0 and "--league-key FILE" in lonely.output, lonely.output
    # the organizer makes the key, asks: no host is running yet
    nobody = Cli([*base, "stratego", "--ask-league", "--game-id", "cup-1"], env=env)
    assert nobody.proc.wait(60) != 0 and "no host of the league took game cup-1" in nobody.output, nobody.output
    served = Cli([*base, "--league", str(tmp_path / "h1"), "--ready-file", str(tmp_path / "ready")], env=env)
    try:
        served.wait_until(lambda: (tmp_path / "ready").exists(), "the league host", 30)
        asked = Cli([*base, "stratego", "--ask-league", "--game-id", "cup-1"], env=env)
        assert asked.proc.wait(60) == 0, asked.output
        codes = dict(re.findall(r"(red|blue): facedown play stratego --remote \S+ --seat \1 --join (fdj1\.cup-1\.\1\.[0-9a-f]{32})",
                                asked.output))
        assert codes == {s: str(c) for s, c in league_codes(read_key(key), "stratego", "cup-1").items()}, asked.output
        assert "hosted by facedown-league-" in asked.output
        b = Board("stratego", broker.url, codes["red"], tmp_path)  # the code works: the host answers the board
        try:
            wait_for(lambda: b.seat.synced, what="red's board synced with the league's host")
        finally:
            b.stop()
    finally:
        assert served.stop() == 0
