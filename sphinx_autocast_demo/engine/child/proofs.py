"""What proves a run is what its verdict takes it for: the eager run eager, the compiled run
compiled, and the value of the row the one the run had. Runs in the child, with torch.

Every entry point into the compiler stack a snippet may call is replaced in the eager run by
one that returns what it was given (a function wrapped, as the compiled run's is, so that each
call's output is recorded in both), and counted in the compiled run: ``torch.compile``,
``torch.compiler.compile``, ``nn.Module.compile``, ``torch._dynamo.optimize`` (and
``optimize_assert``), and AOTAutograd called directly (``aot_function``, ``aot_module`` and
their aliases, as ``functorch.compile`` and ``torch._functorch`` export them). Only calls from
outside torch are replaced: torch's own eager functions compile internally (``torch.cond``
and the other higher-order ops), and must keep working; the frames they compile, and those
``torch.export`` traces, are not the snippet's compiles and are counted apart
(:data:`_INTERNAL`), as are ``torch._dynamo.explain``'s, a report that reads the same in both
runs. Whatever else reaches dynamo in the eager run is caught by its count.
"""

from __future__ import annotations

import functools
import os
import sys
import threading
import types
from typing import Any

#: Frames dynamo compiled, and graphs it made, inside torch's own calls (a higher-order op's
#: eager path, an export's trace), and how deep such calls are nested now: neither the eager
#: run's nor the compiled run's compiles of the snippet.
_INTERNAL = {"frames": 0, "graphs": 0, "depth": 0}
#: How deep the calls of entry points the snippet made are nested now: torch code they call
#: (``nn.Module.compile`` calls ``torch.compile``) compiles for the snippet.
_SNIPPET = {"depth": 0}
#: AOTAutograd compiles outside torch's own calls: its one common step (``create_aot_state``)
#: counted, whichever entry point led there (the compiled run's proof where dynamo made no
#: graph; in the eager run, a compile that went around every entry point replaced).
_AOT = {"states": 0}
#: Where the writer's code was each time dynamo began to compile in the eager run: (part,
#: line, function, text) of the innermost frame of theirs (see :func:`watch_compiles`).
SITES: list[list[Any]] = []


def _from_torch(depth: int) -> bool:
    """Is the frame ``depth`` levels up inside torch's own package (or functorch's)?"""
    return sys._getframe(depth + 1).f_code.co_filename.startswith(_torch_roots())


@functools.cache
def _torch_roots() -> tuple[str, ...]:
    import torch

    torch_dir = os.path.dirname(torch.__file__)
    return (os.path.join(torch_dir, ""),
            os.path.join(os.path.dirname(torch_dir), "functorch", ""))


def _counts() -> tuple[int, int]:
    """Frames dynamo began to compile (a fallback to eager included), and graphs it made."""
    from torch._dynamo import utils

    return (int(utils.counters["frames"].get("total", 0)),
            int(utils.counters["stats"].get("unique_graphs", 0)))


def _internal(fn: Any) -> Any:
    """``fn``, whose calls compile only what torch itself asked for: counted apart (once, by
    the outermost of nested such calls: strict export calls dynamo's export)."""
    if not callable(fn):
        return fn

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        before = _counts()
        _INTERNAL["depth"] += 1
        try:
            return fn(*args, **kwargs)
        finally:
            _INTERNAL["depth"] -= 1
            if not _INTERNAL["depth"]:
                after = _counts()
                _INTERNAL["frames"] += after[0] - before[0]
                _INTERNAL["graphs"] += after[1] - before[1]

    return call


def _given(model: Any = None, /, *args: Any, **kwargs: Any) -> Any:
    """The eager run's ``torch.compile``: the function or module it was given."""
    return model if model is not None else (lambda fn: fn)


def _given_optimize(*args: Any, **kwargs: Any) -> Any:
    return lambda fn: fn  # torch._dynamo.optimize(backend)(fn) and its decorator form


