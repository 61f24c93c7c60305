"""writers.py without a build: what LaTeX and Texinfo get of a demo's caption and id, which part of
an assembled tree is whose, the LaTeX package beside the .tex files, and the results tables as the
plain-text and manual-page translators write them (Sphinx's own translators, with the visitors
tables.setup registers, on hand-made trees). HTML's visitors: tests/unit/test_html.py."""

from __future__ import annotations

import re
from io import StringIO
from types import SimpleNamespace

from docutils import frontend, nodes
from docutils.parsers import rst
from docutils.utils import new_document
from docutils.writers import manpage
from fakes import demo, ran, result
from sphinx import addnodes
from sphinx.builders.latex.nodes import captioned_literal_block
from sphinx.builders.latex.transforms import LiteralBlockTransform
from sphinx.writers.manpage import ManualPageTranslator
from sphinx.writers.text import TextTranslator
from test_html import registered

from sphinx_autocast_demo.present import set_lines, tables, writers
from sphinx_autocast_demo.present.cells import cell, table
from sphinx_autocast_demo.read.directives import results_placeholder

# -- LaTeX and Texinfo: the demo's caption and id ------------------------------------------------


def page(*children: nodes.Node) -> nodes.document:
    document = new_document("index.rst", frontend.get_default_settings(rst.Parser))
    document += children
    return document


def demo_box(ident: str = "d", caption: str | None = "The config as the snippet sees it") -> nodes.container:
    """A demo's box as the directive makes it: its caption, its code, the results' placeholder."""
    box = nodes.container(classes=["autocast-demo"], ids=[ident] if ident else [])
    if caption is not None:
        box += nodes.caption(caption, caption)
    code = nodes.literal_block("x = 1", "x = 1", language="python")
    code.source, code.line = "/docs/index.rst", 12
    box += code
    box += results_placeholder(ident=ident)
    return box


def test_latex_gets_a_demos_caption_and_code_as_one_captioned_code_block():
    box = demo_box()
    document = page(box)
    writers.CaptionedCode(document).run()
    wrapper = box[0]  # the shape a code-block with :caption: has
    assert (wrapper["literal_block"], wrapper["classes"]) == (True, ["literal-block-wrapper"])
    assert (wrapper.source, wrapper.line) == ("/docs/index.rst", 12)  # the code's
    # Then LaTeX's own transform makes the captioned block of such a code-block.
    assert writers.CaptionedCode.default_priority < LiteralBlockTransform.default_priority
    LiteralBlockTransform(document).run()
    block = box[0]
    assert isinstance(block, captioned_literal_block)
    assert [type(child) for child in block.children] == [nodes.caption, nodes.literal_block]
    assert block[0].astext() == "The config as the snippet sees it" and block[1].astext() == "x = 1"
    assert [type(child) for child in box.children] == [captioned_literal_block, results_placeholder]
    assert set(writers.CaptionedCode.formats) == {"latex", "texinfo"}  # HTML keeps the box as it is


def test_only_a_demos_caption_over_its_code_is_wrapped():
    bare = demo_box(caption=None)
    uncoded = demo_box()
    uncoded.remove(uncoded[1])  # a caption with something else under it
    theirs = nodes.container("", nodes.caption("Theirs", "Theirs"), nodes.literal_block("y", "y"))
    empty = nodes.container(classes=["autocast-demo"])
    boxes = [bare, uncoded, theirs, empty]
    before = [box.pformat() for box in boxes]
    writers.CaptionedCode(page(*boxes)).run()
    assert [box.pformat() for box in boxes] == before


def test_latex_gets_a_label_for_each_demos_id_in_front_of_its_box():
    """The matrix links to each demo by its id; LaTeX writes no label for a container's."""
    section = nodes.section("", nodes.title("Demos", "Demos"), demo_box("first"), demo_box(""),
                            demo_box("second"))
    writers.DemoLabels(page(section)).run()
    kinds = [(type(child).__name__, child["ids"]) for child in section.children[1:]]
    assert kinds == [("target", ["first"]), ("container", ["first"]), ("container", []),
                     ("target", ["second"]), ("container", ["second"])]
    assert writers.DemoLabels.formats == ("latex",)


