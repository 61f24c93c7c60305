"""The warm worker's speed tricks change how fast runs start, never what they compute.

Three tricks: spares that copy the pages a compile writes while they wait for their run
(``processes.prefault``, on a core the build leaves idle), eager runs in a zygote forked before
the warm-up, and inductor's ISA checks in a thread of the warm-up (``warm.isa_checks``). Real
torch: the same runs (the bf16 region under three values, compiled and eager) in a worker with
the tricks turned off and in workers with them on, at one run in flight (copying ahead) and at
one per core (not): every run forked, and the same status, printed output and tensors, bit for
bit. The page-level facts, on a buffer of our own in forked processes:
tests/unit/test_written_pages.py.
"""

from __future__ import annotations

import ast
import os
import textwrap

import pytest
from conftest import kernel_can_populate, pidfd_works, script_lines, thread_at_import

from sphinx_autocast_demo.engine.parent.pool import WorkerPool
from sphinx_autocast_demo.engine.parent.records import Finished, Run

CODE = textwrap.dedent("""\
    import torch
    def region(x, w):
        with torch.autocast("cpu", enabled=False):
            return (x.float() @ w.float()).sum()
    x = torch.randn(24, 24)
    w = torch.randn(24, 24, requires_grad=True)
    with torch.autocast("cpu", dtype=torch.bfloat16):
        z = torch.compile(region)(x, w)
    z.backward()
    print(z.item(), w.grad.sum().item())
    """)
VALUES = ["same_as_forward", "off", [{"device_type": "cpu", "dtype": {"__torch__": "bfloat16"}}]]
CORES = len(os.sched_getaffinity(0))


def runs(rounds: int, backend: str = "aot_eager", code: str = CODE,
         values: list = VALUES) -> list[Run]:
    return [Run(key=f"{round_}-{index}-{mode}", timeout=120, job={
        "setup": [], "code": code, "mode": mode, "backend": backend, "device": "cpu",
        "config": "torch._functorch.config.backward_pass_autocast", "value": value, "page": "x.rst"})
        for round_ in range(rounds) for index, value in enumerate(values) for mode in ("compiled", "eager")]


# Five rounds by default: the probe that learns which pages to copy reports after the first runs.
def run_all(jobs: int, rounds: int = 5, backend: str = "aot_eager", code: str = CODE,
            forked: bool = True, values: list = VALUES,
            **env: str) -> tuple[dict[str, tuple], list[Finished]]:
    pool = WorkerPool(jobs, env=env)
    try:
        pool.ready()
        finished = list(pool.run(runs(rounds, backend, code, values)))
    finally:
        pool.close()
    by_run: dict[str, list[tuple]] = {}
    for fin in finished:
        assert fin.fresh != forked, fin.record  # (forked: no thread of the warm-up was left)
        by_run.setdefault(fin.run.key.split("-", 1)[1], []).append(
            (fin.record.status, fin.record.output, fin.record.tensors, fin.data))
    # Every round computes the same, the early ones (nothing copied ahead yet) and the later
    # ones: each child starts from the same state.
    for key, seen in by_run.items():
        assert all(one == seen[0] for one in seen), key
    return {key: seen[0] for key, seen in by_run.items()}, finished


def test_copying_ahead_and_early_eager_runs_change_no_run_and_every_run_forks():
    without, plain = run_all(1, AUTOCAST_DEMO_PREFAULT="0", AUTOCAST_DEMO_EARLY_EAGER="0")
    with_tricks, serial = run_all(1)
    per_core, parallel = run_all(CORES)
    assert not any(fin.prefaulted for fin in plain)
    assert {status for status, *_ in without.values()} == {"ok"}, without
    # Bitwise: the same seedless randn in each run (every child starts from the same state),
    # whether an eager run was forked before the warm-up or after it.
    assert with_tricks == without
    assert per_core == without
    assert {fin.zygote for fin in plain} == {"warm"}
    for finished in (serial, parallel):
        # Compiled runs only from the warm worker; eager runs from the zygote forked before the
        # warm-up while it runs (over a second; an eager run ~20 ms: the first ones always).
        assert {fin.zygote for fin in finished if fin.run.job["mode"] == "compiled"} == {"warm"}
        # ... taken in the build's order: the ones it ran are the first eager runs.
        ahead = {fin.run.key for fin in finished if fin.zygote == "eager"}
        in_order = [run.key for run in runs(5) if run.job["mode"] == "eager"]
        assert ahead and ahead == set(in_order[:len(ahead)]), sorted(ahead)
    # As many runs in flight as cores: no core is idle to copy on.
    assert not any(fin.prefaulted for fin in parallel)
    if CORES > 1 and kernel_can_populate():
        copied = [fin.prefaulted for fin in serial]
        assert any(copied), copied  # once the probe reported: how soon is the machine's timing
        assert max(copied) > 8 << 20  # the pages a compile writes: ~36 MiB with torch 2.13


