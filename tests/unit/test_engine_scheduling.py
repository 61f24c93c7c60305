"""Where the build sends its runs while the worker warms up: the pool's scheduling alone
(``WorkerPool._pick``), with no worker started. The engine's builds: tests/build/test_engine.py."""

from __future__ import annotations

import pytest


@pytest.mark.parametrize(("jobs", "cpus", "eager_at_once"),
                         [(1, 2, 1), (2, 2, 1), (4, 4, 3), (2, 16, 2), (1, 1, 1)])
def test_while_the_worker_warms_up_eager_runs_leave_it_a_core(jobs, cpus, eager_at_once):
    """The warm-up is on the build's path; the eager runs are not (they end before it at -j 1):
    at -j 2 on 2 cores a second eager run at a time took the warm-up's core (measured: cold
    -j 2 builds 0.976x in 8 alternating pairs without it). Which runs go where never changes
    what they do: test_worker_memory compares them bit for bit at one run per core."""
    from types import SimpleNamespace

    from sphinx_autocast_demo.engine.parent.channels import Channel, Waiting
    from sphinx_autocast_demo.engine.parent.pool import WorkerPool, eager_jobs
    from sphinx_autocast_demo.engine.parent.records import Run

    pool = WorkerPool.__new__(WorkerPool)  # its scheduling only: no worker
    pool.jobs, pool.eager_jobs = jobs, eager_jobs(jobs, cpus)
    pool.worker = SimpleNamespace(channel=Channel(-1, -1))  # type: ignore[assignment]
    pool.eager = Channel(-1, -1)
    waiting = Waiting([Run(key=f"{i}-{mode}", job={"mode": mode}, timeout=1.0)  # type: ignore[typeddict-item]
                       for i in range(8) for mode in ("compiled", "eager")])
    sent = 0
    while sent < jobs and (picked := pool._pick(waiting)) is not None:  # as WorkerPool._run asks
        assert picked[1] is pool.eager and picked[0].job["mode"] == "eager"
        pool.eager.in_flight += 1
        sent += 1
    assert sent == eager_at_once
    pool.warm.ready = {"torch": "2.13.0"}  # warm: every run, in order, to the warm worker
    assert pool._pick(waiting) == (waiting.runs[0], pool.warm)
