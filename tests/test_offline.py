"""The Sphinx side without torch: made-up results through check, render, the check builder's
cases, accept mode and the numbers of the report, and real builds of tests/roots/test-offline
that render results from a cache this file writes (``autocast_demo_execute = "never"``).

Nothing here imports torch or starts a worker, so it runs in seconds, wherever Sphinx runs.
"""

from __future__ import annotations

import platform
import subprocess
import sys
from dataclasses import fields, replace
from types import SimpleNamespace

import pytest
from conftest import app_build, copy_root, sphinx_build, verdicts
from docutils import frontend, nodes
from docutils.parsers import rst
from docutils.utils import new_document

from sphinx_autocast_demo.accept import rewrite as accept
from sphinx_autocast_demo.core import config
from sphinx_autocast_demo.core.model import (
    DEFAULT_CONFIG,
    Code,
    Demo,
    DemoResult,
    Frame,
    Location,
    OptionSpan,
    RunRecord,
    SnippetError,
    SourceMap,
    TensorDiff,
    Tolerance,
    VariantResult,
    Verdict,
    skipped,
)
from sphinx_autocast_demo.core.state import all_docs
from sphinx_autocast_demo.engine import execute
from sphinx_autocast_demo.engine.build import build
from sphinx_autocast_demo.judge import check
from sphinx_autocast_demo.judge.judgement import judge
from sphinx_autocast_demo.plan.cache import Entry
from sphinx_autocast_demo.plan.planned import Stats
from sphinx_autocast_demo.present import render
from sphinx_autocast_demo.read import directives, syntax
from sphinx_autocast_demo.report import builder
from sphinx_autocast_demo.report import console as report

TORCH = "9.9.0"  # the torch these made-up results were "checked" with
# Their builds run nothing: execution is off, the results come from a cache written here.
TORCH_FREE_FIXTURES = ("offline", "other_build")
SRC = "/docs/index.rst"
# The directive of every made-up demo, as its source map records it:
#   1 .. autocast-demo::
#   2    :values: same_as_forward, off
#   3    :expect: ...
#   4
#   5    x = 1
TEXT = [".. autocast-demo::", "   :values: same_as_forward, off", "   :expect: *: matches", "",
        "   x = 1"]
WHERE = SourceMap(SRC, 1, "rst", 2, 4, (OptionSpan("values", 2, 3), OptionSpan("expect", 3, 4)))


def demo(expect: tuple[tuple[str, str], ...] = (("*", "matches"),)) -> Demo:
    return Demo(
        docname="index", ident="d", lineno=1, code=Code("x = 1", SRC, (5,)), group=None,
        config=DEFAULT_CONFIG, variants=syntax.parse_values(["same_as_forward", "off"], "cpu", "bfloat16"),
        expect=expect, expect_output=(), backend="aot_eager", device="cpu", dtype="bfloat16",
        timeout=120.0, tolerance=Tolerance(grad=0.0, output=1e-3), source_map=WHERE,
    )


def ran(outcome: str, output: str = "", note: str = "",
        eager_output: str | None = None) -> tuple[Verdict, RunRecord, RunRecord]:
    # A difference names its tensor, as compare.py's do: w.grad, off by 0.5.
    diffs = (TensorDiff("w.grad", "grad", "float32", "float32", False, 0.5),) if outcome == "differs" else ()
    return (Verdict(outcome=outcome, note=note, max_abs=0.5 if diffs else None, diffs=diffs),  # type: ignore[arg-type]
            RunRecord(status="ok", output=output),
            RunRecord(status="ok", output=output if eager_output is None else eager_output))


def result(the_demo: Demo, *per_value: tuple[Verdict, RunRecord, RunRecord] | VariantResult,
           torch: str = TORCH) -> DemoResult:
    variants = tuple(v if isinstance(v, VariantResult) else VariantResult(variant, *v)
                     for variant, v in zip(the_demo.variants, per_value, strict=True))
    return check.check(DemoResult(demo=the_demo, codes=(the_demo.code,), variants=variants,
                                  torch_version=torch))


def raised(kind: str = "NameError") -> tuple[Verdict, RunRecord, RunRecord]:
    error = SnippetError(type=kind, names=(kind, "Exception"), message="name 'y' is not defined",
                         frames=(Frame(part=0, line=1, function="<module>", text="x = y"),))
    record = RunRecord(status="raised", error=error)
    return Verdict(outcome="raises", exception=kind), record, record


APP = SimpleNamespace(srcdir="/docs", outdir="/out", doctreedir="/doctrees", extensions={},
                      builder=SimpleNamespace(format="html"))


