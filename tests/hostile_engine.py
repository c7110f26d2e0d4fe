"""A hostile bot engine for the tests and the benchmark: a real program (stdlib only, so it also runs as an
unprivileged user with the system's Python) that speaks the bot protocol and misbehaves in one chosen way.

    python tests/hostile_engine.py MODE --setup FILE --graph FILE [--report FILE] [--journal PATH] [--bytes N]

MODE: ``play`` (behaves), ``spy`` (tries the referee's descriptors, environment and journal; reports what it got),
``endless`` (a line with no end), ``flood`` (log lines without end), ``binary`` (a line that is not UTF-8),
``fork`` (leaves a detached grandchild behind, ``setsid`` and double fork, then plays), ``twice`` (answers a move
twice), ``early`` (answers while the other side is to move, before it is asked), ``deaf`` (stops reading its input), ``noise`` (writes to stderr without end while it plays). ``--setup``: the deployment to
answer (JSON {station: piece}); ``--graph``: {station: [neighbour stations]} for its plain moves; ``--report``: a
JSON file it writes what it found into; ``--bytes``: how much ``endless``/``flood`` write (default: without end).
"""

from __future__ import annotations

import json
import os
import sys
import time

MOVABLE_NOT = {"flag", "bomb", "mine"}


def say(message: dict) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def spy(journal: str | None) -> dict:
    """What a curious engine can reach of its referee: descriptors, environment, the journal by path."""
    ppid = os.getppid()
    found: dict = {"own_fds": sorted(int(n) for n in os.listdir("/proc/self/fd")),
                   "env": dict(os.environ), "parent": ppid, "parent_fds": {}, "secrets": []}
    try:
        names = os.listdir(f"/proc/{ppid}/fd")
        found["parent_fd_list"] = True
    except OSError as exc:
        names = []
        found["parent_fd_list"] = f"refused: {exc.strerror}"
    for name in names:
        path = f"/proc/{ppid}/fd/{name}"
        try:
            target = os.readlink(path)
        except OSError:
            target = "?"
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a pipe or socket of the referee must not hang us
            try:
                data = os.pread(fd, 1 << 22, 0) if os.path.isfile(path) else b""
            finally:
                os.close(fd)
            found["parent_fds"][name] = {"target": target, "read": len(data)}
            if b"placement" in data or b"deploy" in data:
                found["secrets"].append(f"fd {name} ({target}) holds a deployment")
        except OSError as exc:
            found["parent_fds"][name] = {"target": target, "read": f"refused: {exc.strerror}"}
    try:
        with open(f"/proc/{ppid}/environ", "rb") as f:
            environ = f.read()
        found["parent_environ"] = len(environ)
        if b"FACEDOWN_" in environ:
            found["secrets"].append("the referee's environment")
    except OSError as exc:
        found["parent_environ"] = f"refused: {exc.strerror}"
    if journal:
        for suffix in ("", "-wal", ".key"):
            try:
                with open(journal + suffix, "rb") as f:
                    data = f.read(1 << 22)
                found[f"journal{suffix}"] = len(data)
                if b"placement" in data or suffix == ".key":
                    found["secrets"].append(f"the journal{suffix} by its path")
            except OSError as exc:
                found[f"journal{suffix}"] = f"refused: {exc.strerror}"
    for key in os.environ:
        if key.startswith("FACEDOWN") or "PASSWORD" in key or "TOKEN" in key:
            found["secrets"].append(f"${key}")
    return found


def write_report(report: str | None, found: dict) -> None:
    if report:
        with open(report + ".tmp", "w", encoding="utf-8") as f:
            json.dump(found, f)
        os.replace(report + ".tmp", report)


def leave_grandchild(report: str | None) -> None:
    """Fork, setsid, fork again: a grandchild in a session of its own, re-parented away from us, that lives on."""
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.closerange(0, 3)
            if report:
                with open(report + ".grandchild", "w") as f:
                    f.write(str(os.getpid()))
            while True:
                time.sleep(1)
        os._exit(0)
    os.waitpid(pid, 0)
    if report:
        for _ in range(200):
            if os.path.exists(report + ".grandchild"):
                break
            time.sleep(0.01)


