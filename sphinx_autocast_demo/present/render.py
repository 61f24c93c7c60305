"""Results -> plain docutils nodes (a table, literal blocks, a note) that every builder writes."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING, NamedTuple

from docutils import nodes

from ..core.i18n import _, n_, on_page
from ..core.publish import publish
from ..judge.judgement import judge
from ..read.directives import results_placeholder
from . import tables
from .across import environments_table, provenance_lines, run_where
from .cells import (
    dtypes,
    labelled,
    legend_line,
    lines_to_copy,
    outcome_as_recorded,
    recorded_text,
    records_hold,
    settable,
    shared_lines,
    short_config,
    table,
    value_cell,
    verdict_text,
    why_words,
)
from .columns import headers

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from sphinx.application import Sphinx

    from ..core.model import DemoResult, RunRecord, VariantResult
    from ..core.state import DocState
    from ..judge.judgement import Judgement


class Part(NamedTuple):
    """A part of a footer: a sentence about where results come from, or a fact of how they
    were made (``how``). ``key``: what it is about (the backend, an environment...), one part
    per key and demo; ``missed``: it says that a value was not checked."""

    key: str
    text: str
    missed: bool = False
    how: bool = False


def page_parts(footers: list[list[Part]]) -> list[Part]:
    """What the page says once for its demos: for each key that every demo's footer has, what
    most of them say (a demo that says otherwise keeps its own part)."""
    shared = []
    for key in [part.key for part in footers[0]]:
        said = [part for footer in footers for part in footer if part.key == key]
        if len(said) < len(footers):
            continue  # (a demo without it would seem to have it)
        best, count = Counter(said).most_common(1)[0]
        if count * 2 > len(footers):
            shared.append(best)
    return shared


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
    legend = False  # said yet
    for node, result in zip(placeholders, judged, strict=True):
        if not shown:
            node.parent.remove(node)
        elif result is None:
            para = nodes.paragraph(text=_("This demo has not been run."),
                                   classes=["autocast-demo-provenance"])
            node.replace_self(para)
        else:
            if not legend and result.result.demo.show != "outputs":
                # Under the first demo, not in it: it speaks for every table of the page.
                box = node.parent
                at = box.parent.index(box) + 1
                recorded = any(shows_recorded(j) for j in tabled)
                box.parent[at:at] = [legend_line(recorded), *lines_to_copy(lines)]
                legend = True
            node.replace_self(result_nodes(result, app, tabs, said=shared, page=page,
                                           named=_caption(node), listed=listed))
            page = None  # (said once, under the first table)


def result_nodes(judged: Judgement, app: Sphinx, tabs: bool = False, said: Sequence[Part] = (),
                 page: nodes.paragraph | None = None, named: str = "",
                 listed: Mapping[str, str] | None = None) -> list[nodes.Node]:
    """The demo's table (unless it shows only outputs), what it printed, its footer and, when
    the page's record no longer holds, a warning box. The footer leaves out what the page
    says for every demo (``said``); ``page``: the line that says it, to put here; ``named``:
    the demo as the table's caption names it (none: "this demo"); ``listed``: lines to copy
    that the page lists once (lines -> where), which the value cells link to instead of
    showing them."""
    result = judged.result
    out: list[nodes.Node] = []
    caption = _("Results of {demo}: compiled against eager, value by value").format(
        demo=named or _("this demo"))
    if result.demo.show != "outputs" and judged.several:
        out.append(tables.results(environments_table(judged, html=app.builder.format == "html",
                                                     listed=listed), caption))
    elif result.demo.show != "outputs":
        out.append(tables.results(results_table(judged, listed), caption))
    out.extend(printed(result, app, tabs))
    own = [part for part in provenance_parts(judged) if part not in said]
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


def _grads(vr: VariantResult) -> str:
    grads = [f"{t.name}: {t.dtype}" for t in vr.compiled.tensors if t.kind == "grad"]
    return ", ".join(grads) if grads else "\u2014"


def results_table(judged: Judgement, listed: Mapping[str, str] | None = None) -> nodes.table:
    """One row per value: how to set it, whether compiled equals eager, whether the page's
    record holds (only where a value's does not: else the footer says that every one holds);
    gradient dtypes only where they differ between values (else the footer's)."""
    result, here = judged.result, judged.here
    record_only = result.demo.show == "record"
    recorded = shows_recorded(judged)
    grads = [_grads(v.result) for v in here.values]
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
    """Does the demo's table have an "as recorded?" column: a table of verdicts (not of
    ``:show: record``'s outcomes, which say it in each cell) where some record does not hold."""
    return judged.result.demo.show == "table" and not records_hold(judged)


def printed(result: DemoResult, app: Sphinx, tabs: bool = False) -> list[nodes.Node]:
    """What each value's compiled run printed (with its short traceback), and the eager run's
    output where it is not the same.

    A run that never started printed nothing: why it did not is in the table. A value whose
    runs printed nothing says so in words, never as an empty box.
    """
    compiled = [(vr.variant.name, _run_text(result, vr.compiled, app)) for vr in result.variants]
    eager = [(name, text) for (name, ctext), vr in zip(compiled, result.variants, strict=True)
             if not vr.eager.not_run and (text := _run_text(result, vr.eager, app)) != ctext]
    silent = [name for name, text in compiled if not text]
    blocks = _fold(compiled, len(result.variants))
    blocks += [(_("{value}, run eagerly").format(value=name), text)
               for name, text in _fold(eager, len(result.variants))]
    blocks = [(name, text) for name, text in blocks if text]
    if not blocks:
        return []
    if tabs and len(blocks) > 1:
        return [tab_set(result.demo.ident, blocks), *_silent(silent)]
    out: list[nodes.Node] = []
    for name, text in blocks:
        box = nodes.container(classes=["autocast-demo-output"])
        box += nodes.paragraph("", "", nodes.strong(text=_("Printed under {value}:").format(value=name)))
        box += nodes.literal_block(text, text, language="none")
        out.append(box)
    return out + _silent(silent)


def _fold(blocks: list[tuple[str, str]], values: int) -> list[tuple[str, str]]:
    """One block for "every value" when every value printed the same (something)."""
    if len(blocks) == values and len({text for _, text in blocks}) == 1 and blocks[0][1]:
        return [(_("every value"), blocks[0][1])]
    return blocks


def _run_text(result: DemoResult, run: RunRecord, app: Sphinx) -> str:
    text = run.output.rstrip()
    if run.error is not None:
        text = (text + "\n" if text else "") + result.traceback(run.error)
    elif run.status in ("timeout", "crashed"):
        text = (text + "\n" if text else "") + _how_it_ended(result, run)
    return publish(text, app)


def _how_it_ended(result: DemoResult, run: RunRecord) -> str:
    """How a run that did not finish ended, in the page's language, from the record's facts
    (its ``detail`` is the engine's English, and the cache keeps it so)."""
    if run.status == "timeout":
        return _("stopped after its timeout of {seconds} s").format(seconds=f"{result.demo.timeout:g}")
    if run.killed_by:
        return _("the process was killed by {signal}").format(signal=run.killed_by)
    if run.exit_status is not None:
        return _("the process exited with status {status} before the snippet finished").format(
            status=run.exit_status)
    return run.detail  # (its result could not be read: the reader's own words, as recorded)


def _silent(names: list[str]) -> list[nodes.Node]:
    if not names:
        return []
    return [nodes.paragraph(text=_("Nothing printed under {values}.").format(values=", ".join(names)),
                            classes=["autocast-demo-silent"])]


def use_tabs(app: Sphinx) -> bool:
    """sphinx-design is loaded and the output is HTML: its tabs have CSS and a sync script."""
    return "sphinx_design" in app.extensions and app.builder.format == "html"


def tab_set(ident: str, blocks: list[tuple[str, str]]) -> nodes.container:
    """One sphinx-design tab per value, synchronised across the site by value name.

    Built in sphinx-design's HTML form (input, label, content): its own post-transform, which
    turns tab-item directives into that form, has already run when results are rendered.
    """
    from sphinx_design.tabs import sd_tab_input, sd_tab_label

    outer = nodes.container(classes=["autocast-demo-output"])
    outer += nodes.paragraph("", "", nodes.strong(text=_("Printed under each value:")))
    box = nodes.container(classes=["sd-tab-set", "autocast-demo-tabs"])
    outer += box
    for index, (name, text) in enumerate(blocks):
        item = f"autocast-demo-{ident}-tab-{index}"
        box += sd_tab_input("", id=item, set_id=f"autocast-demo-{ident}-tabs", type="radio",
                            checked=index == 0)
        box += sd_tab_label("", name, input_id=item, classes=["sd-tab-label"],
                            sync_group="autocast-demo-value", sync_id=name,
                            aria_controls=f"{item}-content")
        content = nodes.container(classes=["sd-tab-content"], ids=[f"{item}-content"])
        content += nodes.literal_block(text, text, language="none")
        box += content
    return outer


def provenance(judged: Judgement) -> nodes.paragraph:
    """The demo's whole footer, as a page with only this demo shows it."""
    return footer_line(provenance_parts(judged))


def footer_line(parts: Sequence[Part]) -> nodes.paragraph:
    """Parts as one line; marked unchecked when one says a value was not checked."""
    said = ". ".join(part.text for part in parts if not part.how)
    how = " \u00b7 ".join(part.text for part in parts if part.how)
    text = (said + " \u00b7 " + how if said and how else said or how) + "."
    unchecked = any(part.missed for part in parts)
    classes = ["autocast-demo-provenance"] + (["autocast-demo-unchecked"] if unchecked else [])
    return nodes.paragraph(text=text, classes=classes)


def provenance_parts(judged: Judgement) -> list[Part]:
    """What this build checked of the demo, with which torch, and what it did not: the
    not-checked first (what a reader must not miss), then where results come from, then how
    they were made."""
    result, here, torch = judged.result, judged.here, judged.torch
    demo = result.demo
    exact = (_("bitwise") if demo.tolerance.grad == 0
             else _("within {tolerance}").format(tolerance=f"{demo.tolerance.grad:g}"))
    # The dtypes the values themselves name (a list of autocast kwargs), not the option's
    # default: that one is true only of the built-in ``autocast`` value. A table's value cells
    # show them already, in the line that sets each value.
    named = sorted({d for vr in result.variants for d in dtypes(vr.variant.value)})
    dtype = ([("dtypes", _("autocast dtypes in the values: {dtypes}").format(dtypes=", ".join(named)))]
             if named and demo.show == "outputs" else [])
    # Always said (one way or another), so that a page may say the common one once: a demo
    # that says nothing would seem to have the page's.
    grads = {_grads(vr) for vr in result.variants if vr.compiled.status == "ok"}
    if len(grads) > 1:
        shown = demo.show != "outputs" and not judged.several and demo.show != "record"
        same = [("grads", _("gradient dtypes differ between values (in the table)") if shown
                 else _("gradient dtypes differ between values"))]
    elif grads and "\u2014" not in grads:
        same = [("grads", _("gradient dtypes under every value: {dtypes}").format(dtypes=grads.pop()))]
    else:
        same = [("grads", _("no gradients"))]
    how = [("device", _("device {device}").format(device=demo.device)), *dtype,
           ("backend", _("backend {backend}").format(backend=demo.backend)),
           ("compare", _("compiled compared with the same code run eagerly (gradients {exact}, "
                         "other tensors within {tolerance})").format(
               exact=exact, tolerance=f"{demo.tolerance.output:g}")), *same]
    every = len(here.values)
    checked = [v for v in here.values if v.checked]
    missed = [v for v in here.values if v.why is not None]
    parts: list[Part] = []
    if checked:
        which = "" if len(checked) == every else _values([v.name for v in checked])
        cached = sum(v.result.cached for v in checked)
        # The torch that made each result, named as it was: a result cached by another build
        # that autocast_demo_cache_torch counts as this one ("release", a label) is checked,
        # but by that torch; results kept from an earlier build of the page likewise.
        made = result.torch_version
        ran = torch if result.torch_equivalent else made  # who ran what was not cached
        earlier = (_("by an earlier build (cached result: same code, torch and Python)") if made == torch
                   else _("by an earlier build (cached result of the same code and Python; "
                          "autocast_demo_cache_torch counts it as the installed torch {torch})").format(
                       torch=torch))
        if here.source != "build" and here.environment is not None:
            # Not "checked": this build ran nothing; the set's build compared compiled with
            # eager, this one only reads what it found against the page.
            label = here.environment.label
            alias = "" if label == f"torch {made}" else f" ({label})"
            source = _("Results of torch {torch}{label}, {where}; not run by this build{values}").format(
                torch=made, label=alias, where=run_where(result.when, here.environment), values=which)
        elif not cached:
            source = _("Checked at build time with torch {torch}{values}").format(torch=ran, values=which)
        elif cached == len(checked):
            source = _("Checked with torch {torch} {earlier}{values}").format(
                torch=made, earlier=earlier, values=which)
        elif ran == made:
            source = n_("Checked with torch {torch}{values}, at build time and, for {n} of {total} "
                        "values, {earlier}",
                        "Checked with torch {torch}{values}, at build time and, for {n} of {total} "
                        "values, {earlier}", len(checked)).format(
                torch=made, values=which, n=cached, total=len(checked), earlier=earlier)
        else:
            now = ", ".join(v.name for v in checked if not v.result.cached)
            kept = ", ".join(v.name for v in checked if v.result.cached)
            source = _("Checked at build time with torch {torch} ({now}) and with torch {made} "
                       "{earlier} ({kept})").format(torch=ran, now=now, made=made, earlier=earlier, kept=kept)
        parts.append(Part("source", source))
    if records_hold(judged):  # (the table has no column to say it)
        held = sum(not column.empty for column in judged.columns)
        parts.append(Part("records", n_("What the page records of each value holds in all {n} "
                                        "environments", "What the page records of each value holds "
                                        "in all {n} environments", held).format(n=held) if held > 1
                          else _("What the page records of each value holds")))
    # Not-checked first: that is what a reader must not miss (each its own key: a page says
    # one only when every demo of it says the same).
    older = sorted({v.why.other_torch for v in missed if v.why is not None and v.why.other_torch})
    for version in older:
        names = [v.name for v in missed if v.why is not None and v.why.other_torch == version]
        which = "" if len(names) == every else _values(names)
        text = _("Rendered from results of torch {other} cached earlier, not checked with the "
                 "installed torch {torch}{values}").format(other=version, torch=torch, values=which)
        parts.append(Part(text, text, missed=True))
    reasons: dict[str, list[str]] = {}
    for v in missed:
        if v.why is not None and not v.why.other_torch:
            reasons.setdefault(why_words(v, v.why, torch).sentence, []).append(v.name)
    for reason, names in reasons.items():
        which = "" if len(names) == every else _values(names)
        text = _("Not checked in this build: {reason}{values}").format(reason=reason, values=which)
        parts.append(Part(text, text, missed=True))
    parts.sort(key=lambda part: not part.missed)
    if judged.several:
        parts += [Part(f"environment {label}", line) for label, line in provenance_lines(judged)]
    return parts + [Part(key, text, how=True) for key, text in how]


def _values(names: list[str]) -> str:
    """`` (same_as_forward, off)``: the values a part of a footer is about, when not all."""
    return _(" ({values})").format(values=", ".join(names))
