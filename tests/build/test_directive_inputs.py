"""What a writer types into a directive is taken as written: a real ``python -m sphinx`` build
of tests/roots/test-directive-inputs whose demos run (their ids kept apart though names clash,
options over several lines in MyST, colon form and YAML form, reaching the demo, and its
``:expect-output:`` checked), and accept mode rewriting such an option in place.

Each mistake in it (and in tests/roots/test-option-numbers) refused at its line, in builds that
run no demo: tests/unit/test_directive_inputs_read.py.
"""

from __future__ import annotations

import pytest
from conftest import (
    column,
    copy_root,
    line_of,
    located,
    ours,
    processes_tagged,
    sphinx_build,
    tagged_build,
    verdicts,
)
from fakes import COMPILES

MATCH = "\u2713 matches eager"
RST, MD = "index.rst", "options_md.md"


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return tagged_build("directive-inputs", tmp_path_factory)


# -- 1. demo ids ----------------------------------------------------------------------------

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


def test_only_the_readable_demos_ran_and_every_mistake_counts(build):
    assert build.returncode == 1, build.stderr
    warnings = ours(build)
    assert len(warnings) == 4 + 5 + 1, "\n".join(warnings)  # ids, blocks, the false output
    assert "snippet-error" not in build.stderr and "Traceback" not in build.stderr
    assert "missing-expectation" not in build.stderr
    assert (build.stats["demos"], build.stats["checked"], build.runs()) == (4, 6, (12, 0))
    assert build.stats["failures"] == 10
    assert processes_tagged(build.tag) == []


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
