"""A league's games shared by several host processes through the broker: the organizer asks for a game on the lobby
topic, the broker hands each request to one host of the group (an MQTT shared subscription, ``$share/GROUP/...``),
and that host referees the game from then on over subscriptions of that game's own. The seats' secrets come from
the league's key, which the organizer and the hosts share, so no join code ever travels over the broker."""

from __future__ import annotations

import json
import logging
import os
import secrets
import threading
import uuid
from pathlib import Path
from typing import Any

from controller.club.broker import Broker
from controller.textfiles import InputFileError, read_bytes

from .credentials import HOST, derive_secrets, join_codes
from .host import HostGroup, RemoteHost
from .link import Link
from .protocol import ROOT, JoinCode, RemoteError, check_name, seal, unseal

log = logging.getLogger(__name__)

#: QoS 1, not retained: a request for a new game, sealed with the league's key
LOBBY = f"{ROOT}/lobby/new"
DEFAULT_GROUP = "facedown-hosts"


def lobby_filter(group: str) -> str:
    """The hosts' shared subscription to the lobby: the broker gives each request to one member of ``group``."""
    return f"$share/{check_name('host group', group)}/{LOBBY}"


def taken_topic(game_id: str) -> str:
    """Retained, sealed with the league's key: which host took the game."""
    return f"{ROOT}/lobby/taken/{check_name('game id', game_id)}"


def read_key(path: str | Path, *, create: bool = False) -> bytes:
    """The league's key from its file (64 hex digits); ``create``: a new one written (mode 600) if there is none."""
    p = Path(path)
    if not p.exists() and create:
        p.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32) + "\n")
    try:
        # a key is 65 bytes: anything far larger, or not a regular file, is not a league key
        text = read_bytes(p, "league key", cap=4096).decode("ascii", errors="replace").strip()
    except InputFileError as exc:
        raise RemoteError(f"league key {exc}") from None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise RemoteError(f"league key {p}: expected 64 hex digits (the organizer's file, copied to each host)")
    return key


def league_codes(key: bytes, game: str, game_id: str) -> dict[str, JoinCode]:
    """Each seat's join code of a league game: the same at the organizer and at whichever host takes it."""
    from controller.rules import load_game

    sides = tuple(load_game(game).sides)
    return join_codes(check_name("game id", game_id), derive_secrets(key, game_id, 0, (*sides, HOST)), sides)


class LeagueHost:
    """One host process of a league (see the module docstring): its games' journals in ``directory`` (one file a
    game, and ``league.json``, the games it took, resumed when it starts again)."""

    def __init__(self, broker: Broker, key: bytes, directory: str | Path, *, group: str = DEFAULT_GROUP,
                 client_id: str | None = None) -> None:
        self.key = key
        self.dir = Path(directory)
        self.dir.mkdir(parents=True, exist_ok=True)
        self.index_path = self.dir / "league.json"
        self.name = client_id or f"facedown-league-{uuid.uuid4().hex[:8]}"
        self.hosts = HostGroup(broker, self.name, every_game=False)
        self.hosts.link.subscribe(lobby_filter(group), self._asked)
        self.lock = threading.Lock()

    def start(self, timeout: float = 10.0) -> None:
        """Connect, and go on with every unfinished game this host took before it stopped."""
        self.hosts.start(timeout)
        for game_id, entry in self._index().items():
            try:
                self._host(str(entry["game"]), game_id, dict(entry.get("options") or {}))
            except Exception:  # one game's journal that cannot be resumed must not keep the others down
                log.exception("league game %s could not be resumed", game_id)

    def stop(self) -> None:
        self.hosts.stop()

    @property
    def link(self) -> Link:
        return self.hosts.link

    def _index(self) -> dict[str, Any]:
        from controller.textfiles import parse_json, read_text

        if not self.index_path.exists():
            return {}
        try:
            data = parse_json(read_text(self.index_path, "league index", cap=4 * 1024 * 1024), str(self.index_path))
        except ValueError as exc:
            raise RemoteError(f"{self.index_path}: not this host's league index ({exc})") from None
        return dict(data) if isinstance(data, dict) else {}

    def _host(self, game: str, game_id: str, options: dict[str, Any]) -> RemoteHost:
        return self.hosts.add(game, journal_path=self.dir / f"{game_id}.sqlite", game_id=game_id, options=options,
                              key=self.key)

    def _asked(self, topic: str, payload: bytes) -> None:
        """A request for a game, which the broker gave this host: host it, say so, and remember it."""
        try:
            m = unseal(self.key.hex(), payload)
            game, game_id = str(m.get("game")), check_name("game id", m.get("game_id"))
            options = m.get("options") if isinstance(m.get("options"), dict) else {}
        except RemoteError as exc:
            log.warning("lobby: %s", exc)
            return
        with self.lock:
            if game_id not in self.hosts.hosts:
                try:
                    self._host(game, game_id, options)
                except Exception as exc:  # a game that cannot be hosted (unknown rules, bad option): said, not kept
                    log.warning("lobby: game %s (%s) refused: %s", game_id, game, exc)
                    self._say_taken(game_id, problem=str(exc)[:300])
                    return
                index = self._index()
                index[game_id] = {"game": game, "options": options}
                tmp = self.index_path.with_suffix(".tmp")
                tmp.write_text(json.dumps(index, sort_keys=True))
                tmp.replace(self.index_path)
            self._say_taken(game_id)

    def _say_taken(self, game_id: str, problem: str | None = None) -> None:
        body = {"type": "taken", "game_id": game_id, "by": self.name, "problem": problem}
        self.link.publish(taken_topic(game_id), seal(self.key.hex(), body), retain=True)


def ask_for_game(broker: Broker, key: bytes, game: str, game_id: str, options: dict[str, Any] | None = None, *,
                 timeout: float = 15.0) -> tuple[str, dict[str, JoinCode]]:
    """The organizer's request for a league game: the name of the host that took it, and each seat's join code.
    RemoteError if no host of the league answers within ``timeout`` or the host refused it."""
    codes = league_codes(key, game, game_id)
    answer: dict[str, Any] = {}
    got = threading.Event()

    def taken(topic: str, payload: bytes) -> None:
        try:
            m = unseal(key.hex(), payload)
        except RemoteError:
            return
        if m.get("type") == "taken" and m.get("game_id") == game_id:
            answer.update(m)
            got.set()

    request = seal(key.hex(), {"type": "host", "game": game, "game_id": game_id, "options": dict(options or {}),
                               "id": uuid.uuid4().hex})
    link = Link(broker, f"facedown-organizer-{uuid.uuid4().hex[:8]}", {taken_topic(game_id): taken},
                on_connect=lambda: None if got.is_set() else link.publish(LOBBY, request))
    link.start(timeout)
    try:
        if not got.wait(timeout):
            raise RemoteError(f"no host of the league took game {game_id} within {timeout:g} s: is one running "
                              f"(facedown host --league DIR) on {broker.url()} with this league key?")
    finally:
        link.stop()
    if answer.get("problem"):
        raise RemoteError(f"host {answer.get('by')} refused game {game_id}: {answer['problem']}")
    return str(answer.get("by")), codes


__all__ = ["DEFAULT_GROUP", "LOBBY", "LeagueHost", "ask_for_game", "league_codes", "lobby_filter", "read_key",
           "taken_topic"]
