"""Put a process back to the worker's state between two runs, or say that it cannot be.

A forked child that runs several runs one after another (one demo's values, see the
``autocast_demo_isolation`` conf value) pays the copy-on-write cost of its fork once instead of
once per run. Each run must still start as if it had the process to itself: :meth:`Baseline.
restore` resets what torch and Python keep process-wide (torch's config modules, the patched
``torch.compile``, the RNGs, default dtype and device, grad, autocast and precision modes, print
options, warning registries, environment, ``sys.path``); the compiler itself is reset by the run.
What cannot be put back (a thread or process left running, a module imported from the docs'
own files) makes :meth:`Baseline.dirty` true, and the worker gives the next run a new process.

Imported by the worker only: it touches torch.
"""

from __future__ import annotations

import gc
import os
import random
import sys
import warnings
from dataclasses import dataclass
from typing import Any, cast

# Where installed code lives: a module imported from anywhere else is the docs' own code, and
# its import-time effects (and its module state) would be seen by the next run.
_INSTALLED = tuple({os.path.join(p, "") for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)})



def _config_modules() -> dict[str, Any]:
    from torch.utils._config_module import ConfigModule

    return {name: module for name, module in list(sys.modules.items())
            if name.startswith("torch") and isinstance(module, ConfigModule)}


@dataclass
class Baseline:
    """The worker's state after its warm-up: what every run starts from."""

    configs: dict[str, dict[str, Any]]
    compile: Any
    module_compile: Any
    default_dtype: Any
    default_device: Any
    grad: bool
    autocast: tuple[bool, Any]
    deterministic: tuple[bool, bool]
    matmul_precision: str
    print_options: dict[str, Any]
    anomaly: bool
    environ: dict[str, str]
    path: list[str]
    filters: list[Any]
    showwarning: Any
    modules: set[str]

    @classmethod
    def take(cls) -> Baseline:
        import torch

        return cls(
            configs={name: module.get_config_copy() for name, module in _config_modules().items()},
            compile=torch.compile,
            module_compile=torch.nn.Module.compile,
            default_dtype=torch.get_default_dtype(),
            default_device=torch.get_default_device(),
            grad=torch.is_grad_enabled(),
            autocast=(torch.is_autocast_enabled("cpu"), torch.get_autocast_dtype("cpu")),
            deterministic=(torch.are_deterministic_algorithms_enabled(),
                           torch.is_deterministic_algorithms_warn_only_enabled()),
            matmul_precision=torch.get_float32_matmul_precision(),
            print_options=dict(vars(torch._tensor_str.PRINT_OPTS)),
            anomaly=torch.is_anomaly_enabled(),
            environ=dict(os.environ),
            path=list(sys.path),
            filters=list(warnings.filters),
            showwarning=warnings.showwarning,
            modules=set(sys.modules),
        )

    def restore(self) -> None:
        """Undo what a previous run in this process changed (see the module docstring)."""
        import torch

        for name, module in _config_modules().items():
            saved = self.configs.get(name)
            if saved is None:
                continue
            # Only what changed: setting every key costs ~5 ms and re-warns deprecated ones.
            now = module.get_config_copy()
            changed = {k: v for k, v in saved.items() if now.get(k) is not v and now.get(k) != v}
            if changed:
                module.load_config(changed)
        torch.compile = self.compile
        torch.nn.Module.compile = self.module_compile  # type: ignore[method-assign]
        torch.set_default_dtype(self.default_dtype)
        torch.set_default_device(self.default_device)
        torch.set_grad_enabled(self.grad)
        torch.set_autocast_enabled("cpu", self.autocast[0])
        torch.set_autocast_dtype("cpu", self.autocast[1])
        torch.clear_autocast_cache()
        torch.use_deterministic_algorithms(self.deterministic[0], warn_only=self.deterministic[1])
        torch.set_float32_matmul_precision(self.matmul_precision)
        vars(torch._tensor_str.PRINT_OPTS).update(self.print_options)
        torch.autograd.set_detect_anomaly(self.anomaly)
        if os.environ != self.environ:
            os.environ.clear()
            os.environ.update(self.environ)
        sys.path[:] = self.path
        cast("list[Any]", warnings.filters)[:] = self.filters  # in place: _warnings holds it
        warnings.showwarning = self.showwarning
        # Every "warn once per place" registry (torch's own modules included) is versioned:
        # bumping the version makes a warning the previous run saw print again in this one.
        warnings._filters_mutated()  # type: ignore[attr-defined]
        warnings.onceregistry.clear()  # type: ignore[attr-defined]
        # The previous run's graphs and tensors are cycles: free them before the next compile.
        gc.collect()

    def dirty(self) -> str:
        """Why the next run must not share this process ("" when it may)."""
        try:
            threads = os.listdir("/proc/self/task")
        except OSError:
            threads = []
        # A GPU build of torch starts its autograd device threads (pt_autograd_N) in the first
        # compile that needs gradients; they wait for work, idle, and a process keeps them.
        main = str(os.getpid())
        others = [t for t in threads if t != main and not _comm(t).startswith("pt_autograd_")]
        if others:
            return f"{len(others)} thread(s) left running"
        for tid in threads:
            try:
                with open(f"/proc/self/task/{tid}/children", encoding="ascii") as f:
                    if f.read().strip():
                        return "a process left running"
            except OSError:
                pass
        for name in set(sys.modules) - self.modules:
            path = getattr(sys.modules.get(name), "__file__", None)
            if path and not os.path.abspath(path).startswith(_INSTALLED):
                return f"imported {name} from {path}"
        return ""


def _comm(tid: str) -> str:
    try:
        with open(f"/proc/self/task/{tid}/comm", encoding="utf-8", errors="replace") as f:
            return f.read().strip()
    except OSError:
        return ""


def reseed() -> None:
    """The same random state at the start of every run, in a new process or not."""
    import torch

    torch.manual_seed(0)
    random.seed(0)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(0)
