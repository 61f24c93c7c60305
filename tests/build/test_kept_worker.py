"""A worker kept between builds (``autocast_demo_keep_worker``), in real builds with real
torch: a later build of the same environment is served by it (its runs see that build's own
environment) and gets the results a build's own worker gets; nothing but the kept worker
outlives a build, and it ends after its idle time; where no worker can be kept the build says
why and starts its own."""

from __future__ import annotations

import contextlib
import importlib.metadata
import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest
from conftest import copy_root, processes_tagged, read_stats, sphinx_build, verdicts

KEEP = ("-D", "autocast_demo_keep_worker=120")


def kept_pid(build) -> int:
    found = re.search(r"the worker \(pid (\d+)\) was", build.stdout)
    assert found, build.stdout
    return int(found[1])


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


def kept_workers(tag: str) -> list[int]:
    """The kept workers among the processes tagged ``tag``. What they fork (sessions, the eager
    zygote, runs) shares their start's environment, ``AUTOCAST_DEMO_KEPT`` included, so a
    kept worker is such a process whose parent is none."""
    marked = set()
    for pid in processes_tagged(tag):
        try:
            if b"AUTOCAST_DEMO_KEPT=" in Path(f"/proc/{pid}/environ").read_bytes():
                marked.add(pid)
        except OSError:  # it ended meanwhile
            continue
    found = []
    for pid in marked:
        try:
            if _parent(pid) not in marked:
                found.append(pid)
        except OSError:
            continue
    return found


