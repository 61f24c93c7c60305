"""What the worker asks of the operating system: forks, process lifetimes, descriptors, threads.

Linux-specific where it must be (``prctl``, ``/proc``); elsewhere each helper does what it can.
Imported by the worker only.
"""

from __future__ import annotations

import array
import contextlib
import ctypes
import os
import select
import signal
import sys
import threading
import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36


def fork(child: Callable[[], int]) -> int:
    """Fork a process that runs ``child`` and exits with what it returns: 70 if it raised (its
    traceback on its stderr, the worker's log or the run's output). Returns the pid, in the
    parent only: the child never leaves ``child`` for our callers' code, and ends without the
    interpreter's teardown (its ``atexit`` and buffers are the parent's copies)."""
    pid = os.fork()
    if pid == 0:
        code = 70
        try:
            code = child()
        except BaseException:
            import traceback

            traceback.print_exc()
        finally:
            os._exit(code)
    return pid


def die_with_parent(sig: int = signal.SIGKILL) -> None:
    """Ask Linux to signal this process when its parent dies, so nothing outlives a build."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, sig, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: stdin EOF still ends the worker
        pass


def renew_thread_pool() -> None:
    """Rebuild, in a forked child, the intra-op thread pool the zygote made, before any thread
    can: a fork marks it corrupt, and a GPU build's 8 autograd threads replacing it at once
    abort the run (SIGABRT "Invalid thread pool!", measured with 2.14.1+cu130)."""
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


MADV_POPULATE_WRITE = 23  # Linux 5.14 and later
PAGE = 4096


def _private_anonymous() -> list[tuple[int, int]]:
    """(start, end) of this process's writable private memory that no file backs: the heap,
    Python's arenas, torch's allocations."""
    with open("/proc/self/maps", encoding="utf-8") as f:
        maps = f.read().splitlines()
    found = []
    for line in maps:
        fields = line.split()
        if fields[1] == "rw-p" and (len(fields) < 6 or fields[5] == "[heap]"):
            low, high = (int(x, 16) for x in fields[0].split("-"))
            found.append((low, high))
    return found


def _madvise() -> Any:
    madvise = ctypes.CDLL(None, use_errno=True).madvise
    madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
    return madvise


def written_pages() -> list[tuple[int, int]]:
    """The private anonymous pages this forked process has of its own (written since the fork,
    or new), as (address, bytes) runs of adjacent pages; empty where it cannot tell.

    From ``/proc/self/pagemap``: a page present and mapped by this process alone. Only an
    address list: nothing of the contents is read. It includes what the caller allocated for
    itself, the probe's own buffers: a spare copies a little more than a run needs.
    """
    if not sys.platform.startswith("linux"):
        return []
    present_alone = (1 << 63) | (1 << 56)  # PM_PRESENT | PM_MMAP_EXCLUSIVE
    runs: list[list[int]] = []
    try:
        regions = _private_anonymous()
        fd = os.open("/proc/self/pagemap", os.O_RDONLY)
    except OSError:
        return []
    try:
        for low, high in regions:
            entries = array.array("Q")
            entries.frombytes(os.pread(fd, (high - low) // PAGE * 8, low // PAGE * 8))
            for index, entry in enumerate(entries):
                if entry & present_alone == present_alone:
                    address = low + index * PAGE
                    if runs and runs[-1][0] + runs[-1][1] == address:
                        runs[-1][1] += PAGE
                    else:
                        runs.append([address, PAGE])
    except OSError:
        return []
    finally:
        os.close(fd)
    return [(address, size) for address, size in runs]


def can_prefault() -> bool:
    """Whether this kernel knows ``MADV_POPULATE_WRITE`` (Linux 5.14+): asked with an empty
    range, which it checks the advice of and then does nothing with."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        return bool(_madvise()(0, 0, MADV_POPULATE_WRITE) == 0)
    except (OSError, AttributeError):
        return False


def prefault(runs: list[tuple[int, int]], until: int | None = None) -> int:
    """Give this forked process now its own copies of the zygote's pages in ``runs``, as a
    write to each would (``MADV_POPULATE_WRITE``, one call per run of pages); returns the
    bytes done. It stops early once descriptor ``until`` has something to read: the run has
    come, and must not wait for pages it may never write. Only where :func:`can_prefault`.

    A spare child waiting for its run does this on a core the build leaves idle: a compile
    then takes ~8,000 fewer page faults (measured, torch 2.13: ~110 -> ~90 ms). The contents
    stay what they were, byte for byte: only which physical page holds them changes.
    """
    madvise = _madvise()
    arrived = select.poll()
    if until is not None:
        arrived.register(until, select.POLLIN)
    done = 0
    for index, (address, size) in enumerate(runs):
        if until is not None and index % 64 == 0 and arrived.poll(0):
            return done
        if madvise(address, size, MADV_POPULATE_WRITE) == 0:  # else unmapped there: skipped
            done += size
    return done


class Ended:
    """Whether the process ``pid``, our child, has ended, asked without reaping it (a
    zygote reaps its children itself: :func:`reaped`); with no ``pid``, or no way to tell (no
    pidfd), never. Its descriptor is closed by :meth:`close` before anything forks."""

    def __init__(self, pid: int | None) -> None:
        self.fd: int | None = None
        self.ended = False
        if pid is not None:
            try:
                self.fd = os.pidfd_open(pid)
            except ProcessLookupError:
                self.ended = True
            except (AttributeError, OSError):
                pass

    def __call__(self) -> bool:
        if self.fd is not None:
            poll = select.poll()
            poll.register(self.fd, select.POLLIN)
            try:
                self.ended = bool(poll.poll(0))
            except OSError:  # (not known: as if it lived)
                return False
            if self.ended:
                self.close()
        return self.ended

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def reaped() -> Iterator[tuple[int, int]]:
    """(pid, wait status) of each child of ours that has ended, without waiting for any."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:  # none left
            return
        if pid == 0:  # none ended
            return
        yield pid, status


def adopt_orphans() -> None:
    """Make what a snippet detaches from its process group (``setsid``, ``start_new_session``)
    our child when its parent ends, instead of init's, so that :func:`kill_adopted` ends it."""
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


def terminate_and_reap(pid: int, grace: float = 5.0) -> None:
    """SIGTERM our child ``pid`` and reap it, waiting ``grace`` seconds at most."""
    with contextlib.suppress(ProcessLookupError, ChildProcessError):
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + grace
        while os.waitpid(pid, os.WNOHANG)[0] == 0 and time.monotonic() < deadline:
            time.sleep(0.01)


def killpg(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)
