"""One demo across environments: this build's results beside those of the result sets.

A column per environment (a torch release, a GPU runner), a row per value; the last column
says whether the page's record holds in each. The footer names where each column's results
come from: this build, or a result set with the torch, Python, device and date that made it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from docutils import nodes

from .render import (
    MARK,
    broken,
    labelled,
    outcome_as_recorded,
    short_config,
    table,
    value_cell,
    verdict_text,
)
from .report import not_checked

if TYPE_CHECKING:
    from .check import NotChecked
    from .model import DemoResult, VariantResult


def columns(result: DemoResult, torch: str) -> list[tuple[DemoResult, dict[str, NotChecked]]]:
    """Each environment's results of the demo, this build's first, with what was not checked
    there (a result set's results against the torch that made them)."""
    return [(shown, not_checked(shown, shown.torch_version if shown.made else torch))
            for shown in (result, *result.others)]


def heading(shown: DemoResult) -> str:
    label = shown.environment.label if shown.environment else f"torch {shown.torch_version}"
    return label if shown.made or not shown.environment or not shown.environment.torch else (
        f"{label} (this build)")


def environments_table(result: DemoResult, torch: str, html: bool = False) -> nodes.table:
    """Rows of values, a column per environment, then whether the record holds in each
    (``:show: record``: each environment's cell says both, without a verdict's colour)."""
    envs = columns(result, torch)
    record_only = result.demo.show == "record"
    headers = [short_config(result), *(heading(shown) for shown, _ in envs)]
    headers += [] if record_only else ["as recorded?"]
    rows = []
    for index, vr in enumerate(result.variants):
        row = [value_cell(result, vr)]
        for shown, missed in envs:
            other = shown.variants[index]
            why = missed.get(other.variant.name)
            if record_only:
                text, classes = outcome_as_recorded(shown, other, why, shown.torch_version)
            else:
                text, classes = verdict_text(other, why, shown.torch_version)
            row.append(env_cell(heading(shown) if html else "", text, classes))
        if not record_only:
            row.append(labelled("recorded", *recorded(result, vr, envs)))
        rows.append(row)
    return table(headers, rows)


def env_cell(label: str, text: str, classes: list[str]) -> nodes.entry:
    """A cell of one environment's column; on a phone, where the header is hidden, it names
    the environment itself (the stylesheet shows that name only there)."""
    entry = nodes.entry(classes=[*classes, "autocast-demo-col-env"])
    name = [nodes.inline(text=f"{label}: ", classes=["autocast-demo-env-label"])] if label else []
    entry += nodes.paragraph("", "", *name, nodes.Text(text))
    return entry


def recorded(result: DemoResult, vr: VariantResult,
             envs: list[tuple[DemoResult, dict[str, NotChecked]]]) -> tuple[str, list[str]]:
    """Whether the page's record of the value holds in every environment that checked it."""
    name = vr.variant.name
    records = {shown.environment.label if shown.environment else "":
               result.demo.expected(name, shown.environment) for shown, _ in envs}
    if not any(records.values()):
        return "not recorded", ["autocast-demo-unrecorded"]
    checked = [(shown, records[shown.environment.label if shown.environment else ""])
               for shown, missed in envs if name not in missed]
    stale = [shown for shown, expected in checked
             if expected and broken(shown, name, shown.environment)]
    unchecked = [heading(shown) for shown, missed in envs if name in missed]
    said = set(records.values())
    what = next(iter(said)) if len(said) == 1 else "; ".join(
        f"{label}: {expected or 'not recorded'}" for label, expected in records.items())
    later = f"; not checked in {', '.join(unchecked)}" if unchecked else ""
    if stale:
        where = ", ".join(heading(shown) for shown in stale)
        return f"{MARK['differs']} no, in {where}: records {what}{later}", ["autocast-demo-stale-cell"]
    if not checked:
        return f"records {what} (not checked)", ["autocast-demo-unchecked"]
    every = "" if unchecked else " everywhere"
    return f"{MARK['matches']} yes{every} ({what}){later}", ["autocast-demo-holds"]


def provenance_lines(result: DemoResult, torch: str) -> list[str]:
    """One sentence per other environment: who made its results, and what is missing."""
    lines = []
    for shown, missed in columns(result, torch)[1:]:
        environment = shown.environment
        if environment is None:
            continue
        if len(missed) == len(shown.variants) and all(
                vr.compiled.not_run == "missing" for vr in shown.variants):
            lines.append(f"{environment.label}: no result in the result sets")
            continue
        how = (f"{environment.label}: results of torch {environment.torch} (Python "
               f"{environment.python}, {environment.device}) from a result set {shown.made}; "
               "not run by this build")
        gaps = list(missed)
        if gaps:
            how += f"; no result for {', '.join(gaps)}"
        lines.append(how)
    return lines
