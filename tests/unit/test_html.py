"""html.py: our results tables get captions, scoped header cells and row headers; no other table."""

from __future__ import annotations

from types import SimpleNamespace

from docutils import frontend, nodes
from docutils.parsers import rst
from docutils.utils import new_document

from sphinx_autocast_demo.present import html

OURS = ('<table class="docutils autocast-demo-results"><thead><tr><th class="head">value</th>'
        '<th scope="col">x</th></tr></thead><tbody><tr class="row-even"><td class="v"><p>off</p></td>'
        '<td>y</td></tr>\n<tr><td>sf</td><td>z</td></tr></tbody></table>')


def test_a_table_gets_scoped_headers_row_headers_and_a_box_that_scrolls():
    assert html._mend(OURS) == (
        '<div class="autocast-demo-scroll" data-scroll-hint="scroll sideways">'
        '<table class="docutils autocast-demo-results"><thead><tr><th scope="col" class="head">value</th>'
        '<th scope="col">x</th></tr></thead><tbody><tr class="row-even"><th scope="row" class="v">'
        '<p>off</p></th><td>y</td></tr>\n<tr><th scope="row">sf</th><td>z</td></tr></tbody></table></div>')


def test_only_our_tables_in_a_page_are_mended():
    other = '<table class="docutils"><tbody><tr><td>a</td></tr></tbody></table>'
    context = {"body": f"<p>x</p>{other}{OURS}"}
    html.mend_tables(None, "index", "page.html", context, None)  # type: ignore[arg-type]
    assert context["body"] == f"<p>x</p>{other}{html._mend(OURS)}"
    untouched = {"body": other}
    html.mend_tables(None, "index", "page.html", untouched, None)  # type: ignore[arg-type]
    assert untouched == {"body": other}


def doctree() -> nodes.document:
    document = new_document("index", frontend.get_default_settings(rst.Parser))  # type: ignore[attr-defined]
    box = nodes.container(classes=["autocast-demo"], ids=["backward-inside"])
    box += nodes.caption(text="Backward inside the block")
    box += nodes.table(classes=["autocast-demo-results"])
    titled = nodes.table(classes=["autocast-demo-results"])
    titled += nodes.title(text="mine")
    document += [box, nodes.table(classes=["docutils"]), titled,
                 nodes.table(classes=["autocast-demo-results", "autocast-demo-matrix"])]
    return document


def test_each_results_table_gets_a_caption_and_an_id():
    tree = doctree()
    html.caption_tables(SimpleNamespace(builder=SimpleNamespace(format="html")), tree, "index")  # type: ignore[arg-type]
    tables = list(tree.findall(nodes.table))
    titles = [t.next_node(nodes.title).astext() if t.next_node(nodes.title) else None for t in tables]
    assert titles == ["Results of Backward inside the block: compiled against eager, value by value",
                      None, "mine", "Every demo, value by value, in each environment"]
    assert [t["ids"] for t in tables] == [["backward-inside-table-0"], [], [], ["autocast-demo-table-3"]]
    latex = doctree()
    html.caption_tables(SimpleNamespace(builder=SimpleNamespace(format="latex")), latex, "index")  # type: ignore[arg-type]
    assert [t.astext() for t in latex.findall(nodes.title)] == ["mine"]  # only the one written
