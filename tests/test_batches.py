"""One demo's runs share a forked process (``autocast_demo_isolation = "demo"``).

Real torch, one worker for the module: each case sends batches straight to the
:class:`WorkerPool` and reads back what every run printed. A run prints its process id, so the
tests see which runs shared a process. What the end-to-end builds check (results, leaks seen
by the next value, timeouts) is in test_faults_snippets and test_basic; this module pins the
engine's rules: one process per batch, a new one after a run that leaves something it cannot
reset, and a crash or timeout failing only the run it hit.
"""

from __future__ import annotations

import textwrap
import time

import pytest

from sphinx_autocast_demo.engine.pool import Run, WorkerPool

CONFIG = "torch._functorch.config.backward_pass_autocast"
COMPILED = """\
import os, torch
w = torch.ones(2, requires_grad=True)
(torch.compile(lambda w: (w * 3).sum())(w)).backward()
print(os.getpid(), w.grad.tolist())
"""


def make_run(key: str, code: str, group: str, value: object = "off", timeout: float = 60.0,
             mode: str = "compiled", tmp: str = "/tmp") -> Run:
    job = {"setup": [], "code": textwrap.dedent(code), "mode": mode, "backend": "aot_eager",
           "device": "cpu", "config": CONFIG, "value": value, "cwd": tmp}
    return Run(key=key, job=job, timeout=timeout, group=group)


@pytest.fixture(scope="module")
def pool():
    with WorkerPool(1) as started:
        started.ready()
        yield started


def execute(pool: WorkerPool, runs: list[Run]) -> dict[str, tuple[str, str, str]]:
    """key -> (status, printed output, pid printed first)."""
    done = {}
    for fin in pool.run(runs):
        output = fin.record.output
        done[fin.run.key] = (fin.record.status, output, output.split()[0] if output.split() else "")
    assert set(done) == {r.key for r in runs}
    return done


def test_a_batch_shares_one_process_and_each_run_is_right(pool):
    runs = [make_run(f"a{i}", COMPILED, "demo-a", value=v, mode=m)
            for i, (v, m) in enumerate([("same_as_forward", "compiled"), ("same_as_forward", "eager"),
                                        ("off", "compiled"), ("off", "eager")])]
    runs += [make_run("b0", COMPILED, "demo-b"), make_run("lone", COMPILED, "")]
    done = execute(pool, runs)
    assert all(status == "ok" for status, _, _ in done.values())
    assert all(output.split()[1:] == ["[3.0,", "3.0]"] for _, output, _ in done.values())
    pids = {key: pid for key, (_, _, pid) in done.items()}
    assert len({pids[f"a{i}"] for i in range(4)}) == 1
    assert len({pids["a0"], pids["b0"], pids["lone"]}) == 3  # another batch, another process


def test_state_a_run_leaves_is_reset_before_the_next(pool):
    leaker = """\
    import os, sys, warnings, torch
    import torch._dynamo.config as dconfig
    print(os.getpid(), torch.get_default_dtype(), torch.is_grad_enabled(),
          torch.get_float32_matmul_precision(), dconfig.cache_size_limit,
          torch.is_autocast_enabled("cpu"), torch.randn(1).item(), "leak" in sys.path)
    warnings.warn("shown once per process unless reset")
    torch.set_default_dtype(torch.float64)
    torch.set_grad_enabled(False)
    torch.set_float32_matmul_precision("medium")
    dconfig.cache_size_limit = 1
    torch.set_autocast_enabled("cpu", True)
    torch.manual_seed(99)
    sys.path.append("leak")
    """
    done = execute(pool, [make_run(f"l{i}", leaker, "leaker", mode="eager") for i in range(3)])
    lines = [done[f"l{i}"][1].splitlines() for i in range(3)]
    pids = {line[0].split()[0] for line in lines}
    assert len(pids) == 1, lines  # the same process: what it changed was put back
    firsts = [line[0].split()[1:] for line in lines]
    assert firsts[0][:4] == ["torch.float32", "True", "highest", firsts[0][3]]
    assert firsts[0][3] != "1" and firsts[0][4] == "False" and firsts[0][6] == "False"
    assert firsts[1] == firsts[0] and firsts[2] == firsts[0], firsts
    # Python's warn-once registries are reset too: every run prints its warning.
    assert all(any("shown once per process" in text for text in line) for line in lines)


def test_a_run_that_leaves_a_thread_gets_the_next_run_a_new_process(pool):
    threaded = """\
    import os, threading, time
    print(os.getpid())
    threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
    """
    done = execute(pool, [make_run(f"t{i}", threaded, "threads", mode="eager") for i in range(3)])
    assert all(status == "ok" for status, _, _ in done.values())
    assert len({done[f"t{i}"][2] for i in range(3)}) == 3


def test_a_crash_fails_only_its_run_and_the_rest_of_the_batch_runs(pool):
    runs = [make_run("c0", COMPILED, "crash"),
            make_run("c1", "import os\nprint(os.getpid())\nos._exit(3)\n", "crash"),
            make_run("c2", COMPILED, "crash"),
            make_run("c3", "import time\nprint('before the hang', flush=True)\ntime.sleep(60)\n",
                     "crash", timeout=2.0),
            make_run("c4", COMPILED, "crash")]
    done = execute(pool, runs)
    assert [done[f"c{i}"][0] for i in range(5)] == ["ok", "crashed", "ok", "timeout", "ok"]
    assert done["c3"][1].startswith("before the hang")
    pids = [done[f"c{i}"][2] for i in (0, 1, 2, 4)]
    assert pids[0] == pids[1] and len(set(pids[1:])) == 3  # a new process after each failure
    assert done["c4"][1].split()[1:] == ["[3.0,", "3.0]"]


def test_events_that_arrive_together_are_all_read(pool):
    # A batch of quick runs reports faster than a busy build reads: several events then sit
    # in the pipe at once, and each must be read without waiting for more to arrive.
    runs = [make_run(f"q{i}", "print('quick')\n", "quick", mode="eager", timeout=2.0) for i in range(8)]
    seen = []
    for fin in pool.run(runs):
        time.sleep(0.3)
        seen.append((fin.run.key, fin.record.status))
    assert sorted(seen) == [(f"q{i}", "ok") for i in range(8)]
