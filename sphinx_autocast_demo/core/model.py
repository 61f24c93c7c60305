"""The data that flows from the directive to the report: frozen, picklable, JSON-able.

Every type here is plain data so that it can live in the Sphinx environment (pickled between
builds, merged between ``-j`` readers) and in the on-disk result cache (JSON, never pickle).
Over ~400 lines: every stage's types declared once, in one place, rather than split by stage.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from .config import DEFAULT_CONFIG, Compare, DtypeFrom, Show
from .scopes import Record, governing
from .subtypes import Subtype
from .text import one_spaced

#: The first torch release that has a config, for the configs whose history is known: a page
#: may then record that every older release lacks it (``*[torch<2.9]: no-config``).
#: backward_pass_autocast came with pytorch/pytorch#156356, merged after 2.8's branch cut.
CONFIG_SINCE: dict[str, str] = {DEFAULT_CONFIG: "2.9"}

#: ``no-config``: the installed torch has no such config, a fact about a release that a page
#: may record (scoped to the releases that lack it).
#: ``ran``: the compiled run finished, and nothing was compared with it (``:compare: none``).
Outcome = Literal["matches", "differs", "raises", "no-config", "ran", "error"]
RunStatus = Literal["ok", "raised", "timeout", "crashed", "skipped", "refused"]
#: Why a run never started (status ``skipped`` or ``refused``): ``engine``, no demo can run in
#: this build (one error says so for the whole build); ``no-cuda``, a CUDA demo on a machine
#: without CUDA; ``never``, execution is off and the cache has no result; ``missing``, an
#: expected environment's result sets hold no result for it (one warning per environment).
NotRunReason = Literal["", "engine", "died", "no-cuda", "never", "stale", "missing"]
Severity = Literal["ok", "mismatch", "error", "missing"]
#: What a run's exception means when it is not the snippet's own: ``no-config``, the installed
#: torch has no such config (a fact about the release); ``eager-compiled``, dynamo compiled
#: frames in the eager run; ``compiled-nothing``, the compiled run compiled none of the
#: snippet's code; ``config-set``, a setup wrote over the row's value before the demo ran;
#: ``config-other``, a compile read a value the row did not give nor the snippet write.
ErrorKind = Literal["", "no-config", "eager-compiled", "compiled-nothing", "config-set",
                    "config-other"]
#: Where a demo's results in an environment come from: ``build``, this build (its runs or its
#: cache); ``set``, a result set (autocast_demo_results); ``missing``, an expected environment
#: that no result set holds.
Source = Literal["build", "set", "missing"]


@dataclass(frozen=True)
class Location:
    """A place in the docs' sources (or conf.py): what warnings, reports and CI point at."""

    path: str
    line: int = 0  # 1-based; 0: the file as a whole

    def __str__(self) -> str:
        """``path:line``, the form Sphinx's ``location=`` takes and prints."""
        return f"{self.path}:{self.line}" if self.line else self.path


@dataclass(frozen=True)
class Environment:
    """Where results were made: what a scoped expectation is matched against, and what a page
    names beside each result from a result set."""

    label: str  # what readers see: ``torch 2.14.1`` (autocast_demo_environment)
    torch: str
    python: str
    device: str = "cpu"  # ``cuda`` when the machine had CUDA

    @classmethod
    def only_named(cls, label: str) -> Environment:
        """One expected by name that no result set holds (torch, Python, device unknown)."""
        return cls(label, torch="", python="")

    @property
    def ident(self) -> str:
        """The label as a directory name: ``torch-2.14.1``."""
        return re.sub(r"[^a-z0-9.+]+", "-", self.label.lower()).strip("-.") or "environment"


@dataclass(frozen=True)
class OptionSpan:
    """Where one option of a directive is written: its first line and the line after its
    last (continuation lines included), 1-based, in the directive's file."""

    name: str
    first: int
    end: int


