"""The failure message the user guide shows is what a real build prints today.

``docs/examples/failing`` is a tiny project with one outdated record and one typo. The guide
includes ``output.txt``; this test builds the project and compares. After a deliberate change
to the messages, regenerate the file with
``AUTOCAST_DEMO_UPDATE_DOCS=1 pytest tests/build/test_docs_failure.py``.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from conftest import sphinx_build

EXAMPLE = Path(__file__).parents[2] / "docs" / "examples" / "failing"
SHOWN_AS = "docs/examples/failing"
#: The torch the docs are pinned to; another installed torch is written as this one.
PINNED_TORCH = "2.13.0+cpu"


def transcript(build, torch_version: str) -> str:
    """What a writer sees, with this machine's paths and timings taken out."""
    stderr = build.stderr.replace(f"{build.src}{os.sep}", f"{SHOWN_AS}/")
    stderr = stderr.replace(torch_version, PINNED_TORCH)
    summary = build.stdout.replace(f"{build.src}{os.sep}", f"{SHOWN_AS}/")
    # Keep the failure list and the last line; the run-count and timing lines vary.
    tail = summary[summary.index("autocast-demo: 2 failures:"):].strip().splitlines()
    tail = [line for line in tail if not line.startswith(("dumping", "generating", "writing"))]
    return "\n".join([
        f"$ python -m sphinx -b html {SHOWN_AS} {SHOWN_AS}/_build",
        stderr.strip(),
        *tail,
        "$ echo $?",
        str(build.returncode),
    ]).replace(torch_version, PINNED_TORCH) + "\n"


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    src = tmp_path_factory.mktemp("failing") / "src"
    shutil.copytree(EXAMPLE, src, ignore=shutil.ignore_patterns("output.txt", "_build"))
    return sphinx_build(src, src / "_build")


def test_the_guide_shows_the_real_failure_output(build):
    import importlib.metadata

    actual = transcript(build, importlib.metadata.version("torch"))
    shown = EXAMPLE / "output.txt"
    if os.environ.get("AUTOCAST_DEMO_UPDATE_DOCS") == "1":
        shown.write_text(actual, encoding="utf-8")
    assert shown.read_text(encoding="utf-8") == actual


def test_the_example_fails_for_the_two_reasons_the_guide_gives(build):
    assert build.returncode == 1
    assert re.search(r"index\.rst:14: WARNING: value same_as_forward: the page records 'matches' "
                     r"but .* compiled differs from eager: w\.grad", build.stderr)
    assert "index.rst:27: WARNING: value off: the snippet raised AttributeError" in build.stderr
    assert ":expect: off: raises AttributeError" in build.stderr
    assert "2 failures" in build.stdout
