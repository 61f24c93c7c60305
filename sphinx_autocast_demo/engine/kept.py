"""A worker kept between builds (``autocast_demo_keep_worker``): for a writer's edit loop.

A per-build worker spends its first seconds importing torch and warming up, which is most of
the time of a build that re-runs one edited demo. A kept worker is a warm worker that stays,
after the build that started it, for later builds of the same Python, torch, extension and
environment (its key, :func:`fingerprint`). It runs nothing itself: every build that
connects gets a session, a child forked from it that serves that build exactly as a per-build
worker does (:class:`.zygote.Zygote`, a child forked per run), so every run still starts
from the same untouched memory. The build hands its pipes over a Unix socket in a directory
only its user can open; the session ends when the build closes them (or dies), and the worker
when no build came for its idle time.

Started by :func:`connect` as the per-build worker is (``python -m
sphinx_autocast_demo.engine.worker``, so that a run sees the same ``sys.argv``), with
``AUTOCAST_DEMO_KEPT`` (its socket and idle time) in its environment.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .protocol import Kept, Ready

#: The per-build words of the pool's environment: a session's, never a kept worker's key.
PER_BUILD = ("AUTOCAST_DEMO_EAGER_FDS", "AUTOCAST_DEMO_COPY_AHEAD")

#: What a shell changes between two builds of the same environment (where it ran from, the
#: command's path), and what Sphinx sets for the build (its project's docutils.conf): not in
#: the key, so that one worker serves every project of a writer. The runs see the build's own
#: values all the same: a session takes the build's whole environment (:func:`_session`).
BOOKKEEPING = ("PWD", "OLDPWD", "_", "SHLVL", "DOCUTILSCONFIG")

#: How long a build waits for a kept worker it started to listen (it does before its imports).
LISTEN_TIMEOUT = 30.0

#: How long a build waits for the session of a kept worker that was warm already (it forks one
#: at once: ~20 ms) before it starts its own worker: one that is stopped or stuck would
#: otherwise hold every later build for the start timeout. A build that finds one still
#: starting (another build started it) waits for its warm-up as for its own worker's.
ANSWER_TIMEOUT = 10.0

#: The environment variable that makes a worker a kept one: its socket and idle time (JSON).
KEPT = "AUTOCAST_DEMO_KEPT"


class KeptUnavailable(Exception):
    """No kept worker here (the runtime directory is not private, the worker failed to start):
    the build starts its own, and says why."""


def _runtime_path() -> Path:
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    return Path(base, f"autocast-demo-{os.getuid()}")


def runtime_dir() -> Path:
    """This user's directory for kept workers' sockets and logs, which nobody else may open
    (made if missing)."""
    path = _runtime_path()
    try:
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
        found = path.lstat()
    except OSError as exc:  # XDG_RUNTIME_DIR missing, or a file
        raise KeptUnavailable(f"{path} cannot be made: {exc.strerror}") from None
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
        raise KeptUnavailable(f"{path} is not a directory that only this user can open")
    return path


def fingerprint(env: dict[str, str]) -> str:
    """What a warm worker's memory and its runs' process depend on: the interpreter, the
    environment it imports under, the installed packages (torch's and this extension's files,
    and the site-packages directories, whose times change with every install), and what a
    process inherits (umask, CPUs, limits, niceness, ignored and blocked signals, cgroup).
    Left out: the shell's and Sphinx's bookkeeping (:data:`BOOKKEEPING`), which the runs see
    as their build has it, and the signals the worker resets (``zygote.RESET_SIGNALS``).
    Another key, another worker."""
    import importlib.util
    import resource
    import signal
    import site

    package = Path(__file__).resolve().parent.parent
    files = sorted(package.glob("*.py")) + sorted(package.glob("engine/*.py"))
    spec = importlib.util.find_spec("torch")
    if spec is not None and spec.origin:
        files += [Path(spec.origin), Path(spec.origin).with_name("version.py")]
    files += [Path(p) for p in {*site.getsitepackages(), site.getusersitepackages()}]
    seen = []
    for path in sorted(files):
        with contextlib.suppress(OSError):
            found = path.stat()
            seen.append((str(path), found.st_mtime_ns, found.st_size))
    umask = os.umask(0o022)
    os.umask(umask)
    limits = [resource.getrlimit(getattr(resource, name)) for name in sorted(dir(resource))
              if name.startswith("RLIMIT_")]
    from .zygote import RESET_SIGNALS

    ignored = []
    for sig in sorted(set(signal.valid_signals()) - set(RESET_SIGNALS)):  # runs get defaults
        with contextlib.suppress(ValueError, OSError):
            if signal.getsignal(sig) == signal.SIG_IGN:
                ignored.append(int(sig))
    try:
        cgroup = Path("/proc/self/cgroup").read_text()
    except OSError:
        cgroup = ""
    process = {"umask": umask, "cpus": sorted(os.sched_getaffinity(0)), "limits": limits,
               "nice": os.nice(0), "ignored": ignored, "cgroup": cgroup,
               "blocked": sorted(int(s) for s in signal.pthread_sigmask(signal.SIG_BLOCK, []))}
    blob = json.dumps({"python": [sys.executable, sys.version], "files": seen, "process": process,
                       "env": sorted((k, v) for k, v in env.items()
                                     if k not in PER_BUILD + BOOKKEEPING)})
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


@dataclass
class Joined:
    """A connection to a kept worker: its pid, and whether it was warm (see :func:`_warm`)."""

    sock: socket.socket
    pid: int
    warm: bool
    path: Path  # its socket


def _warm(sock: Path) -> Path:
    """The file that says the worker listening at ``sock`` (its pid inside) has warmed up: from
    then on it answers a build at once."""
    return sock.with_suffix(".warm")


def _is_warm(sock: Path, pid: int) -> bool:
    """Whether the worker ``pid``, listening at ``sock``, said it is warm (not another worker
    that once listened there: ``stop-workers`` during its warm-up, and a new one started)."""
    try:
        return _warm(sock).read_text() == str(pid)
    except OSError:
        return False


def connect(env: dict[str, str], idle: float) -> Joined:
    """A connection to the kept worker for ``env``, started (detached) if none listens."""
    import fcntl

    if not hasattr(socket, "SO_PEERCRED") or not hasattr(os, "sched_getaffinity"):  # not Linux
        raise KeptUnavailable("this system cannot tell whose process listens on a socket")
    directory = runtime_dir()
    key = fingerprint(env)
    path = directory / f"{key}.sock"
    with open(directory / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two builds at once start one worker, not two
        found = _connect(path)
        if found is not None:
            return Joined(*found, warm=_is_warm(path, found[1]), path=path)
        path.unlink(missing_ok=True)  # a worker that ended without removing it
        _warm(path).unlink(missing_ok=True)
        log = directory / f"{key}.log"
        with open(log, "wb") as err:
            server = subprocess.Popen(
                [sys.executable, "-m", f"{__package__}.worker"],
                env={**{k: v for k, v in env.items() if k not in PER_BUILD},
                     KEPT: json.dumps([str(path), float(idle)])},
                cwd=directory,
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                start_new_session=True,  # the terminal's Ctrl-C is for the build, not for it
            )
        deadline = time.monotonic() + LISTEN_TIMEOUT
        while (found := _connect(path)) is None:
            if server.poll() is not None or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:].strip()
                raise KeptUnavailable("the kept worker did not start" + (f":\n{tail}" if tail else ""))
            time.sleep(0.005)
        return Joined(*found, warm=False, path=path)


def stop_all() -> list[str]:
    """Tell every worker kept for this user to end (each notices within a second that its
    socket is gone; the builds it serves finish first). Returns their keys."""
    if not os.path.lexists(_runtime_path()):  # none was ever kept here: nothing to make
        return []
    stopped = []
    for path in sorted(runtime_dir().glob("*.sock")):
        path.unlink(missing_ok=True)
        _warm(path).unlink(missing_ok=True)
        stopped.append(path.stem)
    return stopped


def _connect(path: Path) -> tuple[socket.socket, int] | None:
    """A connection to the worker listening at ``path``, if it is this user's, and its pid; None
    if none listens there."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10.0)
    try:
        sock.connect(str(path))
        pid, uid = _peer(sock)
    except (FileNotFoundError, ConnectionRefusedError):  # none there, or it ended
        sock.close()
        return None
    except OSError as exc:  # TimeoutError: it is stuck (its backlog full)
        sock.close()
        raise KeptUnavailable(f"the kept worker at {path} does not answer ({exc})") from None
    if uid != os.getuid():  # the build's environment goes there: only to ourselves
        sock.close()
        raise KeptUnavailable(f"{path} is another user's")
    return sock, pid