@dataclass(frozen=True)
class SourceMap:
    """Where a directive and each of its options sit in its file, recorded once, when the
    directive is read (reST, MyST colon and YAML forms, included files alike); warnings, the
    check builder and accept mode all point and edit through it."""

    path: str
    line: int  # the directive's line (MyST: its opening fence)
    style: Literal["rst", "colon", "yaml"]
    start: int  # the option region's first line (where an option goes into an empty one)
    end: int  # the line after the region (YAML: the closing ---)
    options: tuple[OptionSpan, ...] = ()

    def span(self, name: str) -> OptionSpan | None:
        return next((o for o in self.options if o.name == name), None)

    def line_of(self, name: str) -> int:
        """The line of option ``name``, or the directive's own line when it is not written."""
        found = self.span(name)
        return found.first if found else self.line


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
    expect: tuple[Record[Claim], ...]  # (variant name or "*", scoped or not); empty: not recorded
    expect_output: tuple[Record[str], ...]  # (variant name or "*", scoped or not; printed text)
    backend: str
    device: str
    dtype: str
    timeout: float
    tolerance: Tolerance
    source_map: SourceMap
    # What the page shows: the full table, only the recorded outcomes (a demo that is not about
    # compiled against eager), or only what the snippet printed. Checks are the same for all.
    show: Show = "table"
    # autocast_demo_global_setup, run before the page's setups (its lines are conf.py's).
    global_setup: Code | None = None
    # ``:alike:``: every value giving one outcome is the demo's point, not a demo that cannot
    # tell its values apart.
    alike: bool = False
    # The standard values the demo does not name, also run (never shown, never exported) so
    # that a demo of one or two values can still be told to prove nothing (check._alike).
    probes: tuple[Variant, ...] = ()
    # ``:partial-view:``: a match from a view the walk had to cut (engine/observe.py) is taken
    # as a match, and the page says it was partly compared; without it, it is no verdict.
    partial_view: bool = False
    # Who chose ``dtype`` (a page may say it beside the ``autocast`` value).
    dtype_from: DtypeFrom = "device"
    # ``:expect-compile:``: what compiling did, per value, chosen as ``:expect:`` records are.
    expect_compile: tuple[Record[CompileClaim], ...] = ()
    # ``:continues:``: runs as a notebook's next cell, after the page's earlier demos of its
    # group (their code replayed first, their output hidden); its bare last expression shown.
    continues: bool = False
    # ``:compare: none``: no eager run; what it records of compiling and printing is checked.
    compare: Compare = "eager"

    @property
    def held_to_alike(self) -> bool:
        """Must the demo tell its values apart?"""
        # Not ``:alike:``, nor ``:show: outputs``, nor a demo that records what compiling did:
        # that is its point; nor one that compares nothing.
        return (not self.alike and self.show != "outputs" and not self.expect_compile
                and self.compare == "eager")

    @property
    def varies_nothing(self) -> bool:
        """Its one value is ``default``: the snippet runs as written (no config is its subject)."""
        return [v.name for v in self.variants] == ["default"]

    @property
    def held_to_compile(self) -> bool:
        """Must the compiled run compile some code?"""
        # Not under ``:show: outputs``, nor where the demo records how many graphs compiling
        # made: there 0 graphs is a fact it checks. (A record of breaks alone checks no graph.)
        return self.show != "outputs" and not any(r.claim.graphs is not None
                                                  for r in self.expect_compile)

    @property
    def runs(self) -> tuple[Variant, ...]:
        """Every value the engine runs for the demo: its own, then its probes."""
        return self.variants + self.probes

    @property
    def expect_line(self) -> int:
        """Line of the ``:expect:`` option, or the directive's line."""
        return self.source_map.line_of("expect")

    @property
    def expect_compile_line(self) -> int:
        """Line of the ``:expect-compile:`` option, or the directive's line."""
        return self.source_map.line_of("expect-compile")

    @property
    def expect_output_line(self) -> int:
        """Line of the ``:expect-output:`` option, or the directive's line."""
        return self.source_map.line_of("expect-output")

    @property
    def location(self) -> Location:
        return Location(self.code.source, self.lineno)

    def at(self, line: int) -> Location:
        """A line of the demo's own file (an option's line, say)."""
        return Location(self.code.source, line or self.lineno)

    def expected(self, variant: str, environment: Environment | None = None) -> Claim | None:
        """The record for ``variant`` in ``environment``: a scoped one over an unscoped one, the
        value's own over ``*`` (two that disagree: scopes.conflicts)."""
        record = governing(self.expect, variant, environment)
        return record.claim if record is not None else None

    def expected_compile(self, variant: str, environment: Environment | None = None) -> CompileClaim | None:
        """What compiling did under ``variant``, as recorded, chosen as :meth:`expected` chooses."""
        record = governing(self.expect_compile, variant, environment)
        return record.claim if record is not None else None

    def expected_output(self, variant: str, environment: Environment | None = None) -> str | None:
        """The printed output recorded for ``variant`` in ``environment``, chosen as
        :meth:`expected` chooses (``[off[torch>=2.16]]`` over ``[off]`` over ``[*]``)."""
        record = governing(self.expect_output, variant, environment)
        return record.claim if record is not None else None


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
class GraphBreak:
    """A graph break of the compiled run: dynamo's reason (its first line) and the writer's
    line it broke at (none where dynamo named no frame of the writer's)."""

    reason: str
    at: tuple[Frame, ...] = ()
    count: int = 1


