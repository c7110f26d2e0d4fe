"""Serves the web referee with waitress in background threads, and prints the seat, spectator and arbiter links
(with QR codes) in the terminal at game start."""

from __future__ import annotations

import logging
import socket
import threading
from typing import Any, TextIO

log = logging.getLogger(__name__)


def lan_address() -> str:
    """This machine's address on its network (what phones on the same Wi-Fi reach), else loopback.

    Connecting a UDP socket sends nothing; it only asks the kernel which source address it would use."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("10.255.255.255", 1))
        return s.getsockname()[0]
    except OSError:
        return "127.0.0.1"
    finally:
        s.close()


class WebServer:
    """The web referee of one table, served by waitress on ``host:port`` (port 0: any free port).

    ``threads`` bounds the requests served at once; each open live page holds one, so the hub accepts at most
    ``threads - 8`` event streams and keeps the rest of the threads for pages and actions."""

    def __init__(self, table: Any, *, host: str = "0.0.0.0", port: int = 8080, threads: int = 48,
                 keepalive_s: float = 15.0, setups: Any = None) -> None:
        from waitress.server import create_server

        from .app import create_app

        self.table = table
        self.app = create_app(table, setups=setups, keepalive_s=keepalive_s, max_streams=max(1, threads - 8))
        self.hub = self.app.extensions["facedown"].hub
        self._server = create_server(self.app, host=host, port=port, threads=threads,
                                     ident="facedown", clear_untrusted_proxy_headers=True)
        self.host = host
        self.port: int = self._server.effective_port  # type: ignore[union-attr]
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Serve in a background thread; returns at once (the socket is already listening)."""
        if self._thread is not None:
            return
        self._thread = threading.Thread(target=self._server.run, name="facedown-web", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End every live stream, stop accepting and wait briefly for the serving thread."""
        from .common import stop_waitress

        self.hub.close_all()
        stop_waitress(self._server, self._thread, drain_s=2)
        self._thread = None

    def base_url(self) -> str:
        """The address phones should open: this machine's LAN address unless bound to one address."""
        host = self.host
        if host in ("0.0.0.0", "::", ""):
            host = lan_address()
        if ":" in host:
            host = f"[{host}]"
        return f"http://{host}:{self.port}"

    def links(self) -> dict[str, str]:
        """Every role's link: one per seat, the spectator page and the arbiter page."""
        base = self.base_url()
        out = {side: f"{base}/seat/{self.table.tokens[side]}" for side in self.table.game.sides}
        out["spectator"] = f"{base}/"
        out["arbiter"] = f"{base}/arbiter/{self.table.tokens['arbiter']}"
        return out

    def print_links(self, out: TextIO) -> None:
        """Print each link, with a QR code per seat so each player can scan theirs from the terminal."""
        from .qr import qr_text

        links = self.links()
        out.write(f"Web referee at {self.base_url()}/ (spectators need no link)\n")
        for side in self.table.game.sides:
            out.write(f"\n{side.capitalize()} seat: {links[side]}\n")
            out.write(qr_text(links[side]))
        out.write(f"\nArbiter (keep private): {links['arbiter']}\n")
        out.flush()
