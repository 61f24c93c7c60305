"""What the HTML of a results table needs for a reader who does not see it: a caption tied to
the table, ``scope`` on every header cell, and each row's value (or demo) as its row header.

The tables are plain docutils nodes that every builder writes (render.py, summary.py);
docutils' HTML writer gives header cells no ``scope`` and body cells no ``<th>``, and a theme
may bring its own translator, so the finished page's HTML is mended instead, for our tables
only. A wide table is also marked as one that scrolls, which the CSS says in words.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from docutils import nodes

if TYPE_CHECKING:
    from sphinx.application import Sphinx

TABLE = re.compile(r'<table\b[^>]*\bautocast-demo-results\b[^>]*>.*?</table>', re.S)
ROW = re.compile(r"(<tbody>)(.*?)(</tbody>)", re.S)
FIRST_CELL = re.compile(r"(<tr[^>]*>\s*)<td\b([^>]*)>(.*?)</td>", re.S)


def setup(app: Sphinx) -> None:
    # After render.resolve (500) and summary's matrix, which make the tables.
    app.connect("doctree-resolved", caption_tables, priority=650)
    app.connect("html-page-context", mend_tables)


def caption_tables(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    """A ``<caption>`` for each results table: the demo's own caption where it has one."""
    if app.builder.format != "html":
        return
    for number, table in enumerate(doctree.findall(nodes.table)):
        if "autocast-demo-results" not in table["classes"] or table.next_node(nodes.title):
            continue
        box = table.parent
        while box is not None and not (isinstance(box, nodes.container)
                                       and "autocast-demo" in box["classes"]):
            box = box.parent
        if "autocast-demo-matrix" in table["classes"]:
            text = "Every demo, value by value, in each environment"
        else:
            named = box.next_node(nodes.caption) if box is not None else None
            what = named.astext() if named is not None else "this demo"
            text = f"Results of {what}: compiled against eager, value by value"
        table.insert(0, nodes.title(text, text, classes=["autocast-demo-table-caption"]))
        if not table["ids"]:  # a table with a caption is a link target for Sphinx's writer
            owner = box["ids"][0] if box is not None and box["ids"] else "autocast-demo"
            table["ids"].append(f"{owner}-table-{number}")


def mend_tables(app: Sphinx, pagename: str, templatename: str, context: dict[str, Any],
                doctree: nodes.document | None) -> None:
    body = context.get("body")
    if isinstance(body, str) and "autocast-demo-results" in body:
        context["body"] = TABLE.sub(lambda m: _mend(m.group(0)), body)


def _mend(table: str) -> str:
    table = re.sub(r"<th(?=[\s>])(?![^>]*\bscope=)", '<th scope="col"', table)  # (not <thead>)
    table = ROW.sub(lambda m: m.group(1) + _row_headers(m.group(2)) + m.group(3), table)
    # The box that scrolls a table too wide for the page says so (docs CSS shows the hint).
    return f'<div class="autocast-demo-scroll" data-scroll-hint="scroll sideways">{table}</div>'


def _row_headers(rows: str) -> str:
    return FIRST_CELL.sub(lambda m: f'{m.group(1)}<th scope="row"{m.group(2)}>{m.group(3)}</th>', rows)
