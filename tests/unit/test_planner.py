"""planner.py without torch or a build: what a build runs and what the cache or a result set
answers, from one made-up build to the next (each "build" is a new Planner over the same
cache); what is kept of a run, and what is said when the cache cannot be read or written.
Real builds over a cache: tests/build/test_imported_files.py, tests/build/test_faults_cache.py."""

from __future__ import annotations

import errno
import os
import time
from dataclasses import replace
from types import SimpleNamespace

import pytest
from fakes import TORCH, Logger, demo, raised, ran, settings

from sphinx_autocast_demo.core.model import Environment, VariantResult
from sphinx_autocast_demo.core.state import DocState, FileStamp
from sphinx_autocast_demo.plan import environments, results
from sphinx_autocast_demo.plan import planner as planner_module
from sphinx_autocast_demo.plan.cache import DEFAULT_DIR, Entry
from sphinx_autocast_demo.plan.environments import NamedSets
from sphinx_autocast_demo.plan.keys import torch_variables
from sphinx_autocast_demo.plan.planned import Stats
from sphinx_autocast_demo.plan.planner import Planner
from sphinx_autocast_demo.plan.setfiles import SetProblem
from sphinx_autocast_demo.read import syntax

STATE = DocState()  # no setups: a run's code is the demo's own
#: The made-up demo with a value it does not name, run to see that it can fail.
PROBING = replace(demo(), probes=syntax.parse_values(["autocast"], "cpu", "bfloat16"))


@pytest.fixture
def logged(monkeypatch) -> Logger:
    """What planner.py's Sphinx logger was told."""
    found = Logger()
    monkeypatch.setattr(planner_module, "logger", found)
    return found


@pytest.fixture(autouse=True)
def no_torch_variables(monkeypatch):
    """This machine's TORCH_*, OMP_NUM_THREADS... would go into every cache key (not a set's)."""
    for name in torch_variables(os.environ):
        monkeypatch.delenv(name)


@pytest.fixture
def helper(tmp_path):
    """A module of the writer's beside conf.py, which the made-up runs imported."""
    path = tmp_path / "docs" / "helper.py"
    path.parent.mkdir()
    path.write_text("SCALE = 1\n")
    return path


def build(tmp_path, torch: str = TORCH, sets=None, source: str = "", **changes: object) -> Planner:
    """A new build of the docs in ``tmp_path / "docs"``, its cache in ``tmp_path / "cache"``
    (``source``: its torch runs from a source tree with these files, keys.torch_source)."""
    (tmp_path / "docs").mkdir(exist_ok=True)
    app = SimpleNamespace(confdir=str(tmp_path / "docs"), doctreedir=str(tmp_path / "doctrees"))
    changes.setdefault("cache_dir", str(tmp_path / "cache"))
    made = Planner(app, settings(**changes), torch, Stats(), sets, source)  # type: ignore[arg-type]
    # The files the tests write are older than the build (one written during a build is never
    # current: tests/unit/test_stamps.py).
    made.stamps.began = time.time_ns() + 10 * 10**9
    return made


def run_and_store(planner: Planner, the_demo=None, outcomes=("matches", "differs"),
                  imports=None) -> list:
    """Plan ``the_demo``, answer what is left to run with ``outcomes`` (a probe: "error"), and
    store it; ``imports``: what each value's two runs had (default: none)."""
    the_demo = the_demo or demo()
    planned = planner.plan([(the_demo, STATE)])
    for item in planned:
        if item.result is None:
            outcome = outcomes[the_demo.variants.index(item.variant)] \
                if item.variant in the_demo.variants else "error"
            item.result = VariantResult(item.variant, *ran(outcome))
            planner.store(item, imports if imports is not None else [[], []])
    planner.after_runs("")
    return planned


def page(planner: Planner, the_demo=None) -> DocState:
    """The page of ``the_demo`` as ``planner``'s build left it: its results' stamps kept."""
    the_demo = the_demo or demo()
    return DocState(inputs={the_demo.ident: planner.inputs_of(the_demo)})


