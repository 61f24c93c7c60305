"""The worker's end mid-build, in real builds with real torch: a snippet that kills it is one
located error at the demo that was running, every value left is labelled not run, nothing is
left running; a build stopped while the zygote forked before the warm-up has a run in flight
leaves nothing running either."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
import uuid

import pytest
from conftest import copy_root, processes_tagged, tagged_build


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return tagged_build("worker-dies", tmp_path_factory)


def directive_line(build) -> int:
    lines = (build.src / "index.rst").read_text(encoding="utf-8").splitlines()
    return lines.index(".. autocast-demo::") + 1


def test_the_error_is_said_once_at_the_demo_that_killed_it(build):
    assert build.returncode == 1, build.stderr
    assert "Traceback" not in build.stdout + build.stderr
    assert "build finished with problems" in build.stdout
    line = directive_line(build)
    errors = [ln for ln in build.stderr.splitlines() if ": ERROR: " in ln]
    assert len(errors) == 1, build.stderr
    assert errors[0].startswith(f"{build.src / 'index.rst'}:{line}: ERROR: autocast-demo: the "
                                "autocast-demo worker stopped unexpectedly while running "
                                f"index:{line} [same_as_forward, ")
    assert "A snippet must not kill or signal the process that started it" in errors[0]


def test_what_did_not_run_is_labelled_so_and_counted(build):
    # The killer's first run kills its zygote. Eager runs go first while the worker warms up,
    # so the healthy demo's values have usually not finished either; if they had, they are
    # checked and shown so, and nothing else is.
    checked = build.stats["checked"]
    assert checked in (0, 3) and build.stats["not_checked"] == 6 - checked, build.stats
    killer = build.html("index").get_text(" ", strip=True)
    assert killer.count("not run: the build's worker stopped before it ran") == 3, killer
    assert "\u2713 matches eager" not in killer  # (the legend says "\u2713 compiled matches eager")
    healthy = build.html("healthy").get_text(" ", strip=True)
    assert healthy.count("not run: the build's worker stopped before it ran") == 3 - checked
    assert healthy.count("\u2713 matches eager") == checked
    failures = 2 if checked == 0 else 1
    summary = build.stdout.split(f"autocast-demo: {failures} failure{'' if failures == 1 else 's'}:", 1)[1]
    assert len(re.findall(r"every value: not run: the autocast-demo worker stopped",
                          summary)) == failures


def test_nothing_is_left_running(build):
    assert processes_tagged(build.tag) == []


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT], ids=["SIGKILL", "Ctrl-C"])
def test_a_build_stopped_during_an_eager_run_leaves_nothing_running(tmp_path_factory, how):
    src = copy_root("eager-gate", tmp_path_factory)
    tag = uuid.uuid4().hex
    proc = subprocess.Popen(  # its own process group, as a terminal starts it
        [sys.executable, "-m", "sphinx", "-b", "html", "-D", "autocast_demo_jobs=1",
         str(src), str(src / "_build")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        env={**os.environ, "AUTOCAST_DEMO_TEST_TAG": tag},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))  # (as in a terminal)
    try:
        deadline = time.monotonic() + 240
        while not (src / "started").exists():
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        # The warm-up ends while the eager run waits (it takes seconds, not more): then the
        # warm worker is the one to hear that the build is gone.
        time.sleep(5)
        assert len(processes_tagged(tag)) >= 5  # build, worker, eager zygote, run, its two
        if how == signal.SIGINT:
            os.killpg(proc.pid, how)  # Ctrl-C: the whole foreground group
        else:
            os.kill(proc.pid, how)  # the build only, as an OOM killer or CI would
        proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    deadline = time.monotonic() + 10  # dying processes get a moment
    while processes_tagged(tag) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_tagged(tag) == []


def test_ctrl_c_that_only_the_worker_hears_blames_no_demo(tmp_path_factory):
    """A build that ignores SIGINT (started as a background job) while its worker does not:
    the worker's end is said at conf.py, as a stop, not as a snippet that killed it."""
    src = copy_root("eager-gate", tmp_path_factory)
    proc = subprocess.Popen(
        [sys.executable, "-m", "sphinx", "-b", "html", "-D", "autocast_demo_jobs=1",
         str(src), str(src / "_build")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        deadline = time.monotonic() + 240
        while not (src / "started").exists():
            assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        time.sleep(5)  # past the warm-up, as above
        os.killpg(proc.pid, signal.SIGINT)
        _, stderr = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert proc.returncode == 1, stderr
    assert "Traceback" not in stderr
    assert f"{src / 'conf.py'}:1: ERROR: autocast-demo: no demo can run: the autocast-demo " \
           "worker was stopped by SIGINT" in stderr, stderr
    assert "A snippet must not kill" not in stderr
