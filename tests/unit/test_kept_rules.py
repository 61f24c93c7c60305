"""The kept worker's rules on the build's side, with no worker, no socket and no process started:
where its runtime directory is and when it is refused (kept.py), what its key is made of,
which workers ``list-workers`` and ``stop-workers`` see, and the handles a build holds over its
worker (parent/handles.py): how each is ended, joined and left. The kept worker for real:
tests/build/test_kept_worker.py."""

from __future__ import annotations

import os
import resource
import signal
import socket
import subprocess
import time
from pathlib import Path

import pytest

from sphinx_autocast_demo.engine import kept
from sphinx_autocast_demo.engine.kept import KeptUnavailable, KeptWorker
from sphinx_autocast_demo.engine.parent import handles
from sphinx_autocast_demo.engine.parent.channels import Channel

#: Above the kernel's largest pid (PID_MAX_LIMIT, 2**22): no process has it.
NO_PROCESS = 2**22 + 1


@pytest.fixture
def base(tmp_path, monkeypatch) -> Path:
    """XDG_RUNTIME_DIR: a directory of this user's that nobody else may write in."""
    found = tmp_path / "run"
    found.mkdir()
    found.chmod(0o700)  # whatever this machine's umask
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(found))
    return found


def mine(base: Path) -> Path:
    """This user's runtime directory under ``base``."""
    return base / f"autocast-demo-{os.getuid()}"


# -- the runtime directory -------------------------------------------------------------------


def test_the_runtime_directory_is_made_private_and_named_for_the_user(base, tmp_path, monkeypatch):
    runtime = kept.runtime_dir()
    assert runtime.path == mine(base)
    assert mine(base).is_dir() and mine(base).stat().st_mode & 0o777 == 0o700
    # Without XDG_RUNTIME_DIR (or with it empty): in the temporary directory.
    temporary = tmp_path / "tmp"
    temporary.mkdir(mode=0o700)
    monkeypatch.setattr(kept.tempfile, "tempdir", str(temporary))
    for unset in (True, False):
        if unset:
            monkeypatch.delenv("XDG_RUNTIME_DIR")
        else:
            monkeypatch.setenv("XDG_RUNTIME_DIR", "")
        assert kept.runtime_dir().path == mine(temporary)


@pytest.mark.parametrize("found", ["open to others", "a link to a private directory", "a file"])
def test_a_runtime_directory_that_is_not_this_users_alone_is_refused_and_left_alone(base, tmp_path, found):
    path = mine(base)
    if found == "open to others":
        path.mkdir()
        path.chmod(0o755)
        says = f"{path} is not a directory that only this user can open"
    elif found == "a file":
        path.write_text("")
        says = f"{path} cannot be made or opened: "
    else:  # a directory put in its place: its sockets would be another's to replace
        private = tmp_path / "elsewhere"
        private.mkdir(mode=0o700)
        path.symlink_to(private)
        says = f"{path} cannot be made or opened: "
    before = path.lstat()
    with pytest.raises(KeptUnavailable) as info:
        kept.runtime_dir()
    assert str(info.value).startswith(says)
    assert (path.lstat().st_mode, path.lstat().st_ino) == (before.st_mode, before.st_ino)


def test_the_runtime_base_must_exist_and_be_sticky_where_others_may_write(base, monkeypatch):
    base.chmod(0o777)
    with pytest.raises(KeptUnavailable, match=r"can be written by other users and is not sticky: "
                                              r"no worker is kept in "):
        kept.runtime_dir()
    assert not mine(base).exists()
    base.chmod(0o1777)  # as /tmp: only we can rename or remove our entry
    assert kept.runtime_dir().path == mine(base)
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(base / "none"))
    with pytest.raises(KeptUnavailable, match=r"/none cannot be used: "):  # (the system's words)
        kept.runtime_dir()
    assert not (base / "none").exists()


