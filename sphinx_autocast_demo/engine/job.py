"""Runs one (demo, variant, mode) inside a child process and writes what it saw as JSON.

This module is imported by the worker process, never by Sphinx: it is the only place that
touches torch. It must import nothing from Sphinx or docutils.
"""

from __future__ import annotations

import ctypes
import faulthandler
import hashlib
import json
import os
import random
import sys
import threading
import time
import traceback
import types
from typing import Any

from .imports import track_reads, writers_files
from .observe import observe, track_autograd_grad
from .protocol import Job

#: Prefix of the file names given to ``compile()``, so that frames of the writer's code can be
#: told from ours and mapped back to the docs.
CODE_FILE = "<autocast-demo-"

#: Tensors larger than this are compared by hash only (no max |difference|), and so are those
#: past this many elements in all (the copies go through a file).
MAX_DIFF_ELEMENTS = 16_000_000
MAX_DIFF_TOTAL = 64_000_000


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


#: What a compile entry point becomes in the eager run: the function or module it was given.
def _identity(model: Any = None, /, *args: Any, **kwargs: Any) -> Any:
    return model if model is not None else (lambda fn: fn)


def _identity_optimize(*args: Any, **kwargs: Any) -> Any:
    return lambda fn: fn  # torch._dynamo.optimize(backend)(fn) and its decorator form