def children(pid: int) -> list[int]:
    try:
        return [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except OSError:
        return []


def stop_workers(runtime: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The user's way to end kept workers now; ``runtime``: the test's own XDG_RUNTIME_DIR,
    so that only its workers hear it. Neither ``args`` nor ``cwd``: all of them (``--all``)."""
    return workers_command(runtime, "stop-workers", *(args if args or cwd else ("--all",)), cwd=cwd)


def workers_command(runtime: Path, *args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sphinx_autocast_demo", *args],
                          capture_output=True, text=True, timeout=60, cwd=cwd,
                          env={**os.environ, "XDG_RUNTIME_DIR": str(runtime)})


def clean_up(tag: str, runtime: Path, builds: list[subprocess.Popen[str] | None],
             stopped: int | None = None) -> None:
    """After a test, pass or fail: a worker it stopped resumed, its builds and kept workers
    ended, and anything of the tag's left killed."""
    if stopped is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(stopped, signal.SIGCONT)
    for build in builds:
        if build is not None and build.poll() is None:
            build.kill()
    stop_workers(runtime)
    wait_for(lambda: not processes_tagged(tag), 10)
    for pid in processes_tagged(tag):
        os.kill(pid, signal.SIGKILL)


def wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.1)
    return condition()


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """A: starts a kept worker; B: the same environment but for the shell's bookkeeping, served
    by it; C: asks for one where the runtime directory is not private, and runs its own."""
    src = copy_root("kept-worker", tmp_path_factory)
    tag = uuid.uuid4().hex
    runtime = tmp_path_factory.mktemp("runtime")
    env = {"AUTOCAST_DEMO_TEST_TAG": tag, "XDG_RUNTIME_DIR": str(runtime)}
    shared = tmp_path_factory.mktemp("open")
    (shared / f"autocast-demo-{os.getuid()}").mkdir(mode=0o755)
    (shared / f"autocast-demo-{os.getuid()}").chmod(0o755)
    try:
        def own(name: str) -> tuple[str, str]:  # each build runs its demos: a cache of its own
            return "-D", f"autocast_demo_cache_dir={src / '_build' / f'{name}-cache'}"

        a = sphinx_build(src, src / "_build" / "a", "-v", *KEEP, *own("a"), env={**env, "OLDPWD": "/first"})
        b = sphinx_build(src, src / "_build" / "b", "-v", *KEEP, *own("b"), env={**env, "OLDPWD": "/second"})
        left = processes_tagged(tag)
        c = sphinx_build(src, src / "_build" / "c", "-v", *KEEP, *own("c"),
                         env={**env, "OLDPWD": "/third", "XDG_RUNTIME_DIR": str(shared)})
        yield a, b, c, left, (tag, runtime)
    finally:
        stop_workers(runtime)
        wait_for(lambda: not kept_workers(tag), 10)
        for pid in kept_workers(tag):
            os.kill(pid, signal.SIGKILL)


def test_a_later_build_is_served_by_the_kept_worker(builds):
    a, b, c, *_ = builds
    assert (a.returncode, b.returncode, c.returncode) == (0, 0, 0), a.stderr + b.stderr + c.stderr
    assert (a.stats["kept_worker"], b.stats["kept_worker"], c.stats["kept_worker"]) == (1, 2, 0)
    assert kept_pid(a) == kept_pid(b)
    assert "8 runs forked from the worker (kept for later builds)" in a.stdout
    assert "8 runs forked from the worker (kept from an earlier build; this is its build 2)" in b.stdout
    assert (a.runs(), b.runs(), c.runs()) == ((8, 0), (8, 0), (8, 0))  # each its own cache


def test_its_runs_see_their_own_builds_environment(builds):
    for build, oldpwd in zip(builds[:3], ("/first", "/second", "/third"), strict=True):
        assert f"OLDPWD {oldpwd}" in build.html("index").get_text(" ", strip=True)


def test_its_runs_see_the_process_a_builds_own_worker_gives(builds):
    """The same ``sys.argv`` and open descriptors: none of the kept worker's, or a later
    build's, reaches a run."""
    def seen(build, what: str) -> str:
        text = build.html("index").find(id="seen").get_text(" ", strip=True)
        return re.search(rf"{what} (\[[^\]]*\])", text)[1]

    a, b, c = builds[:3]
    assert seen(c, "ARGV") == "[ 'worker.py' ]" or seen(c, "ARGV") == "['worker.py']"
    assert seen(a, "ARGV") == seen(b, "ARGV") == seen(c, "ARGV")
    assert seen(a, "FDS") == seen(b, "FDS") == seen(c, "FDS")


def stored(build) -> dict[str, tuple]:
    """Every result the build stored, by key: its verdict and each run's tensors (sha256)."""
    found = {}
    for path in (build.out.parent / f"{build.out.name}-cache").glob("*/*.json"):  # (own() above)
        entry = json.loads(path.read_text(encoding="utf-8"))
        found[entry["key"]] = (entry["verdict"], entry["compiled"]["tensors"], entry["eager"]["tensors"])
    return found


def test_the_results_are_those_of_a_builds_own_worker(builds):
    a, b, c, *_ = builds
    # The page's record: the backward keeps the forward's bf16 region unless the value is off.
    for build in builds[:3]:
        shown = verdicts(build.html("index"), "outside")
        assert [v.split(" (")[0] for v in shown] == ["\u2717 differs", "\u2713 matches eager",
                                                     "\u2717 differs"]
    assert len(stored(c)) == 4
    assert stored(a) == stored(b) == stored(c)  # verdicts and every tensor, bitwise


def test_only_the_kept_worker_outlives_a_build(builds):
    a, _, _, left, _ = builds
    assert left == [kept_pid(a)]  # its sessions, runs and eager zygote ended with their builds


def test_where_no_worker_can_be_kept_the_build_says_why_and_runs_its_own(builds):
    c = builds[2]
    assert f"{c.src / 'conf.py'}:1: WARNING: autocast-demo: no kept worker serves this build (" \
        in c.stderr, c.stderr
    assert "is not a directory that only this user can open); this build starts its own" in c.stderr
    assert c.stderr.count("WARNING") == 1 and "[autocast_demo.slow]" in c.stderr
    assert "8 runs forked from the worker, 0 in a new interpreter" in c.stdout
    assert c.stats["checked"] == 4


def test_stop_workers_ends_them_now(builds):
    tag, runtime = builds[4]
    assert len(kept_workers(tag)) == 1
    listed = workers_command(runtime, "list-workers")
    (line, last) = listed.stdout.splitlines()
    assert f"pid {kept_workers(tag)[0]}  served: {builds[0].src}" in line, listed.stdout
    assert (listed.returncode, last) == (0, "list-workers: 1 kept worker")
    # From within the project (its docs' directory, below it too), not naming it.
    stopped = stop_workers(runtime, cwd=builds[0].src / "_build")
    assert (stopped.returncode, stopped.stdout) == (0, "stop-workers: 1 kept worker told to end\n")
    assert wait_for(lambda: not kept_workers(tag), 10)  # it looks every second


def test_a_killed_build_leaves_only_the_kept_worker_which_ends_when_idle(tmp_path_factory):
    src = copy_root("eager-gate", tmp_path_factory)
    tag = uuid.uuid4().hex
    runtime = tmp_path_factory.mktemp("runtime")
    proc = subprocess.Popen(
        [sys.executable, "-m", "sphinx", "-b", "html", "-D", "autocast_demo_jobs=1",
         "-D", "autocast_demo_keep_worker=2",
         str(src), str(src / "_build")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "AUTOCAST_DEMO_TEST_TAG": tag, "XDG_RUNTIME_DIR": str(runtime)})
    try:
        deadline = time.monotonic() + 240
        while not (src / "started").exists():
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        # The warm-up ends: the kept worker forks the build's session beside the eager zygote.
        assert wait_for(lambda: [len(children(p)) for p in kept_workers(tag)] == [2], 120)
        os.kill(proc.pid, signal.SIGKILL)  # the build only, as an OOM killer or CI would
        proc.communicate(timeout=60)
        # Its session, the eager zygote and the run's processes end (dying ones get a moment).
        wait_for(lambda: processes_tagged(tag) == kept_workers(tag), 10)
        assert len(kept_workers(tag)) == 1 and processes_tagged(tag) == kept_workers(tag)
        assert wait_for(lambda: not processes_tagged(tag), 60)  # 2 s idle, looked at every second
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        for pid in processes_tagged(tag):
            os.kill(pid, signal.SIGKILL)


def start_build(src: Path, tag: str, runtime: Path, *more: str, env: dict[str, str] | None = None,
                ignoring: tuple[int, ...] = ()) -> subprocess.Popen[str]:
    """``ignoring``: signals the build starts with ignored (SIGINT: as a shell starts ``cmd &``
    without job control)."""
    def ignore() -> None:
        for sig in ignoring:
            signal.signal(sig, signal.SIG_IGN)

    return subprocess.Popen(
        [sys.executable, "-m", "sphinx", "-b", "html", "-D", "autocast_demo_jobs=1", *KEEP, *more, str(src),
         str(src / "_build")],
        preexec_fn=ignore,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "AUTOCAST_DEMO_TEST_TAG": tag, "XDG_RUNTIME_DIR": str(runtime),
             **(env or {})})


