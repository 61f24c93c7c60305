"""One run's whole life in its own process: a job (demo, value, mode) in, its record out.

:func:`run_and_write` is entered in a child forked from the zygote (:mod:`.zygote`) or in a
fresh interpreter (``worker --job FILE``): it moves to the run's scratch directory, runs the
setups and the demo in a new ``__main__`` under the value (:func:`run_job`), copies the tensors
within reach to a data file (:func:`collect_tensors`), and writes the record, as JSON, where the
pool reads it. What the run observes is :mod:`.observe`'s; that the eager run stayed eager and
the compiled one compiled is :mod:`.proofs`'. Worker side only: it must import nothing from
Sphinx or docutils, nor from the build's side of the engine.
"""

from __future__ import annotations

import ast
import contextlib
import faulthandler
import io
import json
import linecache
import os
import random
import sys
import threading
import time
import traceback
import types
from typing import Any

from ..protocol import CODE_FILE, Job
from .copies import Copies
from .facts import compile_facts
from .imports import track_reads, writers_files
from .observe import observe, track_autograd_grad, track_caches, unreadable
from .proofs import (
    COMPILED,
    SET,
    not_a_verdict,
    patch_entries,
    set_and_read,
    watch_compiles,
    watch_config,
)
from .steps import Steps
from .warned import log_records_on_one_line, show_warnings_on_one_line


def decode_value(value: Any) -> Any:
    """JSON value -> Python value, turning ``{"__torch__": "bfloat16"}`` into ``torch.bfloat16``."""
    import torch

    if isinstance(value, list):
        return [decode_value(v) for v in value]
    if isinstance(value, dict):
        if set(value) == {"__torch__"}:
            return getattr(torch, value["__torch__"])
        return {k: decode_value(v) for k, v in value.items()}
    return value


def resolve_config(path: str) -> tuple[Any, str]:
    """``torch._functorch.config.backward_pass_autocast`` -> (config module, attribute)."""
    import importlib

    module_name, _, attr = path.rpartition(".")
    module = importlib.import_module(module_name)
    if not hasattr(module, attr):
        raise LookupError(f"{module_name} has no config {attr!r}")
    return module, attr


def collect_tensors(namespace: dict[str, Any], copies: Copies, steps: Steps | None = None,
                    directory: str | None = None) -> tuple[list[dict[str, Any]], str]:
    """Every tensor a reader could reach (:func:`.observe.observe`: from the snippet's names,
    and in the files it wrote in ``directory``, its working directory), then the gradients of
    each backward that the end no longer holds (:mod:`.steps`), and why the view is cut.

    Exact bytes are hashed for bitwise comparison; the numbers go to the run's data file
    (:class:`.copies.Copies`) so that the parent can compute max |difference| without torch. A tensor that
    cannot be read is a cut of the view, never the snippet's error.
    """
    view = observe(namespace, directory)
    records: list[dict[str, Any]] = []
    for name, kind, tensor in view.tensors:
        try:
            records.append(copies.record(name, kind, tensor))
        except Exception as exc:  # whatever a subclass or a storage does: one tensor unread
            view.cut_because(unreadable(name, exc))
    if steps is not None:
        names: dict[int, str] = {}
        for name, kind, tensor in view.tensors:
            if kind == "value":
                names.setdefault(id(tensor), name)
        stepped, unread = steps.records(names, {id(tensor) for _, _, tensor in view.tensors})
        records += stepped
        for reason in unread:
            view.cut_because(reason)
    copies.close()
    return records, view.cut


def _names(exc: BaseException) -> list[str]:
    names: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        names.extend(cls.__name__ for cls in type(current).__mro__ if cls is not object)
        current = current.__cause__ or current.__context__
    return list(dict.fromkeys(names))


