"""What decides a result before it runs: its cache key, and the parts of the build machine's
environment in it (torch's version as the cache compares it, torch's environment variables).
The build side only: no torch here."""

from __future__ import annotations

import os
import re
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core import RESULTS_FORMAT
from .cache import make_key

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence

    from ..core.model import Code, Demo, Variant


#: Thread pools that libraries start as they are imported: numpy's OpenBLAS starts one thread
#: per core but one when torch imports it, MKL and OpenMP runtimes likewise. A worker with
#: threads cannot fork safely, so its imports see 1; the runs get the user's values back
#: (:func:`restore_user_environment`).
SINGLE_THREADED = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "MKL_NUM_THREADS",
                   "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


#: What a result is made of beyond its code: bumped when the comparison starts to see more
#: (2: everything reachable, the printed output, the eager run proved eager; 3: objects of any
#: class, tensors read through torch, the compiled run proved compiled, the whole output), so
#: that older results, compared on less, are made again.
VIEW = 3

@dataclass(frozen=True)
class Deciding:
    """Environment variables that change what a run gives: each set one goes into every key,
    so that a build with it never serves, nor is served, the results of a build without."""

    names: tuple[str, ...]
    prefixes: tuple[str, ...]  # every variable under them: the libraries add switches each release
    why: str


#: What torch reads, itself or through the libraries it runs, to choose kernels or behaviour.
#: Not CUDA_VISIBLE_DEVICES: it names a GPU by its index, which a scheduler varies from job to
#: job on identical GPUs (every result would miss), and says nothing of the GPU's model.
DECIDING = (
    Deciding((), ("TORCH", "PYTORCH"),
             "torch's own switches: compiling (TORCH_COMPILE_DISABLE, TORCHDYNAMO_*), inductor's "
             "code (TORCHINDUCTOR_*), kernels (TORCH_MKLDNN_MATMUL_MIN_SIZE), what it prints"),
    Deciding(("ATEN_CPU_CAPABILITY",), (),
             "the CPU kernels ATen dispatches to (default, avx2, avx512): other vector widths "
             "sum in another order"),
    Deciding((), ("ONEDNN_", "DNNL_"),
             "oneDNN's instruction set and float32 math mode (ONEDNN_MAX_CPU_ISA, "
             "ONEDNN_DEFAULT_FPMATH_MODE=bf16 rounds float32 matmuls)"),
    Deciding((), ("MKL_", "OPENBLAS_"),
             "the BLAS kernels and their reproducibility (MKL_CBWR, MKL_ENABLE_INSTRUCTIONS, "
             "OPENBLAS_CORETYPE)"),
    Deciding(SINGLE_THREADED, (),
             "thread-pool sizes, which the runs get back (engine/isolation.py): a parallel "
             "reduction sums per thread, then the threads' sums"),
    Deciding(("NVIDIA_TF32_OVERRIDE", "CUBLAS_WORKSPACE_CONFIG"), ("CUBLASLT_",),
             "CUDA float32 matmuls in TF32, cuBLAS's algorithms"),
    Deciding((), ("TRITON_",),
             "the GPU kernels inductor generates (TRITON_INTERPRET, TRITON_F32_DEFAULT)"),
)

#: Variables under a prefix above that name only where files are kept (caches, logs, debug
#: output): they change no result, and a CI runner's fresh cache must not miss every result.
PLACES = frozenset({
    "TORCHINDUCTOR_CACHE_DIR", "TORCH_HOME", "TORCH_EXTENSIONS_DIR", "TORCH_COMPILE_DEBUG_DIR",
    "TORCH_TRACE", "TORCHINDUCTOR_CACHE_DUMP_FILE_PATH", "TORCHINDUCTOR_WORKER_LOGPATH",
    "TORCHINDUCTOR_AUTOHEURISTIC_LOG_PATH", "PYTORCH_KEEP_TMPDIR",
    "TRITON_CACHE_DIR", "TRITON_HOME", "TRITON_DUMP_DIR",
})


def torch_variables(environ: Mapping[str, str]) -> dict[str, str]:
    """The variables of ``environ`` that decide a result (:data:`DECIDING`), by name."""
    return {name: value for name, value in sorted(environ.items())
            if name not in PLACES and any(name in group.names or name.startswith(group.prefixes)
                                          for group in DECIDING)}


