"""syntax.py without a build: the option languages a writer types (``:values:``, ``:expect:``,
``:expect-output:``, their scopes) and the messages that say what to write instead; the option
block read as docutils reads it, and the nesting (a list item, a quote) taken off a block."""

from __future__ import annotations

from dataclasses import replace

import pytest

from sphinx_autocast_demo.core.model import (
    Claim,
    Code,
    CompileClaim,
    CompileFacts,
    Demo,
    Environment,
    GraphBreak,
    Recompile,
    Skip,
    SourceMap,
    Tolerance,
)
from sphinx_autocast_demo.read import syntax
from sphinx_autocast_demo.read.syntax import SyntaxProblem, parse_expect_output, unnest

NAMES = ("same_as_forward", "off")


def test_split_top_level_honours_escapes_brackets_and_drops_empty_parts():
    # An escaped quote does not end the string, so its comma stays inside.
    assert syntax.split_top_level('a="x\\",y", b') == ['a="x\\",y"', "b"]
    assert syntax.split_top_level("f(1, 2); g\nh") == ["f(1, 2)", "g", "h"]
    assert syntax.split_top_level(" a ,, b , ") == ["a", "b"]


def test_a_literal_becomes_json_data_and_torch_dtypes_a_marker():
    assert syntax.literal("(-1, 2.5, None, True, 'a')") == [-1, 2.5, None, True, "a"]
    assert syntax.literal('{"dtype": torch.float16, "n": [-3]}') == {
        "dtype": {"__torch__": "float16"}, "n": [-3]}


@pytest.mark.parametrize(("source", "message"), [
    ("{1: 2}", "dict keys must be strings"),
    ("{**other}", "dict keys must be strings"),
    ("-True", "'-True' is not allowed in a value"),  # a negated bool is no number
    ("np.float16", "'np.float16' is not allowed in a value"),  # only torch's dtypes
    ("[1,", "'[1,' is not a Python literal"),
])
def test_what_is_not_a_literal_is_named(source, message):
    with pytest.raises(SyntaxProblem, match=message.replace("[", r"\[").replace("*", r"\*")):
        syntax.literal(source)


def test_values_from_conf_py_items_default_and_the_devices_autocast():
    variants = syntax.parse_values([" default ", "autocast"], "cuda", "float16")
    assert [(v.name, v.value, v.source) for v in variants] == [
        ("default", syntax.UNSET, ""),
        ("autocast", [{"device_type": "cuda", "dtype": {"__torch__": "float16"}}],
         '[{"device_type": "cuda", "dtype": torch.float16}]'),
    ]


@pytest.mark.parametrize(("text", "builtins", "message", "example"), [
    ("", True, "no values given: write e.g. same_as_forward, off, autocast", False),
    ("same_as_forwad", True, "unknown value 'same_as_forwad' (did you mean 'same_as_forward'?)", True),
    # A config other than the default knows no built-in values: only default, or named ones.
    ("off", False, "unknown value 'off': use one of default, or name it", True),
    ("1x=[]", True, "'1x' is not a value name; write name=<value>", False),
    ("fp16=[{'a': x}]", True, "value fp16: 'x' is not allowed in a value", True),
])
def test_values_errors_name_the_value_and_what_to_write(text, builtins, message, example):
    with pytest.raises(SyntaxProblem) as info:
        syntax.parse_values(text, "cuda", "float16", builtins=builtins)
    assert message in str(info.value)
    if example:  # the example to copy is for the demo's device
        assert 'fp16=[{"device_type": "cuda", "dtype": torch.float16}]' in str(info.value)


def test_expect_reads_star_no_config_and_any_separator():
    assert syntax.parse_expect("*: differs; off = raises   torch._dynamo.exc.X\n"
                               "same_as_forward: no-config", NAMES) == (
        ("*", Claim("differs")), ("off", Claim("raises", "torch._dynamo.exc.X")),
        ("same_as_forward", Claim("no-config")))


@pytest.mark.parametrize(("text", "message"), [
    ("off matches", "'off matches': write value: outcome, e.g. off: matches"),
    ("off: matchs", "'matchs' is not an outcome (did you mean 'matches'?)"),
    ("autocast: matches", "'autocast' is not a value of this demo (its values: same_as_forward, off)"),
    # Written differently, the same scope: one record twice.
    ("off[cpu]: matches, off[ cpu ]: differs", "'off[cpu]' is recorded twice"),
])
def test_expect_errors_say_what_is_wrong(text, message):
    with pytest.raises(SyntaxProblem) as info:
        syntax.parse_expect(text, NAMES)
    assert message in str(info.value)


