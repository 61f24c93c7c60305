"""Long names in tables wrap after a ``_`` or a ``.``, never between two letters.

``autocast_demo_values`` in a narrow cell otherwise breaks as ``autocast_demo_valu|es`` (CSS's
``overflow-wrap: anywhere``) or widens the page. Here each inline literal of a table gets a
``<wbr>`` after every ``_`` and ``.`` inside a name: a break is allowed there and only there, and
a copy takes the name as it is (``<wbr>`` is no text).
"""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

from docutils import nodes

# Where a name may break: the rule the results tables' lines to copy follow.
from sphinx_autocast_demo.present.html import NAME_JOINT

if TYPE_CHECKING:
    from sphinx.application import Sphinx


def allow_breaks(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if app.builder.format != "html":
        return
    for literal in list(doctree.findall(nodes.literal)):
        # Tables only: running text wraps between words already, and a heading's name is
        # better whole (the stylesheet lets a heading's code wrap where it must).
        if len(literal.children) != 1 or not isinstance(literal[0], nodes.Text) or not any(
                isinstance(up, nodes.table) for up in _ancestors(literal)):
            continue
        text = literal.astext()
        ends = [0, *(joint.end() for joint in NAME_JOINT.finditer(text))]
        if len(ends) == 1:
            continue
        pieces: list[nodes.Node] = []
        for start, end in itertools.pairwise([*ends, len(text)]):
            if pieces:
                pieces.append(nodes.raw("", "<wbr>", format="html"))
            pieces.append(nodes.Text(text[start:end]))
        literal.children = []
        literal.extend(pieces)


def _ancestors(node: nodes.Node):
    while node.parent is not None:
        node = node.parent
        yield node


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("doctree-resolved", allow_breaks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
