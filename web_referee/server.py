"""Serves the web referee with waitress in background threads, and prints the seat, spectator and arbiter links
(with QR codes) in the terminal at game start.

Availability on a busy LAN. waitress reads requests in one asynchronous loop and hands only complete requests
to its worker threads, so idle and slow connections cost a file descriptor, not a thread; what starved the seats
was its defaults (100 connections in all, 120 s idle timeout, no limit on how long headers may take, nothing
per client address). ``FairServer`` keeps waitress (maintained, on PyPI, already a dependency) and adds:
- a per-address connection cap (``per_address``): one laptop cannot fill the server, however many sockets it opens;
- a header deadline (``header_timeout_s``): a request whose headers are not complete in that time is closed
  (the slow-header attack), checked every second;
- a high overall limit (``connection_limit``, with the file-descriptor limit raised to fit) and a short idle
  timeout (``channel_timeout``); event streams are not idle (a keepalive every 15 s) and are never cut by it;
- ``waitress.client_disconnected``, so a closed event stream frees its slot within the hub's poll (0.5 s).
The hub reserves event streams per token (seats and arbiter) apart from the spectators' cap, and the worker
threads are sized to hold all of them plus headroom for pages and actions.
"""

from __future__ import annotations

import errno
import logging
import resource
import socket
import threading
from typing import Any, TextIO

from controller.errors import FaceDownError

log = logging.getLogger(__name__)
#: The largest request body waitress takes in at all (its default is 1 GB, spooled to a temporary file): a body of
#: more is refused with waitress's 413 from its Content-Length, unread. Up to this, Flask's MAX_CONTENT_LENGTH
#: (web_referee/http.py, 64 kB) answers with the app's own 413 naming the size and the cap.
MAX_REQUEST = 1024 * 1024

#: Defaults: spectator streams in all, streams per seat/arbiter token, connections per client address.
SPECTATOR_STREAMS = 24
STREAMS_PER_ROLE = 3
PER_ADDRESS = 64
PAGE_THREADS = 8  # worker threads kept free of event streams, for pages, state and actions


class WebServerError(FaceDownError, OSError):
    """The web referee cannot listen (the port is taken, the address is not this machine's): says which."""


def fair_server_class() -> type:
    """``FairServer``, defined on first use: waitress is imported when the server starts serving, after the referee
    is ready (the import is ~8 ms of CPU here, most of it the ``platform`` module)."""
    global _FAIR
    if _FAIR is None:
        from waitress.server import TcpWSGIServer

        class FairServer(TcpWSGIServer):
            """waitress's TCP server with a per-address connection cap and a deadline for request headers."""

            per_address = PER_ADDRESS
            header_timeout_s = 10.0

            def handle_accept(self) -> None:
                try:
                    pair = self.accept()
                except OSError:
                    return
                if pair is None:
                    return
                conn, addr = pair
                host = addr[0] if isinstance(addr, tuple) else addr
                held = sum(1 for ch in list(self.active_channels.values()) if isinstance(ch.addr, tuple) and ch.addr[0] == host)
                if held >= self.per_address:
                    conn.close()  # this address holds its share already: refuse at once, keep the rest for the others
                    return
                try:
                    self.set_socket_options(conn)
                except OSError:
                    conn.close()
                    return
                self.channel_class(self, conn, self.fix_addr(addr), self.adj, map=self._map)

            def maintenance(self, now: float) -> None:
                super().maintenance(now)
                cutoff = now - self.header_timeout_s
                for ch in list(self.active_channels.values()):
                    req = ch.request
                    if req is not None and not req.headers_finished:
                        started = getattr(req, "facedown_started", None)
                        if started is None:
                            req.facedown_started = ch.last_activity if ch.last_activity < now else now
                        elif started < cutoff:
                            ch.will_close = True  # headers trickling in for too long: a slow-header attack
                    elif req is None and not ch.requests and ch.creation_time < cutoff and ch.last_activity == ch.creation_time:
                        ch.will_close = True  # connected and never said a word

        _FAIR = FairServer
    return _FAIR


