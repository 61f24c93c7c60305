"""What the worker does before its first fork, and what its probe repeats after it.

The worker (:mod:`.worker`) imports torch and the compiler stack and compiles what demos
compile, so that every child inherits it warm; a probe child rehearses the same compiles to
learn which of the zygote's pages a run writes (:func:`.processes.written_pages`). Our own code
only: no writer's code runs before a fork.
"""

from __future__ import annotations

import gc
import sys
from typing import Any

from ..protocol import Ready
from .imports import remember_modules, track_reads
from .processes import renew_thread_pool

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


def warm_up(info: Ready) -> Ready:
    """Run one tiny compile, forward and backward of what demos do; ``info`` (from
    :func:`import_stack`) is the ready event."""
    import torch

    gpu_build = is_gpu_build(torch)
    warm_compiles(torch, gpu_build)
    if gpu_build:
        # Inductor imports it in a child and, without a CUDA runtime, it logs "No CUDA runtime
        # is found" into the run's printed output: let it log here, into the worker's log.
        import torch.utils.cpp_extension
    freeze()
    remember_modules()
    return info


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


def warm_compiles(torch: Any, gpu_build: bool) -> None:
    """Compile, run and differentiate what demos do, so that children inherit it warm."""
    # Trace what demos trace (a module, a region that turns autocast off and upcasts, both
    # autocast dtypes, a backward): dynamo and AOTAutograd import and initialise much lazily on
    # first use, and a child that inherits it all compiles in ~0.15 s instead of ~0.25 s.
    def region(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        with torch.autocast("cpu", enabled=False):
            return (x.float() @ w.float()).sum() * 2

    # On a GPU build (measured: 2.14.1+cu130, no GPU) the autograd engine starts one thread per
    # device it knows of (8 pt_autograd_N threads, with no GPU) the first time it runs, and a
    # compile that needs gradients runs it (AOTAutograd traces the backward). Started here, the
    # threads are missing in every forked child, whose backward then fails ("Unable to handle
    # autograd's threading in combination with fork-based multiprocessing"). So there the same
    # compiles run without gradients: dynamo, AOTAutograd and fake tensors get warm (a child's
    # first compile ~0.9 s instead of ~1.6 s) and no thread starts; ``main`` checks that.
    linear = torch.nn.Linear(2, 2)
    w = torch.ones(2, 2, requires_grad=True)
    # The build's backend: inductor (torch.compile's own default, and ours) imports and
    # initialises its code generator and C++ toolchain on first use (~3 s), once here instead
    # of in every child; a site on aot_eager does not wait for it (a demo that names inductor
    # then pays it in its run).
    warm = [(_BACKEND, torch.bfloat16)] if _BACKEND not in ("aot_eager", "eager") else []
    for backend, dtype in (*warm, ("aot_eager", torch.bfloat16), ("aot_eager", torch.float16)):
        with torch.autocast("cpu", dtype=dtype), torch.set_grad_enabled(not gpu_build):
            out = torch.compile(region, backend=backend)(torch.ones(2, 2), w)
            out = out + torch.compile(linear, backend=backend)(torch.ones(2, 2)).sum()
        if not gpu_build:
            out.backward()
        torch._dynamo.reset()