def test_stop_workers_during_the_first_build_lets_it_finish(tmp_path_factory):
    src = copy_root("kept-worker", tmp_path_factory)
    tag, runtime = uuid.uuid4().hex, tmp_path_factory.mktemp("runtime")
    proc = start_build(src, tag, runtime)
    try:
        assert wait_for(lambda: list(runtime.glob("*/*.sock")) or proc.poll() is not None, 120)
        assert stop_workers(runtime).returncode == 0
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
        assert "WARNING" not in stderr and "4 values checked" in stdout
        assert ("8 runs forked from the worker (kept for later builds; it ended during this "
                "build: the next one starts a new worker)") in stdout
        assert wait_for(lambda: not processes_tagged(tag), 10)  # nothing stays
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in processes_tagged(tag):
            os.kill(pid, signal.SIGKILL)


@pytest.mark.parametrize("when", ["importing", "warming up"])
def test_a_kept_worker_that_ends_before_serving_a_build_leaves_it_its_own(tmp_path_factory, when):
    """Killed while it imports (the build's pipes wait in its socket's queue), or while it warms
    up with the build's eager runs running in its eager zygote, which goes on without it."""
    src = copy_root("kept-worker", tmp_path_factory)
    tag, runtime = uuid.uuid4().hex, tmp_path_factory.mktemp("runtime")
    proc = start_build(src, tag, runtime, env={"SLOW_EAGER": "1"} if when == "warming up" else {})
    try:
        if when == "importing":
            # Once it listens, the build connects at once and hands its pipes over; its imports
            # take seconds. (Killed before it listens, the build says that it did not start.)
            assert wait_for(lambda: list(runtime.glob("*/*.sock")) or proc.poll() is not None, 120)
            time.sleep(0.5)
        else:  # its one child: the eager zygote, forked between the imports and the warm-up
            assert wait_for(lambda: [len(children(p)) for p in kept_workers(tag)] == [1], 120)
            time.sleep(0.5)  # the slow eager run is running (the others take ~20 ms each)
        for pid in kept_workers(tag):
            os.kill(pid, signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=300)
        assert proc.returncode == 0, stderr
        assert "no kept worker serves this build (the kept worker ended before it " \
               "served this build); this build starts its own" in stderr, stderr
        assert "4 values checked" in stdout
        assert "8 runs forked from the worker, 0 in a new interpreter" in stdout
        assert wait_for(lambda: not processes_tagged(tag), 10)
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in processes_tagged(tag):
            os.kill(pid, signal.SIGKILL)


