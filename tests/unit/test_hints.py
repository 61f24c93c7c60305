"""What the check tells a writer to do (no torch, made-up results): the tolerance option that
applies where compiled differs from eager by rounding only, the scope of a ``no-config`` record
that covers every release without the config, and a ``default`` row that broke because torch's
default changed, said as such."""

from __future__ import annotations

from dataclasses import replace

import pytest
from fakes import HERE, LATER, MADE, SRC, TORCH, WHERE, demo, ran, result

from sphinx_autocast_demo.core.model import (
    DEFAULT_CONFIG,
    DefaultChange,
    DemoResult,
    Environment,
    OptionSpan,
    RunRecord,
    SnippetError,
    SourceMap,
    TensorDiff,
    Tolerance,
    VariantResult,
    Verdict,
)
from sphinx_autocast_demo.judge import check, hints
from sphinx_autocast_demo.judge.judgement import judge
from sphinx_autocast_demo.read import syntax


def off_by(*diffs: tuple[str, str, float]):
    """A verdict that differs in these tensors, by these amounts, and its two runs."""
    found = tuple(TensorDiff(name, kind, "float32", "float32", False, by) for name, kind, by in diffs)
    verdict = Verdict(outcome="differs", diffs=found, max_abs=max(by for _, _, by in diffs),
                      note=", ".join(f"{name} (max |diff| {by:.3g})" for name, _, by in diffs))
    return verdict, RunRecord(status="ok"), RunRecord(status="ok")


def alike(found) -> str:
    return next(f.message for f in found.findings if f.subtype == "alike")


# -- tolerance: the option that applies, and what to write ------------------------------------------

def test_values_alike_by_rounding_name_the_grad_tolerance_to_add_and_the_conf_value_that_applies():
    found = result(demo((("*", "differs"),)), off_by(("w.grad", "grad", 2.4e-8)),
                   off_by(("w.grad", "grad", 3.0e-8)))
    message = alike(found)
    assert message.startswith(
        "this demo cannot tell same_as_forward and off apart: every one differs from eager, but "
        "only by rounding (at most 3.00e-08, in w.grad), which no value decides; allow it: add "
        ":grad-tolerance: 1e-07 to this demo (it names none, so conf.py's "
        "autocast_demo_grad_tolerance = 0 applies to it). If its values then still give one "
        "verdict, make the snippet depend on the value"), message


def test_a_demo_with_its_own_tolerance_is_told_to_raise_that_one_at_its_line():
    own = replace(demo((("*", "differs"),)), tolerance=Tolerance(grad=1e-9, output=1e-3),
                  source_map=SourceMap(SRC, 1, "rst", 2, 5, (*WHERE.options,
                                                             OptionSpan("grad-tolerance", 4, 5))))
    message = alike(result(own, off_by(("w.grad", "grad", 3e-8)), off_by(("w.grad", "grad", 3e-8))))
    assert "allow it: raise this demo's :grad-tolerance: 1e-09 (line 4) to 1e-07." in message
    assert "autocast_demo_grad_tolerance" not in message


def test_other_tensors_are_the_output_tolerance_and_both_are_named_where_both_differ():
    message = alike(result(demo((("*", "differs"),)), off_by(("z", "value", 4e-6)),
                           off_by(("z", "value", 1e-6), ("w.grad", "grad", 1e-8))))
    assert ("allow it: add :grad-tolerance: 1e-08 to this demo (it names none, so conf.py's "
            "autocast_demo_grad_tolerance = 0 applies to it); add :output-tolerance: 1e-05 to "
            "this demo (it names none, so conf.py's autocast_demo_output_tolerance = 0.001 "
            "applies to it)") in message


@pytest.mark.parametrize("diffs", [
    (("w.grad", "grad", 0.03),),  # an autocast dtype's difference, not rounding
    (("printed line 1", "output", 1e-8),),  # printed text: no tolerance reads it as a tensor
])
def test_differences_that_are_no_rounding_keep_the_advice_to_make_the_snippet_depend(diffs):
    message = alike(result(demo((("*", "differs"),)), off_by(*diffs), off_by(*diffs)))
    assert "tolerance" not in message
    assert "every one differs from eager, so it would look the same under the wrong value; make " \
           "the snippet depend on the value" in message