@dataclass(frozen=True)
class Recompile:
    """A recompilation of the compiled run: the guard that failed (``c == 1.0``) and the
    writer's line it guarded."""

    guard: str
    at: tuple[Frame, ...] = ()


@dataclass(frozen=True)
class Skip:
    """Frames dynamo began and did not compile, running them eagerly (a generator, a frame past
    the recompile limit) or letting their error out: why (the first line of dynamo's reason;
    "" where it cannot be told), and how many."""

    reason: str
    count: int = 1


@dataclass(frozen=True)
class CompileFacts:
    """What ``torch.compile`` did in a compiled run (engine/child/facts.py): the graphs it
    made, where and why it broke them, each recompilation with its failed guard, and the frames
    it skipped, with why."""

    graphs: int
    breaks: tuple[GraphBreak, ...] = ()
    recompiles: tuple[Recompile, ...] = ()
    skipped: tuple[Skip, ...] = ()

    @property
    def counts(self) -> dict[str, int]:
        """As a record states them (:class:`CompileClaim`)."""
        return {"graphs": self.graphs, "breaks": sum(b.count for b in self.breaks),
                "recompiles": len(self.recompiles), "skipped": sum(s.count for s in self.skipped)}


@dataclass(frozen=True)
class CompileClaim:
    """What ``:expect-compile:`` records of a value: some of the counts of
    :attr:`CompileFacts.counts` (None: not recorded), and where a record names them, why each
    graph broke, which guard failed at each recompilation and why each frame was skipped
    (``breaks 1 [reason]``)."""

    graphs: int | None = None
    breaks: int | None = None
    recompiles: int | None = None
    break_reasons: tuple[str, ...] | None = None
    recompile_guards: tuple[str, ...] | None = None
    skipped: int | None = None
    skip_reasons: tuple[str, ...] | None = None

    def __str__(self) -> str:
        listed = {"breaks": self.break_reasons, "recompiles": self.recompile_guards,
                  "skipped": self.skip_reasons}
        return ", ".join(f"{name} {count}" + (f" [{'; '.join(why)}]" if (why := listed.get(name))
                                               is not None else "")
                         for name, count in self.stated().items())

    def stated(self) -> dict[str, int]:
        return {name: count for name in ("graphs", "breaks", "recompiles", "skipped")
                if (count := getattr(self, name)) is not None}

    def observed(self, facts: CompileFacts) -> CompileClaim:
        """What this record states, as ``facts`` have it: the record that holds."""
        counts = {name: facts.counts[name] for name in self.stated()}
        reasons, guards, skips = _reasons(facts)
        return CompileClaim(**counts, break_reasons=_as_listed(self.break_reasons, reasons),
                            recompile_guards=_as_listed(self.recompile_guards, guards),
                            skip_reasons=_as_listed(self.skip_reasons, skips))

    def wrong(self, facts: CompileFacts) -> dict[str, tuple[str, str]]:
        """Each stated fact that ``facts`` do not have: name -> (recorded, observed), as a
        record writes them (reasons in any order: :meth:`observed` keeps the record's)."""
        seen, now = facts.counts, self.observed(facts)
        found = {name: (str(count), str(seen[name])) for name, count in self.stated().items()
                 if seen[name] != count}
        for name, was, got in (("breaks", self.break_reasons, now.break_reasons),
                               ("recompiles", self.recompile_guards, now.recompile_guards),
                               ("skipped", self.skip_reasons, now.skip_reasons)):
            if was != got and was is not None and got is not None and name not in found:
                found[name] = (f"[{'; '.join(was)}]", f"[{'; '.join(got)}]")
        return found