def test_a_stored_result_is_served_by_the_next_build_without_a_run(tmp_path, helper):
    first = build(tmp_path)
    assert first.needs_run(demo(), STATE)
    run_and_store(first, imports=[[str(helper)], []])
    assert first.stats.cached == 0
    assert [stamp.path for stamp in first.inputs_of(demo())] == ["helper.py"]

    again = build(tmp_path)
    assert not again.needs_run(demo(), STATE) and not again.inputs_changed(page(first))
    planned = again.plan([(demo(), STATE)])
    assert [(i.result.verdict.outcome, i.result.cached) for i in planned] == [
        ("matches", True), ("differs", True)]
    assert again.stats.cached == 2
    # The page is read again when the file its results stand for changes.
    assert list(again.dependencies()) == [("index", str(helper))]
    shown, = again.results(planned)
    assert (shown.source, shown.torch_version, shown.torch_equivalent) == ("build", TORCH, False)


def test_an_edited_file_makes_its_demo_run_again(tmp_path, helper, logged):
    first = build(tmp_path)
    run_and_store(first, imports=[[str(helper)], [str(helper)]])
    helper.write_text("SCALE = 2\n")
    again = build(tmp_path)
    assert again.needs_run(demo(), STATE)
    assert again.inputs_changed(page(first))  # Sphinx's file times may not see it (cp -p)
    assert [item.result for item in again.plan([(demo(), STATE)])] == [None, None]
    assert again.stats.cached == 0
    assert logged.texts("verbose") == [
        f"/docs/index.rst:1: [{name}] not from the cache: helper.py, which its runs imported, changed"
        for name in ("same_as_forward", "off")]


def test_whether_a_page_is_read_again_reads_no_cache_entry(tmp_path, helper, monkeypatch):
    # Issue 48: an unchanged build read every cached result to learn which files it stands
    # for; the page's own stamps decide it (an entry damaged since is met, and said, when the
    # page is read for another reason: tests/unit/test_planner.py, unreadable entry).
    first = build(tmp_path)
    run_and_store(first, imports=[[str(helper)], [str(helper)]])
    again = build(tmp_path)

    def read(key):
        raise AssertionError("read the cache")

    monkeypatch.setattr(again.cache, "_data", read)
    assert not again.inputs_changed(page(first))
    helper.write_text("SCALE = 2\n")
    later = build(tmp_path)
    monkeypatch.setattr(later.cache, "_data", read)
    assert later.inputs_changed(page(first))


def test_a_page_is_read_again_when_another_build_stored_newer_results_for_it(tmp_path, helper):
    # Two builds sharing the cache (an HTML and a PDF directory): the second ran the demo again
    # after its helper changed and stored that result under the same key. The first page still
    # shows the old result: its stamps, not the cache's (now current), say it is stale.
    html = build(tmp_path)
    run_and_store(html, imports=[[str(helper)], [str(helper)]])
    helper.write_text("SCALE = 2\n")
    pdf = build(tmp_path)
    ran_again = run_and_store(pdf, imports=[[str(helper)], [str(helper)]])
    assert not any(item.result.cached for item in ran_again)  # (stale for it: it ran)
    assert pdf.inputs_of(demo()) != html.inputs_of(demo())
    later = build(tmp_path)
    assert not later.needs_run(demo(), STATE)  # the cache holds the current result...
    assert later.inputs_changed(page(html))  # ...which the first page does not show
    assert not later.inputs_changed(page(pdf))
    served = later.plan([(demo(), STATE)])
    assert all(item.result.cached for item in served) and later.inputs_of(demo()) == pdf.inputs_of(demo())


