"""Doctree snapshots of made-up judgements: what the page shows, node by node, without torch.

Each case builds results by hand, checks and judges them, renders them as a page would
(render.result_nodes) and compares the nodes' ``pformat()`` with ``tests/unit/snapshots/<case>.txt``.
A change of what a page shows then shows up as a diff of that file, in review (tests/pinned.py
says how to write them again). The docs' own demos are pinned too, as built:
tests/build/test_docs.py.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from docutils import nodes
from fakes import APP, HERE, LATER, MADE, TORCH, WHEN, claims, demo, raised, ran, result
from pinned import assert_pinned

from sphinx_autocast_demo.core.model import (
    CompileClaim,
    CompileFacts,
    DemoResult,
    Environment,
    Frame,
    GraphBreak,
    Recompile,
    RunRecord,
    Tolerance,
    VariantResult,
    skipped,
)
from sphinx_autocast_demo.core.scopes import Record
from sphinx_autocast_demo.judge import check
from sphinx_autocast_demo.judge.judgement import judge
from sphinx_autocast_demo.present import render
from sphinx_autocast_demo.read import syntax

SNAPSHOTS = Path(__file__).parent / "snapshots"


def held_and_broken() -> DemoResult:
    return result(demo(), ran("differs", note="w.grad"), ran("matches", output="tensor(16.)\n"))


def show_record() -> DemoResult:
    return result(replace(demo((("*", "differs"),)), show="record"),
                  ran("differs", output="x\n"), ran("matches", output="x\n"))


def not_run() -> DemoResult:
    """One value skipped for want of CUDA, the other stopped by its timeout."""
    the_demo = demo()
    stopped = RunRecord(status="timeout", detail="stopped after 120 s", output="step 1\n")
    return result(the_demo, skipped(the_demo.variants[0], "no GPU", why="no-cuda"),
                  VariantResult(the_demo.variants[1], ran("error")[0], stopped, stopped))


def other_torch() -> DemoResult:
    found = result(demo(), ran("matches"), ran("matches"), torch="1.0.0")
    return replace(found, variants=tuple(replace(v, cached=True) for v in found.variants))


def environments() -> DemoResult:
    """This build, a result set of a later torch that differs under one value, and an expected
    environment that no set holds."""
    the_demo = demo()
    mine = result(the_demo, ran("matches"), ran("matches"))
    later = replace(result(the_demo, ran("matches"), ran("differs"), torch=LATER.torch),
                    environment=LATER, source="set", made=MADE, when=WHEN, findings=())
    gone = Environment("torch 2.12.0", "", "")
    gaps = tuple(skipped(v, "no result from torch 2.12.0", why="missing") for v in the_demo.variants)
    missing = DemoResult(the_demo, mine.codes, gaps, "", environment=gone, source="missing",
                         made="made")
    return check.check(replace(mine, environment=HERE, others=(later, missing), findings=()))


def cached_earlier() -> DemoResult:
    """One value from this torch's cache, one run now."""
    found = result(demo(), ran("matches"), ran("matches"))
    return replace(found, variants=(replace(found.variants[0], cached=True), found.variants[1]))


def equivalent_torch() -> DemoResult:
    """Cached by another build of the release, which autocast_demo_cache_torch counts as this."""
    found = result(demo(), ran("matches"), ran("matches"), torch="9.9.0+other")
    return replace(found, torch_equivalent=True,
                   variants=tuple(replace(v, cached=True) for v in found.variants))


def own_set() -> DemoResult:
    """This environment's results, answered by its own result set."""
    found = result(demo(), ran("matches"), ran("matches"))
    return replace(found, environment=HERE, source="set", made=MADE, when=WHEN,
                   variants=tuple(replace(v, cached=True) for v in found.variants))


def raises_as_recorded() -> DemoResult:
    return result(demo((("*", "raises NameError"),)), raised(), raised())


def snippet_sets_config() -> DemoResult:
    """A row whose snippet set the varied config itself, and a tolerance that is not bitwise."""
    the_demo = replace(demo(), tolerance=Tolerance(grad=1e-3, output=1e-3))
    verdict, compiled, eager = ran("matches")
    compiled = replace(compiled, config_set=("'off'",))
    return result(the_demo, (verdict, compiled, eager), ran("matches"))


def unrecorded() -> DemoResult:
    return result(demo(expect=()), ran("matches", output="same\n"), ran("matches", output="same\n"))


def compile_facts() -> DemoResult:
    """A demo that varies nothing (``:values: default``) and records what compiling did: one
    row "as written", no config named, and a line of what compiling did, at the page's lines."""
    the_demo = replace(demo(), variants=syntax.parse_values(["default"], "cpu", "bfloat16"),
                       expect=claims((("*", "matches"),)),
                       expect_compile=(Record("*", CompileClaim(graphs=2, breaks=1)),))
    verdict, compiled, eager = ran("matches")
    facts = CompileFacts(graphs=2, breaks=(GraphBreak("Failed to trace builtin operator",
                                                      (Frame(0, 1, "f", "print(x)"),)),),
                         recompiles=(Recompile("c == 1.0", (Frame(0, 1, "f", "x * c"),)),))
    return result(the_demo, (verdict, replace(compiled, compile=facts), eager))


CASES = {"held-and-broken": held_and_broken, "compile-facts": compile_facts,
         "show-record": show_record, "not-run": not_run,
         "other-torch": other_torch, "environments": environments,
         "cached-earlier": cached_earlier, "equivalent-torch": equivalent_torch, "own-set": own_set,
         "raises-as-recorded": raises_as_recorded, "snippet-sets-config": snippet_sets_config,
         "unrecorded": unrecorded}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_judgement_renders_as_its_snapshot(case):
    box = nodes.container()
    box.extend(render.result_nodes(judge(CASES[case](), TORCH), APP))  # type: ignore[arg-type]
    assert_pinned(SNAPSHOTS / f"{case}.txt", box.pformat())
