"""How HTML writes a results table (tables.py) for a reader who does not see it: a caption
tied to the table, ``scope`` on every header cell, each row's value (or demo) as its row
header; and, for one who does, a box that says when the table scrolls sideways.

Sphinx sets these visitors on the translator object itself (``create_translator``), so they
reach a theme's own translator class as well (pydata-sphinx-theme's and sphinx-book-theme's);
they write the table through that translator's own ``visit_table``, keeping its markup (the
box pydata-sphinx-theme puts around every table, inside ours).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from docutils import nodes

if TYPE_CHECKING:
    from sphinx.writers.html5 import HTML5Translator

#: autocast_demo.js marks the box whose table is wider than it; the CSS then shows the hint.
SCROLL = '<div class="autocast-demo-scroll" data-scroll-hint="scroll sideways">'


def visit_table(self: HTML5Translator, node: nodes.table) -> None:
    self.body.append(SCROLL)
    self.visit_table(node)


def depart_table(self: HTML5Translator, node: nodes.table) -> None:
    self.depart_table(node)
    self.body.append("</div>\n")


def visit_header(self: HTML5Translator, node: nodes.entry) -> None:
    """A ``<th>`` with its ``scope``, as docutils' ``visit_entry`` writes a cell otherwise
    (which gives a body cell a ``<td>`` and no cell a scope)."""
    row: Any = node.parent  # (docutils' writer keeps its count of columns on it)
    head = isinstance(row.parent, nodes.thead)
    atts: dict[str, Any] = {"scope": "col" if head else "row"}
    if head:
        atts["classes"] = ["head"]  # docutils' mark of a header-row cell, which themes style
    if "morerows" in node:
        atts["rowspan"] = node["morerows"] + 1
    if "morecols" in node:
        atts["colspan"] = node["morecols"] + 1
    # What visit_entry counts, for the cells after this one (is their column a stub?).
    row.column += 1 + node.get("morecols", 0)
    self.body.append(self.starttag(node, "th", "", **atts))
    self.context.append("</th>\n")


def depart_header(self: HTML5Translator, node: nodes.entry) -> None:
    self.depart_entry(node)


def visit_caption(self: HTML5Translator, node: nodes.title) -> None:
    # Not Sphinx's table title: that adds a link to the table, which a screen reader would
    # read out as part of a caption only it is given.
    self.body.append(self.starttag(node, "caption", ""))


def depart_caption(self: HTML5Translator, node: nodes.title) -> None:
    self.body.append("</caption>\n")
