"""Compiled run against eager run -> :class:`Verdict`. Pure Python: no torch in the build."""

from __future__ import annotations

import math
import struct
from array import array
from typing import TYPE_CHECKING, Any

from ..core.model import Note, RunRecord, TensorDiff, TensorRecord, VariantResult, Verdict
from ..engine.protocol import STORED
from .notes import note_text, reason_text
from .printed import compare_printed

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..core.model import Tolerance
    from ..engine.execute import Ran


def _values(data: bytes, offset: int | None, count: int, dtype: str) -> array[float] | None:
    """The ``count`` numbers a run stored at ``offset`` for a tensor of ``dtype``
    (:data:`..engine.protocol.STORED`), as float64; None where none were stored."""
    if offset is None:
        return None
    code = STORED.get(dtype, "d")
    size = 2 if code in ("e", "bf16") else struct.calcsize(code)
    chunk = data[offset : offset + size * count]
    if len(chunk) != size * count:  # a data file cut short: no values, rather than the wrong ones
        return None
    if code == "e":
        return array("d", struct.unpack(f"{count}e", chunk))
    if code == "bf16":  # the upper half of a float32's bits
        halves = array("H")
        halves.frombytes(chunk)
        code, chunk = "f", array("I", (bits << 16 for bits in halves)).tobytes()
    stored: array[Any] = array(code)
    stored.frombytes(chunk)
    return stored if code == "d" else array("d", stored)


def _copied(dtype: str, shape: tuple[int, ...]) -> int:
    """How many numbers the child stored of a tensor (a complex one's: two each)."""
    return math.prod(shape) * (2 if dtype.startswith("complex") else 1)


def _exact(dtype: str) -> bool:
    """Counts, indices, truth values: no rounding makes two of them differ."""
    return dtype == "bool" or dtype.startswith(("int", "uint"))


def _same_values(a: array[float], b: array[float]) -> Note:
    """What differs between two copies whose values are all equal, though not their bytes."""
    zeros = nans = False
    left, right = a.tobytes(), b.tobytes()
    for i, x in enumerate(a):
        if left[8 * i : 8 * i + 8] == right[8 * i : 8 * i + 8]:
            continue
        if x == 0:
            zeros = True
        elif math.isnan(x):
            nans = True
    # (neither: the bits differ where the float64 copy does not keep them, a NaN's signal bit)
    return Note("signed-zero-and-nan-bits" if zeros and nans else "signed-zero" if zeros
                else "nan-bits" if nans else "not-bitwise")


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
        return _with(diff, note=Note("missing", _shape(compiled), _shape(eager)))
    if compiled.dtype != eager.dtype:
        return _with(diff, note=Note("dtype"))
    if compiled.shape != eager.shape:
        return _with(diff, note=Note("shape", _shape(compiled), _shape(eager)))
    if compiled.sha256 == eager.sha256:
        return _with(diff, equal=True, max_abs=0.0)
    count = _copied(eager.dtype, eager.shape)
    a = _values(compiled_data[0], compiled_data[1], count, eager.dtype)
    b = _values(eager_data[0], eager_data[1], count, eager.dtype)
    if a is None or b is None:
        return _with(diff, note=Note("unmeasured"))
    worst = _max_abs(a, b)
    if _exact(eager.dtype):  # (equal copies: integers past float64's 2**53)
        return _with(diff, max_abs=worst, note=Note("exact"))
    tol = tolerance.grad if eager.kind == "grad" else tolerance.output
    if worst == 0.0:
        # Equal, not bitwise: within any tolerance, and a difference where none is allowed
        # (gradients, by default): the note says it is no difference in value.
        return _with(diff, equal=tol > 0, max_abs=0.0, note=_same_values(a, b))
    return _with(diff, equal=tol > 0 and _within(a, b, tol), max_abs=worst)


def _shape(record: TensorRecord | None) -> str:
    """A tensor's shape as torch prints it, ``[4]``; "" where there is none."""
    return str(list(record.shape)) if record is not None else ""


def _with(diff: TensorDiff, **changes: object) -> TensorDiff:
    from dataclasses import replace

    return replace(diff, **changes)  # type: ignore[arg-type]


