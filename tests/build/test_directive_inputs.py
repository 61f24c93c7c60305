"""What a writer types into a directive is taken as written, or refused at its line.

Real ``python -m sphinx`` builds of two small roots:

- tests/roots/test-directive-inputs: demo ids that clash (reST and MyST), options over several
  lines in MyST (colon form and YAML form, both run), option blocks myst-parser cannot read;
- tests/roots/test-option-numbers: timeouts and tolerances that cannot be (nothing runs), and
  the same for the conf.py values.

The number rules at their bounds and the option block reader, without a build:
tests/unit/test_options.py and tests/unit/test_syntax.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import column, copy_root, processes_tagged, sphinx_build, tagged_build, verdicts

from sphinx_autocast_demo.core import config

MATCH = "\u2713 matches eager"
RST, MD = "index.rst", "options_md.md"
# What the reST demos' lines add to what they print: a compiled run must compile something.
COMPILES = "; torch.compile(lambda t: t + 1)(torch.ones(1))"
# Their builds run demos, but most tests read only the directive errors (conftest.py).
TORCH_FREE_FIXTURES = ("build", "numbers")


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return tagged_build("directive-inputs", tmp_path_factory)


@pytest.fixture(scope="module")
def numbers(tmp_path_factory):
    return tagged_build("option-numbers", tmp_path_factory)


def line_of(path: Path, text: str, after: int = 0) -> int:
    """1-based line of the first line of ``path`` below line ``after`` whose stripped text is ``text``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if i > after and line.strip() == text)


def mark(path: Path, name: str) -> int:
    """Line of the ``% MARK-name`` comment above a MyST demo; its fence is the next line."""
    return line_of(path, f"% MARK-{name}")


def ours(build) -> list[str]:
    """Our warnings' first lines. myst-parser warns too about an option block it cannot read:
    Sphinx 7.3+ tags those [myst.directive_parse]; Sphinx 7.2 prints no types, and there its
    message ("'autocast-demo': Invalid options format") is how to tell it."""
    return [line for line in build.stderr.splitlines()
            if ": WARNING: " in line and "[myst." not in line and not line.startswith(" ")
            and "': Invalid options format" not in line]


def located(build, path: Path, line: int, message: str) -> None:
    expected = f"{path}:{line}: WARNING: {message}"
    assert expected in build.stderr, f"{expected!r} not in\n{build.stderr}"


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


@pytest.mark.torch  # reads what its demos did
def test_each_demo_keeps_its_own_id_code_and_result(build):
    soup = build.html("index")
    boxes = soup.select("div.autocast-demo")
    assert [b["id"] for b in boxes] == ["autocast-demo-2", "autocast-demo-3"]
    for ident, word in (("autocast-demo-2", "first"), ("autocast-demo-3", "second")):
        box = soup.find(id=ident)
        assert box.select_one("pre").get_text().strip() == f'print("{word}")' + COMPILES
        assert box.select_one(".autocast-demo-output pre").get_text().strip() == word
        assert verdicts(soup, ident) == [MATCH]
    notes = [n.get_text(" ", strip=True) for n in soup.select(".admonition.warning")]
    assert len(notes) == 3 and sum("already the id of the demo at line" in n for n in notes) == 2
    md = build.html("options_md")
    assert [b["id"] for b in md.select("div.autocast-demo")] == ["colon-form", "yaml-form"]


# -- 2. MyST option blocks ------------------------------------------------------------------

SNIPPET = "x = torch.ones(4, 4, requires_grad=True)\nprint(torch.compile(lambda x: x.sum())(x).item())"


@pytest.mark.torch  # reads what its demos did
@pytest.mark.parametrize("ident", ["colon-form", "yaml-form"])
def test_myst_options_over_several_lines_reach_the_demo(build, ident):
    soup = build.html("options_md")
    box = soup.find(id=ident)
    assert box.select_one("pre").get_text().strip() == SNIPPET  # no option line became code
    values = [tr.select_one("th strong, td strong").get_text() for tr in box.select("tbody tr")]
    assert values == ["off", "same_as_forward"]  # :values: over two lines
    assert verdicts(soup, ident) == [MATCH, MATCH]
    if ident == "colon-form":  # one of its records broke (below): the table asks "as recorded?"
        assert column(soup, ident, ("as recorded?",))[0] == "yes (matches)"  # off
    else:  # every one holds: no column of yes, the footer says it once
        assert "as recorded?" not in box.select_one("thead").get_text()
        assert "What the page records of each value holds" in box.get_text(" ")


@pytest.mark.torch  # reads what its demos did
def test_myst_expect_output_blocks_are_checked_at_their_line(build):
    # colon-form records 16.0 under [off] (true) and 99.0 under [same_as_forward] (false): only
    # the false one is reported, at the :expect-output: line; yaml-form's [*] 16.0 holds.
    path = build.src / MD
    located(build, path, line_of(path, ":expect-output:"),
            "value same_as_forward: the printed output is not what the page records in "
            ":expect-output:")
    assert "recorded: '99.0'\n  printed:  '16.0' [autocast_demo.output]" in build.stderr
    assert sum("[autocast_demo.output]" in line for line in build.stderr.splitlines()) == 1
    # The page says which record broke: the output, while the outcome it records holds.
    recorded = column(build.html("options_md"), "colon-form", ("as recorded?",))
    assert recorded == ["yes (matches)", "no: the printed output is not the "
                        "recorded one (outcome matches holds)"]


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


@pytest.mark.torch  # reads what its demos did
def test_only_the_readable_demos_ran_and_every_mistake_counts(build):
    assert build.returncode == 1, build.stderr
    warnings = ours(build)
    assert len(warnings) == 4 + 5 + 1, "\n".join(warnings)  # ids, blocks, the false output
    assert "snippet-error" not in build.stderr and "Traceback" not in build.stderr
    assert "missing-expectation" not in build.stderr
    assert (build.stats["demos"], build.stats["checked"], build.runs()) == (4, 6, (12, 0))
    assert build.stats["failures"] == 10
    assert processes_tagged(build.tag) == []


# -- 3. numbers -----------------------------------------------------------------------------

SECONDS = "a number of seconds > 0 and at most 86400 (24 h)"
FINITE = "a finite number >= 0 (0: bitwise equal)"
KEPT = "a number of seconds >= 0 and at most 86400 (24 h; 0: none is kept)"
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


# -- accept mode rewrites a MyST option over several lines in place -------------------------

def test_accept_rewrites_myst_options_over_several_lines(tmp_path_factory):
    src = copy_root("myst-accept", tmp_path_factory)
    page = src / "index.md"
    before = page.read_text(encoding="utf-8")
    out = src / "_build" / "check"
    write = sphinx_build(src, out, "-b", "autocast-check", env={"AUTOCAST_DEMO_ACCEPT": "1"})
    assert "1 file rewritten" in write.stdout + write.stderr, write.stderr
    after = before.replace("   same_as_forward: differs\n", "   same_as_forward: matches\n").replace(
        ":expect-output:\n   [off]\n   15.0\n", ":expect-output: |\n   [off]\n   16.0\n")
    assert page.read_text(encoding="utf-8") == after
    again = sphinx_build(src, out, "-b", "autocast-check", "-W")
    assert again.returncode == 0, again.stderr
    assert again.runs() == (0, 2)