def test_a_scope_is_kept_in_one_spelling():
    assert syntax.record_name("off", "torch >= 2.15, cuda") == "off[torch>=2.15 cuda]"
    assert syntax.record_name("*", "cpu") == "*[cpu]"
    assert syntax.parse_expect("off[torch >= 2.14 , <2.16]: matches", NAMES) == (
        ("off[torch>=2.14,<2.16]", Claim("matches")),)
    with pytest.raises(ValueError):
        syntax.record_name("off", "gpu")


def test_scoped_records_that_disagree_where_both_apply_are_refused():
    with pytest.raises(SyntaxProblem) as info:
        syntax.parse_expect("off[torch>=2.13]: matches, off[torch<2.16]: differs", NAMES)
    assert str(info.value).startswith("off[torch>=2.13]: matches and off[torch<2.16]: differs "
                                      "overlap (both apply to torch 2.13)")
    # Apart, agreeing, of different values, or one unscoped: all fine.
    for text in ("off[torch<2.14]: matches, off[torch>=2.14]: differs",
                 "off[torch>=2.13]: matches, off[torch<2.16]: matches",
                 "off[cpu]: matches, same_as_forward[cpu]: differs",
                 "off: matches, off[cpu]: differs"):
        assert len(syntax.parse_expect(text, NAMES)) == 2, text


def test_expect_output_blocks_keep_inner_blank_lines():
    assert syntax.parse_expect_output("\n[off]\n  1.0\n\n  2.0\n[*]\n x \n", NAMES) == (
        ("off", "1.0\n\n2.0"), ("*", "x"))
    with pytest.raises(SyntaxProblem, match=r"starts with a \[value\] line"):
        syntax.parse_expect_output("hello\n[off]\n1", NAMES)
    with pytest.raises(SyntaxProblem, match=r"\[sf\] is not a value of this demo"):
        syntax.parse_expect_output("[sf]\n1", NAMES)


def test_a_claim_is_read_once_and_only_when_well_formed():
    assert syntax.parse_claim("no-config") == Claim("no-config")
    assert syntax.parse_claim("raises torch.OutOfMemoryError") == Claim("raises", "torch.OutOfMemoryError")
    for wrong in ("raise KeyError", "raises", "matches!", "Matches", "raises 3x"):
        assert syntax.parse_claim(wrong) is None, wrong
    assert syntax.expect_text([("*", Claim("matches")), ("off", Claim("raises", "E"))]) == \
        "*: matches, off: raises E"


def test_an_option_block_ends_where_docutils_ends_it():
    fields, end = syntax.option_fields([":a: 1", ": odd", ":::", "x"])
    assert [(f.name, f.text, f.line) for f in fields] == [("a", ":a: 1", 0), ("", ": odd", 1)]
    assert end == 2  # a MyST fence is no option line
    assert syntax.continuation(["    [off]", "      1.0", "", "    x  "]) == "[off]\n  1.0\n\nx"


def test_option_fields_read_continuations_as_docutils_does():
    lines = [":values: off,", "   same_as_forward", ":expect-output:", "   [off]", "     1.0",
             ":name: x", "", "code"]
    fields, end = syntax.option_fields(lines)
    assert [(f.name, f.line) for f in fields] == [("values", 0), ("expect-output", 2), ("name", 5)]
    assert syntax.continuation(fields[1].more) == "[off]\n  1.0"
    assert end == 6
    # reST: the block is indented; a more-indented ":" line continues a value
    fields, end = syntax.option_fields(["   :a: 1", "      :b: 2", "   :c:", "x = 1"])
    assert [(f.name, f.more) for f in fields] == [("a", ["      :b: 2"]), ("c", [])] and end == 3
    assert not syntax.is_option_line(":::{note}") and syntax.is_option_line("  :a: 1")


