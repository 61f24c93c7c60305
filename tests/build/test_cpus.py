"""A CPU quota (docker --cpus, a Kubernetes limit) caps the runs in flight like affinity does.

Unit tests on cgroup trees written to a temporary directory (v2, v1, nested, inside a
container), and one real ``sphinx-build -j 2`` in a cgroup limited to one CPU where this
machine lets a test make one (root, a writable cgroup hierarchy with the cpu controller).
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

from sphinx_autocast_demo.engine.parent.cpus import cores, cpu_quota

AFFINITY = len(os.sched_getaffinity(0))


def tree(tmp_path: Path, proc: str, files: dict[str, str]) -> tuple[Path, Path]:
    (tmp_path / "cgroup").write_text(proc, encoding="utf-8")
    root = tmp_path / "sys"
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return tmp_path / "cgroup", root


def test_v2_container_quota_rounds_up_and_never_exceeds_affinity(tmp_path):
    proc, root = tree(tmp_path, "0::/\n", {"cgroup.controllers": "cpu io", "cpu.max": "150000 100000"})
    assert cpu_quota(proc, root) == 1.5
    assert cores(proc, root) == min(AFFINITY, 2)


def test_v2_the_tightest_ancestor_counts(tmp_path):
    proc, root = tree(tmp_path, "0::/ci/job\n", {
        "cgroup.controllers": "cpu", "cpu.max": "max 100000",
        "ci/cpu.max": "100000 100000", "ci/job/cpu.max": "max 100000"})
    assert cpu_quota(proc, root) == 1.0
    assert cores(proc, root) == 1


def test_v1_co_mounted_controllers_and_paths_above_a_namespace(tmp_path):
    proc, root = tree(tmp_path, "4:cpuset,cpu,cpuacct:/../../ci\n", {
        "cpuset,cpu,cpuacct/cpu.cfs_quota_us": "-1", "cpuset,cpu,cpuacct/cpu.cfs_period_us": "100000",
        "cpuset,cpu,cpuacct/ci/cpu.cfs_quota_us": "300000",
        "cpuset,cpu,cpuacct/ci/cpu.cfs_period_us": "100000"})
    assert cpu_quota(proc, root) == 3.0


def test_v1_inside_a_container_reads_its_own_root(tmp_path):
    # The path names the host's hierarchy, which the container does not mount.
    proc, root = tree(tmp_path, "12:cpu,cpuacct:/docker/0123abcd\n11:memory:/docker/0123abcd\n", {
        "cpu,cpuacct/cpu.cfs_quota_us": "200000", "cpu,cpuacct/cpu.cfs_period_us": "100000"})
    assert cpu_quota(proc, root) == 2.0


@pytest.mark.parametrize(("proc", "files"), [
    ("0::/\n", {"cgroup.controllers": "cpu", "cpu.max": "max 100000"}),  # v2, no limit
    ("1:cpu:/\n", {"cpu/cpu.cfs_quota_us": "-1", "cpu/cpu.cfs_period_us": "100000"}),  # v1
    ("0::/\n", {"cpu.max": "100000 100000"}),  # hybrid: no v2 controllers at the root
    ("", {}),  # no cgroups at all
])
def test_no_quota_leaves_affinity(tmp_path, proc, files):
    proc_file, root = tree(tmp_path, proc, files)
    assert cpu_quota(proc_file, root) is None
    assert cores(proc_file, root) == AFFINITY
    assert cpu_quota(tmp_path / "missing", root) is None


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
    assert "autocast-demo: starting the worker (1 runs at a time)" in proc.stdout, proc.stdout
    assert "already copied" not in proc.stdout  # no idle core to copy on
    assert "autocast-demo: 16 runs forked from the worker, 0 in a new interpreter" in proc.stdout