def _first_lines(exc: BaseException) -> str:
    """The exception's own reason, in one line: its first line, and the next one when the
    first only introduces it (``backend='aot_eager' raised:`` then ``AssertionError: ...``)."""
    message = exc.msg if isinstance(exc, SyntaxError) else str(exc)
    lines = [line.strip() for line in (message or "").splitlines() if line.strip()]
    if len(lines) > 1 and lines[0].endswith(":"):
        return f"{lines[0]} {lines[1]}"
    return lines[0] if lines else ""


def _reason(exc: BaseException) -> str:
    """The reasons of the whole chain (``raise ... from``, or raised while handling another),
    each said once: the cause is often what the page teaches."""
    reason = _first_lines(exc)
    seen = {id(exc)}
    current: BaseException | None = exc
    while current is not None:
        cause = current.__cause__ or (None if current.__suppress_context__ else current.__context__)
        if cause is None or id(cause) in seen:
            break
        seen.add(id(cause))
        first = _first_lines(cause)
        if first and first not in reason:
            reason += f"; caused by {type(cause).__name__}: {first}"
        current = cause
    return reason


def writers_frame(parts: list[str], texts: list[str], filename: str, line: int | None,
                  function: str) -> list[Any]:
    """A frame of the writer's code (``filename`` one of ``parts``) as a record keeps it:
    (part, line, function, the line's text)."""
    part, line = parts.index(filename), line or 1
    lines = texts[part].splitlines()
    return [part, line, function, lines[line - 1].strip() if 0 < line <= len(lines) else ""]


def describe_error(exc: BaseException, parts: list[str], texts: list[str]) -> dict[str, Any]:
    """The exception in the writer's terms: frames as (part, line) of the code we were given.

    ``parts`` are the file names given to ``compile()``: setups first, the demo last. Lines
    are mapped to doc lines by the build, so a result stays valid when a demo moves.
    """
    frames = [writers_frame(parts, texts, frame.filename, frame.lineno, frame.name)
              for frame in traceback.extract_tb(exc.__traceback__) if frame.filename in parts]
    if isinstance(exc, SyntaxError) and exc.filename in parts:
        frames.append([parts.index(exc.filename), exc.lineno or 1, "<module>",
                       (exc.text or "").strip()])
    return {
        "type": type(exc).__name__,
        "names": _names(exc),
        "message": _reason(exc),
        "frames": frames,
    }


def reseed() -> None:
    """The same random state at the start of every run."""
    import torch

    torch.manual_seed(0)
    random.seed(0)
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed(0)


class ModeLeftOpen(RuntimeError):
    """The snippet ended inside a torch function or dispatch mode it entered."""


def _close_modes() -> list[str]:
    """Exit the torch modes left on the stacks; the names of those the writer must close.

    ``torch.set_default_device`` is kept on the stack as a mode too, and that is no mistake.
    """
    import torch
    from torch.utils._device import DeviceContext
    from torch.utils._python_dispatch import _pop_mode

    left = []
    while torch._C._len_torch_function_stack():
        mode = torch._C._pop_torch_function_stack()
        if not isinstance(mode, DeviceContext):
            left.append(type(mode).__name__)
    while torch._C._len_torch_dispatch_stack():
        left.append(type(_pop_mode()).__name__)
    return left


#: The numbers ``id()`` gave the snippet's code (at most :data:`MAX_IDS`): printed, they
#: differ between any two runs, so the parent reads them as ``<id>`` (records.py).
IDS: set[int] = set()
MAX_IDS = 10_000


def _builtins_recording_ids() -> dict[str, Any]:
    """Python's builtins for the snippet's code, with an ``id`` that notes what it gave
    (torch's own calls of ``id`` are not the snippet's, and go on unwatched)."""
    import builtins

    real = builtins.id

    def id(obj: object, /) -> int:  # (the name the snippet calls)
        number = real(obj)
        if len(IDS) < MAX_IDS:
            IDS.add(number)
        return number

    return {**vars(builtins), "id": id}


