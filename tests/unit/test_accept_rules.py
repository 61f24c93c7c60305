"""accept.py's rewriting on text and made-up results (no build): which records change, how the
option lines are edited, and when nothing may be written."""

from __future__ import annotations

from dataclasses import replace

import pytest
from fakes import HERE, demo, ran, result, written
from sphinx.errors import ConfigError

from sphinx_autocast_demo import accept as stage
from sphinx_autocast_demo.accept import edit
from sphinx_autocast_demo.accept import rewrite as accept
from sphinx_autocast_demo.accept.edit import Change, apply, edit_expect, find_block
from sphinx_autocast_demo.accept.newrecord import Blocked
from sphinx_autocast_demo.core.model import Claim, OptionSpan, SourceMap, Verdict
from sphinx_autocast_demo.judge import check
from sphinx_autocast_demo.read import syntax


@pytest.mark.parametrize(("value", "mode"), [("", ""), ("0", ""), (" Yes ", "write"), ("TRUE", "write"),
                                             ("dry-run", "diff"), ("diff", "diff"), ("maybe", "?")])
def test_the_mode_is_read_from_the_environment(monkeypatch, value, mode):
    monkeypatch.setenv(stage.ENV, value)
    assert stage.mode() == mode
    if mode == "?":
        with pytest.raises(ConfigError, match=r"^AUTOCAST_DEMO_ACCEPT='maybe': use 1 \(rewrite"):
            stage.validate()
    else:
        stage.validate()


def test_lines_split_at_newlines_only_and_changes_apply_bottom_up():
    assert edit.split_lines("a\fb\nc") == ["a\fb\n", "c"]  # a form feed is no line break here
    text = "l0\nl1\nl2\n"
    # At one line, the replacement goes in before the insertion above it.
    assert edit.apply(text, [Change("x", 1, 1, ["ins"], ""), Change("x", 1, 2, ["L1"], "")]) == (
        "l0\nins\nL1\nl2\n")
    assert edit.apply("a\r\nb\r\n", [Change("x", 1, 1, ["x"], "")]) == "a\r\nx\r\nb\r\n"


def test_a_missing_expect_option_is_written_in_the_blocks_style():
    rst = [".. autocast-demo::", "   :values: off", "", "   x = 1"]
    block = edit.find_block(rst, SourceMap("x", 1, "rst", 2, 3, (OptionSpan("values", 2, 3),)))
    assert edit.edit_expect(rst, block, [("off", "differs")]) == ["   :expect: off: differs"]
    bare = [".. autocast-demo::", "", "    x = 1"]  # no options: indented as the body
    block = edit.find_block(bare, SourceMap("x", 1, "rst", 2, 2))
    assert (block.start, block.indent) == (1, "    ")
    yaml = ["```{autocast-demo}", "---", "values: off", "---", "x = 1"]
    block = edit.find_block(yaml, SourceMap("x", 1, "yaml", 3, 4, (OptionSpan("values", 3, 4),)))
    assert edit.edit_expect(yaml, block, [("off", "differs")]) == ['expect: "off: differs"']
    listed = ["- :::{autocast-demo}", "  x = 1", "  :::"]  # a fence in a list item
    block = edit.find_block(listed, SourceMap("x", 1, "colon", 2, 2))
    assert edit.edit_expect(listed, block, [("off", "differs")]) == ["  :expect: off: differs"]


def test_a_record_is_rewritten_as_written_and_a_new_one_follows_the_layout():
    lines = [".. autocast-demo::", "   :values: off, same_as_forward",
             "   :expect: off[torch >= 2.15]: matches, same_as_forward: matches", "", "   x = 1"]
    block = edit.find_block(lines, SourceMap("x", 1, "rst", 2, 4, (
        OptionSpan("values", 2, 3), OptionSpan("expect", 3, 4))))
    assert edit.edit_expect(lines, block, [("off[torch>=2.15]", "differs")]) == [
        "   :expect: off[torch >= 2.15]: differs, same_as_forward: matches"]
    lines = [".. autocast-demo::", "   :values: a=1, b=2, c=3", "   :expect: a: matches,",
             "            b: matches", "", "   x = 1"]
    block = edit.find_block(lines, SourceMap("x", 1, "rst", 2, 5, (
        OptionSpan("values", 2, 3), OptionSpan("expect", 3, 5))))
    assert edit.edit_expect(lines, block, [("b", "differs"), ("c", "raises E")]) == [
        "   :expect: a: matches,", "            b: differs", "            c: raises E"]
    yaml = ["```{autocast-demo}", "---", "values: a=1, b=2", 'expect: "a: matches"', "---", "x = 1"]
    block = edit.find_block(yaml, SourceMap("x", 1, "yaml", 3, 5, (
        OptionSpan("values", 3, 4), OptionSpan("expect", 4, 5))))
    assert edit.edit_expect(yaml, block, [("b", "differs")]) == ['expect: "a: matches, b: differs"']


