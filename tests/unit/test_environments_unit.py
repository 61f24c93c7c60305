"""environments.py without torch or a build: this build's environment, which result set is its
own and which are the others' columns, what a gap in a set is, which build shows in place of
one that ran nothing, and how ``autocast_demo_shard`` splits the demos. Real builds with result
sets: tests/build/test_environments.py."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from fakes import TORCH, Logger, demo, ran, settings

from sphinx_autocast_demo.core.config import MAX_SHARDS
from sphinx_autocast_demo.core.model import DemoResult, Environment, VariantResult, skipped
from sphinx_autocast_demo.core.state import DocState
from sphinx_autocast_demo.plan import environments, results
from sphinx_autocast_demo.plan.cache import Entry
from sphinx_autocast_demo.plan.environments import Environments, machine_device
from sphinx_autocast_demo.plan.planned import Planned

HERE = f"torch {TORCH}"  # this build's label when conf.py names none
OWN = Environment(HERE, TORCH, "3.11.7")  # ... and the environment of a set it wrote
AT = "/docs/index.rst:1"  # where the made-up demo is
LATER = Environment("torch 2.16.0", "2.16.0", "3.11.7")
STATE = DocState()


def environments_of(sets=None, torch: str = TORCH, **changes: object) -> Environments:
    """With ``sets`` (label -> set) as a build's named sets read them (``NamedSets.loaded``)."""
    named = SimpleNamespace(loaded=sets) if sets is not None else None
    return Environments(settings(**changes), torch, "3.11.7", named)  # type: ignore[arg-type]


def entry(outcome: str = "matches", seconds: float = 0.0) -> Entry:
    verdict, compiled, eager = ran(outcome)
    return Entry(LATER.torch, verdict, replace(compiled, seconds=seconds), replace(eager, seconds=seconds))


def write(directory: Path, environment: Environment, entries: dict[str, Entry]) -> results.EnvironmentSet:
    """``environment``'s result set in ``directory``, as a build reads it."""
    results.write(directory, environment, results.RunInfo("", "tox -e results", "2026-11-30"), entries)
    return results.load([directory])[environment.label]


def key(the_demo, codes, variant) -> str:
    """A result's key, as Planner.set_key gives one: here the demo and the value."""
    return f"{the_demo.ident}-{variant.name}"


def planned(the_demo=None) -> list[Planned]:
    """The made-up demo's values as the planner plans them, keyed by :func:`key`."""
    the_demo = the_demo or demo()
    return [Planned(the_demo, v, (the_demo.code,), "cache-" + key(the_demo, (), v),
                    set_key=key(the_demo, (), v)) for v in the_demo.variants]


def test_this_environment_is_named_by_its_torch_unless_conf_py_names_it():
    here = environments_of().here
    assert (here.label, here.torch, here.python) == (HERE, TORCH, "3.11.7")
    assert environments_of(environment="torch 9.9 on H100").here.label == "torch 9.9 on H100"


def test_without_torch_the_device_is_the_cpu_and_not_looked_for(monkeypatch):
    monkeypatch.setattr(environments, "machine_device", lambda: "cuda")
    assert environments_of(torch="not installed").here.device == "cpu"
    assert environments_of().here.device == "cuda"  # with torch: the guess made without it


@pytest.mark.parametrize("torch_found, cuda_library, nvidia_device, device", [
    (False, False, True, "cpu"),
    (True, False, True, "cpu"),  # a CPU build of torch on a machine with a GPU
    (True, True, False, "cpu"),  # a CUDA build where there is no NVIDIA device
    (True, True, True, "cuda"),
])
def test_the_device_guessed_without_importing_torch(tmp_path, monkeypatch, torch_found, cuda_library,
                                                     nvidia_device, device):
    package = tmp_path / "torch"
    (package / "lib").mkdir(parents=True)
    (package / "lib" / "libtorch_cpu.so").write_bytes(b"")
    if cuda_library:
        (package / "lib" / "libtorch_cuda.so").write_bytes(b"")
    spec = SimpleNamespace(submodule_search_locations=[str(package)]) if torch_found else None
    real_find, real_exists = importlib.util.find_spec, Path.exists
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: spec if name == "torch" else real_find(name, *a))
    monkeypatch.setattr(Path, "exists", lambda self, *a, **k: nvidia_device if str(self) == "/dev/nvidiactl"
                        else real_exists(self, *a, **k))
    assert machine_device() == device


