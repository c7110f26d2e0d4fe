"""An external bot: any program that speaks the bot protocol (docs/bots.md) on stdin/stdout, found as ``cmd:...``.

The program is untrusted. It is started by ``jail.Jail`` (no inherited descriptor but its pipes, an allow-listed
environment, a session of its own, resource limits, optionally a user of its own) and ended with everything it
started (``jail.end_tree``) when the bot is closed: at the end of the game, when its seat is handed over or it
fails, and when the referee stops.

Its pipes are non-blocking and polled by the thread that talks to it (no reader thread to die): what it writes is
read in chunks, lines of at most ``MAX_LINE`` bytes, each decoded as UTF-8 and JSON, at most ``MAX_LOGS`` log (or
blank) lines per move (only the last few kept, in the transcript), and no answer the host did not ask for: before
anything is sent, what the program wrote until then is read, so an answer found there came early or a second time.
Each breach is ``BotError('protocol', why)`` at once (within the move's budget, never as a time-out), and the
program is ended. The referee's memory stays bounded whatever the program writes: what is not read yet stays in
the pipe, and the program waits. What is sent to it waits in a bounded outbox, so a program that stops reading never
blocks the referee. Of its stderr only the last ``STDERR_KEEP`` bytes are kept (the "last words" of a crash).
Every answer is awaited with a deadline (the ``go``'s budget plus a grace for the pipe): one that hangs is a
time-out; one that exits has crashed.
"""

from __future__ import annotations

import collections
import os
import select
import shlex
import subprocess
import threading
import time
from collections.abc import Mapping
from typing import Any

from . import jail as _jail
from .base import Bot, BotError
from .protocol import BOT_MESSAGES, check_answer, decode, encode

#: Seconds allowed, beyond the move's time budget, for the pipe and the program's own overhead.
GRACE_S = 1.0
#: Seconds a program may take to start and answer ``hello`` and ``new_game``.
START_S = 15.0
#: The longest line a program may write, in bytes (the newline not counted). A Stratego setup is ~1 KiB.
MAX_LINE = 64 * 1024
#: The most ``log`` lines a program may write between two ``go`` (a move and what it writes around it).
MAX_LOGS = 1000
#: Bytes of what is sent to the program that may wait unread before it is a protocol failure (~100 views).
MAX_OUTBOX = 1 << 20
#: The end of its stderr kept for the report of a crash, and the protocol lines kept in the transcript (the last).
STDERR_KEEP = 4096
TRANSCRIPT_KEEP = 200
#: Characters of one line kept in the transcript (a Stratego view is ~6 KB): the transcript stays a few MB at most.
TRANSCRIPT_LINE = 16 * 1024
_CHUNK = 65536


