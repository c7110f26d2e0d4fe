"""How an outside engine is started apart from the referee and ended whole: what it inherits, its limits, its user.

An engine (``cmd:...``) is an untrusted program. ``Jail`` says how it is started: no descriptor but its three pipes,
an allow-listed environment (no ``FACEDOWN_*`` variable, no password, no token), a session of its own, resource
limits (address space, open files, file size, core dumps; processes when it runs as its own user), a lower CPU
priority, no new privileges (a setuid program such as sudo gives it none), and optionally another, unprivileged
user (``--bot-user``): as root the referee changes to that user in
the child itself; otherwise it goes through ``sudo -n -u USER`` (the rule ``facedown service install`` writes).

``harden_referee`` is done once, before the first engine starts: the referee makes itself non-dumpable (a process of
the same user can then no longer open ``/proc/<referee>/fd/N``, ``environ`` or ``mem``; root still can) and, on
Linux, a child subreaper, so that a process an engine forks off and detaches (``setsid``, a double fork) is
re-parented to the referee instead of init and can still be found and ended. ``end_tree`` ends an engine with
everything it started: the engine's own descendants and every such detached orphan.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import pwd
import resource
import shutil
import signal
import sys
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass

from .base import BotError

#: Environment variables an engine may inherit from the referee (with every ``LC_*``). Nothing else passes.
ENV_ALLOWED = ("PATH", "LANG", "LANGUAGE", "TZ", "PYTHONPATH", "VIRTUAL_ENV")
#: Default limits: address space (MiB), open files, size of a file it writes (MiB), processes (own user only).
MEMORY_MB = 1024
OPEN_FILES = 256
FILE_MB = 64
PROCESSES = 64
#: How much lower than the referee an engine runs (nice), so the board and the pages stay quick while it thinks.
NICE = 10

_PR_SET_PDEATHSIG = 1
_PR_SET_DUMPABLE = 4
_PR_GET_DUMPABLE = 3
_PR_SET_CHILD_SUBREAPER = 36
_PR_SET_NO_NEW_PRIVS = 38
_hardened = False
_hard_lock = threading.Lock()


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    name = ctypes.util.find_library("c") or "libc.so.6"
    try:
        return ctypes.CDLL(name, use_errno=True)
    except OSError:
        return None


_LIBC = _libc()


def prctl(option: int, arg: int = 0) -> int:
    """``prctl(2)`` (Linux); -1 where there is none."""
    if _LIBC is None:
        return -1
    return int(_LIBC.prctl(ctypes.c_int(option), ctypes.c_ulong(arg), ctypes.c_ulong(0), ctypes.c_ulong(0),
                           ctypes.c_ulong(0)))


def harden_referee() -> dict[str, bool]:
    """Make this process non-dumpable and a child subreaper (once; Linux). Returns what took effect."""
    global _hardened
    with _hard_lock:
        if not _hardened:
            prctl(_PR_SET_DUMPABLE, 0)
            prctl(_PR_SET_CHILD_SUBREAPER, 1)
            _hardened = True
    return {"dumpable": prctl(_PR_GET_DUMPABLE) == 1, "subreaper": _LIBC is not None}


def same_user_warning(command: str, names: list[str], user: str | None) -> str | None:
    """The warning ``facedown play``/``match`` print when an outside engine runs as the referee's own user."""
    outside = [n for n in names if n.startswith("cmd:")]
    if user is not None or not outside:
        return None
    me = pwd.getpwuid(os.geteuid()).pw_name
    return (f"facedown {command}: warning: {len(outside)} outside engine(s) run as {me}, the referee's own user: they "
            f"can read the journal by its path (every deployment in it); give --bot-user USER to keep them out "
            f"(docs/bots.md, 'Outside engines are untrusted')")


