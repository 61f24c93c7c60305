"""docstrings.py and the global setup's lines without a build: where a demo in a docstring is
in its .py file (napoleon's sections, a declared encoding, escapes, compound statements), the
file lines of each line of a literal, why a docstring cannot be located, and conf.py's lines of
``autocast_demo_global_setup``. Built and accepted for real: tests/build/test_docstrings.py."""

from __future__ import annotations

from fakes import LATIN, latin_bytes

from sphinx_autocast_demo.core.conflines import global_setup_code
from sphinx_autocast_demo.read import docstrings


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
    path.write_bytes(latin_bytes(LATIN))
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