def _patch_compile(mode: str, backend: str) -> None:
    """Compiled mode: default the backend. Eager mode: every compile entry point a snippet
    may call returns what it was given (the structural proof is :func:`compiled_frames`)."""
    import torch
    import torch._dynamo

    if mode == "eager":
        torch.compile = _identity
        torch.compiler.compile = _identity
        torch.nn.Module.compile = lambda self, *a, **k: None  # type: ignore[method-assign, unused-ignore]
        torch._dynamo.optimize = _identity_optimize
        torch._dynamo.optimize_assert = _identity_optimize
        return

    original = torch.compile

    def compile_with_backend(model: Any = None, /, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("backend", backend)
        return original(model, *args, **kwargs)

    torch.compile = compile_with_backend


#: Where the writer's code was each time dynamo began to compile in the eager run: (part,
#: line, function, text) of the innermost frame of theirs (see :func:`watch_compiles`).
_SITES: list[list[Any]] = []


def watch_compiles(parts: list[str], texts: list[str]) -> None:
    """In the eager run: note the writer's line that set off each compile, so that an entry
    point we do not replace is pointed at where the snippet calls it."""
    try:
        from torch._dynamo.callback import callback_handler
    except ImportError:  # (another torch: the count alone still proves it)
        return

    def started(*args: Any) -> None:
        frame = sys._getframe(1)
        while frame is not None:
            if frame.f_code.co_filename in parts:
                _SITES.append(writers_frame(parts, texts, frame.f_code.co_filename,
                                            frame.f_lineno, frame.f_code.co_name))
                return
            frame = frame.f_back  # type: ignore[assignment]

    callback_handler.register_start_callback(started)


def compiled_frames() -> tuple[int, list[str]]:
    """How many frames dynamo compiled in this run, and their functions' names."""
    from torch._dynamo import utils

    count = int(utils.counters["frames"].get("total", 0))
    names = [m.co_name for m in utils.get_compilation_metrics() if m.co_name] if count else []
    return count, list(dict.fromkeys(names))


#: The values the snippet itself gave the varied config, where they are not the row's own
#: (``repr``, each once, at most :data:`MAX_SET`): the row says it ran under them too.
_SET: list[str] = []
MAX_SET = 8


def watch_config(module: Any, attr: str, given: Any) -> None:
    """From now on, note each write of ``module.attr`` (assignment, ``setattr`` or
    ``config.patch``: all go through the config module's ``__setattr__``) of a value other than
    ``given``, the row's: a row must not show a value the snippet replaced."""
    cls = type(module)
    super_setattr: Any = cls.__setattr__

    def __setattr__(self: Any, name: str, value: Any) -> None:
        if name == attr and value != given:
            said = repr(value)
            if said not in _SET and len(_SET) < MAX_SET:
                _SET.append(said)
        super_setattr(self, name, value)

    if cls is not types.ModuleType:  # (a plain module: there is nothing to intercept)
        # Past the config module's own __setattr__, which takes only config names.
        types.ModuleType.__setattr__(module, "__class__",
                                     type(cls.__name__, (cls,), {"__setattr__": __setattr__}))


def _tensor_bytes(t: Any) -> bytes:
    t = t.contiguous()
    return ctypes.string_at(t.data_ptr(), t.numel() * t.element_size()) if t.numel() else b""


def collect_tensors(namespace: dict[str, Any], data_path: str) -> tuple[list[dict[str, Any]], str]:
    """Every tensor a reader could reach (:func:`.observe.observe`), and why the view is cut.

    Exact bytes are hashed for bitwise comparison; float64 copies go to ``data_path`` so that
    the parent can compute max |difference| without importing torch.
    """
    import torch

    view = observe(namespace)
    records: list[dict[str, Any]] = []
    copied = 0
    with open(data_path, "wb") as data:
        for name, kind, tensor in view.tensors:
            t = tensor.detach().cpu()
            if t.is_quantized:
                t = t.dequantize()
            if t.layout != torch.strided:
                t = t.to_dense()
            raw = _tensor_bytes(t)
            record: dict[str, Any] = {
                "name": name,
                "kind": kind,
                "dtype": str(t.dtype).removeprefix("torch."),
                "shape": list(t.shape),
                "sha256": hashlib.sha256(raw).hexdigest(),
                "offset": None,
            }
            if (0 < t.numel() <= MAX_DIFF_ELEMENTS and not t.is_complex()
                    and copied + t.numel() <= MAX_DIFF_TOTAL):
                record["offset"] = data.tell()
                data.write(_tensor_bytes(t.to(torch.float64)))
                copied += t.numel()
            records.append(record)
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
        said = _first_lines(cause)
        if said and said not in reason:
            reason += f"; caused by {type(cause).__name__}: {said}"
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
    _patch_compile(job["mode"], job["backend"])
    track_autograd_grad()
    track_reads()  # (a forked run has it from the worker already; a fresh interpreter not)
    reseed()

    missing = [p for p in job.get("path", ()) if p not in sys.path]
    sys.path[:0] = missing
    texts = [*job["setup"], job["code"]]
    parts = [f"{CODE_FILE}{index}>" for index in range(len(texts))]
    if job["mode"] == "eager":
        watch_compiles(parts, texts)

    # ``__file__``: the page, so that a snippet finds files beside it (it runs elsewhere).
    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__,
                                 "__file__": job.get("page", "")}
    record: dict[str, Any] = {"status": "ok"}
    failure: BaseException | None = None
    try:
        module, attr = resolve_config(job["config"])
    except (LookupError, ImportError) as exc:
        # This torch has no such config: a fact about the release, never the snippet's error.
        record = {"status": "raised", "error": {**describe_error(exc, parts, texts),
                                                "kind": "no-config"}}
        return _finished(record, start, None)
    unset = job["value"] == {"__unset__": True}
    try:
        if unset:  # the ``default`` row: torch's own value
            given = getattr(module, attr)
        else:
            given = decode_value(job["value"])
            setattr(module, attr, given)
        watch_config(module, attr, given)
        for filename, text in zip(parts, texts, strict=True):
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
            record["tensors"], record["cut"] = collect_tensors(namespace, job["data_path"])
        except Exception as exc:  # a tensor subclass or a storage we cannot read
            record = {"status": "raised", "error": describe_error(exc, parts, texts)}
            record["error"]["message"] = f"its tensors could not be read: {record['error']['message']}"
    if unset:
        # Read after the setups: what the compiled forward found (a setup may change the
        # default, as a release would); a value the snippet set is said by config_set.
        record["config_default"] = repr(getattr(module, attr))
    if job["mode"] == "eager" and (compiled := compiled_frames())[0]:
        # Not a verdict: compiled would be compared with compiled. Said where it compiled.
        # (not how many frames: that varies with the value, and one problem is said once)
        what = ", ".join(compiled[1]) or "a frame"
        record = {"status": "raised", "error": {
            "type": "EagerRunCompiled", "names": ["EagerRunCompiled"], "kind": "eager-compiled",
            "message": f"dynamo compiled {what} in the eager run",
            "frames": _SITES[:1]}}
    return _finished(record, start, failure)


def _finished(record: dict[str, Any], start: float, failure: BaseException | None) -> dict[str, Any]:
    record["config_set"] = _SET
    record["seconds"] = time.perf_counter() - start
    record["imports"] = writers_files(failure)
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
    record = run_job(job)
    sys.stdout.flush()
    sys.stderr.flush()
    tmp = job["result_path"] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(record, f)
    os.replace(tmp, job["result_path"])
