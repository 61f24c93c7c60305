"""The package's house (tools/house.py): no circle of imports between its stages, and no
ceremony: words that say why, not a second copy of the code."""

from __future__ import annotations

import ast
import importlib.util
import io
import os
import shutil
import subprocess
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).parents[2]


def house():
    spec = importlib.util.spec_from_file_location("house", ROOT / "tools" / "house.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_stage_imports_one_that_imports_it():
    tool = house()
    package = ROOT / "sphinx_autocast_demo"
    found = tool.modules(package)
    edges = {n: tool.arrows(n, p, set(found), package.name) for n, p in found.items()}
    # Every arrow, those only for type checking too: a type that reaches back up a stage is a
    # stage that knows what comes after it.
    every = {n: set(e) for n, e in edges.items()}
    circles = [c for c in tool.components(every) if len(c) > 1]
    assert circles == [], circles


def test_the_house_counts_a_circle_it_is_shown():
    tool = house()
    graph = {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    floors, said = tool.numbers(graph)
    assert said["circles"] == "1 (a <-> b)" and said["arrows"] == 3
    assert floors == {"a": 1, "b": 1, "c": 2} and said["floors"] == 2


def lint_imports(root: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    """import-linter's contracts of ``root``'s pyproject.toml, on the package in ``cwd``."""
    return subprocess.run([sys.executable, "-c", "import sys; from importlinter.cli import lint_imports; "
                           f"sys.exit(lint_imports(config_filename={str(root / 'pyproject.toml')!r}, "
                           "no_cache=True))"],
                          capture_output=True, text=True, cwd=cwd, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(cwd)})


def test_each_stage_imports_only_the_stages_before_it():
    found = lint_imports(ROOT, ROOT)
    assert found.returncode == 0, found.stdout + found.stderr
    assert "Contracts: 2 kept, 0 broken." in found.stdout


def test_an_import_back_up_a_stage_breaks_the_contract(tmp_path):
    # The contract can fail: the same package with core importing from present is refused,
    # and so is the worker's side of the engine importing the build's.
    shutil.copytree(ROOT / "sphinx_autocast_demo", tmp_path / "sphinx_autocast_demo")
    model = tmp_path / "sphinx_autocast_demo" / "core" / "text.py"
    model.write_text(model.read_text() + "\nfrom ..present import cells  # noqa\n")
    job = tmp_path / "sphinx_autocast_demo" / "engine" / "child" / "job.py"
    job.write_text(job.read_text() + "\nfrom ..parent import pool  # noqa\n")
    found = lint_imports(ROOT, tmp_path)
    assert found.returncode == 1, found.stdout
    assert "Contracts: 0 kept, 2 broken." in found.stdout, found.stdout
    assert "sphinx_autocast_demo.core.text -> sphinx_autocast_demo.present.cells" in found.stdout


def test_no_two_test_modules_share_a_name():
    # pytest imports test modules by their basename (rootdir conftest, no packages): a second
    # test_x.py in another layer stops the whole run at collection ("import file mismatch").
    tests = Path(__file__).resolve().parent.parent
    names: dict[str, list[str]] = {}
    for path in tests.rglob("test_*.py"):
        if "roots" not in path.relative_to(tests).parts:
            names.setdefault(path.name, []).append(str(path.relative_to(tests)))
    assert len(names) > 50
    assert {name: paths for name, paths in names.items() if len(paths) > 1} == {}


PACKAGE = ROOT / "sphinx_autocast_demo"
#: A package's face: what its folder or ``python -m`` opens, short by nature.
FACES = ("__init__.py", "__main__.py")


def _docstrings(tree: ast.Module) -> list[tuple[ast.AST, int]]:
    """Each docstring's owner and how many lines the docstring takes."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) \
                and ast.get_docstring(node, clean=False) is not None:
            first = node.body[0]
            found.append((node, first.end_lineno - first.lineno + 1))  # type: ignore[operator]
    return found


def test_the_package_says_why_without_ceremony():
    lines = said = 0
    longer, small = [], []
    for path in sorted(PACKAGE.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        count = len(text.splitlines())
        lines += count
        said += sum(1 for token in tokenize.generate_tokens(io.StringIO(text).readline)
                    if token.type == tokenize.COMMENT and token.line.lstrip().startswith("#"))
        for node, length in _docstrings(ast.parse(text)):
            said += length
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and path.name not in FACES:
                body = node.body[1:]
                kept = body[-1].end_lineno - body[0].lineno + 1 if body else 0  # type: ignore[operator]
                if length > kept:  # (a stage's entry, in its __init__, may say more)
                    longer.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.name}")
        if count < 40 and path.name not in FACES:
            small.append(f"{path.relative_to(ROOT)} ({count} lines)")
    assert lines > 10_000
    assert said / lines <= 0.18, f"docstrings and comments are {said / lines:.1%} of the lines"
    assert longer == [], "a docstring longer than its function's body"
    assert small == [], "a module under 40 lines that no package opens with"