def test_a_stopped_kept_worker_does_not_hold_a_later_build(tmp_path_factory):
    """Stopped (SIGSTOP) after its first build, a kept worker still takes connections (the
    kernel queues them) but never answers: a later build waits ANSWER_TIMEOUT for it, then runs
    its own worker and says why, with the pid to look at. That build is of another project and
    runs in the background (SIGINT ignored): one worker serves them all, so it finds the same."""
    from sphinx_autocast_demo.engine.kept import ANSWER_TIMEOUT

    tag, runtime = uuid.uuid4().hex, tmp_path_factory.mktemp("runtime")
    first = start_build(copy_root("kept-worker", tmp_path_factory), tag, runtime)
    stopped = second = None
    try:
        assert first.wait(timeout=300) == 0, first.communicate()[1]
        [stopped] = kept_workers(tag)
        os.kill(stopped, signal.SIGSTOP)
        begun = time.monotonic()
        second = start_build(copy_root("kept-worker", tmp_path_factory), tag, runtime,
                             ignoring=(signal.SIGINT, signal.SIGQUIT))
        stdout, stderr = second.communicate(timeout=300)
        assert second.returncode == 0, stderr
        assert time.monotonic() - begun >= ANSWER_TIMEOUT  # it did wait for an answer first
        assert (f"no kept worker serves this build (the kept worker, pid {stopped}, did not "
                f"answer in {ANSWER_TIMEOUT:g} s: stopped or stuck? Resume it (kill -CONT {stopped}) "
                f"or end it (kill -KILL {stopped}); 'python -m sphinx_autocast_demo stop-workers' "
                "makes the next build start a new one)") in stderr, stderr
        assert stderr.count("WARNING") == 1, stderr
        assert "4 values checked" in stdout
        assert "8 runs forked from the worker, 0 in a new interpreter" in stdout
        # Woken, it serves the session it queued: its pipes are closed, so it ends at once.
        os.kill(stopped, signal.SIGCONT)
        assert stop_workers(runtime).returncode == 0
        assert wait_for(lambda: not processes_tagged(tag), 15)
    finally:
        clean_up(tag, runtime, [first, second], stopped)