def test_a_result_whose_runs_could_not_tell_their_files_runs_again_but_never_mode_shows_it(tmp_path, helper):
    first = build(tmp_path)
    run_and_store(first, imports=[None, [str(helper)]])
    assert first.stamps.unkept.startswith("/docs/index.rst:1 (its runs could not tell")
    assert first.inputs_of(demo()) == ()  # (no stamp was kept)
    again = build(tmp_path)
    assert again.needs_run(demo(), STATE)
    assert not again.inputs_changed(page(first))  # none is known to have changed
    assert [item.result for item in again.plan([(demo(), STATE)])] == [None, None]
    # "never" runs nothing: there only a known change stops a result.
    planned = build(tmp_path, execute="never").plan([(demo(), STATE)])
    assert [item.result.verdict.outcome for item in planned] == ["matches", "differs"]


@pytest.mark.parametrize("first, second, served", [
    (("2.16.0", "exact"), ("2.16.0+cpu", "exact"), False),
    (("2.16.0a0+git1", "release"), ("2.16.0a0+git2", "release"), True),
    (("2.16.0", "release"), ("2.17.0", "release"), False),
    # A label is compared as it was stored, whatever the versions.
    (("2.16.0", "nightly-1"), ("2.17.0", "nightly-1"), True),
    (("2.16.0", "nightly-1"), ("2.16.0", "nightly-2"), False),
], ids=["exact", "same-release", "other-release", "same-label", "other-label"])
def test_a_result_of_another_torch_is_served_only_as_cache_torch_counts_it(tmp_path, first, second, served):
    run_and_store(build(tmp_path, torch=first[0], cache_torch=first[1]))
    again = build(tmp_path, torch=second[0], cache_torch=second[1])
    assert again.needs_run(demo(), STATE) is not served
    planned = again.plan([(demo(), STATE)])
    assert all((item.result is not None) is served for item in planned)
    if served:  # checked as this torch, and named as the one that made it
        shown, = again.results(planned)
        assert (shown.torch_version, shown.torch_equivalent) == (first[0], True)


@pytest.mark.parametrize(("policy", "served"), [("exact", False), ("release", True), ("nightly-1", True)])
def test_a_torch_run_from_its_source_tree_with_other_files_is_another_torch_only_to_exact(
        tmp_path, policy, served):
    """A torch built as 2.16.0a0+gitabc whose modules were edited since: "exact" runs again,
    as for another version (the page is read again: the fingerprint), "release" and a label
    serve the result, as they do a build of the same release."""
    first = build(tmp_path, torch="2.16.0a0+gitabc", source="f00d", cache_torch=policy)
    run_and_store(first)
    same = build(tmp_path, torch="2.16.0a0+gitabc", source="f00d", cache_torch=policy)
    assert not same.needs_run(demo(), STATE)
    edited = build(tmp_path, torch="2.16.0a0+gitabc", source="beef", cache_torch=policy)
    assert edited.needs_run(demo(), STATE) is not served
    assert (edited.fingerprint() != first.fingerprint()) is not served
    installed = build(tmp_path, torch="2.16.0a0+gitabc", cache_torch=policy)  # (now a wheel's)
    assert not installed.needs_run(demo(), STATE)  # (the version is what it says)


def test_a_result_of_another_python_runs_again_but_never_mode_shows_it(tmp_path):
    first = build(tmp_path)
    for item in run_and_store(first):
        first.cache.put(item.key, replace(first.cache.get(item.key), python_version="3.0.0"))
    again = build(tmp_path)
    assert again.needs_run(demo(), STATE)
    assert [item.result for item in again.plan([(demo(), STATE)])] == [None, None]
    never = build(tmp_path, execute="never")
    assert [item.result.cached for item in never.plan([(demo(), STATE)])] == [True, True]


def test_force_mode_runs_everything_whatever_the_cache_holds(tmp_path):
    run_and_store(build(tmp_path))
    assert not build(tmp_path).needs_run(demo(), STATE)
    forced = build(tmp_path, execute="force")
    assert forced.needs_run(demo(), STATE)
    assert [item.result for item in forced.plan([(demo(), STATE)])] == [None, None]
    assert forced.stats.cached == 0


