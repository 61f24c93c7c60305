"""The page-level facts under the warm worker's memory tricks, on a buffer of our own in forked
processes: which pages a child wrote is what it reports, and copying ahead (``processes.prefault``)
leaves every byte as it was, stops when the run comes and can be turned off. The same runs in
workers with the tricks on and off, bit for bit: tests/build/test_worker_memory.py."""

from __future__ import annotations

import ctypes
import json
import mmap
import os

import pytest
from conftest import kernel_can_populate

from sphinx_autocast_demo.engine.child.processes import PAGE, prefault, written_pages
from sphinx_autocast_demo.engine.child.serving import copy_ahead
from sphinx_autocast_demo.engine.isolation import take

linux_only = pytest.mark.skipif(not os.path.exists("/proc/self/pagemap"), reason="Linux only")


def in_child(work) -> object:
    """``work()`` in a forked child; its JSON result."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        code = 1
        try:
            os.write(write, json.dumps(work()).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(write)
    with os.fdopen(read, "rb") as f:
        out = f.read()
    assert os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) == 0
    return json.loads(out)


@pytest.fixture
def buffer():
    """64 private pages, each filled with its own number, all present before any fork."""
    mem = mmap.mmap(-1, 64 * PAGE, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
    for page in range(64):
        mem[page * PAGE:(page + 1) * PAGE] = bytes([page]) * PAGE
    first = ctypes.c_char.from_buffer(mem)
    address = ctypes.addressof(first)
    del first  # the mmap can close only once nothing points into it
    yield mem, address
    mem.close()


def pages_of(runs, address: int) -> list[int]:
    return sorted(page for start, size in runs for page in range(
        (start - address) // PAGE, (start + size - address) // PAGE) if 0 <= page < 64)


@linux_only
def test_a_forked_child_reports_the_pages_it_wrote(buffer):
    mem, address = buffer

    def write_three() -> list[int]:
        for page in (3, 4, 10):
            mem[page * PAGE] = 200
        return pages_of(written_pages(), address)

    assert in_child(write_three) == [3, 4, 10]


@linux_only
def test_copying_ahead_copies_without_changing_a_byte(buffer):
    mem, address = buffer

    def copy_ahead() -> list:
        copied = prefault([(address + 5 * PAGE, 3 * PAGE)])
        return [copied, pages_of(written_pages(), address),
                all(mem[p * PAGE:(p + 1) * PAGE] == bytes([p]) * PAGE for p in range(64))]

    if not kernel_can_populate():
        pytest.skip("this kernel cannot populate pages writable (MADV_POPULATE_WRITE: Linux 5.14+)")
    copied, pages, intact = in_child(copy_ahead)
    assert (copied, pages, intact) == (3 * PAGE, [5, 6, 7], True)  # own copies, same bytes
    assert all(mem[p * PAGE:(p + 1) * PAGE] == bytes([p]) * PAGE for p in range(64))


@linux_only
def test_copying_ahead_stops_when_the_run_comes_and_can_be_turned_off(buffer, monkeypatch):
    _, address = buffer
    read, write = os.pipe()
    os.write(write, b"{}")  # the run is there already
    try:
        assert in_child(lambda: prefault([(address, 64 * PAGE)], until=read)) == 0
    finally:
        os.close(read)
        os.close(write)
    # The switch is asked once, where the worker decides; the pool's word is "a core idles".
    idle_core = take({"AUTOCAST_DEMO_COPY_AHEAD": "1"}).idle_core
    assert copy_ahead(idle_core) is kernel_can_populate()
    assert copy_ahead(take({"AUTOCAST_DEMO_COPY_AHEAD": "0"}).idle_core) is False
    monkeypatch.setenv("AUTOCAST_DEMO_PREFAULT", "0")
    assert copy_ahead(idle_core) is False
