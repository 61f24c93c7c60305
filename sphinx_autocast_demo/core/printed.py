"""What two runs printed, compared as a reader reads it: normalised as ``:expect-output:`` is
(addresses, timings, warning locations aside), without the warnings and log lines only the
compiler stack says, line by line as far as a page keeps the output and by a digest past that.
Pure Python, no torch: read by the engine (the digest), compare and check.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import re
from dataclasses import dataclass

from .model import PrintedDigest, RunRecord, TensorDiff

#: A warning as a run prints it: ``Category: message [file:line]``, the message on one line
#: (its line breaks shown as ``\n``) and the place last, where no message reaches.
WARNING_LINE = re.compile(r"(?m)^(\w*Warning): .*\[\S+:\d+\]$")

_NOISE = (
    # A warning as a run prints it, on one line whatever its message (engine/warned.py): its
    # category alone, as the legacy form below.
    (WARNING_LINE, r"<\1>"),
    # Object addresses, as a repr gives them (``<object object at 0x7f...>``, ``<function f at
    # 0x...>``): only after ``at``, so that a printed hex value (a bit pattern, ``0x3f80``) is
    # still compared.
    (re.compile(r"\bat 0x[0-9a-fA-F]+\b"), "at 0x?"),
    (re.compile(r"\b\d+(\.\d+)?(e-?\d+)?\s?(ns|us|µs|ms|s|sec|seconds)\b"), "<time>"),
    # A warning's file and line, and its text (which may hold a time or a value), vary: keep
    # its category. Warnings raised by the writer's own code name our ``<autocast-demo-N>``.
    # (Python's own form: a record written by hand, or a warning printed where our hook was
    # not, as in a process the snippet started.)
    (re.compile(r"(?m)^(?:\S+\.py|<autocast-demo-\d+>):\d+: (\w+Warning): .*(\n[ \t]+.*)?$"),
     r"<\1>"),
    # torch's own log lines start with a level, a timestamp, a pid and a source location.
    (re.compile(r"(?m)^(\[\w+\]:)?[IWEVD]\d{4} \d\d:\d\d:\d\d\.\d+ +\d+ \S+:\d+\] "), "<log> "),
    # The profiler's (kineto's) trace points: ``USDT:<date> <time> <pid>:<tid> <file>:<line>] ``.
    (re.compile(r"(?m)^USDT:\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? +\d+:\d+ \S+:\d+\] "),
     "<log> "),
    # A moment: a date with or without its time (ISO 8601, logging's ``%(asctime)s``, a
    # profiler's), a time of day, a datetime's repr, and a random UUID: two runs never share one.
    (re.compile(r"\bdatetime\.datetime\(\d+(?:, \d+)*(?:, tzinfo=[^()]*(?:\([^()]*\))?)?\)"),
     "<timestamp>"),
    (re.compile(r"\b\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?"
                r"(?![\d:])"), "<timestamp>"),
    (re.compile(r"(?<![\d:.])\d\d:\d\d:\d\d(?:[.,]\d+)?(?![\d:])"), "<timestamp>"),
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[1-8][0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\b"),
     "<uuid>"),
    # Indentation is not recorded faithfully in an option (reST and MyST dedent it differently),
    # so a multi-line tensor print compares by its lines' content.
    (re.compile(r"^[ \t]+|[ \t]+$", re.M), ""),
)


def normalize_output(text: str) -> str:
    """Drop what varies between runs and machines: addresses, timings, moments, UUIDs,
    warning locations."""
    for pattern, replacement in _NOISE:
        text = pattern.sub(replacement, text)
    return text.strip()


_NUMBER = re.compile(r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[-+]?\b(?:nan|inf)\b")


def text_parts(text: str) -> tuple[str, list[int], list[float]]:
    """Text a run kept (a file it wrote, a ``StringIO``) as a printed line is compared:
    normalised, its shape (every number as ``#``), its integers (held exactly) and its other
    numbers (held to the tolerance)."""
    text = normalize_output(text)
    integers: list[int] = []
    decimals: list[float] = []
    for number in _NUMBER.findall(text):
        if number.lstrip("+-").isdigit():
            integers.append(int(number))
        else:
            decimals.append(float(number))
    return _NUMBER.sub("#", text), integers, decimals


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


def _shown(line: str | None) -> str:
    return "nothing" if line is None else repr(line)


_NOT_THE_SNIPPETS = re.compile(r"^(<\w*Warning>|<log> .*)$")


def holds_uncompared(text: str) -> bool:
    """``text`` (as a run printed it) has a warning or a torch log line: shown, not compared."""
    return any(_NOT_THE_SNIPPETS.match(line) for line in normalize_output(text).splitlines())


def snippets_lines(text: str) -> list[str]:
    """The lines a snippet printed, without the warnings and log lines only the compiler says."""
    return [line for line in text.splitlines() if not _NOT_THE_SNIPPETS.match(line)]


def _unpid(line: str, pid: int) -> str:
    return re.sub(rf"(?<![\d.]){pid}(?![\d.])", "<pid>", line)


def _only_pids(a: str, b: str, tol: float, pids: tuple[int | None, int | None]) -> bool:
    """``a`` and ``b`` are the same line once each run's pid is taken out of its line: no
    difference compiling made, since two runs never share one."""
    p, q = pids
    return p is not None and q is not None and p != q and (str(p) in a or str(q) in b) and \
        _same_line(_unpid(a, p), _unpid(b, q), tol)


def _lines(text: str) -> list[str]:
    return snippets_lines(normalize_output(text))


def _output_diff(name: str, note: str, equal: bool = False) -> TensorDiff:
    return TensorDiff(name=name, kind="output", compiled_dtype=None, eager_dtype=None,
                      equal=equal, max_abs=None, note=note)


def compare_output(compiled: str, eager: str, tol: float,
                   pids: tuple[int | None, int | None] = (None, None),
                   ) -> tuple[int, TensorDiff | None]:
    """How many lines of the two runs' output were compared, and the first that differs (or
    one that differs only in each run's pid, equal, said so)."""
    a, b = _lines(compiled), _lines(eager)
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
                note=f"differs only in the run's pid ({pids[0]} compiled, {pids[1]} eager)")
            continue
        return max(total_a, total_b), _output_diff(
            f"printed line {number}", f"compiled printed {_shown(x)}, eager {_shown(y)}")
    return total_a, pid_only


