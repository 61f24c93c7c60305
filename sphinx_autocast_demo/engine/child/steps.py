"""What the code produced on the way, recorded where it was produced, in the compiled and the
eager run alike: the gradients of every backward. A training loop's ``opt.zero_grad()`` (or
the next step's accumulation) leaves the walk at the end nothing of them, while they are what
the compiled backward is about. (Not yet the outputs of each call of a compiled function: the
eager run's ``torch.compile`` returns the very function it was given, which a wrapper to
watch its calls would not be.)

Every call of ``torch.autograd.backward`` (``loss.backward()`` goes through it) is watched:
before it runs, the leaves its graph accumulates into are found (its ``AccumulateGrad`` nodes,
a compiled graph's as well as an eager one's); after it, each leaf's ``.grad`` is hashed and
its numbers stored at once (:class:`.copies.Copies`): nothing is kept alive for it.

At the end a gradient is named by the path the walk found for its leaf (``backward 2:
model.w.grad``), and kept unless that same tensor, unchanged since (same object, same
version), is where the walk found it anyway: a demo with one backward and nothing after it
records nothing more. A leaf no name reaches at the end (a model made inside a function) is
named by its dtype and shape (``backward 1: <a float32 [64, 64] leaf>.grad``) where that tells
it apart from the backward's other such leaves, and said in the cut where it does not.
"""

from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

from .copies import Copies

#: How many snapshots are kept as tensors of their own; past this, each leaf's later ones are
#: folded into one entry compared by their hashes alone (a record holds at most 20,000
#: tensors; the walk at the end keeps 8,000).
MAX_SNAPSHOTS = 4_000


@dataclass
class _Snapshot:
    count: int  # which backward, from 1
    leaf: Any  # kept alive: its id names it at the end
    grad: Any  # a weak reference to the .grad read
    version: int
    record: dict[str, Any] | None  # None: it could not be read (a cut at the end)
    error: str = ""


class Steps:
    """The snapshots of one run (see the module's docstring)."""

    def __init__(self, copies: Copies) -> None:
        self.copies = copies
        self.backwards = 0
        self.snapshots: list[_Snapshot] = []
        self.ambiguous: list[str] = []  # gradients of unnamed leaves that cannot be named
        self.lock = threading.Lock()

    def install(self) -> None:
        import torch

        original = torch.autograd.backward

        def backward(tensors: Any, *args: Any, **kwargs: Any) -> Any:
            leaves = _leaves(tensors, kwargs.get("inputs"))
            result = original(tensors, *args, **kwargs)
            with self.lock:
                self.backwards += 1
                for leaf in leaves:
                    if leaf.grad is not None:
                        self._take(leaf, leaf.grad)
            return result

        torch.autograd.backward = backward

    def _take(self, leaf: Any, grad: Any) -> None:
        record, error = None, ""
        try:
            record = self.copies.record("", "grad", grad)
        except Exception as exc:  # a subclass or storage we cannot read
            error = f"{type(exc).__name__}: {exc}".splitlines()[0]
        self.snapshots.append(_Snapshot(self.backwards, leaf, weakref.ref(grad), _writes(grad),
                                        record, error))

    def records(self, names: dict[int, str]) -> tuple[list[dict[str, Any]], list[str]]:
        """The snapshots to compare, each named as the module's docstring says, and the reasons
        of a cut (a gradient that could not be read, leaves that cannot be told apart).
        ``names``: the walk's path of each tensor it read, by id."""
        kept: list[dict[str, Any]] = []
        folded: dict[str, list[_Snapshot]] = {}
        cut: list[str] = []
        unnamed = self._unnamed(names)
        for snap in self.snapshots:
            path = names.get(id(snap.leaf))
            if path is not None and self._still_there(snap):
                continue  # (the walk reads it there)
            path = path or unnamed.get(id(snap))
            if path is None:
                continue
            name = f"backward {snap.count}: {path}.grad"
            if snap.record is None:
                cut.append(f"{name} could not be read ({snap.error})")
            elif len(kept) < MAX_SNAPSHOTS:
                kept.append({**snap.record, "name": name})
            else:
                folded.setdefault(path, []).append(snap)
        kept += [_fold(path, snaps) for path, snaps in folded.items()]
        return kept, [*cut, *self.ambiguous]

    def _unnamed(self, names: dict[int, str]) -> dict[int, str]:
        """A name for the gradient of each leaf no name reaches at the end, by snapshot: its
        dtype and shape, where no other such leaf of that backward has them (the order in
        which a graph reaches its leaves differs between a compiled graph and an eager one,
        so nothing else tells them apart)."""
        by_kind: dict[tuple[int, str], list[_Snapshot]] = {}
        for snap in self.snapshots:
            if id(snap.leaf) not in names and snap.record is not None:
                kind = f"{snap.record['dtype']} {snap.record['shape']}"
                by_kind.setdefault((snap.count, kind), []).append(snap)
        found = {}
        for (count, kind), snaps in by_kind.items():
            if len(snaps) == 1:
                found[id(snaps[0])] = f"<a {kind} leaf>"
            else:
                self.ambiguous.append(f"backward {count}: {len(snaps)} leaves of {kind} that no "
                                      "name reaches (name them, so that their gradients can be "
                                      "told apart)")
        return found

    @staticmethod
    def _still_there(snap: _Snapshot) -> bool:
        """Is the gradient read still its leaf's ``.grad``, unchanged?"""
        grad = snap.grad()
        return grad is not None and snap.leaf.grad is grad and _writes(grad) == snap.version


def _writes(tensor: Any) -> int:
    """How often ``tensor`` was written in place (-1: an inference tensor keeps no count)."""
    try:
        return int(tensor._version)
    except RuntimeError:
        return -1


def _fold(path: str, snaps: list[_Snapshot]) -> dict[str, Any]:
    """One entry for many snapshots of one leaf: equal when every hash is (bitwise)."""
    last = snaps[-1].record
    assert last is not None
    digest = sha256("".join(s.record["sha256"] for s in snaps if s.record).encode())
    return {**last, "name": f"backward {snaps[0].count}-{snaps[-1].count}: {path}.grad",
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
