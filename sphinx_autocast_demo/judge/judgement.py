"""Checked results -> one judgement per (demo, environment, value), for every presenter.

The check stage (check.py) writes findings; this stage decides, once, what a reader and a CI
are told about each value in each environment: where its result comes from, whether it was
checked (and if not, why, as a typed cause), what compiled did against eager, and whether the
page's record holds. The page tables (present/render.py, across.py), the matrix
(present/summary.py), the check builder (report/builder.py) and the console summary
(report/console.py) only format a :class:`Judgement`; none of them decides anything of its own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from .check import no_cuda

if TYPE_CHECKING:
    from ..core.model import Claim, Demo, DemoResult, Environment, Finding, Source, VariantResult

#: Why a value was not checked, as data: ``missing``, no result in the result sets;
#: ``no-cuda``, a CUDA demo on a machine without CUDA; ``engine``, no demo can run here;
#: ``died``, the build's worker stopped first; ``stale``, execution off and a module it
#: imports changed; ``never``, execution off and nothing cached; ``refused``, the worker would
#: not start it; ``stopped``, a run timed out or crashed; ``no-verdict``, the runs finished
#: without a verdict; ``other-torch``, a cached result of another torch.
Cause = Literal["missing", "no-cuda", "engine", "died", "stale", "never", "refused", "stopped",
                "no-verdict", "other-torch"]
#: Does the page's record of a value hold here? ``unrecorded``: the page records nothing for
#: it; ``unchecked``: nobody looked; ``broken``: a failing finding says it no longer holds.
Record = Literal["unrecorded", "unchecked", "broken", "holds"]
#: The page's records of a demo as a whole (the summary matrix's last column).
PageRecord = Literal["broken", "unchecked", "partly-unchecked", "unrecorded", "holds"]


@dataclass(frozen=True)
class NotChecked:
    """Why a value's result was not checked in this build against the installed torch."""

    kind: str  # what the reader is told first: ``skipped``, ``not run``, ``not checked``
    reason: str  # why, for a reader: ``no CUDA on the build machine``
    short: str  # the same in a few words, for the summary matrix
    other_torch: str = ""  # set when the result is real but another torch's, cached earlier
    cause: Cause = "no-verdict"

    @property
    def text(self) -> str:
        """For a table cell: ``skipped: no CUDA on the build machine``."""
        return f"{self.kind}: {self.reason}"

    @property
    def sentence(self) -> str:
        """To follow "Not checked in this build: ": ``skipped (no CUDA on the build machine)``."""
        return self.reason if self.kind == "not checked" else f"{self.kind} ({self.reason})"


def unchecked(result: DemoResult, vr: VariantResult, torch: str) -> NotChecked | None:
    """``None`` if ``vr`` was checked with ``torch`` (the installed one), else why it was not.

    Checked: both runs finished in this build, or they finished in an earlier build of the
    same code with the same torch (a cache hit), or in the environment of a result set, which
    is named with it. Not checked: a run was skipped, refused, stopped or died, the result
    comes from the cache of another torch, or an environment's set has no result.
    """
    for run, label in vr.runs:
        if run.status in ("ok", "raised"):
            continue
        if run.status in ("skipped", "refused"):
            if run.not_run == "missing":
                return NotChecked("no result", "none kept with these docs", "no result", cause="missing")
            if no_cuda(run):
                kind = "skipped" if run.status == "skipped" else "not run"
                return NotChecked(kind, "no CUDA on the build machine", f"{kind}: no CUDA",
                                  cause="no-cuda")
            if run.not_run == "engine":
                return NotChecked("not run", "no demo can run on the build machine", "not run",
                                  cause="engine")
            if run.not_run == "died":
                return NotChecked("not run", "the build's worker stopped before it ran",
                                  "not run", cause="died")
            if run.not_run == "stale":  # execution off, and a module its runs imported changed
                return NotChecked("not run", "execution is off and a module it imports has "
                                  "changed since its cached result", "not run", cause="stale")
            if run.status == "skipped":  # execution off and no cached result
                return NotChecked("not run", "execution is off and nothing is cached", "not run",
                                  cause="never")
            return NotChecked("not run", run.detail.splitlines()[0] if run.detail else "refused",
                              "not run", cause="refused")
        what = {"timeout": "timed out", "crashed": "crashed"}.get(run.status, run.status)
        return NotChecked("not checked", f"the {label} run {what}", what, cause="stopped")
    if vr.verdict.outcome == "error":
        return NotChecked("not checked", vr.verdict.note or "no verdict", "not checked")
    if (vr.cached and result.torch_version != torch and not result.torch_equivalent
            and result.source == "build"):
        return NotChecked("not checked", f"cached result of torch {result.torch_version}, not "
                          f"checked with the installed torch {torch}",
                          f"torch {result.torch_version}", other_torch=result.torch_version,
                          cause="other-torch")
    return None


