"""The engine's pure parts, with no process started: the build's words to its worker
(isolation.py), the queue of runs and a channel's pipe (channels.py), and what a finished run's
files are read into (records.py)."""

from __future__ import annotations

import json
import os
import sys

import pytest

from sphinx_autocast_demo.core.model import Frame, SnippetError
from sphinx_autocast_demo.engine import isolation
from sphinx_autocast_demo.engine.isolation import WorkerSettings
from sphinx_autocast_demo.engine.parent.channels import REACH, Channel, Waiting, above_stdio, snippet
from sphinx_autocast_demo.engine.parent.records import Run, collect, run_paths, signal_name


def test_the_builds_words_travel_as_variables_and_are_taken_back_whole():
    words = WorkerSettings(config="torch._dynamo.config.x", backend="eager",
                  user_env={"OMP_NUM_THREADS": None, "MKL_NUM_THREADS": "4"}, eager_fds=(5, 7),
                  idle_core=True, kept=("/run/kept.sock", 30.0))
    env = isolation.to_env(words)
    assert env == {
        "AUTOCAST_DEMO_CONFIG": "torch._dynamo.config.x", "AUTOCAST_DEMO_BACKEND": "eager",
        "AUTOCAST_DEMO_USER_ENV": json.dumps({"OMP_NUM_THREADS": None, "MKL_NUM_THREADS": "4"}),
        "AUTOCAST_DEMO_EAGER_FDS": "5,7", "AUTOCAST_DEMO_COPY_AHEAD": "1",
        "AUTOCAST_DEMO_KEPT": json.dumps(["/run/kept.sock", 30.0]),
    }
    # Only the build's words are taken: the user's own variables, ours or not, reach the runs.
    environ = {**env, "HOME": "/home/me", "AUTOCAST_DEMO_TEST_TAG": "t"}
    assert isolation.take(environ) == words
    assert environ == {"HOME": "/home/me", "AUTOCAST_DEMO_TEST_TAG": "t"}


def test_default_words_are_no_variables_and_the_users_threads_come_back(monkeypatch):
    assert isolation.to_env(WorkerSettings()) == {} and isolation.take({}) == WorkerSettings()
    assert isolation.to_env(WorkerSettings(idle_core=False, backend="inductor")) == {}
    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    monkeypatch.setenv("MKL_NUM_THREADS", "1")
    isolation.restore_user_environment({"OMP_NUM_THREADS": None, "MKL_NUM_THREADS": "3"})
    assert "OMP_NUM_THREADS" not in os.environ and os.environ["MKL_NUM_THREADS"] == "3"
    isolation.restore_user_environment(None)  # nothing to give back
    assert os.environ["MKL_NUM_THREADS"] == "3"


def queued(*modes: str) -> list[Run]:
    return [Run(f"{mode}-{i}", {"mode": mode}, 1.0) for i, mode in enumerate(modes)]  # type: ignore[typeddict-item]


def test_runs_wait_in_the_builds_order_and_eager_ones_can_go_ahead():
    runs = queued("compiled", "eager", "compiled", "eager")
    waiting = Waiting(runs)
    assert waiting.next(eager_only=True) is runs[1]  # (only looked at)
    assert waiting.take(eager_only=False) is runs[0]
    assert waiting.take(eager_only=True) is runs[1]
    assert waiting.take(eager_only=False) is runs[2]  # the eager one taken ahead is not sent twice
    assert waiting.take(eager_only=True) is runs[3]
    assert waiting.take(eager_only=True) is None and waiting.take(eager_only=False) is None
    assert not waiting
    waiting.put_back(runs[1])  # its zygote died: it goes again, in its place
    assert waiting and waiting.take(eager_only=False) is runs[1] and not waiting


def values_of(code: str, *modes: str) -> list[Run]:
    """A demo's runs, one per value and mode: one snippet (setup and code) for all."""
    return [Run(f"{code}-{i}-{mode}", {"mode": mode, "setup": ["import torch"], "code": code}, 1.0)  # type: ignore[typeddict-item]
            for i, mode in enumerate(modes)]


