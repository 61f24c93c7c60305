"""A worker kept between builds (``autocast_demo_keep_worker``): for a writer's edit loop.

A per-build worker spends its first seconds importing torch and warming up, which is most of
the time of a build that re-runs one edited demo. A kept worker is a warm worker that stays,
after the build that started it, for later builds of the same Python, torch, extension and
environment (its key, :func:`fingerprint`). It runs nothing itself: every build that
connects gets a session, a child forked from it that serves that build exactly as a per-build
worker does (:class:`.zygote.Zygote`, a child forked per run), so every run still starts
from the same untouched memory. The build hands its pipes over a Unix socket in a directory
only its user can open; the session ends when the build closes them (or dies), and the worker
when no build came for its idle time. This module is the build's side; the worker's is
:mod:`.kept_server`.

Started by :func:`connect` as the per-build worker is (``python -m
sphinx_autocast_demo.engine.child.worker``, so that a run sees the same ``sys.argv``), with
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
import weakref
from dataclasses import dataclass
from pathlib import Path

from .isolation import NAMES, WorkerSettings, to_env
from .protocol import RESET_SIGNALS, worker_command

#: The per-build words of the pool's environment: a session's, never a kept worker's key.
PER_BUILD = (NAMES["eager_fds"], NAMES["idle_core"])

#: What a shell changes between two builds of the same environment (where it ran from, the
#: command's path), and what Sphinx sets for the build (its project's docutils.conf): not in
#: the key, so that one worker serves every project of a writer. The runs see the build's own
#: values all the same: a session takes the build's whole environment (:func:`.kept_server._session`).
BOOKKEEPING = ("PWD", "OLDPWD", "_", "SHLVL", "DOCUTILSCONFIG")

#: How long a build waits for a kept worker it started to listen (it does before its imports).
LISTEN_TIMEOUT = 30.0

#: How long a build waits for the session of a kept worker that was warm already (it forks one
#: at once: ~20 ms) before it starts its own worker: one that is stopped or stuck would
#: otherwise hold every later build for the start timeout. A build that finds one still
#: starting (another build started it) waits for its warm-up as for its own worker's.
ANSWER_TIMEOUT = 10.0

#: The environment variable that makes a worker a kept one: its socket and idle time (JSON).
KEPT = NAMES["kept"]


class KeptUnavailable(Exception):
    """No kept worker here (the runtime directory is not private, the worker failed to start):
    the build starts its own, and says why."""


def _runtime_path() -> Path:
    base = os.environ.get("XDG_RUNTIME_DIR") or tempfile.gettempdir()
    return Path(base, f"autocast-demo-{os.getuid()}")


@dataclass
class Runtime:
    """This user's runtime directory, opened once (:func:`runtime_dir`): every later use goes
    through its descriptor (``dir_fd=``, or ``/proc/self/fd/N/...`` where only a path will
    do: a socket's address, a process's directory), never through its path again, so a
    directory put in its place after the checks is never the one used."""

    path: Path  # for messages only
    fd: int

    def __post_init__(self) -> None:
        weakref.finalize(self, os.close, self.fd)  # when the last Joined using it is gone

    def at(self, name: str = "") -> Path:
        """A path to ``name`` in the directory opened, that no rename of its path can redirect."""
        return Path(f"/proc/self/fd/{self.fd}", name)

    def open(self, name: str, flags: int) -> int:
        return os.open(name, flags | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600, dir_fd=self.fd)

    def unlink(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=self.fd)

    def names(self) -> list[str]:
        return sorted(os.listdir(self.fd))


def _safe_parent(parent: Path) -> str | None:
    """Why ``parent`` (``XDG_RUNTIME_DIR``, else the temporary directory) could let another
    user replace our directory in it, or None: it must be ours or root's, and a directory
    others may write in must be sticky (as /tmp is), so that only we can rename our entry."""
    try:
        found = os.stat(parent)
    except OSError as exc:
        return f"{parent} cannot be used: {exc.strerror}"
    if found.st_uid not in (0, os.getuid()):
        return f"{parent} belongs to another user (uid {found.st_uid})"
    if found.st_mode & 0o022 and not found.st_mode & stat.S_ISVTX:
        return f"{parent} can be written by other users and is not sticky"
    return None


def runtime_dir() -> Runtime:
    """This user's directory for kept workers' sockets and logs, which nobody else may open
    (made if missing), opened once; :class:`KeptUnavailable` if it or the directory it is in
    is not safe (the build then runs its own worker, and says why)."""
    path = _runtime_path()
    unsafe = _safe_parent(path.parent)
    if unsafe is not None:
        raise KeptUnavailable(f"{unsafe}: no worker is kept in {path}")
    try:
        with contextlib.suppress(FileExistsError):
            path.mkdir(mode=0o700)
        fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:  # XDG_RUNTIME_DIR missing, a file, a symbolic link
        raise KeptUnavailable(f"{path} cannot be made or opened: {exc.strerror}") from None
    found = os.fstat(fd)  # what was opened, not what the path names now
    if not stat.S_ISDIR(found.st_mode) or found.st_uid != os.getuid() or found.st_mode & 0o077:
        os.close(fd)
        raise KeptUnavailable(f"{path} is not a directory that only this user can open")
    return Runtime(path, fd)


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
    files = sorted(package.rglob("*.py"))  # every stage: a kept worker holds them all
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
    """A connection to a kept worker: its pid, and whether it was warm (see :func:`warm_file`)."""

    sock: socket.socket
    pid: int
    warm: bool
    path: Path  # its socket, through the runtime directory's descriptor (Runtime.at)
    runtime: Runtime  # (holds that descriptor open)


def warm_file(sock: Path) -> Path:
    """The file that says the worker at ``sock`` has warmed up."""
    return sock.with_suffix(".warm")


def _is_warm(sock: Path, pid: int) -> bool:
    """Whether the worker ``pid``, listening at ``sock``, said it is warm (not another worker
    that once listened there: ``stop-workers`` during its warm-up, and a new one started)."""
    try:
        return warm_file(sock).read_text() == str(pid)
    except OSError:
        return False


def connect(env: dict[str, str], idle: float) -> Joined:
    """A connection to the kept worker for ``env``, started (detached) if none listens."""
    import fcntl

    if not hasattr(socket, "SO_PEERCRED") or not hasattr(os, "sched_getaffinity"):  # not Linux
        raise KeptUnavailable("this system cannot tell whose process listens on a socket")
    runtime = runtime_dir()
    key = fingerprint(env)
    name = f"{key}.sock"
    path = runtime.at(name)
    with os.fdopen(runtime.open(f"{key}.lock", os.O_WRONLY | os.O_CREAT), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two builds at once start one worker, not two
        found = _connect(path)
        if found is not None:
            _note_project(runtime, key, env)
            return Joined(*found, warm=_is_warm(path, found[1]), path=path, runtime=runtime)
        runtime.unlink(name)  # a worker that ended without removing it
        runtime.unlink(warm_file(Path(name)).name)
        runtime.unlink(f"{key}{PROJECTS}")  # the projects of the one before: a new worker's list
        _note_project(runtime, key, env)
        log = f"{key}.log"
        with os.fdopen(runtime.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC), "wb") as err:
            server = subprocess.Popen(
                worker_command(),
                # The socket by its name in the worker's directory, which is the one opened.
                env={**{k: v for k, v in env.items() if k not in PER_BUILD},
                     **to_env(WorkerSettings(kept=(name, float(idle))))},
                cwd=runtime.at(),  # (resolved in the child, which has the descriptor until exec)
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err,
                start_new_session=True,  # the terminal's Ctrl-C is for the build, not for it
            )
        deadline = time.monotonic() + LISTEN_TIMEOUT
        while (found := _connect(path)) is None:
            if server.poll() is not None or time.monotonic() > deadline:
                tail = runtime.at(log).read_text(errors="replace")[-2000:].strip()
                raise KeptUnavailable("the kept worker did not start" + (f":\n{tail}" if tail else ""))
            time.sleep(0.005)
        return Joined(*found, warm=False, path=path, runtime=runtime)


#: The file beside a worker's socket that names the projects it served: one build's
#: ``conf.py`` directory a line (from ``DOCUTILSCONFIG``, which Sphinx sets for its build).
PROJECTS = ".projects"


@dataclass(frozen=True)
class KeptWorker:
    """A kept worker, as ``list-workers`` shows it: its key, its pid once it is warm (None
    while it starts), and the ``conf.py`` directories of the builds it served."""

    key: str
    pid: int | None
    projects: tuple[str, ...]

    def serves(self, where: Path) -> bool:
        """Did it serve a build of a project at, inside or around ``where``?"""
        return len(self.elsewhere(where)) < len(self.projects)

    def elsewhere(self, where: Path) -> tuple[str, ...]:
        """The projects it served that are not at, inside or around ``where``."""
        here = where.resolve()

        def near(project: str) -> bool:
            # Resolved too: Sphinx 7.2 names a project through the links the build went through.
            at = Path(project).resolve()
            return here == at or here in at.parents or at in here.parents

        return tuple(p for p in self.projects if not near(p))


def _note_project(runtime: Runtime, key: str, env: dict[str, str]) -> None:
    """Add the build's project to the list of the worker for ``key`` (under its lock)."""
    conf = env.get("DOCUTILSCONFIG")
    if not conf:  # a build not started by sphinx-build: only ``stop-workers --all`` ends it
        return
    project = os.path.dirname(os.path.abspath(conf))
    with contextlib.suppress(OSError):
        fd = runtime.open(f"{key}{PROJECTS}", os.O_RDWR | os.O_CREAT | os.O_APPEND)
        with os.fdopen(fd, "r+") as listed:
            if project not in listed.read().splitlines():
                listed.write(project + "\n")


