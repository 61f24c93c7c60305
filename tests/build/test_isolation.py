"""Every run starts from the warm worker's untouched state, in a real build.

tests/roots/test-isolation: a demo that changes every kind of process state it can (backend
flags, monkeypatched torch functions, module attributes, hooks, signal handlers, a custom op,
threads, ...) after looking at it, and a demo that only looks. Each run prints what it saw and
keeps its CRC as a tensor: a leak into the eager run of the same value, another value or the
other demo shows as a different output and as "compiled differs from eager". Each run of the
observer leaves a file named by its pid in $ISOLATION_PID_DIR (its pid is not printed: that
would differ between the compiled and the eager run of a value). The build runs
with the thread-count variables of a many-core machine (numpy's OpenBLAS starts a pool at
import), which must neither stop the worker from forking nor be hidden from the runs.
"""

from __future__ import annotations

import json
import os

import pytest
from conftest import copy_root, sphinx_build, thread_at_import, verdicts

from sphinx_autocast_demo.engine import isolation

MATCH = "\u2713 matches eager"
MANY_CORES = {"OPENBLAS_NUM_THREADS": "8", "OMP_NUM_THREADS": "8", "MKL_NUM_THREADS": "8"}
USERS_OWN = {"AUTOCAST_DEMO_USERS_OWN": "1"}  # a user's variable in our namespace is theirs


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    src = copy_root("isolation", tmp_path_factory)
    cache = tmp_path_factory.mktemp("cache")
    pids = tmp_path_factory.mktemp("pids")
    result = sphinx_build(src, src / "_build" / "html", "-D", f"autocast_demo_cache_dir={cache}",
                          env={**MANY_CORES, **USERS_OWN, "ISOLATION_PID_DIR": str(pids)})
    return result, outputs(cache), sorted(p.name for p in pids.iterdir())


def outputs(cache) -> dict[str, list[str]]:
    """Demo name (what its output starts with) -> what each of its runs printed."""
    found: dict[str, list[str]] = {}
    for path in cache.glob("*/*.json"):
        entry = json.loads(path.read_text(encoding="utf-8"))
        for mode in ("compiled", "eager"):
            text = entry[mode]["output"]
            if text.startswith("["):  # (the third demo prints nothing)
                found.setdefault("observer" if "own process:" in text else "leaker", []).append(text)
    return found


def test_nothing_a_run_changes_reaches_another_run(build):
    result, found, _ = build
    page = result.html("index")
    assert verdicts(page, "leaker") == [MATCH, MATCH], result.stderr
    assert verdicts(page, "observer") == [MATCH, MATCH], result.stderr
    seen = {text.splitlines()[0] for texts in found.values() for text in texts}
    assert len(found["leaker"]) == 4 and len(found["observer"]) == 4
    assert len(seen) == 1, seen  # all eight runs saw the same state


def test_every_run_has_its_own_process_and_the_users_thread_settings(build):
    _, found, pids = build
    lines = [text.splitlines()[1].split() for text in found["observer"]]
    # One process per run: four pid files, and no run found its pid's file already there.
    assert len(pids) == 4 and all(pid.isdigit() for pid in pids), pids
    assert {line[2] for line in lines} == {"True"}
    assert {line[-1] for line in lines} == {"8"}  # what the user set, not the worker's 1
    # The build's and the pool's words to the worker (config, pipes, switches) are not the
    # snippet's: none is left in its environment; the user's own variables are (CI's
    # AUTOCAST_DEMO_LATEX, say), as every other variable of theirs.
    users = sorted(k for k in {**os.environ, **USERS_OWN}
                   if k.startswith("AUTOCAST_DEMO_") and k not in isolation.NAMES.values())
    assert "AUTOCAST_DEMO_USERS_OWN" in users
    assert {text.splitlines()[2] for text in found["observer"]} == {f"ours: {users}"}


def test_a_relative_write_lands_in_a_scratch_directory_not_the_sources(build):
    result, _, _ = build
    assert not list(result.src.rglob("written-by-a-snippet.pt"))
    assert not list(result.out.rglob("written-by-a-snippet.pt"))


def test_a_torch_mode_left_open_is_the_snippets_located_error(build):
    result, _, _ = build
    assert result.returncode == 1
    index = result.src / "index.rst"
    line = index.read_text(encoding="utf-8").splitlines().index("   :name: mode-left-open")
    assert (f"index.rst:{line}: WARNING: value off: the snippet raised ModeLeftOpen: the snippet "
            "ended inside the torch mode Logged") in result.stderr, result.stderr
    assert result.stderr.count("WARNING") == 1, result.stderr


def test_the_summary_says_every_run_was_forked(build):
    # With the thread-count variables of a many-core machine set, and numpy installed (the
    # test extra has it; torch imports it and OpenBLAS starts its pool at import).
    result, _, _ = build
    assert (result.stats["forked"], result.stats["fresh"]) == (10, 0)
    assert "[autocast_demo.slow]" not in result.stderr


def test_a_worker_that_cannot_fork_says_so_once_and_still_checks(tmp_path):
    # A library that starts a thread at import (sitecustomize stands in for it here) leaves
    # the worker unable to fork: every run gets a new interpreter, and the build says why.
    site = thread_at_import(tmp_path / "site")
    src = tmp_path / "src"
    src.mkdir()
    # (autocast_demo.alike silenced: no probes, so the run count is the demo's own. What is
    # tested is how the runs start, not what a backend does: the faster aot_eager.)
    (src / "conf.py").write_text('extensions = ["sphinx_autocast_demo"]\n'
                                 'suppress_warnings = ["autocast_demo.alike"]\n'
                                 'autocast_demo_backend = "aot_eager"\n')
    (src / "index.rst").write_text(
        "Slow\n====\n\n.. autocast-demo::\n   :values: off\n   :expect: off: matches\n\n"
        "   import torch\n   w = torch.ones(2, requires_grad=True)\n"
        "   torch.compile(lambda w: (w * 2).sum())(w).backward()\n")
    result = sphinx_build(src, src / "_build", env={"PYTHONPATH": str(site)})
    assert result.returncode == 0, result.stderr
    assert verdicts(result.html("index"), "autocast-demo-1") == [MATCH]
    warnings = [line for line in result.stderr.splitlines() if "[autocast_demo.slow]" in line]
    assert len(warnings) == 1, result.stderr
    assert "pool-at-import" in warnings[0] and "conf.py:1" in warnings[0]
    assert (result.stats["forked"], result.stats["fresh"]) == (0, 2)
    assert "autocast-demo: 0 runs forked from the worker, 2 in a new interpreter" in result.stdout
