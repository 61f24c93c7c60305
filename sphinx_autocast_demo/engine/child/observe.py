"""What a reader of a snippet could observe after it ran: every tensor reachable from its
top-level names, each named by the path a reader would write (``g[0]``, ``model.bn.running_mean``,
``opt.state[0]['exp_avg']``). Runs in the child, with torch; the parent compares by path.

Reached, whichever module defined the class (the snippet, a helper module beside the page,
another library): tensors and numeric numpy arrays (bool, integer, float, complex); tuples,
lists, deques, dicts, namedtuples, numpy arrays of objects; the attributes of objects (their
``__dict__`` and every set slot of the MRO: dataclasses among them); a ``functools.partial``'s
function, arguments and keywords; what a function of the page's code holds (its closure's
values, its default arguments; a compiled one is named as the function it wraps) and a
suspended generator's locals; every ``nn.Module``'s parameters, buffers and other
attributes of any kind, its submodules' too; an optimizer's state, param groups and defaults;
the ``.grad`` of every reached tensor that has one (leaves, and non-leaves that retain
it); a module's hooks (what their closures keep), a weak reference's referent, the modules the
snippet made (``types.ModuleType``) and its helper modules' globals; what the page's cached
functions returned (:func:`track_caches`); bytes, buffers, ``memoryview``s and ``ctypes`` data
byte by byte, an ``array.array`` by its numbers, a checkpoint ``torch.save`` wrote (in bytes, a
``BytesIO`` or a file) by what ``torch.load(..., weights_only=True)`` reads, text (a
``StringIO``, a written file) as printed lines are compared; and the files the snippet wrote in
its working directory. Gradients returned by ``torch.autograd.grad`` count as gradients
wherever they are put.

Tensors are read through torch: a wrapper subclass (one with ``__tensor_flatten__``, e.g.
TwoTensor) by its inner tensors (``t.a``), a nested tensor by its components
(``t.unbind()[0]``). Meta and fake tensors hold no values: they are said in the cut. An object
that only claims to be a tensor (a mock with ``spec=torch.Tensor``) is an object, never read.

Not reached: numbers and strings (only what the snippet printed of them is compared); classes,
bound methods, the functions and generators of torch and of the standard library (their own
machinery); installed modules, and so their globals; the standard library's objects other than
its containers and the kinds above (a logger, a lock, an open file: the interpreter's state);
torch's own machinery (the objects of its private modules, the underscored attributes of its
classes). A set is no view (its items have no order to name them by): one holding more than
values with no tensor (numbers, strings, dtypes, devices) is said in the cut. The walk is
bounded, and an object it cannot read is said in the cut: a partial view is never hidden.

Over ~400 lines: what the walk reaches and what it cuts are one set of rules, read together;
split, a rule would stand apart from its exceptions.
"""

from __future__ import annotations

import array
import collections.abc
import dataclasses
import functools
import io
import os
import sys
import types
import weakref
from collections import deque
from typing import Any, Literal

from ...core.printed import text_parts
from ..protocol import CODE_FILE
from .imports import module_file, writers

#: How deep containers are followed from a top-level name, how many objects are looked at,
#: and how many tensors are kept: far more than a page's snippet leaves.
MAX_DEPTH = 8
MAX_OBJECTS = 20_000
MAX_TENSORS = 8_000
#: A numpy array is copied to be compared: one larger than this is said, not read.
MAX_ARRAY_BYTES = 1 << 31

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


def track_caches() -> None:
    """Make what the page's ``functools.lru_cache``'d (and ``functools.cache``'d) functions
    return readable: their caches are C objects the walk cannot read, so each result is also
    kept, in call order, on the function the cache wraps (compared as ``f result 1``...)."""
    real = functools.lru_cache

    def lru_cache(maxsize: Any = 128, typed: bool = False) -> Any:
        if callable(maxsize) and not isinstance(maxsize, int):  # @lru_cache, no call
            return real(128, typed)(_recording(maxsize))
        decorate = real(maxsize, typed)
        return lambda fn: decorate(_recording(fn))

    functools.lru_cache = lru_cache


