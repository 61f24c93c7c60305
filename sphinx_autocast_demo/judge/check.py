"""What torch did (verdicts) against what the page records (expectations) -> findings."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

from ..core.model import Finding
from ..core.printed import normalize_output
from ..core.scopes import conflict
from ..read import syntax
from ..read.syntax import DEFAULT
from . import hints

if TYPE_CHECKING:
    from ..core.model import (
        DefaultChange,
        DemoResult,
        Location,
        RunRecord,
        SnippetError,
        VariantResult,
    )
    from ..core.subtypes import Subtype


def no_cuda(run: RunRecord) -> bool:
    """The run was not started because the demo is on CUDA and the build machine has none."""
    return run.status in ("skipped", "refused") and run.not_run == "no-cuda"


def check(result: DemoResult) -> DemoResult:
    """Attach findings to ``result``: one per broken variant, errors deduplicated, in this
    build's environment and in every other one of the result sets (where the page's records
    hold too, unless scoped to some torch releases or a device)."""
    several = bool(result.others) or result.source != "build"  # name the environment in messages
    releases = _releases(result)
    checked = _check_one(result, several, releases)
    if result.source == "build" and (alike := hints.alike(result)) is not None:
        checked = replace(checked, findings=(*checked.findings, alike))
    others = tuple(_check_one(other, True, releases) for other in result.others)
    findings = list(checked.findings)
    # A missing expectation is said once, for the first environment that lacks it.
    said = any(f.subtype == "missing-expectation" for f in findings)
    for other in others:
        for finding in other.findings:
            if finding.subtype == "missing-expectation":
                if said:
                    continue
                said = True
            findings.append(finding)
    for shown in (checked, *others):
        if any(vr.compiled.not_run == "missing" for vr in shown.variants):
            # Said once per environment for the whole build (pipeline.run); kept here too, so
            # that the page is read again, and the warning repeated, until the sets are whole.
            label = shown.environment.label if shown.environment else ""
            findings.append(Finding(severity="missing", subtype="environment", environment=label,
                                    location=result.demo.location, message=f"no result from {label}"))
    return replace(checked, others=others, findings=tuple(findings))


def conflicts(result: DemoResult) -> tuple[Finding, ...]:
    """A located error for each value of each environment (this build's and those of the
    result sets) that falls in two scopes recording different outcomes. Overlaps the
    directive proved are refused when the page is read; these are the rest."""
    demo, found = result.demo, []
    for shown in (result, *result.others):
        for vr in shown.variants:
            pair = conflict(demo.expect, vr.variant.name, shown.environment)
            if pair is None:
                continue
            (a, said_a), (b, said_b) = pair
            where = shown.environment.label if shown.environment else "this build"
            found.append(Finding(
                severity="error", subtype="scope-overlap", variants=(vr.variant.name,),
                location=demo.at(demo.expect_line),
                environment=shown.environment.label if shown.environment else "",
                message=(f"value {vr.variant.name} in {where}: both {a} ({said_a}) and {b} "
                         f"({said_b}) apply, and they overlap there: narrow a scope so that one "
                         "applies, or record one outcome")))
    return tuple(found)


class Releases(NamedTuple):
    """The torch versions of a demo's environments that lack its config, and that have it."""

    lacking: tuple[str, ...]
    having: tuple[str, ...]


def _releases(result: DemoResult) -> Releases:
    """The torch of each environment of the demo that lacks its config, and of each that has
    it (a run of it got as far as setting it): what a ``no-config`` record's scope must
    cover, and must not."""
    lacking: list[str] = []
    having: list[str] = []
    for shown in (result, *result.others):
        kinds = {run.error.kind if run.error else "" for vr in shown.variants
                 for run in (vr.compiled, vr.eager) if run.status in ("ok", "raised")}
        if "no-config" in kinds:
            lacking.append(shown.torch_version)
        elif kinds:
            having.append(shown.torch_version)
    return Releases(tuple(lacking), tuple(having))


