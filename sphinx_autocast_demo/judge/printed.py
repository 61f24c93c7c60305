"""What two runs printed, compared as a reader reads it: in core.printed's normal form, line by
line as far as a page keeps the output and by the digest past that; decimals within the
tolerance, integers exact, a run's own pid no difference."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..core.model import Note, RunRecord, TensorDiff
from ..core.printed import NUMBER, as_recorded, compared_lines, printed_digest, unpid

if TYPE_CHECKING:
    from ..core.model import DemoResult


def _same_line(a: str, b: str, tol: float) -> bool:
    """Equal, or equal but for decimal numbers within ``tol`` (inductor's float32 forward
    rounds otherwise than eager's, and so does its print); integers must be equal."""
    if a == b:
        return True
    if tol <= 0 or NUMBER.sub("#", a) != NUMBER.sub("#", b):
        return False
    for x, y in zip(NUMBER.findall(a), NUMBER.findall(b), strict=True):
        if x.lstrip("+-").isdigit() and y.lstrip("+-").isdigit():
            if int(x) != int(y):  # a count, an index, a pid: no rounding makes them differ
                return False
            continue
        fx, fy = float(x), float(y)
        if not (fx == fy or (math.isnan(fx) and math.isnan(fy)) or abs(fx - fy) <= tol * (1.0 + abs(fy))):
            return False
    return True


def _shown(line: str | None) -> str:
    """A printed line as a note keeps it: its repr, "" where the run printed no such line."""
    return "" if line is None else repr(line)


def _only_pids(a: str, b: str, tol: float, pids: tuple[int | None, int | None]) -> bool:
    """``a`` and ``b`` are the same line once each run's pid is taken out of its line: no
    difference compiling made, since two runs never share one."""
    p, q = pids
    return p is not None and q is not None and p != q and (str(p) in a or str(q) in b) and \
        _same_line(unpid(a, p), unpid(b, q), tol)


def _output_diff(name: str, note: Note, equal: bool = False) -> TensorDiff:
    return TensorDiff(name=name, kind="output", compiled_dtype=None, eager_dtype=None,
                      equal=equal, max_abs=None, note=note)


def compare_output(compiled: str, eager: str, tol: float,
                   pids: tuple[int | None, int | None] = (None, None),
                   ) -> tuple[int, TensorDiff | None]:
    """How many lines of the two runs' output were compared, and the first that differs (or
    one that differs only in each run's pid, equal, said so)."""
    a, b = compared_lines(compiled), compared_lines(eager)
    return _compare_lines(a, b, tol, pids, len(a), len(b))


def _compare_lines(a: list[str], b: list[str], tol: float, pids: tuple[int | None, int | None],
                   total_a: int, total_b: int) -> tuple[int, TensorDiff | None]:
    """Line by line (``total_a``/``total_b``: how many the runs printed in all, when ``a`` and
    ``b`` are only their first lines)."""
    pid_only: TensorDiff | None = None
    for number, (x, y) in enumerate(itertools.zip_longest(a, b), start=1):
        if x is not None and y is not None and _same_line(x, y, tol):
            continue
        if x is not None and y is not None and _only_pids(x, y, tol, pids):
            pid_only = pid_only or _output_diff(
                f"printed line {number}", equal=True,
                note=Note("pid", str(pids[0]), str(pids[1]), line=number))
            continue
        return max(total_a, total_b), _output_diff(
            f"printed line {number}", Note("printed", _shown(x), _shown(y), line=number))
    return total_a, pid_only


@dataclass(frozen=True)
class Printed:
    """The comparison of two runs' printed output (:func:`compare_printed`)."""

    lines: int  # how many lines were compared
    diff: TensorDiff | None  # the first that differs (or, equal, one that differs only in a pid)
    cut: str = ""  # why it could not tell whether all of it matches


def compare_printed(compiled: RunRecord, eager: RunRecord, tol: float) -> Printed:
    """The printed output of two runs, all of it: line by line as far as the page keeps it
    (``RunRecord.output``), and by :class:`PrintedDigest` past that."""
    pids = (compiled.pid, eager.pid)
    if compiled.printed is None and eager.printed is None:
        return Printed(*compare_output(compiled.output, eager.output, tol, pids))
    digests = [run.printed or printed_digest(run.output, run.pid) for run in (compiled, eager)]
    # A kept output ends with the note that it was cut, after a line it may have cut short.
    a, b = ([*compared_lines(run.output)][: -2 if run.printed else None] for run in (compiled, eager))
    shown = min(len(a), len(b))
    lines, diff = _compare_lines(a[:shown], b[:shown], tol, pids,
                                 digests[0].lines, digests[1].lines)
    if diff is not None and not diff.equal:
        return Printed(lines, diff)
    c, e = digests
    if c.exact == e.exact:
        return Printed(c.lines, diff)
    if c.pidless == e.pidless:  # (tried second: a count that equals a pid is no pid)
        return Printed(c.lines, diff or _output_diff(
            "printed output", equal=True, note=Note("pid-after", str(pids[0]), str(pids[1]), line=shown)))
    if c.lines != e.lines:
        note = Note("count", str(c.lines), str(e.lines), line=shown)
    elif c.shape != e.shape:
        note = Note("text", line=shown)
    elif tol <= 0:
        note = Note("numbers", line=shown)
    else:  # only numbers differ, and only a digest of them is kept: within tol, or not?
        return Printed(c.lines, diff, cut=(
            f"numbers printed after printed line {shown} (past what a page keeps) differ, and "
            "whether by no more than the tolerance cannot be told from the digest kept of them"))
    return Printed(max(c.lines, e.lines), _output_diff("printed output", note))


def first_output_record(result: DemoResult) -> list[tuple[str, str]] | None:
    """For a ``:show: outputs`` demo that records none of its output (whose point it is): the
    ``:expect-output:`` blocks that would, (name, normalised text), one ``*`` block where every
    value that ran printed the same; None for any other demo, or where no value ran."""
    demo = result.demo
    if demo.show != "outputs" or demo.expect_output:
        return None
    # (what the snippet printed: torch's log records around it are for the writer to add)
    printed = {vr.variant.name: as_recorded(vr.compiled.output, logs=False)
               for vr in result.variants if vr.compiled.status == "ok"}
    if not printed:
        return None
    if len(set(printed.values())) == 1:
        return [("*", next(iter(printed.values())))]
    return list(printed.items())