def _peer(sock: socket.socket) -> tuple[int, int]:
    """The pid and uid of the process at the other end of ``sock``."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    pid, uid, _ = struct.unpack("3i", creds)
    return int(pid), int(uid)


def hand_over(sock: socket.socket, fds: dict[str, int], env: dict[str, str], cwd: str,
              idle: float) -> None:
    """Give the kept worker this build's ends of the pipes (and its log), environment and
    directory: its session uses them as a per-build worker uses its stdin, stdout and stderr,
    the environment it was started with (the pool's words to it included) and its directory.
    ``idle``: this build's ``autocast_demo_keep_worker``, the worker's idle time from now on."""
    hello = json.dumps({"fds": list(fds), "env": env, "cwd": cwd, "idle": idle}).encode()
    with sock:
        sent = socket.send_fds(sock, [hello], list(fds.values()))
        sock.sendall(hello[sent:])  # a large environment may not go in one message


# The kept worker's side.


@dataclass
class Session:
    """One build's pipes, as handed over."""

    fds: dict[str, int]
    env: dict[str, str]
    cwd: str
    idle: float  # the build's keep_worker: the last build's says how long the worker stays

    def close(self) -> None:
        for fd in self.fds.values():
            with contextlib.suppress(OSError):
                os.close(fd)


def _accept(listener: socket.socket, timeout: float) -> Session | None:
    """The next build's session, or None (none came in ``timeout`` seconds, or what came was
    not a build of this user's: its descriptors are closed, and the build starts its own
    worker when its pipes end unanswered)."""
    listener.settimeout(timeout)
    fds: list[int] = []
    try:
        conn, _ = listener.accept()
        with conn:
            conn.settimeout(10.0)
            if _peer(conn)[1] != os.getuid():  # the directory is private: a second lock
                return None
            hello, fds, _, _ = socket.recv_fds(conn, 1 << 20, 8)
            for fd in fds:  # ours only: no run and no fresh interpreter may keep them
                os.set_inheritable(fd, False)
            while chunk := conn.recv(1 << 20):  # an environment larger than the first read
                hello += chunk
        words = json.loads(hello)
        return Session(dict(zip(words["fds"], fds, strict=True)), dict(words["env"]),
                       str(words["cwd"]), float(words["idle"]))
    except (OSError, ValueError, KeyError, TypeError):  # TimeoutError: none came
        for fd in fds:
            os.close(fd)
        return None


def serve(path: Path, idle: float) -> int:
    """Import, warm up, then fork a session for every build that connects, until none came
    for ``idle`` seconds (and no session is left) or the socket was removed."""
    from .processes import reaped
    from .worker import imported, warmed

    os.dup2(2, 1)  # stray prints (torch's warnings) into the log
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(16)
    bound = _identity(path)
    info = imported()
    session = _accept(listener, timeout=LISTEN_TIMEOUT)  # the build that started us
    if session is None:
        return _leave(path, bound)
    # Its eager runs run while we warm up, as a per-build worker's do; its eager zygote does
    # not die with us (the build may go on with a worker of its own).
    eager = (session.fds.pop("eager_in"), session.fds.pop("eager_out")) \
        if "eager_in" in session.fds else None
    info, _ = warmed(info, eager, private=[listener.fileno(), *session.fds.values()],
                     with_parent=False)
    if "error" in info or not info["fork"]:
        # Nothing to keep (or unsafe to fork): serve the one build, here, as its own worker
        # would, and no other (their pipes end unanswered: they start their own).
        _leave(path, bound)
        listener.close()
        return _session(session, info, None)
    kept: Kept = {"pid": os.getpid(), "build": 0, "idle": idle}
    if _still_ours(path, bound):  # (else stop-workers came: a later worker may listen there)
        _warm(path).write_text(str(os.getpid()))
    last = time.monotonic()
    live: set[int] = set()
    number = 0
    while True:
        if session is not None:
            number += 1
            idle = kept["idle"] = session.idle  # the latest build's word
            pid = os.fork()
            if pid == 0:
                listener.close()
                code = 70
                try:
                    code = _session(session, info, {**kept, "build": number})
                finally:
                    os._exit(code)
            session.close()
            live.add(pid)
            session = None
        for pid, _ in reaped():
            if pid in live:
                live.discard(pid)
                last = time.monotonic()
        if not live and time.monotonic() - last > idle:
            break
        if not _still_ours(path, bound):  # removed or replaced: we are no longer wanted
            break
        session = _accept(listener, timeout=1.0)
    listener.close()  # what waits in its queue ends unanswered: those builds start their own
    _leave(path, bound)
    # The first build's eager zygote may still serve it: wait for our children.
    with contextlib.suppress(ChildProcessError):
        while True:
            os.wait()
    return 0


def _identity(path: Path) -> tuple[int, int, int]:
    found = path.stat()
    return found.st_dev, found.st_ino, found.st_ctime_ns


def _still_ours(path: Path, identity: tuple[int, int, int]) -> bool:
    """Our socket is still there: not removed (``stop-workers``), nor replaced by another's."""
    try:
        return _identity(path) == identity
    except OSError:
        return False


def serves_later(sock: Path, pid: int) -> bool:
    """Whether the warm worker ``pid`` still listens at ``sock`` (``stop-workers`` or a kill
    did not end it), so that a later build finds it."""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return _is_warm(sock, pid)


def _leave(path: Path, identity: tuple[int, int, int]) -> int:
    if _still_ours(path, identity):
        _warm(path).unlink(missing_ok=True)
        path.unlink(missing_ok=True)
    return 0


def _session(session: Session, info: Ready, kept: Kept | None) -> int:
    """Serve one build on its pipes, as a per-build worker does after its warm-up (``kept``:
    None where the kept worker serves this one build only, itself)."""
    from .worker import copy_ahead, restore_user_environment, serve_runs

    # The build's environment and directory, as its own worker would have them: what a shell
    # changes between builds is not in the key, and a run may read it.
    os.environ.clear()
    os.environ.update(session.env)
    os.environ.pop("AUTOCAST_DEMO_CONFIG", None)  # the build's word to the worker (import_stack)
    ahead = copy_ahead()  # (the pool's word, as to its own worker)
    restore_user_environment()
    os.chdir(session.cwd)
    fds = session.fds
    log = fds.pop("log")
    os.dup2(log, 2)
    os.dup2(2, 1)
    os.close(log)
    events = os.fdopen(fds.pop("events"), "w")
    requests = fds.pop("requests")
    for fd in fds.values():  # a later build's eager pipes: its eager runs come here instead
        os.close(fd)
    ready: Ready = {**info}
    if kept is not None:
        ready["kept"] = {**kept, "session": os.getpid()}
    return serve_runs(requests, events, ready, copy_ahead=ahead)