def test_an_assembled_tree_gives_each_included_page_innermost_first_then_the_root():
    """LaTeX, Texinfo, manual pages and singlehtml resolve one tree under the root's name: the
    results in an included page are that page's, resolved before the page around them."""
    guide = addnodes.start_of_file(docname="guide")
    advanced = addnodes.start_of_file(docname="guide/advanced")
    guide += nodes.section("", advanced)
    faq = addnodes.start_of_file(docname="faq")
    document = page(guide, faq)
    parts = list(writers.documents(document, "index"))
    assert [(name, part) for part, name in parts] == [
        ("guide/advanced", advanced), ("guide", guide), ("faq", faq), ("index", document)]


def test_the_latex_package_is_copied_beside_the_tex_files_after_a_latex_build_only(tmp_path):
    calls: list[tuple] = []
    app = SimpleNamespace(add_latex_package=lambda *a: calls.append(("package", *a)),
                          add_post_transform=lambda *a: calls.append(("transform", *a)),
                          connect=lambda *a: calls.append(("connect", *a)))
    writers.setup(app)  # type: ignore[arg-type]
    (name,) = [c[1] for c in calls if c[0] == "package"]  # what \usepackage asks for
    assert ("connect", "build-finished", writers.copy_latex_package) in calls
    for fmt, exc, outdir in [("html", None, tmp_path / "html"), ("latex", None, tmp_path / "latex"),
                             ("latex", RuntimeError(), tmp_path / "failed")]:
        outdir.mkdir()
        built = SimpleNamespace(builder=SimpleNamespace(format=fmt), outdir=str(outdir))
        writers.copy_latex_package(built, exc)  # type: ignore[arg-type]
    assert not list((tmp_path / "html").iterdir()) and not list((tmp_path / "failed").iterdir())
    assert [p.name for p in (tmp_path / "latex").iterdir()] == [f"{name}.sty"]
    assert (tmp_path / "latex" / f"{name}.sty").read_bytes() == writers.LATEX_PACKAGE.read_bytes()


# -- plain text and manual pages: the results tables ---------------------------------------------


def translate(builder: str, translator: type, settings, *trees: nodes.Node,
              **config: object) -> tuple[str, str]:
    """What Sphinx's translator for ``builder`` writes of ``trees``, with the visitors tables.setup
    registers, and the warnings docutils reported."""
    warnings = StringIO()
    settings.warning_stream = warnings
    document = new_document("index", settings)
    document += trees
    made = SimpleNamespace(name=builder, format=builder, default_translator_class=translator,
                           config=SimpleNamespace(**config), env=SimpleNamespace(domains=None))
    visitor = registered().create_translator(made, document, made)  # type: ignore[arg-type]
    document.walkabout(visitor)
    body = visitor.body  # type: ignore[attr-defined]
    return (body if isinstance(body, str) else "".join(body)), warnings.getvalue()


def as_text(*trees: nodes.Node) -> str:
    text, _warnings = translate("text", TextTranslator, frontend.get_default_settings(rst.Parser), *trees,
                                text_newlines="unix", text_sectionchars="*=-~", text_add_secnumbers=False,
                                text_secnumber_suffix=". ")
    return text


def as_man(*trees: nodes.Node) -> tuple[str, str]:
    settings = frontend.get_default_settings(manpage.Writer)
    settings.title, settings.subtitle, settings.authors, settings.section = "demos", "", [], 1
    return translate("man", ManualPageTranslator, settings, *trees, today="today", copyright="",
                     version="1", project="demos", man_show_urls=False, language="en")


def page_row(title: str = "Backward inside the block", span: int = 2) -> nodes.row:
    """The matrix's row that names a page: one cell spanning the table."""
    row = nodes.row()
    row += cell(title)
    row[0]["morecols"] = span
    return row