def test_this_environments_own_set_is_kept_apart_from_the_others(tmp_path):
    own = write(tmp_path / "a", OWN, {"d-off": entry()})
    later = write(tmp_path / "b", LATER, {"d-off": entry()})
    envs = environments_of({HERE: own, LATER.label: later})
    assert envs.own_set is own and envs.sets == {LATER.label: later}
    assert envs.every_set() == {LATER.label: later, HERE: own}
    named = environments_of({HERE: own, LATER.label: later}, environment=LATER.label)
    assert named.own_set is later and named.sets == {HERE: own}
    # Another environment's set never answers for this one's.
    assert environments_of({LATER.label: later}).own(demo(), "d-off", lambda found: True) is None


def test_an_expected_environment_no_set_holds_has_an_empty_one(tmp_path):
    later = write(tmp_path, LATER, {"d-off": entry()})
    envs = environments_of({LATER.label: later},
                           environments=(LATER.label, "torch 2.17.0", "", HERE))
    # Not this build's own (it counts when it runs), nor an empty label.
    assert list(envs.sets) == [LATER.label, "torch 2.17.0"]
    assert envs.sets[LATER.label] is later
    expected = envs.sets["torch 2.17.0"]
    assert not expected.found and expected.environment == Environment.only_named("torch 2.17.0")


def test_the_own_set_answers_only_with_a_usable_entry_and_records_the_demo(tmp_path):
    own = write(tmp_path, OWN, {"d-off": entry()})
    envs = environments_of({HERE: own})
    assert envs.own(demo(), "d-off", lambda found: False) is None
    assert not envs.from_own("index", "d") and envs.answered_by("index", "d") is None
    assert envs.own(demo(), "d-same_as_forward", lambda found: True) is None  # not in the set
    assert envs.own(demo(), "d-off", lambda found: found.verdict.outcome == "matches") == entry()
    assert envs.from_own("index", "d") and envs.answered_by("index", "d") is own
    assert not envs.from_own("index", "other")


def test_a_gap_is_a_value_not_run_and_each_is_named_under_its_environment():
    envs = environments_of()
    off = demo().variants[1]
    gap = envs.gap("torch 2.17.0", demo(), off)
    assert gap == skipped(off, "no result from torch 2.17.0", why="missing")
    envs.gap("torch 2.17.0", demo(), demo().variants[0])
    envs.gap(LATER.label, demo(), off)
    assert envs.missing == {"torch 2.17.0": [f"{AT} [off]", f"{AT} [same_as_forward]"],
                            LATER.label: [f"{AT} [off]"]}


def test_each_other_environment_is_a_column_of_what_its_set_holds(tmp_path):
    later = write(tmp_path, LATER, {"d-same_as_forward": entry("differs"), "d-off": entry("matches")})
    envs = environments_of({LATER.label: later}, environments=("torch 2.17.0",))
    found, expected = envs.elsewhere(planned())
    assert [(vr.variant.name, vr.verdict.outcome, vr.cached) for vr in found.variants] == [
        ("same_as_forward", "differs", True), ("off", "matches", True)]
    assert (found.environment, found.torch_version, found.source) == (LATER, "2.16.0", "set")
    assert (found.made, found.when) == ("made on 2026-11-30 by tox -e results", "on 2026-11-30")
    assert [vr.compiled.not_run for vr in expected.variants] == ["missing", "missing"]
    assert (expected.source, expected.made, expected.when) == ("missing", "made", "")
    assert envs.missing == {"torch 2.17.0": [f"{AT} [same_as_forward]", f"{AT} [off]"]}


def test_a_set_is_read_by_the_set_key_and_by_the_cache_key_where_there_is_none(tmp_path):
    later = write(tmp_path, LATER, {"set-key": entry("differs"), "cache-key": entry("matches")})
    first, second = planned()
    items = [replace(first, key="other", set_key="set-key"), replace(second, key="cache-key", set_key="")]
    column, = environments_of({LATER.label: later}).elsewhere(items)
    assert [vr.verdict.outcome for vr in column.variants] == ["differs", "matches"]


def test_an_unreadable_result_in_a_set_is_said_at_the_demo_and_shown_as_a_gap(tmp_path, monkeypatch):
    said = Logger()
    monkeypatch.setattr(environments, "logger", said)
    later = write(tmp_path, LATER, {"d-off": entry()})
    damaged = tmp_path / LATER.ident / "d-" / "d-off.json"
    damaged.write_text("[")
    envs = environments_of({LATER.label: later})
    column, = envs.elsewhere(planned())
    assert [vr.compiled.not_run for vr in column.variants] == ["missing", "missing"]
    (level, text, kwargs), = said.lines
    assert level == "warning"
    assert text.startswith(f"unreadable result in the set of 'torch 2.16.0': {damaged}: ")
    assert kwargs == {"type": "autocast_demo", "subtype": "results", "location": AT}
    assert envs.missing[LATER.label] == [f"{AT} [same_as_forward]", f"{AT} [off]"]


