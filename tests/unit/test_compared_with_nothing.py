"""``:compare: none`` (issue 49): a demo whose compiled run is compared with nothing. Its
verdict says only whether the run finished; its records of what compiling did and printed are
its checks, and one that records neither is told the record to add. Fakes only: the real
build is tests/build/test_compile_facts.py."""

from __future__ import annotations

from dataclasses import replace

import pytest
from fakes import TORCH, demo, result

from sphinx_autocast_demo.accept.newrecord import Blocked, new_compile, new_expect
from sphinx_autocast_demo.core.model import (
    CompileClaim,
    CompileFacts,
    GraphBreak,
    RunRecord,
    SnippetError,
    VariantResult,
    Verdict,
)
from sphinx_autocast_demo.core.scopes import Record
from sphinx_autocast_demo.judge.compare import alone
from sphinx_autocast_demo.judge.judgement import judge
from sphinx_autocast_demo.plan.cache import Entry, consistent
from sphinx_autocast_demo.present.cells import outcome_as_recorded

FACTS = CompileFacts(graphs=2, breaks=(GraphBreak("Failed to trace builtin operator"),))


def uncompared(expect=(), compiled=None):
    """A demo compared with nothing, of two values, recording ``compiled`` for both."""
    records = () if compiled is None else (Record("*", compiled),)
    return replace(demo(expect), compare="none", show="record", expect_compile=records)


def ran_alone(variant, record=None):
    record = record or RunRecord(status="ok", compile=FACTS)
    return VariantResult(variant, alone(record), record, None)


def both(the_demo, record=None):
    return result(the_demo, *(ran_alone(v, record) for v in the_demo.variants))


@pytest.mark.parametrize(("record", "outcome", "note"), [
    (RunRecord(status="ok"), "ran", ""),
    (RunRecord(status="raised", error=SnippetError(type="KeyError", names=("KeyError",),
                                                   message="'k'", frames=())), "raises", "'k'"),
    (RunRecord(status="timeout", detail="stopped after 120 s"), "error",
     "compiled run: stopped after 120 s"),
    (RunRecord(status="ok", error=SnippetError(
        type="LookupError", names=(), message="", frames=(), kind="compiled-nothing",
        facts=("never-reached",))), "error",
     "the compiled run compiled nothing: the snippet never reached torch.compile (or another "
     "entry point into the compiler)"),
])
def test_a_run_compared_with_nothing_finished_raised_or_is_no_verdict(record, outcome, note):
    verdict = alone(record)
    assert (verdict.outcome, verdict.note) == (outcome, note)


def test_its_records_of_compiling_are_its_checks_and_hold_in_words():
    judged = judge(both(uncompared(compiled=CompileClaim(graphs=2, breaks=1))), TORCH)
    assert judged.result.findings == ()  # no outcome to record: nothing missing
    assert [v.record for v in judged.here.values] == ["holds", "holds"]
    assert outcome_as_recorded(judged.here.values[0], TORCH) == (
        "ran, not compared with eager, as recorded", ["autocast-demo-ran", "autocast-demo-holds"])
    assert judged.page == "holds"


def test_a_changed_fact_breaks_its_record_and_the_cell_says_which():
    judged = judge(both(uncompared(compiled=CompileClaim(graphs=1))), TORCH)
    assert {f.subtype for f in judged.failures} == {"compile-facts"}
    text, _ = outcome_as_recorded(judged.here.values[0], TORCH)
    assert text == "ran, not compared with eager; no: compiling did not do what it records"


def test_one_that_records_nothing_is_told_the_record_and_accept_writes_it():
    checked = both(uncompared())
    (missing,) = checked.findings
    assert missing.subtype == "missing-expectation" and missing.severity == "missing"
    assert missing.message.endswith(
        "   :expect-compile: *: graphs 2, breaks 1 [Failed to trace builtin operator], "
        "recompiles 0")
    assert new_compile(checked) == [("*", CompileClaim(
        graphs=2, breaks=1, recompiles=0, break_reasons=("Failed to trace builtin operator",)))]
    assert new_expect(checked) is None  # (a run that finished has no outcome to record)
    # Recording what it printed is a check too: then nothing is asked.
    printing = replace(uncompared(), expect_output=(Record("*", "done"),))
    assert both(printing, RunRecord(status="ok", output="done", compile=FACTS)).findings == ()


def test_a_recorded_raise_that_did_not_happen_fails_and_accept_leaves_it_to_the_writer():
    checked = both(uncompared(expect=(("*", "raises KeyError"),), compiled=CompileClaim(graphs=2)))
    assert [f.subtype for f in checked.findings] == ["mismatch", "mismatch"]
    with pytest.raises(Blocked, match="ran without raising"):
        new_expect(checked)


def test_a_cached_entry_without_an_eager_run_cannot_claim_a_comparison():
    record = RunRecord(status="ok")
    consistent(Entry(TORCH, Verdict(outcome="ran"), record, None))
    with pytest.raises(ValueError, match="eager is None"):
        consistent(Entry(TORCH, Verdict(outcome="matches"), record, None))

