"""core/subtypes.py: every warning subtype the package's source names is in the one table, and
the reference page lists that table."""

from __future__ import annotations

import ast
import importlib.util
import sys
from pathlib import Path
from typing import get_args

from sphinx_autocast_demo.core.subtypes import SUBTYPES, WARNING_TYPE, Subtype, ours

ROOT = Path(__file__).parents[2]
PACKAGE = ROOT / "sphinx_autocast_demo"


def named(source: str) -> set[str]:
    """Every subtype a module's source names as a literal: ``subtype="x"`` (a warning, a
    Finding), ``ours("x")``, ``f.subtype == "x"`` (or ``in ("x", ...)``), ``kind="x"`` (a
    check report's case) and ``is_suppressed_warning(WARNING_TYPE, "x", ...)``."""
    found: set[str] = set()

    def strings(node: ast.AST) -> list[str]:
        items = node.elts if isinstance(node, ast.Tuple | ast.List | ast.Set) else [node]
        return [i.value for i in items if isinstance(i, ast.Constant) and isinstance(i.value, str)]

    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call):
            callee = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            for keyword in node.keywords:
                # (``kind`` names other things elsewhere: a tensor's, a run error's)
                if keyword.arg == "subtype" or (keyword.arg == "kind" and callee in ("Case", "replace")):
                    found.update(strings(keyword.value))
            if callee == "ours" and node.args:
                found.update(strings(node.args[0]))
            if callee == "is_suppressed_warning" and len(node.args) > 1:
                found.update(strings(node.args[1]))
        elif (isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute)
              and node.left.attr == "subtype"):
            for comparator in node.comparators:
                found.update(strings(comparator))
    return found


def used() -> dict[str, set[str]]:
    return {str(path.relative_to(ROOT)): named(path.read_text(encoding="utf-8"))
            for path in sorted(PACKAGE.rglob("*.py"))}


def test_every_subtype_the_source_names_is_in_the_table():
    by_file = used()
    unknown = {path: names - set(SUBTYPES) for path, names in by_file.items() if names - set(SUBTYPES)}
    assert unknown == {}
    # The scan sees the calls it is about (a scan that found nothing would pass anything).
    every = set().union(*by_file.values())
    assert {"mismatch", "directive", "scope", "accept", "budget", "alike"} <= every


def test_the_table_and_the_type_name_the_same_subtypes():
    assert set(SUBTYPES) == set(get_args(Subtype))
    assert all(said.meaning and not said.meaning.endswith(".") for said in SUBTYPES.values())
    assert ours("scope") == {"type": WARNING_TYPE, "subtype": "scope"}


def test_a_made_up_subtype_is_caught():
    source = ('logger.warning("x", type=WARNING_TYPE, subtype="made-up")\n'
              'logger.warning("y", **ours("also-made-up"))\n'
              'if finding.subtype in ("mismatch", "never-heard-of"): pass\n'
              'case = Case(kind="no-such-kind")\n'
              'tensor = TensorRecord(kind="grad")\n')
    assert named(source) - set(SUBTYPES) == {"made-up", "also-made-up", "never-heard-of", "no-such-kind"}


def test_the_reference_page_lists_the_table():
    path = ROOT / "docs" / "_ext" / "autocast_reference.py"
    spec = importlib.util.spec_from_file_location("autocast_reference", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("autocast_reference", module)
    spec.loader.exec_module(module)
    listed = module.warnings()
    assert [term for term, _ in listed] == [f"``{name}``" for name in SUBTYPES]
    assert "Fails the build" in dict(listed)["``mismatch``"]
    assert "-W" in dict(listed)["``scope``"]
    page = (ROOT / "docs" / "reference.rst").read_text(encoding="utf-8")
    assert ".. autocast-demo-reference:: warnings" in page