def not_checked(found: DemoResult) -> dict[str, object]:
    """Value -> why this build did not check it (judge.NotChecked), for those it did not."""
    return {v.name: v.why for v in judge(found, TORCH).here.values if v.why is not None}


def rows(table) -> list[list[str]]:
    return [[entry.astext() for entry in row.children] for row in table.findall(lambda n: n.tagname == "row")]


# -- check: typed findings ----------------------------------------------------------------------

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


# -- render: the doctree of a result ------------------------------------------------------------

SET = "torch._functorch.config.backward_pass_autocast = "


def test_the_results_table_of_a_held_and_a_broken_record():
    found = result(demo(), ran("differs", note="w.grad"), ran("matches", output="tensor(16.)\n"))
    table, *printed, provenance, stale = render.result_nodes(judge(found, TORCH), APP)  # type: ignore[arg-type]
    # One row per value: its name and the line that sets it, then the two questions.
    assert rows(table) == [
        ["backward_pass_autocast", "compiled = eager?", "as recorded?"],
        ["same_as_forward\n\n" + SET + "'same_as_forward'",
         "\u2717 differs (w.grad, max |\u0394| 5.00e-01)", "\u2717 no: records matches"],
        ["off\n\n" + SET + "'off'", "\u2713 matches eager", "\u2713 yes (matches)"],
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
        "outcome, as recorded?", "\u2713 differs, as recorded", "\u2713 differs, as recorded"]
    # Not the red of a verdict: the point of such a demo is not compiled against eager.
    assert "autocast-demo-differs" not in str(table)
    only = result(replace(demo((("*", "differs"),)), show="outputs"), *outcomes)
    shown = render.result_nodes(judge(only, TORCH), APP)  # type: ignore[arg-type]
    assert not any(isinstance(n, nodes.table) for n in shown)
    assert shown[0].astext() == "Printed under every value:\n\nx"


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
    """Three demos with the same footer: the legend before the first, the footer once."""
    same = {ident: result(replace(demo(), ident=ident), ran("matches"), ran("matches"))
            for ident in ("a", "b", "c")}
    doc = rendered_page(same)  # type: ignore[arg-type]
    legends, footers = paragraphs(doc, "legend"), paragraphs(doc, "provenance")
    assert len(legends) == 1 and legends[0].parent is doc and doc.index(legends[0]) == 1
    assert [f.astext().split(":")[0] for f in footers] == ["Every demo on this page"]
    # A demo without a result says so itself; then no footer speaks for "every demo".
    doc = rendered_page({**same, "c": None})  # type: ignore[arg-type]
    said = [f.astext() for f in paragraphs(doc, "provenance")]
    assert said[-1] == "This demo has not been run." and len(said) == 3
    assert not any(text.startswith("Every demo") for text in said)


def test_a_footer_says_only_what_is_its_own_and_the_page_says_the_rest_once():
    """Two demos that differ only in their backend: the page's line under the first table says
    what both share, each demo's footer only its backend."""
    first = result(replace(demo(), ident="a"), ran("matches"), ran("matches"))
    second = result(replace(demo(), ident="b", backend="inductor"), ran("matches"), ran("matches"))
    doc = rendered_page({"a": first, "b": second})  # type: ignore[arg-type]
    said = [f.astext() for f in paragraphs(doc, "provenance")]
    assert said[:2] == ["backend aot_eager.", f"Every demo on this page: Checked at build time "
                        f"with torch {TORCH} \u00b7 device cpu \u00b7 compiled compared with the "
                        "same code run eagerly (gradients bitwise, other tensors within 0.001) "
                        "\u00b7 no gradients."]
    assert said[2:] == ["backend inductor."]
    # Three, two of them alike: the page says what most do, the third says where it differs.
    third = result(replace(demo(), ident="c"), ran("matches"), ran("matches"))
    said = [f.astext() for f in paragraphs(rendered_page({"a": first, "b": second, "c": third}),  # type: ignore[arg-type]
                                           "provenance")]
    assert said[0].startswith("Every demo on this page, unless its own line says otherwise: "
                              f"Checked at build time with torch {TORCH} \u00b7 device cpu "
                              "\u00b7 backend aot_eager \u00b7 compiled compared")
    assert said[1:] == ["backend inductor."]
    # Alone on its page, a demo's footer says everything, in the same order.
    alone = [f.astext() for f in paragraphs(rendered_page({"b": second}), "provenance")]  # type: ignore[arg-type]
    assert alone == [f"Checked at build time with torch {TORCH} \u00b7 device cpu \u00b7 backend "
                     "inductor \u00b7 compiled compared with the same code run eagerly (gradients "
                     "bitwise, other tensors within 0.001) \u00b7 no gradients."]


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