def test_never_mode_shows_another_torchs_result_and_names_that_torch(tmp_path):
    run_and_store(build(tmp_path, torch="2.13.0"))
    never = build(tmp_path, execute="never")
    assert not never.needs_run(demo(), STATE)
    planned = never.plan([(demo(), STATE)])
    assert [item.result.cached for item in planned] == [True, True]
    shown, = never.results(planned)
    assert (shown.torch_version, shown.torch_equivalent) == ("2.13.0", False)
    assert never.storing is None  # nothing runs: the cache's place is not even checked


def test_never_mode_says_why_a_value_has_no_result(tmp_path, helper):
    never = build(tmp_path, execute="never")
    first, _ = never.plan([(demo(), STATE)])
    assert first.result.compiled.not_run == "never"
    assert first.result.compiled.detail == (
        "not run: autocast_demo_execute is 'never' and the cache has no result for it")
    assert never.storing is None  # nothing runs: a read-only host is not told it cannot store

    run_and_store(build(tmp_path), imports=[[str(helper)], [str(helper)]])
    helper.write_text("SCALE = 2\n")
    first, _ = build(tmp_path, execute="never").plan([(demo(), STATE)])
    assert first.result.compiled.not_run == "stale"
    assert first.result.compiled.detail == (
        "not run: autocast_demo_execute is 'never' and its cached result is stale: helper.py, "
        "which its runs imported, changed")


def test_probes_are_planned_after_every_demos_values_only_where_demos_run_and_kept_apart(tmp_path):
    other = replace(PROBING, ident="e")
    planned = build(tmp_path).plan([(PROBING, STATE), (other, STATE)])
    assert [(item.demo.ident, item.variant.name) for item in planned] == [
        ("d", "same_as_forward"), ("d", "off"), ("e", "same_as_forward"), ("e", "off"),
        ("d", "autocast"), ("e", "autocast")]
    never = build(tmp_path, execute="never").plan([(PROBING, STATE)])
    assert [item.variant.name for item in never] == ["same_as_forward", "off"]
    # A demo's result holds its probes apart from its values, which the page shows.
    planner = build(tmp_path)
    shown, = planner.results(run_and_store(planner, PROBING))
    assert [vr.variant.name for vr in shown.variants] == ["same_as_forward", "off"]
    assert [(vr.variant.name, vr.verdict.outcome) for vr in shown.probes] == [("autocast", "error")]


def test_an_unreadable_entry_runs_again_and_is_said_at_the_demo(tmp_path, logged):
    planner = build(tmp_path)
    key = planner.key(demo(), [demo().code], demo().variants[0])
    path = tmp_path / "cache" / key[:2] / f"{key}.json"
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x80\x04not json")
    assert planner.needs_run(demo(), STATE)
    first, _ = planner.plan([(demo(), STATE)])
    assert first.result is None
    (level, text, kwargs), = logged.lines
    assert level == "warning" and text.startswith(f"unreadable cache entry, running again: {path}: ")
    assert kwargs == {"type": "autocast_demo", "subtype": "cache", "location": "/docs/index.rst:1"}

    never = build(tmp_path, execute="never")
    first, _ = never.plan([(demo(), STATE)])
    assert logged.texts("warning")[-1].startswith(
        f"unreadable cache entry, not run (autocast_demo_execute is 'never'): {path}: ")
    assert first.result.compiled.not_run == "never"


def test_a_failure_of_a_pages_own_value_is_not_kept_but_a_probes_is(tmp_path):
    first = build(tmp_path)
    run_and_store(first, PROBING, outcomes=("error", "matches"))
    again = build(tmp_path)
    planned = again.plan([(PROBING, STATE)])
    # The page says the failure and runs it again; a probe's, never shown, would cost its
    # timeout at every read of the page.
    assert [(i.variant.name, i.result and i.result.verdict.outcome) for i in planned] == [
        ("same_as_forward", None), ("off", "matches"), ("autocast", "error")]