def test_a_recorded_match_broken_by_rounding_says_which_tolerance_would_allow_it():
    found = result(demo((("*", "matches"),)), off_by(("w.grad", "grad", 3e-8)), ran("differs"))
    first, second = (f.message for f in found.findings if f.subtype == "mismatch")
    assert first.endswith("; if that is rounding, not the value's doing, allow it: add "
                          ":grad-tolerance: 1e-07 to this demo (it names none, so conf.py's "
                          "autocast_demo_grad_tolerance = 0 applies to it)"), first
    assert "tolerance" not in second  # (off by 0.5: no rounding)


# -- no-config: the scope of every release without the config -----------------------------------------

def no_config(the_demo, torch: str = "2.13.0+cpu"):
    error = SnippetError(type="AttributeError", names=("AttributeError",), kind="no-config",
                         message="no attribute", frames=())
    record = RunRecord(status="raised", error=error)
    runs = (Verdict(outcome="no-config", note="no attribute"), record, record)
    return result(the_demo, runs, runs, torch=torch)


def test_the_no_config_record_covers_every_release_before_the_one_that_added_it():
    found = no_config(demo(()), torch="2.8.0+cpu")
    message = next(f.message for f in found.findings if f.subtype == "no-config")
    assert message.endswith("record that in :expect: (*[torch<2.9]: no-config; "
                            "backward_pass_autocast first shipped in torch 2.9)"), message
    assert "torch==2.8.0+cpu" not in message


def test_a_config_whose_history_is_not_known_is_recorded_up_to_this_minor_release():
    other = replace(demo(()), config="torch._functorch.config.prune_later")
    message = next(f.message for f in no_config(other).findings if f.subtype == "no-config")
    assert message.endswith("(*[torch<2.14]: no-config; every release up to 2.13: move the bound "
                            "up to the release that adds it, once you know it)"), message
    # The proposed record holds here, and the next build finds nothing to say.
    fixed = replace(other, expect=syntax.parse_expect("*[torch<2.14]: no-config",
                                                      ("same_as_forward", "off")))
    here = Environment("torch 2.13.0+cpu", "2.13.0+cpu", "3.11.7")
    assert not check.check(replace(no_config(fixed), environment=here, findings=())).findings


def test_a_result_set_with_the_config_bounds_the_scope_at_its_release():
    other = replace(demo(()), config="torch._functorch.config.prune_later")
    mine = replace(no_config(other), environment=HERE, findings=())
    later = replace(result(other, ran("matches"), ran("matches"), torch="2.16.0"),
                    environment=replace(LATER, torch="2.16.0"), source="set", made=MADE, findings=())
    found = check.check(replace(mine, others=(later,)))
    message = next(f.message for f in found.findings if f.subtype == "no-config")
    assert message.endswith("(*[torch<2.16]: no-config; torch 2.16.0 has it)"), message


def test_releases_without_the_config_on_both_sides_of_one_with_it_get_this_release_only():
    scope, why = hints.missing_scope("x.y", ["2.13.0+cpu", "2.11.0"], ["2.12.0"])
    assert (str(scope), why) == ("torch==2.13.0", "torch 2.13.0; widen it to the releases you "
                                                  "know lack it")
    # A known first release that this torch contradicts is no scope for it.
    scope, _ = hints.missing_scope(DEFAULT_CONFIG, ["2.13.0+cpu"], [])
    assert str(scope) == "torch<2.14"


# -- a changed default, said once, as such ------------------------------------------------------------

NAMES = ["default", "same_as_forward", "off"]


def defaulted(names: list[str], expect: str, *runs, now: str = "'off'",
              had: str = "'same_as_forward'"):
    """A demo whose default row ran under ``now``, checked beside a kept result set of an
    earlier torch whose default was ``had`` (none: no result set), where that row matched."""
    the_demo = replace(demo(), variants=syntax.parse_values(names, "cpu", "bfloat16"),
                       expect=syntax.parse_expect(expect, tuple(names)))
    verdict, compiled, eager = runs[0]
    first = (verdict, replace(compiled, config_default=now), replace(eager, config_default=now))
    variants = tuple(VariantResult(v, *r) for v, r in zip(the_demo.variants, (first, *runs[1:]),
                                                          strict=True))
    here = DemoResult(demo=the_demo, codes=(the_demo.code,), variants=variants, torch_version=TORCH)
    if had:
        matched, compiled, eager = ran("matches")
        before = (VariantResult(variants[0].variant, matched, replace(compiled, config_default=had),
                                replace(eager, config_default=had)), *variants[1:])
        earlier = replace(here, variants=before, torch_version="2.12.0", source="set",
                          environment=Environment("torch 2.12.0", "2.12.0", "3.11"))
        here = replace(here, others=(earlier,))
    return check.check(here)


