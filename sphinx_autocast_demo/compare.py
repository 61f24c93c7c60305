"""Compiled run against eager run -> :class:`Verdict`. Pure Python: no torch in the build."""

from __future__ import annotations

import itertools
import math
import re
from array import array
from typing import TYPE_CHECKING

from .model import RunRecord, TensorDiff, TensorRecord, VariantResult, Verdict

if TYPE_CHECKING:
    from .execute import Ran
    from .model import Tolerance


def _values(data: bytes, offset: int | None, count: int) -> array[float] | None:
    if offset is None:
        return None
    values = array("d")
    values.frombytes(data[offset : offset + 8 * count])
    return values


def _max_abs(a: array[float], b: array[float]) -> float:
    worst = 0.0
    for x, y in zip(a, b, strict=True):
        if x == y or (math.isnan(x) and math.isnan(y)):
            continue
        diff = abs(x - y)  # inf against a finite number, or nan against a number: inf / nan
        if math.isnan(diff) or diff > worst:
            worst = math.inf if math.isnan(diff) else diff
    return worst


def _within(a: array[float], b: array[float], tol: float) -> bool:
    for x, y in zip(a, b, strict=True):
        if x == y or (math.isnan(x) and math.isnan(y)):
            continue
        if not abs(x - y) <= tol * (1.0 + abs(y)):
            return False
    return True


def compare_tensor(
    compiled: TensorRecord | None,
    eager: TensorRecord | None,
    compiled_data: tuple[bytes, int | None],
    eager_data: tuple[bytes, int | None],
    tolerance: Tolerance,
) -> TensorDiff:
    ref = eager or compiled
    assert ref is not None
    diff = TensorDiff(
        name=ref.name,
        kind=ref.kind,
        compiled_dtype=compiled.dtype if compiled else None,
        eager_dtype=eager.dtype if eager else None,
        equal=False,
        max_abs=None,
    )
    if compiled is None or eager is None:
        return _with(diff, note=f"compiled: {_had(compiled, ref)}; eager: {_had(eager, ref)}")
    if compiled.dtype != eager.dtype:
        return _with(diff, note=f"dtype {compiled.dtype} compiled, {eager.dtype} eager")
    if compiled.shape != eager.shape:
        return _with(diff, note=f"shape {list(compiled.shape)} compiled, {list(eager.shape)} eager")
    if compiled.sha256 == eager.sha256:
        return _with(diff, equal=True, max_abs=0.0)
    count = math.prod(eager.shape)
    a = _values(compiled_data[0], compiled_data[1], count)
    b = _values(eager_data[0], eager_data[1], count)
    if a is None or b is None:
        return _with(diff, note="not bitwise equal (too large for a max |difference|)")
    tol = tolerance.grad if eager.kind == "grad" else tolerance.output
    return _with(diff, equal=tol > 0 and _within(a, b, tol), max_abs=_max_abs(a, b))


def _had(record: TensorRecord | None, ref: TensorRecord) -> str:
    """What one side had at a path: a ``.grad`` the other lacks is None, as torch says."""
    if record is None:
        return "None" if ref.name.endswith(".grad") else "nothing there"
    return f"a {record.dtype} tensor of shape {list(record.shape)}"


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?\b(?:nan|inf)\b")


def _same_line(a: str, b: str, tol: float) -> bool:
    """Equal, or equal but for decimal numbers within ``tol`` (inductor's float32 forward
    rounds otherwise than eager's, and so does its print); integers must be equal."""
    if a == b:
        return True
    if tol <= 0 or _NUMBER.sub("#", a) != _NUMBER.sub("#", b):
        return False
    for x, y in zip(_NUMBER.findall(a), _NUMBER.findall(b), strict=True):
        if x.lstrip("+-").isdigit() and y.lstrip("+-").isdigit():
            if int(x) != int(y):  # a count, an index, a pid: no rounding makes them differ
                return False
            continue
        fx, fy = float(x), float(y)
        if not (fx == fy or (math.isnan(fx) and math.isnan(fy)) or abs(fx - fy) <= tol * (1.0 + abs(fy))):
            return False
    return True


def _said(line: str | None) -> str:
    return "nothing" if line is None else repr(line)


_NOT_THE_SNIPPETS = re.compile(r"^(<\w*Warning>|<log> .*)$")


def said_by_snippet(text: str) -> list[str]:
    """The lines a snippet printed, without the warnings and log lines that only the compiler
    stack says (inductor warns of mixed dtypes, eager has no such step): :expect-output:
    still holds them, but they are no difference in what the code computes."""
    return [line for line in text.splitlines() if not _NOT_THE_SNIPPETS.match(line)]