def test_the_runtime_directory_is_used_through_what_was_opened_not_its_path(base):
    runtime = kept.runtime_dir()
    # Another directory put at its path after the checks: what the build writes does not go there.
    mine(base).rename(base / "moved")
    mine(base).mkdir(mode=0o700)
    os.close(runtime.open("k.lock", os.O_WRONLY | os.O_CREAT))
    runtime.at("k.projects").write_text("/docs\n")
    assert sorted(os.listdir(base / "moved")) == runtime.names() == ["k.lock", "k.projects"]
    assert os.listdir(mine(base)) == []
    runtime.unlink("k.lock")
    runtime.unlink("k.lock")  # one that is gone already is no error
    assert runtime.names() == ["k.projects"]


# -- the key ---------------------------------------------------------------------------------


def test_the_key_changes_with_what_a_run_inherits_from_the_worker():
    env = {"PATH": "/usr/bin"}
    before = kept.fingerprint(env)
    old = os.umask(0o077)  # a run's files would be made with the worker's umask
    if old == 0o077:
        os.umask(0o022)
    try:
        assert kept.fingerprint(env) != before
    finally:
        os.umask(old)
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)  # a run's core dumps
    other = 0 if soft != 0 else 4096 if hard == resource.RLIM_INFINITY or hard >= 4096 else soft
    resource.setrlimit(resource.RLIMIT_CORE, (other, hard))  # (a soft limit comes back up to hard)
    try:
        assert (kept.fingerprint(env) != before) is (other != soft)
    finally:
        resource.setrlimit(resource.RLIMIT_CORE, (soft, hard))
    assert kept.fingerprint(env) == before


def test_the_key_ignores_the_eager_zygotes_pipes_which_each_build_has_its_own_of():
    env = {"PATH": "/usr/bin"}
    assert kept.fingerprint({**env, "AUTOCAST_DEMO_EAGER_FDS": "5,7"}) == kept.fingerprint(env)
    assert kept.fingerprint({**env, "AUTOCAST_DEMO_BACKEND": "eager"}) != kept.fingerprint(env)


def test_the_key_ignores_only_the_shells_and_sphinxs_bookkeeping():
    base = {"PATH": "/usr/bin", "PWD": "/a", "OLDPWD": "/b", "_": "/usr/bin/make", "SHLVL": "1",
            "DOCUTILSCONFIG": "/docs/one/docutils.conf"}  # Sphinx sets it: the project's
    moved = {**base, "PWD": "/c", "OLDPWD": "/a", "_": "/usr/bin/sphinx-build", "SHLVL": "2",
             "DOCUTILSCONFIG": "/docs/two/docutils.conf"}
    assert kept.fingerprint(base) == kept.fingerprint(moved)
    assert kept.fingerprint(base) != kept.fingerprint({**base, "TORCH_LOGS": "dynamo"})
    assert kept.fingerprint(base) != kept.fingerprint({**base, "PATH": "/opt/bin"})
    assert kept.fingerprint({**base, "AUTOCAST_DEMO_COPY_AHEAD": "1"}) == kept.fingerprint(base)  # per build


@pytest.mark.parametrize(("ignored", "same"),
                         [(signal.SIGINT, True), (signal.SIGQUIT, True), (signal.SIGHUP, False)])
def test_the_key_ignores_the_signals_every_run_gets_the_default_of(ignored, same):
    """A build started in the background ignores SIGINT: its runs do not (the zygote resets it),
    so it shares the worker of a build in the foreground. SIGHUP ignored reaches the runs."""
    env = {"PATH": "/usr/bin"}
    # From the default, whatever this test was started with: under nohup (or a CI that starts
    # jobs that way) SIGHUP comes in ignored already, and ignoring it again would change nothing.
    old = signal.signal(ignored, signal.SIG_DFL)
    try:
        before = kept.fingerprint(env)
        signal.signal(ignored, signal.SIG_IGN)
        assert (kept.fingerprint(env) == before) is same
    finally:
        signal.signal(ignored, old)


# -- which workers there are -----------------------------------------------------------------


