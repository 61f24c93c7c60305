"""The judge stage on made-up results (no torch): each reason a value is not checked is one
typed cause, each presenter says what the judgement says."""

from __future__ import annotations

from dataclasses import replace

import pytest
from fakes import HERE, LATER, MADE, TORCH, demo, raised, ran, result

from sphinx_autocast_demo.core.model import (
    Finding,
    Location,
    RunRecord,
    TensorDiff,
    VariantResult,
    Verdict,
    skipped,
)
from sphinx_autocast_demo.judge import check
from sphinx_autocast_demo.judge.judgement import judge
from sphinx_autocast_demo.plan.planned import Stats
from sphinx_autocast_demo.present import across, cells, matrix
from sphinx_autocast_demo.present.footer import footer_line, provenance_parts
from sphinx_autocast_demo.report import builder
from sphinx_autocast_demo.report import console as report


def first(found, torch: str = TORCH):
    return judge(found, torch).here.values[0]


def with_runs(compiled: RunRecord, eager: RunRecord | None = None, verdict: str = "error"):
    the_demo = demo()
    vr = VariantResult(the_demo.variants[0], Verdict(outcome=verdict), compiled, eager or compiled)  # type: ignore[arg-type]
    return result(the_demo, vr, ran("matches"))


@pytest.mark.parametrize("run, cause, text", [
    (RunRecord("skipped", not_run="missing"), "missing", "no result: none kept with these docs"),
    (RunRecord("skipped", not_run="no-cuda"), "no-cuda", "skipped: no CUDA on the build machine"),
    (RunRecord("refused", not_run="no-cuda"), "no-cuda", "not run: no CUDA on the build machine"),
    (RunRecord("refused", not_run="engine"), "engine", "not run: no demo can run on the build machine"),
    (RunRecord("refused", not_run="died"), "died", "not run: the build's worker stopped before it ran"),
    (RunRecord("skipped", not_run="stale"), "stale", "not run: execution is off and a module it "
     "imports has changed since its cached result"),
    (RunRecord("skipped"), "never", "not run: execution is off and nothing is cached"),
    (RunRecord("refused", detail="too big\nmore"), "refused", "not run: too big"),
    (RunRecord("timeout"), "stopped", "not checked: the compiled run timed out"),
    (RunRecord("crashed"), "stopped", "not checked: the compiled run crashed"),
])
def test_each_reason_a_value_was_not_run_is_one_cause(run, cause, text):
    value = first(with_runs(run))
    assert not value.checked and value.record == "unchecked"
    assert (value.why.cause, value.why.text) == (cause, text)


UNCHECKED_RUNS = [
    RunRecord("skipped", not_run="missing"), RunRecord("skipped", not_run="no-cuda"),
    RunRecord("refused", not_run="no-cuda"), RunRecord("refused", not_run="engine"),
    RunRecord("refused", not_run="died"), RunRecord("skipped", not_run="stale"),
    RunRecord("skipped"), RunRecord("refused", detail="too big"), RunRecord("timeout"),
    RunRecord("crashed"),
]


def run_id(run: RunRecord) -> str:
    return f"{run.status}-{run.not_run or 'plain'}"


@pytest.mark.parametrize("run", UNCHECKED_RUNS, ids=run_id)
def test_every_presenter_says_an_unchecked_value_is_unchecked(run):
    """The page's cell, the matrix's, the check builder's case and the console's count agree:
    never the mark of a checked result, never a passed case."""
    judged = judge(with_runs(run), TORCH)
    value = judged.here.values[0]
    text, classes = cells.verdict_text(value, TORCH)
    assert text.startswith("\u2014 ") and "autocast-demo-unchecked" in classes
    assert cells.recorded_text(value)[0] == "records matches (not checked)"
    assert matrix._verdict(value)[0] == f"\u2014 {value.why.short}"
    assert builder._variant_case(judged.here, value).status in ("skipped", "error")
    assert report.counts([judged], [], Stats()).not_checked == 1
    assert judged.page == "partly-unchecked" or judged.page == "broken"


def test_a_verdict_of_error_is_not_checked():
    value = first(with_runs(RunRecord("ok"), verdict="error"))
    assert value.why is not None and value.why.cause == "no-verdict"


