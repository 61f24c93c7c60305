"""The installed ``sphinx-autocast-demo`` script, run as a user runs it (from the venv's bin/,
where ``pip install -e .`` writes it): its ``--help``, as ``python -m`` gives it, and mistakes
that end it with a line before any build runs a demo. A real accept build with it:
tests/build/test_console_script.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from conftest import COMMANDS, script


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