def test_a_worker_serves_later_builds_only_while_alive_and_named_by_its_warm_file(tmp_path):
    sock = tmp_path / "0123abcd.sock"
    assert kept.warm_file(sock) == tmp_path / "0123abcd.warm"
    me = os.getpid()
    assert not kept.serves_later(sock, me)  # still warming up (or stop-workers removed it)
    kept.warm_file(sock).write_text(str(me))
    assert kept.serves_later(sock, me)
    kept.warm_file(sock).write_text(str(NO_PROCESS))
    assert not kept.serves_later(sock, me)  # another worker's warm file: a new one listens there
    assert not kept.serves_later(sock, NO_PROCESS)  # it wrote it, and died since


def test_list_workers_finds_each_socket_with_its_pid_while_alive_and_its_projects(base):
    kept.runtime_dir()
    files = {"alive.sock": "", "alive.warm": str(os.getpid()), "alive.projects": "/a/docs\n/b/docs\n",
             "dead.sock": "", "dead.warm": str(NO_PROCESS), "dead.log": "Traceback",
             "garbled.sock": "", "garbled.warm": "not a pid",
             # A worker whose socket is gone (stop-workers): ending, not listed.
             "gone.projects": "/c/docs\n", "gone.log": "", "gone.lock": ""}
    for name, text in files.items():
        (mine(base) / name).write_text(text)
    assert kept.workers() == [KeptWorker("alive", os.getpid(), ("/a/docs", "/b/docs")),
                              KeptWorker("dead", None, ()), KeptWorker("garbled", None, ())]


def test_listing_or_stopping_where_no_worker_was_ever_kept_makes_nothing(base):
    assert kept.workers() == []
    assert kept.stop([]) == []
    assert os.listdir(base) == []


def test_stopping_a_worker_removes_its_socket_and_its_list_and_leaves_the_others(base):
    kept.runtime_dir()
    for name in ("one.sock", "one.warm", "one.projects", "one.log", "one.lock", "two.sock", "two.warm"):
        (mine(base) / name).write_text("")
    one = KeptWorker("one", None, ())
    assert kept.stop([one]) == [one]
    # Its log stays to read; its lock is what the next build of its key takes.
    assert sorted(os.listdir(mine(base))) == ["one.lock", "one.log", "two.sock", "two.warm"]


def test_a_workers_projects_are_the_conf_py_directories_of_its_builds_each_once(base, tmp_path):
    runtime = kept.runtime_dir()
    one, two = tmp_path / "one" / "docs", tmp_path / "two"
    for conf in (one, two, one):  # Sphinx sets DOCUTILSCONFIG to the project's docutils.conf
        kept._note_project(runtime, "k", {"DOCUTILSCONFIG": str(conf / "docutils.conf")})
    kept._note_project(runtime, "k", {"PATH": "/usr/bin"})  # not a sphinx-build
    assert (mine(base) / "k.projects").read_text() == f"{one}\n{two}\n"
    kept._note_project(runtime, "other", {})
    assert not (mine(base) / "other.projects").exists()


def test_a_worker_serves_a_project_at_inside_or_around_a_directory(tmp_path):
    docs, other = tmp_path / "repo" / "docs", tmp_path / "other"
    worker = KeptWorker("k", None, (str(docs), str(other)))
    # Its conf.py directory, the repository's root around it, a directory of the docs.
    for where in (docs, tmp_path / "repo", docs / "sub"):
        assert worker.serves(where) and worker.elsewhere(where) == (str(other),)
    alone = KeptWorker("k", None, (str(docs),))
    for where in (tmp_path / "repo" / "docs2", tmp_path / "repo" / "src"):  # beside it: not
        assert not alone.serves(where) and alone.elsewhere(where) == (str(docs),)
    assert not KeptWorker("k", None, ()).serves(docs)  # it served no sphinx-build


