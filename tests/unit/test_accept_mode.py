"""AUTOCAST_DEMO_ACCEPT set to what is not a mode stops a real build of tests/roots/test-accept
at its setting, before any demo could run. Accept mode end to end: tests/build/test_accept.py;
the rewriting itself, on text only: tests/unit/test_accept_rules.py."""

from __future__ import annotations

from conftest import ROOTS, sphinx_build


def test_a_misspelt_mode_stops_the_build(tmp_path):
    src = ROOTS / "test-accept"
    run = sphinx_build(src, tmp_path / "out", env={"AUTOCAST_DEMO_ACCEPT": "maybe"})
    assert run.returncode == 2
    assert "AUTOCAST_DEMO_ACCEPT='maybe': use 1" in run.stderr
