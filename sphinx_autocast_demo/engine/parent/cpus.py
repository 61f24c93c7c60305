"""How many CPUs this build may use: what sizes the pool and decides copying ahead.

``os.cpu_count()`` counts the machine; affinity (``taskset``, a container's cpuset) can allow
fewer, and so can a CPU quota (``docker run --cpus 2``, a Kubernetes CPU limit, a CI runner's
container), which leaves affinity at every CPU of the host: ``-j auto`` on a 64-CPU host would
then start 64 runs on 2 CPUs' worth of time, and copying ahead would take time no core has.
Standard library only: the build and the tests read it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from pathlib import Path


def cores(proc: Path = Path("/proc/self/cgroup"), root: Path = Path("/sys/fs/cgroup")) -> int:
    """CPUs this process may use: its affinity, capped by its cgroups' CPU quota (rounded up)."""
    try:
        count = len(os.sched_getaffinity(0))
    except AttributeError:  # not Linux
        return os.cpu_count() or 1
    quota = cpu_quota(proc, root)
    return max(1, min(count, math.ceil(quota))) if quota else count


def cpu_quota(proc: Path = Path("/proc/self/cgroup"),
              root: Path = Path("/sys/fs/cgroup")) -> float | None:
    """The smallest CPU quota, in CPUs, of this process's cgroup and its ancestors (cgroup v2
    ``cpu.max``, v1 ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us``); None: no quota, or no cgroups."""
    try:
        lines = proc.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    found: list[float] = []
    for line in lines:
        hierarchy, controllers, path = [*line.split(":", 2), "", ""][:3]
        if hierarchy == "0" and controllers == "":  # v2: one hierarchy for every controller
            if (root / "cgroup.controllers").exists():  # (hybrid systems mount it elsewhere,
                found += _quotas(root, path, _v2)       # without the cpu controller)
        elif "cpu" in controllers.split(","):  # v1: the cpu controller's own hierarchy
            mount = next((root / name for name in (controllers, "cpu", "cpu,cpuacct")
                          if (root / name / "cpu.cfs_quota_us").exists()), None)
            if mount is not None:
                found += _quotas(mount, path, _v1)
    return min(found) if found else None


def _quotas(mount: Path, path: str, read: Callable[[Path], float | None]) -> list[float]:
    """Each quota from the process's cgroup up to the mount's root. Inside a container the
    path may name the host's hierarchy, which is not mounted there: its root is then the
    container's own cgroup."""
    found = []
    parts = [p for p in path.split("/") if p not in ("", ".", "..")]  # (".." past a namespace)
    for depth in range(len(parts), -1, -1):
        directory = mount.joinpath(*parts[:depth])
        if directory.is_dir():
            quota = read(directory)
            if quota is not None:
                found.append(quota)
    return found


def _v2(directory: Path) -> float | None:
    try:
        limit, period = (directory / "cpu.max").read_text(encoding="utf-8").split()[:2]
    except (OSError, ValueError):
        return None
    return None if limit == "max" else int(limit) / int(period)


def _v1(directory: Path) -> float | None:
    try:
        limit = int((directory / "cpu.cfs_quota_us").read_text(encoding="utf-8"))
        period = int((directory / "cpu.cfs_period_us").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return None if limit <= 0 or period <= 0 else limit / period
