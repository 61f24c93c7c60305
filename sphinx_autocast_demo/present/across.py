"""One demo across environments: this build's results beside those of the result sets.

A column per environment (a torch release, a GPU runner), a row per value; the last column
says whether the page's record holds in each. The footer names where each column's results
come from: this build, or a result set with the torch, Python, device and date that made it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from docutils import nodes

from ..core.i18n import _, n_, on_page
from .cells import (
    LOOKS,
    and_list,
    broken_text,
    headers,
    heading,
    labelled,
    marked,
    outcome_across,
    outcome_as_recorded,
    plain,
    records_hold,
    short_config,
    table,
    verdict_kind,
    verdict_text,
)
from .set_lines import settable, value_cell

if TYPE_CHECKING:
    from collections.abc import Hashable, Mapping

    from ..core.model import Environment
    from ..judge.judgement import Across, Column, Judgement, Value


def environments_table(judged: Judgement, html: bool = False,
                       listed: Mapping[str, str] | None = None) -> nodes.table:
    """Rows of values, a column per environment, then whether the record holds in each, where
    one does not (``:show: record``: each environment's cell says both, without a verdict's
    colour). Where every environment says the same of every value, one column says it, headed
    by all of them. ``listed``: the lines to copy the page lists once (value_cell)."""
    result = judged.result
    record_only = result.demo.show == "record"
    texts = [[outcome_as_recorded(column.values[index], column.torch) if record_only
             else verdict_text(column.values[index], column.torch) for column in judged.columns]
            for index in range(len(result.variants))]
    names = [heading(column) for column in judged.columns]
    # Grouped by verdict, not by the cells' text: another CPU rounds a difference within the
    # tolerance otherwise, and that is no difference between the releases.
    if len(names) > 1 and all(len({_kind(column.values[index], cell) for column, cell
                                   in zip(judged.columns, row, strict=True)}) == 1
                              for index, row in enumerate(texts)):
        rest = [name.removeprefix("torch ") if names[0].startswith("torch ") else name
                for name in names[1:]]
        names = [_("same in {environments}").format(environments=" \u00b7 ".join([names[0], *rest]))]
        texts = [[_merged([column.values[index] for column in judged.columns], row)]
                for index, row in enumerate(texts)]
    recorded_column = not record_only and not records_hold(judged)
    heads = [short_config(result), *names]
    heads += [headers()["recorded"]] if recorded_column else []
    rows = []
    for index, vr in enumerate(result.variants):
        row = [value_cell(result, vr, listed, settable(judged, vr.variant.name))]
        row += [env_cell(name if html else "", text, classes)
                for name, (text, classes) in zip(names, texts[index], strict=True)]
        if recorded_column:
            row.append(labelled("recorded", *recorded(judged.across[index])))
        rows.append(row)
    return table(heads, rows)


def _kind(value: Value, cell: tuple[str, list[str]]) -> Hashable:
    """What decides whether ``value``'s cell shares a column: a checked verdict's kind (its
    outcome, exception, which tensors differ), else the cell as it reads."""
    text, classes = cell
    if value.checked and classes == [LOOKS[value.result.verdict.outcome].css]:
        return verdict_kind(value.result.verdict)
    return text, tuple(classes)


def _merged(values: list[Value], row: list[tuple[str, list[str]]]) -> tuple[str, list[str]]:
    """The one cell of environments that share a column: as each says it, or, where only their
    numbers differ, the range of those."""
    if len({text for text, _ in row}) == 1:
        return row[0]
    outcome = values[0].result.verdict.outcome
    return marked(outcome, outcome_across([v.result for v in values]))[0], row[0][1]


def env_cell(label: str, text: str, classes: list[str]) -> nodes.entry:
    """A cell of one environment's column; on a phone, where the header is hidden, it names
    the environment itself (the stylesheet shows that name only there)."""
    entry = nodes.entry(classes=[*classes, "autocast-demo-col-env"])
    name = ([nodes.inline(text=_("{environment}: ").format(environment=label),
                          classes=["autocast-demo-env-label"])] if label else [])
    entry += nodes.paragraph("", "", *name, nodes.Text(text))
    return entry


def recorded(across: Across) -> tuple[str, list[str]]:
    """Whether the page's record of the value holds in every environment that checked it."""
    if across.record == "unrecorded":
        return marked("unrecorded", _("not recorded"))
    records = {column.key: (column, expected) for column, expected in across.recorded}
    texts = {expected for _column, expected in records.values()}
    what = next(iter(texts)) if len(texts) == 1 else "; ".join(
        _("{environment}: {expected}").format(environment=column.key,
                                              expected=expected or _("not recorded"))
        for column, expected in records.values())
    unchecked = [heading(column) for column in across.unchecked_in]
    if across.record == "broken":
        where = ", ".join(heading(column) for column in across.broken_in)
        kinds = frozenset().union(*(c.value(across.name).broken for c in across.broken_in))
        return marked("broken", _later(broken_text(kinds, what, where), unchecked))
    if across.record == "unchecked":
        return plain("unchecked", _("records {expected} (not checked)").format(expected=what))
    held = len(records) - len(unchecked)
    if held > 1 and not unchecked:
        text = n_("yes, in all {n} ({expected})", "yes, in all {n} ({expected})", held).format(
            n=held, expected=what)
    else:
        text = _("yes ({expected})").format(expected=what)
    return marked("holds", _later(text, unchecked))