def test_a_default_row_broken_by_a_new_default_says_the_new_default_and_the_recorded_one():
    found = defaulted(NAMES, "default: matches, same_as_forward: matches, off: differs",
                      ran("differs", note="w.grad (max |diff| 0.5)"), ran("matches"),
                      ran("differs"))
    assert [f.subtype for f in found.findings] == ["default-changed"]
    finding = found.findings[0]
    # (the off row, recorded apart from the default, now does what it does: evidence too)
    assert finding.default == DefaultChange(DEFAULT_CONFIG, "'off'", ("'same_as_forward'",), "off")
    assert finding.message == (
        f"value default: torch {TORCH}'s default of {DEFAULT_CONFIG} is now 'off', the page "
        "records 'same_as_forward' (its default row records 'matches', as its same_as_forward "
        "row does); the default row now differs from eager: w.grad (max |diff| 0.5). If the "
        "page is about the default, record what it does now (default: differs); if it is about "
        "'same_as_forward', name that value instead of default")
    assert (finding.location.line, finding.variants) == (3, ("default",))
    value = judge(found, TORCH).here.value("default")
    assert value.record == "broken" and value.broken == {"outcome"}


def test_without_a_value_recorded_alike_the_row_of_the_new_default_tells_it():
    found = defaulted(["default", "off"], "default: matches, off: differs",
                      ran("differs"), ran("differs"))
    finding = found.findings[0]
    assert finding.subtype == "default-changed" and finding.default.unlike == "off"
    assert ("is now 'off', the page records a default other than 'off' (its default row records "
            "'matches', its off row 'differs'); the default row now does what the off row does: "
            "differs from eager. If the page is about the default, record what it does now "
            "(default: differs); if it is about the default torch had, name that value instead "
            "of default") in finding.message


@pytest.mark.parametrize("now", [
    "'same_as_forward'",  # the default the page records: the row broke for another reason
    "",  # a row that did not say which default it ran under
])
def test_a_default_row_that_breaks_under_the_recorded_default_is_an_ordinary_mismatch(now):
    found = defaulted(NAMES, "default: matches, same_as_forward: matches, off: differs",
                      ran("differs"), ran("matches"), ran("differs"), now=now)
    assert [f.subtype for f in found.findings] == ["mismatch"]
    assert found.findings[0].message.startswith("value default: the page records 'matches' but")


def test_a_default_row_alike_with_a_broken_record_is_no_evidence():
    # same_as_forward's own record broke too: the page's records no longer say what the
    # default is taken to be.
    found = defaulted(NAMES, "default: matches, same_as_forward: matches, off: matches",
                      ran("differs"), ran("differs"), ran("differs"))
    assert {f.subtype for f in found.findings} == {"mismatch", "alike"}


def test_a_changed_default_is_not_said_of_a_value_that_is_not_the_default_row():
    change = hints.default_change(defaulted(NAMES, "*: matches", ran("differs"), ran("matches"),
                                            ran("differs")),
                                  VariantResult(syntax.parse_values(["off"], "cpu", "bfloat16")[0],
                                                *ran("differs")), frozenset({"'same_as_forward'"}))
    assert change is None


@pytest.mark.parametrize("had", [
    "",  # no result set: no torch the page was checked with is known to have had another default
    "'same_as_forward'",  # a kept set whose torch had the very default this one has
])
def test_a_wrong_record_of_the_default_row_is_a_wrong_record_not_a_changed_default(had):
    # The writer typed "default: matches" where the default row differs, as same_as_forward's
    # does: the records read as if the page took the default to be 'off', but no torch the
    # page was checked with had another default than this one's.
    found = defaulted(["default", "same_as_forward", "off"],
                      "default: matches, same_as_forward: differs, off: matches",
                      ran("differs"), ran("differs"), ran("matches"),
                      now="'same_as_forward'", had=had)
    here = [f for f in found.findings if not f.environment]
    assert [f.subtype for f in here] == ["mismatch"], found.findings
    assert here[0].message.startswith(
        f"value default: the page records 'matches' but with torch {TORCH} compiled differs")
    assert (here[0].location.line, here[0].variants) == (3, ("default",))