def memory_limit(mb: int | None) -> int | None:
    """The address-space limit for ``--bot-memory MB``: None given is the default, 0 is none; below 64 is refused."""
    if mb is None:
        return MEMORY_MB
    if mb == 0:
        return None
    if mb < 64:
        raise JailError(f"--bot-memory {mb}: give at least 64 (MiB), or 0 for no limit")
    return mb


class JailError(BotError, ValueError):
    """The engine cannot be started as asked (an unknown user, another user without root or sudo): says why. A
    ValueError, as a bad bot name is, for the commands that check their arguments."""

    def __init__(self, message: str) -> None:
        super().__init__("crashed", message)


@dataclass(frozen=True, slots=True)
class Jail:
    """How engines are started. ``user``: run them as this unprivileged user (None: the referee's own user)."""

    user: str | None = None
    memory_mb: int | None = MEMORY_MB
    open_files: int = OPEN_FILES
    file_mb: int | None = FILE_MB
    processes: int = PROCESSES
    nice: int = NICE

    def check(self) -> None:
        """JailError unless engines can be started as configured (the user exists; root or sudo to reach it)."""
        if self.user is None:
            return
        try:
            entry = pwd.getpwnam(self.user)
        except KeyError:
            raise JailError(f"--bot-user {self.user}: no such user on this system (facedown service install "
                            f"creates one; or: sudo useradd --system --no-create-home {self.user})") from None
        if entry.pw_uid == 0:
            raise JailError(f"--bot-user {self.user}: that is root; engines must run as an unprivileged user")
        if entry.pw_uid == os.geteuid():
            raise JailError(f"--bot-user {self.user}: that is the referee's own user; give a user of their own "
                            "(engines run as it so that they cannot read the journal)")
        if os.geteuid() != 0:
            me = pwd.getpwuid(os.geteuid()).pw_name
            if shutil.which("sudo") is None:
                raise JailError(f"--bot-user {self.user}: the referee runs as {me}, not root, and there is no sudo to "
                                "start engines as another user")
            import subprocess

            try:
                ok = subprocess.run(["sudo", "-n", "-u", self.user, "--", "true"], stdin=subprocess.DEVNULL,
                                    capture_output=True, timeout=10).returncode == 0
            except (OSError, subprocess.SubprocessError):
                ok = False
            if not ok:
                raise JailError(f"--bot-user {self.user}: {me} may not start programs as {self.user} (sudo -n -u "
                                f"{self.user} refused): add the rule facedown service install writes, "
                                f"/etc/sudoers.d/facedown-bot: '{me} ALL=({self.user}) NOPASSWD: ALL'")

    def environment(self, base: Mapping[str, str] | None = None) -> dict[str, str]:
        """The engine's whole environment: the allow-listed variables of ``base`` (default the referee's), HOME,
        USER and LOGNAME of the user it runs as, and PYTHONUNBUFFERED=1."""
        src = os.environ if base is None else base
        env = {k: v for k, v in src.items() if (k in ENV_ALLOWED or k.startswith("LC_")) and not k.startswith("FACEDOWN")}
        try:
            entry = pwd.getpwnam(self.user) if self.user else pwd.getpwuid(os.geteuid())
            env.update(HOME=entry.pw_dir, USER=entry.pw_name, LOGNAME=entry.pw_name)
        except KeyError:
            env["HOME"] = "/"
        env.setdefault("PATH", os.defpath)
        env["PYTHONUNBUFFERED"] = "1"
        return env

    @property
    def via_sudo(self) -> bool:
        """Whether engines are started (and ended) through sudo: another user, and the referee is not root."""
        return self.user is not None and os.geteuid() != 0

    def command(self, argv: list[str]) -> list[str]:
        """The command line that starts ``argv``: as is, or through sudo when another user needs it and we are not
        root (sudo closes every descriptor but 0-2 and resets the environment; ``env -i`` sets ours)."""
        if not self.via_sudo:
            return list(argv)
        env = [f"{k}={v}" for k, v in sorted(self.environment().items())]
        return ["sudo", "-n", "-u", self.user, "--", "/usr/bin/env", "-i", *env, *argv]

    def popen_options(self) -> dict[str, object]:
        """Keyword arguments for subprocess.Popen: a new session, no inherited descriptor, the user (as root), the
        environment, and the limits set in the child before the engine runs."""
        opts: dict[str, object] = {"start_new_session": True, "close_fds": True, "env": self.environment()}
        if self.user is not None and os.geteuid() == 0:
            entry = pwd.getpwnam(self.user)
            opts.update(user=entry.pw_uid, group=entry.pw_gid, extra_groups=[])
        if sys.platform.startswith("linux"):
            opts["preexec_fn"] = self._limits(threading.current_thread() is threading.main_thread())
        return opts

    def _limits(self, parent_is_main: bool):  # noqa: ANN202 - a closure for preexec_fn
        limits: list[tuple[int, int]] = [(resource.RLIMIT_CORE, 0), (resource.RLIMIT_NOFILE, self.open_files)]
        if self.memory_mb:
            limits.append((resource.RLIMIT_AS, self.memory_mb << 20))
        if self.file_mb:
            limits.append((resource.RLIMIT_FSIZE, self.file_mb << 20))
        if self.user is not None:  # counted per user (all its threads): a user of its own starts from none
            limits.append((resource.RLIMIT_NPROC, self.processes))
        elif os.geteuid() != 0:  # the referee's user: what it runs now, and room for the engine (root is not held)
            limits.append((resource.RLIMIT_NPROC, user_tasks(os.getuid()) + 2 * self.processes))
        nice = self.nice
        setrlimit, getrlimit, setnice = resource.setrlimit, resource.getrlimit, os.nice
        libc_prctl = _LIBC.prctl if _LIBC is not None else None
        no_new_privs = not self.via_sudo  # (sudo itself is a setuid program: it needs them)
        # prctl's arguments made now, full width (prctl refuses stray high bits), so the child only calls
        zero = ctypes.c_ulong(0)
        pdeath = (ctypes.c_int(_PR_SET_PDEATHSIG), ctypes.c_ulong(signal.SIGKILL), zero, zero, zero)
        nnp = (ctypes.c_int(_PR_SET_NO_NEW_PRIVS), ctypes.c_ulong(1), zero, zero, zero)

        def in_child() -> None:  # runs between fork and exec: no imports, no locks, nothing that allocates much
            for which, value in limits:
                soft, hard = getrlimit(which)
                cap = value if hard == resource.RLIM_INFINITY else min(value, hard)
                setrlimit(which, (cap, cap))
            if nice:
                setnice(nice)
            if libc_prctl is not None and parent_is_main:
                # the signal comes when the *thread* that started it ends: only the main thread lasts as the process
                libc_prctl(*pdeath)
            if libc_prctl is not None and no_new_privs:
                # no setuid program (sudo, su) gives it or its children more rights than it has
                libc_prctl(*nnp)

        return in_child