def compare_output(compiled: str, eager: str, tol: float) -> tuple[int, TensorDiff | None]:
    """The printed output of the two runs of one value, normalised as ``:expect-output:`` is
    (warnings and torch's log lines aside): how many lines were compared, and the first that
    differs."""
    from .check import normalize_output

    a, b = said_by_snippet(normalize_output(compiled)), said_by_snippet(normalize_output(eager))
    for number, (x, y) in enumerate(itertools.zip_longest(a, b), start=1):
        if x is None or y is None or not _same_line(x, y, tol):
            return max(len(a), len(b)), TensorDiff(
                name=f"printed line {number}", kind="output", compiled_dtype=None,
                eager_dtype=None, equal=False, max_abs=None,
                note=f"compiled printed {_said(x)}, eager {_said(y)}")
    return len(a), None


def _with(diff: TensorDiff, **changes: object) -> TensorDiff:
    from dataclasses import replace

    return replace(diff, **changes)  # type: ignore[arg-type]


def compare_runs(
    compiled: RunRecord,
    eager: RunRecord,
    compiled_data: tuple[bytes, dict[str, int | None]],
    eager_data: tuple[bytes, dict[str, int | None]],
    tolerance: Tolerance,
) -> Verdict:
    """Decide whether the compiled run reproduces the eager run."""
    for run, label in ((compiled, "compiled"), (eager, "eager")):
        if run.status in ("timeout", "crashed"):
            return Verdict(outcome="error", note=f"{label} run: {run.detail}")
    for run in (compiled, eager):  # not the snippet's outcome: the check says what it is
        if run.error is not None and run.error.kind:
            if run.error.kind == "no-config":
                return Verdict(outcome="no-config", note=run.error.message)
            return Verdict(outcome="error", note=run.error.message)
    if compiled.status == "raised":
        assert compiled.error is not None
        # Eager raising as well is no difference torch.compile made (CUDA-only code on a CPU
        # machine, say): the cell says so.
        eager_raised = eager.error.type if eager.status == "raised" and eager.error else None
        return Verdict(outcome="raises", exception=compiled.error.type, note=compiled.error.message,
                       eager_exception=eager_raised)
    if eager.status == "raised":
        assert eager.error is not None
        return Verdict(
            outcome="differs",
            note=f"eager raised {eager.error.type}: {eager.error.message}; compiled did not",
        )
    by_name_c = {t.name: t for t in compiled.tensors}
    by_name_e = {t.name: t for t in eager.tensors}
    names = list(dict.fromkeys([*by_name_e, *by_name_c]))
    tensor_diffs = [
        compare_tensor(
            by_name_c.get(n),
            by_name_e.get(n),
            (compiled_data[0], compiled_data[1].get(n)),
            (eager_data[0], eager_data[1].get(n)),
            tolerance,
        )
        for n in names
    ]
    lines, printed = compare_output(compiled.output, eager.output, tolerance.output)
    diffs = (*tensor_diffs, *([printed] if printed else []))
    compared = len(names) + lines
    cut = compiled.cut or eager.cut
    known = [d.max_abs for d in diffs if d.max_abs is not None]
    worst = max(known) if known else None
    if not compared:
        return Verdict(outcome="error", compared=0, note=NOTHING_COMPARED)
    if all(d.equal for d in diffs):
        return Verdict(outcome="matches", max_abs=worst, diffs=diffs, compared=compared, cut=cut)
    failing = [d for d in diffs if not d.equal]
    note = ", ".join(
        f"{d.name}" + (f" (max |diff| {d.max_abs:.3g})" if d.max_abs is not None else f" ({d.note})")
        for d in failing
    )
    return Verdict(outcome="differs", max_abs=worst, diffs=diffs, note=note, compared=compared,
                   cut=cut)


#: The note of a value whose runs left nothing to compare (the check's finding says what to do).
NOTHING_COMPARED = "nothing to compare: no tensor reachable from the snippet's names, nothing printed"


def judge(ran: Ran) -> VariantResult:
    """The compare stage: one variant's compiled and eager runs -> its result."""
    compiled, eager = ran.compiled, ran.eager
    verdict = compare_runs(compiled.record, eager.record, (compiled.data, compiled.offsets),
                           (eager.data, eager.offsets), ran.item.demo.tolerance)
    return VariantResult(ran.item.variant, verdict, compiled.record, eager.record)
