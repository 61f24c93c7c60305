"""sources.py without a build: where a directive's code and options are in the file the writer
edits (reST, nested, included, in a docstring; MyST's colon and YAML forms, myst-parser before 5),
and the option blocks of MyST that would silently lose options or turn them into code.

docutils' and myst-parser's own parsers read hand-written pages into a directive that records what
SourceLines found; nothing runs a build."""

from __future__ import annotations

from dataclasses import dataclass
from io import StringIO
from pathlib import Path

import pytest
from docutils import frontend
from docutils.parsers import rst
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from docutils.utils import new_document
from myst_parser.config.main import MdParserConfig
from myst_parser.mdit_to_docutils.base import DocutilsRenderer
from myst_parser.parsers.docutils_ import Parser as MystParser
from myst_parser.parsers.mdit import create_md_parser

from sphinx_autocast_demo.core.model import Code, OptionSpan, SourceMap
from sphinx_autocast_demo.read import syntax
from sphinx_autocast_demo.read.sources import SourceLines, located

NAMES = ("values", "expect", "expect-output", "caption", "name")


@dataclass
class Read:
    """What the directive found: its option map and code, the options it ended with, and the
    line each option's messages would name."""

    map: SourceMap
    code: Code
    options: dict[str, str]
    doc_line: int
    option_lines: dict[str, int]


@dataclass
class Refused:
    message: str
    line: int


def _text(value: str | None) -> str:
    return (value or "").strip()


class Probe(SourceLines):
    """A directive of ours as far as SourceLines goes: it reads its options, then its code."""

    has_content = True
    option_spec = dict.fromkeys(NAMES, _text)
    forms = ("<colon form>", "<yaml form>")
    seen: list[Read | Refused] = []

    def run(self) -> list:
        try:
            self.source_map = self.read_options()
        except syntax.SyntaxProblem as exc:
            self.seen.append(Refused(exc.args[0], exc.line))  # type: ignore[attr-defined]
            return []
        self.seen.append(Read(self.source_map, self.code(), dict(self.options), self.doc_line,
                              {name: self.option_line(name) for name in NAMES}))
        return []


@pytest.fixture(autouse=True)
def probe(monkeypatch):
    monkeypatch.setitem(directives._directives, "probe", Probe)
    monkeypatch.setattr(Probe, "seen", [])


def quiet(settings):
    settings.warning_stream = StringIO()  # myst-parser's own warnings about a block it cannot read
    return settings


def read_rst(text: str, source: str) -> Read | Refused:
    document = new_document(source, quiet(frontend.get_default_settings(rst.Parser)))
    rst.Parser().parse(text, document)
    (found,) = Probe.seen
    return found


def read_myst(path: Path, text: str) -> Read | Refused:
    """``text`` written to ``path`` (myst-parser before 5 reads the options there) and parsed by
    myst-parser as its docutils parser does, without the global changes that parser makes."""
    path.write_text(text, encoding="utf-8")
    document = new_document(str(path), quiet(frontend.get_default_settings(MystParser)))
    parser = create_md_parser(MdParserConfig(), DocutilsRenderer)
    parser.options["document"] = document
    parser.render(text)
    (found,) = Probe.seen
    return found


def lines_of(text: str, *wanted: str) -> list[int]:
    """The 1-based line of each of ``wanted`` (a line's stripped text) in ``text``."""
    rows = [row.strip() for row in text.split("\n")]
    return [rows.index(w) + 1 for w in wanted]


NESTED_RST = """\
Title
=====

- An item:

  .. probe::
     :values: off,
        same_as_forward
     :expect: off: differs

     x = 1

     y = 2
"""


def test_rest_code_lines_are_the_files_lines_in_a_list_item(tmp_path):
    found = read_rst(NESTED_RST, str(tmp_path / "index.rst"))
    assert isinstance(found, Read)
    assert found.code == Code("x = 1\n\ny = 2", str(tmp_path / "index.rst"), (11, 12, 13))
    assert lines_of(NESTED_RST, "x = 1", "y = 2") == [11, 13]
    assert found.doc_line == 6


def test_rest_option_map_covers_continuation_lines_and_ends_at_the_blank_line(tmp_path):
    found = read_rst(NESTED_RST, str(tmp_path / "index.rst"))
    assert isinstance(found, Read)
    assert found.map == SourceMap(str(tmp_path / "index.rst"), 6, "rst", 7, 10,
                                  (OptionSpan("values", 7, 9), OptionSpan("expect", 9, 10)))
    # A message about an option names its line; one about an option not written, the directive's.
    assert found.option_lines == {"values": 7, "expect": 9, "expect-output": 6, "caption": 6,
                                  "name": 6}


