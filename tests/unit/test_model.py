"""model.py's plain data: environments as directory names, lines of code in the docs, a
traceback in doc coordinates, and records read back from JSON."""

from __future__ import annotations

import pytest
from fakes import demo

from sphinx_autocast_demo.core.fromjson import from_json
from sphinx_autocast_demo.core.model import (
    Code,
    DemoResult,
    Environment,
    Frame,
    Location,
    SnippetError,
    SourceMap,
    TensorRecord,
)


def test_an_environment_label_as_a_directory_name():
    def ident(label: str) -> str:
        return Environment(label, "2.13.0", "3.11").ident
    assert ident("torch 2.14.1") == "torch-2.14.1"
    assert ident("Torch 2.15.0 on H100!") == "torch-2.15.0-on-h100"
    assert ident("torch 2.13.0+cpu") == "torch-2.13.0+cpu"
    assert ident("..!!") == "environment"  # nothing left of it


def test_a_line_of_code_and_an_option_are_found_in_their_file():
    code = Code("a\nb\nc", "/docs/index.rst", (5, 6, 9))
    assert [code.doc_line(n) for n in (1, 3, 10, None, 0)] == [5, 9, 9, 5, 5]
    assert Code("", "/docs/index.rst", ()).doc_line(2) == 0
    where = SourceMap("/docs/index.rst", 4, "rst", 5, 7, ())
    assert where.line_of("expect") == 4  # not written: the directive's own line
    assert str(Location("/docs/index.rst", 0)) == "/docs/index.rst"
    assert str(Location("/docs/index.rst", 7)) == "/docs/index.rst:7"


def test_a_traceback_names_the_docs_lines_of_the_writers_frames():
    setup = Code("import helper", "/docs/index.rst", (3,))
    the_demo = demo()
    mine = Code("a = 1\nhelper.f(a)", "/docs/index.rst", (10, 11))
    found = DemoResult(the_demo, (setup, mine), (), "9.9.0")
    error = SnippetError("NameError", ("NameError",), "boom",
                         (Frame(0, 1, "<module>", "import helper"), Frame(1, 2, "f", "helper.f(a)")))
    assert found.where(error) == Location("/docs/index.rst", 11)
    assert found.traceback(error) == (
        "Traceback (most recent call last):\n"
        '  File "/docs/index.rst", line 3, in <module>\n    import helper\n'
        '  File "/docs/index.rst", line 11, in f\n    helper.f(a)\n'
        "NameError: boom")
    assert found.where(SnippetError("E", (), "", ())) == the_demo.location  # no frame of the writer's


def test_a_record_from_json_is_checked_field_by_field():
    # A worker's tensor: its fields in order, its data offset ignored.
    assert from_json(TensorRecord, ["w", "grad", "float32", [2, 3], "ab"]) == TensorRecord(
        "w", "grad", "float32", (2, 3), "ab")
    assert from_json(TensorRecord, {"name": "w", "kind": "value", "dtype": "f", "shape": [], "sha256": "x",
                                    "offset": 8}).shape == ()
    for data, message in [
        ({"name": "w", "kind": "value", "dtype": "f", "shape": []}, "sha256 is missing"),
        (["w", "weight", "f", [], "x"], "kind is 'weight', not one of value, grad"),
        (["w", "value", "f", [-1], "x"], r"shape\[0\] is -1, not int"),  # sizes are never negative
        (["w", "value", "f", [True], "x"], r"shape\[0\] is True, not int"),  # JSON's true is no number
        (["w", "value", "f", [], "x", "extra"], "the entry is .*, not a TensorRecord"),
    ]:
        with pytest.raises(ValueError, match=message):
            from_json(TensorRecord, data)
