"""Results -> plain docutils nodes (a table, literal blocks, a note) that every builder writes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from docutils import nodes

from .directives import results_placeholder
from .report import not_checked, publish

if TYPE_CHECKING:
    from sphinx.application import Sphinx

    from .check import NotChecked
    from .model import DemoResult, Environment, RunRecord, VariantResult
    from .state import DocState

MARK = {"matches": "\u2713", "differs": "\u2717", "raises": "\u26a0", "no-config": "\u2014",
        "error": "\u2014"}


def resolve(app: Sphinx, doctree: nodes.document, state: DocState | None, shown: bool,
            torch: str) -> None:
    """Replace each placeholder with its demo's results, as checked with ``torch``.

    A legend goes before the page's first table; a footer that every demo of the page shares is
    said once, under that first table. A builder that runs no demo (``shown`` false: gettext,
    linkcheck...) gets no results at all: nothing was checked for it, and their text is no
    message to translate.
    """
    tabs = use_tabs(app)
    placeholders = list(doctree.findall(results_placeholder))
    results = [state.results.get(node["ident"]) if state else None for node in placeholders]
    footers = {provenance(r, not_checked(r, torch), torch).astext() for r in results if r}
    # Only when it is true of every demo: one that has not run says so itself, and is not
    # part of an "every demo on this page".
    shared = len(footers) == 1 and len(results) > 1 and all(r is not None for r in results)
    legend = footer = False  # said yet: the legend, the page's shared footer
    for node, result in zip(placeholders, results, strict=True):
        if not shown:
            node.parent.remove(node)
        elif result is None:
            para = nodes.paragraph(text="This demo has not been run.",
                                   classes=["autocast-demo-provenance"])
            node.replace_self(para)
        else:
            if not legend and result.demo.show != "outputs":
                # Before the demo, not in it: it speaks for every table of the page.
                box = node.parent
                box.parent.insert(box.parent.index(box), legend_line(result))
                legend = True
            node.replace_self(result_nodes(result, app, torch, tabs,
                                           footer="page" if shared and not footer else not shared))
            footer = True


def result_nodes(result: DemoResult, app: Sphinx, torch: str, tabs: bool = False,
                 footer: bool | str = True) -> list[nodes.Node]:
    """The demo's table (unless it shows only outputs), what it printed, its footer and, when
    the page's record no longer holds, a warning box. ``footer="page"``: the footer speaks for
    every demo of the page."""
    missed = not_checked(result, torch)
    out: list[nodes.Node] = []
    if result.demo.show != "outputs" and result.others:
        from .across import environments_table

        out.append(environments_table(result, torch, html=app.builder.format == "html"))
    elif result.demo.show != "outputs":
        out.append(results_table(result, missed, torch))
    out.extend(printed(result, app, tabs))
    if footer:
        line = provenance(result, missed, torch)
        if footer == "page":
            line.insert(0, nodes.strong(text="Every demo on this page: "))
        out.append(line)
    failures = [f for f in result.findings if f.failed]
    if failures:
        note = nodes.warning(classes=["autocast-demo-stale"])
        if any(f.severity == "mismatch" for f in failures):
            where = sorted({f.environment for f in failures if f.environment and result.others})
            did = (f"torch did in {', '.join(where)}" if where else
                   f"torch {result.torch_version} did when the docs were built")
            lead = ("This page no longer describes what torch does: what it records differs "
                    f"from what {did}.")
        else:
            lead = "This demo did not run as the page expects:"
        note += nodes.paragraph(text=lead)
        items = nodes.bullet_list()
        for finding in failures:
            first = publish(finding.message, app).splitlines()[0]
            items += nodes.list_item("", nodes.paragraph(text=first))
        note += items
        out.append(note)
    return out


def legend_line(result: DemoResult) -> nodes.paragraph:
    """How to read the tables, once per page: a reader must not need the prose for it."""
    exact = "bitwise" if result.demo.tolerance.grad == 0 else f"within {result.demo.tolerance.grad:g}"
    text = (f"How to read these tables: each row runs the snippet with one value of "
            f"{short_config(result)}, compiled and then eagerly, each in a clean process. "
            f"compiled = eager? \u2713 matches: every tensor the snippet leaves within reach "
            f"(in its names, containers and modules, gradients wherever they were put) and "
            f"every line it printed is equal (gradients {exact}); \u2717 differs: what "
            f"differs first, with its largest difference; \u26a0 raises: the compiled "
            f"run's exception. as recorded? "
            f"\u2713: what this page records still holds; \u2717: it no longer does. Each "
            f"value's line sets it in your own code, before the first compiled call.")
    return nodes.paragraph(text=text, classes=["autocast-demo-legend"])


def short_config(result: DemoResult) -> str:
    return result.demo.config.rsplit(".", 1)[-1]


def cell(content: nodes.Node | str, classes: list[str] | None = None) -> nodes.entry:
    entry = nodes.entry(classes=classes or [])
    entry += content if isinstance(content, nodes.Node) else nodes.paragraph(text=content)
    return entry


def verdict_text(vr: VariantResult, why: NotChecked | None, torch: str) -> tuple[str, list[str]]:
    if why is not None and why.other_torch:
        # Another torch's result: what it said, without the mark of a checked one.
        return (f"{outcome_text(vr)} with torch {why.other_torch} (cached; not checked with "
                f"torch {torch})", ["autocast-demo-unchecked"])
    if why is not None:
        return f"{MARK['error']} {why.text}", ["autocast-demo-error", "autocast-demo-unchecked"]
    v = vr.verdict
    return f"{MARK[v.outcome]} {outcome_text(vr)}", [f"autocast-demo-{v.outcome}"]


def outcome_text(vr: VariantResult) -> str:
    """What compiled did against eager, as a table cell says it (no mark)."""
    v = vr.verdict
    if v.outcome == "matches":
        text = "matches eager" + (f" (max |\u0394| {v.max_abs:.1e})" if v.max_abs else "")
        return f"{text}; partly: {v.cut}" if v.cut else text
    if v.outcome == "differs":
        first = next((d for d in v.diffs if not d.equal), None)
        if first is None:
            return f"differs ({v.note})" if v.note else "differs"
        if first.max_abs is not None:
            what = f"{first.name}, max |\u0394| {first.max_abs:.2e}"
        else:
            what = f"{first.name}: {first.note}" if first.note else first.name
        others = sum(not d.equal for d in v.diffs) - 1
        return f"differs ({what})" + (f" and {others} more" if others > 0 else "")
    if v.outcome == "no-config":
        return "no such config in this torch"
    if v.outcome == "raises":
        if v.eager_exception:
            same = v.eager_exception == v.exception
            return f"raises {v.exception} (eager {'too' if same else 'raises ' + v.eager_exception})"
        return f"raises {v.exception}"
    return "not checked"


def broken(result: DemoResult, value: str, environment: Environment | None = None) -> bool:
    """Does a failing finding say the page's record for ``value`` no longer holds (in
    ``environment``, when given)?"""
    label = environment.label if environment is not None else None
    return any(f.failed and f.concerns(value, label) for f in result.findings)


def _recorded(result: DemoResult, vr: VariantResult, why: NotChecked | None) -> tuple[str, list[str]]:
    expected = result.demo.expected(vr.variant.name, result.environment)
    if expected is None:
        return "not recorded", ["autocast-demo-unrecorded"]
    if why is not None:  # neither holds nor broken: nobody looked
        return f"records {expected} (not checked)", ["autocast-demo-unchecked"]
    if broken(result, vr.variant.name, result.environment):
        return f"{MARK['differs']} no: records {expected}", ["autocast-demo-stale-cell"]
    return f"{MARK['matches']} yes ({expected})", ["autocast-demo-holds"]


def _grads(vr: VariantResult) -> str:
    grads = [f"{t.name}: {t.dtype}" for t in vr.compiled.tensors if t.kind == "grad"]
    return ", ".join(grads) if grads else "\u2014"


def set_line(result: DemoResult, vr: VariantResult) -> str:
    """The line that sets this value in the reader's own code."""
    return f"{result.demo.config} = {vr.variant.source}"