def _given_aot(fn: Any, /, *args: Any, **kwargs: Any) -> Any:
    return fn  # aot_function(fn, fw_compiler, ...) and aot_module(module, ...)


#: What to make of a function the snippet compiles through ``torch.compile`` (in the eager
#: run, of the function given back): ``wrap(made, fn)``, as :meth:`.steps.Steps.wrap`.
COMPILED: list[Any] = []


def _watched(made: Any, args: tuple[Any, ...]) -> Any:
    """``made``, what the snippet's ``torch.compile(fn)`` gave, with its calls watched (a
    function only: a module is compared through its parameters and their gradients)."""
    fn = args[0] if args else None
    if not isinstance(fn, types.FunctionType) or not callable(made):
        return made
    for wrap in COMPILED:
        made = wrap(made, fn)
    return made


def _entry(real: Any, eager: Any, mode: str, aot: bool = False, watch: bool = False) -> Any:
    """An entry point as the run sees it: the snippet's calls get ``eager`` in the eager run,
    ``real`` in the compiled one. torch's own calls get ``real``, its compiles counted apart:
    a higher-order op's eager path, or a compile inside another one's (dynamo's backends call
    AOTAutograd). Not torch code the snippet called for a compile: ``nn.Module.compile``
    (inside an entry point's call) and AOTAutograd asked for outside any such call
    (``memory_efficient_fusion`` calls ``aot_function``) compile for the snippet."""

    @functools.wraps(real)
    def entry(*args: Any, **kwargs: Any) -> Any:
        if _from_torch(1) and not _SNIPPET["depth"] and (not aot or _INTERNAL["depth"]):
            return _internal(real(*args, **kwargs))
        if mode == "eager":
            given = eager(*args, **kwargs)
            if watch and (not args or args[0] is None):  # the decorator form, as compiled
                return lambda fn: _watched(given(fn), (fn,))
            return _watched(given, args) if watch else given
        made = _for_snippet(real)(*args, **kwargs)
        if watch:
            made = _watched(made, args)
        # The decorator form (torch.compile(backend=...)(fn)) compiles when its result is
        # called, through torch.compile again: that call is the snippet's too.
        return _for_snippet(made) if (not args or args[0] is None) and callable(made) else made

    entry._autocast_demo_entry = True  # type: ignore[attr-defined]
    return entry


