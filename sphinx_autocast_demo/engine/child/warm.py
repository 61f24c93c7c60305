"""What the worker does before its first fork, and what its probe repeats after it.

The worker (:mod:`.worker`) imports torch and the compiler stack and compiles what demos
compile, so that every child inherits it warm; a probe child rehearses the same compiles to
learn which of the zygote's pages a run writes (:func:`.processes.written_pages`). Our own code
only: no writer's code runs before a fork.
"""

from __future__ import annotations

import contextlib
import gc
import os
import platform
import sys
import threading
from collections.abc import Callable, Iterator
from typing import Any
from unittest import mock

from ..protocol import Ready
from .imports import remember_modules, track_reads
from .processes import Ended, renew_thread_pool

#: The build's backend (``autocast_demo_backend``), whose compile the warm-up makes warm.
_BACKEND = "inductor"


def import_stack(config: str, backend: str) -> Ready:
    """Import torch and the compiler stack, and check that the demos' ``config`` exists;
    ``backend`` is the one the warm-up compiles with."""
    # Before the first compile: a forked child inherits an OpenMP pool it cannot use and
    # deadlocks in the backward unless the pool was never started with more than one thread.
    import torch

    torch.set_num_threads(1)
    import torch._dynamo
    import torch._functorch.aot_autograd  # (each run patches its entry points: engine/proofs)
    import torch._functorch.config

    from .job import resolve_config

    # From here on, the files read are the writer's business (a config module beside the docs
    # that reads its own data): what the runs' results, and a kept worker, stand for.
    track_reads()
    try:
        resolve_config(config)
    except (LookupError, ImportError) as exc:
        return {"error": f"torch {torch.__version__} cannot run these demos: {exc}",
                "fault": "no-config" if isinstance(exc, LookupError) else "config-import",
                "torch": torch.__version__}
    global _BACKEND
    _BACKEND = backend
    remember_modules()  # (for the eager zygote, forked next)
    # NVML-based (PYTORCH_NVML_BASED_CUDA_CHECK): answers without initialising CUDA.
    return {"torch": torch.__version__, "python": sys.version.split()[0],
            "cuda": torch.cuda.is_available()}


def warm_up(eager: int | None = None) -> None:
    """Run one tiny compile, forward and backward of what demos do, so that every child
    inherits the compiler stack initialised and its caches filled; ``eager``: the eager
    zygote's pid, while its runs run beside the warm-up (see :func:`isa_checks`)."""
    import torch

    gpu_build = is_gpu_build(torch)
    warm_compiles(torch, gpu_build, isa_thread=os.environ.get("AUTOCAST_DEMO_ISA_THREAD") != "0",
                  eager=eager)
    if gpu_build:
        # Inductor imports it in a child and, without a CUDA runtime, it logs "No CUDA runtime
        # is found" into the run's printed output: let it log here, into the worker's log.
        import torch.utils.cpp_extension
    freeze()
    remember_modules()


def freeze() -> None:
    """Keep the children's garbage collector off what they inherit: they never free it, and
    touching it would copy every page of the zygote (measured: forked runs twice as fast)."""
    gc.collect()
    gc.freeze()


def is_gpu_build(torch: Any) -> bool:
    return torch.version.cuda is not None or torch.version.hip is not None


def rehearse() -> None:
    """In a child forked for the purpose: compile as runs do, so that its pages show what
    runs write (see ``zygote.Zygote._probe``)."""
    import torch
    import torch._dynamo

    renew_thread_pool()
    torch._dynamo.reset()
    warm_compiles(torch, is_gpu_build(torch))


