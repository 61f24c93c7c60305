"""How the warm-up asks inductor's ISA checks (``warm._ask_each``, ``processes.Ended``): one at a
time while the eager zygote lives, two once it has ended; and how inductor's compile waits for
them only where it asks for the list (``warm._waiting_for``). Fake ISAs that sleep in ``bool`` and
count how many are asked at once; real processes for the end of the eager zygote. Real torch
and inductor's checks: tests/build/test_worker_memory.py."""

from __future__ import annotations

import os
import threading
import time

import pytest
from conftest import pidfd_works

from sphinx_autocast_demo.engine.child.processes import Ended
from sphinx_autocast_demo.engine.child.warm import _ask_each, _waiting_for

needs_pidfd = pytest.mark.skipif(not pidfd_works(), reason="no pidfd_open here: the checks stay one "
                                 "at a time (test_no_eager_zygote_never_allows_two)")


def left() -> list[str]:
    """The checks' threads still alive (none may be when the worker forks)."""
    return [t.name for t in threading.enumerate() if t.name.startswith("autocast-demo-isa")]


class Isas:
    """ISAs whose answer takes ``seconds``; ``most`` is the most asked at once, ``events``
    each ask's start and end in order."""

    def __init__(self, count: int, seconds: float = 0.15) -> None:
        self.lock = threading.Lock()
        self.now = self.most = 0
        self.asked: list[int] = []
        self.events: list[str] = []
        self.isas = [self.Isa(self, i, seconds) for i in range(count)]

    class Isa:
        def __init__(self, owner: Isas, index: int, seconds: float) -> None:
            self.owner, self.index, self.seconds = owner, index, seconds

        def __bool__(self) -> bool:
            owner = self.owner
            with owner.lock:
                owner.now += 1
                owner.most = max(owner.most, owner.now)
                owner.asked.append(self.index)
                owner.events.append(f"start {self.index}")
            time.sleep(self.seconds)
            with owner.lock:
                owner.now -= 1
                owner.events.append(f"end {self.index}")
            if self.index == 1:
                raise RuntimeError("g++ failed")  # (inductor's list asks again and says why)
            return True


def test_one_at_a_time_until_two_may_run():
    isas = Isas(3)
    _ask_each(isas.isas, lambda: False)
    assert isas.most == 1
    assert sorted(isas.asked) == [0, 1, 2]  # (a failing check stops none of the others)
    assert left() == []


def test_two_at_once_when_allowed_and_never_more():
    isas = Isas(3)
    _ask_each(isas.isas, lambda: True)
    assert isas.most == 2
    assert sorted(isas.asked) == [0, 1, 2]
    assert left() == []


def test_the_second_starts_when_allowed_not_after_the_first():
    """Allowed once the first is being asked (as when the eager zygote ends then): the second
    starts beside it, not after it."""
    isas = Isas(2, seconds=1.0)
    _ask_each(isas.isas, lambda: bool(isas.asked))
    assert isas.most == 2
    assert isas.events.index("start 1") < isas.events.index("end 0")


def test_a_failure_in_between_leaves_no_thread_running():
    isas = Isas(3, seconds=0.3)
    answers = iter([False])

    def two_at_once() -> bool:
        return next(answers)  # (StopIteration the second time, with the first check running)

    with pytest.raises(StopIteration):
        _ask_each(isas.isas, two_at_once)
    assert left() == []
    assert isas.asked == [0]


def test_no_eager_zygote_never_allows_two():
    assert Ended(None)() is False


@needs_pidfd
def test_an_eager_zygote_allows_two_once_it_has_ended():
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the eager zygote: lives until its pipe closes
        os.close(write)
        os.read(read, 1)
        os._exit(0)
    os.close(read)
    ended = Ended(pid)
    try:
        assert ended() is False
        os.close(write)
        write = -1
        deadline = time.monotonic() + 10
        while not ended() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert ended() is True  # ended but not reaped: its zygote reaps it
        assert ended.fd is None  # (no descriptor left for the runs to inherit)
    finally:
        ended.close()
        if write >= 0:
            os.close(write)  # (else the child would wait forever, and this test with it)
        os.waitpid(pid, 0)


@needs_pidfd
def test_a_process_already_reaped_has_ended():
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    assert Ended(pid)() is True


class IsaModule:
    """Where torch keeps the list: ``valid_vec_isa_list`` records who asked, and when."""

    def __init__(self, events: list[str]) -> None:
        self.events = events

    def valid_vec_isa_list(self) -> list[str]:
        self.events.append(f"list asked by {threading.current_thread().name}")
        return ["avx2"]


def test_the_compile_runs_while_the_checks_run_and_waits_for_them_where_it_asks():
    events: list[str] = []
    module = IsaModule(events)
    own = module.valid_vec_isa_list
    may_end = threading.Event()

    def check() -> None:
        may_end.wait(10)
        events.append("checks ended")
        events.append(f"their own list: {module.valid_vec_isa_list()}")  # (no wait for itself)

    checks = threading.Thread(target=check, name="checks")
    checks.start()
    with _waiting_for(checks, module):
        events.append("compile traces")  # (the checks have not ended)
        may_end.set()
        assert module.valid_vec_isa_list() == ["avx2"]  # (waits for the checks)
        events.append("compile lowers")
    checks.join()
    assert events == ["compile traces", "checks ended", "list asked by checks",
                      "their own list: ['avx2']", "list asked by MainThread", "compile lowers"]
    assert module.valid_vec_isa_list == own  # torch's own again


def test_without_checks_nothing_waits_and_nothing_is_replaced():
    module = IsaModule([])
    own = module.valid_vec_isa_list
    with _waiting_for(None, module):
        assert module.valid_vec_isa_list == own
    assert module.valid_vec_isa_list == own


def test_torchs_own_list_is_back_when_the_compile_fails():
    module = IsaModule([])
    own = module.valid_vec_isa_list
    checks = threading.Thread(target=lambda: None)
    checks.start()
    with pytest.raises(RuntimeError), _waiting_for(checks, module):
        raise RuntimeError("the warm-up's compile failed")
    checks.join()
    assert module.valid_vec_isa_list == own
