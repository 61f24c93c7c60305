"""The data that flows from the directive to the report: frozen, picklable, JSON-able.

Every type here is plain data so that it can live in the Sphinx environment (pickled between
builds, merged between ``-j`` readers) and in the on-disk result cache (JSON, never pickle).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

#: The type of every warning we emit (``suppress_warnings = ["autocast_demo.<subtype>"]``).
WARNING_TYPE = "autocast_demo"

#: The default compile-time config that a demo's variants set.
DEFAULT_CONFIG = "torch._functorch.config.backward_pass_autocast"

Outcome = Literal["matches", "differs", "raises", "error"]
RunStatus = Literal["ok", "raised", "timeout", "crashed", "skipped", "refused"]
Severity = Literal["ok", "mismatch", "error", "missing"]


@dataclass(frozen=True)
class Code:
    """Python source plus, for each of its lines, where that line stands in the docs."""

    text: str
    source: str  # path of the file the lines come from
    lines: tuple[int, ...]  # 1-based line in ``source`` of each line of ``text``

    def doc_line(self, line: int | None) -> int:
        """Map a 1-based line of ``text`` to its line in ``source``."""
        if not self.lines:
            return 0
        if line is None or line < 1:
            return self.lines[0]
        return self.lines[min(line, len(self.lines)) - 1]


@dataclass(frozen=True)
class Setup:
    """Code from an ``autocast-demo-setup`` directive."""

    code: Code
    group: str | None  # None: every demo of the page


@dataclass(frozen=True)
class Variant:
    """One value of the compile-time config under which a demo runs."""

    name: str  # what the writer and the reader call it: ``off``, ``fp16``...
    value: Any  # JSON-able; torch dtypes as {"__torch__": "bfloat16"}
    source: str  # the value as Python source, for display


@dataclass(frozen=True)
class Tolerance:
    grad: float  # |compiled - eager| <= tol * (1 + |eager|), for ``.grad`` tensors
    output: float  # the same for every other tensor


@dataclass(frozen=True)
class Demo:
    """What one ``autocast-demo`` directive asks for; written by the directive, read by the engine."""

    docname: str
    ident: str  # unique within its document, stable across builds
    lineno: int  # the directive's line, where findings about the whole demo point
    code: Code
    group: str | None
    config: str
    variants: tuple[Variant, ...]
    expect: tuple[tuple[str, str], ...]  # (variant name, outcome text); empty: not recorded
    expect_output: tuple[tuple[str, str], ...]  # (variant name or "*", text)
    backend: str
    device: str
    dtype: str
    timeout: float
    tolerance: Tolerance
    expect_line: int  # line of the ``:expect:`` option, or the directive's line
    expect_output_line: int = 0  # line of ``:expect-output:``; 0: the directive's line

    @property
    def location(self) -> str:
        return f"{self.code.source}:{self.lineno}"

    def expected(self, variant: str) -> str | None:
        found = dict(self.expect)
        return found.get(variant, found.get("*"))

    def expected_output(self, variant: str) -> str | None:
        found = dict(self.expect_output)
        return found.get(variant, found.get("*"))


@dataclass(frozen=True)
class TensorRecord:
    name: str  # ``w``, ``w.grad``, ``model.weight.grad``
    kind: Literal["value", "grad"]
    dtype: str
    shape: tuple[int, ...]
    sha256: str


@dataclass(frozen=True)
class Frame:
    """A frame of the writer's code: ``part`` indexes the demo's setups, then its own code."""

    part: int
    line: int  # 1-based, within that part
    function: str
    text: str


@dataclass(frozen=True)
class SnippetError:
    """An exception raised by the writer's code (only the writer's frames are kept)."""

    type: str
    names: tuple[str, ...]  # class and base names of every exception in the cause chain
    message: str
    frames: tuple[Frame, ...]


@dataclass(frozen=True)
class RunRecord:
    """One run of one demo under one variant, compiled or eager."""

    status: RunStatus
    output: str = ""
    tensors: tuple[TensorRecord, ...] = ()
    error: SnippetError | None = None
    detail: str = ""  # for timeout / crashed: what happened, in words
    seconds: float = 0.0


@dataclass(frozen=True)
class TensorDiff:
    name: str
    kind: str
    compiled_dtype: str | None
    eager_dtype: str | None
    equal: bool
    max_abs: float | None
    note: str = ""


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    exception: str | None = None  # the compiled run's exception type, for ``raises``
    max_abs: float | None = None
    diffs: tuple[TensorDiff, ...] = ()
    note: str = ""

    @property
    def text(self) -> str:
        """The outcome as a writer records it in ``:expect:``."""
        if self.outcome == "raises":
            return f"raises {self.exception}"
        return self.outcome


@dataclass(frozen=True)
class VariantResult:
    variant: Variant
    verdict: Verdict
    compiled: RunRecord
    eager: RunRecord
    cached: bool = False


@dataclass(frozen=True)
class DemoResult:
    demo: Demo
    codes: tuple[Code, ...]  # the setups that ran, then the demo: what ``Frame.part`` indexes
    variants: tuple[VariantResult, ...]
    torch_version: str
    findings: tuple[Finding, ...] = field(default=())

    def where(self, error: SnippetError) -> tuple[str, int]:
        """The doc file and line of the innermost frame of the writer's code."""
        if not error.frames:
            return self.demo.code.source, self.demo.lineno
        frame = error.frames[-1]
        code = self.codes[min(frame.part, len(self.codes) - 1)]
        return code.source, code.doc_line(frame.line)

    def traceback(self, error: SnippetError) -> str:
        """A short traceback in doc coordinates, hiding every frame that is not the writer's."""
        lines = ["Traceback (most recent call last):"]
        for frame in error.frames:
            code = self.codes[min(frame.part, len(self.codes) - 1)]
            lines.append(f'  File "{code.source}", line {code.doc_line(frame.line)}, in {frame.function}')
            if frame.text:
                lines.append(f"    {frame.text}")
        lines.append(f"{error.type}: {error.message}" if error.message else error.type)
        return "\n".join(lines)