def test_a_cached_result_of_another_torch_is_not_checked_unless_counted_or_from_a_set():
    found = result(demo(), ran("matches"), ran("matches"), torch="1.0.0")
    cached = replace(found, variants=tuple(replace(v, cached=True) for v in found.variants))
    assert first(cached).why.cause == "other-torch"
    assert first(replace(cached, torch_equivalent=True)).checked
    assert first(replace(cached, source="set", environment=LATER, made=MADE)).checked


def test_the_record_of_a_value():
    broken = judge(result(demo(), ran("differs"), ran("matches")), TORCH)
    assert [v.record for v in broken.here.values] == ["broken", "holds"]
    assert broken.page == "broken" and broken.mismatch and broken.mismatch_in == ()
    unrecorded = judge(result(demo(expect=()), ran("matches"), ran("matches")), TORCH)
    assert [v.record for v in unrecorded.here.values] == ["unrecorded", "unrecorded"]
    assert unrecorded.page == "unrecorded"


def test_the_page_record_counts_only_what_was_checked():
    the_demo = demo()
    partly = judge(result(the_demo, skipped(the_demo.variants[0], "no GPU", why="no-cuda"),
                          ran("matches")), TORCH)
    assert partly.page == "partly-unchecked"
    none = judge(result(the_demo, *(skipped(v, "no GPU", why="no-cuda") for v in the_demo.variants)),
                 TORCH)
    assert none.page == "unchecked"


def test_an_error_is_an_error_case_and_a_broken_record_a_failed_one():
    judged = judge(result(demo(), ran("differs"), raised()), TORCH)
    statuses = [builder._variant_case(judged.here, v).status for v in judged.here.values]
    assert statuses == ["failed", "error"]
    assert judged.here.values[1].error and not judged.mismatch_in


def several():
    the_demo = demo()
    mine = result(the_demo, ran("matches"), ran("matches"))
    later = replace(result(the_demo, ran("matches"), ran("differs"), torch=LATER.torch),
                    environment=LATER, source="set", made=MADE, findings=())
    return judge(check.check(replace(mine, environment=HERE, others=(later,), findings=())), TORCH)


def test_across_environments_a_change_and_where_the_record_broke():
    judged = several()
    assert [c.source for c in judged.columns] == ["build", "set"]
    assert [c.torch for c in judged.columns] == [TORCH, LATER.torch]  # each judged by its own
    same, off = judged.across
    assert (same.record, same.changed) == ("holds", False)
    assert (off.record, off.changed) == ("broken", True)
    assert [c.key for c in off.broken_in] == [LATER.label]
    assert judged.mismatch_in == (LATER.label,)


def test_the_matrix_cell_names_environments_only_where_they_differ():
    judged = several()
    assert matrix.across(judged, "same_as_forward") == ("\u2713 matches", ["autocast-demo-matches"])
    text, classes = matrix.across(judged, "off")
    assert text == "\u2713 matches in torch 9.9.0 (this build); \u2717 differs in torch 2.16.0"
    assert "autocast-demo-changed" in classes


def test_a_release_without_the_config_is_no_change():
    the_demo = demo((("*", "matches"),))
    mine = result(the_demo, ran("matches"), ran("matches"))
    later = replace(result(the_demo, ran("no-config"), ran("matches"), torch=LATER.torch),
                    environment=LATER, source="set", made=MADE, findings=())
    judged = judge(check.check(replace(mine, environment=HERE, others=(later,), findings=())), TORCH)
    assert not judged.value_across("same_as_forward").changed


@pytest.mark.parametrize("run", UNCHECKED_RUNS, ids=run_id)
def test_the_footer_says_why_a_value_was_not_checked(run):
    judged = judge(with_runs(run), TORCH)
    why = judged.here.values[0].why
    footer = footer_line(provenance_parts(judged))  # as a page with only this demo shows it
    assert f"Not checked in this build: {why.sentence} (same_as_forward)" in footer.astext()
    assert "autocast-demo-unchecked" in footer["classes"]
    assert footer.astext().index("Not checked") < footer.astext().index("Checked at build time")