def _reasons(facts: CompileFacts) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Each graph break's reason (once per break), each recompilation's failed guard and each
    skipped frame's reason, with its white space as a record holds it (one space)."""
    return (tuple(one_spaced(b.reason) for b in facts.breaks for _ in range(b.count)),
            tuple(one_spaced(r.guard) for r in facts.recompiles),
            tuple(one_spaced(s.reason) for s in facts.skipped for _ in range(s.count)))


def _as_listed(recorded: tuple[str, ...] | None, seen: tuple[str, ...]) -> tuple[str, ...] | None:
    """``seen``, where a record lists ``recorded`` (None: it lists none), in the record's own
    order where they are the same reasons: a record in another order still holds."""
    if recorded is None:
        return None
    return recorded if sorted(recorded) == sorted(seen) else seen


@dataclass(frozen=True)
class SnippetError:
    """An exception raised by the writer's code (only the writer's frames are kept)."""

    type: str
    names: tuple[str, ...]  # class and base names of every exception in the cause chain
    message: str
    frames: tuple[Frame, ...]
    kind: ErrorKind = ""
    # For a kind: the values its message is made of, in order (judge/notes.py words them in
    # the page's or the console's language; ``message`` is the English of a result file).
    facts: tuple[str, ...] = ()


@dataclass(frozen=True)
class RunRecord:
    """One run of one demo under one variant, compiled or eager."""

    status: RunStatus
    output: str = ""
    tensors: tuple[TensorRecord, ...] = ()
    error: SnippetError | None = None
    detail: str = ""  # for timeout / crashed: what happened, in words
    seconds: float = 0.0
    not_run: NotRunReason = ""  # for skipped / refused: why it never started
    # Why ``tensors`` is not all a reader could reach (engine/observe.py), or what it printed
    # not all the comparison could read (engine/records.py).
    cut: str = ""
    # Values the snippet gave the varied config itself, other than the row's (their repr): the
    # row ran under those too, and says so.
    config_set: tuple[str, ...] = ()
    # Where the snippet set the first of them: its line, for the row to name.
    config_set_at: tuple[Frame, ...] = ()
    # For the ``default`` row, which sets nothing: the value torch's config had (its repr), so
    # that the row says which default it checked.
    config_default: str = ""
    # For crashed: how its process ended, as data: the signal that killed it (``SIGSEGV``), or
    # the status it exited with (None: it did not, or its result could not be read).
    killed_by: str = ""
    exit_status: int | None = None
    # Its process's id: a number printed in one run and not the other that is each run's pid is
    # no difference compiling made (compare.compare_printed names it). None: not known.
    pid: int | None = None
    # What it printed past what ``output`` keeps (text.MAX_OUTPUT), as the comparison still
    # sees it; None when ``output`` is all it printed.
    printed: PrintedDigest | None = None
    # For a compiled run that finished: what the compiler did. None: an eager run, or not known.
    compile: CompileFacts | None = None


