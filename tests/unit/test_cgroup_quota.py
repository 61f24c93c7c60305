"""A CPU quota (docker --cpus, a Kubernetes limit) caps the runs in flight like affinity does:
cpus.py on cgroup trees written to a temporary directory (v2, v1, nested, inside a container).
A real build in a cgroup limited to one CPU is tests/build/test_cpus.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

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
