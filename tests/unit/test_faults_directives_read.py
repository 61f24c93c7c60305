"""Bad directive input, in reST and in MyST (issue 5, case 6), as Sphinx reads it: a real
``python -m sphinx`` build of tests/roots/test-fault-directives that runs no demo
(``autocast_demo_execute = "never"``). Every mistake is one located warning that says what to
write instead; MyST would only warn about an unknown option and drop it: we report it. The same
build with its good demos run, every mistake counted once: tests/build/test_faults_directives.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import located, never_build
from fakes import DIRECTIVE_MISTAKES as CASES

RST, MD = "index.rst", "bad_md.md"


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return never_build("fault-directives", tmp_path_factory)


def nth_line(path: Path, text: str, n: int = 1) -> int:
    """1-based line of the ``n``-th line of ``path`` whose stripped text is ``text``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = [i for i, line in enumerate(lines, 1) if line.strip() == text]
    return found[n - 1]


@pytest.mark.parametrize(("page", "source", "message"), CASES)
def test_each_mistake_is_located_and_says_what_to_write(build, page, source, message):
    path = build.src / page
    located(build, path, nth_line(path, source), message)


@pytest.mark.parametrize("page", [RST, MD])
def test_an_empty_body_is_located_at_its_directive(build, page):
    path = build.src / page
    lines = path.read_text(encoding="utf-8").splitlines()
    marker = next(i for i, line in enumerate(lines, 1) if "MARK-empty" in line)
    directive = marker + (2 if page == RST else 1)  # reST needs a blank line after a comment
    assert "autocast-demo" in lines[directive - 1]
    located(build, path, directive,
            "autocast-demo: the body is empty: write the Python snippet to run under it")


def test_myst_did_not_drop_the_unknown_option_silently(build):
    # myst-parser would say "Unknown option" and run the demo without it; it did not run.
    assert "Unknown option" not in build.stderr
    assert "myst.directive" not in build.stderr
