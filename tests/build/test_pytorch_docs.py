"""PyTorch's own docs stack: examples/pytorch-docs, laid out like PyTorch's ``docs/source`` (a
MyST user-guide page whose demos sit in bullet items, an autodoc'ed package with docstring demos
under napoleon), built with Sphinx 7.2.6, ``pytorch_sphinx_theme2``, myst_nb, sphinx-design and
``-j auto -W --keep-going``, as PyTorch builds its docs.

Those pins cannot sit beside this suite's own (Sphinx 9): ``tox -e pytorch-docs`` makes the
environment and runs this module there (``.ci/run`` too), with AUTOCAST_DEMO_PYTORCH_DOCS=1, which
turns the skip below into a failure. Everywhere else it skips, saying so.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path

import pytest
from conftest import DEFAULT_OFF_IF_SET, sphinx_build, verdicts

EXAMPLE = Path(__file__).parents[2] / "examples" / "pytorch-docs"
MATCH, DIFFER = "\u2713 matches eager", "\u2717 differs"
#: A torch whose default became "off" where TORCH_TEST_DEFAULT_OFF is set (as
#: tests/build/test_default.py simulates it), with the example's own global setup kept.
CHANGED = "import torch, amp_helpers; " + DEFAULT_OFF_IF_SET

if importlib.util.find_spec("pytorch_sphinx_theme2") is None:
    if os.environ.get("AUTOCAST_DEMO_PYTORCH_DOCS") == "1":
        raise RuntimeError("AUTOCAST_DEMO_PYTORCH_DOCS=1 but pytorch_sphinx_theme2 is not "
                           "installed: run tox -e pytorch-docs")
    pytest.skip("PyTorch's docs stack (pytorch_sphinx_theme2, Sphinx 7.2.6) is not installed: "
                "tox -e pytorch-docs runs this", allow_module_level=True)


def starts(cells: list[str]) -> list[str]:
    return [MATCH if c.startswith(MATCH) else DIFFER if c.startswith(DIFFER) else c for c in cells]


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    work = tmp_path_factory.mktemp("pytorch-docs") / "example"
    shutil.copytree(EXAMPLE, work)
    src = work / "docs" / "source"
    today = sphinx_build(src, work / "build" / "html", "-j", "auto", "-W", "--keep-going")
    # The pages' kept result set of the torch before, whose default was torch's today: what
    # tells a changed default from a wrong record.
    kept = sphinx_build(src, work / "build" / "kept", "-b", "autocast-check",
                        "-D", "autocast_demo_environment=torch before",
                        "-D", f"autocast_demo_global_setup={CHANGED}")
    assert kept.returncode == 0, kept.stderr
    changed = sphinx_build(src, work / "build" / "changed", "-j", "auto", "-W", "--keep-going",
                           "-D", f"autocast_demo_global_setup={CHANGED}",
                           "-D", f"autocast_demo_results={work / 'build' / 'kept' / 'results'}",
                           env={"TORCH_TEST_DEFAULT_OFF": "1"})
    return today, changed


def test_the_example_builds_as_pytorch_builds_its_docs(builds):
    today, _ = builds
    assert today.returncode == 0, today.stderr
    assert "WARNING" not in today.stderr, today.stderr
    # In PyTorch's theme, with the extension's stylesheet beside it.
    page = today.html("notes/compile_autocast")
    sheets = [link["href"] for link in page.select("link[rel=stylesheet]")]
    assert any("css/theme.css" in s for s in sheets) and any("autocast_demo.css" in s for s in sheets)
    assert len(page.select(".bd-article table.autocast-demo-results")) == 3


def test_demos_in_bullet_items_and_in_docstrings_give_the_seeds_verdicts(builds):
    today, _ = builds
    note, api = today.html("notes/compile_autocast"), today.html("amp_helpers")
    # Backward inside the autocast block: the default ("same_as_forward") reproduces eager, "off"
    # does not; after the block (AMP's layout) only "off" does; patch wins over every value.
    assert starts(verdicts(note, "note-default")) == [MATCH, MATCH, DIFFER]
    assert starts(verdicts(note, "note-off")) == [MATCH]
    assert starts(verdicts(note, "note-patch")) == [MATCH] * 3
    # The docstring demos import the documented package through conf.py's sys.path, under
    # napoleon's "Example:" section as well.
    assert starts(verdicts(api, "region-after-block")) == [DIFFER, DIFFER, MATCH]
    assert starts(verdicts(api, "region-inside-block")) == [MATCH, DIFFER]


def test_the_themes_markdown_export_carries_the_results(builds):
    today, _ = builds
    exported = (today.out / "notes" / "compile_autocast.md").read_text(encoding="utf-8")
    assert "| **off** " in exported and f"| {MATCH}" in exported, exported[:2000]


def test_a_torch_whose_default_changed_fails_at_the_page_and_at_the_docstring(builds):
    _, changed = builds
    assert changed.returncode != 0
    # Each at its :expect: line: the page's, and the .py file's (napoleon's section included),
    # said as what it is: torch's default changed.
    said = [line.split("/example/")[-1] for line in changed.stderr.splitlines() if "WARNING" in line]
    assert sorted(line.split(": torch ")[0] for line in said) == [
        "amp_helpers/__init__.py:21: WARNING: value default",
        "amp_helpers/__init__.py:43: WARNING: value default",
        "docs/source/notes/compile_autocast.md:23: WARNING: value default"], said
    assert all("'s default of torch._functorch.config.backward_pass_autocast is now 'off', the "
               "page records " in line and line.endswith("[autocast_demo.default-changed]")
               for line in said), said
