"""The installed ``sphinx-autocast-demo`` script, run as a user runs it: from the venv's bin/
(``pip install -e .`` writes it there), for ``--help`` and for a real accept build of a small
project. The parser, each failure's one line: tests/unit/test_cli.py."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOTS

SCRIPT = Path(sys.executable).parent / "sphinx-autocast-demo"
COMMANDS = ("accept", "merge", "list-workers", "stop-workers")


def script(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    assert SCRIPT.is_file(), (f"{SCRIPT}: no console script; pyproject.toml's [project.scripts] "
                              "is written there by pip install -e . (run it again)")
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_ACTIONS", "AUTOCAST_DEMO_ACCEPT")}
    return subprocess.run([str(SCRIPT), *args], cwd=cwd, capture_output=True, text=True,
                          timeout=600, env=env | {"COLUMNS": "80"})


def test_the_script_lists_its_commands_as_python_m_does():
    said = script("--help")
    assert said.returncode == 0 and said.stderr == "", said.stderr
    assert said.stdout.startswith("usage: sphinx-autocast-demo ")
    listed = re.findall(r"^ {4}(\S+) {2,}\S", said.stdout, re.M)
    assert tuple(listed) == COMMANDS, said.stdout
    module = subprocess.run([sys.executable, "-m", "sphinx_autocast_demo", "--help"],
                            capture_output=True, text=True, timeout=60, env=os.environ | {"COLUMNS": "80"})
    assert module.returncode == 0 and module.stdout.startswith("usage: python -m sphinx_autocast_demo ")
    assert tuple(re.findall(r"^ {4}(\S+) {2,}\S", module.stdout, re.M)) == COMMANDS


def test_a_mistake_is_a_message_not_a_traceback(tmp_path):
    said = script("accept", "docs", cwd=tmp_path)
    assert (said.returncode, said.stdout) == (2, "")
    assert said.stderr == "accept: docs: no such directory: name the directory of your docs' conf.py\n"


def test_accept_where_conf_py_does_not_load_the_extension(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "conf.py").write_text("extensions = []\n", encoding="utf-8")
    (tmp_path / "docs" / "index.rst").write_text("Title\n=====\n", encoding="utf-8")
    said = script("accept", "docs", cwd=tmp_path)
    assert said.returncode == 2, said.stdout[-3000:] + said.stderr[-3000:]
    # After Sphinx's own report (an unknown builder), the line that says what to do.
    assert said.stderr.endswith("did not load sphinx_autocast_demo, so nothing was checked or "
                                "rewritten: add it to extensions in its conf.py\n"), said.stderr


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
