"""What the code produced on the way, recorded where it was produced, in the compiled and the
eager run alike: the gradients of every backward, and the outputs of every call of a function
given to ``torch.compile``. A training loop's ``opt.zero_grad()`` (or the next step's
accumulation, or a loss overwritten each step) leaves the walk at the end nothing of them,
while they are what the compiled code is about.

Every call of ``torch.autograd.backward`` (``loss.backward()`` goes through it) is watched:
before it runs, the leaves its graph accumulates into are found (its ``AccumulateGrad`` nodes,
a compiled graph's as well as an eager one's); after it, each leaf's ``.grad`` is hashed and
its numbers stored at once (:class:`.copies.Copies`): nothing is kept alive for it. A compiled
function's calls (:meth:`Steps.wrap`, the eager run's function as well) store each tensor of
their output the same way.

At the end a gradient is named by the path the walk found for its leaf (``backward 2:
model.w.grad``) and an output by its call (``call 3 of step``, ``call 3 of step, output 2``),
and each is kept unless that same tensor, unchanged since (same object, same version), is
where the walk found it anyway: a demo with one backward or one call and nothing after it
records nothing more. A leaf no name reaches at the end (a model made inside a function) is
named by its dtype and shape (``backward 1: <a float32 [64, 64] leaf>.grad``) where that tells
it apart from the backward's other such leaves, and said in the cut where it does not.
"""

from __future__ import annotations

import functools
import threading
import weakref
from dataclasses import dataclass
from hashlib import sha256
from typing import Any

from .copies import Copies

#: How many snapshots are kept as tensors of their own; past this, each leaf's (or each
#: function's) later ones are folded into one entry compared by their hashes alone (a record
#: holds at most 20,000 tensors; the walk at the end keeps 8,000).
MAX_SNAPSHOTS = 4_000


@dataclass
class _Snapshot:
    count: int  # which backward, or which call of its function, from 1
    tensor: Any  # a weak reference to what was read
    version: int
    record: dict[str, Any] | None  # None: it could not be read (a cut at the end)
    error: str = ""
    leaf: Any = None  # a gradient's leaf, kept alive: its id names it at the end
    name: str = ""  # an output's function, and which output of the call ("" for the only one)


