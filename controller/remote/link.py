"""One MQTT connection of a remote game (the host's or a seat's): a paho client with a persistent session, QoS 1,
a handler per topic, a callback on every (re)connect, and a record of every payload it received (for audits)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from controller.club.broker import Broker, make_client

log = logging.getLogger(__name__)


def _unshared(topic_filter: str) -> str:
    """A filter as messages match it: ``$share/GROUP/FILTER`` (an MQTT shared subscription) is FILTER."""
    if topic_filter.startswith("$share/"):
        return topic_filter.split("/", 2)[2] if topic_filter.count("/") >= 2 else topic_filter
    return topic_filter


class Link:
    """``subscriptions``: topic filter -> handler(topic, payload); ``on_connect`` runs after each (re)connect."""

    def __init__(self, broker: Broker, client_id: str, subscriptions: dict[str, Callable[[str, bytes], None]], *,
                 on_connect: Callable[[], None] | None = None, will: tuple[str, bytes] | None = None,
                 keep_wire: bool = False) -> None:
        import paho.mqtt.client as mqtt

        self.broker = broker
        self.subscriptions = subscriptions
        self.connected = threading.Event()
        self.wire: list[tuple[str, bytes]] | None = [] if keep_wire else None
        self._on_connect_cb = on_connect
        self._matches = mqtt.topic_matches_sub
        self.client = make_client(broker, client_id, will=will, clean_session=False)
        self.client.reconnect_delay_set(min_delay=0.2, max_delay=2)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = lambda *a: self.connected.clear()
        self.client.on_message = self._on_message
        self.client.on_socket_open = self._no_delay

    def start(self, timeout: float = 10.0) -> None:
        self.client.connect_async(self.broker.host, self.broker.port, keepalive=10)
        self.client.loop_start()
        if not self.connected.wait(timeout):
            raise ConnectionError(f"no answer from the broker at {self.broker.url()} within {timeout:g} s")

    def stop(self) -> None:
        self.client.disconnect()
        self.client.loop_stop()

    def subscribe(self, topic: str, handler: Callable[[str, bytes], None]) -> None:
        """Hand ``topic``'s messages to ``handler`` from now on (and after every reconnect)."""
        self.subscriptions = {**self.subscriptions, topic: handler}  # a new dict: the network thread reads the old
        if self.connected.is_set():
            self.client.subscribe(topic, qos=1)

    def publish(self, topic: str, payload: bytes, *, retain: bool = False) -> None:
        self.client.publish(topic, payload, qos=1, retain=retain)

    @staticmethod
    def _no_delay(client: Any, userdata: Any, sock: Any) -> None:
        """Send each message at once: a move is one small packet, and Nagle's algorithm would hold it for the
        broker's delayed ACK (~40 ms on Linux)."""
        import socket

        try:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except (OSError, AttributeError):  # not a TCP socket (a test double, a WebSocket transport)
            pass

    def _on_connect(self, client: Any, userdata: Any, flags: Any, reason: Any, props: Any = None) -> None:
        if getattr(reason, "is_failure", False):
            log.warning("the broker refused the login: %s", reason)
            return
        for topic in self.subscriptions:
            client.subscribe(topic, qos=1)
        self.connected.set()
        if self._on_connect_cb is not None:
            try:
                self._on_connect_cb()
            except Exception:
                log.exception("after connecting")

    def _on_message(self, client: Any, userdata: Any, msg: Any) -> None:
        if self.wire is not None:
            self.wire.append((msg.topic, bytes(msg.payload)))
        for sub, handler in self.subscriptions.items():
            if self._matches(_unshared(sub), msg.topic):
                try:
                    handler(msg.topic, bytes(msg.payload))
                except Exception:  # a bad message must never stop the game
                    log.exception("handling a message on %s", msg.topic)
                return