class ProcessBot(Bot):
    """A bot program run as a child process, spoken to in JSON lines."""

    def __init__(self, command: str, *, grace_s: float = GRACE_S, start_s: float = START_S,
                 jail: _jail.Jail | None = None, max_line: int = MAX_LINE, max_logs: int = MAX_LOGS) -> None:
        self.command = command.strip()
        if not self.command:
            raise ValueError("cmd: needs a program to run, e.g. cmd:python -m controller.bots.example")
        try:
            self.argv = shlex.split(self.command)
        except ValueError as exc:
            raise ValueError(f"cmd:{self.command}: {exc}") from None
        self.name = f"cmd:{self.command}"
        self.grace_s = grace_s
        self.start_s = start_s
        self.jail = jail or _jail.Jail()
        self.jail.check()
        self.max_line = max_line
        self.max_logs = max_logs
        self.proc: subprocess.Popen[bytes] | None = None
        self.failure: BotError | None = None  # the first thing found wrong: every later call raises it
        self.transcript: collections.deque[tuple[str, str]] = collections.deque(maxlen=TRANSCRIPT_KEEP)
        self.ended: set[int] = set()  # pids ended with the program at close (for tests and reports)
        self._io = threading.RLock()
        self._game: dict[str, Any] | None = None  # the new_game message, told again if it is started again
        self._reset()

    def _reset(self) -> None:
        self._buf = bytearray()  # what it wrote on stdout, not yet a whole line
        self._outbox = bytearray()  # what it was sent and has not read yet
        self._stderr_tail = bytearray()
        self._eof = False
        self._err_open = True
        self._answered = False  # an answer was taken since the last request
        self._logs = 0

    # ------------------------------------------------------------------ the pipes
    def _start(self) -> None:
        _jail.harden_referee()
        try:
            self.proc = subprocess.Popen(
                self.jail.command(self.argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                bufsize=0, **self.jail.popen_options(),  # type: ignore[arg-type]
            )
        except (OSError, subprocess.SubprocessError) as exc:
            raise BotError("crashed", f"{self.name}: cannot start it ({getattr(exc, 'strerror', None) or exc})") from None
        _jail.register(self.proc.pid)
        self._reset()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            assert stream is not None
            os.set_blocking(stream.fileno(), False)  # all I/O is polled here: nothing ever blocks the referee
        hello = self._ask({"type": "hello", "protocol": 1}, self.start_s)
        if hello.get("type") != "hello":
            raise self._protocol(f"{self.name} answered {hello.get('type')!r} to hello")
        if isinstance(hello.get("name"), str):
            given = "".join(c for c in hello["name"][:80] if c.isprintable()) or "unnamed"  # no terminal escapes
            self.name = given if given.startswith("cmd:") else f"cmd:{given}"
        if self._game is not None:  # started again after the game ended (an undo of its last move): the same game
            self._begin()

    def _protocol(self, why: str) -> BotError:
        return self._failed(BotError("protocol", why))

    def _failed(self, exc: BotError) -> BotError:
        self.failure = self.failure or exc
        self.close()
        return exc

    def _pump(self, timeout_s: float, *, answer: bool) -> dict[str, Any] | None:
        """Move bytes both ways for up to ``timeout_s`` (0: only what is ready now). With ``answer``, return the
        first message that is not a log line as soon as it is whole; without, any such message is out of turn.
        Raises BotError on the first breach of the protocol."""
        proc = self.proc
        assert proc is not None and proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        out_fd, err_fd, in_fd = proc.stdout.fileno(), proc.stderr.fileno(), proc.stdin.fileno()
        deadline = time.monotonic() + timeout_s
        message = self._lines(answer)  # whole lines already read, behind an earlier answer
        if message is not None:
            return message
        read_budget = 8 * self.max_line  # a drain reads a bounded amount (stdout and stderr); the rest waits
        while True:
            poller = select.poll()
            if not self._eof:
                poller.register(out_fd, select.POLLIN)
            if self._err_open:
                poller.register(err_fd, select.POLLIN)
            if self._outbox:
                poller.register(in_fd, select.POLLOUT)
            wait_ms = max(0, int((deadline - time.monotonic()) * 1000)) if answer else 0
            events = poller.poll(wait_ms)
            if not events:
                if answer and self._eof:
                    raise self._crashed()
                if not answer or time.monotonic() >= deadline:
                    return None
                continue
            for fd, ev in events:
                if fd == out_fd:
                    chunk = self._read(out_fd)
                    if chunk is None:
                        continue
                    if not chunk:
                        self._eof = True
                        continue
                    read_budget -= len(chunk)
                    self._buf += chunk
                    message = self._lines(answer)
                    if message is not None:
                        return message
                elif fd == err_fd:
                    chunk = self._read(err_fd)
                    if not chunk:
                        self._err_open = chunk is None
                        continue
                    read_budget -= len(chunk)
                    self._stderr_tail += chunk
                    del self._stderr_tail[:-STDERR_KEEP]
                elif fd == in_fd:
                    if ev & (select.POLLERR | select.POLLHUP):
                        self._outbox.clear()  # it closed its input: what it was sent is lost, as it chose
                        continue
                    try:
                        n = os.write(in_fd, self._outbox[:_CHUNK])
                    except BlockingIOError:
                        n = 0
                    except OSError:
                        self._outbox.clear()
                        continue
                    del self._outbox[:n]
            if self._eof and answer:
                raise self._crashed()
            if not answer and read_budget <= 0:
                return None

    @staticmethod
    def _read(fd: int) -> bytes | None:
        try:
            return os.read(fd, _CHUNK)
        except BlockingIOError:
            return None
        except OSError:
            return b""

    def _lines(self, answer: bool) -> dict[str, Any] | None:
        """Take the whole lines out of the buffer; the first answer (when one is awaited) is returned and what follows
        it stays buffered, to be judged as out of turn."""
        while True:
            nl = self._buf.find(b"\n")
            if nl < 0:
                break
            raw = bytes(self._buf[:nl])
            del self._buf[:nl + 1]
            message = self._line(raw)
            if message is None:
                continue
            if not answer:
                what = "a second answer" if self._answered else "an answer before it was asked for"
                raise BotError("protocol", f"{self.name} sent {what} ({message['type']!r} with no request pending)")
            self._answered = True
            return message
        if len(self._buf) > self.max_line:
            raise BotError("protocol", f"{self.name} sent a line longer than {self.max_line // 1024} kB (the protocol's "
                           "limit) with no end of line")
        return None

    def _line(self, raw: bytes) -> dict[str, Any] | None:
        """One line as a message, or None for a log or blank line (counted: a flood of either is a breach)."""
        if len(raw) > self.max_line:
            raise BotError("protocol", f"{self.name} sent a line longer than {self.max_line // 1024} kB ({len(raw)} bytes, "
                           "the protocol's limit)")
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise BotError("protocol", f"{self.name} sent a line that is not UTF-8 text (byte {exc.start}: "
                           f"{raw[exc.start:exc.start + 1]!r})") from None
        if text.strip():
            try:
                message = decode(text, BOT_MESSAGES, self.name)
            except (ValueError, RecursionError) as exc:  # JSON too deep, a number too long: still the protocol's
                if isinstance(exc, BotError):
                    raise
                raise BotError("protocol", f"{self.name} sent a line that is not a protocol message "
                               f"({type(exc).__name__}: {str(exc)[:80]})") from None
            if message["type"] != "log":
                self.transcript.append(("<", text[:TRANSCRIPT_LINE]))
                return message
            self.transcript.append(("<", text[:200]))
        self._logs += 1
        if self._logs > self.max_logs:
            raise BotError("protocol", f"{self.name} sent more than {self.max_logs} log lines for one move (a flood)")
        return None

    def _send(self, message: Mapping[str, Any], *, asks: bool = False) -> None:
        with self._io:
            if self.failure is not None:
                raise self.failure
            if self.proc is None:
                self._start()
            assert self.proc is not None
            try:
                self._pump(0, answer=False)  # what it wrote before this was sent: never an answer to it
            except BotError as exc:
                raise self._failed(exc) from None
            if self._eof:
                raise self._crashed()
            line = encode(message)
            data = (line + "\n").encode("utf-8")
            if len(self._outbox) + len(data) > MAX_OUTBOX:
                raise self._protocol(f"{self.name} does not read what it is sent ({len(self._outbox)} bytes wait unread)")
            if asks:
                self._answered = False
            if message.get("type") == "go":
                self._logs = 0
            self.transcript.append((">", line[:TRANSCRIPT_LINE]))
            self._outbox += data
            self._write_now()

    def _write_now(self) -> None:
        """Write what the pipe takes now, without waiting (the rest goes while an answer is awaited)."""
        assert self.proc is not None and self.proc.stdin is not None
        fd = self.proc.stdin.fileno()
        while self._outbox:
            try:
                n = os.write(fd, self._outbox[:_CHUNK])
            except BlockingIOError:
                return
            except OSError:  # it closed its input or is gone: what it was sent is lost, as it chose
                self._outbox.clear()
                return
            del self._outbox[:n]

    def _ask(self, message: Mapping[str, Any], timeout_s: float) -> dict[str, Any]:
        with self._io:
            self._send(message, asks=True)
            try:
                answer = self._pump(timeout_s, answer=True)
            except BotError as exc:
                raise self._failed(exc) from None
            if answer is None:
                raise self._failed(BotError("timeout", f"{self.name} gave no answer to {message['type']!r} within "
                                            f"{timeout_s:.1f} s"))
            return answer

    def _crashed(self) -> BotError:
        code = None
        if self.proc is not None:
            try:
                code = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
            try:
                self._pump(0, answer=False)  # the last of its stderr
            except BotError:
                pass
        text = bytes(self._stderr_tail).decode("utf-8", "replace")
        tail = [line[:160] for line in text.strip().splitlines()[-3:]]
        said = f"; its last words: {' | '.join(tail)}" if tail else ""
        return self._failed(BotError("crashed", f"{self.name} stopped (exit status {code}){said}"))

    # ------------------------------------------------------------------ the Bot interface
    def new_game(self, game: str, seat: str, options: Mapping[str, Any], seed: int | None = None) -> None:
        self._game = {"type": "new_game", "game": game, "seat": seat, "options": dict(options), "seed": seed}
        if self.proc is None:
            self._start()  # which tells it of the game
            return
        self._begin()

    def _begin(self) -> None:
        answer = self._ask(self._game, self.start_s)
        if answer["type"] != "ready":
            raise self._protocol(f"{self.name} answered {answer['type']!r} to new_game, not 'ready'")

    def observe(self, view: Mapping[str, Any], event: Mapping[str, Any] | None = None) -> None:
        self._send({"type": "view", "view": view, "event": event})

    def choose_setup(self, view: Mapping[str, Any], time_ms: float) -> dict[str, str]:
        self.observe(view)
        answer = self._ask({"type": "go", "want": "setup", "time_ms": time_ms}, time_ms / 1000 + self.grace_s + self.start_s)
        return self._checked(answer, "setup")

    def choose_move(self, view: Mapping[str, Any], time_ms: float) -> tuple[str, str]:
        answer = self._ask({"type": "go", "want": "move", "time_ms": time_ms}, time_ms / 1000 + self.grace_s)
        return self._checked(answer, "move")

    def _checked(self, answer: Mapping[str, Any], want: str) -> Any:
        try:
            return check_answer(answer, want, self.name)
        except BotError as exc:
            self.failure = self.failure or exc
            self.close()
            raise

    def refused(self, frm: str, to: str) -> None:
        self._send({"type": "refused", "from": frm, "to": to})

    def answer_offer(self, offer: Mapping[str, Any]) -> bool:
        answer = self._ask({"type": "offer", "offer": dict(offer)}, 1.0 + self.grace_s)
        return self._checked(answer, "answer")

    def game_over(self, result: Mapping[str, Any] | None) -> None:
        """Tell it the game is over, then end it (and all it started): nothing of it outlives the game."""
        if self.proc is not None and self.proc.poll() is None and self.failure is None:
            self._send({"type": "game_over", "result": result})
        self.close()

    def _flush(self, proc: subprocess.Popen[bytes], timeout_s: float) -> None:
        """Write what waits in the outbox, for at most ``timeout_s``."""
        assert proc.stdin is not None
        fd = proc.stdin.fileno()
        deadline = time.monotonic() + timeout_s
        while self._outbox and time.monotonic() < deadline:
            poller = select.poll()
            poller.register(fd, select.POLLOUT)
            if not poller.poll(max(1, int((deadline - time.monotonic()) * 1000))):
                return
            try:
                del self._outbox[:os.write(fd, self._outbox[:_CHUNK])]
            except BlockingIOError:
                continue
            except OSError:
                return

    def close(self) -> None:
        """Tell the program to quit, give it a moment, then end it and everything it started."""
        with self._io:
            proc, self.proc = self.proc, None
            if proc is None:
                return
            if proc.poll() is None and self.failure is None:
                line = encode({"type": "quit"})
                self.transcript.append((">", line))
                self._outbox += (line + "\n").encode()
                self._flush(proc, 1.0)
                try:
                    proc.wait(timeout=1)
                except subprocess.TimeoutExpired:
                    pass
            self.ended = _jail.end_tree(proc.pid, as_user=self.jail.user if self.jail.via_sudo else None)
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL was sent
                pass
            for stream in (proc.stdin, proc.stdout, proc.stderr):
                try:
                    if stream is not None:
                        stream.close()
                except OSError:
                    pass