@dataclass(frozen=True)
class PrintedDigest:
    """All of a run's printed output, as :func:`.compare.printed_digest` reads it (normalised,
    the compiler stack's warnings and log lines left out): a page keeps
    only the first :data:`.text.MAX_OUTPUT` characters, and a difference may come later."""

    lines: int
    exact: str  # sha256 of those lines
    shape: str  # ... with every number as ``#``: equal, and exact not, only numbers differ
    pidless: str  # ... with the run's pid as ``<pid>`` (exact, when not known)


#: What a difference is, beyond a number (judge/notes.py words each): one side has nothing
#: there, another dtype or shape; no values kept to measure; integers compared exactly; equal
#: values with other bits (a zero's sign, a NaN's); a printed line, or only its pid; past the
#: lines a page keeps, only a pid, a line count, other text or other numbers.
NoteKind = Literal["missing", "dtype", "shape", "unmeasured", "exact", "signed-zero", "nan-bits",
                   "signed-zero-and-nan-bits", "not-bitwise", "printed", "pid", "pid-after", "count",
                   "text", "numbers"]


@dataclass(frozen=True)
class Note:
    """Why two tensors or printed outputs differ, as facts: worded where it is said, in the
    page's or the console's language, never stored as English."""

    kind: NoteKind
    compiled: str = ""  # what compiled had: a shape ("[4]", "" for nothing), a line's repr, a count
    eager: str = ""
    line: int = 0  # the printed line it is about; for the kinds past what a page keeps, the last one kept


@dataclass(frozen=True)
class TensorDiff:
    name: str  # a tensor's path (``model.w.grad``), ``printed line 3`` or ``printed output``
    kind: str
    compiled_dtype: str | None
    eager_dtype: str | None
    equal: bool
    max_abs: float | None
    note: Note | None = None


@dataclass(frozen=True)
class Claim:
    """An outcome as a writer records it in ``:expect:`` (``raises KeyError``), read once, where
    the directive is read; what a record holds for is decided by :meth:`holds` alone."""

    outcome: Literal["matches", "differs", "raises", "no-config"]
    exception: str = ""  # for ``raises``: the name as written, dotted or not

    def __str__(self) -> str:
        return f"raises {self.exception}" if self.outcome == "raises" else self.outcome

    def holds(self, vr: VariantResult) -> bool:
        """Does it hold for what ``vr`` did? ``raises X`` holds where compiled raised an ``X``
        (a subclass too: the names are the exception's classes)."""
        if self.outcome != "raises":
            return vr.verdict.outcome == self.outcome
        names = vr.compiled.error.names if vr.compiled.error else ()
        return vr.verdict.outcome == "raises" and self.exception.rsplit(".", 1)[-1] in names


@dataclass(frozen=True)
class Verdict:
    outcome: Outcome
    exception: str | None = None  # the compiled run's exception type, for ``raises``
    eager_exception: str | None = None  # ... and the eager run's, where it raised too
    max_abs: float | None = None
    diffs: tuple[TensorDiff, ...] = ()
    note: str = ""
    # How many tensors and printed lines the two runs were compared on; for ``error`` with both
    # runs finished, 0 means nothing was there to compare (never a match).
    compared: int = 0
    cut: str = ""  # why the comparison saw only part of what a reader could reach

    @property
    def claim(self) -> Claim:
        """What a writer records for it in ``:expect:`` (an ``error`` has nothing to record, nor
        has a run compared with nothing)."""
        assert self.outcome not in ("error", "ran"), f"{self.outcome} is not an outcome a page records"
        return Claim(self.outcome, self.exception or "")  # type: ignore[arg-type]  # (asserted)

    @property
    def text(self) -> str:
        """The outcome as a writer would record it (``error``, ``ran``: none)."""
        return self.outcome if self.outcome in ("error", "ran") else str(self.claim)