def test_a_build_that_finds_the_kept_worker_still_starting_waits_for_it(tmp_path_factory):
    """Another build started the kept worker, which is still importing (here: stopped there for
    longer than ANSWER_TIMEOUT): a build that connects meanwhile waits for it as for a worker of
    its own, and is its second build, with no warning."""
    from sphinx_autocast_demo.engine.kept import ANSWER_TIMEOUT

    tag, runtime = uuid.uuid4().hex, tmp_path_factory.mktemp("runtime")
    first = start_build(copy_root("kept-worker", tmp_path_factory), tag, runtime)
    second = worker = None
    try:
        # It listens before its imports (seconds): the first build hands its pipes over at once.
        assert wait_for(lambda: list(runtime.glob("*/*.sock")) or first.poll() is not None, 120)
        [worker] = kept_workers(tag)
        os.kill(worker, signal.SIGSTOP)
        assert not list(runtime.glob("*/*.warm"))  # still starting
        second = start_build(copy_root("kept-worker", tmp_path_factory), tag, runtime)
        time.sleep(ANSWER_TIMEOUT + 2)
        os.kill(worker, signal.SIGCONT)
        out1, err1 = first.communicate(timeout=300)
        out2, err2 = second.communicate(timeout=300)
        assert first.returncode == 0 and second.returncode == 0, err1 + err2
        assert "WARNING" not in err1 + err2, err1 + err2
        assert "8 runs forked from the worker (kept for later builds)" in out1
        assert "8 runs forked from the worker (kept from an earlier build; this is its build 2)" \
            in out2
    finally:
        clean_up(tag, runtime, [first, second], worker)


def test_a_kept_worker_started_with_sigchld_and_sigterm_ignored_still_ends_when_idle(
        tmp_path_factory):
    """The build that starts it ignores SIGCHLD and SIGTERM: the worker does not (it resets the
    signals it handles), so it sees its sessions end and leaves after its idle time, as it must,
    since builds that do not ignore them share it (they are not in the key)."""
    tag, runtime = uuid.uuid4().hex, tmp_path_factory.mktemp("runtime")
    build = start_build(copy_root("kept-worker", tmp_path_factory), tag, runtime,
                        "-D", "autocast_demo_keep_worker=2",
                        ignoring=(signal.SIGCHLD, signal.SIGTERM))
    try:
        stdout, stderr = build.communicate(timeout=300)
        assert build.returncode == 0, stderr
        assert "8 runs forked from the worker (kept for later builds)" in stdout
        assert wait_for(lambda: not processes_tagged(tag), 30)  # 2 s idle, looked at every second
    finally:
        clean_up(tag, runtime, [build])


def test_the_latest_builds_idle_time_is_the_one_the_worker_keeps(tmp_path_factory):
    """Started by a build that keeps it 120 s, then served a build that says 2 s: it ends about
    2 s after that build, and says so to it."""
    tag, runtime = uuid.uuid4().hex, tmp_path_factory.mktemp("runtime")
    builds = []
    try:
        for keep in (120, 2):
            builds.append(start_build(copy_root("kept-worker", tmp_path_factory), tag, runtime,
                                      "-v", "-D", f"autocast_demo_keep_worker={keep}"))
            stdout, stderr = builds[-1].communicate(timeout=300)
            assert builds[-1].returncode == 0, stderr
        assert "this is its build 2" in stdout
        assert "after its last build" in stdout and "it stays 2 s after its last build" in stdout
        assert wait_for(lambda: not processes_tagged(tag), 30)  # looked at every second
    finally:
        clean_up(tag, runtime, builds)


@pytest.mark.parametrize("runtime", ["missing", "a file"])
def test_stop_workers_where_the_runtime_directory_cannot_be(tmp_path, runtime):
    """No traceback, and nothing made: no worker can have been kept where XDG_RUNTIME_DIR does
    not exist or is a file (a build there says it cannot keep one, and runs its own)."""
    base = tmp_path / "runtime"
    if runtime == "a file":
        base.write_text("")
    done = stop_workers(base)
    assert "Traceback" not in done.stderr
    assert done.returncode == 0 and "0 kept workers told to end" in done.stdout
    assert base.exists() is (runtime == "a file") and not base.is_dir()