def test_a_docstring_takes_no_backslash_and_no_three_quotes():
    def says(new: str, path: str = "mod.py") -> str:
        return edit.unsafe_in_python(path, [Change(path, 0, 0, ["x", new], "")])
    assert says("a\\nb") == "the new record has a backslash, which a docstring reads as an escape"
    assert says('"""') == says("'''") == "the new record has three quotes, which would end the docstring"
    assert says("off: differs") == "" and says("a\\b", "page.rst") == ""


MATCHES, DIFFERS = Claim("matches"), Claim("differs")
THREE = syntax.parse_values("same_as_forward, off, autocast", "cpu", "bfloat16")


def test_the_new_record_keeps_star_for_most_and_names_the_rest():
    held = result(demo(), ran("matches"), ran("matches"))
    assert accept.new_expect(held) is None
    three = replace(demo((("*", "differs"),)), variants=THREE)
    found = result(three, ran("differs"), ran("matches"), ran("matches"))
    assert written(accept.new_expect(found)) == "*: matches, same_as_forward: differs"
    own = result(demo((("*", "matches"), ("off", "matches"))), ran("matches"), ran("differs"))
    assert written(accept.new_expect(own)) == "off: differs"


def test_a_shared_scoped_record_gives_the_value_its_own_and_an_error_blocks():
    scoped = replace(result(demo((("*[cpu]", "matches"),)), ran("matches"), ran("differs")),
                     environment=HERE)
    assert written(accept.new_expect(scoped)) == "off[cpu]: differs"
    failed = result(demo(), (Verdict("error", note="it timed out"), *ran("matches")[1:]), ran("matches"))
    with pytest.raises(Blocked, match=r"^value same_as_forward has no outcome to record \(it timed out\)$"):
        accept.new_expect(failed)


def test_the_demo_as_accepted_holds_when_judged_again():
    # What the accept build's own pages show: its demos judged against the records it wrote.
    found = result(demo((("*", "matches"),)), ran("differs", output="2.0"), ran("matches", output="2.0"))
    assert [f.subtype for f in found.findings] == ["mismatch"]
    assert accept.recorded(result(demo(), ran("matches"), ran("matches"))) is None
    found = replace(found, demo=replace(found.demo, expect_output=(("*", "1.0"),)))
    new = accept.recorded(found)
    assert new is not None
    # (a tie: '*' takes the first value's outcome, the other value is named)
    assert (written(new.expect), new.expect_output) == ("*: differs, off: matches", (("*", "2.0"),))
    assert new.expected("same_as_forward") == DIFFERS and new.expected("off") == MATCHES
    again = check.check(replace(found, demo=new))
    assert again.findings == ()


OUTPUT = [".. autocast-demo::", "   :values: same_as_forward, off", "   :expect-output:", "      [*]",
          "      1.0", "", "   print(x)"]
OUTPUT_MAP = SourceMap("x", 1, "rst", 2, 6, (OptionSpan("values", 2, 3), OptionSpan("expect-output", 3, 6)))


def printed(expected: tuple[tuple[str, str], ...], *outputs: str):
    the_demo = replace(demo(), expect_output=expected, source_map=OUTPUT_MAP)
    found = result(the_demo, *(ran("matches", output=o) for o in outputs))
    return edit.expect_output_lines(found, OUTPUT, edit.find_block(OUTPUT, OUTPUT_MAP))