def _recording(fn: Any) -> Any:
    if not isinstance(fn, types.FunctionType) or not _pages_code(fn):
        return fn  # (torch's and libraries' caches: their own state)
    results: list[Any] = []

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        results.append(result)
        return result

    call._autocast_demo_results = results  # type: ignore[attr-defined]
    return call


@dataclasses.dataclass
class View:
    tensors: list[tuple[str, Kind, Any]]
    #: Why the view is partial, each reason once, in the order met; none: everything was reached.
    reasons: list[str] = dataclasses.field(default_factory=list)

    def cut_because(self, reason: str) -> None:
        if reason not in self.reasons:
            self.reasons.append(reason)

    @property
    def cut(self) -> str:
        """Why the view is partial, for a reader; empty: everything was reached."""
        shown = self.reasons[:MAX_REASONS]
        more = len(self.reasons) - len(shown)
        return "; ".join(shown) + (f"; and {more} more" if more else "")


#: How many reasons a cut says (a hundred meta parameters are one problem, said thrice).
MAX_REASONS = 3


def unreadable(path: str, exc: BaseException) -> str:
    """A cut's reason for an object or tensor whose reading raised."""
    lines = str(exc).strip().splitlines()
    return f"{path} could not be read ({type(exc).__name__}{': ' + lines[0] if lines else ''})"


def observe(namespace: dict[str, Any], directory: str | None = None) -> View:
    """Every tensor a reader could reach from ``namespace``, breadth first (so each container
    is named by its shortest path), in a stable order; then what the files the snippet wrote
    in ``directory`` (its working directory) hold."""
    walk = _Walk(namespace)
    if directory is not None:
        for name, data in _written(directory):
            if data is None:
                walk.view.cut_because(f"the file {name!r} it wrote is too large to be read for "
                                      "comparison")
            else:
                walk.file(name, data)
    return walk.run()


