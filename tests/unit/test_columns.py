"""Principle 8: the release columns of a demo's table are grouped by their verdicts. Made-up
results: two environments whose differences are within the tolerance but rounded otherwise
(another CPU's kernels) share a column, whose cell holds for both; other outcomes do not."""

from __future__ import annotations

from dataclasses import replace

from fakes import HERE, LATER, MADE, TORCH, claims, demo, result
from test_judge import header_and_rows

from sphinx_autocast_demo.core.model import RunRecord, TensorDiff, VariantResult, Verdict
from sphinx_autocast_demo.judge import check
from sphinx_autocast_demo.judge.judgement import judge
from sphinx_autocast_demo.present import across, cells


def within(max_abs: float) -> tuple[Verdict, RunRecord, RunRecord]:
    """A match within the tolerance, ``max_abs`` off in w.grad."""
    diff = TensorDiff("w.grad", "grad", "float32", "float32", True, max_abs)
    return (Verdict("matches", max_abs=max_abs, diffs=(diff,), compared=1),
            RunRecord("ok"), RunRecord("ok"))


def differs(max_abs: float, name: str = "w.grad") -> tuple[Verdict, RunRecord, RunRecord]:
    diff = TensorDiff(name, "grad", "float32", "float32", False, max_abs)
    return (Verdict("differs", max_abs=max_abs, diffs=(diff,), compared=1),
            RunRecord("ok"), RunRecord("ok"))


def table(here: tuple, there: tuple) -> tuple[list[str], list[list[str]]]:
    """The table of a demo (same_as_forward, off) checked here and in LATER's set."""
    the_demo = replace(demo(), expect=claims((("same_as_forward", "matches"), ("off", "differs"))))
    mine = result(the_demo, *here)
    later = replace(result(the_demo, *there, torch=LATER.torch), environment=LATER, source="set",
                    made=MADE, findings=())
    judged = judge(check.check(replace(mine, environment=HERE, others=(later,), findings=())), TORCH)
    return header_and_rows(across.environments_table(judged))


def test_differences_within_tolerance_rounded_otherwise_share_a_column_that_holds_for_both():
    header, rows = table((within(1.4e-4), differs(0.5)), (within(1.2e-4), differs(0.25)))
    assert header[1] == f"same in {HERE.label} (this build) \u00b7 {LATER.label.removeprefix('torch ')}"
    assert [row[1] for row in rows] == [
        "\u2713 matches eager (max |\u0394| 1.2e-04 to 1.4e-04 in w.grad)",
        "\u2717 differs (w.grad, max |\u0394| 2.50e-01 to 5.00e-01)"]
    # Bitwise equal in one of them: the other's number is an upper bound, not a claim of both.
    header, rows = table((within(1.4e-4), differs(0.5)), (ran_exactly(), differs(0.5)))
    assert rows[0][1] == "\u2713 matches eager (max |\u0394| up to 1.4e-04 in w.grad)"
    assert rows[1][1] == "\u2717 differs (w.grad, max |\u0394| 5.00e-01)"  # the same: as it is


def ran_exactly() -> tuple[Verdict, RunRecord, RunRecord]:
    return Verdict("matches", compared=1), RunRecord("ok"), RunRecord("ok")


def test_another_verdict_splits_the_columns():
    for there in ((differs(1e-1), differs(0.5)),  # another outcome
                  (within(1e-4), differs(0.5, name="x.grad"))):  # another tensor differs
        header, _ = table((within(1.4e-4), differs(0.5)), there)
        assert header[1:3] == [f"{HERE.label} (this build)", LATER.label], there


def test_a_verdicts_kind_holds_no_numbers():
    a, b = within(1.4e-4)[0], within(1.2e-4)[0]
    assert cells.verdict_kind(a) == cells.verdict_kind(b)
    assert cells.verdict_kind(a) != cells.verdict_kind(differs(1.4e-4)[0])
    assert cells.outcome_across([VariantResult(demo().variants[0], v, RunRecord("ok"), RunRecord("ok"))
                                 for v in (a, a)]) == cells.outcome_text(
        VariantResult(demo().variants[0], a, RunRecord("ok"), RunRecord("ok")))


def test_a_shared_column_names_the_largest_difference_and_its_range():
    """The first environment's largest difference (not the first compared), and that tensor's
    range across the environments that share the column."""
    def several(head: float, bias: float) -> tuple[Verdict, RunRecord, RunRecord]:
        diffs = (TensorDiff("head.grad", "grad", "float32", "float32", False, head),
                 TensorDiff("proj.bias.grad", "grad", "float32", "float32", False, bias))
        return Verdict("differs", max_abs=bias, diffs=diffs, compared=2), RunRecord("ok"), RunRecord("ok")

    _, rows = table((within(1.4e-4), several(3.05e-2, 4.0)), (within(1.2e-4), several(3.1e-2, 3.5)))
    assert rows[1][1] == "\u2717 differs (proj.bias.grad, max |\u0394| 3.50e+00 to 4.00e+00) and 1 more"