def test_a_project_reached_through_a_symbolic_link_is_the_same_project(tmp_path):
    (tmp_path / "repo" / "docs").mkdir(parents=True)
    (tmp_path / "link").symlink_to(tmp_path / "repo")
    worker = KeptWorker("k", None, (str(tmp_path / "repo" / "docs"),))
    assert worker.serves(tmp_path / "link") and worker.serves(tmp_path / "link" / "docs")
    # Sphinx 7.2 names the project as the build reached it (abspath, links kept); a shell's
    # working directory, which stop-workers looks from, has them resolved.
    through = KeptWorker("k", None, (str(tmp_path / "link" / "docs"),))
    assert through.serves(tmp_path / "repo") and through.serves(tmp_path / "repo" / "docs")
    assert not through.serves(tmp_path / "elsewhere")


def test_a_system_that_cannot_tell_who_listens_on_a_socket_keeps_no_worker(base, monkeypatch):
    monkeypatch.delattr(socket, "SO_PEERCRED")
    with pytest.raises(KeptUnavailable, match=r"^this system cannot tell whose process listens on a socket$"):
        kept.connect({"PATH": "/usr/bin"}, 60.0)
    assert os.listdir(base) == []


# -- the build's handle on its worker (handles.py) ---------------------------------------------


class Proc:
    """A worker process made up: it ends on the steps named in ``ends_on`` ("close": its stdin
    closed, "terminate": SIGTERM; SIGKILL always ends it), and records what it was done."""

    def __init__(self, ends_on: tuple[str, ...] = (), stdin_breaks: bool = False,
                 returncode: int | None = None) -> None:
        self.done: list[object] = []
        self.ends_on, self.returncode = ends_on, returncode
        proc = self

        class Stdin:
            def close(self) -> None:
                proc.done.append("close stdin")
                if stdin_breaks:
                    raise BrokenPipeError(32, "Broken pipe")
                proc._ended_by("close", 0)

        class Stdout:
            def close(self) -> None:
                proc.done.append("close stdout")

        self.stdin, self.stdout = Stdin(), Stdout()

    def _ended_by(self, step: str, code: int) -> None:
        if step in self.ends_on and self.returncode is None:
            self.returncode = code

    def poll(self) -> int | None:
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        self.done.append(("wait", timeout))
        if self.returncode is None:
            raise subprocess.TimeoutExpired("worker", timeout or 0)
        return self.returncode

    def terminate(self) -> None:
        self.done.append("SIGTERM")
        self._ended_by("terminate", -15)

    def kill(self) -> None:
        self.done.append("SIGKILL")
        self.returncode = -9


GRACE = handles.CLOSE_GRACE


@pytest.mark.parametrize(("warmed", "proc", "done"), [
    # Still importing or warming up: no run of its own to end cleanly, killed at once.
    (False, Proc(), ["SIGKILL", "close stdout"]),
    # Ended already (it crashed): no signal, to a pid that may be another process's by now.
    (False, Proc(returncode=1), ["close stdout"]),
    (True, Proc(ends_on=("close",)), ["close stdin", ("wait", GRACE), "close stdout"]),
    # Stuck: SIGTERM first, whose handler ends its runs' process groups; SIGKILL if that fails.
    (True, Proc(ends_on=("terminate",)),
     ["close stdin", ("wait", GRACE), "SIGTERM", ("wait", GRACE / 2), "close stdout"]),
    (True, Proc(), ["close stdin", ("wait", GRACE), "SIGTERM", ("wait", GRACE / 2), "SIGKILL",
                    ("wait", None), "close stdout"]),
    (True, Proc(ends_on=("terminate",), stdin_breaks=True),
     ["close stdin", "SIGTERM", ("wait", GRACE / 2), "close stdout"]),
], ids=["warming up", "ended", "warm", "stuck", "ignores SIGTERM", "stdin broken"])
def test_a_builds_own_worker_is_ended_by_its_stdin_then_sigterm_then_sigkill(warmed, proc, done):
    handles.end_process(proc, warmed=warmed)  # type: ignore[arg-type]
    assert proc.done == done


