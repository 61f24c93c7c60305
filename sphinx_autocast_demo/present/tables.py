"""The node kinds of a results table, and which visitors write them for each builder.

cells.table builds a table of plain docutils nodes; :func:`results` gives it these kinds: the
table itself, its header cells (each column's name, each row's value, demo or page) and a
caption for a reader who does not see the table. Each kind extends the docutils node it is, so
a translator that knows none of them (Sphinx's fall back along a node's classes) writes a plain
table with a title. setup() registers, per builder format, what differs from that (and
by_name, under a builder's own name where Sphinx would look only there): HTML writes
``<th scope>``, the caption, a box that says when the table scrolls and lines to copy that
break only between words (html.py); plain text
and manual pages lay the table out as their writers can (writers.py). Only HTML writes the
caption: it is for a screen reader (the CSS hides it), and LaTeX would print it as a numbered
table's caption under the demo's own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docutils import nodes

from . import html, writers

if TYPE_CHECKING:
    from collections.abc import Callable

    from sphinx.application import Sphinx

    Visitors = tuple[Callable[[Any, Any], None], Callable[[Any, Any], None] | None]


class results_table(nodes.table):
    """A table of results (a demo's, or the matrix of every demo)."""


class header_cell(nodes.entry):
    """A cell that names its column (in the header row) or its row (a row's first cell)."""


class table_caption(nodes.title):
    """What the table shows, said in one line for a screen reader; written by HTML only."""


class set_code(nodes.literal_block):
    """The lines that set a value, to copy (a results table's value cell, a page's legend):
    HTML lets them break only after a ``.`` or between the words of a name, never between two
    letters of one; every other builder writes the literal block they are."""


def results(table: nodes.table, caption: str) -> results_table:
    """``table`` (cells.table's) as a results table with ``caption``: every cell of its header
    row and the first cell of each row of its body are header cells."""
    out = results_table(table.rawsource, table_caption(caption, caption,
                                                       classes=["autocast-demo-table-caption"]),
                        *table.children, **table.attributes)
    for head in out.findall(nodes.thead):
        for row in head.children:
            for entry in list(row.children):
                _as_header(entry)
    for body in out.findall(nodes.tbody):
        for row in body.children:
            if row.children:
                _as_header(row.children[0])
    return out


def _as_header(entry: nodes.Node) -> None:
    if isinstance(entry, nodes.entry) and not isinstance(entry, header_cell):
        entry.replace_self(header_cell(entry.rawsource, *entry.children, **entry.attributes))


def _as(kind: str) -> Visitors:
    """Visitors that write one of our kinds as the docutils node ``kind`` it extends, with the
    translator's own methods (a theme's, where it has its own)."""
    def visit(self: Any, node: nodes.Element) -> None:
        getattr(self, f"visit_{kind}")(node)

    def depart(self: Any, node: nodes.Element) -> None:
        getattr(self, f"depart_{kind}")(node)

    return visit, depart


def _skip(self: Any, node: nodes.Element) -> None:
    raise nodes.SkipNode


_TABLE, _ENTRY, _CODE, _SKIP = _as("table"), _as("entry"), _as("literal_block"), (_skip, None)
#: Each kind's visitors, by builder format. The XML builders write every node as it is.
VISITORS: dict[type[nodes.Element], dict[str, Visitors]] = {
    results_table: {"html": (html.visit_table, html.depart_table), "latex": _TABLE,
                    "texinfo": _TABLE, "text": (writers.visit_text_table, _TABLE[1]),
                    "man": (writers.visit_man_table, _TABLE[1])},
    header_cell: {"html": (html.visit_header, html.depart_header), "latex": _ENTRY,
                  "texinfo": _ENTRY, "text": _ENTRY, "man": _ENTRY},
    table_caption: {"html": (html.visit_caption, html.depart_caption), "latex": _SKIP,
                    "texinfo": _SKIP, "text": _SKIP, "man": _SKIP},
    set_code: {"html": (html.visit_code, html.depart_code), "latex": _CODE, "texinfo": _CODE,
               "text": (writers.visit_text_code, _CODE[1]), "man": _CODE},
}


def setup(app: Sphinx) -> None:
    for kind, visitors in VISITORS.items():
        app.add_node(kind, override=False, **visitors)
    # After any other extension's, which may register visitors itself then.
    app.connect("builder-inited", by_name, priority=900)


def by_name(app: Sphinx) -> None:
    """Our visitors also under the builder's name where another extension registered some
    there: Sphinx then gives a translator only those (``create_translator``)."""
    name, kind_of_output = app.builder.name, app.builder.format
    if name == kind_of_output or name not in app.registry.translation_handlers:
        return
    for kind, visitors in VISITORS.items():
        if kind_of_output in visitors:
            app.registry.add_translation_handlers(kind, **{name: visitors[kind_of_output]})