def _check_one(result: DemoResult, named: bool, releases: Releases) -> DemoResult:
    demo, environment = result.demo, result.environment
    label = environment.label if environment is not None else ""
    where = f" in {label}" if named else ""
    findings: list[Finding] = []
    # The same NameError under every value is one problem: say it once, naming the values.
    errors: dict[tuple[Location, str], tuple[Finding, list[str]]] = {}
    missing: list[tuple[str, str]] = []
    for vr in result.variants:
        if vr.compiled.status == "skipped" and (no_cuda(vr.compiled) or vr.compiled.not_run == "missing"):
            continue  # cuda_unavailable = "skip", or no result in a set: said once, elsewhere
        name = vr.variant.name
        expected = demo.expected(name, environment)
        error = _run_error(result, vr)
        expected_raise = expected is not None and expected.startswith("raises")
        recorded_gap = error is not None and error.subtype == "no-config" and expected == "no-config"
        if error is not None and not recorded_gap and (error.subtype != "snippet-error"
                                                       or not expected_raise):
            if error.subtype == "no-config":
                error = replace(error, message=_no_config(result, error.message, releases))
            errors.setdefault((error.location, error.message), (error, []))[1].append(name)
            continue
        if expected is None:
            missing.append((name, vr.verdict.text))
            continue
        names = vr.compiled.error.names if vr.compiled.error else ()
        if not syntax.outcome_holds(expected, vr.verdict.outcome, names):
            findings.append(_mismatch(result, vr, expected, label))
        findings.extend(replace(f, environment=label) for f in _output_finding(result, vr))
    for error, variant_names in errors.values():
        every = len(variant_names) == len(result.variants) and len(variant_names) > 1
        which = ("every value" if every else "value " + ", ".join(variant_names)) + where
        message = error.message
        if error.subtype == "snippet-error":
            raised = f"raises {_raised(result, variant_names[0])}"
            record = syntax.expect_text([("*", raised)] if every else
                                        [(n, raised) for n in variant_names])
            message += f"\nFix the code, or record the error with  :expect: {record}"
        findings.append(replace(error, variants=tuple(variant_names), environment=label,
                                message=f"{which}: {message}"))
    if missing:
        recorded = [(n, o) for n, o in demo.expect]
        suggestion = syntax.expect_text(recorded + missing)
        findings.append(Finding(
            severity="missing", subtype="missing-expectation", location=demo.location,
            message=("no recorded expectation for "
                     + ", ".join(n for n, _ in missing)
                     + f"; add to the directive:\n   :expect: {suggestion}"),
        ))
    return replace(result, findings=tuple(findings))


def _mismatch(result: DemoResult, vr: VariantResult, expected: str, label: str) -> Finding:
    """A record that no longer holds: said as a change of torch's default where that is why
    the ``default`` row broke (once, in place of the row's mismatch); with the tolerance to
    allow where compiled differs from eager by rounding only and the page records a match."""
    demo, name = result.demo, vr.variant.name
    torch = f"torch {result.torch_version}{_made(result)}"
    change = hints.default_change(result, vr)
    if change is not None:
        return Finding(
            severity="mismatch", subtype="default-changed", variants=(name,),
            location=demo.at(demo.expect_line), environment=label, default=change,
            message=(f"value {name}: {torch}'s default of {change.config} is now {change.now}, "
                     f"the page records {_recorded(change, expected, result)}. If the page is "
                     f"about the default, record what it does now ({name}: {vr.verdict.text}); "
                     "if it is about "
                     + (f"{change.recorded[0]}, name that value" if change.recorded else
                        "the default torch had, name that value")
                     + f" instead of {name}"))
    hint = hints.tolerance_hint(demo, [vr.verdict]) if expected == "matches" else None
    rounding = (f"; if that is rounding, not the value's doing, allow it: {hint}" if hint else "")
    return Finding(
        severity="mismatch", subtype="mismatch", variants=(name,),
        location=demo.at(demo.expect_line), environment=label,
        message=(f"value {name}: the page records '{expected}' but with {torch} compiled "
                 f"{_describe(vr)}{rounding}"))


def _recorded(change: DefaultChange, expected: str, result: DemoResult) -> str:
    """What the page takes the default to be, the records that say so, and what the
    ``default`` row did instead."""
    default = next(v for v in result.variants if v.variant.name == DEFAULT)
    if change.recorded:
        alike = [v.variant.name for v in result.variants if v is not default
                 and (v.variant.source or v.variant.name) in change.recorded]
        rows = " and ".join(alike)
        return (f"{' or '.join(change.recorded)} (its {DEFAULT} row records '{expected}', as its "
                f"{rows} row{'s do' if len(alike) > 1 else ' does'}); the {DEFAULT} row now "
                f"{_describe(default)}")
    unlike = result.demo.expected(change.unlike, result.environment)
    return (f"a default other than {change.now} (its {DEFAULT} row records '{expected}', its "
            f"{change.unlike} row '{unlike}'); the {DEFAULT} row now does what the "
            f"{change.unlike} row does: {_describe(default)}")


