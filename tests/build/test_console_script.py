"""The installed ``sphinx-autocast-demo`` script, run as a user runs it: from the venv's bin/
(``pip install -e .`` writes it there), for a real accept build of a small project. Its
``--help`` and the mistakes it says in a line: tests/unit/test_console_script_help.py; the
parser, each failure's one line: tests/unit/test_cli.py."""

from __future__ import annotations

import shutil

import pytest
from conftest import ROOTS, script


@pytest.fixture(scope="module")
def accepted(tmp_path_factory):
    """test-ci-recipe with its record made stale, then accept --diff and accept, as a writer runs
    them from the project's root (OUTDIR left to its default)."""
    project = tmp_path_factory.mktemp("cli-accept")
    shutil.copytree(ROOTS / "test-ci-recipe", project / "docs")
    page = project / "docs" / "index.rst"
    text = page.read_text(encoding="utf-8")
    assert text.count("   :expect: *: matches\n") == 1
    page.write_text(text.replace("   :expect: *: matches\n", "   :expect: *: differs\n"), encoding="utf-8")
    cache = ("--", "-D", f"autocast_demo_cache_dir={project / 'cache'}")  # passed on to sphinx-build
    diff = script("accept", "--diff", "docs", *cache, cwd=project)
    after_diff = page.read_text(encoding="utf-8")
    write = script("accept", "docs", *cache, cwd=project)
    return project, page, diff, after_diff, write


def test_accept_diff_prints_the_change_and_writes_nothing(accepted):
    _, _, diff, after_diff, _ = accepted
    assert diff.returncode == 1, diff.stdout[-3000:] + diff.stderr[-3000:]  # the page stays stale
    assert "-   :expect: *: differs" in diff.stdout and "+   :expect: *: matches" in diff.stdout, \
        diff.stdout[-3000:] + diff.stderr[-3000:]
    assert ":expect: *: differs" in after_diff


def test_accept_rewrites_the_stale_record(accepted):
    project, page, _, _, write = accepted
    assert write.returncode == 0, write.stdout[-3000:] + write.stderr[-3000:]
    assert "   :expect: *: matches\n" in page.read_text(encoding="utf-8")
    assert (project / "_build" / "check" / "autocast-check.json").is_file()  # the default OUTDIR
