"""An external bot program as the protocol sees it: ``python -m controller.bots.example [BOT]`` serves a built-in
bot (default ``random``) over JSON lines on stdin/stdout, so ``cmd:python -m controller.bots.example greedy`` plays
like ``greedy`` but through a pipe. A bot in another language does the same: read a line, answer a line."""

from __future__ import annotations

import sys

from . import find_bot
from .protocol import serve


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    return serve(find_bot(args[0] if args else "random"))


if __name__ == "__main__":
    sys.exit(main())