def _no_config(result: DemoResult, reason: str, releases: Releases) -> str:
    """The ``no-config`` error's text: what to set, or the record that covers every release
    without the config (the releases that lack it, not this build's torch alone)."""
    demo = result.demo
    lacking = (result.torch_version, *(v for v in releases.lacking if v != result.torch_version))
    scope, why = hints.missing_scope(demo.config, lacking, releases.having)
    return (f"torch {result.torch_version} has no config {demo.config} ({reason}): set :config: "
            "(or autocast_demo_config) to one it has, or, where only some releases have it, "
            f"record that in :expect: (*[{scope}]: no-config; {why})")


def _made(result: DemoResult) -> str:
    """Where a result of a result set comes from, after its torch: `` (result set, made ...)``."""
    if result.source == "build" or result.environment is None:
        return ""
    return f" ({result.environment.label}, {result.made})"


def _raised(result: DemoResult, name: str) -> str:
    vr = next(v for v in result.variants if v.variant.name == name)
    return vr.compiled.error.type if vr.compiled.error else "Exception"


def _describe(vr: VariantResult) -> str:
    verdict = vr.verdict
    if verdict.outcome == "matches":
        return "matches eager"
    if verdict.outcome == "differs":
        return f"differs from eager: {verdict.note}" if verdict.note else "differs from eager"
    if verdict.outcome == "no-config":
        return f"cannot run: {verdict.note}"
    if verdict.outcome == "raises":
        also = f" (eager raises {verdict.eager_exception} too)" if verdict.eager_exception else ""
        return f"raises {verdict.exception}: {verdict.note}{also}"
    return f"could not run: {verdict.note}"


def _run_error(result: DemoResult, vr: VariantResult) -> Finding | None:
    """A run that did not finish normally: located at the failing statement when possible."""
    for run, label in ((vr.compiled, "compiled"), (vr.eager, "eager")):
        if run.status in ("skipped", "refused"):
            engine = run.status == "refused" and run.not_run in ("engine", "died")
            return Finding(
                severity="missing" if run.status == "skipped" else "error",
                subtype="engine" if engine else "not-run", variants=(vr.variant.name,),
                location=result.demo.location, message=run.detail,
            )
        if run.status == "timeout":
            return Finding(
                severity="error", subtype="timeout", variants=(vr.variant.name,),
                location=_stopped_location(result, run),
                message=(f"the {label} run did not finish: it was {run.detail}, with every "
                         "process it started; look for a loop that never ends or a wait "
                         "(a sleep, a read, input()) that nothing answers, or raise the "
                         ":timeout: option (or autocast_demo_timeout)" + _tail(run.output)
                         + _stopped_trace(result, run, "was")),
            )
        if run.status == "crashed":
            return Finding(
                severity="error", subtype="crash", variants=(vr.variant.name,),
                location=_stopped_location(result, run),
                message=(f"the {label} run died: {run.detail}{_why(run)}; find what "
                         "ends the process (the build went on without this run)" + _tail(run.output)
                         + _stopped_trace(result, run, "crashed")),
            )
    for run in (vr.compiled, vr.eager):
        if run.error is not None and run.error.kind:
            return _not_a_verdict(result, vr, run.error)
    if (vr.verdict.outcome == "error" and vr.verdict.compared == 0 and not vr.verdict.cut
            and vr.compiled.status == "ok"):
        return Finding(
            severity="error", subtype="nothing-compared", variants=(vr.variant.name,),
            location=result.demo.location,
            message=("nothing to compare: the snippet leaves no tensor reachable from its "
                     "top-level names and prints nothing, so its compiled and eager runs cannot "
                     "be told apart; bind what it computes (z = region(x, w), g = "
                     "torch.autograd.grad(z, w)) or print it"),
        )
    if vr.verdict.outcome == "error" and vr.verdict.cut:
        return Finding(
            severity="error", subtype="partial-view", variants=(vr.variant.name,),
            location=result.demo.location,
            message=(f"{vr.verdict.note}; everything that was compared matches (if anything "
                     "was), but a match "
                     "cannot be confirmed from part of what a reader could see: keep less "
                     "within reach of the snippet's names (del what is not the point), or add "
                     ":partial-view: to accept a match from what was compared (the page then "
                     "says so)"),
        )
    if vr.compiled.status == "raised" and vr.compiled.error is not None:
        error = vr.compiled.error
        return Finding(
            severity="error", subtype="snippet-error", variants=(vr.variant.name,),
            location=result.where(error),
            message=(f"the snippet raised {error.type}" + (f": {error.message}" if error.message else "")
                     + f"\n{result.traceback(error)}"),
        )
    return None


