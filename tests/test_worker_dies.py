"""A snippet that kills the worker mid-build (a real build, real torch): one located error at
the demo that was running, every value left is labelled not run, nothing is left running."""

from __future__ import annotations

import re

import pytest
from conftest import processes_tagged, tagged_build


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return tagged_build("worker-dies", tmp_path_factory)


def directive_line(build) -> int:
    lines = (build.src / "index.rst").read_text(encoding="utf-8").splitlines()
    return lines.index(".. autocast-demo::") + 1


def test_the_error_is_said_once_at_the_demo_that_killed_it(build):
    assert build.returncode == 1, build.stderr
    assert "Traceback" not in build.stdout + build.stderr
    assert "build finished with problems" in build.stdout
    line = directive_line(build)
    errors = [ln for ln in build.stderr.splitlines() if ": ERROR: " in ln]
    assert len(errors) == 1, build.stderr
    assert errors[0].startswith(f"{build.src / 'index.rst'}:{line}: ERROR: autocast-demo: the "
                                "autocast-demo worker stopped unexpectedly while running "
                                f"index:{line} [same_as_forward, ")
    assert "A snippet must not kill or signal the process that started it" in errors[0]


def test_what_did_not_run_is_labelled_so_and_counted(build):
    # Eager runs go first (the killer's first one kills its zygote): no value finished both runs.
    assert build.stats["checked"] == 0 and build.stats["not_checked"] == 6, build.stats
    for page in ("index", "healthy"):
        text = build.html(page).get_text(" ", strip=True)
        assert text.count("not run: the build's worker stopped before it ran") == 3, text
        assert "matches eager" not in text
    summary = build.stdout.split("autocast-demo: 2 failure(s):", 1)[1]
    assert len(re.findall(r"every value: not run: the autocast-demo worker stopped", summary)) == 2


def test_nothing_is_left_running(build):
    assert processes_tagged(build.tag) == []