def warm_compiles(torch: Any, gpu_build: bool, isa_thread: bool = False,
                  eager: int | None = None) -> None:
    """Compile, run and differentiate what demos do, so that children inherit it warm;
    ``isa_thread``: inductor's ISA checks in a thread meanwhile (see :func:`isa_checks`)."""
    # Trace what demos trace (a region that turns autocast off and upcasts, a backward; on
    # aot_eager a module and both autocast dtypes too): dynamo, AOTAutograd and the backend
    # import and initialise much lazily on first use, and a child that inherits it all compiles
    # in ~0.2 s instead of ~0.8 s. On inductor one C++ kernel, the forward's: it fills what
    # every CPU kernel's compile needs first (the ISA list, the precompiled header's hash,
    # keyed alike for all of them). The backward, ``w``'s gradient an expand of the output's,
    # compiles to no kernel: a second kernel made a cold warm-up ~0.5 s longer, and a matmul
    # (an extern kernel and a third one) ~0.6 s, and no child faster (measured:
    # benchmarks/README.md). It must compile as one graph: a call dynamo does not trace there
    # (``os.environ.get``, measured) left it uncompiled, every child hashed the header again,
    # and the benchmark's cold build took 46 s instead of 29 s (tests/build/test_warm_up.py).
    def region(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        with torch.autocast("cpu", enabled=False):
            return (x.float() * 2).sum() + w.float().sum()

    # On a GPU build (measured: 2.14.1+cu130, no GPU) the autograd engine starts one thread per
    # device it knows of (8 pt_autograd_N threads, with no GPU) the first time it runs, and a
    # compile that needs gradients runs it (AOTAutograd traces the backward). Started here, the
    # threads are missing in every forked child, whose backward then fails ("Unable to handle
    # autograd's threading in combination with fork-based multiprocessing"). So there the same
    # compiles run without gradients: dynamo, AOTAutograd and fake tensors get warm (a child's
    # first compile ~0.9 s instead of ~1.6 s) and no thread starts; ``main`` checks that.
    w = torch.ones(2, 2, requires_grad=True)
    # The build's backend: inductor (torch.compile's own default, and ours) imports and
    # initialises its code generator and C++ toolchain on first use (~3 s), once here instead
    # of in every child; a site on aot_eager does not wait for it (a demo that names inductor
    # then pays it in its run). On inductor one compile: aot_eager compiles of a module and
    # float16 before it made no child measurably faster on a warm inductor cache and cost an
    # edit's build ~0.4 s (measured: benchmarks/README.md).
    if _BACKEND in ("aot_eager", "eager"):
        linear = torch.nn.Linear(2, 2)
        warm = [("aot_eager", torch.bfloat16), ("aot_eager", torch.float16)]
    else:
        linear = None
        warm = [(_BACKEND, torch.bfloat16)]
    checks = isa_checks(eager) if isa_thread and _BACKEND == "inductor" else None
    try:
        with _waiting_for(checks, torch._inductor.cpu_vec_isa if checks else None):
            for backend, dtype in warm:
                with torch.autocast("cpu", dtype=dtype), torch.set_grad_enabled(not gpu_build):
                    out = torch.compile(region, backend=backend)(torch.ones(2, 2), w)
                    if linear is not None:
                        out = out + torch.compile(linear, backend=backend)(torch.ones(2, 2)).sum()
                if not gpu_build:
                    out.backward()
                torch._dynamo.reset()
    finally:
        if checks:
            checks.join()  # (no thread may be left when the worker forks)


@contextlib.contextmanager
def _waiting_for(checks: threading.Thread | None, isas: Any) -> Iterator[None]:
    """Inductor's compile starts at once and waits for ``checks`` where it first asks for the
    ISA list (``valid_vec_isa_list`` in the module ``isas``, torch's only way to it), so its
    tracing (~0.6-1.6 s) runs while they run. Without the wait it would run the checks again
    beside them (torch keeps their answers without a lock, and an AVX512 check changes its
    ISA's flags while it runs). The checks take no lock the compile may hold (only their own
    file locks and processes), so the wait ends. Torch's own list is back before anything
    forks."""
    if checks is None:
        yield
        return
    own = isas.valid_vec_isa_list

    def answered() -> Any:
        if threading.current_thread() is not checks:
            checks.join()
        return own()

    with mock.patch.object(isas, "valid_vec_isa_list", answered):
        yield


def isa_checks(eager: int | None = None) -> threading.Thread | None:
    """Inductor's ISA checks, started in a thread (None: this torch has none to start, or no
    thread can start: inductor's compile then runs them, as torch alone does).

    Inductor's first CPU compile builds and loads a test program per vector ISA the CPU
    reports, one g++ and one Python process after another. In a thread they wait on those while
    the warm-up's inductor compile traces, which then waits for their answer where it asks
    (:func:`_waiting_for`); torch keeps it for the process (measured, 2 cores, one process: the
    warm-up 1.8 s instead of 2.65 s on a warm inductor cache; on an empty one 8.2-8.5 s with a
    two-kernel region, against 9.6-10.2 s with the checks beside aot_eager compiles and a
    matmul). One g++ at a time while the eager zygote ``eager`` lives, two once it has ended
    (:func:`_ask_each`): a second g++ holds ~200 MiB, which beside the eager runs went past the
    memory target, and after them fits under what the compiled runs hold
    (``benchmarks/README.md``). What the checks import is imported, and inductor's cache
    directory (which it sets in the process environment) set, here first: no module is imported
    by two threads at once, and the one variable the threads set (``TORCHINDUCTOR_CACHE_DIR``,
    by every cache write) gets the value it has. Every thread is joined before anything forks.
    ``AUTOCAST_DEMO_ISA_THREAD=0`` leaves the checks to inductor's compile."""
    try:
        import torch._inductor.codecache
        import torch.utils.cpp_extension  # (the checks' compiler flags import it)
        from torch._inductor.cpu_vec_isa import valid_vec_isa_list

        torch._inductor.codecache.get_lock_dir()
        isas = _isas_checked()
    except (ImportError, AttributeError):  # another torch: its compile checks as it always did
        return None

    def check() -> None:
        # A check that raises is not kept: inductor's compile asks again, and says why there.
        ended = Ended(eager)
        try:
            with contextlib.suppress(Exception):
                _ask_each(isas, ended)
        finally:
            ended.close()
        with contextlib.suppress(Exception):
            valid_vec_isa_list()  # (from the answers just kept, in torch's order)

    thread = threading.Thread(target=check, name="autocast-demo-isa-checks")
    try:
        thread.start()
    except RuntimeError:  # no thread can start (a limit on processes): as torch alone does
        return None
    return thread


def _isas_checked() -> list[Any]:
    """The vector ISAs that ``valid_vec_isa_list`` checks, in its order: on x86 those whose
    flags the CPU reports (elsewhere none here: the list checks its own, one)."""
    from torch._inductor import cpu_vec_isa

    if sys.platform not in ("linux", "win32") or platform.machine() not in ("x86_64", "AMD64"):
        return []
    try:
        flags = cpu_vec_isa.x86_isa_checker()
        return [isa for isa in cpu_vec_isa.supported_vec_isa_list
                if all(flag in flags for flag in str(isa).split())]
    except Exception:  # (another torch: the list checks its own)
        return []


def _ask_each(isas: list[Any], two_at_once: Callable[[], bool]) -> None:
    """Ask each ISA in a thread of its own (torch keeps each answer on its ISA), one at a time
    until ``two_at_once`` says two may run, then two; returns when all are answered."""
    pending, running = list(isas), list[threading.Thread]()
    try:
        while pending or running:
            running = [thread for thread in running if thread.is_alive()]
            while pending and len(running) < (2 if two_at_once() else 1):
                isa = pending.pop(0)
                thread = threading.Thread(target=_ask, args=(isa,), name="autocast-demo-isa-check")
                try:
                    thread.start()
                except RuntimeError:  # no thread can start: ask it here
                    _ask(isa)
                    continue
                running.append(thread)
            if running:
                running[0].join(0.05)
    finally:
        for thread in running:  # (none may be left when the worker forks)
            thread.join()


def _ask(isa: Any) -> None:
    with contextlib.suppress(Exception):  # (not kept: inductor's compile asks again)
        bool(isa)
