"""Bad directive input, in reST and in MyST (issue 5, case 6), in a build whose demos run.

One real ``python -m sphinx`` build of tests/roots/test-fault-directives: every mistake is
counted once, the build exits 1, and the good demos of both pages still run; no process is left.
Each mistake located and said, in a build that runs none: tests/unit/test_faults_directives_read.py.
"""

from __future__ import annotations

import pytest
from conftest import processes_tagged, tagged_build, verdicts
from fakes import DIRECTIVE_MISTAKES as CASES

MATCH = "\u2713 matches eager"


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return tagged_build("fault-directives", tmp_path_factory)


def test_every_mistake_is_counted_once_and_the_build_fails(build):
    assert build.returncode == 1, build.stderr
    warnings = [line for line in build.stderr.splitlines() if ": WARNING: " in line]
    assert len(warnings) == len(CASES) + 2, build.stderr
    assert all(w.endswith("[autocast_demo.directive]") for w in warnings)
    assert build.stats["failures"] == len(CASES) + 2
    assert "Traceback" not in build.stderr


def test_bad_demos_say_so_in_the_page_and_good_ones_ran(build):
    for docname, ident in (("index", "fine-rst"), ("bad_md", "fine-md")):
        soup = build.html(docname)
        assert verdicts(soup, ident) == [MATCH]
        notes = [n.get_text(" ", strip=True) for n in soup.select(".admonition.warning")]
        assert any("This demo was not checked: unknown option :expcet:" in n for n in notes)
    # Only the two good demos ran, compiled and eager.
    assert (build.stats["demos"], build.stats["checked"], build.runs()) == (2, 2, (4, 0))


def test_no_process_is_left(build):
    assert processes_tagged(build.tag) == []
