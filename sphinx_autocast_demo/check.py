"""What torch did (verdicts) against what the page records (expectations) -> findings."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING

from . import syntax
from .model import Finding

if TYPE_CHECKING:
    from .model import DemoResult, VariantResult

_NOISE = (
    (re.compile(r"0x[0-9a-fA-F]{4,}"), "0x?"),  # object addresses
    (re.compile(r"\b\d+(\.\d+)?(e-?\d+)?\s?(ns|us|µs|ms|s|sec|seconds)\b"), "<time>"),
    (re.compile(r"(?m)^\S+\.py:\d+: (\w+Warning): .*(\n[ \t]+.*)?$"), r"<\1>"),
    (re.compile(r"[ \t]+$", re.M), ""),
)


def normalize_output(text: str) -> str:
    """Drop what varies between runs and machines: addresses, timings, warning locations."""
    for pattern, replacement in _NOISE:
        text = pattern.sub(replacement, text)
    return text.strip()


def check(result: DemoResult) -> DemoResult:
    """Attach findings to ``result``: one per broken variant, errors deduplicated."""
    demo = result.demo
    findings: list[Finding] = []
    # The same NameError under every value is one problem: say it once, naming the values.
    errors: dict[tuple[str, str], tuple[Finding, list[str]]] = {}
    missing: list[tuple[str, str]] = []
    for vr in result.variants:
        name = vr.variant.name
        expected = demo.expected(name)
        error = _run_error(result, vr)
        expected_raise = expected is not None and expected.startswith("raises")
        if error is not None and (error.subtype != "snippet-error" or not expected_raise):
            errors.setdefault((error.location, error.message), (error, []))[1].append(name)
            continue
        if expected is None:
            missing.append((name, vr.verdict.text))
            continue
        names = vr.compiled.error.names if vr.compiled.error else ()
        if not syntax.outcome_holds(expected, vr.verdict.outcome, names):
            findings.append(Finding(
                severity="mismatch", subtype="mismatch", variant=name,
                location=f"{demo.code.source}:{demo.expect_line}",
                message=(f"value {name}: the page records '{expected}' but with torch "
                         f"{result.torch_version} compiled {_describe(vr)}"),
            ))
        findings.extend(_output_finding(result, vr))
    for error, variant_names in errors.values():
        every = len(variant_names) == len(result.variants) and len(variant_names) > 1
        label = "every value" if every else "value " + ", ".join(variant_names)
        message = error.message
        if error.subtype == "snippet-error":
            raised = f"raises {_raised(result, variant_names[0])}"
            record = syntax.expect_text([("*", raised)] if every else
                                        [(n, raised) for n in variant_names])
            message += f"\nFix the code, or record the error with  :expect: {record}"
        findings.append(replace(error, variant=", ".join(variant_names),
                                message=f"{label}: {message}"))
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


def _raised(result: DemoResult, name: str) -> str:
    vr = next(v for v in result.variants if v.variant.name == name)
    return vr.compiled.error.type if vr.compiled.error else "Exception"


def _describe(vr: VariantResult) -> str:
    verdict = vr.verdict
    if verdict.outcome == "matches":
        return "matches eager"
    if verdict.outcome == "differs":
        return f"differs from eager: {verdict.note}" if verdict.note else "differs from eager"
    if verdict.outcome == "raises":
        return f"raises {verdict.exception}: {verdict.note}"
    return f"could not run: {verdict.note}"


def _run_error(result: DemoResult, vr: VariantResult) -> Finding | None:
    """A run that did not finish normally: located at the failing statement when possible."""
    for run, label in ((vr.compiled, "compiled"), (vr.eager, "eager")):
        if run.status in ("skipped", "refused"):
            return Finding(
                severity="missing" if run.status == "skipped" else "error",
                subtype="not-run", variant=vr.variant.name, location=result.demo.location,
                message=run.detail,
            )
        if run.status == "timeout":
            return Finding(
                severity="error", subtype="timeout", variant=vr.variant.name,
                location=result.demo.location,
                message=(f"the {label} run was {run.detail}; fix the loop or raise the "
                         ":timeout: option (or autocast_demo_timeout)"),
            )
        if run.status == "crashed":
            return Finding(
                severity="error", subtype="crash", variant=vr.variant.name,
                location=result.demo.location,
                message=f"the {label} run died: {run.detail}" + _tail(run.output),
            )
    if vr.compiled.status == "raised" and vr.compiled.error is not None:
        error = vr.compiled.error
        source, line = result.where(error)
        return Finding(
            severity="error", subtype="snippet-error", variant=vr.variant.name,
            location=f"{source}:{line}",
            message=f"the snippet raised {error.type}: {error.message}\n{result.traceback(error)}",
        )
    return None


def _output_finding(result: DemoResult, vr: VariantResult) -> list[Finding]:
    expected = result.demo.expected_output(vr.variant.name)
    if expected is None:
        return []
    actual = normalize_output(vr.compiled.output)
    if normalize_output(expected) == actual:
        return []
    return [Finding(
        severity="mismatch", subtype="output", variant=vr.variant.name,
        location=result.demo.location,
        message=(f"value {vr.variant.name}: the printed output is not what the page records\n"
                 f"  recorded: {normalize_output(expected)!r}\n  printed:  {actual!r}"),
    )]


def _tail(output: str) -> str:
    lines = [line for line in output.strip().splitlines() if line.strip()][-3:]
    return ("\n  last output: " + "\n  ".join(lines)) if lines else ""