def matrix_like(title: str = "Backward inside the block") -> tables.results_table:
    return tables.results(table(["demo", "off", "page records"], [
        page_row(title), [cell("first demo"), cell("\u2713 matches"), cell("holds")]]), "Every demo")


def test_man_pages_write_a_spanning_cell_as_that_cell_and_empty_ones_without_a_warning():
    _page, warned = as_man(table(["demo", "off", "page records"], [page_row()]))
    assert "table cell spanning" in warned  # (a table without our visitor: a warning, fails -W)
    out, warned = as_man(matrix_like())
    assert warned == ""
    rows = out.split("\n_\n")  # tbl's rule between rows
    cells = [re.findall(r"T\{\n(.*?)T\}", row, re.S) for row in rows]
    assert cells[1] == ["Backward inside the block\n", "", ""]
    assert cells[2] == ["first demo\n", "\u2713 matches\n", "holds\n"]


SET = "torch._functorch.config.backward_pass_autocast = 'same_as_forward'"
LONG_NAME = "torch._functorch.config.backward_pass_autocast.grad"


def test_text_tables_cut_no_word_at_a_columns_edge():
    # (the widths cells.table gives, at most 40: narrower than a dotted name)
    made = tables.results(table(["value", "compiled = eager?"], [
        [cell("off"), cell(f"\u2717 differs ({LONG_NAME}, max |\u0394| 5.00e-01)")]], [8, 20]), "caption")
    out = as_text(made)
    assert LONG_NAME in out and "max |\u0394|" in out
    assert "caption" not in out  # the caption is for a screen reader


def test_text_tables_keep_each_line_that_sets_a_value_whole_and_alone():
    """Pasted alone, the lines run: no other words of the cell before or after either of them
    (the text writer ran the value's name and the import together)."""
    found = result(demo(), ran("matches"), ran("matches"))
    value = set_lines.value_cell(found, found.variants[0])
    code = value.next_node(nodes.literal_block).astext().splitlines()
    assert code == ["import torch._functorch.config", SET]
    verdict = cell("\u2713 matches (the outputs and every gradient are bitwise equal to eager's)")
    made = tables.results(table(["value", "compiled = eager?"], [[value, verdict]]), "caption")
    out = as_text(made)
    first_cells = [line.split("|")[1].strip() for line in out.splitlines() if line.startswith("|")]
    assert first_cells[2:] == ["**same_as_forward**", *code]
    assert "bitwise equal to eager's)" in out  # the other cell's words still flow


def test_lines_to_copy_outside_a_table_are_a_plain_literal_block_in_text():
    out = as_text(set_lines.set_block(f"import torch._functorch.config\n{SET}"))
    assert out.splitlines() == ["   import torch._functorch.config", f"   {SET}"]
    assert "\x00" not in out


def group_of(made: nodes.table) -> nodes.tgroup:
    return next(made.findall(nodes.tgroup))


def widths(group: nodes.tgroup) -> list[int]:
    return [c["colwidth"] for c in group.findall(nodes.colspec)]


def test_a_column_is_widened_to_its_longest_word_and_line_of_code_up_to_72():
    code = "x" * 60
    longer = " ".join(["torch.float16"] * 8)  # 111 characters in words of 13
    made = table(["value", "code", "more code", "verdict"], [
        [cell("off"), cell(nodes.literal_block(code, code)), cell(nodes.literal_block(longer, longer)),
         cell(f"differs ({LONG_NAME})")]], [8, 8, 8, 8])
    writers.widen(group_of(made))
    assert widths(group_of(made)) == [8, 60, writers.CODE_WIDTH, len(LONG_NAME) + 2]  # (with its brackets)
    assert writers.CODE_WIDTH == 72


def test_widening_never_narrows_a_column_and_leaves_out_the_rows_that_span_columns():
    group = group_of(matrix_like("A-page-title-longer-than-any-column-of-the-table"))
    group[0]["colwidth"] = 30
    writers.widen(group)
    assert widths(group) == [30, 9, 12]  # "\u2713 matches", "page records"