# -- the check builder's cases and the report's numbers ------------------------------------------

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


# -- accept mode: the source map says where to write ----------------------------------------------

def test_accept_rewrites_only_the_expect_option_where_the_map_says():
    found = result(demo(), ran("differs"), ran("matches"))
    changes = accept.plan(found, TEXT)
    # A tie between the values: '*' takes the first value's outcome, the other is named.
    assert [(c.start, c.end, c.new) for c in changes] == [
        (2, 3, ["   :expect: *: differs, off: matches"])]
    new = accept.apply("\n".join(TEXT) + "\n", changes).splitlines()
    assert new == [*TEXT[:2], "   :expect: *: differs, off: matches", *TEXT[3:]]


def test_accept_refuses_a_directive_that_moved():
    found = result(demo(), ran("differs"), ran("matches"))
    with pytest.raises(accept.Blocked, match="not where the build read it"):
        accept.plan(found, ["", *TEXT])


# -- config: declared once --------------------------------------------------------------------

def test_every_setting_is_one_field_with_its_option():
    assert [o.name for o in config.OPTIONS] == [f.name for f in fields(config.Settings)]
    conf = {config.PREFIX + o.name: o.default for o in config.OPTIONS}
    settings = config.settings(conf)  # type: ignore[arg-type]
    assert settings.values == ("same_as_forward", "off", "autocast")  # a tuple, as conf.py lists
    assert settings.dtype == "bfloat16" and settings.tolerance == Tolerance(0.0, 1e-3)


# -- a real build, from made-up results in the cache ------------------------------------------

@pytest.fixture(scope="module")
def offline(tmp_path_factory):
    """Build once (nothing cached: nothing checked), write made-up results for every value
    into the cache, then build again from scratch: the pages render them as checked."""
    src = copy_root("offline", tmp_path_factory)
    first = app_build(src)
    first.unchecked = verdicts(first.html("index"), "held")  # type: ignore[attr-defined]
    b = build(first.app)  # type: ignore[arg-type]
    fill_cache(first, b.torch)
    return first, app_build(src, autocast_demo_cache_dir=str(b.executor.cache.root))


def fill_cache(first: object, torch: str, torch_key: str = "") -> None:
    """Made-up results for every value of the root's demos, as if ``torch`` had made them."""
    b = build(first.app)  # type: ignore[attr-defined]
    made_up = {"held": ("differs", "matches"), "stale": ("differs",), "myst-demo": ("differs",)}
    for doc in all_docs(first.app.env).values():  # type: ignore[attr-defined]
        for the_demo in doc.demos.values():
            codes = [s.code for s in doc.setups_for(the_demo)] + [the_demo.code]
            for variant, outcome in zip(the_demo.variants, made_up[the_demo.ident], strict=True):
                verdict, compiled, eager = ran(outcome)
                b.executor.cache.put(b.executor.key(the_demo, codes, variant), Entry(
                    torch, verdict, compiled, eager, python_version=platform.python_version(),
                    torch_key=torch_key, files=()))  # its runs imported none of the writer's


