"""The kept worker's side (see :mod:`.kept`, the build's side): it imports and warms up once,
then forks a session for every build that hands it its pipes, until no build came for its idle
time or ``stop-workers`` removed its socket. It refuses a build, and ends, when a module it
imported has changed since (:func:`_changed`): its memory holds the old one.

Started as ``python -m sphinx_autocast_demo.engine.child.worker`` with the word ``kept`` set
(:class:`.isolation.WorkerSettings`; :func:`.worker.main` calls :func:`serve`). Its life after the
imports is a per-build worker's (:mod:`.serving`).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
import time
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from ...plan.stamps import written_since
from ..isolation import WorkerSettings, restore_user_environment, take
from ..kept import LISTEN_TIMEOUT, peer, warm_file
from .imports import module_file, read_files, working_dirs
from .processes import fork, reaped
from .serving import copy_ahead, imported, serve_runs, warmed

if TYPE_CHECKING:
    from ..protocol import Kept, Ready, Refused


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
            if peer(conn)[1] != os.getuid():  # the directory is private: a second lock
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


def serve(path: Path, idle: float, words: WorkerSettings) -> int:
    """Import, warm up, then fork a session for every build that connects, until none came
    for ``idle`` seconds (and no session is left) or the socket was removed. ``words``: those
    of the build that started us (see :mod:`.isolation`)."""

    os.dup2(2, 1)  # stray prints (torch's warnings) into the log
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(str(path))
    listener.listen(16)
    bound = _identity(path)
    begun = time.time_ns()
    info = imported(words)
    session = _accept(listener, timeout=LISTEN_TIMEOUT)  # the build that started us
    if session is None:
        return _leave(path, bound)
    # Its eager runs run while we warm up, as a per-build worker's do; its eager zygote does
    # not die with us (the build may go on with a worker of its own).
    eager = (session.fds.pop("eager_in"), session.fds.pop("eager_out")) \
        if "eager_in" in session.fds else None
    info, _ = warmed(info, replace(words, eager_fds=eager),
                     private=[listener.fileno(), *session.fds.values()], with_parent=False)
    if "error" in info or not info["fork"]:
        # Nothing to keep (or unsafe to fork): serve the one build, here, as its own worker
        # would, and no other (their pipes end unanswered: they start their own).
        _leave(path, bound)
        listener.close()
        return _session(session, info, None)
    kept: Kept = {"pid": os.getpid(), "build": 0, "idle": idle}
    stamps = _module_files(begun)  # what it imported, as it was: a later build must find it so
    if _still_ours(path, bound):  # (else stop-workers came: a later worker may listen there)
        warm_file(path).write_text(str(os.getpid()))
    last = time.monotonic()
    live: set[int] = set()
    number = 0
    while True:
        if session is not None:
            stale = _changed(stamps) if number else None  # (the first build's are what it read)
            if stale is not None:
                _refuse(session, f"{stale} changed after the worker imported it; the next build "
                        "starts a new one")
                break
            number += 1
            idle = kept["idle"] = session.idle  # the latest build's word
            pid = fork(partial(_forked_session, listener, session, info, {**kept, "build": number}))
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


def _module_files(begun: int) -> dict[str, tuple[int, int, int]]:
    """The file of every module this process imported (torch's own, its extensions, the
    config's module wherever it lives) and every file it read since its imports began (data
    the config module read), with its times and size (~2,500 files: ~8 ms). The change time
    too: an edit with the old file time put back (``touch -r``, ``cp -p``) still sets it. A
    file written after ``begun`` (the imports' start) may have changed after it was read:
    stamped as changed, it makes the next build refused."""
    found = {}
    paths = [module_file(module) for module in list(sys.modules.values())]  # (lazy stay unloaded)
    # Not inductor's and triton's generated kernels: another build that compiles the same graph
    # writes the same file again, and what the worker loaded is that file's code all the same.
    working = working_dirs()
    for path in [*paths, *read_files()]:
        if isinstance(path, str) and not path.startswith(working):
            with contextlib.suppress(OSError):
                st = os.stat(path)
                found[path] = ((-1, -1, -1) if written_since(st, begun)
                               else (st.st_mtime_ns, st.st_ctime_ns, st.st_size))
    return found


def _changed(stamps: dict[str, tuple[int, int, int]]) -> str | None:
    """A file of :func:`_module_files` that is not as it was (~5 ms): the worker's memory holds
    the old module, which no run may get. The key stamps only what a build can see cheaply
    (torch's entry files, the site-packages directories); this catches the rest (an editable
    torch, a config module beside the docs) before a build is served."""
    for path, stamp in stamps.items():
        try:
            st = os.stat(path)
        except OSError:
            return path
        if (st.st_mtime_ns, st.st_ctime_ns, st.st_size) != stamp:
            return path
    return None


def _refuse(session: Session, why: str) -> None:
    """Serve no run of this build: say why in its first event, and close its pipes (the build
    starts its own worker and warns with ``why``)."""
    refused: Refused = {"event": "refused", "why": why}
    with contextlib.suppress(OSError):
        os.write(session.fds["events"], (json.dumps(refused) + "\n").encode())
    session.close()


def _leave(path: Path, identity: tuple[int, int, int]) -> int:
    if _still_ours(path, identity):
        warm_file(path).unlink(missing_ok=True)
        path.unlink(missing_ok=True)
    return 0


def _forked_session(listener: socket.socket, session: Session, info: Ready, kept: Kept) -> int:
    """A session's process: the socket builds connect to stays the kept worker's."""
    listener.close()
    return _session(session, info, kept)


def _session(session: Session, info: Ready, kept: Kept | None) -> int:
    """Serve one build on its pipes, as a per-build worker does after its warm-up (``kept``:
    None where the kept worker serves this one build only, itself)."""
    # The build's environment and directory, as its own worker would have them: what a shell
    # changes between builds is not in the key, and a run may read it.
    os.environ.clear()
    os.environ.update(session.env)
    words = take(os.environ)  # the build's to its worker, as to its own worker
    ahead = copy_ahead(words.idle_core)
    restore_user_environment(words.user_env)
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
