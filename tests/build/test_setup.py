"""The project's own setup as the README tells it, run for real: the CI recipe, whose HTML
build must take every result from the check build's cache. What the README, pyproject.toml,
tox.ini and the docs say, read without running anything: tests/unit/test_project_files.py; the
sdist's files: tests/unit/test_sdist_files.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOTS, load_quickstart, read_stats

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
quickstart = load_quickstart()


@pytest.fixture(scope="module")
def recipe(tmp_path_factory):
    """The README's CI commands, as written, run from a project whose docs are a tiny root."""
    project = tmp_path_factory.mktemp("ci-recipe")
    shutil.copytree(ROOTS / "test-ci-recipe", project / "docs")
    # `python` in the commands is this interpreter (CI runs the tests where `python` is not).
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("GITHUB_ACTIONS", None)
    builds = [subprocess.run(["bash", "-c", command], cwd=project, env=env, capture_output=True,
                             text=True, timeout=600)
              for command in quickstart.commands(README, "## In CI")]
    return project, builds


#: Where the recipe's builds keep their results: the directory its ``-D autocast_demo_cache_dir``
#: names, relative to the project, or the default beside docs/conf.py.
NAMED = re.compile(r'-D autocast_demo_cache_dir="\$PWD/([^"]+)"')


def recipe_cache() -> str:
    named = {m[1] for command in quickstart.commands(README, "## In CI") for m in NAMED.finditer(command)}
    assert len(named) <= 1, named  # one cache for both builds, or the default
    return named.pop() if named else "docs/.autocast_demo_cache"


def runs(doctrees: Path) -> tuple[int, int]:
    """(runs, values from the cache) of the build whose doctree directory is ``doctrees``."""
    stats = read_stats(doctrees)
    return int(stats["runs"]), int(stats["cached"])


def test_ci_recipe_check_then_html_runs_each_demo_once(recipe):
    project, builds = recipe
    assert [re.search(r" -b (\S+)", b.args[2])[1] for b in builds] == ["autocast-check", "html"]
    for build in builds:
        assert build.returncode == 0, build.stdout[-3000:] + build.stderr[-3000:]
    assert runs(project / "_build" / "check" / ".doctrees") == (4, 0)  # 2 values, compiled and eager
    assert runs(project / "_build" / "html" / ".doctrees") == (0, 2)  # both from the check's cache
    assert (project / "_build" / "check" / "autocast-check.json").exists()
    assert (project / recipe_cache()).is_dir()  # ($PWD: where the commands ran)
    assert "\u2713 matches" in (project / "_build" / "html" / "index.html").read_text(encoding="utf-8")


def test_a_relative_cache_dir_is_taken_from_conf_py_not_from_the_cwd(recipe, tmp_path):
    project, _ = recipe
    relative = os.path.relpath(project / recipe_cache(), project / "docs")  # the recipe's cache
    build = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", str(project / "docs"), str(tmp_path / "html"),
         "-D", f"autocast_demo_cache_dir={relative}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert build.returncode == 0, build.stderr[-3000:]
    assert runs(tmp_path / "html" / ".doctrees") == (0, 2)
