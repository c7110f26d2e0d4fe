"""The club's message broker: its address (``mqtt://HOST[:PORT]`` or ``mqtts://HOST[:PORT]``), credentials and TLS
options, the topic names every table and the dashboard agree on, and a paho-mqtt 2.x client made from them.

paho is imported only inside :func:`make_client`, so parsing an address or naming a topic costs nothing."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from controller.errors import FaceDownError

PASSWORD_ENV = "FACEDOWN_CLUB_PASSWORD"
ROOT = "facedown"
_TABLE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")


class ClubError(FaceDownError, ValueError):
    """A club setting that cannot work (a bad broker address, table name, password file...)."""


@dataclass(frozen=True)
class Broker:
    """Where the club's broker is and how to log in. ``password`` is never printed (see ``__repr__``)."""

    host: str
    port: int
    tls: bool = False
    username: str | None = None
    password: str | None = None
    ca_file: str | None = None

    def __repr__(self) -> str:
        return f"Broker({self.url()!r}, user={self.username!r})"

    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{'mqtts' if self.tls else 'mqtt'}://{host}:{self.port}"


def parse_broker(url: str, *, username: str | None = None, password: str | None = None,
                 password_file: str | None = None, ca_file: str | None = None) -> Broker:
    """A broker from ``mqtt://HOST[:PORT]`` / ``mqtts://HOST[:PORT]`` and the login options. The password comes from
    ``password``, else ``password_file`` (first line), else the environment variable FACEDOWN_CLUB_PASSWORD."""
    text = (url or "").strip()
    if "://" not in text:
        raise ClubError(f"broker {url!r}: expected mqtt://HOST[:PORT] or mqtts://HOST[:PORT] (e.g. mqtt://192.168.1.10)")
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError as exc:
        raise ClubError(f"broker {url!r}: {exc}") from None
    scheme = parts.scheme.lower()
    if scheme not in ("mqtt", "mqtts"):
        raise ClubError(f"broker {url!r}: the scheme must be mqtt:// or mqtts://, not {scheme}://")
    if not parts.hostname:
        raise ClubError(f"broker {url!r}: no host name")
    if parts.path not in ("", "/") or parts.query or parts.fragment:
        raise ClubError(f"broker {url!r}: only a host and a port, no path or query")
    if parts.username or parts.password:
        raise ClubError(f"broker {url!r}: do not put a login in the address; use --club-user and a password file or {PASSWORD_ENV}")
    tls = scheme == "mqtts"
    if port == 0:
        raise ClubError(f"broker {url!r}: port 0 is not a port")
    if password is None and password_file:
        from controller.textfiles import InputFileError, read_text

        try:  # a regular file of at most 4 kB: a FIFO, a device or a huge file is refused by what it is
            text = read_text(password_file, "broker password file", cap=4096)
        except InputFileError as exc:
            raise ClubError(str(exc)) from None
        password = (text.splitlines() or [""])[0].strip()
    if password is None and username:
        password = os.environ.get(PASSWORD_ENV)
    if password is not None and not username:
        raise ClubError("a broker password was given without a user name (--club-user)")
    if ca_file is not None:
        if not tls:
            raise ClubError(f"a CA file only applies to mqtts:// addresses, not {url!r}")
        if not Path(ca_file).is_file():
            raise ClubError(f"{ca_file}: no such CA certificate file")
    return Broker(parts.hostname, port or (8883 if tls else 1883), tls, username or None, password, ca_file)


def check_table_name(name: str) -> str:
    """A table's name as it appears in topics: letters, digits, ``-`` and ``_``, at most 32, no MQTT wildcards."""
    if not isinstance(name, str) or not _TABLE_NAME.match(name):
        raise ClubError(f"table name {str(name)[:40]!r}: use 1-32 letters, digits, '-' or '_' (e.g. table-7)")
    return name


# ---------------------------------------------------------------------- topics
def status_topic(table: str) -> str:
    """Retained: the table's latest public status (board as a spectator sees it, turn, clocks, last ruling...)."""
    return f"{ROOT}/tables/{table}/status"


def presence_topic(table: str) -> str:
    """Retained: online, or offline (said by the table on a clean stop, by the broker's last will otherwise)."""
    return f"{ROOT}/tables/{table}/presence"


def events_topic(table: str) -> str:
    """QoS 1, not retained: each public event as it happens."""
    return f"{ROOT}/tables/{table}/events"


def result_topic(table: str, game_key: str) -> str:
    """Retained, one per game: a game's result, so a dashboard that starts later still has every result."""
    return f"{ROOT}/results/{table}/{game_key}"


SUBSCRIPTIONS = (f"{ROOT}/tables/+/status", f"{ROOT}/tables/+/presence", f"{ROOT}/tables/+/events", f"{ROOT}/results/+/+")


def parse_topic(topic: str) -> tuple[str, str, str | None] | None:
    """``(kind, table, game_key)`` of a club topic (kind: status, presence, events, result), None if not ours."""
    parts = topic.split("/")
    if len(parts) == 4 and parts[0] == ROOT and parts[1] == "tables" and parts[3] in ("status", "presence", "events"):
        return (parts[3], parts[2], None) if _TABLE_NAME.match(parts[2]) else None
    if len(parts) == 4 and parts[0] == ROOT and parts[1] == "results" and _TABLE_NAME.match(parts[2]) and parts[3]:
        return ("result", parts[2], parts[3])
    return None


# ---------------------------------------------------------------------- the client
def make_client(broker: Broker, client_id: str, *, will: tuple[str, bytes] | None = None, clean_session: bool = True) -> Any:
    """A paho-mqtt 2.x client for ``broker``: login, TLS, retained QoS 1 last will, reconnect back-off of 1-8 s.
    ``clean_session=False`` (the dashboard): the broker keeps the subscriptions and queues QoS 1 messages while the
    client is away, so what tables publish while it reconnects still reaches it."""
    import paho.mqtt.client as mqtt

    client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=clean_session)
    if broker.username:
        client.username_pw_set(broker.username, broker.password)
    if broker.tls:
        client.tls_set(ca_certs=broker.ca_file)
    if will is not None:
        client.will_set(will[0], will[1], qos=1, retain=True)
    client.reconnect_delay_set(min_delay=1, max_delay=8)
    return client
