"""tables.py and html.py: a results table's header cells and caption, written by the HTML visitors
that Sphinx sets on a translator; no other table changes."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from bs4 import BeautifulSoup
from docutils import frontend, nodes
from docutils.utils import new_document
from docutils.writers import html5_polyglot
from sphinx.registry import SphinxComponentRegistry

from sphinx_autocast_demo.present import html, tables
from sphinx_autocast_demo.present.cells import cell, table
from sphinx_autocast_demo.present.set_lines import set_block

CAPTION = "Results of Backward inside the block: compiled against eager, value by value"


def results() -> tables.results_table:
    page = nodes.row()
    page += cell("A page")
    page[0]["morecols"] = 2  # the matrix's row that names a page
    return tables.results(table(["value", "compiled = eager?", "as recorded?"], [
        [cell("off", ["autocast-demo-value"]), cell("\u2713 matches eager"), cell("yes")],
        page,
        [cell("sf", ["autocast-demo-value"]), cell("\u2717 differs"), cell("no")],
    ]), CAPTION)


def test_the_header_row_and_each_rows_first_cell_become_header_cells():
    made = results()
    assert isinstance(made, nodes.table) and made["classes"] == ["autocast-demo-results"]
    assert isinstance(made[0], tables.table_caption) and made[0].astext() == CAPTION
    rows = list(made.findall(nodes.row))
    kinds = [[type(entry).__name__ for entry in row.children] for row in rows]
    assert kinds == [["header_cell"] * 3, ["header_cell", "entry", "entry"], ["header_cell"],
                     ["header_cell", "entry", "entry"]]
    assert rows[1][0]["classes"] == ["autocast-demo-value"] and rows[1][0].astext() == "off"
    assert rows[2][0]["morecols"] == 2


def registered() -> SphinxComponentRegistry:
    """A registry holding what tables.setup registers (Sphinx's own registry class)."""
    registry = SphinxComponentRegistry()
    app = SimpleNamespace(registry=registry, connect=lambda *args, **kwargs: None,
                          add_node=lambda node, override=False, **visitors:
                          registry.add_translation_handlers(node, **visitors))
    tables.setup(app)  # type: ignore[arg-type]
    return registry


def write(builder: str, *trees: nodes.Element,
          registry: SphinxComponentRegistry | None = None) -> BeautifulSoup:
    """The HTML of ``trees``, by the translator Sphinx makes for ``builder`` (of format html)
    with the visitors tables.setup registers: docutils' own translator, which (unlike Sphinx's)
    writes a node it has no visitor for by no other kind, so every kind of ours needs one."""
    registry = registry or registered()
    document = new_document("index", frontend.get_default_settings(html5_polyglot.Writer))  # type: ignore[attr-defined]
    document += trees
    made = SimpleNamespace(name=builder, format="html",
                           default_translator_class=html5_polyglot.HTMLTranslator)
    translator = registry.create_translator(made, document)  # type: ignore[arg-type]
    document.walkabout(translator)
    return BeautifulSoup("".join(translator.body), "html.parser")  # type: ignore[attr-defined]


@pytest.mark.parametrize("builder", ["html", "dirhtml", "singlehtml", "epub"])
def test_html_writes_scoped_headers_row_headers_the_caption_and_a_box_that_scrolls(builder):
    other = table(["a", "b"], [[cell("1"), cell("2")]])  # somebody else's table stays as it was
    soup = write(builder, results(), other)
    ours, theirs = soup.find_all("table")
    box = ours.parent
    assert box.name == "div" and box["class"] == ["autocast-demo-scroll"]
    assert box["data-scroll-hint"] == "scroll sideways"
    caption = ours.find("caption")
    assert caption is ours.find() and caption["class"] == ["autocast-demo-table-caption"]
    assert caption.get_text() == CAPTION and not caption.find("a")  # no permalink to read out
    head = ours.select("thead tr > *")
    assert [(c.name, c.get("scope"), c.get("class")) for c in head] == [("th", "col", ["head"])] * 3
    body = [row.find_all(["td", "th"]) for row in ours.select("tbody tr")]
    assert [[(c.name, c.get("scope")) for c in row] for row in body] == [
        [("th", "row"), ("td", None), ("td", None)], [("th", "row")],
        [("th", "row"), ("td", None), ("td", None)]]
    assert body[0][0]["class"] == ["autocast-demo-value"] and body[1][0]["colspan"] == "3"
    assert theirs.parent.name != "div" and not theirs.find("caption")
    assert [c.name for c in theirs.select("tbody td, tbody th")] == ["td", "td"]
    assert not theirs.select("[scope]")


def test_every_builder_that_writes_the_tables_has_a_visitor_for_each_kind():
    registry = registered()
    for fmt in ("html", "latex", "texinfo", "text", "man"):
        assert set(registry.translation_handlers[fmt]) == {
            "results_table", "header_cell", "table_caption", "set_code"}, fmt


class theirs(nodes.General, nodes.Element):
    """Another extension's node, with visitors under a builder's name as well as its format."""


def visit_theirs(self, node):
    self.body.append("<aside>theirs</aside>")
    raise nodes.SkipNode


def test_visitors_registered_under_a_builders_name_do_not_leave_ours_out():
    # (Sphinx then looks only at the visitors under that name: without tables.by_name, docutils'
    # translator would have none for our nodes and refuse them.)
    registry = registered()
    registry.add_translation_handlers(theirs, html=(visit_theirs, None),
                                      singlehtml=(visit_theirs, None))
    for name in ("singlehtml", "dirhtml"):
        tables.by_name(SimpleNamespace(  # type: ignore[arg-type]
            registry=registry, builder=SimpleNamespace(name=name, format="html")))
    assert "dirhtml" not in registry.translation_handlers  # (it would hide everybody else's)
    for name in ("singlehtml", "dirhtml", "html"):
        soup = write(name, results(), theirs(), registry=registry)
        assert soup.find("aside").get_text() == "theirs", name
        assert soup.select("tbody th[scope=row]") and soup.find("caption"), name


LINES = "import torch._functorch.config\ntorch._functorch.config.backward_pass_autocast = 'same_as_forward'"


def test_lines_to_copy_break_only_between_the_words_of_a_name():
    # docutils' translator: the lines as one text (Sphinx's highlights them: see below).
    pre = write("html", set_block(LINES)).find("pre")
    assert pre.get_text() == LINES  # what a copy takes: <wbr> is no text
    pieces = pre.decode_contents().split("<wbr/>")
    # Each piece ends where a dotted name may break: after a dot, or a word's underscore.
    assert all(piece.endswith((".", "_")) for piece in pieces[:-1]), pieces
    assert "torch._functorch" not in pre.decode_contents()  # (a break after the dot)
    assert "_<wbr/>functorch" not in pre.decode_contents()  # (no break after a leading one)


def test_highlighted_lines_break_after_a_dot_token_and_inside_names_only():
    pygments = ('<span class="n">torch</span><span class="o">.</span><span class="n">_functorch'
                '</span> <span class="o">=</span> <span class="mf">1.5</span> <span class="s1">'
                '&#39;same_as_forward&#39;</span>')
    made = html.breakable(pygments)
    assert made == ('<span class="n">torch</span><span class="o">.<wbr></span><span class="n">'
                    '_functorch</span> <span class="o">=</span> <span class="mf">1.5</span> '
                    '<span class="s1">&#39;same_<wbr>as_<wbr>forward&#39;</span>')