def torch_key(installed: str, policy: str, source: str = "") -> str:
    """What the cache compares for ``installed`` under ``autocast_demo_cache_torch`` (empty
    is "exact": a label must say something, or it would match entries stored without one);
    ``source``: :func:`torch_source`, which "exact" compares too."""
    if policy in ("exact", ""):
        return f"{installed} source {source}" if source else installed
    if policy == "release":  # 2.16.0a0+git1234 -> 2.16.0; 2.13.0+cpu -> 2.13.0
        match = re.match(r"\d+(?:\.\d+)*", installed)
        return match.group(0) if match else installed
    return policy


def result_key(demo: Demo, codes: Sequence[Code], variant: Variant, confdir: str,
               variables: Mapping[str, str]) -> str:
    """Everything that decides a result, and nothing that only decides its check (the
    expectations) or its place (lines, names). torch and Python versions live in the entry, so
    a version change is a miss in "auto" mode but still renders in "never" mode; the files a
    run read are stamped in it."""
    parts = {
        "extension": RESULTS_FORMAT,
        "view": VIEW,
        # The snippet's __file__ (execute.Runner.job): always, not only where the code names
        # it, as a run can reach it without the name (its frames, globals(), a helper that reads
        # its caller's), and what it finds beside the page is its own. Relative to conf.py's
        # directory, as __file__ is abspath(source): a checkout moved with its cache runs nothing.
        "page": os.path.relpath(os.path.abspath(demo.code.source), confdir),
        "environment": dict(variables),
        "code": [c.text for c in codes],
        "config": demo.config,
        "value": variant.value,
        "backend": demo.backend,
        "device": demo.device,
        "dtype": demo.dtype,
        "tolerance": [demo.tolerance.grad, demo.tolerance.output],
        "partial_view": demo.partial_view,  # decides whether a cut view's match is one
    }
    if not demo.held_to_compile:  # (its compiled run may compile nothing: another result)
        parts["held_to_compile"] = False
    if demo.continues:  # (its bare last expression is shown: another output)
        parts["continues"] = True
    if demo.compare == "none":  # (no eager run: another result)
        parts["compare"] = "none"
    if variant in demo.probes:
        # A probe's failure is kept (Planner.store), and the timeout decides a timed-out run:
        # a longer one runs it again. Not for the page's own values, whose failures run again.
        parts["timeout"] = demo.timeout
    return make_key(parts)


#: Of a torch source tree, what its runs do not load: headers and C++ sources (a change there
#: is built into the shared libraries, which are compared), tools and tests.
_NOT_LOADED = frozenset({"include", "csrc", "share", "bin", "test", "__pycache__"})


def installed_places() -> tuple[str, ...]:
    """Where Python's own modules and the installed packages live (a module there is neither
    the writer's nor a source tree's), each ending in a separator, as written and with links
    resolved (a venv's lib64, a linked checkout)."""
    import site
    import sysconfig

    paths = sysconfig.get_paths()
    places = [*(paths[name] for name in ("stdlib", "platstdlib", "purelib", "platlib")),
              *site.getsitepackages(), site.getusersitepackages(),
              *(p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages"))]
    return places_of(places)


def places_of(directories: Iterable[str]) -> tuple[str, ...]:
    """``directories`` as prefixes a path is compared with: each ending in a separator, as
    written and with links resolved."""
    return tuple({os.path.join(f(d), "") for d in directories if d
                  for f in (os.path.abspath, os.path.realpath)})


def torch_source(origin: str | None, installed: Sequence[str]) -> str:
    """For a torch imported from its source tree (``pip install -e .``, ``python setup.py
    develop``: ``origin``, its ``__init__.py``, under none of the ``installed`` prefixes,
    :func:`installed_places`), a
    digest of the time and size of its modules and shared libraries; empty for an installed
    torch, whose files change only with its version. A source tree keeps the version it was
    built as (``2.16.0a0+gitabc``) while its modules are edited or pulled, and a result cached
    under that version would stand for code that has changed since (~15 ms, ~2,300 files)."""
    if not origin:
        return ""
    root = os.path.dirname(os.path.abspath(origin))
    if os.path.join(root, "").startswith(tuple(installed)):
        return ""
    import hashlib

    seen = hashlib.sha256()
    for directory, subdirectories, names in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d not in _NOT_LOADED)
        for name in sorted(names):
            if name.endswith(".py") or ".so" in name or name.endswith((".dll", ".pyd", ".dylib")):
                path = os.path.join(directory, name)
                try:
                    found = os.stat(path)
                except OSError:
                    continue
                seen.update(f"{os.path.relpath(path, root)}:{found.st_mtime_ns}:{found.st_size}\n".encode())
    return seen.hexdigest()[:16]
