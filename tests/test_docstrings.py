"""Demos in autodoc'ed docstrings (napoleon's Example section too): they import the documented
module through conf.py's sys.path, share autocast_demo_global_setup, are located at the .py
file's lines, and accept mode rewrites them there (real builds, real torch)."""

from __future__ import annotations

import re

import pytest
from conftest import ROOTS, copy_root, sphinx_build

from sphinx_autocast_demo import docstrings
from sphinx_autocast_demo.config import global_setup_code

ROOT = ROOTS / "test-docstrings"
NO_PATH = {"PYTHONPATH": ""}  # only conf.py's sys.path.insert may find the module


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    src = copy_root("docstrings", tmp_path_factory)
    out = src / "_build" / "html"
    cache = ("-D", f"autocast_demo_cache_dir={tmp_path_factory.mktemp('cache')}")
    accept = sphinx_build(src, out, *cache, env={**NO_PATH, "AUTOCAST_DEMO_ACCEPT": "1"})
    files = {name: (src / name).read_text(encoding="utf-8") for name in ("src/amp_helpers.py", "index.rst")}
    again = sphinx_build(src, out, *cache, env=NO_PATH)
    return src, accept, files, again


def test_docstring_warnings_point_at_the_py_lines(builds):
    src, accept, _, _ = builds
    py = str(src / "src" / "amp_helpers.py")
    lines = (ROOT / "src" / "amp_helpers.py").read_text(encoding="utf-8").split("\n")
    wrong = lines.index("           :expect: off: differs") + 1  # in napoleon's Example section
    directive = lines.index("           :name: method-missing")  # the line above, 1-based
    assert lines[directive - 1].strip() == ".. autocast-demo::"
    assert f"{py}:{wrong}: WARNING: value off: the page records 'differs'" in accept.stderr
    assert f"{py}:{directive}: WARNING: no recorded expectation for off" in accept.stderr
    assert "ModuleNotFoundError" not in accept.stderr and "NameError" not in accept.stderr


def test_accept_rewrites_docstrings_in_the_py_file_and_says_what_it_cannot(builds):
    _, accept, files, _ = builds
    original = (ROOT / "src" / "amp_helpers.py").read_text(encoding="utf-8")
    want = original.replace("           :expect: off: differs\n", "           :expect: off: matches\n", 1)
    want = want.replace("           :name: method-missing\n",
                        "           :name: method-missing\n           :expect: off: matches\n", 1)
    assert files["src/amp_helpers.py"] == want
    page = (ROOT / "index.rst").read_text(encoding="utf-8")
    assert files["index.rst"] == page.replace(":expect: off: differs", ":expect: off: matches")
    said = [ln for ln in accept.stderr.splitlines() if "not rewritten" in ln]
    assert len(said) == 1 and "docstring of amp_helpers.generated" in said[0], accept.stderr
    assert "Errno" not in accept.stderr
    assert accept.returncode == 1  # the generated docstring's record still fails


def test_after_accept_only_the_unwritable_record_fails(builds):
    _, _, _, again = builds
    warnings = [ln for ln in again.stderr.splitlines() if "WARNING" in ln]
    assert len(warnings) == 1 and "amp_helpers.generated" in warnings[0], again.stderr
    assert again.returncode == 1
    html = again.html("index")
    for ident in ("double-right", "double-wrong", "method-missing", "page-wrong"):
        assert "matches" in html.find(id=ident).get_text(" "), ident


def test_an_error_in_the_global_setup_is_located_at_conf_py(tmp_path_factory):
    src = copy_root("docstrings", tmp_path_factory)
    conf = src / "conf.py"
    text = conf.read_text(encoding="utf-8").replace("import amp_helpers\n", "import amp_helperz\n")
    conf.write_text(text, encoding="utf-8")
    line = text.split("\n").index("import amp_helperz") + 1
    build = sphinx_build(src, src / "_build" / "html", env=NO_PATH)
    assert build.returncode == 1
    assert re.search(rf"{re.escape(str(conf))}:{line}: WARNING: value off: the snippet raised "
                     "ModuleNotFoundError", build.stderr), build.stderr


def test_offset_finds_a_directive_napoleon_moved(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text('def f():\n    """Doc.\n\n    Example:\n        .. autocast-demo::\n'
                    '           :expect: off: matches\n\n           x = 1\n    """\n', encoding="utf-8")
    block = [".. autocast-demo::", "   :expect: off: matches", "", "   x = 1"]
    # napoleon numbers the directive's line 6 (a rubric and a blank line before it): file line 5
    assert docstrings.offset(f"{path}:docstring of mod.f", block, 6) == (str(path), -1)
    assert docstrings.offset(f"{path}:docstring of mod.f", ["nowhere"], 1) is None
    assert docstrings.offset(str(path), block, 6) is None  # a page, not a docstring


def test_global_setup_lines_are_conf_py_lines(tmp_path):
    (tmp_path / "conf.py").write_text('x = 1\nautocast_demo_global_setup = """\nimport torch\n"""\n',
                                      encoding="utf-8")
    code = global_setup_code(str(tmp_path), "\nimport torch\n")
    assert code is not None and code.lines == (2, 3, 4)
    other = global_setup_code(str(tmp_path), "import os")  # (a -D value): at the assignment
    assert other is not None and other.lines == (2,)
    assert global_setup_code(str(tmp_path), "  ") is None
