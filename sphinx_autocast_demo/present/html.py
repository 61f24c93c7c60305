"""How HTML writes a results table (tables.py) for a reader who does not see it: a caption
tied to the table, ``scope`` on every header cell, each row's value (or demo) as its row
header; and, for one who does, a box that says when the table scrolls sideways, and lines to
copy that break only where a dotted name may.

Sphinx sets these visitors on the translator object itself (``create_translator``), so they
reach a theme's own translator class as well (pydata-sphinx-theme's and sphinx-book-theme's);
they write the table through that translator's own ``visit_table``, keeping its markup (the
box pydata-sphinx-theme puts around every table, inside ours).
"""

from __future__ import annotations

import re
from html import escape
from typing import TYPE_CHECKING, Any

from docutils import nodes

from ..core.i18n import _

if TYPE_CHECKING:
    from sphinx.writers.html5 import HTML5Translator


def scroll_box() -> str:
    """The box around a results table, in the page's language: the hint it shows when
    autocast_demo.js marks its table wider than it, and each column's name, which a phone's card
    puts before each cell (``--acd-col-*``: the stylesheet cannot read a translation itself)."""
    from .cells import headers  # (here: every build registers these visitors, few write a table)

    names = "; ".join(f"--acd-col-{column}: {_css_string(_card_label(name))}"
                      for column, name in headers().items())
    hint = _("scroll sideways")  # (its own line: Babel reads no call inside an f-string)
    return f'<div class="autocast-demo-scroll" data-scroll-hint="{escape(hint)}" style="{escape(names)}">'


def _card_label(name: str) -> str:
    """``compiled = eager? ``, ``gradient dtypes: ``: a question needs no colon."""
    return f"{name} " if name.endswith(("?", "\uff1f")) else f"{name}: "


def _css_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", " ") + '"'


def visit_table(self: HTML5Translator, node: nodes.table) -> None:
    self.body.append(scroll_box())
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


# A tag, or the text between two tags (Pygments puts each name and each dot in a span of its own).
_PART = re.compile(r"(<[^>]*>)|([^<]+)")
# Between the words of a name (``backward_|pass_|autocast``), not after a leading underscore;
# after the dot of an attribute where the text is not highlighted (one text for the whole line).
NAME_JOINT = re.compile(r"(?<=[A-Za-z0-9])_(?=[A-Za-z0-9])|(?<=[A-Za-z0-9_])\.(?=[A-Za-z_])")


def breakable(html: str) -> str:
    """``html`` with a line break allowed (``<wbr>``) after each dot that is a token of its own
    and between the words of each name: on a phone a long line to copy then wraps as a dotted
    name does, never between two letters. ``<wbr>`` is no text: a copy takes the line as it is."""
    def mend(found: re.Match[str]) -> str:
        tag, text = found.groups()
        if tag:
            return tag
        return ".<wbr>" if text == "." else NAME_JOINT.sub(lambda m: m.group() + "<wbr>", text)

    return _PART.sub(mend, html)


def visit_code(self: HTML5Translator, node: nodes.literal_block) -> None:
    """Lines to copy (tables.set_code), written by the translator's own ``visit_literal_block``
    (Sphinx's highlights them and skips the text; docutils' writes the text as children), then
    made breakable between words."""
    start = len(self.body)
    try:
        self.visit_literal_block(node)
    except nodes.SkipNode:
        self.body[start:] = [breakable(part) for part in self.body[start:]]
        raise
    self.context.append(start)


def depart_code(self: HTML5Translator, node: nodes.literal_block) -> None:
    start = self.context.pop()
    self.depart_literal_block(node)
    self.body[start:] = [breakable(part) for part in self.body[start:]]