def user_tasks(uid: int) -> int:
    """How many tasks (threads) the processes of real user ``uid`` hold now: what RLIMIT_NPROC counts."""
    total = 0
    for name in os.listdir("/proc") if os.path.isdir("/proc") else ():
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status", encoding="ascii", errors="replace") as f:
                fields = dict(line.split(":", 1) for line in f if ":" in line)
            if int(fields["Uid"].split()[0]) == uid:
                total += int(fields.get("Threads", "1"))
        except (OSError, KeyError, ValueError):
            continue
    return total


# ---------------------------------------------------------------------------------------------- the process tree
def _stat(pid: int) -> tuple[int, int, str] | None:
    """(parent pid, session id, state) of a process, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    rest = data[data.rfind(b")") + 2:].split()
    try:
        return int(rest[1]), int(rest[3]), rest[0].decode()
    except (IndexError, ValueError):
        return None


def _processes() -> dict[int, tuple[int, int, str]]:
    out = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return out
    for name in names:
        if name.isdigit():
            st = _stat(int(name))
            if st is not None:
                out[int(name)] = st
    return out


#: Pids of the engines now running (their session leaders), so that ending one never ends another's tree.
_live: set[int] = set()


def register(pid: int) -> None:
    _live.add(pid)


def descendants(root: int, procs: Mapping[int, tuple[int, int, str]] | None = None) -> set[int]:
    """Every process below ``root`` (by parent pid)."""
    procs = _processes() if procs is None else procs
    children: dict[int, list[int]] = {}
    for pid, (ppid, _sid, _state) in procs.items():
        children.setdefault(ppid, []).append(pid)
    found: set[int] = set()
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def orphans() -> set[int]:
    """Processes re-parented to this referee (a subreaper) that are in a session of their own: only engines are
    started in their own session, so these are what an engine left behind (a ``setsid`` grandchild, a daemon).
    A running engine and what is below it are not counted."""
    procs = _processes()
    me = os.getpid()
    mine = procs.get(me)
    my_sid = mine[1] if mine is not None else os.getsid(0)
    live = {p for p in _live if p in procs}
    keep = set(live)
    for p in live:
        keep |= descendants(p, procs)
    return {pid for pid, (ppid, sid, _state) in procs.items() if ppid == me and sid != my_sid and pid not in keep}


def end_tree(pid: int, *, wait_s: float = 2.0, as_user: str | None = None) -> set[int]:
    """End the engine ``pid`` and everything it started (its process group, its descendants, the orphans it left),
    with SIGKILL, until nothing new appears; reap what is this process's child. Returns the pids signalled.

    ``as_user``: the engine runs as that user through sudo (the referee is not root), so the referee may signal sudo
    but not the engine: sudo is first asked to pass SIGTERM on, and what is left is killed as that user by
    ``sudo -n -u USER kill -KILL``."""
    _live.discard(pid)
    signalled: set[int] = set()
    deadline = time.monotonic() + wait_s
    if as_user is not None:
        found = descendants(pid)
        try:
            os.kill(pid, signal.SIGTERM)  # sudo passes it on to the engine
        except OSError:
            pass
        _kill_as(as_user, found | orphans())
    while True:
        targets = ({pid} | descendants(pid) | orphans()) - {os.getpid()}
        targets = {t for t in targets if _stat(t) is not None and _stat(t)[2] != "Z"}  # type: ignore[index]
        if not targets:
            break
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
        refused = set()
        for t in targets:
            try:
                os.kill(t, signal.SIGKILL)
            except PermissionError:
                refused.add(t)
            except OSError:
                pass
        if refused and as_user is not None:
            _kill_as(as_user, refused)
        signalled |= targets
        if time.monotonic() > deadline:
            break
        time.sleep(0.01)
    _reap(keep=pid)
    return signalled


def _kill_as(user: str, pids: set[int]) -> None:
    """SIGKILL ``pids`` as ``user`` (processes of another user the referee may not signal itself)."""
    if not pids:
        return
    import subprocess

    try:
        subprocess.run(["sudo", "-n", "-u", user, "--", "kill", "-KILL", *map(str, sorted(pids))], check=False,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=5)
    except (OSError, subprocess.SubprocessError):
        pass


def _reap(*, keep: int) -> None:
    """Collect the exit status of the orphans engines left that have ended (zombies re-parented to us); an engine
    itself (``keep`` and those still running) is Popen's to wait for."""
    me = os.getpid()
    mine = _stat(me)
    my_sid = mine[1] if mine is not None else os.getsid(0)
    for p, (ppid, sid, state) in _processes().items():
        if ppid == me and sid != my_sid and state == "Z" and p != keep and p not in _live:
            try:
                os.waitpid(p, os.WNOHANG)
            except ChildProcessError:
                pass