@dataclass(frozen=True)
class Finding:
    """The check of one variant (or the whole demo) against what the page records."""

    severity: Severity
    subtype: str  # the warning subtype: ``mismatch``, ``snippet-error``, ``timeout``...
    message: str
    location: str  # "path:line"
    variant: str | None = None

    @property
    def failed(self) -> bool:
        return self.severity in ("mismatch", "error")

    def concerns(self, variant: str) -> bool:
        """Is ``variant`` one of the values this finding names (``"off, fp16"``)?"""
        return self.variant is not None and variant in self.variant.split(", ")


def run_record_from_json(data: dict[str, Any]) -> RunRecord:
    error = data.get("error")
    return RunRecord(
        status=data["status"],
        output=data.get("output", ""),
        tensors=tuple(
            TensorRecord(
                name=t["name"],
                kind=t["kind"],
                dtype=t["dtype"],
                shape=tuple(t["shape"]),
                sha256=t["sha256"],
            )
            for t in data.get("tensors", ())
        ),
        error=None
        if error is None
        else SnippetError(
            type=error["type"],
            names=tuple(error["names"]),
            message=error["message"],
            frames=tuple(Frame(*f) if isinstance(f, list) else Frame(**f) for f in error["frames"]),
        ),
        detail=data.get("detail", ""),
        seconds=float(data.get("seconds", 0.0)),
    )


def verdict_from_json(data: dict[str, Any]) -> Verdict:
    return Verdict(
        outcome=data["outcome"],
        exception=data.get("exception"),
        max_abs=data.get("max_abs"),
        diffs=tuple(TensorDiff(**d) for d in data.get("diffs", ())),
        note=data.get("note", ""),
    )