def test_inductors_isa_checks_in_a_thread_change_no_run():
    """The warm-up runs inductor's ISA checks in a thread while its inductor compile traces
    (``warm.isa_checks``); with ``AUTOCAST_DEMO_ISA_THREAD=0`` inductor's first compile runs
    them, as torch does alone. Inductor runs in a worker of each kind: the same vector ISA
    picked (the runs print it), the same status, output and tensors, bit for bit; every run
    forked (run_all), so no thread was left when the worker forked."""
    isa = CODE + "from torch._inductor.cpu_vec_isa import pick_vec_isa\nprint(pick_vec_isa())\n"
    alone, _ = run_all(CORES, rounds=1, backend="inductor", code=isa, AUTOCAST_DEMO_ISA_THREAD="0")
    threaded, _ = run_all(CORES, rounds=1, backend="inductor", code=isa)
    assert {status for status, *_ in alone.values()} == {"ok"}, alone
    assert threaded == alone


MODULE = textwrap.dedent("""\
    import warnings
    import torch
    warnings.simplefilter("ignore")  # (inductor's codegen warns: on a cache miss only)
    model = torch.nn.Sequential(torch.nn.Linear(20, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4))
    x = torch.randn(8, 20)
    for dtype in (torch.bfloat16, torch.float16):
        with torch.autocast("cpu", dtype=dtype):
            loss = torch.compile(model)(x).float().pow(2).mean()
        loss.backward()
    print(loss.item(), model[0].weight.grad.sum().item())
    """)


def test_a_run_forked_from_the_warm_worker_computes_what_a_new_interpreter_does(tmp_path):
    """What the warm-up compiles (one region on inductor; no module, no float16) changes no
    result: a module under both autocast dtypes, compiled with inductor and run eagerly, in
    children of the warm worker and in new interpreters, as ``python`` runs a script (a
    thread started at import stands for a library that leaves the worker unable to fork):
    the same status, output and tensors, bit for bit."""
    site = thread_at_import(tmp_path / "site")
    # (The value the backward differs most under: autocast as the forward's, the other dtype.)
    value = VALUES[2:]
    forked, _ = run_all(CORES, rounds=1, backend="inductor", code=MODULE, values=value)
    new, _ = run_all(CORES, rounds=1, backend="inductor", code=MODULE, values=value,
                     forked=False, PYTHONPATH=str(site))
    assert {status for status, *_ in forked.values()} == {"ok"}, forked
    assert new == forked


SWITCH = textwrap.dedent("""\
    import os, sys, threading
    from sphinx_autocast_demo.engine.child import warm
    started = []
    def start(thread, _start=threading.Thread.start):
        started.append(thread.name)
        _start(thread)
    threading.Thread.start = start
    os.environ["AUTOCAST_DEMO_ISA_THREAD"] = sys.argv[1]
    warm.import_stack("torch._functorch.config.backward_pass_autocast", "inductor")
    warm.warm_up()
    from torch._inductor.cpu_vec_isa import valid_vec_isa_list
    each = started.count("autocast-demo-isa-check")
    started = [name for name in started if name != "autocast-demo-isa-check"]
    print(each, len(warm._isas_checked()))
    print(started, valid_vec_isa_list.cache_info().currsize, threading.active_count())
    """)


@pytest.mark.parametrize(("switch", "threads"), [("1", ["autocast-demo-isa-checks"]), ("0", [])])
def test_the_isa_checks_run_in_their_thread_unless_switched_off(switch, threads):
    """The warm-up itself, in a process of its own: with the switch at its default the checks
    start in their thread, which asks each ISA in one of its own, and
    ``AUTOCAST_DEMO_ISA_THREAD=0`` starts none; either way the answer is kept for the process
    (asked once) and no thread is left."""
    lines = script_lines(SWITCH, switch)
    each, isas = map(int, lines[-2].split())
    assert each == (isas if threads else 0), lines  # (each ISA in a thread of its own)
    assert lines[-1] == f"{threads} 1 1", lines


