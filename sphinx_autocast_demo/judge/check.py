"""What torch did (verdicts) against what the page records (expectations) -> findings."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, NamedTuple

from ..core.i18n import msg, n_msg
from ..core.model import CompileClaim, Finding
from ..core.printed import as_recorded, keeps_logs, normalize_output, output_holds
from ..core.scopes import conflict
from ..read import syntax
from ..read.syntax import DEFAULT
from . import hints
from .notes import compile_text
from .printed import first_output_record
from .run_errors import run_error

if TYPE_CHECKING:
    from collections.abc import Sequence

    from ..core.model import (
        Claim,
        DefaultChange,
        DemoResult,
        Location,
        RunRecord,
        VariantResult,
    )


def no_cuda(run: RunRecord) -> bool:
    """The run was not started because the demo is on CUDA and the build machine has none."""
    return run.status in ("skipped", "refused") and run.not_run == "no-cuda"


def check(result: DemoResult) -> DemoResult:
    """Attach findings to ``result``: one per broken variant, errors deduplicated, in this
    build's environment and in every other one of the result sets (where the page's records
    hold too, unless scoped to some torch releases or a device)."""
    several = bool(result.others) or result.source != "build"  # name the environment in messages
    releases = _releases(result)
    checked = _check_one(result, several, releases, _defaults(result.others))
    if result.source == "build" and (alike := hints.alike(result)) is not None:
        checked = replace(checked, findings=(*checked.findings, alike))
    if result.source == "build" and (unrecorded := _unrecorded_output(result)) is not None:
        checked = replace(checked, findings=(*checked.findings, unrecorded))
    if result.source == "build" and (unrecorded := _unrecorded_compile(result)) is not None:
        checked = replace(checked, findings=(*checked.findings, unrecorded))
    others = tuple(_check_one(other, True, releases,
                              _defaults([result, *(o for o in result.others if o is not other)]))
                   for other in result.others)
    findings = list(checked.findings)
    # A missing expectation is said once, for the first environment that lacks it.
    told = any(f.subtype == "missing-expectation" for f in findings)
    for other in others:
        for finding in other.findings:
            if finding.subtype == "missing-expectation":
                if told:
                    continue
                told = True
            findings.append(finding)
    for shown in (checked, *others):
        if any(vr.compiled.not_run == "missing" for vr in shown.variants):
            # Said once per environment for the whole build (pipeline.run); kept here too, so
            # that the page is read again, and the warning repeated, until the sets are whole.
            label = shown.environment.label if shown.environment else ""
            findings.append(Finding(severity="missing", subtype="environment", environment=label,
                                    location=result.demo.location,
                                    message=msg("no result from {environment}", environment=label)))
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
            (a, claim_a), (b, claim_b) = pair
            where = shown.environment.label if shown.environment else msg("this build")
            found.append(Finding(
                severity="error", subtype="scope-overlap", variants=(vr.variant.name,),
                location=demo.at(demo.expect_line),
                environment=shown.environment.label if shown.environment else "",
                message=msg("value {value} in {where}: both {a} ({claim_a}) and {b} ({claim_b}) "
                             "apply, and they overlap there: narrow a scope so that one applies, "
                             "or record one outcome", value=vr.variant.name, where=where, a=a,
                             claim_a=claim_a, b=b, claim_b=claim_b)))
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
                 for run, _ in vr.runs if run.status in ("ok", "raised")}
        if "no-config" in kinds:
            lacking.append(shown.torch_version)
        elif kinds:
            having.append(shown.torch_version)
    return Releases(tuple(lacking), tuple(having))


def _defaults(results: Sequence[DemoResult]) -> frozenset[str]:
    """The defaults of the config that the ``default`` rows of ``results`` ran under: what
    the torches the page was checked with had (the kept result sets know)."""
    return frozenset(d for r in results for vr in r.variants if vr.variant.name == DEFAULT
                     and (d := vr.config_default))


def _check_one(result: DemoResult, named: bool, releases: Releases,
               had: frozenset[str]) -> DemoResult:
    """``had``: the defaults other torches the page was checked with had (:func:`_defaults`)."""
    demo, environment = result.demo, result.environment
    label = environment.label if environment is not None else ""
    findings: list[Finding] = []
    # The same NameError under every value is one problem: say it once, naming the values.
    errors: dict[tuple[Location, str], tuple[Finding, list[str]]] = {}
    missing: list[tuple[str, str]] = []
    for vr in result.variants:
        if vr.compiled.status == "skipped" and (no_cuda(vr.compiled) or vr.compiled.not_run == "missing"):
            continue  # cuda_unavailable = "skip", or no result in a set: said once, elsewhere
        name = vr.variant.name
        expected = demo.expected(name, environment)
        error = run_error(result, vr)
        expected_raise = expected is not None and expected.outcome == "raises"
        recorded_gap = (error is not None and error.subtype == "no-config" and expected is not None
                        and expected.outcome == "no-config")
        if error is not None and not recorded_gap and (error.subtype != "snippet-error"
                                                       or not expected_raise):
            if error.subtype == "no-config":
                error = replace(error, message=_no_config(result, error.message, releases))
            errors.setdefault((error.location, error.message), (error, []))[1].append(name)
            continue
        if expected is None and vr.verdict.outcome != "ran":  # (compared with nothing: no outcome)
            missing.append((name, vr.verdict.text))
            continue
        if expected is not None and not expected.holds(vr):
            findings.append(_mismatch(result, vr, expected, label, had))
        findings.extend(replace(f, environment=label) for f in _output_finding(result, vr))
        findings.extend(replace(f, environment=label) for f in _compile_finding(result, vr))
    for error, variant_names in errors.values():
        every = len(variant_names) == len(result.variants) and len(variant_names) > 1
        which = msg("every value") if every else n_msg(
            "value {values}", "values {values}", len(variant_names), values=", ".join(variant_names))
        if named:
            which = msg("{values} in {environment}", values=which, environment=label)
        message = error.message
        if error.subtype == "snippet-error":
            raised = f"raises {_raised(result, variant_names[0])}"
            record = syntax.expect_text([("*", raised)] if every else
                                        [(n, raised) for n in variant_names])
            message = msg("{error}\nFix the code, or record the error with  :expect: {record}",
                           error=message, record=record)
        findings.append(replace(error, variants=tuple(variant_names), environment=label,
                                message=msg("{values}: {message}", values=which,
                                             message=message)))
    if missing:
        suggestion = syntax.expect_text([*demo.expect, *missing])
        findings.append(Finding(
            severity="missing", subtype="missing-expectation", location=demo.location,
            message=msg("no recorded expectation for {values}; add to the directive:\n"
                         "   :expect: {suggestion}",
                         values=", ".join(n for n, _ in missing), suggestion=suggestion),
        ))
    return replace(result, findings=tuple(findings))


def _mismatch(result: DemoResult, vr: VariantResult, expected: Claim, label: str,
              had: frozenset[str]) -> Finding:
    """A record that no longer holds: said as a change of torch's default where that is why
    the ``default`` row broke and a torch the page was checked with (``had``) had another
    default (once, in place of the row's mismatch); else a wrong record, with the tolerance to
    allow where compiled differs from eager by rounding only and the page records a match."""
    demo, name = result.demo, vr.variant.name
    torch = _torch(result)
    change = hints.default_change(result, vr, had)
    if change is not None:
        return Finding(
            severity="mismatch", subtype="default-changed", variants=(name,),
            location=demo.at(demo.expect_line), environment=label, default=change,
            message=msg("value {value}: {torch}'s default of {config} is now {now}, the page "
                         "records {recorded}. If the page is about the default, record what it "
                         "does now ({value}: {verdict}); if it is about {about}, name that value "
                         "instead of {value}", value=name, torch=torch, config=change.config,
                         now=change.now, recorded=_recorded(change, expected, result),
                         verdict=vr.verdict.text,
                         about=change.recorded[0] if change.recorded
                         else msg("the default torch had")))
    hint = hints.tolerance_hint(demo, [vr.verdict]) if expected.outcome == "matches" else None
    message = msg("value {value}: the page records '{expected}' but with {torch} compiled "
                   "{outcome}", value=name, expected=str(expected), torch=torch, outcome=_describe(vr))
    if hint:
        message = msg("{message}; if that is rounding, not the value's doing, allow it: {hint}",
                       message=message, hint=hint)
    return Finding(
        severity="mismatch", subtype="mismatch", variants=(name,),
        location=demo.at(demo.expect_line), environment=label, message=message)


def _recorded(change: DefaultChange, expected: Claim, result: DemoResult) -> str:
    """What the page takes the default to be, the records that say so, and what the
    ``default`` row did instead."""
    default = next(v for v in result.variants if v.variant.name == DEFAULT)
    if change.recorded:
        alike = [v.variant.name for v in result.variants if v is not default
                 and (v.variant.source or v.variant.name) in change.recorded]
        return n_msg("{values} (its {default} row records '{expected}', as its {rows} row "
                      "does); the {default} row now {outcome}",
                      "{values} (its {default} row records '{expected}', as its {rows} rows "
                      "do); the {default} row now {outcome}", len(alike),
                      values=" or ".join(change.recorded), default=DEFAULT, expected=str(expected),
                      rows=" and ".join(alike), outcome=_describe(default))
    unlike = result.demo.expected(change.unlike, result.environment)
    return msg("a default other than {now} (its {default} row records '{expected}', its "
                "{unlike} row '{unlike_record}'); the {default} row now does what the {unlike} "
                "row does: {outcome}", now=change.now, default=DEFAULT, expected=str(expected),
                unlike=change.unlike, unlike_record=str(unlike), outcome=_describe(default))


def _no_config(result: DemoResult, reason: str, releases: Releases) -> str:
    """The ``no-config`` error's text: what to set, or the record that covers every release
    without the config (the releases that lack it, not this build's torch alone)."""
    demo = result.demo
    lacking = (result.torch_version, *(v for v in releases.lacking if v != result.torch_version))
    scope, why = hints.missing_scope(demo.config, lacking, releases.having)
    return msg("torch {torch} has no config {config} ({reason}): set :config: (or "
                "autocast_demo_config) to one it has, or, where only some releases have it, "
                "record that in :expect: (*[{scope}]: no-config; {why})",
                torch=result.torch_version, config=demo.config, reason=reason, scope=scope, why=why)


def _torch(result: DemoResult) -> str:
    """The torch a mismatch was seen with, and for a result set's where and how it was made
    (``torch 2.1.0 (result set, made ...)``): one message, so that a translation words the
    aside its own way and says ``made`` in its language too."""
    if result.source == "build" or result.environment is None:
        return f"torch {result.torch_version}"  # a name and a version: the same in any language
    return msg("torch {torch} ({environment}, {made})", torch=result.torch_version,
                environment=result.environment.label, made=result.made)


def _raised(result: DemoResult, name: str) -> str:
    vr = next(v for v in result.variants if v.variant.name == name)
    return vr.compiled.error.type if vr.compiled.error else "Exception"


def _describe(vr: VariantResult) -> str:
    verdict = vr.verdict
    if verdict.outcome == "matches":
        return msg("matches eager")
    if verdict.outcome == "differs":
        return (msg("differs from eager: {note}", note=verdict.note) if verdict.note
                else msg("differs from eager"))
    if verdict.outcome == "no-config":
        return msg("cannot run: {note}", note=verdict.note)
    if verdict.outcome == "raises":
        if verdict.eager_exception:
            return msg("raises {exception}: {note} (eager raises {eager} too)",
                        exception=verdict.exception, note=verdict.note,
                        eager=verdict.eager_exception)
        return msg("raises {exception}: {note}", exception=verdict.exception, note=verdict.note)
    return msg("could not run: {note}", note=verdict.note)


def _unrecorded_output(result: DemoResult) -> Finding | None:
    """A ``:show: outputs`` demo, whose point is what it prints, that records none of it: no
    printed line is checked. The option to add, with what it printed."""
    blocks = first_output_record(result)
    if blocks is None:
        return None
    option = "\n".join(f"      [{name}]\n" + "\n".join(f"      {line}" for line in text.splitlines())
                       for name, text in blocks)
    return Finding(
        severity="missing", subtype="missing-expectation", location=result.demo.location,
        message=msg("this demo shows only what it printed (:show: outputs), but no :expect-output: "
                     "records it, so no printed line is checked; add to the directive (or build "
                     "with AUTOCAST_DEMO_ACCEPT=1):\n   :expect-output:\n{option}", option=option))


def _unrecorded_compile(result: DemoResult) -> Finding | None:
    """A demo that compares nothing with eager (``:compare: none``) and records neither what
    compiling did nor what it printed: nothing of it is checked. The record to add, with what
    compiling did."""
    demo = result.demo
    if demo.compare != "none" or demo.expect_compile or demo.expect_output:
        return None
    first = first_compile_record(result)
    record = syntax.expect_compile_text(first) if first else "*: graphs N, breaks N, recompiles N"
    return Finding(
        severity="missing", subtype="missing-expectation", location=demo.location,
        message=msg("this demo compares nothing with eager (:compare: none), and records neither "
                     "what compiling did nor what it printed, so nothing of it is checked; add to "
                     "the directive (or build with AUTOCAST_DEMO_ACCEPT=1):\n"
                     "   :expect-compile: {record}", record=record))


def first_compile_record(result: DemoResult) -> list[tuple[str, CompileClaim]] | None:
    """For a demo that compares nothing and records nothing (:func:`_unrecorded_compile`): the
    ``:expect-compile:`` records of what compiling did, one ``*`` record where every value that
    ran did the same; None for any other demo, or where no value ran."""
    demo = result.demo
    if demo.compare != "none" or demo.expect_compile or demo.expect_output:
        return None
    everything = CompileClaim(graphs=0, breaks=0, recompiles=0, break_reasons=(),
                              recompile_guards=(), skipped=0, skip_reasons=())
    seen = {}
    for vr in result.variants:
        if vr.compiled.status == "ok" and vr.compiled.compile is not None:
            now = everything.observed(vr.compiled.compile)
            # (a reason a record cannot hold, or none at all, is left out: the counts stay)
            # (skipped only where dynamo skipped a frame: most demos never meet one)
            seen[vr.variant.name] = replace(
                now, break_reasons=_listable(now.break_reasons),
                recompile_guards=_listable(now.recompile_guards),
                skipped=now.skipped or None, skip_reasons=_listable(now.skip_reasons))
    if not seen:
        return None
    if len(set(seen.values())) == 1:
        return [("*", next(iter(seen.values())))]
    return list(seen.items())


def _listable(reasons: tuple[str, ...] | None) -> tuple[str, ...] | None:
    return reasons if reasons and all(syntax.reason_text_fits(r) for r in reasons) else None


def _compile_finding(result: DemoResult, vr: VariantResult) -> list[Finding]:
    """A count ``:expect-compile:`` records that the compiled run did not have, with what
    compiling did instead (its breaks and recompilations, at the page's lines)."""
    claim = result.demo.expected_compile(vr.variant.name, result.environment)
    facts = vr.compiled.compile
    if claim is None or vr.compiled.status != "ok":
        return []
    if facts is None:
        return [Finding(
            severity="error", subtype="compile-facts", variants=(vr.variant.name,),
            location=result.demo.at(result.demo.expect_compile_line),
            message=msg("value {value}: what compiling did could not be read from this torch, so "
                         ":expect-compile: ({recorded}) is not checked", value=vr.variant.name,
                         recorded=str(claim)))]
    wrong = claim.wrong(facts)
    if not wrong:
        return []
    changed = ", ".join(f"{name} {was} -> {now}" for name, (was, now) in wrong.items())
    return [Finding(
        severity="mismatch", subtype="compile-facts", variants=(vr.variant.name,),
        location=result.demo.at(result.demo.expect_compile_line),
        message=msg("value {value}: compiling did not do what :expect-compile: records ({changed}) "
                     "with {torch}: {what}. Fix the code or record {now}", value=vr.variant.name,
                     changed=changed, torch=_torch(result), what=compile_text(result, facts),
                     now=str(claim.observed(facts))))]


def _output_finding(result: DemoResult, vr: VariantResult) -> list[Finding]:
    expected = result.demo.expected_output(vr.variant.name, result.environment)
    if expected is None:
        return []
    if output_holds(expected, vr.compiled.output):
        return []
    actual = as_recorded(vr.compiled.output, keeps_logs(normalize_output(expected)))
    return [Finding(
        severity="mismatch", subtype="output", variants=(vr.variant.name,),
        location=result.demo.at(result.demo.expect_output_line),
        message=msg("value {value}: the printed output is not what the page records in "
                     ":expect-output: (addresses, timings and warning locations aside); fix the "
                     "code or update the record\n  recorded: {recorded}\n  printed:  {printed}",
                     value=vr.variant.name, recorded=repr(normalize_output(expected)),
                     printed=repr(actual)),
    )]
