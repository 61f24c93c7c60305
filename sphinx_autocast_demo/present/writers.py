"""What the non-HTML builders need of the results: LaTeX's marks, captions LaTeX and Texinfo
accept, plain-text tables whose lines of code stay whole and alone, and manual pages' tables
without a cell that spans columns.

The result nodes are docutils nodes that every builder writes (render.py, tables.py); what one
writer cannot take as it is gets mended here, for that writer only: in a post-transform where
Sphinx's own transforms must see the change, else in that writer's visitor of the results
table (registered in tables.py), just before the writer lays the table out.
"""

from __future__ import annotations

import re
import shutil
from itertools import groupby
from pathlib import Path
from typing import TYPE_CHECKING, Any

from docutils import nodes
from sphinx import addnodes
from sphinx.transforms.post_transforms import SphinxPostTransform
from sphinx.writers.text import Cell, Table, my_wrap

from ..read.directives import demo_boxes

if TYPE_CHECKING:
    from collections.abc import Iterator

    from sphinx.application import Sphinx
    from sphinx.writers.manpage import ManualPageTranslator
    from sphinx.writers.text import TextTranslator

#: Declares ✓ ✗ ⚠ (and Δ for pdflatex) for every LaTeX engine: see the file itself.
LATEX_PACKAGE = Path(__file__).parent / "latex" / "sphinxautocastdemo.sty"


def setup(app: Sphinx) -> None:
    app.add_latex_package(LATEX_PACKAGE.stem)
    app.add_post_transform(CaptionedCode)
    app.add_post_transform(DemoLabels)
    app.connect("build-finished", copy_latex_package)


class CaptionedCode(SphinxPostTransform):
    """A demo's ``:caption:`` as LaTeX and Texinfo caption code: the caption and the code in a
    ``literal_block`` container, the shape a ``code-block`` with ``:caption:`` has.

    Left in the demo's box, LaTeX writes a ``\\caption`` outside any float (an error that stops
    the PDF) and Texinfo says "caption not inside a figure".
    """

    # Before LaTeX's own LiteralBlockTransform (400), which turns the container into the
    # captioned block its writer expects.
    default_priority = 390
    formats = ("latex", "texinfo")

    def run(self, **kwargs: Any) -> None:
        for box in demo_boxes(self.document):
            if not box.children:
                continue
            caption = box.children[0]
            code = box.children[1] if len(box.children) > 1 else None
            if not isinstance(caption, nodes.caption) or not isinstance(code, nodes.literal_block):
                continue
            box.remove(caption)
            box.remove(code)
            wrapper = nodes.container("", caption, code, literal_block=True,
                                      classes=["literal-block-wrapper"])
            wrapper.source, wrapper.line = code.source, code.line
            box.insert(0, wrapper)


class DemoLabels(SphinxPostTransform):
    """Each demo's id as a LaTeX label. LaTeX writes none for a container's id, so the
    matrix's link to a demo led nowhere in the PDF; a target in front of the demo carries it."""

    default_priority = 390
    formats = ("latex",)

    def run(self, **kwargs: Any) -> None:
        for box in demo_boxes(self.document):
            if box["ids"]:
                box.parent.insert(box.parent.index(box), nodes.target("", "", ids=list(box["ids"])))


def documents(doctree: nodes.document, docname: str) -> Iterator[tuple[nodes.Element, str]]:
    """Each document's part of ``doctree``, innermost first, with its name: LaTeX, singlehtml
    and the like assemble one tree of the included documents (each under a ``start_of_file``)."""
    parts = sorted(doctree.findall(addnodes.start_of_file), key=_depth, reverse=True)
    for part in parts:
        yield part, part["docname"]
    yield doctree, docname


def _depth(node: nodes.Node) -> int:
    depth = 0
    while node.parent is not None:
        node, depth = node.parent, depth + 1
    return depth


def copy_latex_package(app: Sphinx, exc: Exception | None) -> None:
    """Put the package beside the ``.tex`` files, where ``latexmk`` (``make latexpdf``) finds it."""
    if exc is None and app.builder.format == "latex":
        shutil.copyfile(LATEX_PACKAGE, Path(app.outdir) / LATEX_PACKAGE.name)


def visit_man_table(self: ManualPageTranslator, node: nodes.table) -> None:
    """Manual pages: a cell that spans columns (the matrix's row naming a page) as that cell
    and empty ones. docutils' man writer cannot span and warns, which fails a ``-W`` build."""
    for entry in list(node.findall(nodes.entry)):
        more = entry.attributes.pop("morecols", 0)
        for _ in range(more):
            entry.parent.insert(entry.parent.index(entry) + 1, nodes.entry())
    self.visit_table(node)


_WORD = re.compile(r"\S+")
#: A line of code up to this long stays on one line of its cell; a longer one (a list of
#: autocast kwargs) breaks between words, so that the table still fits a wide terminal.
CODE_WIDTH = 72


def visit_text_table(self: TextTranslator, node: nodes.table) -> None:
    """Plain text: each column of a results table as wide as its longest word and line of code
    (up to ``CODE_WIDTH``), each line of code alone, where the text writer would run a cell's
    lines together and cut words at the column's edge."""
    for group in node.findall(nodes.tgroup):
        widen(group)
    self.visit_table(node)
    self.table = _CodeKeepingTable()


#: Starts a line of code in a results table's cell (text): no text of a page holds it.
_CODE_LINE = "\x00"


def visit_text_code(self: TextTranslator, node: nodes.literal_block) -> None:
    """Lines to copy: in a results table each is marked, for :class:`_CodeKeepingCell`."""
    if not isinstance(getattr(self, "table", None), _CodeKeepingTable):
        self.visit_literal_block(node)
        return
    self.new_state(0)
    self.add_text("\n".join(_CODE_LINE + line for line in node.astext().splitlines()))
    self.end_state(wrap=False)
    raise nodes.SkipNode


class _CodeKeepingTable(Table):
    def add_cell(self, cell: Cell) -> None:
        # The translator makes every cell a plain Cell (visit_entry): ours wrap otherwise.
        cell.__class__ = _CodeKeepingCell
        super().add_cell(cell)


class _CodeKeepingCell(Cell):
    """Wraps its words as the text writer does, and each line of code alone and whole (one
    over ``CODE_WIDTH`` breaks between its words, as the writer breaks them)."""

    def wrap(self, width: int) -> None:
        self.wrapped = []
        for code, lines in groupby(self.text.splitlines(), lambda line: line.startswith(_CODE_LINE)):
            if not code:
                self.wrapped += my_wrap("\n".join(lines), width)
                continue
            for line in (line.removeprefix(_CODE_LINE) for line in lines):
                self.wrapped += [line] if len(line) <= max(width, CODE_WIDTH) else my_wrap(line, width)


def widen(group: nodes.tgroup) -> None:
    colspecs = [c for c in group.children if isinstance(c, nodes.colspec)]
    for row in group.findall(nodes.row):
        entries = [e for e in row.children if isinstance(e, nodes.entry)]
        if len(entries) != len(colspecs):  # a cell that spans columns (the matrix's page rows)
            continue
        for colspec, entry in zip(colspecs, entries, strict=True):
            words = [len(w) for w in _WORD.findall(entry.astext())]
            lines = [len(line) for block in entry.findall(nodes.literal_block)
                     for line in block.astext().splitlines()]
            code = min(CODE_WIDTH, max(lines, default=0))
            colspec["colwidth"] = max(colspec["colwidth"], code, *words, 1)
