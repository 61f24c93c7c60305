"""The Sphinx side on made-up results (tests/fakes.py): check, render, the check builder's
cases, accept mode, the numbers of the report. No torch, no build."""

from __future__ import annotations

from dataclasses import fields, replace
from types import SimpleNamespace

import pytest
from docutils import frontend, nodes
from docutils.parsers import rst
from docutils.utils import new_document
from fakes import APP, SRC, TEXT, TORCH, demo, raised, ran, result

from sphinx_autocast_demo.accept import edit
from sphinx_autocast_demo.accept import rewrite as accept
from sphinx_autocast_demo.core import config
from sphinx_autocast_demo.core.model import (
    DemoResult,
    Frame,
    Location,
    VariantResult,
    skipped,
)
from sphinx_autocast_demo.judge.judgement import judge
from sphinx_autocast_demo.plan.planned import Stats
from sphinx_autocast_demo.present import render, tables
from sphinx_autocast_demo.read import directives
from sphinx_autocast_demo.read.syntax import parse_values
from sphinx_autocast_demo.report import builder
from sphinx_autocast_demo.report import console as report


def not_checked(found: DemoResult) -> dict[str, object]:
    """Value -> why this build did not check it (judge.NotChecked), for those it did not."""
    return {v.name: v.why for v in judge(found, TORCH).here.values if v.why is not None}


def rows(table) -> list[list[str]]:
    return [[entry.astext() for entry in row.children] for row in table.findall(lambda n: n.tagname == "row")]


def test_a_broken_record_is_one_finding_at_the_expect_line_naming_its_value():
    found = result(demo(), ran("differs", note="w.grad"), ran("matches"))
    assert [(f.subtype, f.variants, f.location) for f in found.findings] == [
        ("mismatch", ("same_as_forward",), Location(SRC, 3))]
    assert found.findings[0].message == (
        f"value same_as_forward: the page records 'matches' but with torch {TORCH} compiled "
        "differs from eager: w.grad")
    assert found.findings[0].concerns("same_as_forward") and not found.findings[0].concerns("off")


def test_the_same_error_under_every_value_is_one_finding_at_the_failing_line():
    found = result(demo(), raised(), raised())
    (finding,) = found.findings
    assert finding.variants == ("same_as_forward", "off")  # a tuple, not "same_as_forward, off"
    assert finding.location == Location(SRC, 5)  # line 1 of the snippet
    assert finding.message.startswith("every value: the snippet raised NameError: name 'y'")
    assert finding.message.endswith("record the error with  :expect: *: raises NameError")


def test_an_engine_refusal_is_known_by_its_reason_not_by_its_words():
    the_demo = demo()
    refused = [skipped(v, "whatever the engine said", status="refused", why="engine")
               for v in the_demo.variants]
    found = result(the_demo, *refused)
    assert {f.subtype for f in found.findings} == {"engine"}
    why = not_checked(found)
    assert {n: (w.kind, w.reason) for n, w in why.items()} == dict.fromkeys(
        ("same_as_forward", "off"), ("not run", "no demo can run on the build machine"))
    # Without the reason, the same words are an ordinary refusal.
    plain = result(the_demo, *[skipped(v, "whatever the engine said", status="refused")
                               for v in the_demo.variants])
    assert {f.subtype for f in plain.findings} == {"not-run"}


def test_a_skipped_cuda_demo_has_no_finding():
    the_demo = demo()
    found = result(the_demo, *[skipped(v, "no GPU", why="no-cuda") for v in the_demo.variants])
    assert found.findings == ()
    assert {w.short for w in not_checked(found).values()} == {"skipped: no CUDA"}


SET = "import torch._functorch.config\ntorch._functorch.config.backward_pass_autocast = "


def test_the_results_table_of_a_held_and_a_broken_record():
    found = result(demo(), ran("differs", note="w.grad"), ran("matches", output="tensor(16.)\n"))
    table, *printed, provenance, stale = render.result_nodes(judge(found, TORCH), APP)  # type: ignore[arg-type]
    # One row per value: its name and the line that sets it, then the two questions.
    assert rows(table) == [
        ["backward_pass_autocast", "compiled = eager?", "as recorded?"],
        ["same_as_forward\n\n" + SET + "'same_as_forward'",
         "\u2717 differs (w.grad, max |\u0394| 5.00e-01)", "no: records matches"],
        ["off\n\n" + SET + "'off'", "\u2713 matches eager", "yes (matches)"],
    ]
    # What was printed, and in words what was not: never an empty box.
    assert [p.astext() for p in printed] == ["Printed under off:\n\ntensor(16.)",
                                             "Nothing printed under same_as_forward."]
    # Gradient dtypes are the same (none) under both values: no column for them.
    assert provenance.astext().startswith(f"Checked at build time with torch {TORCH} \u00b7 device cpu")
    assert "dtype" not in provenance.astext()  # no value names one
    assert stale["classes"] == ["autocast-demo-stale"]
    assert "value same_as_forward: the page records 'matches'" in stale.astext()