def test_the_sphinx_side_never_imports_torch():
    # In a fresh interpreter: other test files of the session may have imported it.
    code = ("import sys, sphinx_autocast_demo.pipeline, sphinx_autocast_demo.report.builder; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


def test_without_results_nothing_is_checked_and_the_build_passes(offline):
    first, _ = offline
    assert first.app.statuscode == 0  # type: ignore[attr-defined]
    assert first.stats["checked"] == 0 and first.stats["not_checked"] == 4
    assert first.unchecked == [
        "\u2014 not run: execution is off and nothing is cached"] * 2


def test_made_up_results_render_and_fail_at_the_expect_line(offline):
    _, second = offline
    assert (second.stats["demos"], second.stats["checked"], second.runs()) == (3, 4, (0, 4))
    assert second.stats["failures"] == 1
    assert second.app.statuscode == 1  # type: ignore[attr-defined]
    page = second.html("index")
    differs = "\u2717 differs (w.grad, max |\u0394| 5.00e-01)"
    assert verdicts(page, "held") == [differs, "\u2713 matches eager"]
    assert verdicts(page, "stale") == [differs]
    assert verdicts(second.html("markdown"), "myst-demo") == [differs]
    src = second.app.srcdir  # type: ignore[attr-defined]
    assert (f"{src / 'index.rst'}:18: WARNING: value off: the page records 'matches' but with "
            f"torch {build(second.app).torch} compiled differs from eager") in second.warnings  # type: ignore[arg-type]
    matrix = [row.get_text(" ", strip=True) for row in page.select("table.autocast-demo-matrix tbody tr")]
    # Each demo is titled by its section; one heading row per page, in reading order.
    assert matrix == ["Offline", "Offline \u2717 differs \u2713 matches \u2713 holds",
                      "Offline \u2717 differs \u2717 no longer true", "MyST",
                      "MyST \u2717 differs \u2713 holds"]


def test_an_unchanged_rebuild_says_no_configuration_changed(tmp_path_factory):
    """Our static files join html_static_path before the last build's configuration is compared
    with this one's: appended later, the path is new each time, and Sphinx says "The
    configuration has changed" and writes every page again."""
    src = copy_root("offline", tmp_path_factory)
    out = src / "_build" / "html"
    never = {"AUTOCAST_DEMO_EXECUTE": "never"}
    first = sphinx_build(src, out, env=never)
    assert first.returncode == 0, first.stderr
    again = sphinx_build(src, out, env=never)
    assert again.returncode == 0, again.stderr
    assert "configuration has changed" not in again.stdout + again.stderr, again.stdout
    assert (out / "_static" / "autocast_demo.css").exists()


# -- autocast_demo_cache_torch: which torch a cached result counts for ---------------------------

@pytest.fixture(scope="module")
def other_build(tmp_path_factory):
    """Results cached by "another build of the installed release" (a made-up local version),
    stamped with what each policy compares; then builds under each policy."""
    src = copy_root("offline", tmp_path_factory)
    first = app_build(src)
    b = build(first.app)  # type: ignore[arg-type]
    release = execute.torch_key(b.torch, "release")
    other = release + "+othercommit"
    fill_cache(first, other, torch_key=release)
    cache = str(b.executor.cache.root)
    # "auto": a result the policy counts as current is not run again (no worker: no torch).
    # Both builds write the same output directory: keep each one's page as it wrote it.
    release = app_build(src, autocast_demo_cache_dir=cache, autocast_demo_execute="auto",
                        autocast_demo_cache_torch="release")
    release.page = release.html("index")  # type: ignore[attr-defined]
    exact = app_build(src, autocast_demo_cache_dir=cache, autocast_demo_cache_torch="exact")
    exact.page = exact.html("index")  # type: ignore[attr-defined]
    label = app_build(src, autocast_demo_cache_dir=cache, autocast_demo_cache_torch="nightly")
    return other, b.torch, {"release": release, "exact": exact, "label": label}


@pytest.mark.torch  # the installed torch's release is what it counts
def test_release_counts_another_build_of_the_release_as_checked_and_names_it(other_build):
    other, installed, builds = other_build
    release = builds["release"]
    assert release.runs() == (0, 4)  # every value from the cache: nothing ran
    page = release.page
    differs = "\u2717 differs (w.grad, max |\u0394| 5.00e-01)"
    assert verdicts(page, "held") == [differs, "\u2713 matches eager"]
    footer = page.find(id="held").select_one(".autocast-demo-provenance").get_text(" ", strip=True)
    assert f"Checked with torch {other} by an earlier build" in footer, footer
    assert f"counts it as the installed torch {installed}" in footer
    assert release.stats["checked"] == 4 and release.stats["not_checked"] == 0


def test_exact_never_counts_another_build_as_checked(other_build):
    other, installed, builds = other_build
    exact = builds["exact"]  # execution off in this root: rendered, but not as checked
    first, _ = verdicts(exact.page, "held")
    assert first.startswith(f"differs (w.grad, max |\u0394| 5.00e-01) with torch {other} (cached; "
                            f"not checked with torch {installed})"), first
    assert exact.stats["checked"] == 0 and exact.stats["not_checked"] == 4


def test_torch_keys():
    assert execute.torch_key("2.16.0a0+git1234abc", "exact") == "2.16.0a0+git1234abc"
    assert execute.torch_key("2.16.0a0+git1234abc", "release") == "2.16.0"
    assert execute.torch_key("2.13.0+cpu", "release") == "2.13.0"
    assert execute.torch_key("2.13.0+cpu", "nightly-2026-11") == "nightly-2026-11"
    assert execute.torch_key("2.13.0+cpu", "") == "2.13.0+cpu"  # empty: exact, not a label


def test_a_label_counts_only_entries_stored_under_it(other_build):
    """Entries stored under "release" are not a label's: with a label, everything runs again
    (here, execution is off: nothing is checked)."""
    _, _, builds = other_build
    assert builds["label"].stats["checked"] == 0 and builds["label"].stats["not_checked"] == 4