@dataclass(frozen=True)
class VariantResult:
    variant: Variant
    verdict: Verdict
    compiled: RunRecord
    eager: RunRecord | None  # None: no eager run was asked for (``:compare: none``)
    cached: bool = False

    @property
    def runs(self) -> tuple[tuple[RunRecord, Literal["compiled", "eager"]], ...]:
        """The runs it had, each with its name: the compiled one first."""
        return ((self.compiled, "compiled"),) + (((self.eager, "eager"),) if self.eager else ())

    @property
    def config_default(self) -> str:
        """torch's default of the varied config, as a run of it read it ("": none did)."""
        return self.compiled.config_default or (self.eager.config_default if self.eager else "")

    @property
    def seconds(self) -> float:
        return sum(run.seconds for run, _ in self.runs)


def skipped(variant: Variant, reason: str, status: RunStatus = "skipped",
            why: NotRunReason = "") -> VariantResult:
    """The result of a value whose runs never started, and why (``reason``, in words)."""
    record = RunRecord(status=status, detail=reason, not_run=why)
    return VariantResult(variant, Verdict(outcome="error", note=reason), record, record)


@dataclass(frozen=True)
class DemoResult:
    demo: Demo
    codes: tuple[Code, ...]  # the setups that ran, then the demo: what ``Frame.part`` indexes
    variants: tuple[VariantResult, ...]
    torch_version: str  # the torch that produced the results
    findings: tuple[Finding, ...] = field(default=())
    # Produced by another torch that ``autocast_demo_cache_torch`` counts as the installed one
    # (same release, or the same label): checked, and named as the torch it was.
    torch_equivalent: bool = False
    # Where the results were made; None: this build's own environment, before it is known.
    environment: Environment | None = None
    # Where the results come from: this build, a result set, or no set at all.
    source: Source = "build"
    # For a maintainer: how a result set's results were made (``made on 2026-11-30 by tox -e
    # results-torch214``); empty for this build's own. Only shown, never asked.
    made: str = ""
    # When, for a reader (``on 2026-11-30``): pages say this, not the command.
    when: str = ""
    # The same demo's results in the other environments of the result sets, in their order.
    others: tuple[DemoResult, ...] = ()
    # This build's results of the demo's probes (Demo.probes): read by the alike check only.
    probes: tuple[VariantResult, ...] = ()

    def where(self, error: SnippetError) -> Location:
        """The doc file and line of the innermost frame of the writer's code."""
        return self.where_frame(error.frames[-1]) if error.frames else self.demo.location

    def where_frame(self, frame: Frame) -> Location:
        """The doc file and line of a frame of the writer's code."""
        code = self.codes[min(frame.part, len(self.codes) - 1)]
        return Location(code.source, code.doc_line(frame.line))

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
class DefaultChange:
    """A ``default`` row whose record broke because torch's default of the config is not the
    one the page's records take it to be (subtype ``default-changed``)."""

    config: str
    now: str  # torch's default, as the row ran under it (its repr): ``'off'``
    # The values the page records the ``default`` row alike with (their sources), which still
    # hold: what the page takes the default to be. Empty: no such value; then ``unlike`` names
    # the row of ``now``'s value, whose record the page keeps apart from the default's.
    recorded: tuple[str, ...] = ()
    unlike: str = ""


@dataclass(frozen=True)
class Finding:
    """The check of one variant (or the whole demo) against what the page records."""

    severity: Severity
    subtype: Subtype  # the warning subtype: ``mismatch``, ``snippet-error``, ``timeout``...
    message: str
    location: Location
    variants: tuple[str, ...] = ()  # the values it is about; empty: the whole demo
    environment: str = ""  # the label of the environment it is about; empty: this build's
    default: DefaultChange | None = None  # for ``default-changed``: what changed

    @property
    def failed(self) -> bool:
        return self.severity in ("mismatch", "error")

    def concerns(self, variant: str, environment: str | None = None) -> bool:
        """Is ``variant`` one of the values this finding names (in ``environment``, if given)?"""
        return variant in self.variants and environment in (None, self.environment)
