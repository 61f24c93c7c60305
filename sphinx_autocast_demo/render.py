"""Results -> plain docutils nodes (a table, literal blocks, a note) that every builder writes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from docutils import nodes

from .directives import results_placeholder
from .state import all_docs

if TYPE_CHECKING:
    from sphinx.application import Sphinx

    from .model import DemoResult, VariantResult

MARK = {"matches": "\u2713", "differs": "\u2717", "raises": "\u26a0", "error": "\u2014"}


def resolve(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """``doctree-resolved``: replace each placeholder with its demo's results."""
    state = all_docs(app.env).get(docname)
    tabs = use_tabs(app)
    for node in list(doctree.findall(results_placeholder)):
        result = state.results.get(node["ident"]) if state else None
        if result is None:
            para = nodes.paragraph(text="This demo has not been run.",
                                   classes=["autocast-demo-provenance"])
            node.replace_self(para)
        else:
            node.replace_self(result_nodes(result, tabs))


def result_nodes(result: DemoResult, tabs: bool = False) -> list[nodes.Node]:
    out: list[nodes.Node] = [results_table(result)]
    out.extend(printed(result, tabs))
    out.append(provenance(result))
    failures = [f for f in result.findings if f.failed]
    if failures:
        note = nodes.warning(classes=["autocast-demo-stale"])
        if any(f.severity == "mismatch" for f in failures):
            lead = ("This page no longer describes what torch does: what it records differs "
                    f"from what torch {result.torch_version} did when the docs were built.")
        else:
            lead = "This demo did not run as the page expects:"
        note += nodes.paragraph(text=lead)
        items = nodes.bullet_list()
        for finding in failures:
            items += nodes.list_item("", nodes.paragraph(text=finding.message.splitlines()[0]))
        note += items
        out.append(note)
    return out


def cell(content: nodes.Node | str, classes: list[str] | None = None) -> nodes.entry:
    entry = nodes.entry(classes=classes or [])
    entry += content if isinstance(content, nodes.Node) else nodes.paragraph(text=content)
    return entry


def _verdict(vr: VariantResult) -> tuple[str, str]:
    v = vr.verdict
    if v.outcome == "matches":
        text = f"{MARK['matches']} matches eager"
        if v.max_abs:
            text += f" (max |\u0394| {v.max_abs:.1e})"
    elif v.outcome == "differs":
        text = f"{MARK['differs']} differs"
        if v.max_abs is not None:
            text += f" (max |\u0394| {v.max_abs:.2e})"
        elif v.note:
            text += f" ({v.note})"
    elif v.outcome == "raises":
        text = f"{MARK['raises']} raises {v.exception}"
    else:
        text = f"{MARK['error']} not checked"
    return text, f"autocast-demo-{v.outcome}"


def _recorded(result: DemoResult, vr: VariantResult) -> tuple[str, list[str]]:
    expected = result.demo.expected(vr.variant.name)
    if expected is None:
        return "not recorded", ["autocast-demo-unrecorded"]
    broken = any(f.failed and f.concerns(vr.variant.name) for f in result.findings)
    if broken:
        return f"{MARK['differs']} {expected} (no longer true)", ["autocast-demo-stale-cell"]
    return f"{MARK['matches']} {expected}", ["autocast-demo-holds"]


def _grads(vr: VariantResult) -> str:
    grads = [f"{t.name}: {t.dtype}" for t in vr.compiled.tensors if t.kind == "grad"]
    return ", ".join(grads) if grads else "\u2014"


def results_table(result: DemoResult) -> nodes.table:
    variants = result.variants
    rows: list[tuple[str, list[nodes.entry]]] = [
        ("value", [cell(nodes.paragraph("", "", nodes.literal(text=vr.variant.source)))
                   for vr in variants]),
        ("compiled vs eager", [cell(t, [c]) for t, c in map(_verdict, variants)]),
        ("page records", [cell(*_recorded(result, vr)) for vr in variants]),
        ("gradient dtypes", [cell(_grads(vr)) for vr in variants]),
    ]
    table = nodes.table(classes=["autocast-demo-results"])
    group = nodes.tgroup(cols=len(variants) + 1)
    table += group
    # Column widths in characters: the text builder lays the table out with them.
    headers = [result.demo.config.rsplit(".", 1)[-1], *(vr.variant.name for vr in variants)]
    columns: list[list[str]] = [[label for label, _ in rows]]
    columns += [[row[1][i].astext() for row in rows] for i in range(len(variants))]
    for header_text, texts in zip(headers, columns, strict=True):
        group += nodes.colspec(colwidth=min(32, max([8, len(header_text), *map(len, texts)])))
    head = nodes.thead()
    header = nodes.row()
    header += cell(result.demo.config.rsplit(".", 1)[-1])
    for vr in variants:
        header += cell(vr.variant.name)
    head += header
    group += head
    body = nodes.tbody()
    for label, cells in rows:
        row = nodes.row()
        row += cell(label, ["autocast-demo-label"])
        for entry in cells:
            row += entry
        body += row
    group += body
    return table


def printed(result: DemoResult, tabs: bool = False) -> list[nodes.Node]:
    """The printed output (and short traceback) of each value's compiled run."""
    blocks: list[tuple[str, str]] = []
    for vr in result.variants:
        text = vr.compiled.output.rstrip()
        if vr.compiled.error is not None:
            text = (text + "\n" if text else "") + result.traceback(vr.compiled.error)
        elif vr.compiled.status in ("timeout", "crashed", "skipped", "refused"):
            text = (text + "\n" if text else "") + vr.compiled.detail
        blocks.append((vr.variant.name, text))
    if not any(text for _, text in blocks):
        return []
    if len({text for _, text in blocks}) == 1:
        blocks = [("every value", blocks[0][1])]
    elif tabs:
        return [tab_set(result.demo.ident, blocks)]
    out: list[nodes.Node] = []
    for name, text in blocks:
        box = nodes.container(classes=["autocast-demo-output"])
        box += nodes.paragraph("", "", nodes.strong(text=f"Printed under {name}:"))
        box += nodes.literal_block(text, text, language="none")
        out.append(box)
    return out


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


def provenance(result: DemoResult) -> nodes.paragraph:
    demo = result.demo
    exact = "bitwise" if demo.tolerance.grad == 0 else f"within {demo.tolerance.grad:g}"
    text = (
        f"Checked at build time with torch {result.torch_version} \u00b7 device {demo.device} "
        f"\u00b7 autocast dtype {demo.dtype} \u00b7 backend {demo.backend} \u00b7 compiled "
        f"compared with the same code run eagerly (gradients {exact}, other tensors within "
        f"{demo.tolerance.output:g})."
    )
    return nodes.paragraph(text=text, classes=["autocast-demo-provenance"])