@dataclass(frozen=True)
class Value:
    """One value of one demo in one environment, judged."""

    name: str
    result: VariantResult  # its runs and verdict
    why: NotChecked | None  # None: checked
    expected: Claim | None  # what the page records for it there
    record: Record
    findings: tuple[Finding, ...]  # about this value in this environment
    # A failing finding of severity error: the check builder's test case is an error.
    error: bool = False

    @property
    def checked(self) -> bool:
        return self.why is None

    @property
    def missing(self) -> bool:
        """The environment's result sets hold no result for it."""
        return self.why is not None and self.why.cause == "missing"

    @property
    def broken(self) -> frozenset[str]:
        """Which of its records no longer hold: ``outcome`` (``:expect:``), ``output``
        (``:expect-output:``), ``compile`` (``:expect-compile:``)."""
        kinds = {"mismatch": "outcome", "default-changed": "outcome", "output": "output",
                 "compile-facts": "compile"}
        return frozenset(kinds[f.subtype] for f in self.findings if f.failed and f.subtype in kinds)


@dataclass(frozen=True)
class Column:
    """One environment's results of a demo: this build's, or a result set's."""

    key: str  # the environment's identity (what findings name); "" before it is known
    environment: Environment | None
    result: DemoResult  # as checked there (its findings, its torch)
    source: Source
    torch: str  # the torch its results are judged against: the installed one, or the set's
    values: tuple[Value, ...]

    @property
    def empty(self) -> bool:
        """No value of the demo has a result in this environment's sets."""
        return all(v.missing for v in self.values)

    def value(self, name: str) -> Value:
        return next(v for v in self.values if v.name == name)


@dataclass(frozen=True)
class Across:
    """One value's record in every environment (the matrix's and the page table's last column)."""

    name: str
    recorded: tuple[tuple[Column, Claim | None], ...]  # each environment and what it records there
    broken_in: tuple[Column, ...]  # checked there, and the record no longer holds
    unchecked_in: tuple[Column, ...]
    record: Record
    # Checked environments disagree on what compiled did against eager.
    changed: bool


@dataclass(frozen=True)
class Judgement:
    """A demo's results as every presenter shows them: a column per environment, this build's
    first, and what holds across them."""

    result: DemoResult
    torch: str  # the installed torch
    columns: tuple[Column, ...]
    across: tuple[Across, ...]  # per value, in the demo's order
    page: PageRecord
    failures: tuple[Finding, ...]  # every failing finding of the demo
    mismatch: bool  # some failure says the page no longer describes what torch does
    # The environments a mismatch was found in, when the page shows several.
    mismatch_in: tuple[str, ...]

    @property
    def here(self) -> Column:
        return self.columns[0]

    @property
    def several(self) -> bool:
        """The page shows the demo in more than one environment."""
        return len(self.columns) > 1

    def value_across(self, name: str) -> Across:
        return next(a for a in self.across if a.name == name)


