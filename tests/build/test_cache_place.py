"""Every build of one project shares its results by default (issue 38): an HTML build, then a
check build and an EPUB build with output and doctree directories of their own, run nothing
again, and the EPUB carries none of the cache (no warning per cached result). Where conf.py's
directory cannot be written, each output keeps its own, as before, said once. Real builds of
tests/roots/test-ci-recipe; where the cache goes, without a build: tests/unit/test_where_the_cache_goes.py."""

from __future__ import annotations

import subprocess

import pytest
from conftest import copy_root, sphinx_build

CHECK = ("-b", "autocast-check")


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    src = copy_root("ci-recipe", tmp_path_factory)
    html = sphinx_build(src, src / "_build" / "html")
    check = sphinx_build(src, src / "_build" / "check", *CHECK)
    epub = sphinx_build(src, src / "_build" / "epub", "-b", "epub")
    return src, html, check, epub


def test_a_check_build_after_an_html_build_runs_nothing(shared):
    _, html, check, _ = shared
    assert (html.returncode, check.returncode) == (0, 0), html.stderr + check.stderr
    assert html.runs() == (4, 0)  # one demo, two values, compiled and eager
    assert check.runs() == (0, 2)  # both values from the HTML build's results
    assert "WARNING" not in check.stderr, check.stderr  # nothing of the cache read as a page


def test_myst_nb_reads_no_page_of_the_cache_beside_its_conf_py(tmp_path_factory):
    src = copy_root("myst-nb", tmp_path_factory)  # myst_nb reads .md and .ipynb
    first = sphinx_build(src, src / "_build" / "html")
    again = sphinx_build(src, src / "_build" / "check", *CHECK)
    assert (src / ".autocast_demo_cache").is_dir()
    assert (first.returncode, again.returncode) == (0, 0), first.stderr + again.stderr
    assert "WARNING" not in again.stderr, again.stderr
    assert again.stdout.count("reading sources... [") == 1, again.stdout  # its one page
    assert again.runs() == (0, 1)


def test_the_shared_cache_is_beside_conf_py_and_never_committed(shared):
    src, *_ = shared
    cache = src / ".autocast_demo_cache"
    assert len(list(cache.rglob("*.json"))) == 2
    assert not (src / "_build" / "html" / ".doctrees" / "autocast_demo_cache").exists()
    subprocess.run(["git", "init", "-q", str(src)], check=True)
    status = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=src,
                            capture_output=True, text=True, check=True).stdout
    assert ".autocast_demo_cache" not in status and "index.rst" in status


def test_an_epub_build_carries_no_cached_result_and_warns_of_none(shared):
    *_, epub = shared
    assert epub.returncode == 0, epub.stderr
    # EPUB packs every file of its output directory and warns of each it has no type for: a
    # cache in the doctree directory (inside the output directory by default) was one warning
    # per cached result.
    unknown = [line for line in epub.stderr.splitlines() if "unknown mimetype" in line]
    assert not [line for line in unknown if "autocast_demo" in line], unknown
    assert epub.runs() == (0, 2)


def test_where_conf_py_directory_cannot_take_it_each_output_keeps_its_own_said_once(tmp_path_factory):
    src = copy_root("ci-recipe", tmp_path_factory)
    (src / ".autocast_demo_cache").write_text("")  # (root writes anywhere: a file blocks it)
    first = sphinx_build(src, src / "_build" / "html", "-W")
    again = sphinx_build(src, src / "_build" / "html", "-W", "-E")
    assert (first.returncode, again.returncode) == (0, 0), first.stderr + again.stderr
    said = [line for line in first.stdout.splitlines() if "results are kept in" in line]
    kept = src / "_build" / "html" / ".doctrees" / "autocast_demo_cache"
    assert said == [f"autocast-demo: results are kept in this build's doctree directory ({kept}), "
                    f"because {src / '.autocast_demo_cache'} is not a directory: a build with "
                    "another output directory runs the demos again; to share them, set "
                    "autocast_demo_cache_dir to a directory every build can write"], first.stdout
    assert (first.runs(), again.runs()) == ((4, 0), (0, 2))
    assert "results are kept in" not in again.stdout  # nothing to store: nothing to say


def test_sphinx_walks_nothing_of_the_cache_beside_conf_py(shared):
    # Its directory joins exclude_patterns (entries are .json, which no parser reads, but
    # Sphinx listed every one of them at every build): a page put there is no page, and the
    # pattern, added by every build alike, makes no build read its pages again.
    src, *_ = shared
    (src / ".autocast_demo_cache" / "stray.rst").write_text("Stray\n=====\n", encoding="utf-8")
    again = sphinx_build(src, src / "_build" / "html")
    assert again.returncode == 0, again.stderr
    assert "stray" not in again.stdout + again.stderr
    assert "reading sources... [" not in again.stdout, again.stdout
    assert again.runs() == (0, 0)
