"""present/cells.py's one table of marks and colours: every mark LaTeX can write, and no other
module spells one itself."""

from __future__ import annotations

import ast
from pathlib import Path

from sphinx_autocast_demo.present.cells import LOOKS, MARK, marked, plain
from sphinx_autocast_demo.present.writers import LATEX_PACKAGE

PACKAGE = Path(__file__).parents[2] / "sphinx_autocast_demo"
DASH = "\u2014"  # every font has it


def test_latex_declares_every_mark():
    sty = LATEX_PACKAGE.read_text(encoding="utf-8").lower()
    for mark in {look.mark for look in LOOKS.values()} - {"", DASH}:
        code = f"{ord(mark):04x}"
        assert f"\\newunicodechar{{^^^^{code}}}" in sty and f"\\declareunicodecharacter{{{code}}}" in sty


def spelled(source: str, marks: set[str]) -> bool:
    """Does code (not a comment, not a docstring) of ``source`` hold one of ``marks``?"""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef)
                  and node.body and isinstance(node.body[0], ast.Expr)}
    return any(isinstance(node, ast.Constant) and isinstance(node.value, str)
               and id(node) not in docstrings and any(m in node.value for m in marks)
               for node in ast.walk(tree))


def test_only_the_table_spells_a_mark():
    marks = {look.mark for look in LOOKS.values()} - {"", DASH}
    found = {str(path.relative_to(PACKAGE)) for path in PACKAGE.rglob("*.py")
             if path.name != "cells.py" and spelled(path.read_text(encoding="utf-8"), marks)}
    assert found == set()
    assert spelled('legend = "\\u2713 matches"', marks)  # (the scan finds one: it can fail)
    assert not spelled('"""\u2713 in a docstring"""', marks)


def test_a_cell_takes_its_mark_and_colour_from_the_table():
    # A record says whether it holds in words: no mark of a verdict (issue 47).
    assert marked("broken", "no: records matches") == ("no: records matches",
                                                      ["autocast-demo-stale-cell"])
    assert marked("differs", "differs") == (f"{MARK['differs']} differs", ["autocast-demo-differs"])
    assert marked("error", "not run", "autocast-demo-unchecked") == (
        f"{DASH} not run", ["autocast-demo-error", "autocast-demo-unchecked"])
    assert marked("unrecorded", "not recorded") == ("not recorded", ["autocast-demo-unrecorded"])
    assert plain("unchecked", "records x (not checked)") == ("records x (not checked)",
                                                            ["autocast-demo-unchecked"])
