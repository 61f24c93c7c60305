"""A build that is not in accept mode imports nothing of the accept stage, and an unchanged
rebuild nothing of the worker pool, the page writer, the judge nor the model's types: it
unpickles no page's results (core.state) and pays only for what it uses (issue 48). Real
builds of tests/roots/test-budget."""

from __future__ import annotations

import json
import subprocess
import sys

from conftest import copy_root, sphinx_build

#: Builds in this process, then says which of the package's modules it imported.
BUILD_AND_LIST = """
import json, sys
from sphinx.cmd.build import build_main
status = build_main(sys.argv[1:])
print(json.dumps([status, sorted(m for m in sys.modules if m.startswith("sphinx_autocast_demo"))]))
"""


#: What an unchanged rebuild, which runs, checks and writes nothing, has no use for. The
#: model's types: a page's demos and results stay pickled until something asks for them.
UNUSED = ("sphinx_autocast_demo.accept.", "sphinx_autocast_demo.engine.parent.pool",
          "sphinx_autocast_demo.engine.parent.records", "sphinx_autocast_demo.engine.kept",
          "sphinx_autocast_demo.engine.protocol", "sphinx_autocast_demo.present.render",
          "sphinx_autocast_demo.core.model", "sphinx_autocast_demo.judge.judgement",
          "sphinx_autocast_demo.judge.check", "sphinx_autocast_demo.judge.compare",
          "sphinx_autocast_demo.plan.results", "sphinx_autocast_demo.read.docstrings")


def test_a_no_change_rebuild_imports_no_module_it_does_not_use(tmp_path_factory):
    src = copy_root("budget", tmp_path_factory)
    out = src / "_build" / "html"
    assert sphinx_build(src, out).returncode == 0  # the first build fills the cache
    again = subprocess.run([sys.executable, "-c", BUILD_AND_LIST, "-q", "-b", "html", str(src), str(out)],
                           capture_output=True, text=True, timeout=300)
    status, modules = json.loads(again.stdout.strip().splitlines()[-1])
    assert status == 0, again.stderr
    assert "sphinx_autocast_demo.pipeline" in modules  # (the list is the build's: it can fail)
    assert [m for m in modules if m.startswith(UNUSED)] == [], modules