def test_a_run_that_raised_is_kept_unless_it_could_not_import(tmp_path):
    first = build(tmp_path)
    planned = first.plan([(demo(), STATE)])
    for item, kind in zip(planned, ("NameError", "ImportError"), strict=True):
        item.result = VariantResult(item.variant, *raised(kind))
        first.store(item, [[], []])
    again = build(tmp_path).plan([(demo(), STATE)])
    # (a module that is not there yet: nothing to stamp for it, it runs again)
    assert [item.result and item.result.verdict.text for item in again] == ["raises NameError", None]


def test_a_failed_probe_that_could_not_tell_its_files_is_kept_with_its_demos(tmp_path, helper):
    first = build(tmp_path)
    planned = first.plan([(PROBING, STATE)])
    for item in planned[:2]:
        item.result = VariantResult(item.variant, *ran("matches"))
        first.store(item, [[str(helper)], [str(helper)]])
    probe = planned[2]
    probe.result = VariantResult(probe.variant, *ran("error"))
    first.store(probe, [None, None])  # stopped at its timeout: it could not say
    assert first.cache.get(probe.key) is None  # not before every run is stored
    first.after_runs("")
    kept = first.cache.get(probe.key)
    assert kept is not None and [stamp.path for stamp in kept.files] == ["helper.py"]


def test_a_failed_probe_is_not_kept_where_another_run_of_its_demo_could_not_tell(tmp_path, helper):
    first = build(tmp_path)
    planned = first.plan([(PROBING, STATE)])
    for item, imports in zip(planned[:2], ([None, [str(helper)]], [[str(helper)], []]), strict=True):
        item.result = VariantResult(item.variant, *ran("matches"))
        first.store(item, imports)
    probe = planned[2]
    probe.result = VariantResult(probe.variant, *ran("error"))
    first.store(probe, [None, None])
    first.after_runs("")
    assert first.cache.get(probe.key) is None


def test_a_full_disk_stops_the_storing_and_is_said_once_at_the_setting(tmp_path, logged, monkeypatch):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "conf.py").write_text(
        "extensions = ['sphinx_autocast_demo']\nautocast_demo_cache_dir = 'c'\n")
    planner = build(tmp_path)
    tried = []

    def full(key, entry):
        tried.append(key)
        raise OSError(errno.ENOSPC, "No space left on device", str(tmp_path / "cache" / "ab"))

    monkeypatch.setattr(planner.cache, "put", full)
    run_and_store(planner)
    assert planner.storing is False and len(tried) == 1  # the second is not tried
    (level, text, kwargs), = logged.lines
    assert level == "warning" and text.startswith(
        f"autocast-demo: cannot store results in the cache directory {tmp_path / 'cache'} "
        f"(No space left on device: {tmp_path / 'cache' / 'ab'}): ")
    assert kwargs["location"] == f"{tmp_path / 'docs' / 'conf.py'}:2"


def test_a_result_the_cache_cannot_take_still_keeps_its_inputs_with_its_page(tmp_path, helper):
    # The page is read again when its helper changes even though the cache, which could not
    # be made, holds nothing of it (0.6.2 kept showing the old result).
    (tmp_path / "file").write_text("")
    first = build(tmp_path, cache_dir=str(tmp_path / "file" / "cache"))
    run_and_store(first, imports=[[str(helper)], [str(helper)]])
    assert first.storing is False
    assert [stamp.path for stamp in first.inputs_of(demo())] == ["helper.py"]
    assert not build(tmp_path).inputs_changed(page(first))
    helper.write_text("SCALE = 2\n")
    assert build(tmp_path).inputs_changed(page(first))