_FAIR: type | None = None


def _raise_fd_limit(want: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = want if hard == resource.RLIM_INFINITY else min(want, hard)
    if soft != resource.RLIM_INFINITY and soft < target:
        resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))


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


def _listen(host: str, port: int) -> tuple[socket.socket, tuple[Any, ...]]:
    """A socket listening on ``host:port`` (what waitress would bind: the first address ``host`` resolves to), with
    its (family, type, proto, address); WebServerError says why not."""
    try:
        # an ASCII name goes as bytes: the same lookup, without importing the IDNA codec (~3 ms of CPU here)
        name: str | bytes = host.encode("ascii") if host.isascii() else host
        family, kind, proto, _, addr = socket.getaddrinfo(name, port, socket.AF_UNSPEC, socket.SOCK_STREAM,
                                                          socket.IPPROTO_TCP, socket.AI_PASSIVE)[0]
    except (OSError, UnicodeError) as exc:
        raise WebServerError(errno.EADDRNOTAVAIL, f"cannot listen on {host}:{port}: {exc}") from None
    sock = socket.socket(family, kind, proto)
    try:
        if family == socket.AF_INET6:
            sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        sock.listen(1024)  # waitress's default backlog
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise WebServerError(exc.errno, f"port {port} on {host} is already in use (another FaceDown referee, "
                                 "or another program): stop it, or choose another with --port") from None
        raise WebServerError(exc.errno, f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return sock, (family, kind, proto, addr)


class WebServer:
    """The web referee of one table, served by waitress on ``host:port`` (port 0: any free port).

    ``threads`` bounds the requests served at once; each open live page holds one, so the hub accepts at most
    ``threads - 8`` event streams and keeps the rest of the threads for pages and actions."""

    def __init__(self, table: Any, *, host: str = "0.0.0.0", port: int = 8080, threads: int | None = None,
                 keepalive_s: float = 15.0, setups: Any = None, spectator_streams: int = SPECTATOR_STREAMS,
                 streams_per_role: int = STREAMS_PER_ROLE, per_address: int = PER_ADDRESS,
                 connection_limit: int = 1000, header_timeout_s: float = 10.0,
                 spectator_streams_per_address: int | None = None) -> None:
        self.table = table
        roles = len(table.game.sides) + 1  # the seats and the arbiter
        if threads is None:
            threads = spectator_streams + streams_per_role * roles + PAGE_THREADS
        # fewer threads given: the seats' reserve shrinks first to one stream each, pages keep PAGE_THREADS
        streams_per_role = max(1, min(streams_per_role, (threads - PAGE_THREADS - 1) // roles))
        # The Flask app (Flask, Jinja, the board drawings: most of the start-up CPU) is built on first use, or by
        # warm_up() once the referee is ready, so the referee does not wait for the web page to be importable.
        self._app: Any = None
        self._app_args = {
            "setups": setups, "keepalive_s": keepalive_s,
            "max_streams": max(1, min(spectator_streams, threads - streams_per_role * roles - PAGE_THREADS)),
            # one address may hold a quarter of the spectators' streams (a benchmark on loopback may allow more)
            "streams_per_role": streams_per_role,
            "per_address_streams": spectator_streams_per_address or max(1, spectator_streams // 4),
        }
        self._app_lock = threading.Lock()
        _raise_fd_limit(connection_limit + 64)
        # The port listens from here on (connections wait in its backlog); waitress takes the socket in start().
        self._sock, self._sockinfo = _listen(host, port)
        self._adj = {"host": host, "port": port, "threads": threads, "ident": "facedown",
                     "clear_untrusted_proxy_headers": True, "connection_limit": connection_limit,
                     "channel_timeout": 20, "cleanup_interval": 1, "channel_request_lookahead": 1,
                     "asyncore_use_poll": True, "max_request_body_size": MAX_REQUEST}
        self._limits = {"per_address": per_address, "header_timeout_s": header_timeout_s}
        self._server: Any = None
        self.host = host
        self.port = int(self._sock.getsockname()[1])
        self._thread: threading.Thread | None = None

    @property
    def app(self) -> Any:
        """The Flask app, built the first time anything needs it."""
        if self._app is None:
            with self._app_lock:
                if self._app is None:
                    from .app import create_app

                    self._app = create_app(self.table, **self._app_args)
        return self._app

    @property
    def hub(self) -> Any:
        return self.app.extensions["facedown"].hub

    def _serve(self, environ: Any, start_response: Any) -> Any:
        return self.app(environ, start_response)

    def warm_up(self) -> None:
        """Build the app in a background thread now (after the referee is ready), so the first page is quick."""
        def build() -> None:
            from controller.referee import tuning

            self.app  # noqa: B018
            tuning.for_low_latency()  # keep the app's objects out of later garbage collections

        threading.Thread(target=build, name="facedown-web-warm-up", daemon=True).start()

    def start(self) -> None:
        """Serve in a background thread; returns at once (the socket listens since the server was made)."""
        # waitress says "Client disconnected" at INFO for every closed live stream (each page that closes or
        # reconnects): the referee's log keeps its warnings only, unless someone chose waitress's level already
        waitress_log = logging.getLogger("waitress")
        if waitress_log.level == logging.NOTSET:
            waitress_log.setLevel(logging.WARNING)
        if self._thread is not None:
            return
        from waitress.adjustments import Adjustments

        adj = Adjustments(**self._adj)
        server_class = type("FacedownServer", (fair_server_class(),), dict(self._limits))
        self._server = server_class(self._serve, adj=adj, sockinfo=self._sockinfo, _sock=self._sock,
                                    bind_socket=False)
        self._thread = threading.Thread(target=self._server.run, name="facedown-web", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """End every live stream, stop accepting and wait briefly for the serving thread."""
        if self._app is not None:
            self.hub.close_all()
        if self._server is None:
            self._sock.close()  # never served: only the listening socket to close (and no Flask imported for it)
            return
        from .common import stop_waitress

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
        """Every role's link: one per seat a person plays (a computer seat has none), the spectator page and the
        arbiter page."""
        base = self.base_url()
        out = {side: f"{base}/seat/{self.table.tokens[side]}" for side in self.table.game.sides if side in self.table.tokens}
        out["spectator"] = f"{base}/"
        out["arbiter"] = f"{base}/arbiter/{self.table.tokens['arbiter']}"
        return out

    def print_links(self, out: TextIO, *, qr: bool | None = None) -> None:
        """Print each link, with a QR code per human seat (on a terminal, or ``qr=True``) so each player can scan
        theirs; a seat without a token of its own (a computer seat) gets neither."""
        from .qr import qr_text

        links = self.links()
        # QR blocks only on a terminal a phone can scan; a service's log gets the links alone (and start-up skips
        # building the codes: tens of ms of CPU here, most of a second on a Pi Zero)
        qr = out.isatty() if qr is None else qr
        out.write(f"Web referee at {self.base_url()}/ (spectators need no link)\n")
        computers = getattr(self.table, "computers", {}) or {}
        for side in self.table.game.sides:
            if side not in links:
                # no link: its page would name the computer's whole hidden army to whoever glances at the console
                out.write(f"\n{side.capitalize()} seat: played by the computer ({computers.get(side, 'a bot')}); it has "
                          "no seat link. Move its tokens as the board page, the voice and the lights say.\n")
                continue
            out.write(f"\n{side.capitalize()} seat: {links[side]}\n")
            if qr:
                out.write(qr_text(links[side]))
        out.write(f"\nArbiter (keep private): {links['arbiter']}\n")
        out.flush()
