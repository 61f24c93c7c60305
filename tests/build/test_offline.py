"""Builds of tests/roots/test-offline where torch is installed: the installed torch's release
counts results another build of it cached (``autocast_demo_cache_torch = "release"``), and the
Sphinx side imports no torch. Its builds from a cache this file writes, execution off, the
other policies: tests/unit/test_offline_cache.py."""

from __future__ import annotations

import subprocess
import sys

import pytest
from conftest import app_build, copy_root, verdicts
from fakes import cached_by_another_build


def test_the_sphinx_side_never_imports_torch():
    # In a fresh interpreter: other test files of the session may have imported it.
    code = ("import sys, sphinx_autocast_demo.pipeline, sphinx_autocast_demo.report.builder; "
            "assert 'torch' not in sys.modules, 'torch imported'")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120)


@pytest.fixture(scope="module")
def other_build(tmp_path_factory):
    """Results cached by "another build of the installed release" (a made-up local version),
    stamped with what each policy compares; then a build that counts them ("release")."""
    src = copy_root("offline", tmp_path_factory)
    other, installed, cache = cached_by_another_build(app_build(src))
    # "auto": a result the policy counts as current is not run again.
    release = app_build(src, autocast_demo_cache_dir=cache, autocast_demo_execute="auto",
                        autocast_demo_cache_torch="release")
    release.page = release.html("index")  # type: ignore[attr-defined]
    return other, installed, {"release": release}


def test_release_counts_another_build_of_the_release_as_checked_and_names_it(other_build):
    other, installed, builds = other_build
    release = builds["release"]
    assert release.runs() == (0, 4)  # every value from the cache: nothing ran
    page = release.page
    differs = "\u2717 differs (w.grad, max |\u0394| 5.00e-01)"
    assert verdicts(page, "held") == [differs, "\u2713 matches eager"]
    # The demo's footer and the page's line under its first table (what every demo shares).
    footer = " ".join(p.get_text(" ", strip=True)
                      for p in page.find(id="held").select(".autocast-demo-provenance"))
    assert f"Checked with torch {other} by an earlier build" in footer, footer
    assert f"counts it as the installed torch {installed}" in footer
    assert release.stats["checked"] == 4 and release.stats["not_checked"] == 0
