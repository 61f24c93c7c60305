"""Two values of one demo compile the same kernels, so the pool keeps them apart: while one
compiles, the other waits for a run of another demo (issue 48). Real builds of
tests/roots/test-apart (two demos of two values, compiled runs only), one run at a time and two
in flight: the same pages, and ``-v`` says which build took a run before its turn."""

from __future__ import annotations

import pytest
from conftest import WENT_BEFORE_TURN, copy_root, sphinx_build


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    out = {}
    for jobs in ("1", "2"):  # (set, not the CPUs: the same on a one-core machine)
        src = copy_root("apart", tmp_path_factory)
        out[jobs] = sphinx_build(src, src / "_build" / "html", "-D", f"autocast_demo_jobs={jobs}",
                                 "-v", kept=False)
    return out


def page(build) -> dict[str, list[str]]:
    soup = build.html("index")
    return {ident: [el.get_text(" ", strip=True) for el in
                    soup.find(id=ident).select("td.autocast-demo-col-outcome, p.autocast-demo-compiled")]
            for ident in ("first", "second")}


def test_a_demos_second_value_goes_after_another_demos_run_while_the_first_compiles(builds):
    serial, apart = builds["1"], builds["2"]
    for build in (serial, apart):
        assert build.returncode == 0, build.stderr
        assert build.runs() == (4, 0)
    # Queue: first/same_as_forward, first/off, second/same_as_forward, second/off. Two in
    # flight: first/off's turn comes while first/same_as_forward is in flight, so
    # second/same_as_forward goes before it (and second/off, if second's first run ends first).
    went = WENT_BEFORE_TURN.search(apart.stdout)
    assert went and int(went[1]) in (1, 2), apart.stdout
    assert WENT_BEFORE_TURN.search(serial.stdout) is None  # one at a time: every run in its turn


def test_the_order_changes_nothing_a_page_shows(builds):
    shown = page(builds["2"])
    assert shown == page(builds["1"])
    assert shown["first"][:2] == ["ran, not compared with eager, as recorded"] * 2, shown
