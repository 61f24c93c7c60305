"""Builders that show no results never run the docs' code ("No silent wrong result", item 7).

A translator running ``-b gettext``, or CI running ``-b linkcheck``, must not execute the
snippets. tests/roots/test-no-run-builders has one demo that writes a marker file (its path
comes from the environment); real ``python -m sphinx`` builds, with ``-W``.
"""

from __future__ import annotations

import pytest
from conftest import copy_root, sphinx_build


@pytest.fixture(scope="module")
def src(tmp_path_factory):
    return copy_root("no-run-builders", tmp_path_factory)


def build_with_marker(src, builder: str):
    """A -W build with ``builder``; the demo writes the returned marker file if it runs."""
    marker = src.parent / f"ran-{builder}"
    # A cache of its own: every build of a project shares one, and this one must run.
    own = f"autocast_demo_cache_dir={src / '_build' / f'{builder}-cache'}"
    build = sphinx_build(src, src / "_build" / builder, "-W", "-b", builder, "-D", own,
                         env={"AUTOCAST_DEMO_MARKER": str(marker)})
    assert build.returncode == 0, build.stderr
    return build, marker


@pytest.mark.parametrize("builder", ["gettext", "linkcheck"])
def test_a_builder_without_results_runs_nothing_and_says_nothing(src, builder):
    build, marker = build_with_marker(src, builder)
    assert not marker.exists()
    assert "autocast" not in build.stderr  # no 'not run' warning, no error
    assert "autocast-demo:" not in build.stdout  # no summary: nothing was checked
    if builder == "gettext":
        # Nothing rendered for it either: no results to translate.
        pot = (src / "_build" / builder / "index.pot").read_text(encoding="utf-8")
        assert "A page whose demo must run" in pot
        assert "matches" not in pot and "not run" not in pot and "torch" not in pot


@pytest.mark.parametrize("builder", ["html", "dummy"])
def test_the_same_demo_runs_for_a_builder_that_shows_or_checks_results(src, builder):
    # The marker works: a builder that shows the results runs the demo, and so does dummy,
    # Sphinx's builder for checking the docs without writing them (-b dummy -W in CI).
    build, marker = build_with_marker(src, builder)
    assert marker.read_text() == "the demo ran"
    assert (build.stats["demos"], build.stats["checked"]) == (1, 1)