def workers() -> list[KeptWorker]:
    """Every worker kept for this user (its socket still there), by key."""
    if not os.path.lexists(_runtime_path()):  # none was ever kept here: nothing to make
        return []
    runtime = runtime_dir()
    found = []
    for name in runtime.names():
        if not name.endswith(".sock"):
            continue
        key = Path(name).stem
        pid: int | None = None
        with contextlib.suppress(OSError, ValueError):
            written = int(warm_file(runtime.at(name)).read_text())
            os.kill(written, 0)  # (one that ended without removing its files: not shown as alive)
            pid = written
        projects: tuple[str, ...] = ()
        with contextlib.suppress(OSError):
            projects = tuple(runtime.at(f"{key}{PROJECTS}").read_text().splitlines())
        found.append(KeptWorker(key, pid, projects))
    return found


def stop(chosen: list[KeptWorker]) -> list[KeptWorker]:
    """Tell the workers ``chosen`` (of :func:`workers`) to end, and wait for none of them."""
    if not chosen:
        return []
    runtime = runtime_dir()
    for worker in chosen:
        runtime.unlink(f"{worker.key}.sock")
        runtime.unlink(f"{worker.key}.warm")
        runtime.unlink(f"{worker.key}{PROJECTS}")
    return chosen


def _connect(path: Path) -> tuple[socket.socket, int] | None:
    """A connection to the worker listening at ``path``, if it is this user's, and its pid; None
    if none listens there."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.settimeout(10.0)
    try:
        sock.connect(str(path))
        pid, uid = peer(sock)
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


def peer(sock: socket.socket) -> tuple[int, int]:
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


def serves_later(sock: Path, pid: int) -> bool:
    """Whether the warm worker ``pid`` still listens at ``sock`` (``stop-workers`` or a kill
    did not end it), so that a later build finds it."""
    try:
        os.kill(pid, 0)
    except OSError:
        return False
    return _is_warm(sock, pid)