def run_job(job: Job) -> dict[str, Any]:
    """Execute ``job`` in this (fresh, forked) process and return the result record."""
    import torch
    import torch._dynamo
    from torch._dynamo import utils

    start = time.perf_counter()
    torch._dynamo.reset()
    # What the zygote's warm-up compiled is not this run's: count from zero.
    utils.counters.clear()
    getattr(utils, "clear_compilation_metrics", lambda: None)()
    patch_entries(job["mode"], job["backend"])
    track_autograd_grad()
    track_caches()
    copies = Copies(job["data_path"])
    steps = Steps(copies)
    steps.install()
    COMPILED.append(steps.wrap)
    track_reads()  # (a forked run has it from the worker already; a fresh interpreter not)
    reseed()

    missing = [p for p in job.get("path", ()) if p not in sys.path]
    sys.path[:0] = missing
    texts = [*job["setup"], job["code"]]
    parts = [f"{CODE_FILE}{index}>" for index in range(len(texts))]
    if job["mode"] == "eager":
        watch_compiles(parts, texts, writers_frame)

    # The snippet runs as a script does: in the module ``__main__`` (torch.export, pickle and
    # others look its functions' globals up there), whose ``__file__`` is the page, so that a
    # snippet finds files beside it (it runs elsewhere). (A child of its own: nothing else
    # needs the worker's ``__main__`` after this.)
    main = types.ModuleType("__main__")
    main.__file__ = job.get("page", "")
    main.__builtins__ = _builtins_recording_ids()  # type: ignore[attr-defined]
    sys.modules["__main__"] = main
    namespace: dict[str, Any] = main.__dict__
    record: dict[str, Any] = {"status": "ok"}
    failure: BaseException | None = None
    try:
        module, attr = resolve_config(job["config"])
    except (LookupError, ImportError) as exc:
        # This torch has no such config: a fact about the release, never the snippet's error.
        record = {"status": "raised", "error": {**describe_error(exc, parts, texts),
                                                "kind": "no-config"}}
        return _finished(record, start, None, namespace)
    unset = job["value"] == {"__unset__": True}
    given: Any = None
    try:
        if unset:  # the ``default`` row: torch's own value
            given = getattr(module, attr)
        else:
            given = decode_value(job["value"])
            setattr(module, attr, given)
        watch_config(module, attr, given, parts, texts, writers_frame)
        own = len(texts) - 1
        for index, (filename, text) in enumerate(zip(parts, texts, strict=True)):
            # Where inspect looks a function's source up (torch.jit.script, inspect.getsource):
            # no mtime, so that linecache.checkcache() keeps it.
            linecache.cache[filename] = (len(text), None, text.splitlines(True), filename)
            if own - job.get("replayed", 0) <= index < own:  # an earlier cell: not its output
                with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                    exec(compile(text, filename, "exec"), namespace)
            elif index == own and job.get("display"):
                run_cell(text, filename, namespace)
            else:
                exec(compile(text, filename, "exec"), namespace)
        left = _close_modes()
        if left:
            raise ModeLeftOpen(
                f"the snippet ended inside the torch mode {', '.join(left)}, entered with "
                "__enter__() and never exited: enter it in a with block, so that it ends "
                "with the code it is for")
    except (Exception, SystemExit, KeyboardInterrupt) as exc:  # MemoryError is an Exception
        _close_modes()
        failure = exc
        record = {"status": "raised", "error": describe_error(exc, parts, texts)}
    else:
        try:
            record["tensors"], record["cut"] = collect_tensors(namespace, copies, steps, job.get("cwd"))
        except Exception as exc:  # a tensor subclass or a storage we cannot read
            record = {"status": "raised", "error": describe_error(exc, parts, texts)}
            record["error"]["message"] = f"its tensors could not be read: {record['error']['message']}"
    if job["mode"] == "compiled" and record["status"] == "ok":
        try:
            record["compile"] = compile_facts()
        except Exception:  # a release whose dynamo keeps them otherwise: not known
            record["compile"] = None
    if unset:
        # Read after the setups: what the compiled forward found (a setup may change the
        # default itself, as a release would). A value written over it is no default: then
        # torch's own, as this process had it before any code of the page's ran.
        record["config_default"] = repr(given if SET else getattr(module, attr))
    held = job.get("held_to_compile", True)
    # (the default row: torch's default as the compiles found it, after the setups)
    row = record.get("config_default") or repr(given)
    return _finished(not_a_verdict(record, job["mode"], len(texts), held, row), start,
                     failure, namespace)