def test_a_snippets_compiled_runs_are_kept_apart_while_another_snippets_wait():
    """Two values of one demo compile the same kernels: side by side, the second waits on
    inductor's lock for each one the first compiles (a core idle). The pool takes the first
    compiled run of another snippet instead, within reach; eager runs compile nothing."""
    a, b = values_of("a()", "compiled", "compiled", "compiled"), values_of("b()", "compiled", "compiled")
    eager = values_of("a()", "eager")
    waiting = Waiting([*a, *eager, *b])
    assert snippet(a[0]) == snippet(a[2]) != snippet(b[0]) and snippet(eager[0]) is None
    first = waiting.take(eager_only=False)
    assert first is a[0]
    busy = {snippet(first)}
    assert waiting.take(eager_only=False, busy=busy) is eager[0]  # an eager run is never busy
    assert waiting.take(eager_only=False, busy=busy) is b[0]  # not a[1]: a is compiling
    busy.add(snippet(b[0]))
    # Every snippet within reach is busy: the build's order, rather than an idle core.
    assert waiting.take(eager_only=False, busy=busy) is a[1]
    assert waiting.before_turn == {b[0].key}  # what the build counts (-v): only b[0] went before its turn
    assert waiting.take(eager_only=False, busy={snippet(a[0])}) is b[1]
    assert waiting.take(eager_only=False, busy={snippet(a[0])}) is a[2]
    assert not waiting


def test_a_run_is_taken_ahead_of_a_busy_one_only_within_reach():
    a = values_of("a()", *["compiled"] * (REACH + 2))
    b = values_of("b()", "compiled")
    waiting = Waiting([*a[1:], *b])  # b is REACH + 1 runs past the next: out of reach
    assert waiting.take(eager_only=False, busy={snippet(a[0])}) is a[1]
    waiting = Waiting([*a[2:], *b])  # REACH past it: the last within reach
    assert waiting.take(eager_only=False, busy={snippet(a[0])}) is b[0]


def test_a_channel_sends_json_lines_and_closes_once(tmp_path):
    read, write = os.pipe()
    try:
        channel = Channel(requests=write, events=read)
        channel.send({"id": "r1", "timeout": 2.0})  # type: ignore[typeddict-item]
        channel.close()
        channel.close()  # a second close is no error (the fd is not closed twice)
        assert not channel.open
        assert os.read(read, 1024) == b'{"id": "r1", "timeout": 2.0}\n'
        assert above_stdio(read) == read  # already above stdin, stdout and stderr
    finally:
        os.close(read)


def exit_event(returncode: int, timed_out: bool = False, dropped: int = 0) -> dict[str, object]:
    return {"event": "exit", "id": "d-0", "returncode": returncode, "timed_out": timed_out,
            "seconds": 3.1, "fresh": False, "dropped": dropped, "prefaulted": 4096}


def left(tmp_path, run: Run, output: str = "", **more: str | bytes) -> dict[str, str]:
    files = run_paths(tmp_path, run)
    os.mkdir(files["cwd"])
    with open(files["output_path"], "w", encoding="utf-8") as f:
        f.write(output.replace("CWD", files["cwd"]))
    for name, content in more.items():
        mode = "wb" if isinstance(content, bytes) else "w"
        with open(files[name], mode) as f:
            f.write(content.replace("CWD", files["cwd"]) if isinstance(content, str) else content)
    return files


LOOP = Run("d-0", {"setup": ["import time"],
                   "code": "def f():\n    x = 1\n    while True:\n        pass\nf()"}, 3.0)
DUMPS = ('Thread 0x01 (most recent call first):\n  File "<autocast-demo-1>", line 2 in f\n'
         '  File "<autocast-demo-1>", line 5 in <module>\n\n'
         'Thread 0x01 (most recent call first):\n  File "<autocast-demo-1>", line 3 in f\n'
         '  File "<autocast-demo-7>", line 1 in g\n  File "<autocast-demo-1>", line 5 in <module>\n'
         '  File "/usr/lib/python3.11/runpy.py", line 88 in _run_code\n')