def value_cell(result: DemoResult, vr: VariantResult) -> nodes.entry:
    entry = nodes.entry(classes=["autocast-demo-value"])
    entry += nodes.paragraph("", "", nodes.strong(text=vr.variant.name))
    code = set_line(result, vr)
    entry += nodes.literal_block(code, code, language="python", classes=["autocast-demo-set"])
    if vr.compiled.config_set:  # the row did not run under its value alone
        entry += nodes.paragraph(
            text=f"then set by the snippet itself to {', '.join(vr.compiled.config_set)}",
            classes=["autocast-demo-config-set"])
    return entry


def results_table(result: DemoResult, missed: dict[str, NotChecked], torch: str) -> nodes.table:
    """One row per value: how to set it, whether compiled equals eager, whether the page's
    record holds; gradient dtypes only where they differ between values (else the footer's)."""
    variants = result.variants
    record_only = result.demo.show == "record"
    grads = [_grads(vr) for vr in variants]
    headers = [short_config(result)]
    headers += ["outcome, as recorded?"] if record_only else ["compiled = eager?", "as recorded?"]
    varying = len(set(grads)) > 1 and not record_only
    if varying:
        headers.append("gradient dtypes")
    rows: list[list[nodes.entry]] = []
    for vr, grad in zip(variants, grads, strict=True):
        why = missed.get(vr.variant.name)
        row = [value_cell(result, vr)]
        if record_only:
            row.append(labelled("outcome", *outcome_as_recorded(result, vr, why, torch)))
        else:
            row += [labelled("verdict", *verdict_text(vr, why, torch)),
                    labelled("recorded", *_recorded(result, vr, why))]
        if varying:
            row.append(labelled("grads", grad, []))
        rows.append(row)
    return table(headers, rows)


