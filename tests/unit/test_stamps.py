"""The writer's files a cached result stands for, without a build or a worker: a module's file
found without loading it (imports.py), what is read and stamped of a file (cache.py,
stamps.py) and when a stamp makes a result stale. Real builds that edit and touch the files:
tests/build/test_imported_files.py."""

from __future__ import annotations

import os


def test_a_lazy_module_is_not_loaded_to_find_its_file(tmp_path):
    import importlib.util

    from sphinx_autocast_demo.engine.child.imports import module_file

    path = tmp_path / "lazy_one.py"
    path.write_text("raise RuntimeError('loaded')\n")
    spec = importlib.util.spec_from_file_location("lazy_one", path)
    spec.loader = importlib.util.LazyLoader(spec.loader)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module_file(module) == str(path)  # and no RuntimeError: still not loaded


def test_what_is_no_regular_file_is_never_read(tmp_path, monkeypatch):
    """A cache restored from elsewhere may name any path: a FIFO or a device must not block."""
    from sphinx_autocast_demo.plan import cache

    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert cache.file_digest(str(fifo)) == cache.MISSING
    assert cache.file_digest("/dev/zero") == cache.MISSING
    assert cache.file_digest(str(tmp_path / "absent.py")) == cache.MISSING
    assert cache.file_digest(str(tmp_path)) == cache.MISSING  # a directory opens too
    big = tmp_path / "big.so"
    big.write_bytes(b"x" * 100)
    monkeypatch.setattr(cache, "HASHED_BYTES", 10)
    assert cache.file_digest(str(big)) == f"size 100 time {big.stat().st_mtime_ns}"


def test_a_file_written_since_the_build_began_is_never_current(tmp_path):
    """The run may have imported it before the write: its result runs again next time."""
    import time

    from sphinx_autocast_demo.core.model import RunRecord, Verdict
    from sphinx_autocast_demo.plan.cache import MISSING, Entry
    from sphinx_autocast_demo.plan.stamps import Stamps

    old, new, copied = tmp_path / "old.py", tmp_path / "sub" / "new.py", tmp_path / "copied.py"
    new.parent.mkdir()
    old.write_text("A = 1\n")
    copied.write_text("C = 1\n")
    time.sleep(0.3)
    stamps = Stamps(str(tmp_path))  # the build begins
    new.write_text("B = 1\n")
    os.utime(copied, (1e9, 1e9))  # as cp -p leaves it: an old time, but written now
    got = stamps.stamp([str(new), str(old), str(copied)], "index.rst:8")
    assert got is not None
    assert [(s.path, s.sha256 == MISSING) for s in got] == [
        ("copied.py", True), ("old.py", False), ("sub/new.py", True)]
    assert stamps.late == {str(new), str(copied)}
    entry = Entry("2.13.0", Verdict("matches"), RunRecord("ok"), RunRecord("ok"), files=got[1:2])
    assert stamps.stale(entry) is None
    old.write_text("A = 2\n")
    assert Stamps(str(tmp_path)).stale(entry) == "old.py, which its runs imported, changed"
    assert stamps.stamp([str(tmp_path / "bad\x1b.py")], "index.rst:8") is None
    assert stamps.unkept.startswith("index.rst:8 (an entry cannot hold the name")
    assert stamps.stamp(None, "other.rst:4") is None
    assert stamps.unkept.startswith("index.rst:8")  # the first one is said


def test_only_files_that_can_be_compared_later_are_stamped(tmp_path):
    from sphinx_autocast_demo.plan.stamps import Stamps

    (tmp_path / "archive.zip").write_bytes(b"PK")
    assert Stamps.comparable(__file__)
    assert Stamps.comparable(str(tmp_path / "renamed_away.py"))  # its directory is there
    assert not Stamps.comparable(str(tmp_path / "gone" / "module.py"))
    assert not Stamps.comparable(str(tmp_path / "archive.zip" / "module.py"))