def test_a_run_that_timed_out_is_located_by_its_last_dump_and_leaves_nothing(tmp_path):
    files = left(tmp_path, LOOP, "wrote CWD/out.txt in CWD\n", stack_path=DUMPS)
    finished = collect(LOOP, files, exit_event(-9, timed_out=True))  # type: ignore[arg-type]
    record = finished.record
    stopped = "stopped after its timeout of 3 s"
    assert (record.status, record.detail, record.seconds) == ("timeout", stopped, 3.1)
    assert record.output == "wrote out.txt in .\n"  # the scratch directory is the run's "."
    assert record.error == SnippetError(type="Timeout", names=(), message=stopped, frames=(
        Frame(1, 5, "<module>", "f()"), Frame(1, 3, "f", "while True:")))
    assert finished.prefaulted == 4096 and finished.imports is None
    assert os.listdir(tmp_path) == []


def test_a_run_that_died_says_how_as_data(tmp_path):
    files = left(tmp_path, LOOP, "x" * 10)
    record = collect(LOOP, files, exit_event(-11, dropped=3)).record  # type: ignore[arg-type]
    assert (record.status, record.killed_by, record.exit_status) == ("crashed", "SIGSEGV", None)
    assert record.detail == "the process was killed by SIGSEGV" and record.error is None
    assert record.output == "x" * 10 + "\n[... output cut here ...]\n"  # the worker dropped some
    record = collect(LOOP, left(tmp_path, LOOP), exit_event(3)).record  # type: ignore[arg-type]
    assert (record.killed_by, record.exit_status) == ("", 3)
    assert record.detail == "the process exited with status 3 before the snippet finished"
    assert (signal_name(-99), signal_name(0)) == ("signal 99", "")


def test_a_finished_runs_result_is_read_with_its_data_and_its_absolute_imports(tmp_path):
    result = {"status": "ok", "seconds": 0.25, "detail": "CWD/x", "imports": ["/abs/helper.py", "rel.py", 3],
              "tensors": [{"name": "w", "kind": "value", "dtype": "float32", "shape": [2], "sha256": "ab",
                           "offset": 0},
                          {"name": "g", "kind": "grad", "dtype": "float32", "shape": [2], "sha256": "cd"}]}
    files = left(tmp_path, LOOP, "printed\n", result_path=json.dumps(result), data_path=b"12345678")
    finished = collect(LOOP, files, exit_event(0))  # type: ignore[arg-type]
    assert finished.record.status == "ok" and finished.record.output == "printed\n"
    assert finished.record.detail == "x" and [t.name for t in finished.record.tensors] == ["w", "g"]
    assert (finished.data, finished.offsets) == (b"12345678", {"w": 0, "g": None})
    assert finished.imports == ("/abs/helper.py",)  # a relative one was in its scratch directory
    bad = left(tmp_path, LOOP, result_path=json.dumps({"status": "bogus"}))
    record = collect(LOOP, bad, exit_event(0)).record  # type: ignore[arg-type]
    assert record.status == "crashed"
    assert record.detail.startswith("its result could not be read: status is 'bogus', not one of ok, raised")


def test_the_numbers_id_gave_the_snippet_read_as_id_and_nothing_else():
    from sphinx_autocast_demo.engine.parent.records import _without_ids

    given = 140234567891232
    text = f"w at {given} {hex(given)}; {given}0 and x{given} and 3.{given} stay; count 7\n"
    assert _without_ids(text, [given, 7_000]) == (
        f"w at <id> <id>; {given}0 and x{given} and 3.{given} stay; count 7\n")
    assert _without_ids(text, None) == text


@pytest.mark.parametrize(("environ", "terminal", "kept"), [
    ({}, True, 600.0), ({}, False, 0.0), ({"CI": "true"}, True, 0.0), ({"CI": "false"}, True, 600.0),
    ({"TF_BUILD": "True"}, True, 0.0), ({"JENKINS_URL": "http://ci"}, True, 0.0)])
def test_the_default_keeps_a_worker_after_a_writers_build_only(monkeypatch, environ, terminal, kept):
    """Issue 48: keep_worker -1 means 10 min in a terminal outside CI, none elsewhere; a number
    is kept as it is, anywhere."""
    from sphinx_autocast_demo.engine import execute

    for name in execute.CI_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: terminal, raising=False)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: terminal, raising=False)
    assert execute.idle_time(-1) == kept
    assert execute.idle_time(0) == 0 and execute.idle_time(900) == 900