def test_a_module_the_kept_worker_imported_is_never_used_stale(tmp_path_factory):
    """The docs' own config module (``autocast_demo_config``), which the worker imports at its
    start, is edited between two builds, which the key does not see: the kept worker refuses the
    second build, which says why and runs its own worker, whose runs import the new module
    (the kept worker's would print VERSION 1). The kept worker ends."""
    src = copy_root("kept-config", tmp_path_factory)
    tag, runtime = uuid.uuid4().hex, tmp_path_factory.mktemp("runtime")
    env = {"PYTHONPATH": str(src)}
    builds = []
    try:
        builds.append(start_build(src, tag, runtime, env=env))
        stdout, stderr = builds[-1].communicate(timeout=300)
        assert builds[-1].returncode == 0, stderr
        assert "4 runs forked from the worker (kept for later builds)" in stdout
        assert re.findall(r"kept_config VERSION \d", (src / "_build" / "index.html").read_text())
        module = src / "kept_config.py"
        module.write_text(module.read_text().replace("VERSION = 1", "VERSION = 2"))
        # (not execute=force, which never uses a kept worker: the edited module's entries are
        # stale, and their runs go to the kept worker, which must refuse them)
        builds.append(start_build(src, tag, runtime, env=env))
        stdout, stderr = builds[-1].communicate(timeout=300)
        assert builds[-1].returncode == 0, stderr
        assert (f"no kept worker serves this build (the kept worker refused this build: "
                f"{module} changed after the worker imported it; the next build starts a new "
                "one); this build starts its own") in stderr, stderr
        assert "4 runs forked from the worker, 0 in a new interpreter" in stdout
        printed = re.findall(r"kept_config VERSION \d", (src / "_build" / "index.html").read_text())
        assert printed and set(printed) == {"kept_config VERSION 2"}
        assert wait_for(lambda: not processes_tagged(tag), 10)  # it left, and nothing else stays
    finally:
        clean_up(tag, runtime, builds)


def test_a_module_edited_while_the_kept_worker_imports_it_is_never_used_stale(tmp_path_factory):
    """Edited after the worker read it but before it stamped what it imported (after its
    warm-up): the stamp would be the new file's, and every later build would get the old module.
    A file written since the imports began counts as changed: the next build is refused."""
    src = copy_root("kept-config", tmp_path_factory)
    tag, runtime = uuid.uuid4().hex, tmp_path_factory.mktemp("runtime")
    env = {"PYTHONPATH": str(src), "KEPT_CONFIG_SLOW": "1"}
    module = src / "kept_config.py"
    builds = [start_build(src, tag, runtime, env=env)]
    try:
        assert wait_for(lambda: (src / "importing").exists() or builds[0].poll() is not None, 120)
        module.write_text(module.read_text().replace("VERSION = 1", "VERSION = 2"))
        stdout, stderr = builds[0].communicate(timeout=300)
        assert builds[0].returncode == 0, stderr
        assert "4 runs forked from the worker (kept for later builds)" in stdout
        builds.append(start_build(src, tag, runtime, env=env))
        _, stderr = builds[-1].communicate(timeout=300)
        assert builds[-1].returncode == 0, stderr
        assert f"(the kept worker refused this build: {module} changed after the worker " \
               "imported it" in stderr, stderr
        printed = re.findall(r"kept_config VERSION \d", (src / "_build" / "index.html").read_text())
        assert printed and set(printed) == {"kept_config VERSION 2"}
    finally:
        clean_up(tag, runtime, builds)


def test_data_its_config_read_edited_with_the_old_time_is_never_served_stale(tmp_path_factory):
    """The config module reads a file when it is imported; the file is edited to the same size
    with its old file time put back: the kept worker's memory holds the old data. The build
    runs the demo again (the entry stands for the file's content) and the kept worker, which
    compares change times, refuses it. Then execute=force: a run of this build, never the kept
    worker's."""
    src = copy_root("kept-config", tmp_path_factory)
    data = src / "kept_data.txt"
    data.write_text("a\n")
    tag, runtime = uuid.uuid4().hex, tmp_path_factory.mktemp("runtime")
    env = {"PYTHONPATH": str(src)}

    def printed() -> set[str]:
        return set(re.findall(r"DATA \w", (src / "_build" / "index.html").read_text()))

    builds = [start_build(src, tag, runtime, env=env)]
    try:
        stdout, stderr = builds[0].communicate(timeout=300)
        assert builds[0].returncode == 0, stderr
        assert "(kept for later builds)" in stdout and printed() == {"DATA a"}
        st = os.stat(data)
        data.write_text("b\n")
        os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns))
        builds.append(start_build(src, tag, runtime, env=env))
        stdout, stderr = builds[-1].communicate(timeout=300)
        assert builds[-1].returncode == 0, stderr
        assert f"{data} changed after the worker imported it" in stderr, stderr
        assert printed() == {"DATA b"}
        # A new kept worker for the next builds; force passes it by.
        builds.append(start_build(src, tag, runtime, env=env))
        builds[-1].communicate(timeout=300)
        builds.append(start_build(src, tag, runtime, "-D", "autocast_demo_execute=force", env=env))
        stdout, stderr = builds[-1].communicate(timeout=300)
        assert builds[-1].returncode == 0, stderr
        assert "4 runs forked from the worker, 0 in a new interpreter" in stdout, stdout
    finally:
        clean_up(tag, runtime, builds)