def table(headers: list[str], rows: list[list[nodes.entry]]) -> nodes.table:
    out = nodes.table(classes=["autocast-demo-results"])
    group = nodes.tgroup(cols=len(headers))
    out += group
    # Column widths in characters: the text builder lays the table out with them.
    for index, header_text in enumerate(headers):
        texts = [header_text, *(row[index].astext() for row in rows)]
        group += nodes.colspec(colwidth=min(40, max(8, *map(len, texts))))
    head = nodes.thead()
    header = nodes.row()
    for text in headers:
        header += cell(text)
    head += header
    group += head
    body = nodes.tbody()
    for cells in rows:
        line = nodes.row()
        for entry in cells:
            line += entry
        body += line
    group += body
    return out


def labelled(column: str, text: str, classes: list[str]) -> nodes.entry:
    """A cell that says which column it is in (``autocast-demo-col-*``): on a phone the rows
    stack into cards, and the stylesheet puts the column's name before each cell."""
    return cell(text, [*classes, f"autocast-demo-col-{column}"])


def outcome_as_recorded(result: DemoResult, vr: VariantResult, why: NotChecked | None,
                         torch: str) -> tuple[str, list[str]]:
    """``:show: record``: what happened, and whether the page says so, without the colour of a
    verdict (the snippet is not about compiled against eager)."""
    if why is not None:
        return verdict_text(vr, why, torch)
    happened = vr.verdict.text
    expected = result.demo.expected(vr.variant.name, result.environment)
    if expected is None:
        return f"{happened} (not recorded)", ["autocast-demo-unrecorded"]
    if broken(result, vr.variant.name, result.environment):
        return (f"{MARK['differs']} {happened}, but the page records {expected}",
                ["autocast-demo-stale-cell"])
    return f"{MARK['matches']} {happened}, as recorded", ["autocast-demo-holds"]


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
    blocks += [(f"{name}, run eagerly", text) for name, text in _fold(eager, len(result.variants))]
    blocks = [(name, text) for name, text in blocks if text]
    if not blocks:
        return []
    if tabs and len(blocks) > 1:
        return [tab_set(result.demo.ident, blocks), *_silent(silent)]
    out: list[nodes.Node] = []
    for name, text in blocks:
        box = nodes.container(classes=["autocast-demo-output"])
        box += nodes.paragraph("", "", nodes.strong(text=f"Printed under {name}:"))
        box += nodes.literal_block(text, text, language="none")
        out.append(box)
    return out + _silent(silent)


def _fold(blocks: list[tuple[str, str]], values: int) -> list[tuple[str, str]]:
    """One block for "every value" when every value printed the same (something)."""
    if len(blocks) == values and len({text for _, text in blocks}) == 1 and blocks[0][1]:
        return [("every value", blocks[0][1])]
    return blocks


def _run_text(result: DemoResult, run: RunRecord, app: Sphinx) -> str:
    text = run.output.rstrip()
    if run.error is not None:
        text = (text + "\n" if text else "") + result.traceback(run.error)
    elif run.status in ("timeout", "crashed"):
        text = (text + "\n" if text else "") + run.detail
    return publish(text, app)


