"""Time budgets: a demo whose runs take longer than ``autocast_demo_budget`` is a located
warning naming its slowest runs; a build over ``autocast_demo_build_budget`` one warning at
conf.py naming the slowest demos. Results from the cache cost nothing, so a rebuild is silent.

The slow demo sleeps, so its runs take at least 1.2 s whatever the machine: the warnings do
not depend on how fast it is. The quick demo stays far below its budget (tens of ms a run).
"""

from __future__ import annotations

import pytest
from conftest import copy_root, sphinx_build

SLEEP_LINE = 8  # the slow demo's directive, in index.rst
QUICK_LINE = 17  # the quick one's


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    src = copy_root("budget", tmp_path_factory)
    out = src / "_build" / "html"
    # The second reads every page again (-E), and the cache answers every value.
    return src, sphinx_build(src, out), sphinx_build(src, out, "-E")


def test_a_demo_over_its_budget_is_warned_at_its_line(builds):
    src, first, _ = builds
    assert first.returncode == 0, first.stderr
    lines = [ln for ln in first.stderr.splitlines() if "[autocast_demo.budget]" in ln]
    at_demo = [ln for ln in lines if ln.startswith(f"{src / 'index.rst'}:{SLEEP_LINE}: WARNING:")]
    assert len(at_demo) == 1, first.stderr
    assert "this demo's runs took" in at_demo[0] and "over autocast_demo_budget (1 s)" in at_demo[0]
    assert "slowest: off " in at_demo[0]  # names the runs: off compiled / off eager
    # Only the slow demo: the quick one is far below the same budget.
    assert not any(f"index.rst:{QUICK_LINE}:" in ln for ln in lines), lines


def test_a_build_over_its_budget_is_one_warning_at_conf_py(builds):
    src, first, _ = builds
    at_conf = [ln for ln in first.stderr.splitlines()
               if ln.startswith(f"{src / 'conf.py'}:7: WARNING:") and "[autocast_demo.budget]" in ln]
    assert len(at_conf) == 1, first.stderr
    assert "over autocast_demo_build_budget (1.1 s)" in at_conf[0]
    assert f"slowest: {src / 'index.rst'}:{SLEEP_LINE} (" in at_conf[0]  # the slow demo first


def test_cached_results_spend_no_budget(builds):
    _, _, again = builds
    assert again.returncode == 0, again.stderr
    assert again.runs() == (0, 2)  # nothing ran: both values from the cache
    assert "[autocast_demo.budget]" not in again.stderr