def test_unnest_removes_only_the_nesting():
    assert unnest(["  :expect: off: matches", "", "  x = 1", "      y"], 2) == [
        ":expect: off: matches", "", "x = 1", "    y"]
    assert unnest(["> :a: b", ">", "> x"], 2) == [":a: b", "", "x"]
    assert unnest(["lazy", "  x"], 2) == ["lazy", "x"]  # a line without the nesting is kept
    assert unnest(["a"], 0) == ["a"]


def test_expect_output_scopes_parse_and_govern_like_expect():
    blocks = parse_expect_output("[off]\n2.0\n[off[torch >= 2.16]]\n3.0\n[*[cuda]]\n4.0", ("off", "sf"))
    assert blocks == (("off", "2.0"), ("off[torch>=2.16]", "3.0"), ("*[cuda]", "4.0"))
    with pytest.raises(SyntaxProblem, match="is not a scope"):
        parse_expect_output("[off[torch>>2]]\nx", ("off",))
    demo = Demo("index", "d", 1, Code("x = 1", "i.rst", (2,)), None, "c", (), (), blocks,
                "inductor", "cpu", "bfloat16", 1.0, Tolerance(0, 0), SourceMap("i.rst", 1, "rst", 2, 2))
    old, new = Environment("t", "2.13.0", "3.11"), Environment("t", "2.16.1", "3.11")
    assert demo.expected_output("off", old) == "2.0"
    assert demo.expected_output("off", new) == "3.0"
    assert demo.expected_output("sf", replace(old, device="cuda")) == "4.0"
    assert demo.expected_output("sf", old) is None


def test_expect_compile_reads_counts_per_value_and_says_what_to_write():
    read = syntax.parse_expect_compile("*: graphs 2, breaks 1\noff[torch>=2.15]: recompiles=0", NAMES)
    assert read == (("*", CompileClaim(graphs=2, breaks=1)),
                    ("off[torch>=2.15]", CompileClaim(recompiles=0)))
    assert str(read[0].claim) == "graphs 2, breaks 1"
    facts = CompileFacts(graphs=3, recompiles=(Recompile("c == 1.0"),))
    assert read[0].claim.wrong(facts) == {"graphs": ("2", "3"), "breaks": ("1", "0")}
    assert CompileClaim(graphs=3).wrong(facts) == {}
    for text, says in [("off graphs 2", "write value: graphs N"), ("of: graphs 2", "did you mean 'off'"),
                       ("off: grpahs 2", "did you mean 'graphs'"), ("off: graphs 2, graphs 3", "each once"),
                       ("off: graphs two", "not a count"),
                       ("off: graphs 1; off: breaks 0", "recorded twice"),
                       ("off: breaks 2 [one reason]", "one reason for each graph break"),
                       ("off: graphs 1 [a reason]", "one reason for each graph break")]:
        with pytest.raises(SyntaxProblem, match=says):
            syntax.parse_expect_compile(text, NAMES)


def test_expect_compile_records_why_each_graph_broke_and_which_guard_failed():
    """Issue 49: the same counts for other reasons are a change (a release that breaks the graph
    at another construct, a guard on another value)."""
    text = ("*: graphs 2, breaks 2 [generic_jump TensorVariable(); Failed to trace builtin "
            "operator]; off: recompiles 1 [L['x'].size()[0] == 3]")
    read = syntax.parse_expect_compile(text, NAMES)
    claim = read[0].claim
    assert claim.break_reasons == ("generic_jump TensorVariable()", "Failed to trace builtin operator")
    assert read[1].claim.recompile_guards == ("L['x'].size()[0] == 3",)
    assert syntax.parse_expect_compile(f"*: {claim}", NAMES)[0].claim == claim  # as accept writes it
    same = CompileFacts(graphs=2, breaks=(GraphBreak("Failed to trace builtin operator"),
                                          GraphBreak("generic_jump TensorVariable()")))
    assert claim.wrong(same) == {}  # (in any order)
    other = CompileFacts(graphs=2, breaks=(GraphBreak("Failed to trace builtin operator", count=2),))
    assert claim.wrong(other) == {"breaks": (
        "[generic_jump TensorVariable(); Failed to trace builtin operator]",
        "[Failed to trace builtin operator; Failed to trace builtin operator]")}
    assert str(claim.observed(other)) == ("graphs 2, breaks 2 [Failed to trace builtin operator; "
                                          "Failed to trace builtin operator]")
    guards = read[1].claim
    assert guards.wrong(CompileFacts(graphs=2, recompiles=(Recompile("c == 1.0"),))) == {
        "recompiles": ("[L['x'].size()[0] == 3]", "[c == 1.0]")}
    # A record of counts alone still holds whatever the reasons.
    assert CompileClaim(breaks=2).wrong(other) == {}


