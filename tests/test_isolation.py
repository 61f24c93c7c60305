"""``autocast_demo_isolation``: which runs share a process, in real builds.

Two CLI builds of tests/roots/test-isolation, each run printing its process id: by default a
demo's four runs (two values, compiled and eager) share one process and the next demo gets
another; a run that leaves a thread running gets the next run a new one; with ``"run"`` every
run has its own. The ids are read from each build's result cache (every run's printed output).
"""

from __future__ import annotations

import json

import pytest
from conftest import copy_root, sphinx_build, verdicts

MATCH = "\u2713 matches eager"


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    src = copy_root("isolation", tmp_path_factory)
    found = {}
    for mode in ("demo", "run"):
        cache = tmp_path_factory.mktemp(f"cache-{mode}")
        build = sphinx_build(src, src / "_build" / mode, "-D", f"autocast_demo_cache_dir={cache}",
                             "-D", f"autocast_demo_isolation={mode}")
        assert build.returncode == 0, build.stderr
        found[mode] = (build, pids(cache))
    return found


def pids(cache) -> dict[str, list[str]]:
    """Demo name -> the process ids its runs printed."""
    found: dict[str, list[str]] = {}
    for path in cache.glob("*/*.json"):
        entry = json.loads(path.read_text(encoding="utf-8"))
        for mode in ("compiled", "eager"):
            demo, pid = entry[mode]["output"].split()  # what the demo printed: its name, its pid
            found.setdefault(demo, []).append(pid)
    return found


def test_a_demo_shares_one_process_and_the_next_demo_gets_another(builds):
    build, found = builds["demo"]
    assert verdicts(build.html("index"), "pids") == [MATCH, MATCH]
    assert len(found["pids"]) == 4 and len(set(found["pids"])) == 1
    assert not set(found["pids"]) & set(found["threads"])


def test_a_thread_left_running_gets_the_next_run_a_new_process(builds):
    _, found = builds["demo"]
    assert len(found["threads"]) == 4 and len(set(found["threads"])) == 4


def test_isolation_run_gives_every_run_its_own_process(builds):
    build, found = builds["run"]
    assert verdicts(build.html("index"), "pids") == [MATCH, MATCH]
    assert len(set(found["pids"])) == 4 and len(set(found["threads"])) == 4


def test_an_unknown_isolation_is_refused_at_its_conf_py_line(tmp_path_factory):
    src = copy_root("isolation", tmp_path_factory)
    conf = src / "conf.py"
    conf.write_text(conf.read_text(encoding="utf-8") + 'autocast_demo_isolation = "page"\n', encoding="utf-8")
    build = sphinx_build(src, src / "_build" / "bad")
    assert build.returncode != 0
    line = len(conf.read_text(encoding="utf-8").splitlines())
    assert (f"{conf}:{line}: autocast_demo_isolation = 'page'; choose one of 'demo', 'run'"
            in build.stderr), build.stderr