def test_stop_workers_ends_this_projects_workers_only(tmp_path_factory):
    """Two projects, each in its own environment (so each has its own kept worker): a stop in
    one project's directory ends its worker; the other's stays and serves its next build."""
    tag, runtime = uuid.uuid4().hex, tmp_path_factory.mktemp("runtime")
    one, other = (copy_root("kept-worker", tmp_path_factory) for _ in range(2))
    env = {"AUTOCAST_DEMO_TEST_TAG": tag, "XDG_RUNTIME_DIR": str(runtime)}
    builds: list[subprocess.Popen[str] | None] = []
    try:
        for src, flavour in ((one, "one"), (other, "other")):
            done = sphinx_build(src, src / "_build", "-v", *KEEP, env={**env, "FLAVOUR": flavour})
            assert done.returncode == 0, done.stderr
        def fresh(src: Path, name: str) -> tuple[str, str]:  # a cache of its own: it runs
            return "-D", f"autocast_demo_cache_dir={src / '_build' / f'{name}-cache'}"

        workers = {kept_pid(sphinx_build(src, src / "_build" / "again", "-v", *KEEP,
                                         *fresh(src, "again"), env={**env, "FLAVOUR": flavour})): src
                   for src, flavour in ((one, "one"), (other, "other"))}
        assert len(workers) == 2 and sorted(kept_workers(tag)) == sorted(workers)
        listed = workers_command(runtime, "list-workers").stdout
        assert all(f"pid {pid}  served: {src}\n" in listed for pid, src in workers.items()), listed
        stopped = stop_workers(runtime, str(one))
        assert stopped.stdout == "stop-workers: 1 kept worker told to end; 1 of other projects " \
            "left (--all ends them too)\n", stopped.stdout
        mine = next(pid for pid, src in workers.items() if src == one)
        assert wait_for(lambda: mine not in kept_workers(tag), 10)
        time.sleep(1.5)  # a worker looks for its socket every second
        assert kept_workers(tag) == [next(pid for pid, src in workers.items() if src == other)]
        later = sphinx_build(other, other / "_build" / "later", "-v", *KEEP, *fresh(other, "later"),
                             env={**env, "FLAVOUR": "other"})
        assert kept_pid(later) == kept_workers(tag)[0] and "kept from an earlier build" in later.stdout
        assert stop_workers(runtime).stdout == "stop-workers: 1 kept worker told to end\n"
        assert wait_for(lambda: not kept_workers(tag), 10)
    finally:
        clean_up(tag, runtime, builds)