def run_cell(text: str, filename: str, namespace: dict[str, Any]) -> None:
    """``text`` as a notebook runs a cell: a bare last expression's value is shown (its repr,
    as Jupyter's plain text) and kept as ``_``, so that it is compared like any other value."""
    tree = ast.parse(text, filename)
    last = tree.body[-1] if tree.body else None
    if isinstance(last, ast.Expr):
        tree.body.pop()
    exec(compile(tree, filename, "exec"), namespace)
    if isinstance(last, ast.Expr):
        value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace)
        if value is not None:
            namespace["_"] = value
            print(repr(value))


def _finished(record: dict[str, Any], start: float, failure: BaseException | None,
              namespace: dict[str, Any]) -> dict[str, Any]:
    config_set, config_set_at = set_and_read()
    record["config_set"] = config_set
    # Where the first of them was set (the row names the line): a frame of the writer's, if any.
    record["config_set_at"] = config_set_at[:1] if config_set_at and config_set_at[0] else []
    record["seconds"] = time.perf_counter() - start
    record["imports"] = writers_files(failure, namespace)
    # A pid the snippet prints differs between any two runs: the comparison names it as such.
    record["pid"] = os.getpid()
    record["ids"] = sorted(IDS)
    return record


def watch(job: Job) -> None:
    """Leave where the code is in ``stack_path`` if it crashes or runs close to its timeout.

    The parent reads it only for a run that crashed or was stopped, to point the writer at the
    line that hung or crashed. A separate file: the printed output stays the snippet's own.
    """
    if not job.get("stack_path"):
        return
    stack = open(job["stack_path"], "w", encoding="utf-8")  # noqa: SIM115 (open until the process ends)
    _KEEP.append(stack)
    faulthandler.enable(file=stack)
    timeout = float(job.get("timeout") or 0.0)
    if timeout <= 0:
        return
    # Again and again, so that the last dump is recent when the timeout strikes, however
    # late a loaded machine started us (a few hundred bytes a dump); but only in the second
    # half of the run's time. faulthandler's watchdog thread reads the other threads' frames
    # without the GIL: dumping a thread that is running Python code can crash the process
    # (measured with torch 2.14.1+cu130, whose cold compiles in a child take 2-3 s: 4 of 60
    # runs died of SIGSEGV inside such a dump, 0 of 80 without the dumps). Half the timeout
    # is reached only by runs about to be stopped anyway, which are mostly waiting.
    # threading.Timer needs the GIL to arm it: a loop, a sleep, a read all give it up.
    interval = min(1.0, max(0.1, timeout / 10))
    arm = threading.Timer(timeout / 2, faulthandler.dump_traceback_later,
                          args=(interval,), kwargs={"repeat": True, "file": stack})
    arm.daemon = True
    arm.start()


_KEEP: list[Any] = []  # faulthandler writes to the file's descriptor: keep it open


def run_and_write(job: Job) -> None:
    """Child entry point: run, then write the record atomically where the parent looks."""
    os.chdir(job["cwd"])
    watch(job)
    show_warnings_on_one_line()
    log_records_on_one_line()
    record = run_job(job)
    sys.stdout.flush()
    sys.stderr.flush()
    tmp = job["result_path"] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(record, f)
    os.replace(tmp, job["result_path"])
