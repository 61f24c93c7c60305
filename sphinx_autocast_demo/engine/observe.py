"""What a reader of a snippet could observe after it ran: every tensor reachable from its
top-level names, each named by the path a reader would write (``g[0]``, ``model.bn.running_mean``,
``opt.state[0]['exp_avg']``). Runs in the child, with torch; the parent compares by path.

Reached: tensors (and numeric numpy arrays) bound at top level or inside tuples, lists, dicts,
namedtuples, dataclasses and the attributes of objects of classes the snippet defined; every
``nn.Module``'s parameters, buffers and plain tensor attributes; an optimizer's state; and
the ``.grad`` of every reached tensor that has one (leaves, and non-leaves that retain it).
Gradients returned by ``torch.autograd.grad`` count as gradients wherever they are put.
Not reached: objects of other libraries (their insides are not the page's), sets (no order),
closures and other modules' globals. The walk is bounded; a cut view is said, never hidden.
"""

from __future__ import annotations

import dataclasses
import sys
import types
from collections import deque
from typing import Any, Literal

#: How deep containers are followed from a top-level name, how many objects are looked at,
#: and how many tensors are kept: far more than a page's snippet leaves.
MAX_DEPTH = 8
MAX_OBJECTS = 20_000
MAX_TENSORS = 2_000

Kind = Literal["value", "grad"]

# Tensors that torch.autograd.grad returned in this run, by id (kept alive in _GRADS, so that
# an id cannot be reused by another tensor).
_GRADS: list[Any] = []
_GRAD_IDS: set[int] = set()


def track_autograd_grad() -> None:
    """Make ``torch.autograd.grad``'s results known as gradients (compared bitwise like
    ``.grad``, not with the output tolerance), in the compiled and the eager run alike."""
    import torch

    original = torch.autograd.grad

    def grad(*args: Any, **kwargs: Any) -> Any:
        result = original(*args, **kwargs)
        for tensor in result if isinstance(result, tuple | list) else (result,):
            if isinstance(tensor, torch.Tensor):
                _GRADS.append(tensor)
                _GRAD_IDS.add(id(tensor))
        return result

    torch.autograd.grad = grad


@dataclasses.dataclass
class View:
    tensors: list[tuple[str, Kind, Any]]
    cut: str = ""  # why the view is partial, for a reader; empty: everything was reached


def observe(namespace: dict[str, Any]) -> View:
    """Every tensor a reader could reach from ``namespace``, breadth first (so each container
    is named by its shortest path), in a stable order."""
    import torch

    numpy = sys.modules.get("numpy")
    found: list[tuple[str, Kind, Any]] = []
    seen: set[int] = set()
    todo: deque[tuple[str, Any, int]] = deque(
        (name, namespace[name], 0) for name in sorted(namespace) if not name.startswith("_"))
    looked = 0
    cut = ""

    def add(path: str, kind: Kind, tensor: Any) -> None:
        found.append((path, kind, tensor))
        # .grad of a non-leaf that does not retain it warns and is None: ask only where it can be.
        if tensor.is_leaf or tensor.retains_grad:
            grad = tensor.grad
            if grad is not None:
                found.append((f"{path}.grad", "grad", grad))

    while todo:
        if len(found) >= MAX_TENSORS:
            cut = f"the first {MAX_TENSORS:,} tensors were compared"
            break
        if looked >= MAX_OBJECTS:
            cut = f"the first {MAX_OBJECTS:,} objects were looked at"
            break
        path, value, depth = todo.popleft()
        looked += 1
        if isinstance(value, torch.Tensor):
            add(path, "grad" if id(value) in _GRAD_IDS else "value", value)
            continue
        if numpy is not None and isinstance(value, numpy.ndarray):
            if value.dtype.kind in "biuf":
                found.append((path, "value", torch.from_numpy(value.copy())))
            continue
        if isinstance(value, torch.nn.Module):
            # torch.compile(model) wraps it, the eager run's torch.compile returns it as it
            # is: what the module itself holds, once, whichever name reaches it first.
            inner = getattr(value, "_orig_mod", None)
            value = inner if isinstance(inner, torch.nn.Module) else value
        if id(value) in seen or not _walked(value, torch):
            continue
        if depth >= MAX_DEPTH:
            cut = cut or f"containers deeper than {MAX_DEPTH} levels were not followed"
            continue
        seen.add(id(value))
        todo.extend((child, item, depth + 1) for child, item in _children(path, value, torch))
    return View(found, cut)


def _walked(value: Any, torch: Any) -> bool:
    """Is ``value`` a container whose insides a reader sees as the snippet's own?"""
    if isinstance(value, torch.nn.Module | torch.optim.Optimizer | list | tuple | dict):
        return True
    if isinstance(value, types.SimpleNamespace) or dataclasses.is_dataclass(value):
        return not isinstance(value, type)
    # An instance of a class the snippet itself defined (its code runs as __main__).
    return (not isinstance(value, type | types.ModuleType | types.FunctionType)
            and type(value).__module__ == "__main__" and hasattr(value, "__dict__"))


def _children(path: str, value: Any, torch: Any) -> list[tuple[str, Any]]:
    if isinstance(value, torch.nn.Module):
        module = value
        items = [(f"{path}.{name}", p) for name, p in module.named_parameters()]
        items += [(f"{path}.{name}", b) for name, b in module.named_buffers()]
        # Plain attributes the writer set (a tensor kept on the module, a list of them).
        items += [(f"{path}.{name}", v) for name, v in vars(module).items()
                  if not name.startswith("_") and isinstance(v, torch.Tensor | list | tuple | dict)]
        return items
    if isinstance(value, torch.optim.Optimizer):
        # Its state is keyed by the parameters themselves: name them by their order.
        index = {id(p): i for i, p in
                 enumerate(p for group in value.param_groups for p in group["params"])}
        return [(f"{path}.state[{index.get(id(param), '?')}][{key!r}]", item)
                for param, state in value.state.items() for key, item in state.items()]
    if isinstance(value, dict):
        return [(f"{path}[{key!r}]" if isinstance(key, str | int | float | bool) else f"{path}[#{i}]",
                 item) for i, (key, item) in enumerate(value.items())]
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple
        return [(f"{path}.{name}", item) for name, item in zip(value._fields, value, strict=False)]
    if isinstance(value, list | tuple):
        return [(f"{path}[{i}]", item) for i, item in enumerate(value)]
    if dataclasses.is_dataclass(value):
        return [(f"{path}.{f.name}", getattr(value, f.name, None)) for f in dataclasses.fields(value)]
    return [(f"{path}.{name}", item) for name, item in vars(value).items() if not name.startswith("_")]
