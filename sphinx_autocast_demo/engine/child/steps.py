"""The gradients of every backward, recorded when it ran, in the compiled and the eager run
alike: a training loop's ``opt.zero_grad()`` (or the next step's accumulation) leaves the walk
at the end nothing of what each step's backward produced, while it is what the compiled
backward is about.

Every call of ``torch.autograd.backward`` (``loss.backward()`` goes through it) is watched:
before it runs, the leaves its graph accumulates into are found (its ``AccumulateGrad`` nodes,
a compiled graph's as well as an eager one's); after it, each leaf's ``.grad`` is hashed and
copied at once (:class:`.copies.Copies`). At the end a snapshot is named by the path the walk
found for its leaf (``backward 2: model.w.grad``) and kept, unless that same gradient, unchanged
since (same tensor, same version), is still the leaf's ``.grad``, which the walk reads anyway:
a demo with one backward and nothing after it records nothing more. A leaf no name reaches at
the end is no reader's to see, and is not named.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

from .copies import Copies

#: How many snapshots are kept as tensors of their own; past this, each leaf's later ones are
#: folded into one entry compared by their hashes alone (a record holds at most 20,000 tensors).
MAX_SNAPSHOTS = 4_000


@dataclass
class _Snapshot:
    call: int  # which backward, from 1
    leaf: Any  # kept alive: its id names it at the end
    grad: Any  # a weak reference to the .grad read
    version: int
    record: dict[str, Any] | None  # None: it could not be read (a cut at the end)
    error: str = ""


class Steps:
    """The snapshots of one run (see the module's docstring)."""

    def __init__(self, copies: Copies) -> None:
        self.copies = copies
        self.calls = 0
        self.snapshots: list[_Snapshot] = []
        self.lock = threading.Lock()

    def install(self) -> None:
        import torch

        original = torch.autograd.backward

        def backward(tensors: Any, *args: Any, **kwargs: Any) -> Any:
            inputs = kwargs.get("inputs")
            leaves = _leaves(tensors, inputs)
            result = original(tensors, *args, **kwargs)
            self.taken(leaves)
            return result

        torch.autograd.backward = backward

    def taken(self, leaves: list[Any]) -> None:
        with self.lock:
            self.calls += 1
            for leaf in leaves:
                grad = leaf.grad
                if grad is None:
                    continue
                record, error = None, ""
                try:
                    record = self.copies.record("", "grad", grad)
                except Exception as exc:  # a subclass or storage we cannot read
                    error = f"{type(exc).__name__}: {exc}".splitlines()[0]
                self.snapshots.append(_Snapshot(self.calls, leaf, weakref.ref(grad),
                                                grad._version, record, error))

    def records(self, names: dict[int, str]) -> tuple[list[dict[str, Any]], list[str]]:
        """The snapshots to compare, each named ``backward N: <leaf's path>.grad``, and the
        reasons of a cut (a gradient that could not be read)."""
        kept: list[dict[str, Any]] = []
        folded: dict[str, list[_Snapshot]] = {}
        cut: list[str] = []
        for snap in self.snapshots:
            path = names.get(id(snap.leaf))
            if path is None or self._still_there(snap):
                continue
            name = f"backward {snap.call}: {path}.grad"
            if snap.record is None:
                cut.append(f"{name} could not be read ({snap.error})")
            elif len(kept) < MAX_SNAPSHOTS:
                kept.append({**snap.record, "name": name})
            else:
                folded.setdefault(path, []).append(snap)
        for path, snaps in folded.items():
            kept.append(_fold(path, snaps))
        return kept, cut

    @staticmethod
    def _still_there(snap: _Snapshot) -> bool:
        grad = snap.grad()
        return grad is not None and snap.leaf.grad is grad and grad._version == snap.version


def _fold(path: str, snaps: list[_Snapshot]) -> dict[str, Any]:
    """One entry for many snapshots of one leaf: equal when every hash is (bitwise)."""
    last = snaps[-1].record
    assert last is not None
    digest = sha256("".join(s.record["sha256"] for s in snaps if s.record).encode())
    return {**last, "name": f"backward {snaps[0].call}-{snaps[-1].call}: {path}.grad",
            "sha256": digest.hexdigest(), "offset": None}


def _leaves(tensors: Any, inputs: Any) -> list[Any]:
    """The tensors a backward from ``tensors`` accumulates into: ``inputs`` where given, else
    every leaf its graph reaches, in the order first found."""
    import torch

    if inputs is not None:
        return [t for t in (inputs if isinstance(inputs, tuple | list) else (inputs,))
                if isinstance(t, torch.Tensor)]
    roots = tensors if isinstance(tensors, tuple | list) else (tensors,)
    todo: list[Any] = [t.grad_fn for t in roots
                       if isinstance(t, torch.Tensor) and t.grad_fn is not None]
    found: dict[int, Any] = {}
    seen: set[int] = set()
    while todo:
        node = todo.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)  # an AccumulateGrad node
        if isinstance(variable, torch.Tensor):
            found.setdefault(id(variable), variable)
        todo.extend(next_node for next_node, _ in node.next_functions)
    return list(found.values())