def test_a_cache_that_cannot_be_made_is_said_once_before_anything_runs(tmp_path, logged):
    (tmp_path / "file").write_text("")
    planner = build(tmp_path, cache_dir=str(tmp_path / "file" / "cache"))
    assert planner.storing is None
    planner.plan([(demo(), STATE)])
    assert planner.storing is False
    planner.plan([(replace(demo(), ident="e"), STATE)])
    assert len(logged.texts("warning")) == 1
    assert logged.texts("warning")[0].startswith(
        f"autocast-demo: cannot store results in the cache directory {tmp_path / 'file' / 'cache'} (")


def test_a_cache_kept_in_the_doctree_directory_is_said_as_information(tmp_path, logged):
    # Not a warning: a -W build of a read-only checkout that passed must still pass.
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / DEFAULT_DIR).write_text("")
    planner = build(tmp_path, cache_dir="")
    planner.plan([(demo(), STATE)])
    assert logged.texts("warning") == []
    info, = logged.texts("info")
    assert info.startswith(f"autocast-demo: results are kept in this build's doctree directory "
                           f"({tmp_path / 'doctrees' / 'autocast_demo_cache'}), because "
                           f"{tmp_path / 'docs' / DEFAULT_DIR} is not a directory: ")


def test_torchs_variables_key_this_machines_cache_but_not_a_result_set(tmp_path, monkeypatch):
    plain = build(tmp_path)
    monkeypatch.setenv("TORCH_COMPILE_DISABLE", "1")
    disabled = build(tmp_path)
    variant = demo().variants[0]
    assert disabled.key(demo(), [demo().code], variant) != plain.key(demo(), [demo().code], variant)
    assert disabled.set_key(demo(), [demo().code], variant) == plain.set_key(demo(), [demo().code], variant)
    assert "TORCH_COMPILE_DISABLE=1" in disabled.fingerprint()
    assert "TORCH_COMPILE_DISABLE=1" not in plain.fingerprint()


def write_set(directory, label: str, planner: Planner, outcome: str = "matches", files=None,
              command: str = "tox -e results") -> None:
    """A result set of ``label`` holding the made-up demo's values as ``planner`` keys them."""
    entries = {planner.set_key(demo(), [demo().code], variant): Entry(
        TORCH, *ran(outcome), python_version=planner.python, files=files)
        for variant in demo().variants}
    environment = Environment(label, TORCH, planner.python)
    results.write(directory, environment, results.RunInfo("", command, "2026-11-30"), entries)


def named(*directories, said=None) -> NamedSets:
    """The sets of ``directories`` as a build names them; a problem fails the test unless
    ``said`` (a list) collects it."""
    def fail(problem: SetProblem) -> None:
        if said is None:
            raise AssertionError(problem)
        said.append(str(problem))
    return NamedSets(list(directories), fail)


def test_the_fingerprint_changes_with_the_result_sets_and_this_environments_label(tmp_path):
    sets_dir = tmp_path / "sets"
    keyer = build(tmp_path)
    write_set(sets_dir, f"torch {TORCH}", keyer, command="tox -e here")
    sets = named(sets_dir)
    planner = build(tmp_path, sets=sets)
    fingerprint = planner.fingerprint()
    assert planner.here.label == f"torch {TORCH}"
    assert "loaded" not in sets.__dict__  # (the files' bytes, never the records, nor for here)
    assert build(tmp_path, sets=named(sets_dir)).fingerprint() == fingerprint  # unchanged sets
    assert build(tmp_path, sets=sets, environment="torch 2.16.0").fingerprint() != fingerprint
    assert build(tmp_path).fingerprint() != fingerprint  # no set at all
    write_set(sets_dir, "torch 2.16.0", keyer, command="tox -e later")  # another environment
    other = build(tmp_path, sets=named(sets_dir)).fingerprint()
    assert other != fingerprint
    write_set(sets_dir, "torch 2.16.0", keyer, command="tox -e later, again")  # another run of it
    assert build(tmp_path, sets=named(sets_dir)).fingerprint() not in (fingerprint, other)


