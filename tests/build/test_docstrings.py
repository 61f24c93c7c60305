"""Demos in autodoc'ed docstrings (napoleon's Example section too): they import the documented
module through conf.py's sys.path, share autocast_demo_global_setup, are located at the .py
file's lines, and accept mode rewrites them there (real builds, real torch)."""

from __future__ import annotations

import os
import re

import pytest
from conftest import ROOTS, copy_root, sphinx_build

from sphinx_autocast_demo.core.config import global_setup_code
from sphinx_autocast_demo.read import docstrings

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


# Accept writes where the text lives: through symbolic links, in a module's declared encoding
# and line endings, into docstrings with escapes and under compound statements (one build).

LATIN = '''# -*- coding: latin-1 -*-
"""Helpers written in Latin-1: caf\u00e9."""

import sys

try:
    import amp_helpers
except ImportError:
    raise
else:
    def guarded(w):
        """Defined under try/else, in caf\u00e9.

        .. autocast-demo::
           :name: latin-guarded
           :expect: off: differs

           w = torch.ones(7, requires_grad=True)
           torch.compile(amp_helpers.double)(w).backward()
        """
        return amp_helpers.double(w)


def escaped(w):
    """A tab\\there, and a line \\
joined by a backslash; na\\xefve.

    .. autocast-demo::
       :name: latin-escaped

       w = torch.ones(8, requires_grad=True)
       print("a\\tb")
       torch.compile(amp_helpers.double)(w).backward()
    """
    return amp_helpers.double(w)


if sys.version_info >= (3,):
    class Nested:
        """A class under if."""

        def run(self, w):
            """Run, d\u00e9j\u00e0.

            .. autocast-demo::
               :name: latin-nested
               :expect: off: differs

               w = torch.ones(9, requires_grad=True)
               torch.compile(amp_helpers.double)(w).backward()
            """
            return amp_helpers.double(w)
'''


def _latin_bytes(text: str) -> bytes:
    return text.replace("\n", "\r\n").encode("latin-1")


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
    (src / "src" / "latin.py").write_bytes(_latin_bytes(LATIN))
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
    assert written == _latin_bytes(want), run.stderr
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


def test_literal_lines_keep_the_file_lines_of_each_line_of_the_value():
    import ast

    text = 'x = """a\\tb\\\nc\nd\\ne"""\ny = r"""p\\\nq"""\nz = ("u"\n     "v")\n'
    tree = ast.parse(text)
    rows = text.split("\n")
    first, raw, joined = (node.value for node in tree.body)
    lines = docstrings.literal_lines(rows, first)
    assert lines is not None and not lines.one_for_one
    assert [(ln.first, ln.last, ln.text) for ln in lines.lines] == [
        (1, 2, "a\tbc"), (3, 3, "d"), (3, 3, "e")]  # a backslash joins, \n splits
    raw_lines = docstrings.literal_lines(rows, raw)
    assert raw_lines is not None and raw_lines.one_for_one
    assert [ln.text for ln in raw_lines.lines] == ["p\\", "q"]  # in a raw string, no joining
    assert docstrings.literal_lines(rows, joined) is None  # concatenated over lines: not read back


def test_offset_finds_docstrings_in_a_declared_encoding_under_any_statement(tmp_path):
    path = tmp_path / "mod.py"
    path.write_bytes(_latin_bytes(LATIN))
    escaped = [".. autocast-demo::", "   :name: latin-escaped", "",
               "   w = torch.ones(8, requires_grad=True)", '   print("a       b")']  # (tab expanded)
    source = f"{path}:docstring of latin."
    lines = LATIN.split("\n")
    assert docstrings.offset(source + "escaped", escaped, 3) == (
        str(path), lines.index("    .. autocast-demo::") + 1 - 3)
    nested = lines.index("            .. autocast-demo::") + 1
    assert docstrings.offset(source + "Nested.run", [".. autocast-demo::", "   :name: latin-nested"], 3) == (
        str(path), nested - 3)
    guarded = lines.index("        .. autocast-demo::") + 1
    assert docstrings.offset(source + "guarded", [".. autocast-demo::", "   :name: latin-guarded"], 3) == (
        str(path), guarded - 3)


def test_reason_says_what_keeps_a_docstring_from_its_file(tmp_path):
    path = tmp_path / "mod.py"
    path.write_text('def made():\n    pass\n\n\nmade.__doc__ = "x".upper()\n\n\ndef bare():\n    pass\n\n\n'
                    'try:\n    def twice():\n        """One."""\nexcept ImportError:\n    def twice():\n'
                    '        """Two."""\n\n\ndef split():\n    """A\\nB."""\n\n\n'
                    'class C:\n    __doc__ = str(1)\n', encoding="utf-8")
    def why(name: str) -> str:
        return docstrings.reason(f"{path}:docstring of mod.{name}")
    assert why("made") == f"its docstring is made at run time ({path}:5: made.__doc__ = ...)"
    assert why("bare") == (f"bare ({path}:8) has no docstring written in the file (made or inherited "
                           "at run time)")
    assert why("twice") == (f"twice is defined 2 times ({path}:13, {path}:16): which one is documented "
                            "is decided at run time")
    assert why("split").startswith(f"the docstring at {path}:21 has a line break escaped (\\n)")
    assert why("gone") == f"{path} defines no gone (is it made at run time?)"
    assert why("C") == f"its docstring is made at run time ({path}:25: __doc__ = ...)"
    module = tmp_path / "made.py"
    module.write_text("import os\n__doc__ = os.sep\n", encoding="utf-8")
    assert docstrings.reason(f"{module}:docstring of made") == (
        f"its docstring is made at run time ({module}:2: __doc__ = ...)")
    path.write_bytes(b"# -*- coding: latin-1 -*-\nx = '\xff\n")
    assert why("x").startswith(f"{path}:2: it is not Python that parses")
    assert docstrings.reason(f"{tmp_path / 'none.py'}:docstring of none.f").startswith(
        f"{tmp_path / 'none.py'} cannot be read: No such file")
