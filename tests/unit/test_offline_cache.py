"""Real builds of tests/roots/test-offline that render results from a cache this file writes
(``autocast_demo_execute = "never"``): the Sphinx side without torch, end to end. The same
parts on made-up results, without a build, are tests/unit/test_made_up.py; the installed torch's
release counting another build's results, and the Sphinx side importing no torch where torch is
installed: tests/build/test_offline.py."""

from __future__ import annotations

import pytest
from conftest import app_build, copy_root, sphinx_build, verdicts
from fakes import cached_by_another_build, fill_cache

from sphinx_autocast_demo.engine.build import build


@pytest.fixture(scope="module")
def offline(tmp_path_factory):
    """Build once (nothing cached: nothing checked), write made-up results for every value
    into the cache, then build again from scratch: the pages render them as checked."""
    src = copy_root("offline", tmp_path_factory)
    first = app_build(src)
    first.unchecked = verdicts(first.html("index"), "held")  # type: ignore[attr-defined]
    b = build(first.app)  # type: ignore[arg-type]
    fill_cache(first, b.torch)
    return first, app_build(src, autocast_demo_cache_dir=str(b.planner.cache.root))


def test_without_results_nothing_is_checked_and_the_build_passes(offline):
    first, _ = offline
    assert first.app.statuscode == 0  # type: ignore[attr-defined]
    assert first.stats["checked"] == 0 and first.stats["not_checked"] == 4
    assert first.unchecked == [
        "\u2014 not run: execution is off and nothing is cached"] * 2


def test_made_up_results_render_and_fail_at_the_expect_line(offline):
    _, second = offline
    assert (second.stats["demos"], second.stats["checked"], second.runs()) == (3, 4, (0, 4))
    assert second.stats["failures"] == 1
    assert second.app.statuscode == 1  # type: ignore[attr-defined]
    page = second.html("index")
    differs = "\u2717 differs (w.grad, max |\u0394| 5.00e-01)"
    assert verdicts(page, "held") == [differs, "\u2713 matches eager"]
    assert verdicts(page, "stale") == [differs]
    assert verdicts(second.html("markdown"), "myst-demo") == [differs]
    src = second.app.srcdir  # type: ignore[attr-defined]
    assert (f"{src / 'index.rst'}:18: WARNING: value off: the page records 'matches' but with "
            f"torch {build(second.app).torch} compiled differs from eager") in second.warnings  # type: ignore[arg-type]
    matrix = [row.get_text(" ", strip=True) for row in page.select("table.autocast-demo-matrix tbody tr")]
    # Each demo is titled by its section; one heading row per page, in reading order.
    assert matrix == ["Offline", "Offline \u2717 differs \u2713 matches holds",
                      "Offline \u2717 differs no longer true", "MyST",
                      "MyST \u2717 differs holds"]


def test_an_unchanged_rebuild_says_no_configuration_changed(tmp_path_factory):
    """Our static files join html_static_path before the last build's configuration is compared
    with this one's: appended later, the path is new each time, and Sphinx says "The
    configuration has changed" and writes every page again."""
    src = copy_root("offline", tmp_path_factory)
    out = src / "_build" / "html"
    never = {"AUTOCAST_DEMO_EXECUTE": "never"}
    first = sphinx_build(src, out, env=never)
    assert first.returncode == 0, first.stderr
    again = sphinx_build(src, out, env=never)
    assert again.returncode == 0, again.stderr
    assert "configuration has changed" not in again.stdout + again.stderr, again.stdout
    assert (out / "_static" / "autocast_demo.css").exists()


# -- autocast_demo_cache_torch: which torch a cached result counts for ---------------------------

@pytest.fixture(scope="module")
def other_build(tmp_path_factory):
    """Results cached by "another build of the installed release" (a made-up local version),
    stamped with what each policy compares; then builds under the policies that never count
    them (execution stays off, as in the root's conf.py)."""
    src = copy_root("offline", tmp_path_factory)
    other, installed, cache = cached_by_another_build(app_build(src))
    # Both builds write the same output directory: keep the page as the exact one wrote it.
    exact = app_build(src, autocast_demo_cache_dir=cache, autocast_demo_cache_torch="exact")
    exact.page = exact.html("index")  # type: ignore[attr-defined]
    label = app_build(src, autocast_demo_cache_dir=cache, autocast_demo_cache_torch="nightly")
    return other, installed, {"exact": exact, "label": label}


def test_exact_never_counts_another_build_as_checked(other_build):
    other, installed, builds = other_build
    exact = builds["exact"]  # execution off in this root: rendered, but not as checked
    first, _ = verdicts(exact.page, "held")
    assert first.startswith(f"differs (w.grad, max |\u0394| 5.00e-01) with torch {other} (cached; "
                            f"not checked with torch {installed})"), first
    assert exact.stats["checked"] == 0 and exact.stats["not_checked"] == 4


def test_a_label_counts_only_entries_stored_under_it(other_build):
    """Entries stored under "release" are not a label's: with a label, everything runs again
    (here, execution is off: nothing is checked)."""
    _, _, builds = other_build
    assert builds["label"].stats["checked"] == 0 and builds["label"].stats["not_checked"] == 4