def test_a_scoped_stop_names_the_other_projects_a_shared_worker_served(tmp_path):
    """One worker serves every project of one environment: a stop in one of them ends it, and
    says which others it served. Files only: the socket and list a worker leaves."""
    base = tmp_path / "runtime"
    kept = base / f"autocast-demo-{os.getuid()}"
    kept.mkdir(parents=True, mode=0o700)
    (kept / "shared.sock").write_text("")
    (kept / "shared.projects").write_text(f"{tmp_path}/a/docs\n{tmp_path}/b/docs\n")
    (kept / "apart.sock").write_text("")
    (kept / "apart.projects").write_text(f"{tmp_path}/c/docs\n")
    (tmp_path / "a" / "docs").mkdir(parents=True)
    listed = workers_command(base, "list-workers")
    assert listed.stdout.splitlines() == [
        f"apart  starting (or stopped)  served: {tmp_path}/c/docs",
        f"shared  starting (or stopped)  served: {tmp_path}/a/docs, {tmp_path}/b/docs",
        "list-workers: 2 kept workers"]
    done = stop_workers(base, cwd=tmp_path / "a")  # the repository's root: the docs are below
    assert done.stdout.splitlines() == [
        f"stop-workers: they also served {tmp_path}/b/docs",
        "stop-workers: 1 kept worker told to end; 1 of other projects left (--all ends them too)"]
    assert sorted(p.name for p in kept.iterdir()) == ["apart.projects", "apart.sock"]
    assert workers_command(base, "stop-workers", str(tmp_path / "b")).stdout == \
        "stop-workers: 0 kept workers told to end; 1 of other projects left (--all ends them too)\n"


def test_version():
    done = subprocess.run([sys.executable, "-m", "sphinx_autocast_demo", "--version"],
                          capture_output=True, text=True, timeout=60)
    from sphinx_autocast_demo import __version__

    assert (done.returncode, done.stdout) == (0, f"sphinx-autocast-demo {__version__}\n")
    assert __version__ == importlib.metadata.version("sphinx-autocast-demo")


def in_a_terminal(src: Path, out: str, tag: str, runtime: Path, env: dict[str, str]) -> tuple[int, str]:
    """A build as a writer runs it, its output to a terminal (a pseudo-terminal here): its
    exit status and what it printed. ``env``: the CI variables it sees, if any. A cache of its
    own: its demos run."""
    import pty
    import threading

    leader, follower = pty.openpty()
    plain = {k: v for k, v in os.environ.items() if k not in ("CI", "TF_BUILD", "JENKINS_URL")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "sphinx", "-b", "html", "-D", "autocast_demo_jobs=1", "-D",
         f"autocast_demo_cache_dir={src / '_build' / out}-cache", str(src), str(src / "_build" / out)],
        stdin=follower, stdout=follower, stderr=follower, close_fds=True,
        env={**plain, "AUTOCAST_DEMO_TEST_TAG": tag, "XDG_RUNTIME_DIR": str(runtime), **env})
    os.close(follower)
    said: list[bytes] = []

    def read() -> None:  # (a terminal's buffer is small: read as the build writes)
        with contextlib.suppress(OSError):
            while chunk := os.read(leader, 65536):
                said.append(chunk)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    proc.wait(timeout=300)
    reader.join(timeout=10)
    os.close(leader)
    return proc.returncode, b"".join(said).decode(errors="replace")


def test_a_writers_build_keeps_its_worker_for_the_next_by_default_and_ci_keeps_none(tmp_path_factory):
    """Issue 48: with no keep_worker in conf.py, a build in a terminal leaves its worker for the
    next build (which then imports and warms up nothing) and says so once, with how to end it;
    the same build where CI=true leaves none."""
    tag, runtime = uuid.uuid4().hex, tmp_path_factory.mktemp("runtime")
    src = copy_root("kept-worker", tmp_path_factory)
    try:
        code, said = in_a_terminal(src, "ci", tag, runtime, {"CI": "true"})
        assert code == 0, said
        assert wait_for(lambda: not processes_tagged(tag), 10), said  # nothing outlives it
        assert "stays" not in said
        code, said = in_a_terminal(src, "first", tag, runtime, {})
        assert code == 0, said
        assert "stays 10 min after this build for your next one" in said, said
        assert "sphinx-autocast-demo stop-workers" in said and "autocast_demo_keep_worker = 0" in said
        assert len(kept_workers(tag)) == 1
        code, said = in_a_terminal(src, "second", tag, runtime, {})
        assert code == 0, said
        assert "stays" not in said  # (said once: by the build that started it)
        assert read_stats(src / "_build" / "second" / ".doctrees")["kept_worker"] == 2  # no warm-up
    finally:
        clean_up(tag, runtime, [])