def test_the_eager_output_is_shown_where_it_is_not_the_compiled_one():
    found = result(demo(), ran("matches", output="a\n"), ran("matches", output="b\n", eager_output="c\n"))
    _table, *printed, _provenance = render.result_nodes(judge(found, TORCH), APP)  # type: ignore[arg-type]
    assert [p.astext() for p in printed] == [
        "Printed under same_as_forward:\n\na", "Printed under off:\n\nb",
        "Printed under off, run eagerly:\n\nc"]


def test_show_record_and_show_outputs():
    outcomes = ran("differs", output="x\n"), ran("differs", output="x\n")
    recorded = result(replace(demo((("*", "differs"),)), show="record"), *outcomes)
    table, *_ = render.result_nodes(judge(recorded, TORCH), APP)  # type: ignore[arg-type]
    assert [row[1] for row in rows(table)] == [
        "outcome, as recorded?", "\u2717 differs, as recorded", "\u2717 differs, as recorded"]
    # The mark and red of the verdict (compiled differs from eager: a mark means that on every
    # page, issue 47), the record's words and style beside them.
    assert all(e["classes"][:2] == ["autocast-demo-differs", "autocast-demo-holds"]
               for e in table.findall(nodes.entry) if "autocast-demo-col-outcome" in e["classes"])
    only = result(replace(demo((("*", "differs"),)), show="outputs"), *outcomes)
    shown = render.result_nodes(judge(only, TORCH), APP)  # type: ignore[arg-type]
    assert not any(isinstance(n, nodes.table) for n in shown)
    assert shown[0].astext() == "Printed under every value:\n\nx"


def test_a_warning_shows_as_python_prints_it_at_the_pages_line_and_is_said_not_compared():
    # Issue 47: a multi-line warning showed as one line with a literal "\\n" and the run's
    # name for the writer's code, <autocast-demo-0>.
    printed = "UserWarning: first line\\nsecond line [<autocast-demo-0>:2]\nx\n"
    outcomes = ran("matches", output=printed), ran("matches", output=printed)
    only = result(replace(demo((("*", "matches"),)), show="outputs"), *outcomes)
    shown = "\n".join(n.astext() for n in render.result_nodes(judge(only, TORCH), APP))  # type: ignore[arg-type]
    where = only.where_frame(Frame(0, 2, "", ""))
    assert f"index.rst:{where.line}: UserWarning: first line\nsecond line\nx" in shown, shown
    assert "<autocast-demo-0>" not in shown and "\\n" not in shown
    assert "Warnings and torch's log lines shown here are not compared with eager" in shown
    quiet = result(replace(demo((("*", "matches"),)), show="outputs"), ran("matches", output="x\n"),
                   ran("matches", output="x\n"))
    assert "not compared" not in "\n".join(
        n.astext() for n in render.result_nodes(judge(quiet, TORCH), APP))  # type: ignore[arg-type]


def rendered_page(results: dict[str, DemoResult | None]) -> nodes.document:
    """A page with one demo per ident, resolved with ``results`` (None: not run)."""
    doc = new_document("index.rst", frontend.get_default_settings(rst.Parser))
    for ident in results:
        box = nodes.container(classes=["autocast-demo"], ids=[ident])
        box += directives.results_placeholder(ident=ident)
        doc += box
    state = SimpleNamespace(results={k: v for k, v in results.items() if v is not None})
    render.resolve(APP, doc, state, True, TORCH)  # type: ignore[arg-type]
    return doc


def paragraphs(doc: nodes.document, kind: str) -> list[nodes.paragraph]:
    return [p for p in doc.findall(nodes.paragraph) if f"autocast-demo-{kind}" in p["classes"]]


