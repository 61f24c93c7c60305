"""Long names in tables wrap after a ``_`` or a ``.``, never between two letters.

``autocast_demo_values`` in a narrow cell otherwise breaks as ``autocast_demo_valu|es`` (CSS's
``overflow-wrap: anywhere``) or widens the page. Here each inline literal of a table gets a
``<wbr>`` after every ``_`` and ``.`` inside a name: a break is allowed there and only there, and
a copy takes the name as it is (``<wbr>`` is no text).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from docutils import nodes

if TYPE_CHECKING:
    from sphinx.application import Sphinx

#: After a ``_`` or ``.`` with a name's character on each side.
JOINT = re.compile(r"(?<=[A-Za-z0-9])([_.])(?=[A-Za-z0-9_])")


def allow_breaks(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    if app.builder.format != "html":
        return
    for literal in list(doctree.findall(nodes.literal)):
        # Tables only: running text wraps between words already, and a heading's name is
        # better whole (the stylesheet lets a heading's code wrap where it must).
        if len(literal.children) != 1 or not isinstance(literal[0], nodes.Text) or not any(
                isinstance(up, nodes.table) for up in _ancestors(literal)):
            continue
        parts = JOINT.split(literal.astext())
        if len(parts) == 1:
            continue
        pieces: list[nodes.Node] = []
        for index, part in enumerate(parts):
            if index % 2:  # a joint: it ends the text before it, then the break
                pieces[-1] = nodes.Text(pieces[-1].astext() + part)
                pieces.append(nodes.raw("", "<wbr>", format="html"))
            elif part:
                pieces.append(nodes.Text(part))
        literal.children = []
        literal.extend(pieces)


def _ancestors(node: nodes.Node):
    while node.parent is not None:
        node = node.parent
        yield node


def setup(app: Sphinx) -> dict[str, object]:
    app.connect("doctree-resolved", allow_breaks)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