def plain_move(view: dict, graph: dict, refused: set) -> tuple[str, str]:
    """A step of one of its own movable pieces to a neighbouring station that is empty or the enemy's."""
    me = view.get("audience")
    where = {p["station"]: p for p in view.get("pieces", [])}
    for station, piece in sorted(where.items()):
        if piece.get("owner") != me or piece.get("piece") in MOVABLE_NOT:
            continue
        for to in graph.get(station, []):
            other = where.get(to)
            if (station, to) not in refused and (other is None or other.get("owner") != me):
                return station, to
    return "a1", "a2"


def endless(total: int | None) -> None:
    chunk = b"x" * 65536
    out = sys.stdout.buffer
    written = 0
    while total is None or written < total:
        out.write(chunk)
        out.flush()
        written += len(chunk)
    time.sleep(60)


def flood(total: int | None) -> None:
    line = (json.dumps({"type": "log", "text": "thinking " * 8}) + "\n").encode()
    block = line * 512
    out = sys.stdout.buffer
    written = 0
    while total is None or written < total:
        out.write(block)
        out.flush()
        written += len(block)
    # all of it written: now the answer (a referee that took the whole flood gets its move)


def main(argv: list[str]) -> int:
    mode = argv[0]
    opts = dict(zip(argv[1::2], argv[2::2], strict=False))
    with open(opts["--setup"], encoding="utf-8") as f:
        setup = json.load(f)
    with open(opts["--graph"], encoding="utf-8") as f:
        graph = json.load(f)
    report = opts.get("--report")
    total = int(opts["--bytes"]) if "--bytes" in opts else None
    found: dict = {}
    view: dict = {}
    refused: set = set()
    moves = 0
    for line in sys.stdin:
        m = json.loads(line)
        kind = m["type"]
        if kind == "hello":
            if report:
                with open(report + ".pid", "w") as f:
                    f.write(str(os.getpid()))
            say({"type": "hello", "protocol": 1, "name": f"hostile-{mode}"})
        elif kind == "new_game":
            if mode == "noise":  # stderr without end, from a thread, while it plays on
                import threading

                def noise() -> None:
                    block = b"noise " * 10000
                    while True:
                        sys.stderr.buffer.write(block)
                        sys.stderr.buffer.flush()

                threading.Thread(target=noise, daemon=True).start()
            if mode == "spy":
                found["at_new_game"] = spy(opts.get("--journal"))
                write_report(report, found)
            if mode == "fork":
                leave_grandchild(report)
            say({"type": "ready"})
        elif kind == "view":
            view = m["view"]
            if mode == "early" and view.get("phase") == "play" and view.get("turn") != view.get("audience"):
                # a move while the other side is to move: long before its own 'go' comes
                frm, to = plain_move(view, graph, refused)
                say({"type": "move", "from": frm, "to": to})
        elif kind == "refused":
            refused.add((m["from"], m["to"]))
        elif kind == "go" and m["want"] == "setup":
            if mode == "spy":
                found["at_setup"] = spy(opts.get("--journal"))
                write_report(report, found)
            say({"type": "setup", "placement": setup})
        elif kind == "go":
            moves += 1
            if mode == "spy" and moves == 1:
                found["at_move"] = spy(opts.get("--journal"))
                write_report(report, found)
            if mode == "endless":
                endless(total)
            elif mode == "flood":
                flood(total)
                say({"type": "move", "from": "a1", "to": "a2"})
                continue
            elif mode == "binary":
                sys.stdout.buffer.write(b'{"type": "move", "from": "\xff\xfe\x00garbage"}\n')
                sys.stdout.buffer.flush()
                continue
            elif mode == "deaf":
                time.sleep(3600)
            frm, to = plain_move(view, graph, refused)
            if mode == "twice":  # both in one write: they reach the referee together
                line = json.dumps({"type": "move", "from": frm, "to": to}) + "\n"
                sys.stdout.write(line + line)
                sys.stdout.flush()
                continue
            say({"type": "move", "from": frm, "to": to})
        elif kind == "quit":
            return 0
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
