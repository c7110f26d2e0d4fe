"""The FaceDown bot protocol: JSON lines over a bot program's stdin and stdout (see docs/bots.md).

Host -> bot: ``hello``, ``new_game`` (game id, seat, options, seed), ``view`` (the seat's view and its redacted
ruling), ``go`` (want ``setup`` or ``move``, with a time budget), ``refused`` (a move the referee refused),
``offer`` (an optional reaction), ``game_over``, ``quit``. Bot -> host: ``hello`` (its name), ``ready``, ``setup``,
``move``, ``answer``, and ``log`` lines at any time (ignored). This module is the bot's side (``serve``: run any
``Bot`` over the protocol) and the message checks both sides share; ``process.py`` is the host's side.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Mapping
from typing import IO, Any

from .base import Bot, BotError

PROTOCOL = 1
HOST_MESSAGES = ("hello", "new_game", "view", "go", "refused", "offer", "game_over", "quit")
BOT_MESSAGES = ("hello", "ready", "setup", "move", "answer", "log")


def encode(message: Mapping[str, Any]) -> str:
    """One protocol line (no newline): compact JSON, keys in a stable order."""
    return json.dumps(message, separators=(",", ":"), ensure_ascii=False)


def decode(line: str, allowed: tuple[str, ...], who: str) -> dict[str, Any]:
    """A protocol line as a message whose ``type`` is one of ``allowed``; BotError('protocol') says what is wrong."""
    from controller.textfiles import MAX_DEPTH, nesting_depth

    if ("[" in line or "{" in line) and nesting_depth(line) > MAX_DEPTH:
        raise BotError("protocol", f"{who} sent JSON nested more than {MAX_DEPTH} levels deep")
    try:
        message = json.loads(line)
    except json.JSONDecodeError as exc:
        raise BotError("protocol", f"{who} sent a line that is not JSON ({exc.msg} at column {exc.colno}): {line[:80]!r}") from None
    except (ValueError, RecursionError) as exc:  # a number over 4,300 digits
        raise BotError("protocol", f"{who} sent a line that cannot be read ({str(exc).split(':')[0]})") from None
    if not isinstance(message, dict) or message.get("type") not in allowed:
        kind = message.get("type") if isinstance(message, dict) else type(message).__name__
        raise BotError("protocol", f"{who} sent a message of type {kind!r}; expected one of {', '.join(allowed)}")
    return message


def check_answer(message: Mapping[str, Any], want: str, who: str) -> Any:
    """The payload of an answer to ``go`` (``want``: setup -> placement dict, move -> (from, to)) or to an offer
    (``answer`` -> bool); BotError('protocol') if it is malformed."""
    if message.get("type") != want:
        raise BotError("protocol", f"{who} answered {message.get('type')!r} where a {want!r} was asked for")
    if want == "move":
        frm, to = message.get("from"), message.get("to")
        if not isinstance(frm, str) or not isinstance(to, str):
            raise BotError("protocol", f"{who}: a move needs string fields 'from' and 'to', got {encode(message)[:120]}")
        return frm, to
    if want == "setup":
        placement = message.get("placement")
        if not isinstance(placement, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in placement.items()):
            raise BotError("protocol", f"{who}: a setup needs 'placement', an object station -> piece id")
        return placement
    accept = message.get("accept")
    if not isinstance(accept, bool):
        raise BotError("protocol", f"{who}: an answer needs a true/false 'accept'")
    return accept


def serve(bot: Bot, inp: IO[str] | None = None, out: IO[str] | None = None) -> int:
    """Run ``bot`` over the protocol on ``inp``/``out`` (default stdin/stdout) until ``quit`` or end of input."""
    inp = inp or sys.stdin
    out = out or sys.stdout

    def say(message: Mapping[str, Any]) -> None:
        out.write(encode(message) + "\n")
        out.flush()

    view: dict[str, Any] = {}
    for line in inp:
        if not line.strip():
            continue
        try:
            msg = decode(line, HOST_MESSAGES, "the host")
            kind = msg["type"]
            if kind == "hello":
                say({"type": "hello", "protocol": PROTOCOL, "name": bot.name})
            elif kind == "new_game":
                bot.new_game(msg["game"], msg["seat"], msg.get("options") or {}, msg.get("seed"))
                say({"type": "ready"})
            elif kind == "view":
                view = msg["view"]
                bot.observe(view, msg.get("event"))
            elif kind == "go":
                time_ms = float(msg.get("time_ms", 1000))
                if msg.get("want") == "setup":
                    say({"type": "setup", "placement": bot.choose_setup(view, time_ms)})
                else:
                    frm, to = bot.choose_move(view, time_ms)
                    say({"type": "move", "from": frm, "to": to})
            elif kind == "refused":
                bot.refused(msg["from"], msg["to"])
            elif kind == "offer":
                say({"type": "answer", "offer": msg["offer"]["id"], "accept": bool(bot.answer_offer(msg["offer"]))})
            elif kind == "game_over":
                bot.game_over(msg.get("result"))
            elif kind == "quit":
                return 0
        except (BotError, KeyError, ValueError) as exc:
            say({"type": "log", "text": f"{type(exc).__name__}: {exc}"})
            return 1
    return 0