@pytest.mark.parametrize("run", UNCHECKED_RUNS, ids=run_id)
def test_the_check_builder_never_passes_an_unchecked_value(run):
    judged = judge(with_runs(run), TORCH)
    case = builder._variant_case(judged.here, judged.here.values[0])
    if case.status == "skipped":
        assert case.message == f"not checked in this build: {judged.here.values[0].why.text}"
    else:  # a run that did not finish, or a refusal: an error at its finding
        assert case.status == "error" and case.kind in ("timeout", "crash", "engine", "not-run")


def header_and_rows(table) -> tuple[list[str], list[list[str]]]:
    texts = [[entry.astext() for entry in row.children]
             for row in table.findall(lambda n: n.tagname == "row")]
    return texts[0], texts[1:]


def test_environments_that_agree_on_every_value_share_one_column():
    the_demo = demo()
    mine = result(the_demo, ran("matches"), ran("differs"))
    later = replace(result(the_demo, ran("matches"), ran("differs"), torch=LATER.torch),
                    environment=LATER, source="set", made=MADE, findings=())
    agree = judge(check.check(replace(mine, environment=HERE, others=(later,), findings=())), TORCH)
    header, rows = header_and_rows(across.environments_table(agree))
    assert header == ["backward_pass_autocast", f"same in {HERE.label} (this build) \u00b7 "
                      f"{LATER.label.removeprefix('torch ')}", "as recorded?"]
    assert [row[1:] for row in rows] == [
        ["\u2713 matches eager", "yes, in all 2 (matches)"],
        ["\u2717 differs (w.grad, max |\u0394| 5.00e-01)", "no, in " + HERE.label
         + " (this build), " + LATER.label + ": records matches"]]
    # One value that differs between them: a column each again.
    header, rows = header_and_rows(across.environments_table(several()))
    assert header[1:] == [f"{HERE.label} (this build)", LATER.label, "as recorded?"]


def test_a_match_within_the_tolerance_names_the_tensor_furthest_off():
    close = (TensorDiff("y", "output", "float32", "float32", True, 1e-6),
             TensorDiff("w.grad", "grad", "float32", "float32", True, 3e-5))
    vr = VariantResult(demo().variants[0], Verdict(outcome="matches", max_abs=3e-5, diffs=close),
                       RunRecord(status="ok"), RunRecord(status="ok"))
    assert cells.outcome_text(vr) == "matches eager (max |\u0394| 3.0e-05 in w.grad)"


@pytest.mark.parametrize("subtypes, text", [
    ({"output"}, "no: the printed output is not the recorded one (outcome raises "
                 "NameError holds)"),
    ({"mismatch", "output"}, "no: records raises NameError, and the printed output is "
                             "not the recorded one"),
    ({"mismatch"}, "no: records raises NameError"),
])
def test_the_as_recorded_cell_says_which_record_broke(subtypes, text):
    value = first(result(demo((("*", "raises NameError"),)), raised(), raised()))
    assert value.record == "holds"  # (what it raised is what the page records)
    broken = tuple(Finding(severity="mismatch", subtype=s, message="", location=Location("i.rst", 3),
                           variants=(value.name,))
                   for s in sorted(subtypes))
    value = replace(value, record="broken", findings=broken)
    assert cells.recorded_text(value) == (text, ["autocast-demo-stale-cell"])


def test_the_matrix_names_each_environment_once_in_its_change_line():
    """One demo run by this build, one answered by this environment's own set, beside a later
    release: three sources, two environments, and the line that says no verdict changed names
    each environment once."""
    the_demo = demo()
    later = replace(result(the_demo, ran("matches"), ran("matches"), torch=LATER.torch),
                    environment=LATER, source="set", made=MADE, findings=())
    ran_here = result(the_demo, ran("matches"), ran("matches"))
    ran_here = judge(check.check(replace(ran_here, environment=HERE, others=(later,), findings=())), TORCH)
    from_set = replace(result(the_demo, ran("matches"), ran("matches")), environment=HERE,
                       source="set", made=MADE, others=(later,), findings=())
    from_set = judge(check.check(from_set), TORCH)
    change, _lead, items = matrix.environments([("a", "x", ran_here), ("b", "y", from_set)])
    assert len(items.children) == 3  # this build's runs, its own set, the later release
    assert change.astext() == f"No verdict changed between {HERE.label} (this build) and {LATER.label}."
