"""What the worker asks of the operating system: process lifetimes, descriptors, threads.

Linux-specific where it must be (``prctl``, ``/proc``); elsewhere each helper does what it can.
Imported by the worker only.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import threading

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """Ask Linux to signal this process when its parent dies, so nothing outlives a build."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: stdin EOF still ends the worker
        pass


def renew_thread_pool() -> None:
    """Rebuild, in a forked child, the intra-op thread pool the zygote made, before any thread can.

    ``torch.set_num_threads(1)`` in the zygote created ATen's pthreadpool; a fork marks it
    corrupt, and the next ``at::set_num_threads`` replaces it without a lock. On a GPU build
    the child's first backward starts 8 autograd device threads at once, each of which calls
    it: one can find the pool released and not yet replaced and aborts the run with SIGABRT
    ("pool INTERNAL ASSERT FAILED at ATen/ParallelOpenMP.cpp: Invalid thread pool!", measured
    with 2.14.1+cu130). Replaced here, by the only thread, nothing is left to race for.
    """
    import torch

    torch.set_num_threads(1)


def running_threads() -> list[str]:
    """The threads of this process besides the calling one, by name (empty: forking is safe).

    A Python thread by its Python name; a native one (a BLAS pool) by its kernel name.
    """
    try:
        tids = [int(tid) for tid in os.listdir("/proc/self/task")]
    except OSError:  # no /proc: trust the warm-up
        return []
    python = {t.native_id: t.name for t in threading.enumerate()}
    names = []
    for tid in tids:
        if tid == threading.get_native_id():
            continue
        try:
            with open(f"/proc/self/task/{tid}/comm", encoding="utf-8", errors="replace") as f:
                names.append(python.get(tid) or f.read().strip())
        except OSError:  # ended meanwhile
            pass
    return names


def adopt_orphans() -> None:
    """Make what a snippet detaches from its process group (``setsid``, ``start_new_session``)
    our child when its parent ends, instead of init's, so that :func:`_kill_adopted` ends it."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


def kill_adopted() -> None:
    """Kill every child of ours: at the end of a build, only runs and adopted orphans are."""
    me = str(os.getpid())
    for entry in os.listdir("/proc") if os.path.isdir("/proc") else ():
        try:
            with open(f"/proc/{entry}/stat", encoding="utf-8") as f:
                parent = f.read().rsplit(")", 1)[1].split()[1]
        except (OSError, IndexError):
            continue
        if parent == me:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(int(entry), signal.SIGKILL)


def killpg(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