def shown_of(envs: Environments, own: tuple[VariantResult, ...], *others: DemoResult,
             never: bool = True) -> DemoResult:
    result = DemoResult(demo(), (demo().code,), own, TORCH, environment=envs.here, others=others)
    return envs.shown(result, never)


def column(label: str, *outcomes: str) -> DemoResult:
    """Another environment's column: a result per outcome, "" for a gap."""
    environment = Environment(label, "2.16.0", "3.11.7")
    return DemoResult(demo(), (demo().code,), tuple(
        VariantResult(v, *ran(o), cached=True) if o else skipped(v, f"no result from {label}", why="missing")
        for v, o in zip(demo().variants, outcomes, strict=True)), "2.16.0", environment=environment,
        source="set")


NOT_RUN = tuple(skipped(v, "not run: autocast_demo_execute is 'never'", why="never") for v in demo().variants)


def test_a_build_that_ran_nothing_shows_the_first_environment_with_a_result_in_its_place():
    envs = environments_of()
    empty, partial, full = column("torch 2.14.0", "", ""), column("torch 2.15.0", "", "differs"), \
        column("torch 2.16.0", "matches", "matches")
    shown = shown_of(envs, NOT_RUN, empty, partial, full)
    assert shown == replace(partial, others=(empty, full))


def test_a_build_with_a_result_of_its_own_is_shown_as_it_is():
    envs = environments_of()
    other = column("torch 2.16.0", "matches", "matches")
    cached = (VariantResult(demo().variants[0], *ran("matches"), cached=True), NOT_RUN[1])
    for own, never in ((NOT_RUN, False), (cached, True)):
        assert shown_of(envs, own, other, never=never).variants == own
    # ... and one with nothing to show in its place keeps its own "not run".
    assert shown_of(envs, NOT_RUN, column("torch 2.14.0", "", "")).variants == NOT_RUN


def named(*idents: str):
    return [(replace(demo(), ident=ident), STATE) for ident in idents]


def test_without_a_shard_every_demo_is_this_builds():
    assert environments_of().mine(named("a", "b", "c"), key) == {("index", i) for i in "abc"}


def test_the_shards_split_the_demos_whole_and_apart():
    demos = named(*"abcdefg")
    shares = [environments_of(shard=f"{i}/3").mine(demos, key) for i in (1, 2, 3)]
    assert all(shares) and set().union(*shares) == {("index", i) for i in "abcdefg"}
    assert sum(map(len, shares)) == 7  # none in two shards


def test_the_shards_are_balanced_by_the_run_times_the_sets_hold(tmp_path):
    demos = named("a", "b", "c", "d")

    def shares(sets) -> list[set[str]]:
        return [{ident for _, ident in environments_of(sets, shard=f"{i}/2").mine(demos, key)}
                for i in (1, 2)]

    assert shares({}) == [{"a", "c"}, {"b", "d"}]  # unknown: alike
    # a: 2 values of 5 + 5 s, b: 2 of 0.5 + 0.5 s; c and d unknown: the mean of those (11 s),
    # so that a shard of many unknown demos is not taken for a light one.
    timed = {f"{ident}-{v.name}": entry(seconds=s) for ident, s in (("a", 5.0), ("b", 0.5))
             for v in demo().variants}
    assert shares({LATER.label: write(tmp_path, LATER, timed)}) == [{"a", "b"}, {"c", "d"}]


def test_a_demos_run_time_is_each_values_from_the_first_set_that_holds_it(tmp_path):
    own = write(tmp_path / "own", OWN, {"d-same_as_forward": entry(seconds=1.0)})
    later = write(tmp_path / "later", LATER, {"d-same_as_forward": entry(seconds=100.0),
                                              "d-off": entry(seconds=2.0)})
    envs = environments_of({HERE: own, LATER.label: later})
    assert envs.known_seconds(demo(), STATE, key) == 1.0 + 1.0 + 2.0 + 2.0  # compiled and eager
    assert envs.known_seconds(replace(demo(), ident="e"), STATE, key) is None
    # A damaged result counts as none: the next set's is taken.
    (tmp_path / "own" / OWN.ident / "d-" / "d-same_as_forward.json").write_text("[")
    assert environments_of({HERE: own, LATER.label: later}).known_seconds(demo(), STATE, key) == 204.0


def test_a_split_costs_what_its_demos_do_not_what_its_count_says():
    """A shard count far above the demos' (a typo in autocast_demo_shard) splits them as the
    count that can get one does; looping over every shard would hang the build."""
    weights = {f"d{i}": float(i % 7 + 1) for i in range(50)}
    huge = results.partition(weights, 10**12)
    # The same split as over the shards that can get a demo (one of them is always empty).
    assert huge == results.partition(weights, 50) == results.partition(weights, MAX_SHARDS)
    assert sorted(huge.values()) == list(range(1, 51))
