"""A build that is not in accept mode imports nothing of the accept stage, and an unchanged
rebuild nothing of the worker pool, the page writer, the judge nor the model's types: it
unpickles no page's results (core.state), reads result sets as bytes only (plan.setfiles) and
pays only for what it uses (issue 48). Real builds of tests/roots/test-budget (with and
without a global setup, with a result set) and test-imported-files."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import subprocess
import sys
from dataclasses import replace
from hashlib import sha256

import pytest
from conftest import column, copy_root, sphinx_build

from sphinx_autocast_demo.core.state import state
from sphinx_autocast_demo.plan import results
from sphinx_autocast_demo.plan.cache import ResultCache

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
          "sphinx_autocast_demo.plan.results", "sphinx_autocast_demo.read.docstrings",
          # What writes a page's tables and the summary's matrix: the directive and the visitors
          # are registered, the words of a cell are not needed until a page is written.
          "sphinx_autocast_demo.present.matrix", "sphinx_autocast_demo.present.cells",
          "sphinx_autocast_demo.present.why", "sphinx_autocast_demo.judge.notes")


@pytest.mark.parametrize("root, args", [
    ("budget", ()),
    ("imported-files", ()),  # results that stand for files: the pages keep their stamps
    ("budget", ("-D", "autocast_demo_global_setup=import math")),  # code made from conf.py
])
def test_a_no_change_rebuild_imports_no_module_it_does_not_use(root, args, tmp_path_factory):
    src = copy_root(root, tmp_path_factory)
    # test-imported-files' demos import its modules, found on PYTHONPATH: their results stand
    # for files and for the variable, and the pages keep those stamps (core.state.FileStamp).
    out, env = src / "_build" / "html", {"PYTHONPATH": str(src)} if root == "imported-files" else {}
    assert sphinx_build(src, out, *args, env=env).returncode == 0  # the first build fills the cache
    with open(out / ".doctrees" / "environment.pickle", "rb") as f:
        pages = state(pickle.load(f)).docs.values()
    assert any(stamps for page in pages for stamps in page.inputs.values()) is (root == "imported-files")
    command = [sys.executable, "-c", BUILD_AND_LIST, "-q", "-b", "html", *args, str(src), str(out)]
    again = subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ, **env})
    status, modules = json.loads(again.stdout.strip().splitlines()[-1])
    assert status == 0, again.stderr
    assert "sphinx_autocast_demo.pipeline" in modules  # (the list is the build's: it can fail)
    assert [m for m in modules if m.startswith(UNUSED)] == [], modules


def test_a_page_body_is_read_only_when_asked_for_and_an_unreadable_one_says_what_to_do(tmp_path_factory):
    """The lazy body end to end: an unchanged build never unpickles a page's demos (a body no
    version could read passes unnoticed), and a build that needs them stops with an error that
    says to build with -E (Sphinx 9 adds its crash report; 7.2 prints the error alone)."""
    src = copy_root("budget", tmp_path_factory)
    out = src / "_build" / "html"
    assert sphinx_build(src, out).returncode == 0
    environment = out / ".doctrees" / "environment.pickle"
    with open(environment, "rb") as f:
        env = pickle.load(f)
    page = state(env).docs["index"]
    assert "_body" in page.__dict__  # (kept apart, as an unchanged build finds it)
    page.__dict__["_body"] = pickle.dumps(("not", "a", "page"))
    with open(environment, "wb") as f:
        pickle.dump(env, f, pickle.HIGHEST_PROTOCOL)
    unchanged = sphinx_build(src, out)
    assert unchanged.returncode == 0 and "sphinx-build -E" not in unchanged.stderr, unchanged.stderr
    checked = sphinx_build(src, src / "_build" / "check", "-b", "autocast-check",
                           "-d", str(out / ".doctrees"))
    assert checked.returncode != 0
    assert "autocast-demo" in checked.stderr and "build once with sphinx-build -E" in checked.stderr


@pytest.fixture(scope="module")
def with_a_set(tmp_path_factory):
    """test-budget built with a result set of another environment (``elsewhere``, written by
    ``-b autocast-check``): the source, the output and the arguments that name the set."""
    src = copy_root("budget", tmp_path_factory)
    check = sphinx_build(src, src / "_build" / "check", "-b", "autocast-check",
                         "-D", "autocast_demo_environment=elsewhere")
    assert check.returncode == 0, check.stderr
    args = ("-D", f"autocast_demo_results={src / '_build' / 'check' / 'results'}")
    out = src / "_build" / "html"
    first = sphinx_build(src, out, *args)
    assert first.returncode == 0 and "elsewhere" in first.html("index").get_text(), first.stderr
    return src, out, args


def test_a_no_change_rebuild_reads_the_result_sets_as_bytes_only(with_a_set):
    src, out, args = with_a_set
    command = [sys.executable, "-c", BUILD_AND_LIST, "-q", "-b", "html", *args, str(src), str(out)]
    again = subprocess.run(command, capture_output=True, text=True, timeout=300)
    status, modules = json.loads(again.stdout.strip().splitlines()[-1])
    assert status == 0, again.stderr
    with open(out / ".doctrees" / "environment.pickle", "rb") as f:  # (the sets were named)
        assert state(pickle.load(f)).fingerprint[-1] not in (sha256().hexdigest(), "unreadable")
    assert [m for m in modules if m.startswith(UNUSED)] == [], modules


def test_an_unreadable_set_is_said_at_every_build_and_a_mended_one_shown_again(with_a_set):
    """A set broken after the last build: the next build, unchanged otherwise, finds its files
    changed, reads the pages and says so; the build after it says so again (the fingerprint
    keeps it); mended, the pages show its environment again."""
    src, out, args = with_a_set
    (environment,) = (src / "_build" / "check" / "results").glob("*/environment.json")
    kept = environment.read_text()
    environment.write_text("{not json")
    for _ in range(2):
        broken = sphinx_build(src, out, *args)
        assert broken.returncode == 0
        assert "not a readable result set" in broken.stderr, broken.stderr
        assert f"{src / 'conf.py'}:" in broken.stderr  # (located: where the sets are named)
        assert broken.runs()[0] == 0  # (the cache answers: nothing but the sets changed)
    assert "elsewhere" not in broken.html("index").get_text()
    environment.write_text(kept)
    mended = sphinx_build(src, out, *args)
    assert "WARNING" not in mended.stderr and "elsewhere" in mended.html("index").get_text()
    unchanged = sphinx_build(src, out, *args)
    assert "WARNING" not in unchanged.stderr, unchanged.stderr


def test_a_new_label_for_this_environment_is_shown_at_once(with_a_set):
    """autocast_demo_environment names this build's column beside the sets': Sphinx reads no
    page again for it (it is no environment value of Sphinx's), the fingerprint does."""
    src, _, args = with_a_set
    out = src / "_build" / "relabelled"
    assert sphinx_build(src, out, *args).returncode == 0
    relabelled = sphinx_build(src, out, *args, "-D", "autocast_demo_environment=the test box")
    assert relabelled.returncode == 0 and relabelled.runs() == (0, 2), relabelled.stderr  # (2 demos)
    assert "the test box" in relabelled.html("index").get_text()


def test_a_set_made_again_with_other_results_is_read_again_at_the_next_build(with_a_set, tmp_path):
    """The same check made again the same day, by the same command, with other results under the
    same keys (another runner of that environment, whose CPU rounds otherwise: here its verdicts
    written as autocast-check writes them): the next build, unchanged otherwise, shows the new
    results, never those it read before. Its digest of the set reads only the run files
    (plan.setfiles), and the run file is another."""
    src, out, _ = with_a_set
    check, html = tmp_path / "results", tmp_path / "html"
    shutil.copytree(src / "_build" / "check" / "results", check)  # (the module's set stays)
    shutil.copytree(out, html)
    args = ("-D", f"autocast_demo_results={check}")
    assert sphinx_build(src, html, *args).returncode == 0  # (a new path: the pages read again)
    before = sphinx_build(src, html, *args)  # unchanged: no page read
    assert before.returncode == 0 and "reading sources... [" not in before.stdout, before.stderr
    assert _elsewhere(before) == ["\u2713 matches eager"] * 2
    (made,) = check.iterdir()
    environment, (run,) = results.read_environment(made)
    entries = {key: ResultCache(made).get(key) for key in run.keys}
    results.write(check, environment, replace(run, keys=()), {
        key: replace(entry, verdict=replace(entry.verdict, outcome="differs", max_abs=0.5))
        for key, entry in entries.items()})
    after = sphinx_build(src, html, *args)
    assert after.runs() == (0, 2), after.stderr  # (its own results: cached)
    assert _elsewhere(after) == ["\u2717 differs"] * 2, after.stderr
    # ... and the records no longer hold there: the build fails, as a check of the page does.
    assert after.returncode == 1 and after.stderr.count("(elsewhere, made on") == 2, after.stderr


def _elsewhere(build) -> list[str]:
    """What the index page shows of the ``elsewhere`` set, demo by demo."""
    soup = build.html("index")
    return [column(soup, ident, ("elsewhere",))[0] for ident in ("slow", "quick")]