def test_expect_compile_records_the_frames_dynamo_skipped_and_why():
    """Issue 49: a frame dynamo gave up on whole (run eagerly) is neither a graph nor a break."""
    (read,) = syntax.parse_expect_compile("*: graphs 0, skipped 1 [Attempt to trace generator]",
                                          NAMES)
    claim = read.claim
    assert (claim.skipped, claim.skip_reasons) == (1, ("Attempt to trace generator",))
    assert str(claim) == "graphs 0, skipped 1 [Attempt to trace generator]"
    assert claim.wrong(CompileFacts(graphs=0, skipped=(Skip("Attempt to trace generator"),))) == {}
    assert claim.wrong(CompileFacts(graphs=1)) == {"graphs": ("0", "1"), "skipped": ("1", "0")}
    other = CompileFacts(graphs=0, skipped=(Skip("Unsupported context manager"),))
    assert claim.wrong(other) == {"skipped": ("[Attempt to trace generator]",
                                              "[Unsupported context manager]")}
    with pytest.raises(SyntaxProblem, match="one reason for each graph break or skipped frame"):
        syntax.parse_expect_compile("*: skipped 2 [one]", NAMES)
    with pytest.raises(SyntaxProblem, match="did you mean 'skipped'"):
        syntax.parse_expect_compile("*: skiped 1", NAMES)


def test_only_a_record_of_graphs_lets_a_compiled_run_compile_nothing():
    """A record of breaks alone says nothing of graphs: a run that compiled nothing is still no
    verdict there (``held_to_compile``); ``graphs 0`` is a fact the record checks."""
    values = syntax.parse_values(["off"], "cpu", "bfloat16")
    demo = Demo(docname="index", ident="d", lineno=1, code=Code("x = 1", "index.rst", (5,)),
                group=None, config="torch._functorch.config.backward_pass_autocast",
                variants=values, expect=(), expect_output=(), backend="aot_eager", device="cpu",
                dtype="bfloat16", timeout=120.0, tolerance=Tolerance(grad=0.0, output=1e-3),
                source_map=SourceMap("index.rst", 1, "rst", 2, 4, ()))
    assert demo.held_to_compile
    breaks_only = replace(demo, expect_compile=syntax.parse_expect_compile("off: breaks 0", ("off",)))
    assert breaks_only.held_to_compile and breaks_only.held_to_alike is False
    graphs = replace(demo, expect_compile=syntax.parse_expect_compile("*: graphs 0", ("off",)))
    assert not graphs.held_to_compile


def test_a_reason_is_free_text_and_reads_back_as_accept_writes_it():
    """Review of issue 49's reasons: an apostrophe opened a string and swallowed the next
    record; a reason in another order, or with its spaces doubled, was a change every build."""
    text = "*: graphs 2, breaks 1 [Dynamo can't trace f(]; off: graphs 1, breaks 0 []"
    star, off = (record.claim for record in syntax.parse_expect_compile(text, NAMES))
    assert star.break_reasons == ("Dynamo can't trace f(",) and off == CompileClaim(
        graphs=1, breaks=0, break_reasons=())
    for claim in (star, off):
        assert syntax.parse_expect_compile(f"*: {claim}", NAMES)[0].claim == claim
    two = CompileClaim(breaks=2, break_reasons=("b", "a"))
    seen = CompileFacts(graphs=2, breaks=(GraphBreak("a"), GraphBreak("b  ")))
    assert two.wrong(seen) == {} and two.observed(seen) == two  # (accept leaves it as it is)
    assert not syntax.reason_text_fits("a; b") and not syntax.reason_text_fits("x]")
    assert syntax.reason_text_fits("L['x'].size()[0] == 3")
    for bad in ("*: breaks 1 [a] [b]", "*: breaks 1 [a]]"):
        with pytest.raises(SyntaxProblem, match="one reason for each graph break"):
            syntax.parse_expect_compile(bad, NAMES)