ORDER = textwrap.dedent("""\
    import threading
    from sphinx_autocast_demo.engine.child import warm
    warm.import_stack("torch._functorch.config.backward_pass_autocast", "inductor")
    import torch._inductor.compile_fx as compile_fx
    from torch._inductor import cpu_vec_isa
    began, events = threading.Event(), []
    compile = compile_fx.compile_fx
    def traced(*args, **kwargs):  # dynamo has traced; inductor's compile begins
        events.append("compile")
        began.set()
        return compile(*args, **kwargs)
    compile_fx.compile_fx = traced
    check_build = cpu_vec_isa.VecISA.check_build
    def held(self, code):  # a check that cannot end before inductor's compile has begun
        events.append(f"check in {threading.current_thread().name}: begun {began.wait(120)}")
        began.set()  # (had it not begun, no other check waits)
        return check_build(self, code)
    cpu_vec_isa.VecISA.check_build = held
    warm.warm_up()
    own = cpu_vec_isa.valid_vec_isa_list.cache_info().currsize  # (torch's own, cached)
    print(len(warm._isas_checked()), own, events)
    """)


def test_inductors_warm_up_compile_begins_before_the_isa_checks_end():
    """Real inductor: checks held until the warm-up's inductor compile has begun still end, so
    the compile begins without waiting for them; they all ran in their threads (the compile
    ran none itself, it waited for theirs); torch's own list is back, cached."""
    lines = script_lines(ORDER)
    isas, own, events = lines[-1].split(" ", 2)
    assert own == "1", lines
    if isas == "0":
        pytest.skip("no vector ISA to check on this CPU (inductor's list adds its own unchecked)")
    checks = [event for event in ast.literal_eval(events) if event != "compile"]
    assert checks and set(checks) == {"check in autocast-demo-isa-check: begun True"}, events


PAIRS = textwrap.dedent("""\
    import os, sys, threading
    from sphinx_autocast_demo.engine.child import warm
    warm.import_stack("torch._functorch.config.backward_pass_autocast", "inductor")
    from torch._inductor import cpu_vec_isa
    lock, now, most = threading.Lock(), [0], [0]
    check_build = cpu_vec_isa.VecISA.check_build
    def counted(self, code):
        with lock:
            now[0] += 1
            most[0] = max(most[0], now[0])
        try:
            return check_build(self, code)
        finally:
            with lock:
                now[0] -= 1
    cpu_vec_isa.VecISA.check_build = counted
    read, write = os.pipe()
    eager = os.fork()  # the eager zygote: alive until its pipe closes, or ended at once
    if eager == 0:
        os.close(write)
        if sys.argv[1] == "alive":
            os.read(read, 1)
        os._exit(0)
    os.close(read)
    if sys.argv[1] == "ended":
        os.waitid(os.P_PID, eager, os.WEXITED | os.WNOWAIT)  # (ended, not reaped)
    if sys.argv[1] != "torch":
        warm.isa_checks(eager).join()
    os.close(write)
    os.waitpid(eager, 0)
    print(most[0], len(warm._isas_checked()), [str(isa) for isa in cpu_vec_isa.valid_vec_isa_list()])
    """)


def test_the_isa_checks_go_two_at_once_only_after_the_eager_zygote_ended():
    """Real inductor checks, counted as they build: one at a time while the eager zygote lives
    (its runs and a second g++ would pass the memory target), two at once after it ended; the
    list inductor keeps is the one torch finds alone, asked by its own compile ("torch")."""
    def ask(mode: str) -> tuple[int, int, str]:
        most, count, isas = script_lines(PAIRS, mode)[-1].split(" ", 2)
        return int(most), int(count), isas

    alive, ended, alone = ask("alive"), ask("ended"), ask("torch")
    # (Where we ask none, e.g. aarch64, whose list adds its ISA unchecked: none counted.)
    assert alive[0] == min(1, alive[1]), alive
    assert ended[0] == min(2 if pidfd_works() else 1, ended[1]), ended  # (no pidfd: never two)
    assert alive[2] == ended[2] == alone[2], (alive, ended, alone)
    if ended[1] < 2:
        pytest.skip(f"this CPU reports {ended[1]} vector ISA to check: none asked two at once")