def test_a_page_shares_one_legend_and_one_footer():
    """Three demos with the same footer: the legend under the first, the footer once."""
    same = {ident: result(replace(demo(), ident=ident), ran("matches"), ran("matches"))
            for ident in ("a", "b", "c")}
    doc = rendered_page(same)  # type: ignore[arg-type]
    legends, footers = paragraphs(doc, "legend"), paragraphs(doc, "provenance")
    assert len(legends) == 1 and legends[0].parent is doc and doc.index(legends[0]) == 1
    assert [f.astext().split(":")[0] for f in footers] == ["Every demo on this page"]
    # Every record holds: no table asks "as recorded?", and neither does the legend; the
    # page's line says it once.
    assert "as recorded?" not in doc.astext()
    assert "What the page records of each value holds" in footers[0].astext()
    # A demo without a result says so itself; then no footer speaks for "every demo".
    doc = rendered_page({**same, "c": None})  # type: ignore[arg-type]
    said = [f.astext() for f in paragraphs(doc, "provenance")]
    assert said[-1] == "This demo has not been run." and len(said) == 3
    assert not any(text.startswith("Every demo") for text in said)


def test_the_legend_says_the_marks_in_few_words_and_as_recorded_only_where_a_table_asks_it():
    held = result(replace(demo(), ident="a"), ran("matches"), ran("matches"))
    broken = result(replace(demo(), ident="b"), ran("differs"), ran("matches"))
    for page, asked in (({"a": held}, False), ({"a": held, "b": broken}, True)):
        doc = rendered_page(page)  # type: ignore[arg-type]
        (legend,) = paragraphs(doc, "legend")
        assert len(legend.astext().split()) <= 30, legend.astext()
        # Only the marks the page's cells show: a legend of marks nobody sees is noise.
        assert ("\u2717" in legend.astext()) is asked, legend.astext()
        assert ("as recorded?" in legend.astext()) is asked
        headers = [e.astext() for e in doc.findall(nodes.entry) if isinstance(e.parent.parent, nodes.thead)]
        assert ("as recorded?" in headers) is asked


def test_a_line_that_several_tables_show_is_listed_once_under_the_first():
    """Lines a reader copies: each once on the page. Two tables share same_as_forward's and
    off's: listed under the legend, their cells link there; a value only one table shows keeps
    its lines in its row (there they are the only copy)."""
    two = replace(demo(), ident="b", variants=tuple(parse_values(
        ["same_as_forward", "off", 'fp16=[{"device_type": "cpu", "dtype": torch.float16}]'],
        "cpu", "bfloat16")))
    doc = rendered_page({"a": result(replace(demo(), ident="a"), ran("matches"), ran("matches")),
                         "b": result(two, ran("matches"), ran("matches"), ran("matches"))})  # type: ignore[arg-type]
    (listed,) = [c for c in doc.findall(nodes.container) if "autocast-demo-lines" in c["classes"]]
    assert doc.index(listed) == 2  # under the legend, under the first demo
    blocks = [b.astext() for b in doc.findall(tables.set_code)]
    assert sorted(blocks) == sorted({*blocks}), blocks  # each once
    assert [b.astext() for b in listed.findall(tables.set_code)] == [
        SET + "'same_as_forward'", SET + "'off'"]
    targets = {t["ids"][0]: t.next_node(descend=False, siblings=True).astext()
               for t in listed.findall(nodes.target)}
    assert list(targets.values()) == ["same_as_forward", "off"]
    links = [(r["refid"], r.parent.parent[0].astext()) for r in doc.findall(nodes.reference)]
    assert len(links) == 4 and all(targets[refid] == name for refid, name in links)
    fp16 = [b.astext() for b in doc.findall(tables.set_code) if "float16" in b.astext()]
    assert fp16 == [SET + '[{"device_type": "cpu", "dtype": torch.float16}]']
    assert not any("float16" in b.astext() for b in listed.findall(tables.set_code))
    # One table: every line in its row, nothing listed.
    alone = rendered_page({"a": result(replace(demo(), ident="a"), ran("matches"), ran("matches"))})  # type: ignore[arg-type]
    assert not [c for c in alone.findall(nodes.container) if "autocast-demo-lines" in c["classes"]]
    assert len(list(alone.findall(tables.set_code))) == 2 and not list(alone.findall(nodes.reference))


