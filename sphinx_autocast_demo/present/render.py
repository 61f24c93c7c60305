"""Results -> plain docutils nodes (a table, literal blocks, a note) that every builder writes.

This module puts a page's demos together: each one's table, what it printed (printed.py) and
its footer (footer.py), and what a page says once (the legend, the shared lines to copy).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from docutils import nodes

from ..core.i18n import _, on_page
from ..core.publish import publish
from ..judge.judgement import judge
from ..read.directives import results_placeholder
from . import tables
from .across import environments_table
from .cells import (
    grads_text,
    headers,
    labelled,
    legend_line,
    outcome_as_recorded,
    recorded_text,
    records_hold,
    short_config,
    table,
    verdict_text,
)
from .footer import Part, footer_line, page_parts, provenance_parts
from .printed import compiled, printed, use_tabs
from .set_lines import lines_to_copy, settable, shared_lines, value_cell

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from sphinx.application import Sphinx

    from ..core.state import DocState
    from ..judge.judgement import Judgement


def resolve(app: Sphinx, doctree: nodes.document, state: DocState | None, shown: bool,
            torch: str) -> None:
    """Replace each placeholder with its demo's results, as checked with ``torch``.

    A legend goes under the page's first table, with the lines that set each value that more
    than one table of the page shows (their cells link there; a value only one table shows
    keeps its lines in its row). What the footers of every demo of the page say alike (the
    torch, device, backend, how compiled is compared, that every record holds) is said once,
    under that first table; each demo's footer says only what is its own. A builder that runs
    no demo (``shown`` false: gettext, linkcheck...) gets no results at all: nothing was
    checked for it, and their text is no message to translate.
    """
    tabs = use_tabs(app)
    placeholders = list(doctree.findall(results_placeholder))
    results = [state.results.get(node["ident"]) if state else None for node in placeholders]
    judged = [judge(r, torch) if r is not None else None for r in results]
    # Only what is true of every demo: one that has not run says so itself, and is not part
    # of an "every demo on this page".
    shared: list[Part] = []
    page: nodes.paragraph | None = None
    if len(judged) > 1 and all(j is not None for j in judged):
        footers = [provenance_parts(j) for j in judged if j is not None]
        shared = page_parts(footers)
        keys = {part.key for part in shared}
        otherwise = any(p.key in keys and p not in shared for footer in footers for p in footer)
        page = footer_line(shared) if shared else None
        if page is not None:
            page.insert(0, nodes.strong(text=_("Every demo on this page, unless its own line says "
                                               "otherwise: ") if otherwise
                                        else _("Every demo on this page: ")))
    tabled = [j for j in judged if j is not None and j.result.demo.show != "outputs"]
    lines = shared_lines(tabled, placeholders[0]["ident"] if placeholders else "")
    listed = {line: anchor for line, (_names, anchor) in lines.items()}
    legend: tuple[nodes.Element, int, bool] | None = None  # where it goes, once the cells are made
    for node, result in zip(placeholders, judged, strict=True):
        if not shown:
            node.parent.remove(node)
        elif result is None:
            para = nodes.paragraph(text=_("This demo has not been run."),
                                   classes=["autocast-demo-provenance"])
            node.replace_self(para)
        else:
            if legend is None and result.result.demo.show != "outputs":
                # Under the first demo, not in it: it speaks for every table of the page.
                box = node.parent
                at = box.parent.index(box) + 1
                box.parent[at:at] = lines_to_copy(lines)
                legend = (box.parent, at, any(shows_recorded(j) for j in tabled))
            node.replace_self(result_nodes(result, app, tabs, shared_footer=shared, page=page,
                                           named=_caption(node), listed=listed))
            page = None  # (said once, under the first table)
    if legend is not None:  # of the marks the page's cells show, now that they are made
        parent, at, recorded = legend
        parent[at:at] = legend_line(doctree, recorded)


def result_nodes(judged: Judgement, app: Sphinx, tabs: bool = False, shared_footer: Sequence[Part] = (),
                 page: nodes.paragraph | None = None, named: str = "",
                 listed: Mapping[str, str] | None = None) -> list[nodes.Node]:
    """The demo's table (unless it shows only outputs), what it printed, its footer and, when
    the page's record no longer holds, a warning box. The footer leaves out what the page
    says for every demo (``shared_footer``); ``page``: the line that says it, to put here; ``named``:
    the demo as the table's caption names it (none: "this demo"); ``listed``: lines to copy
    that the page lists once (lines -> where), which the value cells link to instead of
    showing them."""
    result = judged.result
    out: list[nodes.Node] = []
    if result.demo.compare == "none":
        caption = (_("Results of {demo}: compiled, compared with nothing")
                   if result.demo.varies_nothing else
                   _("Results of {demo}: compiled, compared with nothing, value by value"))
    else:
        caption = (_("Results of {demo}: compiled against eager") if result.demo.varies_nothing
                   else _("Results of {demo}: compiled against eager, value by value"))
    caption = caption.format(demo=named or _("this demo"))
    if result.demo.show != "outputs" and judged.several:
        out.append(tables.results(environments_table(judged, html=app.builder.format == "html",
                                                     listed=listed), caption))
    elif result.demo.show != "outputs":
        out.append(tables.results(results_table(judged, listed), caption))
    out.extend(compiled(result))
    out.extend(printed(result, app, tabs))
    own = [part for part in provenance_parts(judged) if part not in shared_footer]
    if own:
        out.append(footer_line(own))
    if page is not None:
        out.append(page)
    if judged.failures:
        note = nodes.warning(classes=["autocast-demo-stale"])
        if judged.mismatch:
            where = judged.mismatch_in
            lead = (_("This page no longer describes what torch does: what it records differs "
                      "from what torch did in {environments}.").format(environments=", ".join(where))
                    if where else
                    _("This page no longer describes what torch does: what it records differs "
                      "from what torch {torch} did when the docs were built.").format(
                        torch=result.torch_version))
        else:
            lead = _("This demo did not run as the page expects:")
        note += nodes.paragraph(text=lead)
        items = nodes.bullet_list()
        for finding in judged.failures:
            # (kept as words to say: the console said them in its language, a page in its own)
            first = publish(on_page(finding.message), app).splitlines()[0]
            items += nodes.list_item("", nodes.paragraph(text=first))
        note += items
        out.append(note)
    return out


def _caption(placeholder: nodes.Element) -> str:
    """The demo's own ``:caption:``, as its box shows it (LaTeX's and Texinfo's: in the wrapper
    writers.CaptionedCode put it in), else none."""
    box = placeholder.parent
    while box is not None and not (isinstance(box, nodes.container) and "autocast-demo" in box["classes"]):
        box = box.parent
    named = box.next_node(nodes.caption) if box is not None else None
    return named.astext() if named is not None else ""


def results_table(judged: Judgement, listed: Mapping[str, str] | None = None) -> nodes.table:
    """One row per value: how to set it, whether compiled equals eager, whether the page's
    record holds (only where a value's does not: else the footer says that every one holds);
    gradient dtypes only where they differ between values (else the footer's)."""
    result, here = judged.result, judged.here
    record_only = result.demo.show == "record"
    recorded = shows_recorded(judged)
    grads = [grads_text(v.result) for v in here.values]
    names = headers()
    heads = [short_config(result)]
    heads += ([names["outcome"]] if record_only
              else [names["verdict"], *([names["recorded"]] if recorded else [])])
    varying = len(set(grads)) > 1 and not record_only
    if varying:
        heads.append(names["grads"])
    rows: list[list[nodes.entry]] = []
    for value, grad in zip(here.values, grads, strict=True):
        row = [value_cell(result, value.result, listed, settable(judged, value.name))]
        if record_only:
            row.append(labelled("outcome", *outcome_as_recorded(value, here.torch)))
        else:
            row.append(labelled("verdict", *verdict_text(value, here.torch)))
            if recorded:
                row.append(labelled("recorded", *recorded_text(value)))
        if varying:
            row.append(labelled("grads", grad, []))
        rows.append(row)
    return table(heads, rows)


def shows_recorded(judged: Judgement) -> bool:
    """Does the demo's table have an "as recorded?" column?"""
    return judged.result.demo.show == "table" and not records_hold(judged)

