"""``autocast-demo-summary``: every demo of the docs by every value, in one table.

The table is built when its page is written, from the results the build itself just checked
(the environment's :class:`~.state.DocState`), so it can never disagree with the demos' own
tables. :func:`.pipeline.run` asks Sphinx to re-write the pages holding a summary whenever any
demo was checked again, which is how the table follows changed results.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx.util.docutils import SphinxDirective

from .render import MARK, cell
from .report import not_checked
from .state import all_docs, doc_state

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment

    from .check import NotChecked
    from .model import DemoResult, VariantResult

class summary_placeholder(nodes.General, nodes.Element):
    """Replaced by the matrix when its page is written."""


class AutocastDemoSummary(SphinxDirective):
    has_content = False

    def run(self) -> list[nodes.Node]:
        doc_state(self.env, self.env.docname).summary = True
        node = summary_placeholder()
        self.set_source_info(node)
        return [node]


def summary_docs(env: BuildEnvironment) -> list[str]:
    """The documents that hold a summary: re-written whenever any result is new."""
    return sorted(d for d, s in all_docs(env).items() if s.summary)


def record_titles(env: BuildEnvironment, doctree: nodes.document) -> None:
    """Remember each demo's caption, or the title of its section, for the matrix."""
    found: dict[str, str] = {}
    for box in doctree.findall(nodes.container):
        if "autocast-demo" not in box["classes"] or not box["ids"]:
            continue
        caption = next(iter(box.findall(nodes.caption)), None)
        parent: nodes.Element | None = box.parent
        while parent is not None and not isinstance(parent, nodes.section):
            parent = parent.parent
        if caption is not None:
            found[box["ids"][0]] = caption.astext()
        elif parent is not None and isinstance(parent[0], nodes.title):
            found[box["ids"][0]] = parent[0].astext()
    if found:
        doc_state(env, env.docname).titles = found


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


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")


def _verdict(vr: VariantResult | None, why: NotChecked | None) -> tuple[str, list[str]]:
    if vr is None:
        return "", ["autocast-demo-absent"]
    outcome = vr.verdict.outcome
    text = {"matches": "matches", "differs": "differs", "raises": f"raises {vr.verdict.exception}",
            "no-config": "no such config", "error": "not checked"}[outcome]
    if why is not None:  # never the mark of a checked result
        said = f"{why.short}: {text}" if why.other_torch else why.short
        return f"{MARK['error']} {said}", ["autocast-demo-error", "autocast-demo-unchecked"]
    return f"{MARK[outcome]} {text}", [f"autocast-demo-{outcome}"]


def across(result: DemoResult, value: str, torch: str) -> tuple[str, list[str]]:
    """One value's verdict in every environment: once when they agree (no names), else each run of
    environments that agree (in their order: the first is this build's), so that a change
    between releases reads at a glance: ``✗ differs in torch 2.13.0, torch 2.14.1; ✓ matches
    in torch 2.15.0``."""
    from .across import columns, heading

    groups: list[tuple[str, list[str], list[str]]] = []  # text, classes, environments
    for shown, missed in columns(result, torch):
        vr = next(v for v in shown.variants if v.variant.name == value)
        text, classes = _verdict(vr, missed.get(value))
        if groups and groups[-1][0] == text:
            groups[-1][2].append(heading(shown))
        else:
            groups.append((text, classes, [heading(shown)]))
    if len(groups) == 1:  # the lead says it: a cell names environments only where they differ
        return groups[0][0], groups[0][1]
    changed = [text for text, _, _ in groups if not text.startswith(MARK["error"])]
    classes = groups[0][1] + (["autocast-demo-changed"] if len(set(changed)) > 1 else [])
    return "; ".join(f"{text} in {', '.join(envs)}" for text, _, envs in groups), classes


def _record(result: DemoResult, missed: dict[str, NotChecked]) -> tuple[str, list[str]]:
    """Does the page's record hold? Only the checked values can say it does not."""
    names = [vr.variant.name for vr in result.variants]
    own = result.environment.label if result.environment else ""
    broken = [f for f in result.findings
              if f.failed and any(f.concerns(n) and (n not in missed or f.environment != own)
                                  for n in names)]
    if broken:
        return f"{MARK['differs']} no longer true", ["autocast-demo-stale-cell"]
    if missed:
        text = "not checked" if len(missed) == len(names) else "not all checked"
        return f"{MARK['error']} {text}", ["autocast-demo-unchecked"]
    if not result.demo.expect:
        return "not recorded", ["autocast-demo-unrecorded"]
    return f"{MARK['matches']} holds", ["autocast-demo-holds"]