def test_a_set_that_cannot_be_read_is_said_and_marks_the_fingerprint(tmp_path):
    """A directory that is not there is said at once; a set that is there and not readable
    when a page is planned, and then its fingerprint differs from the one an unchanged next
    build computes before reading: that build reads its pages again and says it again."""
    said: list[str] = []
    gone = named(tmp_path / "none", said=said)
    assert said == [f"{tmp_path / 'none'}: no such directory"] and gone.loaded == {}
    assert gone.fingerprint()[-1] == "unreadable"
    write_set(tmp_path / "sets", "torch 2.16.0", build(tmp_path))
    (environment,) = (tmp_path / "sets").glob("*/environment.json")
    environment.write_text("{not json")
    broken = named(tmp_path / "sets", said=said)
    before = broken.fingerprint()
    assert "unreadable" not in before and len(said) == 1
    assert broken.loaded == {}
    assert said[1].startswith(f"{environment.parent}: not a readable result set")
    assert broken.fingerprint() == (*before, "unreadable")
    assert named(tmp_path / "sets", said=said).fingerprint() == before  # the next build's


def test_in_never_mode_this_environments_own_set_answers_and_names_what_it_lacks(tmp_path):
    sets_dir = tmp_path / "sets"
    write_set(sets_dir, f"torch {TORCH}", build(tmp_path), outcome="differs")
    never = build(tmp_path, execute="never", sets=named(sets_dir))
    edited = replace(demo(), ident="e", code=replace(demo().code, text="x = 2"))  # not in the set
    shown, lacking = never.results(never.plan([(demo(), STATE), (edited, STATE)]))
    assert [vr.verdict.outcome for vr in shown.variants] == ["differs", "differs"]
    assert (shown.source, shown.made, shown.when) == ("set", "made on 2026-11-30 by tox -e results",
                                                      "on 2026-11-30")
    assert [vr.compiled.detail for vr in lacking.variants] == [f"no result from torch {TORCH}"] * 2
    assert lacking.source == "build"
    missing, every = never.missing()
    assert missing == {f"torch {TORCH}": ["/docs/index.rst:1 [same_as_forward]", "/docs/index.rst:1 [off]"]}
    assert list(every) == [f"torch {TORCH}"]


def test_outside_never_mode_the_own_set_answers_only_what_says_its_files(tmp_path, helper, monkeypatch):
    sets_dir = tmp_path / "sets"
    keyer = build(tmp_path)
    write_set(sets_dir, f"torch {TORCH}", keyer)  # made elsewhere: no files, the demo runs here
    planned = build(tmp_path, sets=named(sets_dir)).plan([(PROBING, STATE)])
    assert [item.result for item in planned] == [None, None, None]

    stamped = (FileStamp("helper.py", keyer.stamps.digest(str(helper))),)
    write_set(tmp_path / "stamped", f"torch {TORCH}", keyer, files=stamped)
    planner = build(tmp_path, sets=named(tmp_path / "stamped"))
    planned = planner.plan([(PROBING, STATE)])
    # Answered by the set: its probes are not checked here.
    assert [(i.variant.name, i.result.cached) for i in planned] == [("same_as_forward", True), ("off", True)]
    assert planner.results(planned)[0].source == "set"
    # A run under torch variables of its own (in its cache key, never in the set's) runs.
    monkeypatch.setenv("TORCH_COMPILE_DISABLE", "1")
    planned = build(tmp_path, sets=named(tmp_path / "stamped")).plan([(demo(), STATE)])
    assert [item.result for item in planned] == [None, None]


def test_the_workers_device_replaces_the_guess_made_without_torch(tmp_path, monkeypatch):
    monkeypatch.setattr(environments, "machine_device", lambda: "cpu")  # whatever this machine has
    planner = build(tmp_path)
    guessed = planner.here
    planner.after_runs("")  # no worker started: the guess stays
    assert planner.here == guessed
    planner.after_runs("cuda")
    assert planner.here == replace(guessed, device="cuda")
