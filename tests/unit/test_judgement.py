"""judge.py on made-up results, the causes and records tests/unit/test_judge.py leaves out: the eager
run's side, the sentences, an environment without results, and errors that are no mismatch."""

from __future__ import annotations

from dataclasses import replace

from fakes import HERE, LATER, MADE, TORCH, demo, raised, ran, result

from sphinx_autocast_demo.core.model import DemoResult, RunRecord, VariantResult, Verdict, skipped
from sphinx_autocast_demo.judge import check
from sphinx_autocast_demo.judge.judgement import judge, unchecked
from sphinx_autocast_demo.read import syntax


def test_the_run_that_stopped_is_named_and_each_kind_reads_as_a_sentence():
    the_demo = demo()
    found = result(the_demo, ran("matches"), ran("matches"))
    eager_stopped = VariantResult(the_demo.variants[0], Verdict("error"), RunRecord("ok"),
                                  RunRecord("timeout"))
    why = unchecked(found, eager_stopped, TORCH)
    assert why is not None and (why.cause, why.text, why.short) == (
        "stopped", "not checked: the eager run timed out", "timed out")
    assert why.sentence == "the eager run timed out"  # "not checked" is said before it
    no_gpu = unchecked(found, skipped(the_demo.variants[0], "no GPU", why="no-cuda"), TORCH)
    assert no_gpu is not None and no_gpu.sentence == "skipped (no CUDA on the build machine)"
    assert no_gpu.short == "skipped: no CUDA"
    # A compiled run that raised is a result like any other.
    assert unchecked(found, VariantResult(the_demo.variants[0], Verdict("raises", exception="E"),
                                          raised()[1], RunRecord("ok")), TORCH) is None


def test_an_environment_without_results_is_an_empty_column_and_checks_nothing():
    the_demo = demo()
    mine = result(the_demo, skipped(the_demo.variants[0], "no GPU", why="no-cuda"), ran("matches"))
    gap = replace(result(the_demo, *(skipped(v, "no result", why="missing") for v in the_demo.variants),
                         torch=LATER.torch), environment=LATER, source="set", made=MADE, findings=())
    judged = judge(check.check(replace(mine, environment=HERE, others=(gap,), findings=())), TORCH)
    assert [c.empty for c in judged.columns] == [False, True]
    assert all(v.missing for v in judged.columns[1].values)
    first, second = judged.value_across("same_as_forward"), judged.value_across("off")
    # Checked nowhere: unchecked; checked here and holding: holds, whatever the gap.
    assert (first.record, len(first.unchecked_in)) == ("unchecked", 2)
    assert (second.record, [c.key for c in second.unchecked_in]) == ("holds", [LATER.label])
    assert judged.page == "partly-unchecked" and not judged.failures


def test_an_error_fails_the_page_without_being_a_mismatch_and_a_recorded_raise_holds():
    errors = judge(result(demo(), raised(), raised()), TORCH)
    assert len(errors.failures) == 1 and errors.failures[0].subtype == "snippet-error"
    assert errors.page == "broken" and not errors.mismatch
    assert [(v.record, v.error) for v in errors.here.values] == [("broken", True), ("broken", True)]
    recorded = judge(result(demo((("*", "raises NameError"),)), raised(), raised()), TORCH)
    assert recorded.page == "holds" and not recorded.failures
    assert [v.record for v in recorded.here.values] == ["holds", "holds"]


def test_a_demo_of_one_value_is_held_to_the_probes_that_ran_and_only_to_those():
    one = replace(demo((("off", "matches"),)),
                  variants=syntax.parse_values(["off"], "cpu", "bfloat16"),
                  probes=syntax.parse_values(["same_as_forward", "autocast"], "cpu", "bfloat16"))
    own = VariantResult(one.variants[0], *ran("matches"))
    same, autocast = (VariantResult(v, *ran("matches")) for v in one.probes)

    def alike(*probes: VariantResult) -> list[str]:
        found = check.check(DemoResult(demo=one, codes=(one.code,), variants=(own,),
                                       torch_version=TORCH, probes=probes))
        return [f.message for f in found.findings if f.subtype == "alike"]

    assert alike(same, autocast) == [
        "this demo cannot tell off, same_as_forward and autocast apart (same_as_forward and "
        "autocast were run too, to check): every one matches eager, so it would look the same "
        "under the wrong value; make the snippet depend on the value (a float32 matrix product "
        "in the backward does), or add :alike: if sameness is its point"]
    # One probe with another verdict tells the values apart.
    assert alike(same, VariantResult(one.probes[1], *ran("differs"))) == []
    # A probe that never ran is left out, not counted as agreeing; none left: nothing to say.
    cut = skipped(one.probes[1], "no GPU", why="no-cuda")
    assert alike(same, cut)[0].startswith("this demo cannot tell off and same_as_forward apart "
                                          "(same_as_forward was run too, to check)")
    assert alike(cut) == [] and alike() == []


def test_the_probes_are_the_builtin_values_a_demo_names_neither_by_name_nor_by_value():
    values = syntax.parse_values(['off', 'bf16=[{"device_type": "cpu", "dtype": torch.bfloat16}]'],
                                 "cpu", "bfloat16")
    # bf16 is the CPU's own autocast under another name: not run again.
    assert [v.name for v in syntax.unnamed_builtins(values, "cpu", "bfloat16")] == ["same_as_forward"]
    assert [v.name for v in syntax.unnamed_builtins(values, "cpu", "float16")] == [
        "same_as_forward", "autocast"]
