"""Results -> plain docutils nodes (a table, literal blocks, a note) that every builder writes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from docutils import nodes

from .directives import results_placeholder
from .report import not_checked, publish

if TYPE_CHECKING:
    from sphinx.application import Sphinx

    from .check import NotChecked
    from .model import DemoResult, VariantResult
    from .state import DocState

MARK = {"matches": "\u2713", "differs": "\u2717", "raises": "\u26a0", "error": "\u2014"}


def resolve(app: Sphinx, doctree: nodes.document, state: DocState | None, shown: bool,
            torch: str) -> None:
    """Replace each placeholder with its demo's results, as checked with ``torch``.

    A builder that runs no demo (``shown`` false: gettext, linkcheck...) gets no results at
    all: nothing was checked for it, and their text is no message to translate.
    """
    tabs = use_tabs(app)
    for node in list(doctree.findall(results_placeholder)):
        result = state.results.get(node["ident"]) if state else None
        if not shown:
            node.parent.remove(node)
        elif result is None:
            para = nodes.paragraph(text="This demo has not been run.",
                                   classes=["autocast-demo-provenance"])
            node.replace_self(para)
        else:
            node.replace_self(result_nodes(result, app, torch, tabs))


def result_nodes(result: DemoResult, app: Sphinx, torch: str, tabs: bool = False) -> list[nodes.Node]:
    missed = not_checked(result, torch)
    out: list[nodes.Node] = [results_table(result, missed, torch)]
    out.extend(printed(result, app, tabs))
    out.append(provenance(result, missed, torch))
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
            first = publish(finding.message, app).splitlines()[0]
            items += nodes.list_item("", nodes.paragraph(text=first))
        note += items
        out.append(note)
    return out


def cell(content: nodes.Node | str, classes: list[str] | None = None) -> nodes.entry:
    entry = nodes.entry(classes=classes or [])
    entry += content if isinstance(content, nodes.Node) else nodes.paragraph(text=content)
    return entry


def _verdict(vr: VariantResult, why: NotChecked | None, torch: str) -> tuple[str, list[str]]:
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
        return "matches eager" + (f" (max |\u0394| {v.max_abs:.1e})" if v.max_abs else "")
    if v.outcome == "differs":
        if v.max_abs is not None:
            return f"differs (max |\u0394| {v.max_abs:.2e})"
        return f"differs ({v.note})" if v.note else "differs"
    if v.outcome == "raises":
        return f"raises {v.exception}"
    return "not checked"


def _recorded(result: DemoResult, vr: VariantResult, why: NotChecked | None) -> tuple[str, list[str]]:
    expected = result.demo.expected(vr.variant.name)
    if expected is None:
        return "not recorded", ["autocast-demo-unrecorded"]
    if why is not None:  # neither holds nor broken: nobody looked
        return f"{expected} (not checked)", ["autocast-demo-unchecked"]
    broken = any(f.failed and f.concerns(vr.variant.name) for f in result.findings)
    if broken:
        return f"{MARK['differs']} {expected} (no longer true)", ["autocast-demo-stale-cell"]
    return f"{MARK['matches']} {expected}", ["autocast-demo-holds"]


def _grads(vr: VariantResult) -> str:
    grads = [f"{t.name}: {t.dtype}" for t in vr.compiled.tensors if t.kind == "grad"]
    return ", ".join(grads) if grads else "\u2014"


def results_table(result: DemoResult, missed: dict[str, NotChecked], torch: str) -> nodes.table:
    variants = result.variants
    rows: list[tuple[str, list[nodes.entry]]] = [
        ("value", [cell(nodes.paragraph("", "", nodes.literal(text=vr.variant.source)))
                   for vr in variants]),
        ("compiled vs eager", [cell(*_verdict(vr, missed.get(vr.variant.name), torch))
                               for vr in variants]),
        ("page records", [cell(*_recorded(result, vr, missed.get(vr.variant.name)))
                          for vr in variants]),
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


def printed(result: DemoResult, app: Sphinx, tabs: bool = False) -> list[nodes.Node]:
    """The printed output (and short traceback) of each value's compiled run.

    A run that never started printed nothing: why it did not is in the table.
    """
    blocks: list[tuple[str, str]] = []
    for vr in result.variants:
        text = vr.compiled.output.rstrip()
        if vr.compiled.error is not None:
            text = (text + "\n" if text else "") + result.traceback(vr.compiled.error)
        elif vr.compiled.status in ("timeout", "crashed"):
            text = (text + "\n" if text else "") + vr.compiled.detail
        blocks.append((vr.variant.name, publish(text, app)))
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


def provenance(result: DemoResult, missed: dict[str, NotChecked], torch: str) -> nodes.paragraph:
    """What this build checked of the demo, with which torch, and what it did not."""
    demo = result.demo
    exact = "bitwise" if demo.tolerance.grad == 0 else f"within {demo.tolerance.grad:g}"
    how = (f"device {demo.device} \u00b7 autocast dtype {demo.dtype} \u00b7 backend "
           f"{demo.backend} \u00b7 compiled compared with the same code run eagerly (gradients "
           f"{exact}, other tensors within {demo.tolerance.output:g}).")
    every = len(result.variants)
    checked = [vr for vr in result.variants if vr.variant.name not in missed]
    said: list[str] = []
    if checked:
        which = "" if len(checked) == every else " (" + ", ".join(
            vr.variant.name for vr in checked) + ")"
        cached = sum(vr.cached for vr in checked)
        earlier = "by an earlier build (cached result: same code, torch and Python)"
        if not cached:
            said.append(f"Checked at build time with torch {torch}{which}")
        elif cached == len(checked):
            said.append(f"Checked with torch {torch} {earlier}{which}")
        else:
            said.append(f"Checked with torch {torch}{which}, at build time and, for {cached} "
                        f"of {len(checked)} values, {earlier}")
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
    text = ". ".join(said) + " \u00b7 " + how
    classes = ["autocast-demo-provenance"] + (["autocast-demo-unchecked"] if missed else [])
    return nodes.paragraph(text=text, classes=classes)