def test_a_recorded_output_is_rewritten_under_star_or_per_value():
    assert printed((("*", "1.0"),), "1.0", "1.0") is None
    assert printed((("*", "1.0"),), "2.0", "2.0") == ["   :expect-output:", "      [*]", "      2.0"]
    assert printed((("*", "1.0"),), "2.0", "3.0") == [
        "   :expect-output:", "      [same_as_forward]", "      2.0", "      [off]", "      3.0"]
    with pytest.raises(Blocked, match="the output of \\* has a blank line, which ends a reST option"):
        printed((("*", "1.0"),), "a\n\nb", "a\n\nb")
    with pytest.raises(Blocked, match="scoped blocks"):
        printed((("*", "1.0"), ("off[cpu]", "1.0")), "2.0", "2.0")


def test_a_symbolic_link_is_written_through_and_stays_a_link(tmp_path):
    real_dir, link_dir = tmp_path / "real", tmp_path / "docs"
    real_dir.mkdir()
    link_dir.mkdir()
    real, link = real_dir / "page.rst", link_dir / "page.rst"
    real.write_text("old\n", encoding="utf-8")
    real.chmod(0o640)
    link.symlink_to(real)
    accept.write_all({str(link): "new\n"})
    assert link.is_symlink() and real.read_text(encoding="utf-8") == "new\n"
    assert real.stat().st_mode & 0o777 == 0o640
    assert sorted(p.name for p in (*real_dir.iterdir(), *link_dir.iterdir())) == ["page.rst", "page.rst"]


def test_a_module_is_read_and_written_in_its_declared_encoding_and_line_endings(tmp_path):
    module = tmp_path / "mod.py"
    data = '# -*- coding: latin-1 -*-\r\n"""Caf\u00e9."""\r\n'.encode("latin-1")
    module.write_bytes(data)
    link = tmp_path / "link.py"
    link.symlink_to(module)
    files = accept.Files()
    assert files.read(str(link)) == files.read(str(module)) == str(module)  # one file, two paths
    assert files.encodings[str(module)] == "iso-8859-1" and files.shown[str(module)] == str(link)
    text = files.texts[str(module)]
    assert text.endswith('"""Caf\u00e9."""\r\n')
    accept.write_all({str(module): edit.apply(text, [Change("x", 2, 2, ["x = '\u00e0'"], "")])},
                     files.encodings)
    assert module.read_bytes() == data + "x = '\u00e0'\r\n".encode("latin-1")
    why = edit.unsafe_in_python("mod.py", [Change("mod.py", 0, 0, ["off: raises \u0100rror"], "")],
                                "iso-8859-1")
    assert why == "the new record has '\u0100', which the file's encoding (iso-8859-1) cannot hold"


def test_crlf_line_endings_are_kept():
    text = ".. autocast-demo::\r\n   :expect: off: matches\r\n\r\n   x = 1\r\n"
    lines = [ln.rstrip("\r\n") for ln in text.split("\n")]
    block = find_block(lines, SourceMap("x", 1, "rst", 2, 3, (OptionSpan("expect", 2, 3),)))
    new = edit_expect(lines, block, [("off", "differs")])
    assert new == ["   :expect: off: differs"]
    out = apply(text, [Change("x", 1, 2, new, "")])
    assert out == text.replace("matches", "differs")


def test_new_pairs_follow_the_separator_in_use():
    lines = [".. autocast-demo::", "   :values: a=1, b=2, c=3", "   :expect: a: matches; b: matches",
             "", "   x = 1"]
    block = find_block(lines, SourceMap("x", 1, "rst", 2, 4, (
        OptionSpan("values", 2, 3), OptionSpan("expect", 3, 4))))
    assert edit_expect(lines, block, [("b", "differs"), ("c", "raises TypeError")]) == [
        "   :expect: a: matches; b: differs; c: raises TypeError"]
    yaml = ["```{autocast-demo}", "---", "values: a=1", "expect: 'a: matches'", "---", "x = 1"]
    where = SourceMap("x", 1, "yaml", 3, 5, (OptionSpan("values", 3, 4), OptionSpan("expect", 4, 5)))
    assert edit_expect(yaml, find_block(yaml, where), [("a", "differs")]) == ["expect: 'a: differs'"]


def test_a_value_written_into_myst_yaml_options_reads_back_as_it_was():
    # A reason of :expect-compile: may hold a quote or a backslash: written between plain
    # double quotes, it broke the page's YAML (review of issue 49's reasons).
    import yaml

    value = '*: graphs 2, breaks 1 [Unsupported call "print" at C:\\x\'s]'
    assert yaml.safe_load(f"expect-compile: {edit._quoted(value)}") == {"expect-compile": value}