def test_a_demo_in_an_included_file_is_located_in_that_file_by_its_absolute_path(tmp_path, monkeypatch):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "part.rst").write_text("Part\n----\n\n.. probe::\n   :expect: off: matches\n\n   x = 1\n",
                                   encoding="utf-8")
    # docutils names an included file relative to the current directory.
    monkeypatch.chdir(tmp_path)
    found = read_rst("Home\n====\n\nText.\n\n.. include:: part.rst\n", str(docs / "index.rst"))
    assert isinstance(found, Read)
    part = str(docs / "part.rst")
    assert found.code == Code("x = 1", part, (7,))
    assert found.doc_line == 4  # its line in the part, not in the page that includes it
    assert found.map == SourceMap(part, 4, "rst", 5, 6, (OptionSpan("expect", 5, 6),))


def test_a_demo_in_a_docstring_is_located_in_its_py_file(tmp_path):
    module = tmp_path / "mod.py"
    module.write_text('import os\n\n\ndef f():\n    """Do f.\n\n    .. probe::\n'
                      '       :expect: off: matches\n\n       x = 1\n    """\n', encoding="utf-8")
    # The docstring as autodoc hands it to docutils: dedented, its lines numbered from its first.
    docstring = "Do f.\n\n.. probe::\n   :expect: off: matches\n\n   x = 1\n"
    found = read_rst(docstring, f"{module}:docstring of mod.f")
    assert isinstance(found, Read)
    assert found.code == Code("x = 1", str(module), (10,))
    assert found.doc_line == 7
    assert found.map == SourceMap(str(module), 7, "rst", 8, 9, (OptionSpan("expect", 8, 9),))


NESTED_MYST = """\
# Title

1. An item:

   ```{probe}
   :values: off,
      same_as_forward
   :expect: off: differs

   x = 1
   y = 2
   ```
"""


def test_myst_colon_options_continued_on_indented_lines_are_options_not_code(tmp_path):
    """myst-parser takes only the lines that start with ":" as options: the indented line would
    reach the demo as its first line of code."""
    found = read_myst(tmp_path / "index.md", NESTED_MYST)
    assert isinstance(found, Read)
    assert found.options == {"values": "off,\nsame_as_forward", "expect": "off: differs"}
    assert found.code == Code("x = 1\ny = 2", str(tmp_path / "index.md"), (10, 11))
    assert lines_of(NESTED_MYST, "x = 1", "y = 2") == [10, 11]


def test_myst_colon_option_map_starts_under_the_fence(tmp_path):
    found = read_myst(tmp_path / "index.md", NESTED_MYST)
    assert isinstance(found, Read)
    assert found.doc_line == 5  # the opening fence
    assert found.map == SourceMap(str(tmp_path / "index.md"), 5, "colon", 6, 9,
                                  (OptionSpan("values", 6, 8), OptionSpan("expect", 8, 9)))
    assert (found.option_lines["expect"], found.option_lines["caption"]) == (8, 5)


def test_a_myst_line_of_a_colon_and_spaces_continues_the_option_above_it(tmp_path):
    # (myst-parser reads the colon form as YAML: the line continues the value; accept mode edits
    # the option through its span, so the span must hold that line too)
    text = "```{probe}\n:values: off,\n:  same_as_forward\n:expect: off: differs\n\nx = 1\n```\n"
    found = read_myst(tmp_path / "index.md", text)
    assert isinstance(found, Read)
    assert found.options == {"values": "off, same_as_forward", "expect": "off: differs"}
    assert found.map.options == (OptionSpan("values", 2, 4), OptionSpan("expect", 4, 5))


def test_myst_yaml_block_maps_each_key_to_its_lines_up_to_the_next_key(tmp_path):
    text = ("Text.\n\n```{probe}\n---\nvalues: off\nexpect: |\n  off: matches\n  on: differs\n---\n"
            "x = 1\n```\n")
    found = read_myst(tmp_path / "index.md", text)
    assert isinstance(found, Read)
    # A ``|`` block's lines belong to its key; the last key runs to the closing --- (line 9).
    assert found.map == SourceMap(str(tmp_path / "index.md"), 3, "yaml", 5, 9,
                                  (OptionSpan("values", 5, 6), OptionSpan("expect", 6, 9)))
    assert found.options == {"values": "off", "expect": "off: matches\non: differs"}
    assert found.code == Code("x = 1", str(tmp_path / "index.md"), (10,))


def test_a_myst_demo_without_options_has_an_empty_option_region_under_its_fence(tmp_path):
    # Code indented under a fence without options is code (nothing it could continue).
    found = read_myst(tmp_path / "index.md", "```{probe}\n\n    x = 1\n```\n")
    assert isinstance(found, Read)
    assert found.map == SourceMap(str(tmp_path / "index.md"), 1, "colon", 2, 2)
    assert found.code.lines == (3,)