def _later(text: str, unchecked: list[str]) -> str:
    """``text``, and the environments that did not check the value, if any."""
    if not unchecked:
        return text
    return _("{said}; not checked in {environments}").format(said=text, environments=", ".join(unchecked))


def provenance_lines(judged: Judgement) -> list[tuple[str, str]]:
    """Where the other environments' results come from, in a reader's words, with the labels
    they speak for, in the columns' order: one sentence for the environments that were run
    alike (same day, Python and device, nothing missing), one each for the rest."""
    lines: list[tuple[str, str] | list[Column]] = []
    alike: dict[tuple[str, str, str], list[Column]] = {}
    for column in judged.columns[1:]:
        environment = column.environment
        if environment is None:
            continue
        gaps = [v.name for v in column.values if not v.checked]
        if column.empty:
            lines.append((environment.label, _("{environment}: no result kept with these docs").format(
                environment=environment.label)))
        elif gaps:
            lines.append((environment.label, _("{kept}; no result for {values}").format(
                kept=_kept([column]), values=", ".join(gaps))))
        else:
            group = (column.result.when, environment.python, environment.device)
            if group not in alike:
                alike[group] = []
                lines.append(alike[group])  # said where its first column is
            alike[group].append(column)
    return [line if isinstance(line, tuple) else (" + ".join(_label(c) for c in line), _kept(line))
            for line in lines]


def _label(column: Column) -> str:
    return column.environment.label if column.environment is not None else column.key


def run_where(when: str, environment: Environment) -> str:
    """``run on 2026-12-02 with Python 3.11.7 on cpu and kept with these docs``."""
    if not when:
        return _("run earlier with Python {python} on {device} and kept with these docs").format(
            python=environment.python, device=environment.device)
    return _("run {when} with Python {python} on {device} and kept with these docs").format(
        when=on_page(when), python=environment.python, device=environment.device)


def _kept(columns: list[Column]) -> str:
    """``torch 2.14.1 and torch 2.15.0: run on 2026-12-02 with Python 3.11.7 on cpu ...``:
    the columns share their day, Python and device."""
    first, labels = columns[0], [_label(c) for c in columns]
    assert first.environment is not None
    where = run_where(first.result.when, first.environment)
    if len(labels) > 1:
        return _("{environments}: {where}; this build did not run them").format(
            environments=and_list(labels), where=where)
    return _("{environment}: {where}; this build did not run it").format(environment=labels[0], where=where)
