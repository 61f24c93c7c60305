"""The execution engine across builds: result cache, incremental rebuilds, modes, timings.

One module-scoped history of in-process builds of tests/roots/test-engine (8 runs when
everything executes); every test reads one step of it. ``WorkerPool`` is wrapped to count how
often the worker is started: a step that must not touch torch asserts it never was.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from bs4 import BeautifulSoup
from conftest import AppBuild, app_build, copy_root, verdicts

from sphinx_autocast_demo.engine import execute
from sphinx_autocast_demo.engine.execute import installed_torch, pool_size
from sphinx_autocast_demo.engine.parent import pool
from sphinx_autocast_demo.engine.parent.cpus import cores

MATCH, DIFFER = "\u2713 matches eager", "\u2717 differs"
FAKE_TORCH = "9.9.9+fake"
FRESH_DEMO = """
.. autocast-demo::
   :name: fresh
   :values: off
   :expect: off: matches

   import torch
   u = torch.ones(1, requires_grad=True)
   (u * 5).sum().backward()
"""
CRASH_PAGE = """Crash
=====

.. autocast-demo::
   :name: crash
   :values: off
   :expect: off: matches

   import os
   os._exit(3)
"""


@dataclass
class Step:
    build: AppBuild
    starts: list[int] = field(default_factory=list)  # pool size of each worker started
    pages: dict[str, str] = field(default_factory=dict)  # HTML as this build left it

    def html(self, docname: str) -> BeautifulSoup:
        # Later steps rebuild the same tree: read the snapshot, not the file.
        return BeautifulSoup(self.pages[docname], "html.parser")

    @property
    def runs(self) -> tuple[int, int]:
        """(runs executed, values from the cache), from the numbers the build wrote."""
        return self.build.runs()

    def table(self) -> dict[str, list[str]]:
        pages = {"index": ["first"], "second": ["second", "third"]}
        return {ident: verdicts(self.html(doc), ident) for doc, ids in pages.items() for ident in ids}


def build(src: Path, env: dict[str, str] | None = None, torch: str | None = None,
          **conf: object) -> Step:
    starts: list[int] = []

    class CountingPool(pool.WorkerPool):
        def __init__(self, jobs: int, *args: Any, **kwargs: Any) -> None:
            starts.append(jobs)
            super().__init__(jobs, *args, **kwargs)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(pool, "WorkerPool", CountingPool)
        for name, value in (env or {}).items():
            mp.setenv(name, value)
        if torch is not None:
            # The build learns the torch version from this one call (package metadata, never
            # an import): the cache entries, the environment's fingerprint and the pages all
            # take it from there, so patching it is what an upgrade looks like to it.
            mp.setattr(execute, "installed_torch", lambda: torch)
        # Served by the suite's kept worker where one can (not "force", which starts its own):
        # a pool is made all the same wherever a build needs runs, which is what is counted.
        done = app_build(src, kept=True, **conf)
    out = Path(done.app.outdir)  # type: ignore[attr-defined]
    return Step(done, starts, {p.stem: p.read_text(encoding="utf-8") for p in out.glob("*.html")})


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new), encoding="utf-8")


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    steps: dict[str, Step] = {}
    src = copy_root("engine", tmp_path_factory)
    cache = src / ".autocast_demo_cache"  # (beside conf.py, where every build of it keeps results)
    steps["cold"] = build(src)
    steps["nochange"] = build(src)
    edit(src / "prose.rst", "A page without demos.", "A page without demos, edited.")
    steps["prose"] = build(src)
    edit(src / "second.rst", "t = torch.ones(2, requires_grad=True)",
         "t = torch.full((2,), 3.0, requires_grad=True)")
    edit(src / "second.rst", "tensor([2., 2.])", "tensor([6., 6.])")
    steps["edit"] = build(src)

    # A fresh checkout of the original sources with the first build's cache (a CI cache).
    steps["hits"] = build(copy_root("engine", tmp_path_factory), autocast_demo_cache_dir=str(cache))
    steps["upgrade"] = build(src, torch=FAKE_TORCH)

    # A host without torch renders what the cache has, even from another torch.
    never = copy_root("engine", tmp_path_factory)
    (never / "prose.rst").write_text((never / "prose.rst").read_text() + FRESH_DEMO)
    steps["never"] = build(never, env={"AUTOCAST_DEMO_EXECUTE": "never"},
                           autocast_demo_cache_dir=str(cache))
    steps["force"] = build(src, env={"AUTOCAST_DEMO_EXECUTE": "force"}, autocast_demo_timing_report=True)

    damaged = copy_root("engine", tmp_path_factory)
    (damaged / "crash.rst").write_text(CRASH_PAGE)
    edit(damaged / "index.rst", "   prose\n", "   prose\n   crash\n")
    shared = damaged.parent / "cache"
    shutil.copytree(cache, shared)
    # The entry of the original third demo (the only one that printed this): used below.
    victim = next(p for p in shared.glob("*/*.json") if "tensor([2., 2.])" in p.read_text())
    victim.write_text(victim.read_text()[:40])  # a build killed mid-write by something else
    steps["damaged"] = build(damaged, autocast_demo_cache_dir=str(shared))
    steps["damaged-again"] = build(damaged, autocast_demo_cache_dir=str(shared))
    steps["victim"] = victim  # type: ignore[assignment]
    return steps


def test_cold_build_runs_every_variant_once_with_progress_and_summary(history):
    cold = history["cold"]
    assert cold.build.app.statuscode == 0, cold.build.warnings
    assert cold.runs == (8, 0)  # first: 2 values, second and third: 1 value; compiled + eager
    assert cold.starts == [cores()]  # no autocast_demo_jobs: a run in flight per CPU (issue 48)
    assert "running autocast demos... " in cold.build.status
    assert "index:17 [same_as_forward, compiled]" in cold.build.status  # the current demo
    stats = cold.build.stats
    assert (stats["demos"], stats["checked"], stats["not_checked"]) == (3, 4, 0)
    # The summary says the same numbers.
    assert re.search(rf"autocast-demo: {stats['demos']} demos, {stats['checked']} values checked "
                     rf"\({stats['runs']} runs, {stats['cached']} from the cache\) in \d+\.\d s",
                     cold.build.status)
    assert re.search(r"autocast-demo: slowest: .*index\.rst:17 \(\d+\.\d\d s\)", cold.build.status)
    table = cold.table()
    assert table["first"][0].startswith(DIFFER)  # backward outside autocast: only off matches
    assert (table["first"][1], table["second"], table["third"]) == (MATCH, [MATCH], [MATCH])


def test_no_change_rebuild_reads_nothing_runs_nothing_starts_no_worker(history):
    step = history["nochange"]
    assert "0 added, 0 changed, 0 removed" in step.build.status
    assert step.runs == (0, 0) and step.starts == []
    assert step.build.app.statuscode == 0


def test_editing_a_page_without_demos_starts_no_worker(history):
    step = history["prose"]
    assert "0 added, 1 changed, 0 removed" in step.build.status
    assert step.runs == (0, 0) and step.starts == []


def test_editing_one_demo_runs_only_its_variants(history):
    step = history["edit"]
    assert step.build.app.statuscode == 0, step.build.warnings
    # second.rst is re-read: its untouched demo comes from the cache, the edited one runs
    # compiled + eager under its single value.
    assert step.runs == (2, 1)
    assert step.starts == [cores()]
    third = step.build.result("second", "third")
    assert third.variants[0].compiled.output.strip() == "tensor([6., 6.])"  # d/dt sum(t*t) = 2*3


def test_cache_hits_in_a_fresh_environment_run_nothing_and_render_the_same(history):
    step, cold = history["hits"], history["cold"]
    # Nothing ran. (Every page is new to this environment, so the worker was started while
    # reading, in case the cache could not answer, and killed unused: no assertion on starts.)
    assert step.runs == (0, 4)
    assert step.table() == cold.table()
    assert step.build.app.statuscode == 0
    assert all(vr.cached for vr in step.build.result("index", "first").variants)


def test_another_torch_version_rereads_and_reruns_every_page_with_demos(history):
    step = history["upgrade"]
    # index and second have demos; prose has none and is not read again.
    assert "0 added, 2 changed, 0 removed" in step.build.status
    assert step.runs == (8, 0)
    provenance = step.html("index").select_one(".autocast-demo-provenance").get_text()
    assert f"torch {FAKE_TORCH}" in provenance
    assert step.build.result("second", "second").torch_version == FAKE_TORCH


def test_never_mode_renders_from_the_cache_and_warns_for_what_is_missing(history):
    step, cold = history["never"], history["cold"]
    assert step.starts == []
    assert step.runs == (0, 4)
    # Entries written under another torch are still shown, say which torch made them, and
    # are not presented as checked: no mark of a verdict, no mark of a record that holds.
    assert step.build.result("index", "first").torch_version == FAKE_TORCH
    stale = f" with torch {FAKE_TORCH} (cached; not checked with torch {installed_torch()})"
    # first and second were run again by the upgrade; third's code was edited there, so its
    # entry is still the cold build's, of the installed torch: checked.
    assert step.table() == {ident: cells if ident == "third" else
                            [cell.split(" ", 1)[1] + stale for cell in cells]
                            for ident, cells in cold.table().items()}
    assert step.build.result("second", "third").torch_version == installed_torch()
    first = step.html("index").find(id="first")
    assert "\u2713" not in first.get_text() and "\u2717" not in first.get_text()
    assert first.select_one(".autocast-demo-provenance").get_text().startswith(
        f"Rendered from results of torch {FAKE_TORCH} cached earlier, not checked with the "
        f"installed torch {installed_torch()}")
    prose = Path(step.build.app.srcdir) / "prose.rst"
    assert (f"{prose}:6: WARNING: value off: not run: autocast_demo_execute is 'never' and the "
            "cache has no result for it [autocast_demo.not-run]") in step.build.warnings
    assert verdicts(step.html("prose"), "fresh") == [
        "\u2014 not run: execution is off and nothing is cached"]
    # Documented: a missing result is a warning, not a failure (-W makes it one).
    assert step.build.app.statuscode == 0


def test_force_mode_reruns_everything_and_writes_the_timing_table(history):
    step = history["force"]
    assert step.runs == (8, 0) and step.starts == [cores()]
    out = Path(step.build.app.outdir)
    rows = json.loads((out / "autocast_demo_timings.json").read_text())
    assert sorted(Path(r["demo"]).name for r in rows) == ["index.rst:17", "second.rst:13",
                                                          "second.rst:4"]
    assert all(r["seconds"] > 0 for r in rows)
    assert [r["seconds"] for r in rows] == sorted((r["seconds"] for r in rows), reverse=True)
    text = (out / "autocast_demo_timings.txt").read_text().splitlines()
    assert text[0].split() == ["demo", "seconds"] and text[-1].startswith("total")
    assert len(text) == 2 + 3 + 1


def test_a_damaged_entry_is_run_again_with_a_warning_and_failures_are_not_cached(history):
    step, again = history["damaged"], history["damaged-again"]
    warnings = [w for w in step.build.warnings.splitlines() if "unreadable cache entry" in w]
    assert len(warnings) == 1 and "[autocast_demo.cache]" in warnings[0]
    assert str(history["victim"]) in warnings[0]
    # The damaged variant and the crashing demo run; the 3 other values come from the cache.
    assert step.runs == (4, 3)
    assert "the compiled run died: the process exited with status 3" in step.build.warnings
    assert step.build.app.statuscode == 1
    # Next build: only the crash runs again (the failing page is re-read, its result was
    # never stored); the damaged entry was replaced by a whole one.
    assert again.runs == (2, 0)
    assert "unreadable cache entry" not in again.build.warnings
    json.loads(history["victim"].read_text())


def test_pool_size_follows_conf_else_the_cpus_the_build_may_use():
    assert pool_size(conf_jobs=3, available=2) == 3  # an explicit value wins
    assert pool_size(conf_jobs=1, available=8) == 1
    assert pool_size(conf_jobs=0, available=2) == 2  # by default: every CPU, with or without -j
    assert pool_size(conf_jobs=0, available=0) == 1
    assert installed_torch() != "not installed"