def _written(directory: str) -> list[tuple[str, bytes | None]]:
    """The files under ``directory``, by their path from there, in order (no links, no
    ``__pycache__``), with their data; None for one too large to be read."""
    found: list[tuple[str, bytes | None]] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            path = os.path.join(root, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            rel = os.path.relpath(path, directory)
            if os.path.getsize(path) > MAX_ARRAY_BYTES:
                found.append((rel, None))
                continue
            with open(path, "rb") as file:
                found.append((rel, file.read()))
    return found


#: Values with nothing of the page's inside (checked by exact type first: the common case).
_ATOMS: tuple[type, ...] = (str, int, float, complex, bool, type(None), range, slice,
                            type(Ellipsis))
#: Values a reader compares by their bytes (a checkpoint torch.save wrote, by what it holds).
_BYTES: tuple[type, ...] = (bytes, bytearray, memoryview, array.array, io.BytesIO)
_LEAVES: tuple[type, ...] = (
    *_ATOMS, type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType,
    types.MethodType, types.MethodWrapperType, types.WrapperDescriptorType,
    types.MethodDescriptorType, types.ClassMethodDescriptorType, types.GetSetDescriptorType,
    types.MemberDescriptorType, types.CodeType, types.FrameType, types.TracebackType,
    types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType, types.CellType,
    property, staticmethod, classmethod, io.IOBase)


def _torch_values(torch: Any) -> tuple[type, ...]:
    """torch's types of values with no tensor inside (a dtype, a device, a size)."""
    names = ("dtype", "device", "Size", "layout", "memory_format", "finfo", "iinfo", "Generator",
             "Stream", "Event")
    return tuple(getattr(torch, name) for name in names if hasattr(torch, name))


#: The standard library's modules whose objects hold the interpreter's state, not a page's
#: values (a logger reaches every logger of the process, torch's among them; a lock, a thread,
#: a file, a socket): skipped. The standard library's other objects are walked as any are
#: (``UserDict``, ``ChainMap``, ``queue.Queue``: values are put in them).
_INTERPRETER_STATE = frozenset({
    "logging", "io", "_io", "socket", "ssl", "select", "selectors",
    "subprocess", "multiprocessing", "concurrent", "asyncio", "signal", "sqlite3", "tempfile",
    "importlib", "zipimport", "pkgutil", "inspect", "ast", "dis",
    "tokenize", "codecs", "encodings", "warnings", "atexit", "gc", "sys", "os", "posix",
    "ctypes", "mmap", "pathlib"})


def _stdlib_state(cls: type) -> bool:
    module = (getattr(cls, "__module__", None) or "").partition(".")[0]
    return module in _INTERPRETER_STATE


def _from_torch(cls: type) -> bool:
    module = getattr(cls, "__module__", None) or ""
    return module == "torch" or module.startswith("torch.")


def _torch_machinery(cls: type) -> bool:
    """A class of torch's private modules: the compiler's state, never a page's."""
    return _from_torch(cls) and any(part.startswith("_") for part in cls.__module__.split(".")[1:])


def _plain(value: Any) -> bool:
    return type(value) in (*_ATOMS, bytes) or (type(value) is tuple and all(_plain(v) for v in value))


class _Walk:
    """One breadth-first walk from a namespace's names (see :func:`observe`)."""

    def __init__(self, namespace: dict[str, Any]) -> None:
        import torch

        self.torch = torch
        self.numpy: Any = sys.modules.get("numpy")
        self.values = _torch_values(torch)
        self.leaves = (*_LEAVES, *self.values)
        self.view = View([])
        self.seen: set[int] = set()
        self.recorded: set[int] = set()  # the tensors found, by id (kept alive by the view)
        self.looked = 0
        # Parameters named through an optimizer's param groups: only those no other path reached.
        self.aliases: list[tuple[str, Any]] = []
        self.todo: deque[tuple[str, Any, int]] = deque(
            # (not the module's own dunder names; an underscored name of the snippet's is its)
            (name, namespace[name], 0) for name in sorted(namespace)
            if not (name.startswith("__") and name.endswith("__")))

    def run(self) -> View:
        while self.todo:
            if self.full():
                return self.view
            path, value, depth = self.todo.popleft()
            self.looked += 1
            try:
                self.visit(path, value, depth)
            except Exception as exc:  # an attribute, a property, a __class__ that raises
                self.view.cut_because(unreadable(path, exc))
        for path, param in self.aliases:
            if self.full():
                break
            if id(param) not in self.recorded:
                self.tensor(path, "value", param)
        return self.view

    def full(self) -> bool:
        if len(self.view.tensors) >= MAX_TENSORS:
            self.view.cut_because(f"the first {MAX_TENSORS:,} tensors were compared")
            return True
        if self.looked >= MAX_OBJECTS:
            self.view.cut_because(f"the first {MAX_OBJECTS:,} objects were looked at")
            return True
        return False

    def visit(self, path: str, value: Any, depth: int) -> None:
        torch, cls = self.torch, type(value)
        # By type(), never isinstance(): a mock with spec=torch.Tensor says it is a tensor
        # through __class__, and reading its "data" would read any memory.
        if issubclass(cls, torch.Tensor):
            self.tensor(path, "grad" if id(value) in _GRAD_IDS else "value", value)
            return
        if self.numpy is not None and issubclass(cls, self.numpy.ndarray):
            self.array(path, value, depth)
            return
        if cls is types.MethodType:  # a bound method: what it is bound to
            self.todo.append((f"{path}.__self__", value.__self__, depth + 1))
            return
        if issubclass(cls, _BYTES) or _ctypes_data(value):
            self.raw(path, value, depth)
            return
        if issubclass(cls, io.StringIO):
            self.text(f"{path}.getvalue()", value.getvalue())
            return
        if issubclass(cls, weakref.ReferenceType):  # (a WeakMethod too: what it refers to)
            referent = value()
            if referent is not None:
                self.todo.append((f"{path}()", referent, depth + 1))
            return
        if cls is functools._lru_cache_wrapper:
            results = getattr(value.__wrapped__, "_autocast_demo_results", None)
            if isinstance(results, list):  # (track_caches: every result it returned)
                self.todo.extend((f"{path} result {i}", item, depth + 1)
                                 for i, item in enumerate(results, start=1))
            elif value.cache_info().currsize:
                self.view.cut_because(f"{path} is a cached function: what its cache holds "
                                      "cannot be read")
            value, cls = value.__wrapped__, type(value.__wrapped__)
        if isinstance(value, type) or cls is types.ModuleType:
            # The page's own classes (their attributes: a class attribute, an enum's members)
            # and modules (a helper module's globals); torch's, the standard library's and
            # installed libraries' are theirs.
            if (_writers(_defined_in(value)) or _made_at_run_time(value)) and id(value) not in self.seen:
                self.seen.add(id(value))
                self.todo.extend((f"{path}.{name}", item, depth + 1) for name, item
                                 in list(vars(value).items())
                                 if not (name.startswith("__") and name.endswith("__"))
                                 and type(item) not in _ATOMS)
            return
        if cls in (types.FunctionType, types.GeneratorType):
            # torch.compile(fn) wraps it, the eager run's returns it as it is: what the
            # function itself holds, under the same name in both runs.
            while cls is types.FunctionType and not _pages_code(value) and callable(
                    getattr(value, "__wrapped__", None)):
                value = value.__wrapped__
                cls = type(value)
            if cls not in (types.FunctionType, types.GeneratorType) or not _pages_code(value):
                return  # torch's, the standard library's: their own state
        elif issubclass(cls, torch.nn.Module):
            # torch.compile(model) and aot_module(model) wrap it, the eager run's return it as
            # it is: what the module itself holds, once, whichever name reaches it first.
            inner = getattr(value, "_orig_mod", None)
            if inner is None and cls.__name__ == "AOTModule":
                inner = getattr(value, "orig_module", None)
            value = inner if isinstance(inner, torch.nn.Module) else value
        elif issubclass(cls, self.leaves) or _stdlib_state(cls) or (
                _torch_machinery(cls) and not issubclass(cls, torch.optim.Optimizer)):
            return
        if id(value) in self.seen:
            return
        if depth >= MAX_DEPTH:
            self.view.cut_because(f"containers deeper than {MAX_DEPTH} levels were not followed")
            return
        self.seen.add(id(value))
        self.todo.extend((child, item, depth + 1) for child, item in self.children(path, value)
                         if type(item) not in _ATOMS)

    def tensor(self, path: str, kind: Kind, tensor: Any, inside: int = 0) -> None:
        """Record ``tensor``, or the tensors it is made of, and its ``.grad``."""
        torch = self.torch
        if inside > MAX_DEPTH:
            self.view.cut_because(f"{path} could not be read (tensors nested too deep)")
            return
        self.recorded.add(id(tensor))
        if tensor.is_nested:  # (a jagged one is a wrapper too: its components are what is seen)
            for i, part in enumerate(tensor.unbind()):
                self.tensor(f"{path}.unbind()[{i}]", kind, part, inside + 1)
        elif type(tensor) not in (torch.Tensor, torch.nn.Parameter) and hasattr(
                tensor, "__tensor_flatten__"):
            names, _context = tensor.__tensor_flatten__()
            for name in names:
                self.tensor(f"{path}.{name}", kind, getattr(tensor, name), inside + 1)
        elif (held := _without_values(tensor, torch)) is not None:
            self.view.cut_because(f"{path} cannot be compared: {held} (only its dtype "
                                  "and shape are known)")
        else:
            self.view.tensors.append((path, kind, tensor))
        # .grad of a non-leaf that does not retain it warns and is None: ask only where it can be.
        if tensor.is_leaf or tensor.retains_grad:
            grad = tensor.grad
            if grad is not None:
                self.tensor(f"{path}.grad", "grad", grad, inside + 1)

    def file(self, name: str, data: bytes) -> None:
        """A file the snippet wrote: a checkpoint by what it holds, text as printed lines are
        compared, anything else byte by byte."""
        if len(data) == 0:
            return
        loaded = _checkpoint(data, self.torch)
        if loaded is not None:
            self.todo.append((f"torch.load({name!r})", loaded, 1))
            return
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            self.data(f"open({name!r}, 'rb').read()", data, 1)
            return
        if "\0" in text:
            self.data(f"open({name!r}, 'rb').read()", data, 1)
        else:
            self.text(f"open({name!r}).read()", text)

    def raw(self, path: str, value: Any, depth: int) -> None:
        """Bytes as a reader compares them: what a checkpoint ``torch.save`` wrote holds, as
        ``torch.load`` reads it; an ``array.array`` by its numbers; anything else (a buffer,
        a ``memoryview``, a ``ctypes`` object) byte by byte."""
        torch = self.torch
        if isinstance(value, array.array) and value.typecode not in "uw":
            dtype = {"f": torch.float32, "d": torch.float64}.get(value.typecode, torch.int64)
            self.view.tensors.append((path, "value", torch.tensor(value.tolist(), dtype=dtype)))
            return
        data = (value.getvalue() if isinstance(value, io.BytesIO)
                else value.tobytes() if isinstance(value, memoryview | array.array)
                else bytes(memoryview(value)) if _ctypes_data(value) else bytes(value))
        self.data(path, data, depth)

    def data(self, path: str, data: bytes, depth: int) -> None:
        if not data:
            return
        loaded = _checkpoint(data, self.torch)
        if loaded is not None:
            self.todo.append((f"torch.load({path})", loaded, depth + 1))
            return
        self.view.tensors.append((path, "value", self.torch.frombuffer(bytearray(data),
                                                                        dtype=self.torch.uint8)))

    def text(self, path: str, text: str) -> None:
        """Text as a printed line is compared (:func:`...core.printed.text_parts`)."""
        torch = self.torch
        shape, integers, decimals = text_parts(text)
        raw = shape.encode()
        self.view.tensors.append((f"{path} (text)", "value",
                                  torch.frombuffer(bytearray(raw), dtype=torch.uint8) if raw
                                  else torch.zeros(0, dtype=torch.uint8)))
        if integers:
            self.view.tensors.append((f"{path} (integers)", "value",
                                      torch.tensor(integers, dtype=torch.int64)))
        if decimals:
            self.view.tensors.append((f"{path} (numbers)", "value",
                                      torch.tensor(decimals, dtype=torch.float64)))

    def array(self, path: str, value: Any, depth: int) -> None:
        kind = value.dtype.kind
        if kind in "biufc" and value.nbytes > MAX_ARRAY_BYTES:  # (a memory-mapped data set)
            self.view.cut_because(f"{path} is too large to be read for comparison "
                                  f"({value.nbytes / 2**30:.1f} GiB)")
        elif kind in "biufc":
            try:
                self.view.tensors.append(
                    (path, "value", self.torch.from_numpy(self.numpy.array(value, order="C"))))
            except (TypeError, ValueError, RuntimeError) as exc:  # float128, a foreign byte order
                self.view.cut_because(unreadable(path, exc))
        elif kind == "O" and id(value) not in self.seen:  # objects: a container like a list
            self.seen.add(id(value))
            self.todo.extend(
                (f"{path}[{', '.join(map(str, index))}]", value[index], depth + 1)
                for index in self.numpy.ndindex(value.shape) if type(value[index]) not in _ATOMS)
        # (strings, dates: values, compared only through what is printed of them)

    def children(self, path: str, value: Any) -> list[tuple[str, Any]]:
        torch = self.torch
        if isinstance(value, torch.nn.Module):
            return self.module(path, value)
        if isinstance(value, torch.optim.Optimizer):
            return self.optimizer(path, value)
        if isinstance(value, dict):
            return [(f"{path}[{key!r}]" if isinstance(key, str | int | float | bool) else f"{path}[#{i}]",
                     item) for i, (key, item) in enumerate(value.items())]
        if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple
            return [(f"{path}.{name}", item) for name, item in zip(value._fields, value, strict=False)]
        if isinstance(value, list | tuple | deque):
            return [(f"{path}[{i}]", item) for i, item in enumerate(value)]
        if isinstance(value, types.FunctionType):
            return _held_by_function(path, value)
        if isinstance(value, types.GeneratorType):
            # A suspended generator's locals (reading them does not resume it); a finished one
            # holds none.
            frame = value.gi_frame
            return [] if frame is None else [(f"{path}.gi_frame.f_locals[{name!r}]", item)
                                             for name, item in frame.f_locals.items()]
        if isinstance(value, collections.abc.Mapping):  # UserDict, ChainMap, weak ones
            return [(f"{path}[{key!r}]" if isinstance(key, str | int | float | bool) else f"{path}[#{i}]",
                     item) for i, (key, item) in enumerate(list(value.items()))]
        if isinstance(value, collections.UserList):
            return [(f"{path}[{i}]", item) for i, item in enumerate(value)]
        if isinstance(value, set | frozenset):
            # Values with nothing to compare (dtypes, devices, names) are no cut: only what
            # could hold a tensor, which no order names.
            if not all(_plain(item) or isinstance(item, self.values) for item in value):
                self.view.cut_because(f"{path} is a set: its items have no order to be compared by")
            return []
        items = []
        if isinstance(value, functools.partial):
            items = [(f"{path}.func", value.func)]
            items += [(f"{path}.args[{i}]", item) for i, item in enumerate(value.args)]
            items += [(f"{path}.keywords[{key!r}]", item) for key, item in value.keywords.items()]
        # The underscored attributes of a writer's or a helper's class are as observable as
        # any (a ``_grad`` it keeps); those of torch's own classes are torch's bookkeeping, but
        # for the tensors among them: its public classes keep their state there (a
        # GradScaler's ``_scale``, which a compiled backward's overflow changes).
        own = _from_torch(type(value))
        return items + [(child, item) for child, item in _attributes(path, value, private=True)
                        if not own or not child.rpartition(".")[2].startswith("_")
                        or isinstance(item, torch.Tensor)]

    def module(self, path: str, module: Any) -> list[tuple[str, Any]]:
        # A submodule compiled in place (m[0] = torch.compile(m[0])) is named through its
        # wrapper compiled, and as itself in the eager run: the name a reader writes.
        items = [(f"{path}.{_unwrapped(name)}", p) for name, p in module.named_parameters()]
        items += [(f"{path}.{_unwrapped(name)}", b) for name, b in module.named_buffers()]
        # The other attributes of it and of its submodules, of any kind (a tensor, a list of
        # them, a dataclass); the submodules themselves once, through it.
        for name, sub in module.named_modules():
            self.seen.add(id(sub))
            # Of a writer's subclass, its underscored attributes too, but for nn.Module's own.
            private = not _from_torch(type(sub))
            where = f"{path}.{_unwrapped(name)}" if name else path
            items += _attributes(where, sub, private, skip={*_module_own(self.torch), "_orig_mod"})
            # Its hooks, which the page wrote: what their closures keep (activations, counts).
            items += [(f"{where}.{hooks}[{i}]", hook) for hooks in _HOOKS
                      for i, hook in enumerate(getattr(sub, hooks, {}).values())]
        return items

    def optimizer(self, path: str, optimizer: Any) -> list[tuple[str, Any]]:
        # Its state is keyed by the parameters themselves: name them by their order.
        params = [p for group in optimizer.param_groups for p in group["params"]]
        index = {id(p): i for i, p in enumerate(params)}
        items = [(f"{path}.state[{index.get(id(param), '?')}][{key!r}]", item)
                 for param, state in optimizer.state.items() for key, item in state.items()]
        for g, group in enumerate(optimizer.param_groups):
            items += [(f"{path}.param_groups[{g}][{key!r}]", item)
                      for key, item in group.items() if key != "params"]
            # Mostly the model's own parameters, named through it: these paths only for those
            # that nothing else reaches (after the walk).
            self.aliases += [(f"{path}.param_groups[{g}]['params'][{i}]", p)
                             for i, p in enumerate(group["params"])]
        return items + _attributes(path, optimizer, private=False, skip={"state", "param_groups"})


def _ctypes_data(value: Any) -> bool:
    """A ``ctypes`` number, array or structure: memory of the snippet's, read as bytes."""
    ctypes = sys.modules.get("ctypes")
    return ctypes is not None and isinstance(value, ctypes._SimpleCData | ctypes.Array
                                             | ctypes.Structure | ctypes.Union)


def _made_at_run_time(module: types.ModuleType) -> bool:
    """A module the snippet made (``types.ModuleType("state")``), from no file or spec."""
    return (type(module) is types.ModuleType and getattr(module, "__spec__", None) is None
            and not hasattr(module, "__file__") and module.__name__ not in sys.builtin_module_names)


#: How a zip file begins (``torch.save`` writes one).
_ZIP = b"PK\x03\x04"


def _checkpoint(data: bytes, torch: Any) -> Any:
    """What a checkpoint holds, read as ``torch.load(..., weights_only=True)`` reads it (no
    code of the checkpoint's runs); None for bytes that are none."""
    if not data.startswith(_ZIP):
        return None
    try:
        return torch.load(io.BytesIO(data), weights_only=True, map_location="cpu")
    except Exception:  # a zip that is no checkpoint, or one weights_only refuses: its bytes
        return None


def _pages_code(value: Any) -> bool:
    """Is a function or generator the page's code (by where its code is)?"""
    code = value.__code__ if isinstance(value, types.FunctionType) else value.gi_code
    return _writers(code.co_filename)


def _defined_in(value: Any) -> str:
    """The file of a module, or of the module that defined a class ("" where none)."""
    module = value if isinstance(value, types.ModuleType) else sys.modules.get(value.__module__)
    return module_file(module) or ""


def _writers(filename: str) -> bool:
    """A file of the page's own code: the snippet's, or the writer's modules."""
    return filename.startswith(CODE_FILE) or bool(writers([filename]))


def _held_by_function(path: str, fn: Any) -> list[tuple[str, Any]]:
    """What a function holds: the values its closure captured and its default arguments."""
    items = [(f"{path}.__closure__[{i}].cell_contents", cell.cell_contents)
             for i, cell in enumerate(fn.__closure__ or ()) if _filled(cell)]
    items += [(f"{path}.__defaults__[{i}]", item) for i, item in enumerate(fn.__defaults__ or ())]
    items += [(f"{path}.__kwdefaults__[{key!r}]", item)
              for key, item in (fn.__kwdefaults__ or {}).items()]
    return items + _attributes(path, fn, private=False)


def _filled(cell: Any) -> bool:
    try:
        cell.cell_contents  # noqa: B018 (an empty cell raises)
    except ValueError:
        return False
    return True


def _unwrapped(name: str) -> str:
    """A dotted module path without the ``_orig_mod`` of a compiled module between its parts."""
    return ".".join(part for part in name.split(".") if part != "_orig_mod")


#: A module's hooks: the page's functions, with what their closures keep.
_HOOKS = ("_forward_pre_hooks", "_forward_hooks", "_backward_pre_hooks", "_backward_hooks")

_MODULE_OWN: set[str] = set()


def _module_own(torch: Any) -> set[str]:
    """The attributes every ``nn.Module`` has (its hooks, its registries): torch's, not the page's."""
    if not _MODULE_OWN:
        _MODULE_OWN.update(vars(torch.nn.Module()))
    return _MODULE_OWN


def _attributes(path: str, value: Any, private: bool,
                skip: set[str] | frozenset[str] = frozenset()) -> list[tuple[str, Any]]:
    """An object's attributes: its ``__dict__``, then every slot of its MRO that is set;
    those named with an underscore only where ``private``, none named in ``skip``."""
    found = dict(vars(value)) if hasattr(value, "__dict__") else {}
    for cls in type(value).__mro__:
        slots = cls.__dict__.get("__slots__", ())
        for slot in (slots,) if isinstance(slots, str) else slots:
            if slot in ("__dict__", "__weakref__"):
                continue
            name = f"_{cls.__name__.lstrip('_')}{slot}" if slot.startswith("__") else slot
            descriptor = cls.__dict__.get(name)
            if descriptor is None:
                continue
            try:  # the class's own descriptor: a subclass's __getattr__ cannot answer for it
                found.setdefault(name, descriptor.__get__(value, cls))
            except AttributeError:  # a slot never set: nothing there to observe
                continue
    return [(f"{path}.{name}", item) for name, item in found.items()
            if (private or not name.startswith("_")) and name not in skip]


def _without_values(tensor: Any, torch: Any) -> str | None:
    """What kind of tensor ``tensor`` is when it holds no values to compare, else None."""
    if tensor.is_meta:
        return "a meta tensor"
    fake = sys.modules.get("torch._subclasses.fake_tensor")
    if fake is not None and fake.is_fake(tensor):
        return "a fake tensor"
    return None