def key(environment: Environment | None) -> str:
    """An environment's label, by which result sets and findings name it ("" unknown)."""
    return environment.label if environment is not None else ""


def judge(result: DemoResult, torch: str) -> Judgement:
    """The one judgement of a checked ``result`` (check.check) in a build with ``torch``."""
    columns = tuple(_column(shown, torch) for shown in (result, *result.others))
    across = tuple(_across(result, columns, vr.variant.name) for vr in result.variants)
    failures = tuple(f for f in result.findings if f.failed)
    where = tuple(sorted({f.environment for f in failures if f.environment and result.others}))
    return Judgement(result=result, torch=torch, columns=columns, across=across,
                     page=_page(result, columns[0]), failures=failures,
                     mismatch=any(f.severity == "mismatch" for f in failures), mismatch_in=where)


def _column(shown: DemoResult, torch: str) -> Column:
    # A result set's results are judged against the torch that made them.
    against = shown.torch_version if shown.source != "build" else torch
    here = key(shown.environment)
    values = []
    for vr in shown.variants:
        name = vr.variant.name
        why = unchecked(shown, vr, against)
        expected = shown.demo.expected(name, shown.environment)
        about = tuple(f for f in shown.findings if f.concerns(name) and f.environment == here)
        failing = [f for f in about if f.failed]
        recorded = expected is not None or (vr.verdict.outcome == "ran" and _checks_run(
            shown.demo, name, shown.environment))
        record: Record = ("unrecorded" if not recorded else "unchecked" if why is not None
                          else "broken" if failing else "holds")
        values.append(Value(name=name, result=vr, why=why, expected=expected, record=record,
                            findings=about, error=any(f.severity == "error" for f in failing)))
    return Column(key=here, environment=shown.environment, result=shown, source=shown.source,
                  torch=against, values=tuple(values))


def _checks_run(demo: Demo, name: str, environment: Environment | None) -> bool:
    """Does the page record what the compiled run of value ``name`` compiled or printed?"""
    return (demo.expected_compile(name, environment) is not None
            or demo.expected_output(name, environment) is not None)


def _across(result: DemoResult, columns: tuple[Column, ...], name: str) -> Across:
    values = [(column, column.value(name)) for column in columns]
    recorded = tuple((column, v.expected) for column, v in values)
    broken = tuple(c for c, v in values if v.checked and v.record == "broken")
    unchecked_in = tuple(c for c, v in values if not v.checked)
    # What compiled did, where that is a verdict: a release without the config has none to
    # change from.
    outcomes = {v.result.verdict.text for _, v in values
                if v.checked and v.result.verdict.outcome not in ("no-config", "error")}
    record: Record = ("unrecorded" if all(v.record == "unrecorded" for _, v in values)
                      else "broken" if broken
                      else "unchecked" if len(unchecked_in) == len(columns) else "holds")
    return Across(name=name, recorded=recorded, broken_in=broken, unchecked_in=unchecked_in,
                  record=record, changed=len(outcomes) > 1)


def _page(result: DemoResult, here: Column) -> PageRecord:
    """Does the page's record of the demo hold? Only the checked values can say it does not:
    a failure of this build about a value it did not check does not count against it."""
    missed = {v.name for v in here.values if not v.checked}
    names = [vr.variant.name for vr in result.variants]
    if any(f.failed and any(f.concerns(n) and (n not in missed or f.environment != here.key)
                            for n in names) for f in result.findings):
        return "broken"
    if missed:
        return "unchecked" if len(missed) == len(names) else "partly-unchecked"
    demo = result.demo
    if not demo.expect and not (demo.compare == "none" and (demo.expect_compile
                                                            or demo.expect_output)):
        return "unrecorded"
    return "holds"


def judge_all(results: list[DemoResult], torch: str) -> list[Judgement]:
    return [judge(r, torch) for r in results]