def _output_finding(result: DemoResult, vr: VariantResult) -> list[Finding]:
    expected = result.demo.expected_output(vr.variant.name, result.environment)
    if expected is None:
        return []
    actual = normalize_output(vr.compiled.output)
    if normalize_output(expected) == actual:
        return []
    return [Finding(
        severity="mismatch", subtype="output", variants=(vr.variant.name,),
        location=result.demo.at(result.demo.expect_output_line),
        message=(f"value {vr.variant.name}: the printed output is not what the page records "
                 "in :expect-output: (addresses, timings and warning locations aside); fix the "
                 "code or update the record\n"
                 f"  recorded: {normalize_output(expected)!r}\n  printed:  {actual!r}"),
    )]


def _not_a_verdict(result: DemoResult, vr: VariantResult, error: SnippetError) -> Finding:
    """A run that ended so that no verdict can be drawn from it, and not by the snippet's own
    doing that a page could record (``raises``): each is a located error of its kind."""
    demo = result.demo
    subtype: Subtype = "eager-compiled"
    if error.kind == "no-config":
        subtype = "no-config"
        message = error.message  # (check._no_config says what to record, across environments)
        location = demo.at(demo.source_map.line_of("config"))
    elif error.kind == "compiled-nothing":
        subtype = "compiled-nothing"
        message = (f"{error.message}, so it would be compared with the eager run as if it were "
                   "compiled: compile the code the page is about (torch.compile(fn), "
                   "model.compile(), or AOTAutograd's aot_function), and build without "
                   "TORCH_COMPILE_DISABLE")
        location = demo.location
    elif error.kind == "config-set":
        subtype = "config-set"
        message = (f"never ran under its own value: {error.message} "
                   f"({demo.config}), so this row would be a verdict of that value; leave "
                   "the config to the demo's values (set it in the demo's own code where "
                   "overriding it is the point)")
        location = result.where(error)
    else:  # eager-compiled
        message = (f"the eager run is not eager: {error.message}. There torch.compile, "
                   "torch.compiler.compile, nn.Module.compile, torch._dynamo.optimize, "
                   "optimize_assert and AOTAutograd's aot_function and aot_module return what "
                   "they are given; compile through one of them, or the demo would compare "
                   "compiled with compiled")
        location = result.where(error)
    return Finding(severity="error", subtype=subtype, variants=(vr.variant.name,),
                   location=location, message=message)


def _stopped_location(result: DemoResult, run: RunRecord) -> Location:
    """The line a hung or crashed run was on (from its faulthandler dump), else the directive."""
    if run.error is None or not run.error.frames:
        return result.demo.location
    return result.where(run.error)


def _stopped_trace(result: DemoResult, run: RunRecord, what: str) -> str:
    if run.error is None or not run.error.frames:
        return ""
    trace = result.traceback(run.error).splitlines()[1:-1]  # frames only
    return f"\n  where it {what}:\n" + "\n".join(trace)


def _why(run: RunRecord) -> str:
    """What usually sends a signal to a snippet, so the writer knows where to look."""
    if run.killed_by:
        return f" ({_SIGNALS[run.killed_by]})" if run.killed_by in _SIGNALS else ""
    return "" if run.exit_status is None else " (os._exit(), or native code that exits)"


_SIGNALS = {
    "SIGSEGV": "a segmentation fault: native code read memory it does not own",
    "SIGABRT": "native code aborted, often a failed assertion in a C++ library",
    "SIGKILL": "killed from outside, often by the kernel for using too much memory",
    "SIGBUS": "a bus error: native code read memory it does not own",
    "SIGFPE": "an arithmetic fault in native code",
}


def _tail(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()][-3:]
    return ("\n  last output: " + "\n  ".join(lines)) if lines else ""