def test_a_yaml_block_without_its_closing_dashes_is_refused_at_the_opening_ones(tmp_path):
    found = read_myst(tmp_path / "index.md", "Text.\n\n```{probe}\n---\nvalues: off\nx = 1\n```\n")
    assert found == Refused("the option block opened by --- has no closing ---, so the whole body "
                            "would be read as options: put a line --- under the last option", 4)


@pytest.mark.parametrize(("text", "line", "form"), [
    ("Text.\n\n```{probe}\n:values: off\n:caption: \"unclosed\n\nx = 1\n```\n", 5, "<colon form>"),
    ("```{probe}\n---\nvalues: off\ncaption: \"unclosed\n---\nx = 1\n```\n", 4, "<yaml form>"),
], ids=["colon", "yaml"])
def test_an_option_block_myst_parser_cannot_read_is_refused_at_its_line_with_the_form_to_write(
        tmp_path, text, line, form):
    """myst-parser would drop every option with a warning and run the demo all the same."""
    found = read_myst(tmp_path / "index.md", text)
    assert found == Refused("this option block cannot be read (myst-parser: found unexpected end "
                            "of stream), so none of its options would apply; write it like this:\n"
                            f"{form}", line)


def test_an_option_below_the_blank_line_that_ends_the_options_is_refused_not_run_as_code(tmp_path):
    text = "```{probe}\n:values: off\n\n:expect: off: matches\nx = 1\n```\n"
    found = read_myst(tmp_path / "index.md", text)
    assert found == Refused(
        "':expect: off: matches' is below the blank line or --- that ends the options, so it would "
        "be read as code: move it up to the other options (no blank line between the fence and the "
        "options, or among them)", 4)


def test_an_indented_line_below_the_blank_line_after_an_option_is_refused(tmp_path):
    text = "```{probe}\n:values: off\n:expect-output:\n   [off]\n   1\n\n   x = 1\n```\n"
    found = read_myst(tmp_path / "index.md", text)
    assert found == Refused(
        "this line is indented like a continuation of :expect-output:, but the blank line above it "
        "ends the options, so it would be read as code: remove the blank line to continue "
        ":expect-output:, or unindent the code", 7)


class OldMystMachine:
    """myst-parser < 5's state machine, as much of it as SourceLines asks for: it is known by its
    module and names the file and the fence's line."""

    reporter = None  # (a directive takes it; SourceLines reports nothing)

    def __init__(self, source: str) -> None:
        self.source = source

    def get_source_and_line(self, lineno: int | None = None) -> tuple[str, int | None]:
        return self.source, lineno


OldMystMachine.__module__ = "myst_parser.mocking"


def old_myst(path: Path) -> Read | Refused:
    """The demo of OLD_MYST as myst-parser < 5 hands it over: the text under the fence as its
    block, the options it read (only the lines that start with ":", so the first one alone here)
    and the rest as the body, one line below the fence."""
    source = str(path)
    body = ["   same_as_forward", ":expect: off: differs", "", "x = 1"]
    Probe("probe", [], {"values": "off,"}, StringList(body, source), 3, 1,
          ":values: off,\n" + "\n".join(body), None, OldMystMachine(source)).run()
    (found,) = Probe.seen
    return found


OLD_MYST = """\
Some text.

- ```{probe}
  :values: off,
     same_as_forward
  :expect: off: differs

  x = 1
  ```
"""


def test_before_myst_parser_5_the_options_are_read_again_from_the_file(tmp_path):
    path = tmp_path / "index.md"
    path.write_text(OLD_MYST, encoding="utf-8")
    found = old_myst(path)
    assert isinstance(found, Read)
    # (the list item's "- " taken off each line, as myst-parser took it off the body)
    assert found.options == {"values": "off,\nsame_as_forward", "expect": "off: differs"}
    assert found.code == Code("x = 1", str(path), (8,))
    assert found.map == SourceMap(str(path), 3, "colon", 4, 7,
                                  (OptionSpan("values", 4, 6), OptionSpan("expect", 6, 7)))


def test_before_myst_parser_5_a_file_that_cannot_be_read_leaves_the_options_as_myst_read_them(tmp_path):
    found = old_myst(tmp_path / "gone.md")
    assert isinstance(found, Read)
    assert found.options == {"values": "off,"}
    assert found.map == SourceMap(str(tmp_path / "gone.md"), 3, "colon", 4, 4)


def test_a_located_problem_names_its_option_and_carries_its_line():
    plain = located(syntax.SyntaxProblem("must be a number"), 12)
    named = located(syntax.SyntaxProblem("must be a number"), 7, "timeout")
    assert (plain.args[0], plain.line) == ("must be a number", 12)  # type: ignore[attr-defined]
    assert (named.args[0], named.line) == (":timeout: must be a number", 7)  # type: ignore[attr-defined]