def compare_runs(
    compiled: RunRecord,
    eager: RunRecord,
    compiled_data: tuple[bytes, dict[str, int | None]],
    eager_data: tuple[bytes, dict[str, int | None]],
    tolerance: Tolerance,
    partial: bool = False,
) -> Verdict:
    """Decide whether the compiled run reproduces the eager run.

    A view the walk had to cut can show a difference, never a match: what it did not see may
    differ. Such a match is no verdict (``error``, with the reason in ``cut``) unless the demo
    accepts a partial view (``partial``)."""
    for run, label in ((compiled, "compiled"), (eager, "eager")):
        if run.status in ("timeout", "crashed"):
            return Verdict(outcome="error", note=f"{label} run: {run.detail}")
    for run in (compiled, eager):  # not the snippet's outcome: the check says what it is
        if run.error is not None and run.error.kind:
            if run.error.kind == "no-config":
                return Verdict(outcome="no-config", note=run.error.message)
            return Verdict(outcome="error", note=reason_text(run.error))
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
            outcome="differs", eager_exception=eager.error.type,
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
    seen = compare_printed(compiled, eager, tolerance.output)
    diffs = (*tensor_diffs, *([seen.diff] if seen.diff else []))
    compared = len(names) + seen.lines
    cut = compiled.cut or eager.cut or seen.cut
    known = [d.max_abs for d in diffs if d.max_abs is not None]
    worst = max(known) if known else None
    if not compared:  # (where the view was cut, nothing seen is no proof of nothing there)
        return Verdict(outcome="error", compared=0, cut=cut,
                       note=f"{NOT_FULLY_COMPARED}: {cut}" if cut else NOTHING_COMPARED)
    if all(d.equal for d in diffs):
        if cut and not partial:
            return Verdict(outcome="error", max_abs=worst, diffs=diffs, compared=compared, cut=cut,
                           note=f"{NOT_FULLY_COMPARED}: {cut}")
        return Verdict(outcome="matches", max_abs=worst, diffs=diffs, compared=compared, cut=cut)
    failing = largest_first(diffs)
    note = ", ".join(f"{d.name} (max |diff| {d.max_abs:.3g})" if d.max_abs is not None
                     else f"{d.name} ({note_text(d)})" for d in failing)
    return Verdict(outcome="differs", max_abs=worst, diffs=diffs, note=note, compared=compared,
                   cut=cut)


def largest_first(diffs: Sequence[TensorDiff]) -> list[TensorDiff]:
    """The differences among ``diffs``, the largest first: the warning and the cell name the
    first and count the rest, which must not hide a larger one ("3.05e-02 and 2 more" over a
    4.0). Those without a number (a shape, a None, a printed line) come after the measured
    ones, in the order they were compared; NaN counts as the largest."""
    def size(diff: TensorDiff) -> tuple[bool, float]:
        known = diff.max_abs
        return known is None, -(math.inf if known is not None and math.isnan(known) else known or 0.0)

    return sorted((d for d in diffs if not d.equal), key=size)


#: The note of a match seen in a cut view, before the reason (a reader reads it in the cell).
NOT_FULLY_COMPARED = "not fully compared"

#: The note of a value whose runs left nothing to compare (the check's finding says what to do).
NOTHING_COMPARED = "nothing to compare: no tensor reachable from the snippet's names, nothing printed"


def alone(compiled: RunRecord) -> Verdict:
    """The verdict of a compiled run compared with nothing (``:compare: none``): whether it
    finished, raised, or was no verdict at all, as :func:`compare_runs` says them."""
    if compiled.status in ("timeout", "crashed"):
        return Verdict(outcome="error", note=f"compiled run: {compiled.detail}")
    if compiled.error is not None and compiled.error.kind:
        if compiled.error.kind == "no-config":
            return Verdict(outcome="no-config", note=compiled.error.message)
        return Verdict(outcome="error", note=reason_text(compiled.error))
    if compiled.status == "raised" and compiled.error is not None:
        return Verdict(outcome="raises", exception=compiled.error.type, note=compiled.error.message)
    return Verdict(outcome="ran")


def verdict_of(ran: Ran) -> VariantResult:
    """The compare stage: one variant's compiled and eager runs -> its result."""
    compiled, eager = ran.compiled, ran.eager
    if eager is None:
        return VariantResult(ran.item.variant, alone(compiled.record), compiled.record, None)
    verdict = compare_runs(compiled.record, eager.record, (compiled.data, compiled.offsets),
                           (eager.data, eager.offsets), ran.item.demo.tolerance,
                           ran.item.demo.partial_view)
    return VariantResult(ran.item.variant, verdict, compiled.record, eager.record)