def _for_snippet(fn: Any) -> Any:
    """``fn``, whose calls compile for the snippet, torch's own code in them included."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        _SNIPPET["depth"] += 1
        try:
            return fn(*args, **kwargs)
        finally:
            _SNIPPET["depth"] -= 1

    return call


def _traced(real: Any, curried: bool = False) -> Any:
    """``torch.export.export`` and the like: a trace, not a compile of code that then runs.
    ``curried``: ``real(fn)`` gives what traces when called (``torch._dynamo.explain(fn)(x)``,
    whose report is the same in both runs, and whose outputs nobody keeps)."""

    @functools.wraps(real)
    def trace(*args: Any, **kwargs: Any) -> Any:
        made = _internal(real)(*args, **kwargs)
        return _traced(made) if curried and callable(made) else made

    return trace


def patch_entries(mode: str, backend: str) -> None:
    """Replace every entry point (see the module's docstring) for a run in ``mode``; in the
    compiled run, ``torch.compile`` calls that name no backend get ``backend``."""
    import torch
    import torch._dynamo
    import torch._functorch.aot_autograd as aot_autograd

    compile_ = torch.compile

    def compile_with_backend(model: Any = None, /, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("backend", backend)
        return compile_(model, *args, **kwargs)

    real_compile = compile_with_backend if mode == "compiled" else compile_
    torch.compile = _entry(real_compile, _given, mode, watch=True)
    torch.compiler.compile = _entry(torch.compiler.compile, _given, mode, watch=True)
    module_compile = torch.nn.Module.compile
    # (a method: the eager run's compiles nothing and returns None, as torch's does)
    torch.nn.Module.compile = _entry(module_compile, lambda self, *a, **k: None, mode)  # type: ignore[method-assign, unused-ignore]
    torch._dynamo.optimize = _entry(torch._dynamo.optimize, _given_optimize, mode)
    torch._dynamo.optimize_assert = _entry(torch._dynamo.optimize_assert, _given_optimize, mode)
    # AOTAutograd's own entry points, under every name a snippet may import them by: the
    # modules that bound them before this run (functorch.compile binds them when first
    # imported, which after this patch gives it ours).
    holders = [aot_autograd, *(sys.modules[name] for name in
                               ("functorch.compile", "torch._functorch.compilers")
                               if name in sys.modules)]
    for holder in holders:
        for name in ("aot_function", "aot_module", "compiled_function", "compiled_module",
                     "aot_module_simplified"):
            real = getattr(holder, name, None)
            if real is not None and not getattr(real, "_autocast_demo_entry", False):
                setattr(holder, name, _entry(real, _given_aot, mode, aot=True))
    for holder, name in ((torch.export, "export"), (torch._dynamo, "export"),
                         (torch._dynamo, "explain")):
        if hasattr(holder, name):
            setattr(holder, name, _traced(getattr(holder, name), curried=name == "explain"))
    state = getattr(aot_autograd, "create_aot_state", None)
    if state is not None:  # (called by its module's name: the module's attribute is the one)
        aot_autograd.create_aot_state = _aot_counted(state)
    # A compile served from AOTAutograd's disk cache makes no state: it reads the config too.
    cache = getattr(aot_autograd, "AOTAutogradCache", None)
    if cache is not None and callable(getattr(cache, "try_load", None)):
        cache.try_load = staticmethod(_compiling_first(cache.try_load))


def _compiling_first(real: Any) -> Any:
    @functools.wraps(real)
    def call(*args: Any, **kwargs: Any) -> Any:
        _began_compiling()
        return real(*args, **kwargs)

    return call


def _began_compiling() -> None:
    for compiling in _COMPILING:
        compiling()


def _aot_counted(real: Any) -> Any:
    @functools.wraps(real)
    def create_aot_state(*args: Any, **kwargs: Any) -> Any:
        if not _INTERNAL["depth"]:
            _AOT["states"] += 1
            _began_compiling()
        return real(*args, **kwargs)

    return create_aot_state


def watch_compiles(parts: list[str], texts: list[str], frame_of: Any) -> None:
    """In the eager run: note the writer's line that set off each compile, so that an entry
    point we do not replace is pointed at where the snippet calls it (``frame_of`` makes the
    record of that frame)."""
    try:
        from torch._dynamo.callback import callback_handler
    except ImportError:  # (another torch: the count alone still proves it)
        return

    def started(*args: Any) -> None:
        if _INTERNAL["depth"]:  # torch's own compile, inside a call of the snippet's
            return
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename in parts:
                SITES.append(frame_of(parts, texts, frame.f_code.co_filename, frame.f_lineno,
                                      frame.f_code.co_name))
                return
            frame = frame.f_back  # type: ignore[assignment]

    callback_handler.register_start_callback(started)


def compiled_frames() -> tuple[int, list[str]]:
    """How many frames dynamo began to compile for the snippet in this run, AOTAutograd's
    compiles counted with them (not torch's own, see :data:`_INTERNAL`), and their functions'
    names: the eager run's proof is that there are none."""
    from torch._dynamo import utils

    count = _counts()[0] - _INTERNAL["frames"] + _AOT["states"]
    names = [m.co_name for m in utils.get_compilation_metrics() if m.co_name] if count else []
    return count, list(dict.fromkeys(names))


def aot_compiles() -> int:
    """How many AOTAutograd compiles of the snippet's this run made (see :data:`_AOT`)."""
    return _AOT["states"]


def compiled_anything() -> bool:
    """Did the compiled run compile the snippet's code (a graph dynamo made, or AOTAutograd)?"""
    return _counts()[1] - _INTERNAL["graphs"] > 0 or _AOT["states"] > 0


#: Why a compiled run compiled nothing, as a fact (judge/notes.py words each).
_NOTHING_COMPILED = {
    "env-disable": "TORCH_COMPILE_DISABLE is set in the build's environment",
    "config-disable": "torch._dynamo.config.disable is set",
    "never-reached": "the snippet never reached torch.compile (or another entry point into "
                     "the compiler)",
    "skipped": "dynamo gave up on each frame it began ({reason})",
}


def why_nothing_compiled() -> list[str]:
    """Why a compiled run compiled nothing, as far as this process can tell: a key of
    :data:`_NOTHING_COMPILED`, then what fills it."""
    import torch._dynamo

    from .facts import skipped_frames

    if os.environ.get("TORCH_COMPILE_DISABLE", "") not in ("", "0"):
        return ["env-disable"]
    if getattr(torch._dynamo.config, "disable", False):
        return ["config-disable"]
    skipped = [reason for reason, _ in skipped_frames() if reason]
    return ["skipped", skipped[0]] if skipped else ["never-reached"]


#: The values the snippet itself gave the varied config, where they are not the row's own
#: (``repr``, each once, at most :data:`MAX_SET`), and the writer's frame that first set each.
SET: list[str] = []
SET_AT: list[list[Any]] = []
MAX_SET = 8
#: The values of the varied config that the snippet's compiles ran under, read in the thread
#: (and context) of each compile as it began (``repr``, each once, at most :data:`MAX_SET`),
#: each with the writer's frame of its first compile and the name of the thread it ran in.
READ: dict[str, tuple[list[Any], str]] = {}


def watch_config(module: Any, attr: str, given: Any, parts: list[str], texts: list[str],
                 frame_of: Any) -> None:
    """From now on, note each write of ``module.attr`` (assignment, ``setattr`` or
    ``config.patch``: all go through the config module's ``__setattr__``) of a value other than
    ``given``, the row's, and the writer's line that made it; and the value each compile of the
    snippet's reads (:data:`READ`), wherever it runs: a row must not show a value the snippet
    replaced as its own, nor be a verdict of a value no compile ran under."""
    cls = type(module)
    super_setattr: Any = cls.__setattr__

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if name == attr and value != given:
            value_repr = repr(value)
            if value_repr not in SET and len(SET) < MAX_SET:
                SET.append(value_repr)
                SET_AT.append(_writers_frame(parts, texts, frame_of))
        super_setattr(self, name, value)

    if cls is not types.ModuleType:  # (a plain module: there is nothing to intercept)
        # Past the config module's own __setattr__, which takes only config names.
        types.ModuleType.__setattr__(module, "__class__",
                                     type(cls.__name__, (cls,), {"__setattr__": __setattr__}))

    # AOTAutograd's config is read where the joint graph is traced, at the forward: the
    # lowering of the backward that a first .backward() starts compiles that graph as traced.
    traced_at_forward = module.__name__.startswith("torch._functorch")

    def compiling(args: Any = None) -> None:
        # Called in the compiling thread as dynamo begins a frame, or AOTAutograd a function:
        # what torch reads from here on is what this thread's context holds now.
        lazy = getattr(getattr(args, "callback_trigger", None), "name", "") == "LAZY_BACKWARD"
        if _INTERNAL["depth"] or (lazy and traced_at_forward):
            return
        try:  # (raising here would fail the snippet's compile)
            value_repr = repr(getattr(module, attr))
        except Exception as exc:
            value_repr = f"<unreadable: {type(exc).__name__}>"
        if value_repr not in READ and len(READ) < MAX_SET:
            READ[value_repr] = (_writers_frame(parts, texts, frame_of), threading.current_thread().name)

    _COMPILING.append(compiling)
    try:
        from torch._dynamo.callback import callback_handler
    except ImportError:  # (another torch: AOTAutograd's compiles are still read)
        return
    callback_handler.register_start_callback(compiling)


#: What to call as an AOTAutograd compile of the snippet's begins (see :func:`_aot_counted`).
_COMPILING: list[Any] = []


def _writers_frame(parts: list[str], texts: list[str], frame_of: Any) -> list[Any]:
    """The innermost frame of the writer's code on the stack now; [] when there is none (a
    helper module or a library set it, called from no code of the page's)."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename in parts:
            return list(frame_of(parts, texts, frame.f_code.co_filename, frame.f_lineno,
                                 frame.f_code.co_name))
        frame = frame.f_back  # type: ignore[assignment]
    return []


def foreign_reads(row: str) -> list[str]:
    """Values compiles read that are neither ``row``'s nor the snippet's (a thread's defaults)."""
    return [value for value in READ if value != row and value not in SET]


def set_and_read() -> tuple[list[str], list[list[Any]]]:
    """The values the snippet wrote that a compile then read, and where each was written (a
    write no compile read changed nothing)."""
    read = [i for i, value in enumerate(SET) if value in READ]
    return [SET[i] for i in read], [SET_AT[i] for i in read]


def not_a_verdict(record: dict[str, Any], mode: str, parts: int, held: bool,
                  row: str) -> dict[str, Any]:
    """``record`` as an error of its kind where the run cannot give a verdict of its row: an
    eager run that compiled, a compiled run that compiled nothing (both would compare like
    with like), a row whose value a setup wrote over before the demo ran (it never ran under
    its own), a compiled run whose compiles read a value the row did not give and the snippet
    did not write (:func:`foreign_reads`). Said where it happened. A value the demo's own code
    writes over is its point (a recipe with ``config.patch``): the row says so
    (``config_set``) and stays a verdict."""
    kind, message, frames, facts = "", "", [], []
    setup_set = [at for at in SET_AT if at and at[0] < parts - 1]
    if setup_set:
        kind, frames = "config-set", setup_set[:1]
        facts = [SET[SET_AT.index(setup_set[0])]]
        message = f"a setup sets the config to {facts[0]} before the demo runs"
    elif mode == "eager" and (compiled := compiled_frames())[0]:
        # (not how many frames: that varies with the value, and one problem is said once)
        kind, frames = "eager-compiled", SITES[:1]
        facts = (["dynamo", *compiled[1]] if compiled[1] else ["aot"] if aot_compiles()
                 else ["frame"])
        message = (f"dynamo compiled {', '.join(compiled[1])} in the eager run" if compiled[1]
                   else "AOTAutograd compiled a function in the eager run" if aot_compiles()
                   else "dynamo compiled a frame in the eager run")
    elif mode == "compiled" and (foreign := foreign_reads(row)):
        at, thread = READ[foreign[0]]
        kind, frames = "config-other", [at] if at else []
        facts = [foreign[0], row, thread if thread != "MainThread" else ""]
        message = (f"a compile read {foreign[0]}, not this row's {row}"
                   + (f", in the thread {thread!r}" if thread != "MainThread" else ""))
    elif mode == "compiled" and held and record["status"] == "ok" and not compiled_anything():
        facts = why_nothing_compiled()
        kind = "compiled-nothing"
        why = _NOTHING_COMPILED[facts[0]].format(reason=facts[1] if facts[1:] else "")
        message = f"the compiled run compiled nothing: {why}"
    if not kind:
        return record
    # The message in English for a reader of the result file; the page and the console word
    # the kind and its facts in their own language (judge/notes.py).
    return {"status": "raised", "error": {"type": "NotAVerdict", "names": ["NotAVerdict"],
                                          "kind": kind, "message": message, "frames": frames,
                                          "facts": facts}}
