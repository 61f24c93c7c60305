"""The sdist carries what its tests read: every top-level path git tracks is named in
MANIFEST.in or goes in by setuptools' own rules. The CI recipe run for real:
tests/build/test_setup.py."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def test_the_sdist_carries_every_tracked_top_level_path():
    # The sdist's tests read the test roots, the docs, tools/house.py, ...: a top-level path
    # added to the repository and not to MANIFEST.in fails them there, not here.
    if not (REPO / ".git").exists():
        pytest.skip("not a git checkout (an unpacked sdist): nothing to compare with")
    tracked = subprocess.run(["git", "ls-files"], cwd=REPO, capture_output=True, text=True,
                             check=True).stdout.split()
    top = {path.split("/")[0] for path in tracked}
    manifest = (REPO / "MANIFEST.in").read_text(encoding="utf-8").split("\n")
    named = {word for line in manifest if line.startswith(("graft ", "include "))
             for word in line.split()[1:]}
    # The package and the build's own files go in by setuptools' own rules; .gitignore need not.
    automatic = {"sphinx_autocast_demo", "pyproject.toml", "MANIFEST.in", ".gitignore"}
    assert top - automatic - named == set()