def printed_digest(text: str, pid: int | None = None) -> PrintedDigest:
    """All of ``text`` (what run ``pid`` printed) as the comparison reads it, in a few bytes."""
    exact, shape, pidless = hashlib.sha256(), hashlib.sha256(), hashlib.sha256()
    lines = _lines(text)
    for line in lines:
        exact.update(line.encode("utf-8", "replace") + b"\n")
        shape.update(_NUMBER.sub("#", line).encode("utf-8", "replace") + b"\n")
        pidless.update((_unpid(line, pid) if pid is not None else line).encode("utf-8", "replace")
                       + b"\n")
    return PrintedDigest(lines=len(lines), exact=exact.hexdigest(), shape=shape.hexdigest(),
                         pidless=pidless.hexdigest())


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
    a, b = ([*_lines(run.output)][: -2 if run.printed else None] for run in (compiled, eager))
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
            "printed output", equal=True, note=(f"differs after printed line {shown} only in "
                                                f"the run's pid ({pids[0]} compiled, {pids[1]} eager)")))
    past = f"after printed line {shown}"
    if c.lines != e.lines:
        note = f"{past}: compiled printed {c.lines} lines in all, eager {e.lines}"
    elif c.shape != e.shape:
        note = f"{past}, compiled printed other text than eager"
    elif tol <= 0:
        note = f"{past}, compiled printed other numbers than eager"
    else:  # only numbers differ, and only a digest of them is kept: within tol, or not?
        return Printed(c.lines, diff, cut=(
            f"numbers printed {past} (past what a page keeps) differ, and whether by no more "
            "than the tolerance cannot be told from the digest kept of them"))
    return Printed(max(c.lines, e.lines), _output_diff("printed output", note))
