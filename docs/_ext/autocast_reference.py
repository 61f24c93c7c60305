"""``autocast-demo-reference``: the reference tables, generated from the code they describe.

``.. autocast-demo-reference:: conf`` lists :data:`sphinx_autocast_demo.core.config.OPTIONS`;
``.. autocast-demo-reference:: autocast-demo`` (or ``autocast-demo-setup``,
``autocast-demo-summary``) lists a directive's options from
:data:`sphinx_autocast_demo.read.options.DIRECTIVES`, the table the directives read their options
by; ``.. autocast-demo-reference:: warnings`` lists the warning subtypes of
:data:`sphinx_autocast_demo.core.subtypes.SUBTYPES`, which every warning takes its subtype from:
the page cannot drift from the code.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective

from sphinx_autocast_demo.core import config, subtypes
from sphinx_autocast_demo.read import options

if TYPE_CHECKING:
    from sphinx.application import Sphinx

logger = logging.getLogger(__name__)
#: Inline literals and Python's type names, which stay as they are in every language.
_LITERAL_ONLY = re.compile(r"``[^`]*``|\b(?:bool|int|float|str|list|tuple|dict|NoneType)\b")


def _plain_bars(text: str) -> str:
    """``|x|`` in help text means absolute value, not a reST substitution."""
    return text.replace("|", "\\|")


def _choices(choices: tuple[str, ...]) -> str:
    return (" One of " + ", ".join(f"``{c!r}``" for c in choices) + ".") if choices else ""


def rows(directive: str) -> list[list[str]]:
    """The reference table of a directive's options: option, what to write, default, what it
    does."""
    return [[f"``:{o.name}:``", o.shown_syntax, o.shown_default, o.description]
            for o in options.DIRECTIVES[directive]]


def warnings() -> list[tuple[str, str]]:
    """Each warning subtype and what it means (reST), with whether it fails the build."""
    return [(f"``{name}``", info.meaning + (". Fails the build." if info.fails else
                                            ". A warning: fails only a ``-W`` build."))
            for name, info in subtypes.SUBTYPES.items()]


class Reference(SphinxDirective):
    required_arguments = 1

    def table(self, header: list[str], rows: list[list[str]], widths: list[int]) -> nodes.table:
        # colwidths-given: the HTML writer then emits the widths, and the page wraps to them.
        table = nodes.table(classes=["autocast-demo-reference", "colwidths-given"])
        group = nodes.tgroup(cols=len(header))
        table += group
        for width in widths:
            group += nodes.colspec(colwidth=width)
        head = nodes.thead()
        group += head
        body = nodes.tbody()
        group += body
        for target, cells in ((head, header), *((body, row) for row in rows)):
            row_node = nodes.row()
            for text in cells:
                entry = nodes.entry()
                entry += self.paragraph(text)
                row_node += entry
            target += row_node
        return table

    def paragraph(self, text: str) -> nodes.paragraph:
        """``text`` (reST) as a paragraph that a translation can replace, as if the page held
        it: its source is the directive's (Sphinx's gettext builder extracts it into the
        page's catalog, and a translated build reads it from there). Code alone (an option's
        name, a default) is not a message."""
        para = nodes.paragraph(text, "", *self.state.inline_text(text, self.lineno)[0])
        if _LITERAL_ONLY.sub("", text).strip(" .,;:()-"):
            para.source, para.line = self.get_source_info()
        return para

    def definitions(self, items: list[tuple[str, str]]) -> nodes.definition_list:
        out = nodes.definition_list(classes=["autocast-demo-reference"])
        for term, text in items:
            definition = nodes.definition()
            definition += self.paragraph(text)
            out += nodes.definition_list_item(
                "", nodes.term("", "", *self.state.inline_text(term, self.lineno)[0]), definition)
        return out

    def run(self) -> list[nodes.Node]:
        what = self.arguments[0]
        if what == "warnings":
            return [self.definitions(warnings())]
        if what == "conf":
            conf_rows = [[f"``{config.PREFIX}{o.name}``", " or ".join(t.__name__ for t in o.types),
                     f"``{o.default!r}``", _plain_bars(o.description) + _choices(o.choices)]
                    for o in config.OPTIONS]
            return [self.table(["name", "type", "default", "what it does"], conf_rows,
                               [26, 10, 20, 60])]
        if what not in options.DIRECTIVES:
            logger.warning(f"autocast-demo-reference: unknown argument {what!r}",
                           location=self.get_location())
            return []
        if not options.DIRECTIVES[what]:
            return [nodes.paragraph(text=f"{what} takes no options.")]
        return [self.table(["option", "value", "default", "what it does"], rows(what),
                           [18, 20, 22, 50])]


def setup(app: Sphinx) -> dict[str, Any]:
    app.add_directive("autocast-demo-reference", Reference)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
