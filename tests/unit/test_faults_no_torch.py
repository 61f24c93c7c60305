"""A build on a machine without torch (issue 5, case 7): one error located in conf.py that says
what to do, not a warning per demo; the documented never-run mode renders without failing. Each
is a real ``python -m sphinx`` build of tests/roots/test-fault-env (two pages, three demos, one
of them on cuda) in an interpreter that sees this venv's packages but torch. A torch that does
not import, one without the flag, ``:device: cuda`` without CUDA: tests/build/test_faults_environment.py.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from conftest import (
    NEVER,
    NO_ENGINE,
    CliBuild,
    conf_line,
    copy_root,
    errors,
    footer,
    processes_tagged,
    read_stats,
    readme_block,
    verdicts,
    warnings,
)

REPO = Path(__file__).resolve().parents[2]
NOT_CACHED = "\u2014 not run: execution is off and nothing is cached"


def site_without_torch(root: Path) -> Path:
    """This venv's site-packages, minus torch and its companions, as one directory of links.

    Run with ``python -S`` and this on PYTHONPATH, the interpreter sees every package of the
    venv except torch: for the build, torch is not installed (its metadata is gone too), which
    is exactly what a docs machine without torch looks like.
    """
    target = root / "site-without-torch"
    target.mkdir()
    for entry in Path(site.getsitepackages()[0]).iterdir():
        name = entry.name.lower()
        if name.startswith(("torch", "functorch", "nvidia", "triton", "__editable__")):
            continue
        (target / entry.name).symlink_to(entry)
    return target


@pytest.fixture(scope="module")
def no_torch(tmp_path_factory):
    src = copy_root("fault-env", tmp_path_factory)
    tag = uuid.uuid4().hex
    env = {**os.environ, "PYTHONPATH": f"{site_without_torch(src.parent)}{os.pathsep}{REPO}",
           "AUTOCAST_DEMO_TEST_TAG": tag}

    def run(out: str, *extra: str) -> CliBuild:
        proc = subprocess.run(
            [sys.executable, "-S", "-m", "sphinx", "-b", "html", "-E", str(src), str(src / out)],
            capture_output=True, text=True, timeout=300, env={**env, **dict(e.split("=", 1) for e in extra)},
        )
        return CliBuild(src, src / out, proc.returncode, proc.stdout, proc.stderr,
                        stats=read_stats(src / out / ".doctrees"))

    probe = subprocess.run([sys.executable, "-S", "-c", "import torch"], env=env, capture_output=True)
    assert probe.returncode != 0, "the torch-less site still imports torch"
    return run("_build/html"), run("_build/never", "AUTOCAST_DEMO_EXECUTE=never"), tag


def test_no_torch_is_one_located_error_that_says_what_to_do(no_torch):
    build, _never, tag = no_torch
    assert build.returncode == 1, build.stderr
    [error] = errors(build)
    where = f"{build.src / 'conf.py'}:{conf_line(build.src, 'sphinx_autocast_demo')}: ERROR: "
    assert error.startswith(where + "autocast-demo: no demo can run: torch is not installed for ")
    assert "pip install 'torch>=2.9'" in error and NEVER in error
    assert warnings(build) == []  # not once per demo
    assert build.stats["failures"] == 3
    assert verdicts(build.html("index"), "cpu-demo") == [NO_ENGINE]
    assert verdicts(build.html("other"), "md-demo") == [NO_ENGINE, NO_ENGINE]
    assert processes_tagged(tag) == []


def test_never_mode_renders_without_torch_and_without_failing(no_torch):
    _build, never, tag = no_torch
    assert never.returncode == 0, never.stderr
    assert errors(never) == []
    # Nothing cached yet: each demo says it was not run, as a warning that does not fail.
    assert all("[autocast_demo.not-run]" in w for w in warnings(never)) and len(warnings(never)) == 3
    assert "not run: autocast_demo_execute is 'never'" in never.stderr
    assert verdicts(never.html("index"), "cpu-demo") == [NOT_CACHED]
    # Nothing was checked, and the page says so: no mark of a record that holds.
    box = never.html("index").find(id="cpu-demo")
    assert "\u2713" not in box.get_text()
    assert "Not checked in this build: not run (execution is off and nothing is cached)" in footer(
        never.html("index"), "cpu-demo")
    assert processes_tagged(tag) == []


def test_the_readme_shows_the_real_error(no_torch):
    build, _never, _tag = no_torch
    real = build.stderr.replace(f"{build.src}/", "").replace(sys.executable, ".venv/bin/python")
    assert readme_block("no demo can run") in real
