"""A result set of this very environment is held to what the cache is: outside "never" mode it
answers only for files that are as they were, so an edited helper module runs again instead of
showing the set's old output. Real builds of tests/roots/test-own-set."""

from __future__ import annotations

import shutil

from conftest import copy_root, sphinx_build


def test_an_edited_module_is_run_again_though_this_environments_set_has_a_result(tmp_path_factory):
    src = copy_root("own-set", tmp_path_factory)
    (src / "sets").mkdir()
    made = sphinx_build(src, src / "_build" / "check", "-b", "autocast-check")
    assert made.returncode == 0, made.stderr
    shutil.rmtree(src / "sets")
    shutil.copytree(src / "_build" / "check" / "results", src / "sets")
    (src / "helper.py").write_text("VALUE = 9\n")
    # No cache, only the set (as on a CI runner after a merge).
    shutil.rmtree(src / ".autocast_demo_cache")
    shown = sphinx_build(src, src / "_build" / "html", "-d", str(src / "_build" / "fresh"))
    assert shown.returncode == 0, shown.stderr
    text = shown.html("index").get_text()
    assert "helper VALUE 9" in text and "helper VALUE 3" not in text
    assert shown.runs() == (2, 0)
    # In "never" mode the set is what there is: its result, said to be the set's.
    shutil.rmtree(src / ".autocast_demo_cache")
    never = sphinx_build(src, src / "_build" / "never", "-d", str(src / "_build" / "fresh2"),
                         env={"AUTOCAST_DEMO_EXECUTE": "never"})
    assert "helper VALUE 3" in never.html("index").get_text()
    assert never.runs() == (0, 1)