def _silent(names: list[str]) -> list[nodes.Node]:
    if not names:
        return []
    return [nodes.paragraph(text=f"Nothing printed under {', '.join(names)}.",
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
    outer += nodes.paragraph("", "", nodes.strong(text="Printed under each value:"))
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


def _dtypes(value: object) -> list[str]:
    """The torch dtypes a value names (``{"__torch__": "bfloat16"}`` as JSON), anywhere in it."""
    if isinstance(value, dict):
        if set(value) == {"__torch__"} and isinstance(value["__torch__"], str):
            return [value["__torch__"]]
        return [d for v in value.values() for d in _dtypes(v)]
    if isinstance(value, list):
        return [d for v in value for d in _dtypes(v)]
    return []


def provenance(result: DemoResult, missed: dict[str, NotChecked], torch: str) -> nodes.paragraph:
    """What this build checked of the demo, with which torch, and what it did not."""
    demo = result.demo
    exact = "bitwise" if demo.tolerance.grad == 0 else f"within {demo.tolerance.grad:g}"
    # The dtypes the values themselves name (a list of autocast kwargs), not the option's
    # default: that one is true only of the built-in ``autocast`` value.
    named = sorted({d for vr in result.variants for d in _dtypes(vr.variant.value)})
    dtype = f" \u00b7 autocast dtypes in the values: {', '.join(named)}" if named else ""
    grads = {_grads(vr) for vr in result.variants if vr.compiled.status == "ok"}
    same = (f" \u00b7 gradient dtypes under every value: {grads.pop()}"
            if len(grads) == 1 and "\u2014" not in grads else "")
    how = (f"device {demo.device}{dtype} \u00b7 backend {demo.backend} \u00b7 compiled "
           f"compared with the same code run eagerly (gradients {exact}, other tensors within "
           f"{demo.tolerance.output:g}){same}.")
    every = len(result.variants)
    checked = [vr for vr in result.variants if vr.variant.name not in missed]
    said: list[str] = []
    if checked:
        which = "" if len(checked) == every else " (" + ", ".join(
            vr.variant.name for vr in checked) + ")"
        cached = sum(vr.cached for vr in checked)
        # The torch that made each result, named as it was: a result cached by another build
        # that autocast_demo_cache_torch counts as this one ("release", a label) is checked,
        # but by that torch; results kept from an earlier build of the page likewise.
        made = result.torch_version
        ran = torch if result.torch_equivalent else made  # who ran what was not cached
        earlier = ("by an earlier build (cached result: same code, torch and Python)" if made == torch
                   else f"by an earlier build (cached result of the same code and Python; "
                        f"autocast_demo_cache_torch counts it as the installed torch {torch})")
        if result.made and result.environment is not None:
            # Not "checked": this build ran nothing; the set's build compared compiled with
            # eager, this one only reads what it found against the page.
            said.append(f"Results of torch {made} (Python {result.environment.python}, "
                        f"{result.environment.device}) from the result set of "
                        f"{result.environment.label!r}, {result.made}; not run by this build{which}")
        elif not cached:
            said.append(f"Checked at build time with torch {ran}{which}")
        elif cached == len(checked):
            said.append(f"Checked with torch {made} {earlier}{which}")
        elif ran == made:
            said.append(f"Checked with torch {made}{which}, at build time and, for {cached} "
                        f"of {len(checked)} values, {earlier}")
        else:
            now = ", ".join(vr.variant.name for vr in checked if not vr.cached)
            kept = ", ".join(vr.variant.name for vr in checked if vr.cached)
            said.append(f"Checked at build time with torch {ran} ({now}) and with torch {made} "
                        f"{earlier} ({kept})")
    older = sorted({why.other_torch for why in missed.values() if why.other_torch})
    for version in older:
        names = [n for n, why in missed.items() if why.other_torch == version]
        which = "" if len(names) == every else " (" + ", ".join(names) + ")"
        said.append(f"Rendered from results of torch {version} cached earlier, not checked "
                    f"with the installed torch {torch}{which}")
    reasons: dict[str, list[str]] = {}
    for name, why in missed.items():
        if not why.other_torch:
            reasons.setdefault(why.sentence, []).append(name)
    for text, names in reasons.items():
        which = "" if len(names) == every else " (" + ", ".join(names) + ")"
        said.append(f"Not checked in this build: {text}{which}")
    # Not-checked first: that is what a reader must not miss.
    said.sort(key=lambda line: not line.startswith(("Not", "Rendered")))
    if result.others:
        from .across import provenance_lines

        said += provenance_lines(result, torch)
    text = ". ".join(said) + " \u00b7 " + how
    classes = ["autocast-demo-provenance"] + (["autocast-demo-unchecked"] if missed else [])
    return nodes.paragraph(text=text, classes=classes)
