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
import sys
import threading
import time
import traceback
from typing import Any

from .fresh import reseed

#: Prefix of the file names given to ``compile()``, so that frames of the writer's code can be
#: told from ours and mapped back to the docs.
CODE_FILE = "<autocast-demo-"

#: Tensors larger than this are compared by hash only (no max |difference|).
MAX_DIFF_ELEMENTS = 16_000_000


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


def _patch_compile(mode: str, backend: str) -> None:
    """Compiled mode: default the backend. Eager mode: make ``torch.compile`` the identity."""
    import torch

    original = torch.compile

    if mode == "eager":

        def eager_compile(model: Any = None, /, *args: Any, **kwargs: Any) -> Any:
            return model if model is not None else (lambda fn: fn)

        torch.compile = eager_compile
        torch.nn.Module.compile = lambda self, *a, **k: None  # type: ignore[method-assign]
        return

    def compile_with_backend(model: Any = None, /, *args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("backend", backend)
        return original(model, *args, **kwargs)

    torch.compile = compile_with_backend


def _tensor_bytes(t: Any) -> bytes:
    t = t.contiguous()
    return ctypes.string_at(t.data_ptr(), t.numel() * t.element_size()) if t.numel() else b""


def collect_tensors(namespace: dict[str, Any], data_path: str) -> list[dict[str, Any]]:
    """Every tensor bound at top level (and parameters of top-level modules), with ``.grad``.

    Exact bytes are hashed for bitwise comparison; float64 copies go to ``data_path`` so that
    the parent can compute max |difference| without importing torch.
    """
    import torch

    found: list[tuple[str, str, Any]] = []
    for name in sorted(namespace):
        value = namespace[name]
        if name.startswith("_"):
            continue
        if isinstance(value, torch.Tensor):
            found.append((name, "value", value))
            if value.is_leaf and value.grad is not None:
                found.append((f"{name}.grad", "grad", value.grad))
        elif isinstance(value, torch.nn.Module):
            for pname, param in value.named_parameters():
                if param.grad is not None:
                    found.append((f"{name}.{pname}.grad", "grad", param.grad))

    records: list[dict[str, Any]] = []
    with open(data_path, "wb") as data:
        for name, kind, tensor in found:
            t = tensor.detach().cpu()
            if t.is_complex() or t.is_quantized or t.layout != torch.strided:
                t = t.to_dense() if t.layout != torch.strided else t
            raw = _tensor_bytes(t)
            record: dict[str, Any] = {
                "name": name,
                "kind": kind,
                "dtype": str(t.dtype).removeprefix("torch."),
                "shape": list(t.shape),
                "sha256": hashlib.sha256(raw).hexdigest(),
                "offset": None,
            }
            if 0 < t.numel() <= MAX_DIFF_ELEMENTS and not t.is_complex():
                record["offset"] = data.tell()
                data.write(_tensor_bytes(t.to(torch.float64)))
            records.append(record)
    return records


def _names(exc: BaseException) -> list[str]:
    names: list[str] = []
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        names.extend(cls.__name__ for cls in type(current).__mro__ if cls is not object)
        current = current.__cause__ or current.__context__
    return list(dict.fromkeys(names))


def describe_error(exc: BaseException, parts: list[str], texts: list[str]) -> dict[str, Any]:
    """The exception in the writer's terms: frames as (part, line) of the code we were given.

    ``parts`` are the file names given to ``compile()``: setups first, the demo last. Lines
    are mapped to doc lines by the build, so a result stays valid when a demo moves.
    """
    def text(part: int, line: int) -> str:
        lines = texts[part].splitlines()
        return lines[line - 1].strip() if 0 < line <= len(lines) else ""

    frames: list[list[Any]] = []
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename in parts:
            part = parts.index(frame.filename)
            frames.append([part, frame.lineno or 1, frame.name, text(part, frame.lineno or 1)])
    if isinstance(exc, SyntaxError) and exc.filename in parts:
        frames.append([parts.index(exc.filename), exc.lineno or 1, "<module>",
                       (exc.text or "").strip()])
    message = exc.msg if isinstance(exc, SyntaxError) else str(exc)
    first_line = (message or "").strip().splitlines()[0] if (message or "").strip() else ""
    return {
        "type": type(exc).__name__,
        "names": _names(exc),
        "message": first_line,
        "frames": frames,
    }


def run_job(job: dict[str, Any]) -> dict[str, Any]:
    """Execute ``job`` in this (fresh, forked) process and return the result record."""
    import torch
    import torch._dynamo

    start = time.perf_counter()
    torch._dynamo.reset()
    _patch_compile(job["mode"], job["backend"])
    reseed()

    texts = [*job["setup"], job["code"]]
    parts = [f"{CODE_FILE}{index}>" for index in range(len(texts))]

    namespace: dict[str, Any] = {"__name__": "__main__", "__builtins__": __builtins__}
    record: dict[str, Any] = {"status": "ok"}
    try:
        module, attr = resolve_config(job["config"])
        setattr(module, attr, decode_value(job["value"]))
        for filename, text in zip(parts, texts, strict=True):
            exec(compile(text, filename, "exec"), namespace)
    except (Exception, SystemExit, KeyboardInterrupt) as exc:  # MemoryError is an Exception
        record = {"status": "raised", "error": describe_error(exc, parts, texts)}
    else:
        record["tensors"] = collect_tensors(namespace, job["data_path"])
    record["seconds"] = time.perf_counter() - start
    return record


def watch(job: dict[str, Any]) -> threading.Timer | None:
    """Leave where the code is in ``stack_path`` if it crashes or runs close to its timeout.

    The parent reads it only for a run that crashed or was stopped, to point the writer at the
    line that hung or crashed. A separate file: the printed output stays the snippet's own.
    Returns the timer that arms the repeated dumps, for :func:`unwatch`.
    """
    if not job.get("stack_path"):
        return None
    stack = open(job["stack_path"], "w", encoding="utf-8")  # noqa: SIM115 (open until unwatch)
    _KEEP.append(stack)
    faulthandler.enable(file=stack)
    timeout = float(job.get("timeout") or 0.0)
    if timeout <= 0:
        return None
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
    return arm


def unwatch(arm: threading.Timer | None) -> None:
    """Stop :func:`watch`'s timer and dumps, so that the process's next run starts without them."""
    if arm is not None:
        arm.cancel()
        arm.join()
    faulthandler.cancel_dump_traceback_later()
    faulthandler.disable()
    while _KEEP:
        _KEEP.pop().close()


_KEEP: list[Any] = []  # faulthandler writes to the file's descriptor: keep it open


def run_and_write(job: dict[str, Any]) -> None:
    """Child entry point: run, then write the record atomically where the parent looks."""
    os.chdir(job["cwd"])
    arm = watch(job)
    record = run_job(job)
    sys.stdout.flush()
    sys.stderr.flush()
    tmp = job["result_path"] + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        json.dump(record, f)
    os.replace(tmp, job["result_path"])
    unwatch(arm)