def matrix(app: Sphinx, fromdocname: str, torch: str) -> list[nodes.Node]:
    env = app.env
    docs = all_docs(env)
    rows: list[tuple[str, str, DemoResult | None]] = []  # (docname, ident, result)
    for docname in _reading_order(env):
        state = docs.get(docname)
        if state is not None:
            rows.extend((docname, ident, state.results.get(ident)) for ident in state.demos)
    values, others = columns([[v.name for v in docs[d].demos[i].variants] for d, i, _ in rows])
    missed = {(d, i): not_checked(r, r.torch_version if r.made else torch)
              for d, i, r in rows if r is not None}
    checked = [vr for d, i, r in rows if r is not None for vr in r.variants
               if vr.variant.name not in missed[d, i]]
    unchecked = sum(len(docs[d].demos[i].variants) if r is None else len(missed[d, i])
                    for d, i, r in rows)
    matching = sum(vr.verdict.outcome == "matches" for vr in checked)
    lead = nodes.paragraph(
        text=(f"{_count(len(rows), 'demo')} on {_count(len({d for d, _, _ in rows}), 'page')}, "
              f"{_count(len(checked), '(demo, value) pair')} checked with torch {torch}: "
              f"compiled equals eager in {matching}"
              + (f"; {unchecked} not checked in this build." if unchecked else ".")),
        classes=["autocast-demo-provenance"],
    )
    box = nodes.container(classes=["autocast-demo", "autocast-demo-summary"])
    box += lead
    box += environments(rows, torch)
    if not rows:
        box += nodes.paragraph(text="The documentation has no demos yet.")
        return [box]

    box += nodes.paragraph(
        text=("Each row is a demo, each column a value of the config it varies: \u2713 compiled "
              "equals eager, \u2717 differs, \u26a0 raises, \u2014 not checked in this build. "
              "page records: \u2713 every outcome the demo's page records still holds."
              + (" Values that few demos use are listed together under other values."
                 if others else "")),
        classes=["autocast-demo-legend"])
    headers = ["demo", *values, *(["other values"] if others else []), "page records"]
    table = nodes.table(classes=["autocast-demo-results", "autocast-demo-matrix"])
    group = nodes.tgroup(cols=len(headers))
    table += group
    for text in headers:
        wide = {"demo": 28, "other values": 24, "page records": 16}
        group += nodes.colspec(colwidth=wide.get(text, max(10, len(text))))
    head = nodes.thead()
    header = nodes.row()
    for text in headers:
        header += cell(text)
    head += header
    group += head
    body = nodes.tbody()
    page = None
    for docname, ident, result in rows:
        if docname != page:  # one heading row per page keeps the table narrow
            page = docname
            heading = nodes.row(classes=["autocast-demo-matrix-page"])
            title = env.titles[docname].astext() if docname in env.titles else docname
            uri = app.builder.get_relative_uri(fromdocname, docname)
            link = nodes.reference("", "", nodes.Text(title), refuri=uri, internal=True)
            entry = cell(nodes.paragraph("", "", nodes.strong("", "", link)))
            entry["morecols"] = len(headers) - 1
            heading += entry
            body += heading
        body += _demo_row(app, fromdocname, docname, ident, result, values, others, torch,
                          missed.get((docname, ident), {}))
    group += body
    box += table
    return [box]


def environments(rows: list[tuple[str, str, DemoResult | None]], torch: str) -> list[nodes.Node]:
    """Where the matrix's results come from, when not only from this build: each environment,
    who made its results, and how many values changed between environments."""
    from .across import columns as envs
    from .across import heading

    said: dict[str, str] = {}
    changed = 0
    for _, _, result in rows:
        if result is None or not (result.others or result.made):
            continue
        for shown, _ in envs(result, torch):
            environment = shown.environment
            if environment is not None and heading(shown) not in said:
                said[heading(shown)] = (
                    f"torch {environment.torch}, Python {environment.python}, "
                    f"{environment.device}, {shown.made}" if shown.made and environment.torch
                    else "no result in the result sets" if shown.made or not environment.torch
                    else f"run by this build with torch {torch}")
        changed += sum("autocast-demo-changed" in across(result, vr.variant.name, torch)[1]
                       for vr in result.variants)
    if not said:
        return []
    items = nodes.bullet_list(classes=["autocast-demo-environments"])
    for label, how in said.items():
        items += nodes.list_item("", nodes.paragraph("", "", nodes.strong(text=label),
                                                     nodes.Text(f": {how}")))
    lead = nodes.paragraph(text=(
        f"Results from {_count(len(said), 'environment')}; a cell names them only where they differ"
        + (f" ({_count(changed, 'value')} of a demo changed between them)." if changed
           else " (no verdict changed between them).")), classes=["autocast-demo-provenance"])
    return [lead, items]


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
              result: DemoResult | None, values: list[str], others: bool, torch: str,
              missed: dict[str, NotChecked]) -> nodes.row:
    row = nodes.row(ids=[f"summary-{docname.replace('/', '-')}-{ident}"])
    title = all_docs(app.env)[docname].titles.get(ident, ident)
    uri = app.builder.get_relative_uri(fromdocname, docname) + "#" + ident
    link = nodes.reference("", "", nodes.Text(title), refuri=uri, internal=True)
    row += cell(nodes.paragraph("", "", link), ["autocast-demo-label"])
    by_name: dict[str, Any] = {vr.variant.name: vr for vr in result.variants} if result else {}
    names = [v.name for v in all_docs(app.env)[docname].demos[ident].variants]
    for value in values:
        if result is None and value in names:
            row += cell(f"{MARK['error']} not run", ["autocast-demo-error", "autocast-demo-unchecked"])
        elif result is not None and result.others and value in names:
            row += cell(*across(result, value, torch))
        else:
            row += cell(*_verdict(by_name.get(value), missed.get(value)))
    if others:
        row += _others(result, [n for n in names if n not in values], missed, torch)
    row += (cell(*_record(result, missed)) if result
            else cell(f"{MARK['error']} not checked", ["autocast-demo-unchecked"]))
    return row


def _others(result: DemoResult | None, names: list[str], missed: dict[str, NotChecked],
            torch: str) -> nodes.entry:
    """The demo's rarer values in one cell, each with its own mark and colour (``result``:
    None when it has not run)."""
    entry = nodes.entry(classes=["autocast-demo-others"])
    for name in names:
        if result is None:
            text, classes = f"{MARK['error']} not run", ["autocast-demo-unchecked"]
        elif result.others:
            text, classes = across(result, name, torch)
        else:
            vr = next(v for v in result.variants if v.variant.name == name)
            text, classes = _verdict(vr, missed.get(name))
        entry += nodes.paragraph("", "", nodes.strong(text=f"{name}: "),
                                 nodes.inline(text=text, classes=classes))
    return entry
