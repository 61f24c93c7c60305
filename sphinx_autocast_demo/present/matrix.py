"""The ``autocast-demo-summary`` matrix: every demo of the docs by every value, in one table,
made where a page holding a :class:`~.summary.summary_placeholder` is written."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from docutils import nodes
from sphinx.util.i18n import format_date

from ..core.i18n import _, n_, on_page
from ..core.state import all_docs
from . import tables
from .cells import (
    LOOKS,
    and_list,
    cell,
    heading,
    legend_text,
    marked,
    marks_in,
    outcome_word,
    table,
    words,
)
from .summary import summary_placeholder
from .why import why_words

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

    from ..core.model import DemoResult
    from ..judge.judgement import Judgement, Value


def resolve(app: Sphinx, doctree: nodes.document, docname: str, shown: bool, torch: str) -> None:
    """Fill each placeholder with the matrix as it stands now.

    Empty for a builder that runs no demo (gettext, linkcheck...), as the demos' own tables.
    """
    for node in list(doctree.findall(summary_placeholder)):
        if shown:
            node.replace_self(matrix(app, docname, torch))
        else:
            node.parent.remove(node)


def _reading_order(env: BuildEnvironment) -> list[str]:
    """Documents in the order a reader meets them in the toctree, then any others."""
    order: list[str] = []
    stack = [env.config.root_doc]
    while stack:
        doc = stack.pop()
        if doc in order:
            continue
        order.append(doc)
        stack.extend(reversed(env.toctree_includes.get(doc, [])))
    return order + sorted(set(all_docs(env)) - set(order))


def _verdict(value: Value | None, torch: str = "") -> tuple[str, list[str]]:
    if value is None:
        return "", ["autocast-demo-absent"]
    verdict, why = value.result.verdict, value.why
    text = outcome_word(verdict)
    if why is not None:  # never the mark of a checked result
        short = why_words(value, why, torch).short
        why_text = _("{why}: {verdict}").format(why=short, verdict=text) if why.other_torch else short
        return marked("error", why_text, LOOKS["unchecked"].css)
    if value.result.compiled.config_set:  # not a verdict of the value the column names
        # (which value: the demo's table says; a long literal here would widen the matrix)
        text = _("{verdict} under the snippet's own value").format(verdict=text)
        return marked(verdict.outcome, text, "autocast-demo-config-set")
    return marked(verdict.outcome, text)


def across(judged: Judgement, value: str) -> tuple[str, list[str]]:
    """One value's verdict in every environment: once when they agree (no names), else each run of
    environments that agree (in their order: the first is this build's), so that a change
    between releases reads at a glance: ``✗ differs in torch 2.13.0, torch 2.14.1; ✓ matches
    in torch 2.15.0``."""
    groups: list[tuple[str, list[str], list[str]]] = []  # text, classes, environments
    for column in judged.columns:
        text, classes = _verdict(column.value(value), column.torch)
        if groups and groups[-1][0] == text:
            groups[-1][2].append(heading(column))
        else:
            groups.append((text, classes, [heading(column)]))
    if len(groups) == 1:  # the lead says it: a cell names environments only where they differ
        return groups[0][0], groups[0][1]
    changed = judged.value_across(value).changed
    classes = groups[0][1] + (["autocast-demo-changed"] if changed else [])
    return "; ".join(_("{verdict} in {environments}").format(verdict=text, environments=", ".join(envs))
                     for text, _classes, envs in groups), classes


#: The matrix's own columns, around those of the values, in English (the docs quote them:
#: cells.HEADERS); the page says them in its language (:func:`headers`).
HEADERS = ("demo", "other values", "page records")


def headers() -> tuple[str, str, str]:
    """:data:`HEADERS` in the page's language."""
    return _("demo"), _("other values"), _("page records")


def _record(page: str, held: int) -> tuple[str, list[str]]:
    """The matrix's last cell: do the demo's records hold (in all ``held`` environments)?"""
    if page == "holds" and held > 1:
        return marked("holds", n_("holds in all {n}", "holds in all {n}", held).format(n=held))
    return {
        "broken": lambda: marked("broken", _("no longer true")),
        "unchecked": lambda: marked("unchecked", _("not checked")),
        "partly-unchecked": lambda: marked("unchecked", _("not all checked")),
        "unrecorded": lambda: marked("unrecorded", _("not recorded")),
        "holds": lambda: marked("holds", _("holds")),
    }[page]()


def matrix(app: Sphinx, fromdocname: str, torch: str) -> list[nodes.Node]:
    from ..judge.judgement import judge  # (here: every build registers the directive)

    env = app.env
    docs = all_docs(env)
    rows: list[tuple[str, str, DemoResult | None]] = []  # (docname, ident, result)
    for docname in _reading_order(env):
        state = docs.get(docname)
        if state is not None:
            rows.extend((docname, ident, state.results.get(ident)) for ident in state.demos)
    values, others = columns([[v.name for v in docs[d].demos[i].variants] for d, i, _ in rows])
    judged = [(d, i, judge(r, torch) if r is not None else None) for d, i, r in rows]
    checked = [v for _, _, j in judged if j is not None for v in j.here.values if v.checked]
    unchecked = sum(len(docs[d].demos[i].variants) if j is None
                    else sum(not v.checked for v in j.here.values) for d, i, j in judged)
    outcomes: Counter[str] = Counter(v.result.verdict.outcome for v in checked)
    # Rows whose snippet set the config itself ran under its value too: no verdict of theirs.
    replaced = sum(bool(v.result.compiled.config_set) for v in checked)
    # SOURCE_DATE_EPOCH, when set, is the date (a reproducible build's), as for Sphinx's own.
    day = format_date("%Y-%m-%d", language=app.config.language)
    per_outcome = (("matches", _("compiled equals eager in {n}")), ("differs", _("differs in {n}")),
                   ("raises", _("raises in {n}")), ("no-config", _("no such config in {n}")),
                   ("ran", _("compared with nothing in {n}")))
    split = ", ".join(text.format(n=outcomes[outcome]) for outcome, text in per_outcome
                      if outcomes[outcome] or outcome == "matches")
    pages = len({d for d, _ident, _result in rows})
    lead = nodes.paragraph(
        text=" ".join([
            n_("{n} demo on {pages}.", "{n} demos on {pages}.", len(rows)).format(
                n=len(rows), pages=n_("{n} page", "{n} pages", pages).format(n=pages)),
            _("This build ({day}, torch {torch}) checked {pairs}{split}{replaced}{unchecked}").format(
                day=day, torch=torch,
                pairs=n_("{n} (demo, value) pair", "{n} (demo, value) pairs", len(checked)).format(
                    n=len(checked)),
                split=_(": {split} of them").format(split=split) if checked else "",
                replaced=n_(" ({n} under a value their snippet set itself, no verdict of the value "
                            "their column names)",
                            " ({n} under a value their snippet set itself, no verdict of the value "
                            "their column names)", replaced).format(n=replaced) if replaced else "",
                unchecked=_("; {n} not checked.").format(n=unchecked) if unchecked else _(".")),
        ]),
        classes=["autocast-demo-provenance"],
    )
    box = nodes.container(classes=["autocast-demo", "autocast-demo-summary"])
    box += lead
    box += environments(judged)
    if not rows:
        box += nodes.paragraph(text=_("The documentation has no demos yet."))
        return [box]

    demo, other, records = headers()
    legend = nodes.paragraph(classes=["autocast-demo-legend"])  # (filled once the rows are made)
    box += legend
    heads = [demo, *values, *([other] if others else []), records]
    wide = {demo: 28, other: 24, records: 16}
    lines: list[list[nodes.entry] | nodes.row] = []
    page = None
    for docname, ident, result in judged:
        if docname != page:  # one heading row per page keeps the table narrow
            page = docname
            heading = nodes.row(classes=["autocast-demo-matrix-page"])
            title = env.titles[docname].astext() if docname in env.titles else docname
            uri = app.builder.get_relative_uri(fromdocname, docname)
            link = nodes.reference("", "", nodes.Text(title), refuri=uri, internal=True)
            entry = cell(nodes.paragraph("", "", nodes.strong("", "", link)))
            entry["morecols"] = len(heads) - 1
            heading += entry
            lines.append(heading)
        lines.append(_demo_row(app, fromdocname, docname, ident, result, values, others))
    widths = [wide.get(text, max(10, len(text))) for text in heads]
    made = table(heads, lines, widths, classes=("autocast-demo-matrix",))
    # What the cells show, as each mark means on every page: this legend is true of each.
    text = [_("Each row is a demo, each column a value of the config it varies."),
            *([legend_text(marks)] if (marks := marks_in(made)) else []),
            _("{records}: whether every outcome the demo's page records still holds, in every "
              "environment that checked it.").format(records=records)]
    if others:
        text.append(_("Values that few demos use are listed together under {other}.").format(
            other=other))
    legend += nodes.Text(" ".join(text))
    box += tables.results(made, _("Every demo, value by value, in each environment"))
    return [box]


def environments(rows: list[tuple[str, str, Judgement | None]]) -> list[nodes.Node]:
    """Where the matrix's results come from, when not only from this build: each environment,
    who made its results, and how many values changed between environments."""
    # (environment, source) -> its heading, who made its results: this build's runs and its own
    # result set are two lines of one environment.
    environments: dict[tuple[str, str], tuple[str, str]] = {}
    changed = 0
    for _docname, _ident, judged in rows:
        if judged is None or not (judged.several or judged.here.source != "build"):
            continue
        for column in judged.columns:
            environment = column.environment
            if environment is None or (column.key, column.source) in environments:
                continue
            # (Each call a statement of its own: Babel reads none inside another's argument.)
            if column.source == "set":
                how = _("torch {torch}, Python {python}, {device}, {made}")
                how = how.format(torch=environment.torch, python=environment.python,
                                 device=environment.device, made=on_page(column.result.made))
            elif column.source == "missing":
                how = _("no result in the result sets")
            else:
                how = _("run by this build with torch {torch}").format(torch=judged.torch)
            environments[column.key, column.source] = (heading(column), how)
        changed += sum("autocast-demo-changed" in across(judged, vr.variant.name)[1]
                       for vr in judged.result.variants)
    if not environments:
        return []
    items = nodes.bullet_list(classes=["autocast-demo-environments"])
    item = _("{environment}: {how}")
    for label, how in environments.values():
        items += nodes.list_item("", nodes.paragraph("", "", *words(
            item, environment=nodes.strong(text=label), how=nodes.Text(how))))
    from_them = n_("Results from {n} environment; a cell names them only where they differ.",
                   "Results from {n} environments; a cell names them only where they differ.",
                   len(environments))
    lead = nodes.paragraph(text=from_them.format(n=len(environments)), classes=["autocast-demo-provenance"])
    # What a reader of the matrix asks first, so in plain text, not in the small print.
    # One name per environment (this build's runs and its own set's are one environment).
    first: dict[str, str] = {}
    for (key, _source), (label, _how) in environments.items():
        first.setdefault(key, label)
    between = and_list(list(first.values()))
    change = nodes.paragraph("", "", nodes.strong(text=(
        n_("{n} verdict changed between {environments}: the cells that name an environment.",
           "{n} verdicts changed between {environments}: the cells that name an environment.",
           changed).format(n=changed, environments=between) if changed
        else _("No verdict changed between {environments}.").format(environments=between))),
        classes=["autocast-demo-changes"])
    return [change, lead, items]


#: At most this many values get a column of their own; the rest share "other values".
COLUMNS = 4


def columns(used: list[list[str]]) -> tuple[list[str], bool]:
    """The values that get a column: all of them when there are few, else those most demos use
    (at least two), at most COLUMNS, in the order they first appear; and whether any value is
    left for "other values"."""
    counts: dict[str, int] = {}
    for names in used:
        for name in names:
            counts[name] = counts.get(name, 0) + 1
    if len(counts) <= COLUMNS:
        return list(counts), False
    common = sorted((n for n, c in counts.items() if c >= 2), key=lambda n: -counts[n])[:COLUMNS]
    own = [n for n in counts if n in common]  # counts keeps the order of first appearance
    return own, len(own) < len(counts)


def _demo_row(app: Sphinx, fromdocname: str, docname: str, ident: str,
              judged: Judgement | None, values: list[str], others: bool) -> nodes.row:
    row = nodes.row(ids=[f"summary-{docname.replace('/', '-')}-{ident}"])
    title = all_docs(app.env)[docname].titles.get(ident, ident)
    uri = app.builder.get_relative_uri(fromdocname, docname) + "#" + ident
    link = nodes.reference("", "", nodes.Text(title), refuri=uri, internal=True)
    row += cell(nodes.paragraph("", "", link), ["autocast-demo-label"])
    by_name = {v.name: v for v in judged.here.values} if judged else {}
    names = [v.name for v in all_docs(app.env)[docname].demos[ident].variants]
    for value in values:
        if judged is None and value in names:
            row += cell(*marked("error", _("not run"), LOOKS["unchecked"].css))
        elif judged is not None and judged.several and value in names:
            row += cell(*across(judged, value))
        else:
            row += cell(*_verdict(by_name.get(value), judged.torch if judged else ""))
    if others:
        row += _others(judged, [n for n in names if n not in values])
    if judged is None:
        row += cell(*marked("unchecked", _("not checked")))
    else:
        row += cell(*_record(judged.page, sum(not column.empty for column in judged.columns)))
    return row


def _others(judged: Judgement | None, names: list[str]) -> nodes.entry:
    """The demo's rarer values in one cell, each with its own mark and colour (``judged``:
    None when it has not run)."""
    entry = nodes.entry(classes=["autocast-demo-others"])
    for name in names:
        if judged is None:
            text, classes = marked("unchecked", _("not run"))
        elif judged.several:
            text, classes = across(judged, name)
        else:
            text, classes = _verdict(judged.here.value(name), judged.torch)
        wraps = [c for c in classes if c == "autocast-demo-config-set"]  # (said at length)
        entry += nodes.paragraph("", "", *words(_("{value}: {verdict}"), value=nodes.strong(text=name),
                                                verdict=nodes.inline(text=text, classes=classes)),
                                 classes=wraps)
    return entry
