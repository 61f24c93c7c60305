"""Where the result cache lives when conf.py names no directory (issue 38): beside conf.py, one
for every build of the project, marked so that git never commits it; in the doctree directory
where conf.py's directory cannot be written. Without a build; real builds that share it (an HTML
build, then a check build that runs nothing): tests/build/test_cache_place.py."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from sphinx_autocast_demo.core.model import RunRecord, Verdict
from sphinx_autocast_demo.plan.cache import DEFAULT_DIR, Entry, ResultCache, among_sources, cache_root

ENTRY = Entry("2.13.0", Verdict(outcome="matches"), RunRecord(status="ok"), RunRecord(status="ok"))


def test_the_default_is_beside_conf_py_whatever_the_doctree_directory(tmp_path):
    conf, html, check = tmp_path / "docs", tmp_path / "html" / ".doctrees", tmp_path / "check" / ".doctrees"
    conf.mkdir()
    assert cache_root("", str(conf), str(html)) == (conf / DEFAULT_DIR, "")
    assert cache_root("", str(conf), str(check)) == (conf / DEFAULT_DIR, "")
    assert DEFAULT_DIR == ".autocast_demo_cache"


def test_a_named_directory_is_taken_from_conf_py_and_never_moved(tmp_path):
    assert cache_root("../_build/cache", "/docs", "/out/.doctrees") == (Path("/docs/../_build/cache"), "")
    assert cache_root(str(tmp_path / "c"), "/docs", "/out/.doctrees") == (tmp_path / "c", "")
    # Named and unwritable: it stays where it was named (the build says so when it would store).
    assert cache_root("/proc/cache", "/docs", "/out/.doctrees") == (Path("/proc/cache"), "")


def test_where_conf_py_directory_cannot_be_written_the_doctree_directory_keeps_them(tmp_path, monkeypatch):
    conf = tmp_path / "docs"
    conf.mkdir()
    real = os.access
    monkeypatch.setattr(os, "access", lambda path, mode: Path(path) != conf and real(path, mode))
    root, why = cache_root("", str(conf), str(tmp_path / ".doctrees"))
    assert root == tmp_path / ".doctrees" / "autocast_demo_cache"
    assert why == f"{conf / DEFAULT_DIR} cannot be written"


def test_a_file_in_the_defaults_place_sends_the_cache_to_the_doctree_directory(tmp_path):
    (tmp_path / DEFAULT_DIR).write_text("not a directory")
    root, why = cache_root("", str(tmp_path), str(tmp_path / "d"))
    assert root == tmp_path / "d" / "autocast_demo_cache"
    assert why == f"{tmp_path / DEFAULT_DIR} is not a directory"
    assert (tmp_path / DEFAULT_DIR).read_text() == "not a directory"  # nothing written to decide


def test_deciding_writes_nothing(tmp_path):
    cache_root("", str(tmp_path), str(tmp_path / "d"))
    assert list(tmp_path.iterdir()) == []


def test_a_directory_the_cache_makes_is_never_committed_and_marked_as_a_cache(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    cache = ResultCache(tmp_path / "docs" / DEFAULT_DIR)
    assert cache.unwritable() is None
    cache.put("ab12", ENTRY)
    assert (cache.root / "CACHEDIR.TAG").read_text().startswith("Signature: 8a477f597d28d172789f06886806bc55")
    untracked = subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=tmp_path,
                               capture_output=True, text=True, check=True).stdout
    assert untracked == ""
    # Nothing in it that Sphinx, MyST or MyST-NB reads as a page (.rst, .md, .ipynb, .txt).
    assert {p.suffix for p in cache.root.rglob("*") if p.is_file()} == {"", ".TAG", ".json"}


def test_a_directory_that_exists_is_left_as_it_is(tmp_path):
    ResultCache(tmp_path).put("ab12", ENTRY)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ab"]


def test_a_writable_cache_is_not_probed_by_writing(tmp_path, monkeypatch):
    # A file written and removed at every build that runs something restarts a watcher of the
    # source tree (sphinx-autobuild), for ever where a demo fails and so always runs.
    ResultCache(tmp_path).make()
    before = os.stat(tmp_path).st_mtime_ns
    monkeypatch.setattr("tempfile.mkstemp", lambda *a, **k: (_ for _ in ()).throw(AssertionError("probed")))
    assert ResultCache(tmp_path).unwritable() is None
    assert os.stat(tmp_path).st_mtime_ns == before


def test_the_sdist_leaves_out_a_cache_left_beside_a_conf_py(tmp_path, monkeypatch):
    # MANIFEST.in as setuptools reads it when it makes the sdist (where it is installed).
    egg_info = pytest.importorskip("setuptools.command.egg_info")
    for path in ("docs/conf.py", "docs/.autocast_demo_cache/ab/ab12.json",
                 "docs/.autocast_demo_cache/.gitignore", "tests/roots/test-x/conf.py",
                 "examples/pytorch-docs/docs/source/.autocast_demo_cache/CACHEDIR.TAG",
                 "tests/roots/test-x/.autocast_demo_cache/cd/cd34.json"):
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text("")
    manifest = (Path(__file__).parents[2] / "MANIFEST.in").read_text(encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    files = egg_info.FileList()
    files.findall(".")
    for line in manifest.splitlines():
        if line.strip() and not line.startswith("#"):
            files.process_template_line(line)
    assert sorted(files.files) == ["docs/conf.py", "tests/roots/test-x/conf.py"]


@pytest.mark.parametrize(("root", "srcdir", "pattern"), [
    ("/docs/.autocast_demo_cache", "/docs", ".autocast_demo_cache"),  # the default
    ("/docs/conf/.autocast_demo_cache", "/docs", "conf/.autocast_demo_cache"),  # sphinx-build -c
    ("/docs/../docs/_cache", "/docs", "_cache"),  # named relative to conf.py
    ("/docs/cache[ci]", "/docs", ""),  # a name that reads as a pattern is left walked
    ("/docs/c*", "/docs", ""),
    ("/docs/cafe\u0301", "/docs", "caf\u00e9"),  # NFC, as Sphinx compares the names it walks
    ("/elsewhere/.autocast_demo_cache", "/docs", ""),  # outside the sources: nothing to exclude
    ("/docs", "/docs", ""),  # the sources themselves: never all of them
    ("/", "/docs", ""),
])
def test_the_cache_among_the_sources_is_excluded_by_its_path(root, srcdir, pattern):
    assert among_sources(Path(root), srcdir) == pattern
