"""What decides a result (the cache key and the pages Sphinx reads again) holds everything that
changes it: the page's directory, torch's environment variables, the content (not the time) of
the files a run read. Real builds of tests/roots/test-key, in order, sharing one cache."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import copy_root, sphinx_build


@pytest.fixture(scope="module")
def steps(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    src = copy_root("key", tmp_path_factory)
    doctrees = str(src / "_build" / "doctrees")  # shared by every step, as the cache beside conf.py

    def build(step: str, *args: str, env: dict[str, str] | None = None):
        return sphinx_build(src, src / "_build" / step, "-d", doctrees, *args, env=env)

    (src / "b" / "scale.txt").symlink_to("v1.txt")
    old = os.stat(src / "b" / "v2.txt").st_mtime - 100
    os.utime(src / "b" / "v2.txt", (old, old))  # (older than any build: Sphinx sees no change)
    done: dict[str, object] = {"src": src, "first": build("first")}
    done["again"] = build("again", "-E")
    done["released"] = build("released", env={"AUTOCAST_DEMO_TEST_RELEASE": "0.1.99"})
    # A copy that keeps the old file time (cp -p), and a link moved to an older file.
    data = src / "a" / "scale.txt"
    st = os.stat(data)
    data.write_text("5\n")
    os.utime(data, ns=(st.st_atime_ns, st.st_mtime_ns))
    (src / "b" / "scale.txt").unlink()
    (src / "b" / "scale.txt").symlink_to("v2.txt")
    done["copied"] = build("copied")
    # torch's own switches: a build with compiling disabled is not the cache of one without.
    done["disabled"] = build("disabled", env={"TORCH_COMPILE_DISABLE": "1"})
    done["enabled"] = build("enabled")
    done["disabled_again"] = build("disabled_again", env={"TORCH_COMPILE_DISABLE": "1"})
    return done


def test_the_same_code_on_two_pages_reads_the_files_beside_each(steps):
    for name in ("first", "again"):
        build = steps[name]
        assert build.returncode == 0, build.stderr
        assert "scale 3.0" in build.html("a/page").get_text()
        assert "scale 9.0" in build.html("b/page").get_text()
    assert steps["first"].runs() == (8, 0)
    # -E reads every page again: each is served its own results from the cache.
    assert steps["again"].runs() == (0, 4)


def test_a_later_release_of_the_extension_is_served_the_cached_results(steps):
    """An upgrade that does not change what a result means (core.RESULTS_FORMAT) runs
    nothing again: the pages are read again (they may render differently), every value cached."""
    build = steps["released"]
    assert build.returncode == 0, build.stderr
    assert "scale 3.0" in build.html("a/page").get_text()
    assert build.runs() == (0, 4)


def test_a_file_changed_with_its_old_time_kept_is_read_again(steps):
    build = steps["copied"]
    assert build.returncode == 0, build.stderr
    assert "scale 5.0" in build.html("a/page").get_text()
    assert "scale 4.0" in build.html("b/page").get_text()  # the link now names v2.txt
    assert build.runs() == (8, 0)


def test_torch_compile_disable_is_in_the_key(steps):
    disabled = steps["disabled"]
    # Compiling off: the compiled run compiled nothing, which is no verdict.
    assert disabled.returncode == 1
    assert "the compiled run compiled nothing: TORCH_COMPILE_DISABLE is set" in disabled.stderr
    assert disabled.runs() == (8, 0)
    # Without it again: not served the disabled build's results, but its own (cached) ones.
    enabled = steps["enabled"]
    assert enabled.returncode == 0, enabled.stderr
    assert enabled.runs() == (0, 4)
    # Disabled again: not served the enabled build's results; its own are no verdicts, which
    # are not kept, so it runs again.
    assert steps["disabled_again"].returncode == 1
    assert steps["disabled_again"].runs() == (8, 0)


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """tests/roots/test-key-pages: the same demo on two pages of one directory, and a demo whose
    probe (a value it does not name) runs past its timeout; built again with -E, then under
    another ATEN_CPU_CAPABILITY, then as first."""
    src = copy_root("key-pages", tmp_path_factory)
    doctrees = str(src / "_build" / "doctrees")

    def build(step: str, *args: str, env: dict[str, str] | None = None):
        return sphinx_build(src, src / "_build" / step, "-d", doctrees, *args, env=env)

    with pytest.MonkeyPatch.context() as patch:  # the first builds: torch's own choice of kernels
        patch.delenv("ATEN_CPU_CAPABILITY", raising=False)
        done: dict[str, object] = {"first": build("first"), "again": build("again", "-E")}
        # "default" exists on every CPU: no numbers are compared, only what runs
        done["capability"] = build("capability", env={"ATEN_CPU_CAPABILITY": "default"})
        done["back"] = build("back")
    return done


#: Runs of the first build of test-key-pages: two values, compiled and eager, on each page; the
#: probe page's autocast as well.
PAGES_RUNS = 2 * 2 + 2 * 2 + 3 * 2


def test_two_pages_of_one_directory_are_each_served_their_own_result(pages):
    for name in ("first", "again"):
        build = pages[name]
        assert build.returncode == 0, build.stderr
        assert "page one.rst" in build.html("a/one").get_text()
        assert "page two.rst" in build.html("a/two").get_text(), name
    assert pages["first"].runs() == (PAGES_RUNS, 0)


def test_a_probe_that_timed_out_is_not_run_again_in_an_unchanged_build(pages):
    first = pages["first"]
    assert "stopped after its timeout" not in first.html("probe").get_text()  # (never shown)
    # -E reads every page again: the probe's failure is served from the cache like the rest.
    assert pages["again"].runs() == (0, 7)


def test_aten_cpu_capability_is_in_the_key(pages):
    assert pages["capability"].runs() == (PAGES_RUNS, 0)
    assert pages["back"].runs() == (0, 7)  # the first build's results, not the second's


def test_a_torch_run_from_its_source_tree_runs_the_demos_again_when_its_modules_change(tmp_path_factory):
    """A torch imported from outside site-packages (a source tree, as ``pip install -e`` leaves
    it; here a directory of links to the installed torch's files and one module of its own)
    keeps the version it was built as while its modules change: the next build runs the demos
    again when one changed, and nothing when none did. Real builds of tests/roots/test-inputs."""
    import importlib.util

    src = copy_root("inputs", tmp_path_factory)
    spec = importlib.util.find_spec("torch")
    assert spec is not None and spec.origin
    tree = src.parent / "checkout" / "torch"
    tree.mkdir(parents=True)
    for entry in Path(spec.origin).parent.iterdir():
        if entry.name != "__pycache__":
            (tree / entry.name).symlink_to(entry)
    edited = tree / "_edited_in_the_checkout.py"
    edited.write_text("X = 1\n")

    def build():
        # (The suite's kept worker for this environment, which imports this torch: one start.)
        return sphinx_build(src, src / "_build" / "html", env={"PYTHONPATH": str(tree.parent)})

    first = build()
    assert first.returncode == 0 and first.runs()[0] > 0, first.stderr
    unchanged = build()
    assert unchanged.returncode == 0 and unchanged.runs() == (0, 0), unchanged.stderr
    edited.write_text("X = 22\n")  # (its size too: a file system may keep coarse times)
    after = build()
    assert after.returncode == 0 and after.runs() == (first.runs()[0], 0), after.stderr
