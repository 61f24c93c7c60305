"""Demos in autodoc'ed docstrings (napoleon's Example section too): they import the documented
module through conf.py's sys.path, share autocast_demo_global_setup, are located at the .py
file's lines, and accept mode rewrites them there (real builds, real torch). How a docstring's
lines are found in its file, without a build: tests/unit/test_docstring_lines.py."""

from __future__ import annotations

import os
import re

import pytest
from conftest import ROOTS, copy_root, sphinx_build
from fakes import LATIN, latin_bytes

ROOT = ROOTS / "test-docstrings"
NO_PATH = {"PYTHONPATH": ""}  # only conf.py's sys.path.insert may find the module


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    src = copy_root("docstrings", tmp_path_factory)
    out = src / "_build" / "html"
    cache = ("-D", f"autocast_demo_cache_dir={tmp_path_factory.mktemp('cache')}")
    # First as the writer builds it: the accept build judges what it rewrites again, and warns
    # of none of it.
    shown = sphinx_build(src, out, *cache, env=NO_PATH)
    accept = sphinx_build(src, out, *cache, env={**NO_PATH, "AUTOCAST_DEMO_ACCEPT": "1"})
    files = {name: (src / name).read_text(encoding="utf-8") for name in ("src/amp_helpers.py", "index.rst")}
    again = sphinx_build(src, out, *cache, env=NO_PATH)
    return src, accept, files, again, shown


def test_docstring_warnings_point_at_the_py_lines(builds):
    src, *_, shown = builds
    py = str(src / "src" / "amp_helpers.py")
    lines = (ROOT / "src" / "amp_helpers.py").read_text(encoding="utf-8").split("\n")
    wrong = lines.index("           :expect: off: differs") + 1  # in napoleon's Example section
    directive = lines.index("           :name: method-missing")  # the line above, 1-based
    assert lines[directive - 1].strip() == ".. autocast-demo::"
    assert f"{py}:{wrong}: WARNING: value off: the page records 'differs'" in shown.stderr
    assert f"{py}:{directive}: WARNING: no recorded expectation for off" in shown.stderr
    assert "ModuleNotFoundError" not in shown.stderr and "NameError" not in shown.stderr


def test_accept_rewrites_docstrings_in_the_py_file_and_says_what_it_cannot(builds):
    _, accept, files, *_ = builds
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
    _, _, _, again, _ = builds
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


# Accept writes where the text lives: through symbolic links, in a module's declared encoding
# and line endings, into docstrings with escapes and under compound statements (one build).

@pytest.fixture(scope="module")
def relocated(tmp_path_factory):
    """test-docstrings with its page and module as symbolic links to files elsewhere, and a
    Latin-1 module with CRLF line endings beside them, built once in accept mode."""
    src = copy_root("docstrings", tmp_path_factory)
    real = src.parent / "real"
    real.mkdir()
    for name, link in (("index.rst", src / "index.rst"), ("amp_helpers.py", src / "src" / "amp_helpers.py")):
        link.rename(real / name)
        link.symlink_to(real / name)
    with open(real / "index.rst", "a", encoding="utf-8") as f:
        f.write("\n.. automodule:: latin\n   :members:\n")
    (src / "src" / "latin.py").write_bytes(latin_bytes(LATIN))
    page = (real / "index.rst").read_text(encoding="utf-8")
    cache = ("-D", f"autocast_demo_cache_dir={tmp_path_factory.mktemp('cache')}")
    run = sphinx_build(src, src / "_build" / "html", *cache, env={**NO_PATH, "AUTOCAST_DEMO_ACCEPT": "1"})
    return src, real, page, run


def test_accept_writes_through_symbolic_links_into_the_real_files(relocated):
    src, real, page, run = relocated
    assert (src / "index.rst").is_symlink() and (src / "src" / "amp_helpers.py").is_symlink(), run.stderr
    assert (real / "index.rst").read_text(encoding="utf-8") == page.replace(
        ":expect: off: differs", ":expect: off: matches")
    original = (ROOT / "src" / "amp_helpers.py").read_text(encoding="utf-8")
    want = original.replace("           :expect: off: differs\n", "           :expect: off: matches\n", 1)
    want = want.replace("           :name: method-missing\n",
                        "           :name: method-missing\n           :expect: off: matches\n", 1)
    assert (real / "amp_helpers.py").read_text(encoding="utf-8") == want
    assert not [p for p in (src, src / "src", real) for f in p.iterdir() if f.name.startswith(".accept-")]


def test_accept_finds_docstrings_in_any_encoding_with_escapes_under_any_statement(relocated):
    src, _, _, run = relocated
    want = LATIN.replace("           :name: latin-guarded\n           :expect: off: differs\n",
                         "           :name: latin-guarded\n           :expect: off: matches\n")
    want = want.replace("       :name: latin-escaped\n",
                        "       :name: latin-escaped\n       :expect: off: matches\n")
    want = want.replace("               :name: latin-nested\n               :expect: off: differs\n",
                        "               :name: latin-nested\n               :expect: off: matches\n")
    assert want != LATIN
    written = (src / "src" / "latin.py").read_bytes()
    assert written == latin_bytes(want), run.stderr
    latin = str(src / "src" / "latin.py")
    added = want.split("\n").index("       :expect: off: matches") + 1  # (the new line's number)
    assert f"{os.path.relpath(latin)}:{added}: recorded off: matches" in run.stdout
    # The rewritten literals read back as Python reads them: the escapes are the same escapes.
    code = compile(written, latin, "exec")
    docs = [c.co_consts[0] for c in code.co_consts if hasattr(c, "co_consts") and c.co_name == "escaped"]
    assert docs and "\t" in docs[0] and "line joined" in docs[0] and "na\u00efve" in docs[0]
    assert "   :name: latin-escaped\n       :expect: off: matches\n" in docs[0]


def test_accept_says_why_a_docstring_made_at_run_time_is_not_rewritten(relocated):
    src, _, _, run = relocated
    said = [ln for ln in run.stderr.splitlines() if "not rewritten" in ln]
    assert len(said) == 1, run.stderr
    line = (ROOT / "src" / "amp_helpers.py").read_text(encoding="utf-8").split("\n").index(
        'generated.__doc__ = _TEMPLATE.replace("NAME", "generated-wrong")') + 1
    assert "docstring of amp_helpers.generated" in said[0]
    assert f"its docstring is made at run time ({src / 'src' / 'amp_helpers.py'}:{line}: " \
        "generated.__doc__ = ...)" in said[0], said[0]
    assert "Traceback" not in run.stderr and "Errno" not in run.stderr
