"""An external bot: any program that speaks the bot protocol (docs/bots.md) on stdin/stdout, found as ``cmd:...``.

The program is started with ``new_game`` and kept for the game. Every answer is awaited with a deadline (the time
budget of the ``go`` plus a grace for the pipe), so a bot that hangs is stopped and reported as a time-out; one
that exits is reported as crashed with its exit status and the end of what it wrote on stderr; one that writes
nonsense is reported as breaking the protocol. The program is ended when the bot is closed.
"""

from __future__ import annotations

import os
import queue
import shlex
import subprocess
import tempfile
import threading
from collections import deque
from collections.abc import Mapping
from typing import Any

from .base import Bot, BotError
from .protocol import BOT_MESSAGES, check_answer, decode, encode

#: Seconds allowed, beyond the move's time budget, for the pipe and the program's own overhead.
GRACE_S = 1.0
#: Seconds a program may take to start and answer ``hello`` and ``new_game``.
START_S = 15.0
_EOF = object()
#: How many lines of the conversation a ProcessBot keeps (for a look after a failure).
TRANSCRIPT = 2000
#: The longest line a bot may write (its largest message, a setup, is under 2 kB).
MAX_LINE = 64 * 1024


class _Unreadable(str):
    """Put on the queue instead of a line that cannot be taken (too long, not UTF-8), saying why; the reader stops."""


class ProcessBot(Bot):
    """A bot program run as a child process, spoken to in JSON lines."""

    def __init__(self, command: str, *, grace_s: float = GRACE_S, start_s: float = START_S) -> None:
        self.command = command.strip()
        if not self.command:
            raise ValueError("cmd: needs a program to run, e.g. cmd:python -m controller.bots.example")
        self.argv = shlex.split(self.command)
        self.name = f"cmd:{self.command}"
        self.grace_s = grace_s
        self.start_s = start_s
        self.proc: subprocess.Popen[str] | None = None
        self.lines: queue.Queue[Any] = queue.Queue()
        self.stderr = tempfile.TemporaryFile(mode="w+", encoding="utf-8")
        # ('>', line sent) / ('<', line received), the latest TRANSCRIPT kept: a bot writing log lines without end
        # must not fill the host's memory
        self.transcript: deque[tuple[str, str]] = deque(maxlen=TRANSCRIPT)

    # ------------------------------------------------------------------ the pipe
    def _start(self) -> None:
        try:
            self.proc = subprocess.Popen(
                self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.stderr, text=True,
                encoding="utf-8", bufsize=1, env={**os.environ, "PYTHONUNBUFFERED": "1"},
            )
        except OSError as exc:
            raise BotError("crashed", f"{self.name}: cannot start it ({exc.strerror or exc})") from None
        threading.Thread(target=self._read, args=(self.proc,), daemon=True, name="bot-reader").start()
        hello = self._ask({"type": "hello", "protocol": 1}, self.start_s)
        if hello.get("type") != "hello":
            raise BotError("protocol", f"{self.name} answered {hello.get('type')!r} to hello")
        if isinstance(hello.get("name"), str):
            self.name = hello["name"] if hello["name"].startswith("cmd:") else f"cmd:{hello['name']}"

    def _read(self, proc: subprocess.Popen[str]) -> None:
        assert proc.stdout is not None
        while True:
            try:
                line = proc.stdout.readline(MAX_LINE + 1)
            except UnicodeDecodeError:
                self.lines.put(_Unreadable("a line that is not UTF-8 text"))
                return
            except (OSError, ValueError):  # the pipe closed under us
                line = ""
            if not line:
                break
            if len(line) > MAX_LINE and not line.endswith("\n"):  # nothing of it is kept, nothing after it read
                self.lines.put(_Unreadable(f"a line longer than {MAX_LINE // 1024} kB (a protocol line is one small "
                                           "JSON object)"))
                return
            self.lines.put(line)
        self.lines.put(_EOF)

    def _send(self, message: Mapping[str, Any]) -> None:
        if self.proc is None:
            self._start()
        assert self.proc is not None and self.proc.stdin is not None
        line = encode(message)
        self.transcript.append((">", line))
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, OSError):
            raise self._crashed() from None

    def _ask(self, message: Mapping[str, Any], timeout_s: float) -> dict[str, Any]:
        self._send(message)
        while True:
            try:
                line = self.lines.get(timeout=timeout_s)
            except queue.Empty:
                self.close()
                raise BotError("timeout", f"{self.name} gave no answer to {message['type']!r} within {timeout_s:.1f} s") from None
            if line is _EOF:
                raise self._crashed()
            if isinstance(line, _Unreadable):
                if self.proc is not None:
                    self.proc.kill()  # it may be stuck writing more of the same: no waiting for it to quit
                self.close()
                raise BotError("protocol", f"{self.name} sent {line}")
            if not line.strip():
                continue
            self.transcript.append(("<", line.rstrip("\n")))
            answer = decode(line, BOT_MESSAGES, self.name)
            if answer["type"] != "log":
                return answer

    def _crashed(self) -> BotError:
        code = None
        if self.proc is not None:
            try:
                code = self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                code = None
        self.stderr.seek(0)
        tail = self.stderr.read()[-400:].strip().splitlines()[-3:]
        said = f"; its last words: {' | '.join(tail)}" if tail else ""
        return BotError("crashed", f"{self.name} stopped (exit status {code}){said}")

    # ------------------------------------------------------------------ the Bot interface
    def new_game(self, game: str, seat: str, options: Mapping[str, Any], seed: int | None = None) -> None:
        answer = self._ask({"type": "new_game", "game": game, "seat": seat, "options": dict(options), "seed": seed}, self.start_s)
        if answer["type"] != "ready":
            raise BotError("protocol", f"{self.name} answered {answer['type']!r} to new_game, not 'ready'")

    def observe(self, view: Mapping[str, Any], event: Mapping[str, Any] | None = None) -> None:
        self._send({"type": "view", "view": view, "event": event})

    def choose_setup(self, view: Mapping[str, Any], time_ms: float) -> dict[str, str]:
        self.observe(view)
        answer = self._ask({"type": "go", "want": "setup", "time_ms": time_ms}, time_ms / 1000 + self.grace_s + self.start_s)
        return check_answer(answer, "setup", self.name)

    def choose_move(self, view: Mapping[str, Any], time_ms: float) -> tuple[str, str]:
        answer = self._ask({"type": "go", "want": "move", "time_ms": time_ms}, time_ms / 1000 + self.grace_s)
        return check_answer(answer, "move", self.name)

    def refused(self, frm: str, to: str) -> None:
        self._send({"type": "refused", "from": frm, "to": to})

    def answer_offer(self, offer: Mapping[str, Any]) -> bool:
        answer = self._ask({"type": "offer", "offer": dict(offer)}, 1.0 + self.grace_s)
        return check_answer(answer, "answer", self.name)

    def game_over(self, result: Mapping[str, Any] | None) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self._send({"type": "game_over", "result": result})

    def close(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            try:
                assert proc.stdin is not None
                proc.stdin.write(encode({"type": "quit"}) + "\n")
                proc.stdin.flush()
                proc.wait(timeout=1)
            except (OSError, subprocess.TimeoutExpired, ValueError):
                proc.kill()
                proc.wait()
        for stream in (proc.stdin, proc.stdout):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
