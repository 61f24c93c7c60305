"""A CPU quota (docker --cpus, a Kubernetes limit) caps the runs in flight like affinity does:
one real ``sphinx-build -j 2`` in a cgroup limited to one CPU, where this machine lets a test
make one (root, a writable cgroup hierarchy with the cpu controller). How cpus.py reads cgroup
trees (v2, v1, nested, inside a container) is tests/unit/test_cgroup_quota.py.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from conftest import copy_root

AFFINITY = len(os.sched_getaffinity(0))


@contextlib.contextmanager
def one_cpu_cgroup():
    """A cgroup limited to one CPU's time, or skip: v2 where the root delegates the cpu
    controller, else v1's cpu hierarchy."""
    base = Path("/sys/fs/cgroup")
    name = f"autocast-demo-test-{uuid.uuid4().hex[:8]}"
    v2 = (base / "cgroup.controllers").exists()
    group = base / name if v2 else base / "cpu" / name
    try:
        group.mkdir()
    except OSError as exc:
        pytest.skip(f"cannot make a cgroup here ({exc})")
    try:
        try:
            if v2:
                (group / "cpu.max").write_text("100000 100000")
            else:
                (group / "cpu.cfs_period_us").write_text("100000")
                (group / "cpu.cfs_quota_us").write_text("100000")
        except OSError as exc:
            pytest.skip(f"cannot set a CPU quota here ({exc})")
        yield group
    finally:
        with contextlib.suppress(OSError):
            group.rmdir()


@pytest.mark.skipif(AFFINITY < 2, reason="needs 2 CPUs to show the quota capping -j 2")
def test_a_real_build_in_a_one_cpu_cgroup_runs_one_at_a_time(tmp_path_factory):
    src = copy_root("parallel", tmp_path_factory)
    with one_cpu_cgroup() as group:
        join = f'echo $$ > {group / "cgroup.procs"} && exec "$@"'
        if subprocess.run(["sh", "-c", join, "sh", "true"], check=False).returncode:
            pytest.skip("cannot move a process into the cgroup")
        proc = subprocess.run(
            ["sh", "-c", join, "sh", sys.executable, "-m", "sphinx", "-b", "html", "-j", "2", "-v",
             str(src), str(src / "_build" / "html")],
            capture_output=True, text=True, timeout=600)
        assert (group / "cgroup.procs").read_text() == ""  # the build left nothing running
    assert proc.returncode == 1, proc.stderr  # the root's stale page fails, as outside
    assert "autocast-demo: starting the worker (1 run at a time)" in proc.stdout, proc.stdout
    assert "already copied" not in proc.stdout  # no idle core to copy on
    assert "autocast-demo: 16 runs forked from the worker, 0 in a new interpreter" in proc.stdout
