"""Result sets, shards, scoped records and accept across environments, on made-up results (no
torch, no build): the rules that tests/build/test_environments.py shows end to end with real
torch."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from fakes import TORCH, demo, ran, result, written

from sphinx_autocast_demo import __main__ as cli
from sphinx_autocast_demo.accept import rewrite as accept
from sphinx_autocast_demo.core.model import Claim, Environment, RunRecord, VariantResult, Verdict
from sphinx_autocast_demo.core.scopes import in_scope, never, overlap
from sphinx_autocast_demo.judge import check
from sphinx_autocast_demo.judge.check import conflicts
from sphinx_autocast_demo.judge.judgement import judge, unchecked
from sphinx_autocast_demo.plan import results
from sphinx_autocast_demo.plan.cache import Entry
from sphinx_autocast_demo.read import syntax

NEW = Environment("torch 2.16.0", "2.16.0", "3.11.7", "cpu")


def test_a_split_is_the_same_in_every_shard_balanced_and_whole():
    weights = {f"page#{i}": float(i % 5 + 1) for i in range(40)}
    split = results.partition(weights, 3)
    assert split == results.partition(dict(reversed(list(weights.items()))), 3)  # order-free
    assert set(split) == set(weights) and set(split.values()) == {1, 2, 3}
    loads = [sum(w for n, w in weights.items() if split[n] == s) for s in (1, 2, 3)]
    assert max(loads) - min(loads) <= max(weights.values())  # greedy, longest first


@pytest.mark.parametrize("text", ["0/2", "3/2", "1", "a/b", "1/0", ""])
def test_a_shard_must_be_i_of_n(text):
    with pytest.raises(ValueError, match="is not a shard"):
        results.parse_shard(text)


def test_scopes_match_the_release_and_the_device():
    assert in_scope("torch>=2.16", NEW) and not in_scope("torch<2.16", NEW)
    assert in_scope("torch==2.13.0", Environment("x", "2.13.0+cpu", "3.11"))  # PEP 440: no local named
    assert not in_scope("torch>=2.16", Environment("x", "2.16.0a0+git123", "3.11"))  # a pre-release
    assert in_scope("torch>=2.14,<2.17 cpu", NEW) and not in_scope("cuda", NEW)
    assert not in_scope("torch>=2.0", Environment("x", "not installed", "3.11"))


def test_a_local_version_and_several_devices_are_read_as_written():
    cpu_build = Environment("x", "2.13.0+cpu", "3.11")
    assert in_scope("torch==2.13.0+cpu", cpu_build)
    assert not in_scope("torch==2.13.0+cu121", cpu_build)
    assert not in_scope("torch==2.13.0+cpu", Environment("x", "2.13.0", "3.11"))
    assert in_scope("cpu cuda", NEW) and in_scope("cpu cuda", replace(NEW, device="cuda"))
    assert written(syntax.parse_expect("off[cpu, cuda]: matches", ("off",))) == "off[cpu cuda]: matches"


@pytest.mark.parametrize("scope, empty", [
    ("torch>=2.16,<2.15", True), ("torch>2.15,<=2.15", True), ("torch==2.13.0+cpu,<2.13", True),
    ("torch>=2.15,<2.16", False), ("torch==2.15.0+cpu,<=2.15", False), ("torch<2.0", False),
    ("torch!=2.15,==2.15.*", False), ("cuda", False),
])
def test_a_scope_no_release_falls_in_is_known(scope, empty):
    assert never(scope) is empty


def test_overlap_is_proved_by_a_release_in_both():
    assert overlap("torch>=2.13", "torch<2.16") == "torch 2.13"
    assert overlap("cpu", "torch>=2.13") == "torch 2.13 on cpu"
    assert overlap("torch<2.14", "torch<2.15") == "torch 2.13"
    assert overlap("cpu", "cuda") is None
    assert overlap("torch<2.14", "torch>=2.14") is None
    with pytest.raises(syntax.SyntaxProblem, match=r"off\[torch>=2.13\]: matches and off\[cuda\]"):
        syntax.parse_expect("off[torch>=2.13]: matches, off[cuda]: differs", ("off",))
    # Agreeing, or of different values: not a conflict.
    syntax.parse_expect("off[torch>=2.13]: matches, off[cuda]: matches, *[cuda]: differs", ("off",))


def test_overlapping_scopes_no_witness_proves_are_caught_in_the_environment():
    # 2.13.0.0.0.1 is in both; no witness the parser tries is: the build that has it says so.
    written = (("off[torch>2.13.0,<2.13.0.0.1]", "matches"), ("off[torch>=2.13]", "differs"))
    odd = Environment("torch odd", "2.13.0.0.0.1", "3.11.7")
    the_demo = demo(written)
    assert syntax.parse_expect(", ".join(f"{n}: {o}" for n, o in written), ("same_as_forward", "off"))
    mine = replace(result(the_demo, ran("matches"), ran("matches")), environment=odd, findings=())
    found = conflicts(mine)
    assert [(f.subtype, f.variants, f.severity) for f in found] == [("scope-overlap", ("off",), "error")]
    assert "off[torch>2.13.0,<2.13.0.0.1] (matches) and off[torch>=2.13] (differs)" in found[0].message
    assert record_broken(replace(mine, findings=found), "off", odd)
    assert conflicts(replace(mine, environment=NEW)) == ()
    with pytest.raises(accept.Blocked, match="both apply in torch odd"):
        accept.new_expect(mine)


def test_accept_rewrites_the_scoped_record_that_applies():
    the_demo = demo((("same_as_forward", "differs"), ("off[torch>=2.9]", "differs")))
    here = Environment(f"torch {TORCH}", TORCH, "3.11.7")
    mine = replace(result(the_demo, ran("differs"), ran("matches")), environment=here, findings=())
    assert written(accept.new_expect(check.check(mine))) == "off[torch>=2.9]: matches"
    # A shared *[scope] keeps holding for the others: the value gets its own in that scope.
    the_demo = demo((("*[cpu]", "differs"),))
    mine = replace(result(the_demo, ran("differs"), ran("matches")), environment=here, findings=())
    assert written(accept.new_expect(check.check(mine))) == "off[cpu]: matches"


def test_accept_writes_nothing_that_would_not_hold_next_time():
    # The new record for torch 2.16.0 on cpu would be off[torch==2.16.0]: differs, which
    # overlaps a scope written for CUDA that says otherwise.
    the_demo = demo((("*", "matches"), ("off[torch>=2.16 cuda]", "matches")))
    here = Environment(f"torch {TORCH}", TORCH, "3.11.7")
    later = other(the_demo, NEW, ran("matches"), ran("differs"))
    mine = replace(result(the_demo, ran("matches"), ran("matches")), environment=here,
                   others=(later,), findings=())
    with pytest.raises(accept.Blocked, match=r"would not be read: .*overlap"):
        accept.new_expect(check.check(mine))


def test_a_scoped_record_wins_where_it_applies():
    the_demo = demo(syntax.parse_expect("*: differs, off[torch >= 2.16]: matches",
                                        ("same_as_forward", "off")))
    assert the_demo.expected("off", NEW) == Claim("matches")
    assert the_demo.expected("off", replace(NEW, torch="2.15.0")) == Claim("differs")
    assert the_demo.expected("same_as_forward", NEW) == Claim("differs")


@pytest.mark.parametrize("text, says", [
    ("off[gpu]: matches", "'gpu' is not a scope"),
    ("off[torch>=two]: matches", "is not a scope"),
    ("off: matches, off: differs", "recorded twice"),
])
def test_a_bad_scope_says_what_to_write(text, says):
    with pytest.raises(syntax.SyntaxProblem, match=says) as info:
        syntax.parse_expect(text, ("off",))
    assert "off[torch>=2.15]" in str(info.value) or "twice" in says


def other(the_demo, env: Environment, *per_value):
    made = result(the_demo, *per_value, torch=env.torch)
    return replace(made, environment=env, source="set", made="made on 2026-11-30 by tox -e x",
                   findings=())


def record_broken(found, name: str, env: Environment) -> bool:
    """Does the judgement of ``found`` say the record of ``name`` no longer holds in ``env``?"""
    column = next(c for c in judge(found, TORCH).columns if c.environment == env)
    return column.value(name).record == "broken"


def test_a_record_is_checked_in_every_environment_and_accept_scopes_the_new_one():
    the_demo = demo((("same_as_forward", "differs"), ("off", "matches")))
    here = Environment(f"torch {TORCH}", TORCH, "3.11.7")
    later = other(the_demo, NEW, ran("matches"), ran("matches"))
    mine = replace(result(the_demo, ran("differs"), ran("matches")), environment=here,
                   others=(later,), findings=())
    checked = check.check(mine)
    broken = [f for f in checked.findings if f.failed]
    assert [(f.variants, f.environment) for f in broken] == [(("same_as_forward",), NEW.label)]
    assert "with torch 2.16.0 (torch 2.16.0, made on 2026-11-30" in broken[0].message
    assert record_broken(checked, "same_as_forward", NEW)
    assert not record_broken(checked, "same_as_forward", here)
    assert written(accept.new_expect(checked)) == "same_as_forward[torch==2.16.0]: matches"


def write_set(root: Path, env: Environment, verdict: str, shard: str = "") -> None:
    entry = Entry(env.torch, Verdict(outcome=verdict), RunRecord("ok"), RunRecord("ok"))  # type: ignore[arg-type]
    results.write(root, env, results.RunInfo(shard, "sphinx-build -b autocast-check", "2026-11-30"),
                  {"ab" + "0" * 62: entry})


def test_merge_copies_environments_and_reports_a_conflict_and_a_lost_shard(tmp_path, capsys):
    write_set(tmp_path / "a", NEW, "matches", shard="1/2")
    write_set(tmp_path / "b", NEW, "differs", shard="1/2")
    write_set(tmp_path / "c", replace(NEW, label="torch 2.16.0 gpu", device="cuda"), "matches")
    assert cli.main(["merge", str(tmp_path / "out"), *(str(tmp_path / x) for x in "abc")]) == 1
    err = capsys.readouterr().err
    assert "two different results for ab000" in err and "(matches and differs)" in err
    assert "no results of shard 2/2" in err
    found = results.load([tmp_path / "out"])
    assert set(found) == {"torch 2.16.0", "torch 2.16.0 gpu"}
    assert found["torch 2.16.0 gpu"].environment.device == "cuda"


def test_a_damaged_set_is_a_sentence_not_a_traceback(tmp_path, capsys):
    write_set(tmp_path / "a", NEW, "matches")
    entry = next((tmp_path / "a").glob("*/ab/*.json"))
    entry.write_text(json.dumps({**json.loads(entry.read_text()), "verdict": "pickle"}))
    (tmp_path / "b" / "torch-9").mkdir(parents=True)
    (tmp_path / "b" / "torch-9" / "environment.json").write_text("{not json")
    assert cli.main(["merge", str(tmp_path / "out"), str(tmp_path / "a")]) == 1
    assert "verdict is 'pickle'" in capsys.readouterr().err
    assert cli.main(["merge", str(tmp_path / "out2"), str(tmp_path / "b")]) == 1
    assert "not a readable result set" in capsys.readouterr().err


def test_a_missing_environment_is_not_checked_and_says_so():
    the_demo = demo()
    gap = VariantResult(the_demo.variants[0], Verdict(outcome="error"),
                        RunRecord("skipped", detail="no result", not_run="missing"),
                        RunRecord("skipped", not_run="missing"))
    why = unchecked(result(the_demo, ran("matches"), ran("matches")), gap, TORCH)
    assert why is not None and why.text == "no result: none kept with these docs"


def test_accept_refuses_a_scope_that_would_cover_an_environment_that_disagrees():
    the_demo = demo((("same_as_forward", "differs"), ("off", "matches")))
    here = Environment(f"torch {TORCH}", TORCH, "3.11.7")
    twin = other(the_demo, replace(here, label="the same torch elsewhere"),
                 ran("matches"), ran("matches"))
    mine = replace(result(the_demo, ran("differs"), ran("matches")), environment=here,
                   others=(twin,), findings=())
    with pytest.raises(accept.Blocked, match="same torch release and device"):
        accept.new_expect(check.check(mine))