def test_a_footer_says_only_what_is_its_own_and_the_page_says_the_rest_once():
    """Two demos that differ only in their backend: the page's line under the first table says
    what both share, each demo's footer only its backend."""
    first = result(replace(demo(), ident="a"), ran("matches"), ran("matches"))
    second = result(replace(demo(), ident="b", backend="inductor"), ran("matches"), ran("matches"))
    doc = rendered_page({"a": first, "b": second})  # type: ignore[arg-type]
    said = [f.astext() for f in paragraphs(doc, "provenance")]
    assert said[:2] == ["backend aot_eager.", f"Every demo on this page: Checked at build time "
                        f"with torch {TORCH}. What the page records of each value holds \u00b7 "
                        "device cpu \u00b7 compiled compared with the same code run eagerly "
                        "(gradients bitwise, other tensors within 0.001) \u00b7 no gradients."]
    assert said[2:] == ["backend inductor."]
    # Three, two of them alike: the page says what most do, the third says where it differs.
    third = result(replace(demo(), ident="c"), ran("matches"), ran("matches"))
    said = [f.astext() for f in paragraphs(rendered_page({"a": first, "b": second, "c": third}),  # type: ignore[arg-type]
                                           "provenance")]
    assert said[0].startswith("Every demo on this page, unless its own line says otherwise: "
                              f"Checked at build time with torch {TORCH}. What the page records "
                              "of each value holds \u00b7 device cpu \u00b7 backend aot_eager "
                              "\u00b7 compiled compared")
    assert said[1:] == ["backend inductor."]
    # Alone on its page, a demo's footer says everything, in the same order.
    alone = [f.astext() for f in paragraphs(rendered_page({"b": second}), "provenance")]  # type: ignore[arg-type]
    assert alone == [f"Checked at build time with torch {TORCH}. What the page records of each "
                     "value holds \u00b7 device cpu \u00b7 backend inductor \u00b7 compiled compared "
                     "with the same code run eagerly (gradients bitwise, other tensors within "
                     "0.001) \u00b7 no gradients."]


def test_a_result_of_another_torch_never_looks_checked():
    found = result(demo(), ran("matches"), ran("matches"), torch="1.0.0")
    cached = DemoResult(found.demo, found.codes, tuple(
        VariantResult(v.variant, v.verdict, v.compiled, v.eager, cached=True) for v in found.variants),
        "1.0.0", found.findings)
    table, provenance = render.result_nodes(judge(cached, TORCH), APP)  # type: ignore[arg-type]
    for row in rows(table)[1:]:
        assert row[1:] == [f"matches eager with torch 1.0.0 (cached; not checked with torch {TORCH})",
                           "records matches (not checked)"]
    assert "autocast-demo-unchecked" in provenance["classes"]


def test_cases_and_counts_of_made_up_results():
    held = result(demo(), ran("matches"), ran("matches"))
    broken = result(demo(), ran("differs"), raised())
    unrecorded = result(demo(expect=()), ran("matches"), ran("matches"))
    statuses = [builder._variant_case(judge(r, TORCH).here, value).status
                for r in (held, broken, unrecorded) for value in judge(r, TORCH).here.values]
    assert statuses == ["passed", "passed", "failed", "error", "skipped", "skipped"]
    stats = Stats(executed=8, fresh=2, cached=4, seconds=1.25)
    counts = report.counts([judge(r, TORCH) for r in (held, broken, unrecorded)], [], stats)
    assert counts == report.Counts(demos=3, values=6, checked=6, not_checked=0, failures=2,
                                   runs=8, cached=4, forked=6, fresh=2, seconds=1.25)


def test_accept_rewrites_only_the_expect_option_where_the_map_says():
    found = result(demo(), ran("differs"), ran("matches"))
    changes = edit.plan(found, TEXT)
    # A tie between the values: '*' takes the first value's outcome, the other is named.
    assert [(c.start, c.end, c.new) for c in changes] == [
        (2, 3, ["   :expect: *: differs, off: matches"])]
    new = edit.apply("\n".join(TEXT) + "\n", changes).splitlines()
    assert new == [*TEXT[:2], "   :expect: *: differs, off: matches", *TEXT[3:]]


def test_accept_refuses_a_directive_that_moved():
    found = result(demo(), ran("differs"), ran("matches"))
    with pytest.raises(accept.Blocked, match="not where the build read it"):
        edit.plan(found, ["", *TEXT])


def test_every_setting_is_one_field_with_its_option():
    assert [o.name for o in config.OPTIONS] == [f.name for f in fields(config.Settings)]
    conf = {config.PREFIX + o.name: o.default for o in config.OPTIONS}
    settings = config.settings(conf)  # type: ignore[arg-type]
    assert settings.values == ("same_as_forward", "off", "autocast")  # a tuple, as conf.py lists
    assert settings.dtype == ""  # "": per device
    assert (settings.grad_tolerance, settings.output_tolerance) == (0.0, 1e-3)
