"""What a writer types into a directive or conf.py, refused at its line: real ``python -m
sphinx`` builds that run no demo (``autocast_demo_execute = "never"``), of two small roots:

- tests/roots/test-directive-inputs: demo ids that clash (reST and MyST), option blocks
  myst-parser cannot read;
- tests/roots/test-option-numbers: timeouts and tolerances that cannot be, and the same for the
  conf.py values.

The demos of test-directive-inputs run (their ids, MyST options over several lines, accept):
tests/build/test_directive_inputs.py. The number rules at their bounds and the option block
reader, without a build: tests/unit/test_options.py and tests/unit/test_syntax.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import copy_root, line_of, located, never_build, ours, sphinx_build
from fakes import COMPILES

from sphinx_autocast_demo.core import config

RST, MD = "index.rst", "options_md.md"


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return never_build("directive-inputs", tmp_path_factory)


@pytest.fixture(scope="module")
def numbers(tmp_path_factory):
    return never_build("option-numbers", tmp_path_factory)


def mark(path: Path, name: str) -> int:
    """Line of the ``% MARK-name`` comment above a MyST demo; its fence is the next line."""
    return line_of(path, f"% MARK-{name}")


# -- 1. demo ids ----------------------------------------------------------------------------

TAKEN = "each demo needs its own, or one would show the other's results: choose another name"


def test_a_name_that_an_unnamed_demo_already_has_is_located_at_its_name_line(build):
    # The unnamed demo came first and got autocast-demo-3 (autocast-demo-2 was a :name:).
    path = build.src / RST
    unnamed = line_of(path, 'print("second")' + COMPILES) - 4
    located(build, path, line_of(path, ":name: Autocast Demo 3"),
            f"autocast-demo: :name: 'Autocast Demo 3' gives the HTML id 'autocast-demo-3', which "
            f"is already the id of the demo at line {unnamed} (demos without :name: get "
            f"autocast-demo-<n>); {TAKEN}, e.g. :name: autocast-demo-3-2 [autocast_demo.directive]")


def test_a_name_that_becomes_a_taken_id_is_located_at_its_name_line(build):
    path = build.src / RST
    first = line_of(path, ":name: autocast-demo-2") - 1
    located(build, path, line_of(path, ":name: autocast_demo_2"),
            "autocast-demo: :name: 'autocast_demo_2' gives the HTML id 'autocast-demo-2', which "
            f"is already the id of the demo at line {first}")


def test_a_taken_name_in_myst_is_located_at_its_name_line(build):
    path = build.src / MD
    first = line_of(path, ":name: colon-form") - 1
    located(build, path, line_of(path, ":name: Colon Form"),
            "autocast-demo: :name: 'Colon Form' gives the HTML id 'colon-form', which is already "
            f"the id of the demo at line {first}; {TAKEN}, e.g. :name: colon-form-2")


def test_a_name_that_gives_no_id_is_located_at_its_name_line(build):
    path = build.src / RST
    located(build, path, line_of(path, ":name: ???"),
            "autocast-demo: :name: '???' gives no HTML id: use letters and digits, e.g. "
            ":name: fp16-overflow [autocast_demo.directive]")


# -- 2. MyST option blocks ------------------------------------------------------------------

UNREADABLE = "this option block cannot be read (myst-parser: found unexpected end of stream), " \
             "so none of its options would apply; write it like this:"


@pytest.mark.parametrize(("name", "below", "message"), [
    ("unclosed-quote", 3, UNREADABLE),  # the :caption: line
    ("bad-yaml", 4, UNREADABLE),  # the caption: line
    ("no-closing-dashes", 2, "the option block opened by --- has no closing ---, so the whole "
     "body would be read as options: put a line --- under the last option"),
    ("blank-before-indented", 5, "this line is indented like a continuation of :expect-output:, "
     "but the blank line above it ends the options, so it would be read as code: remove the "
     "blank line to continue :expect-output:, or unindent the code"),
    ("option-after-blank", 4, "':expect: off: matches' is below the blank line or --- that ends "
     "the options, so it would be read as code: move it up to the other options"),
])
def test_an_option_block_myst_cannot_read_is_a_located_directive_error(build, name, below, message):
    path = build.src / MD
    located(build, path, mark(path, name) + below, f"autocast-demo: {message}")


def test_the_forms_to_write_are_shown(build):
    assert "write it like this:\n:values: off, same_as_forward\n:expect: off: matches,\n" in build.stderr
    assert "write it like this:\n---\nvalues: off, same_as_forward\nexpect: |\n" in build.stderr


# -- 3. numbers -----------------------------------------------------------------------------

SECONDS = "a number of seconds > 0 and at most 86400 (24 h)"
FINITE = "a finite number >= 0 (0: bitwise equal)"
KEPT = ("-1 (a terminal's builds keep it 10 min, others none) or a number of seconds >= 0 and "
        "at most 86400 (24 h; 0: none is kept)")
TIMEOUT = (f"must be {SECONDS}; leave the option out to use autocast_demo_timeout (120 s) "
           "[autocast_demo.directive]")
TOLERANCE = f"must be {FINITE} [autocast_demo.directive]"


@pytest.mark.parametrize(("page", "source", "message"), [
    (RST, ":timeout: inf", f":timeout: 'inf' {TIMEOUT}"),
    (RST, ":timeout: nan", f":timeout: 'nan' {TIMEOUT}"),
    (RST, ":timeout: 1e9", f":timeout: '1e9' {TIMEOUT}"),
    (RST, ":timeout: 0", f":timeout: '0' {TIMEOUT}"),
    (RST, ":grad-tolerance: nan", f":grad-tolerance: 'nan' {TOLERANCE}"),
    (RST, ":output-tolerance: -inf", f":output-tolerance: '-inf' {TOLERANCE}"),
    ("numbers_md.md", ":timeout: inf", f":timeout: 'inf' {TIMEOUT}"),
    ("numbers_md.md", "output-tolerance: inf", f":output-tolerance: 'inf' {TOLERANCE}"),
])
def test_a_number_option_out_of_range_is_located_at_its_line(numbers, page, source, message):
    path = numbers.src / page
    located(numbers, path, line_of(path, source), f"autocast-demo: {message}")


def test_numbers_out_of_range_fail_the_build_without_a_traceback(numbers):
    assert numbers.returncode == 1, numbers.stderr
    assert len(ours(numbers)) == 8, numbers.stderr
    assert "Traceback" not in numbers.stderr + numbers.stdout
    assert (numbers.stats["demos"], numbers.stats["checked"], numbers.stats["runs"]) == (0, 0, 0)
    assert "autocast-demo: 0 demos, 0 values checked" in numbers.stdout  # a summary all the same


@pytest.mark.parametrize(("name", "value", "rule"), [
    ("timeout", 'float("inf")', SECONDS),
    ("timeout", "0", SECONDS),
    ("timeout", "90000", SECONDS),
    ("grad_tolerance", 'float("nan")', FINITE),
    ("output_tolerance", "-1e-3", FINITE),
    ("keep_worker", "-5", KEPT),
])
def test_a_conf_py_number_out_of_range_is_refused_at_its_line(tmp_path_factory, name, value, rule):
    src = copy_root("option-numbers", tmp_path_factory)
    conf = src / "conf.py"
    conf.write_text(conf.read_text(encoding="utf-8") + f"autocast_demo_{name} = {value}\n",
                    encoding="utf-8")
    result = sphinx_build(src, src / "_build" / "html")
    assert result.returncode == 2, result.stderr
    line = len(conf.read_text(encoding="utf-8").splitlines())
    shown = repr(eval(value))  # as the message shows the value: inf, nan, 0, -0.001
    default = next(o.default for o in config.OPTIONS if o.name == name)
    assert (f"{conf}:{line}: autocast_demo_{name} = {shown} must be {rule} (default {default!r})"
            in result.stderr), result.stderr