class Steps:
    """The snapshots of one run (see the module's docstring)."""

    def __init__(self, copies: Copies) -> None:
        self.copies = copies
        self.backwards = 0
        self.snapshots: list[_Snapshot] = []
        self.compiled: dict[str, int] = {}  # a compiled function's name -> how many have it
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
                        self._take(self.backwards, leaf.grad, leaf=leaf)
            return result

        torch.autograd.backward = backward

    def wrap(self, made: Any, fn: Any) -> Any:
        """``made``, what ``torch.compile(fn)`` gave (in the eager run, ``fn`` itself), with
        each call's output recorded under ``fn``'s name (the same in both runs: the snippet
        compiles in the same order)."""
        name = getattr(fn, "__name__", "") or "function"
        name = "lambda" if name == "<lambda>" else name
        with self.lock:
            seen = self.compiled[name] = self.compiled.get(name, 0) + 1
        label = name if seen == 1 else f"{name} #{seen}"
        calls = [0]

        @functools.wraps(made)
        def call(*args: Any, **kwargs: Any) -> Any:
            import torch.utils._pytree as pytree

            output = made(*args, **kwargs)
            tensors = [t for t in pytree.tree_leaves(output) if _is_tensor(t)]
            with self.lock:
                calls[0] += 1
                for i, tensor in enumerate(tensors, start=1):
                    which = f", output {i}" if len(tensors) > 1 else ""
                    self._take(calls[0], tensor, name=f"{label}{which}")
            return output

        return call

    def _take(self, count: int, tensor: Any, leaf: Any = None, name: str = "") -> None:
        record, error = None, ""
        try:
            record = self.copies.record("", "grad" if leaf is not None else "value", tensor)
        except Exception as exc:  # a subclass or storage we cannot read
            error = f"{type(exc).__name__}: {exc}".splitlines()[0]
        self.snapshots.append(_Snapshot(count, weakref.ref(tensor), _writes(tensor), record,
                                        error, leaf, name))

    def records(self, names: dict[int, str], seen: set[int]) -> tuple[list[dict[str, Any]], list[str]]:
        """The snapshots to compare, each named as the module's docstring says, and the reasons
        of a cut (a tensor that could not be read). ``names``: the walk's path of each tensor
        it read by id; ``seen``: the ids of every tensor it read."""
        kept: list[dict[str, Any]] = []
        folded: dict[str, list[_Snapshot]] = {}
        cut: list[str] = []
        unnamed = self._unnamed(names)
        for snap in self.snapshots:
            if snap.leaf is not None:
                path = names.get(id(snap.leaf))
                if path is not None and self._still_there(snap, snap.leaf.grad):
                    continue  # (the walk reads it there)
                path = path or unnamed.get(id(snap))
                if path is None:
                    continue
                group, name = f"{path}.grad", f"backward {snap.count}: {path}.grad"
            else:
                if self._still_there(snap, None, seen):
                    continue
                function, _, which = snap.name.partition(", ")
                group = snap.name
                name = f"call {snap.count} of {function}" + (f", {which}" if which else "")
            if snap.record is None:
                cut.append(f"{name} could not be read ({snap.error})")
            elif len(kept) < MAX_SNAPSHOTS:
                kept.append({**snap.record, "name": name})
            else:
                folded.setdefault(group, []).append(snap)
        kept += [_fold(group, snaps, snaps[0].leaf is not None) for group, snaps in folded.items()]
        return kept, [*cut, *self.ambiguous]

    def _unnamed(self, names: dict[int, str]) -> dict[int, str]:
        """A name for the gradient of each leaf no name reaches at the end, by snapshot: its
        dtype and shape, where no other such leaf of that backward has them (the order in
        which a graph reaches its leaves differs between a compiled graph and an eager one,
        so nothing else tells them apart)."""
        by_kind: dict[tuple[int, str], list[_Snapshot]] = {}
        for snap in self.snapshots:
            if snap.leaf is not None and id(snap.leaf) not in names and snap.record is not None:
                kind = f"<a {snap.record['dtype']} {snap.record['shape']} leaf>"
                by_kind.setdefault((snap.count, kind), []).append(snap)
        found = {}
        for (count, kind), snaps in by_kind.items():
            if len(snaps) == 1:
                found[id(snaps[0])] = kind
            else:
                self.ambiguous.append(f"backward {count}: {len(snaps)} leaves of {kind[3:-6]} "
                                      "that no name reaches (name them, so that their "
                                      "gradients can be told apart)")
        return found

    @staticmethod
    def _still_there(snap: _Snapshot, holder: Any, seen: set[int] | None = None) -> bool:
        """Is the tensor read still where the walk reads it, unchanged: a gradient still its
        leaf's ``.grad`` (``holder``), an output among the tensors the walk read (``seen``)?"""
        tensor = snap.tensor()
        if tensor is None or _writes(tensor) != snap.version:
            return False
        return holder is tensor if seen is None else id(tensor) in seen


def _writes(tensor: Any) -> int:
    """How often ``tensor`` was written in place (-1: an inference tensor keeps no count)."""
    try:
        return int(tensor._version)
    except RuntimeError:
        return -1


def _is_tensor(value: Any) -> bool:
    import torch

    return isinstance(value, torch.Tensor)


def _fold(group: str, snaps: list[_Snapshot], grads: bool) -> dict[str, Any]:
    """One entry for many snapshots of one leaf or function: equal when every hash is."""
    last = snaps[-1].record
    assert last is not None
    digest = sha256("".join(s.record["sha256"] for s in snaps if s.record).encode())
    span = f"{snaps[0].count}-{snaps[-1].count}"
    if grads:
        name = f"backward {span}: {group}"
    else:
        function, _, which = group.partition(", ")
        name = f"calls {span} of {function}" + (f", {which}" if which else "")
    return {**last, "name": name, "sha256": digest.hexdigest(), "offset": None}


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