def test_the_own_worker_says_which_signal_made_it_end():
    def stopped(returncode: int | None) -> str | None:
        own = object.__new__(handles.OwnWorker)  # (its process made up, none started)
        own.proc = Proc(returncode=returncode)  # type: ignore[assignment]
        return own.stopped_by()

    # Its handler for SIGINT or SIGTERM exits with 128 + the signal.
    assert (stopped(128 + signal.SIGINT), stopped(128 + signal.SIGTERM)) == ("SIGINT", "SIGTERM")
    assert stopped(1) is None and stopped(-signal.SIGKILL) is None and stopped(None) is None


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


class Sock:
    def close(self) -> None:
        pass


def joined(tmp_path: Path, warm: bool, pid: int = 4242) -> kept.Joined:
    return kept.Joined(Sock(), pid, warm, tmp_path / "k.sock", None)  # type: ignore[arg-type]


@pytest.mark.parametrize("fails", ["connect", "hand_over"])
def test_a_kept_worker_that_cannot_be_joined_leaves_no_descriptor_open(tmp_path, monkeypatch, fails):
    def connect(env: dict[str, str], idle: float) -> kept.Joined:
        if fails == "connect":
            raise KeptUnavailable("the kept worker did not start")
        return joined(tmp_path, warm=True)

    def hand_over(*args: object) -> None:
        raise BrokenPipeError(32, "Broken pipe")  # it ended as we joined it

    monkeypatch.setattr(kept, "connect", connect)
    monkeypatch.setattr(kept, "hand_over", hand_over)
    before = open_fds()
    with pytest.raises((KeptUnavailable, BrokenPipeError)):
        handles.KeptSession({"PATH": "/usr/bin"}, 60.0, tmp_path, tmp_path / "worker.log")
    assert open_fds() == before  # (the build starts its own worker next: every build would leak)


def test_a_session_gets_the_builds_pipes_environment_directory_and_idle_time(tmp_path, monkeypatch):
    theirs: dict[str, int] = {}
    told: list[tuple[dict[str, str], str, float]] = []

    def hand_over(sock: object, fds: dict[str, int], env: dict[str, str], cwd: str, idle: float) -> None:
        theirs.update({name: os.dup(fd) for name, fd in fds.items()})  # the session's copies
        told.append((env, cwd, idle))

    monkeypatch.setattr(kept, "connect", lambda env, idle: joined(tmp_path, warm=False))
    monkeypatch.setattr(kept, "hand_over", hand_over)
    (tmp_path / "worker.log").write_text("the last build's log")
    eager_in, eager_out = os.pipe()
    session = handles.KeptSession({"PATH": "/usr/bin"}, 60.0, tmp_path, tmp_path / "worker.log",
                                  eager=(eager_in, eager_out))
    try:
        assert sorted(theirs) == ["eager_in", "eager_out", "events", "log", "requests"]
        assert told == [({"PATH": "/usr/bin"}, str(tmp_path), 60.0)]
        # Runs go from the pool's channel to the session's requests; events come back.
        session.channel.send({"id": "r1"})  # type: ignore[typeddict-item]
        assert os.read(theirs["requests"], 100) == b'{"id": "r1"}\n'
        os.write(theirs["events"], b"ready\n")
        assert os.read(session.channel.events, 100) == b"ready\n"
        os.write(theirs["log"], b"new")
        assert (tmp_path / "worker.log").read_text() == "new"  # this build's log only
        assert session.answer_by is None  # still starting: waited for as the build's own worker
    finally:
        session.abandon()
        for fd in (*theirs.values(), eager_in, eager_out):
            os.close(fd)


def test_a_warm_kept_worker_must_answer_soon_and_serves_later_builds_while_its_warm_file_stays(
        tmp_path, monkeypatch):
    monkeypatch.setattr(kept, "connect", lambda env, idle: joined(tmp_path, warm=True, pid=os.getpid()))
    monkeypatch.setattr(kept, "hand_over", lambda *args: None)
    start = time.monotonic()
    session = handles.KeptSession({}, 60.0, tmp_path, tmp_path / "worker.log")
    try:
        # One that is stopped or stuck must not hold the build for the start timeout.
        assert session.answer_by is not None
        assert start + kept.ANSWER_TIMEOUT <= session.answer_by <= time.monotonic() + kept.ANSWER_TIMEOUT
        kept.warm_file(tmp_path / "k.sock").write_text(str(os.getpid()))
        assert not session.ended_for_later_builds()
        kept.warm_file(tmp_path / "k.sock").unlink()  # stop-workers
        assert session.ended_for_later_builds()
    finally:
        session.abandon()


class Pipes:
    """A session's side of a channel: it reads ``requests`` and writes ``events``."""

    def __init__(self) -> None:
        self.requests, ours_in = os.pipe()
        ours_out, self.events = os.pipe()
        self.channel = Channel(ours_in, ours_out)

    def end(self) -> None:
        for fd in (self.requests, self.events):
            os.close(fd)


def closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError:
        return True
    return False


def test_closing_a_session_that_ends_signals_nothing(monkeypatch):
    pipes = Pipes()
    pipes.channel.ready = {"kept": {"session": NO_PROCESS}}  # type: ignore[typeddict-item]
    signalled: list[tuple[int, int]] = []
    monkeypatch.setattr(handles.os, "kill", lambda pid, sig: signalled.append((pid, sig)))
    session = object.__new__(handles.KeptSession)
    session.channel = pipes.channel
    os.close(pipes.events)  # it ended as soon as its pipe closed
    os.set_blocking(pipes.requests, False)  # (a pipe left open fails the test, not hangs it)
    try:
        session.close(None)
        assert os.read(pipes.requests, 10) == b""  # it was told to end: its pipe closed
        assert signalled == [] and pipes.channel.ended and closed(pipes.channel.events)
    finally:
        os.close(pipes.requests)


def test_closing_a_stuck_session_sends_sigterm_then_sigkill(monkeypatch):
    pipes = Pipes()
    signalled: list[tuple[int, int]] = []
    waited: list[float] = []
    monkeypatch.setattr(handles.os, "kill", lambda pid, sig: signalled.append((pid, sig)))
    monkeypatch.setattr(handles, "wait_ended", lambda channels, seconds: waited.append(seconds))
    session = object.__new__(handles.KeptSession)
    session.channel = pipes.channel
    try:
        pipes.channel.ready = {"kept": {"session": NO_PROCESS}}  # type: ignore[typeddict-item]
        session.close(None)
        assert signalled == [(NO_PROCESS, signal.SIGTERM), (NO_PROCESS, signal.SIGKILL)]
        assert waited == [10, 5, 0]
    finally:
        pipes.end()
    # One that ends on SIGTERM gets no SIGKILL: its pid is the kept worker's to reap and reuse.
    pipes, signalled[:] = Pipes(), []
    session.channel = pipes.channel

    def ends_on_sigterm(channels, seconds: float) -> None:
        pipes.channel.ended = bool(signalled)

    monkeypatch.setattr(handles, "wait_ended", ends_on_sigterm)
    try:
        pipes.channel.ready = {"kept": {"session": NO_PROCESS}}  # type: ignore[typeddict-item]
        session.close(None)
        assert signalled == [(NO_PROCESS, signal.SIGTERM)]
    finally:
        pipes.end()
    pipes, signalled[:] = Pipes(), []
    session.channel = pipes.channel  # never ready: it had no run, and ends on its own
    try:
        session.close(None)
        assert signalled == []
    finally:
        pipes.end()


def test_waiting_for_channels_reads_until_each_has_ended():
    done, running = Pipes(), Pipes()
    try:
        os.write(done.events, b'{"event": "exit"}\n' * 100)  # what it said last: dropped
        os.close(done.events)
        handles.wait_ended([done.channel, running.channel], 0.05)
        assert done.channel.ended and not running.channel.ended
    finally:
        for pipes in (done, running):
            os.close(pipes.channel.events)
            pipes.channel.close()
        os.close(done.requests)
        running.end()
