"""A cached result stands for the modules of the writer's that its runs imported, as they were:
edit one and the demos that imported it run again (and only those); touch it and the cache
still answers. Real builds, real torch, and the worker's view of ``sys.modules`` (after
torch's import). What is stamped of a file, without a build: tests/unit/test_stamps.py."""

from __future__ import annotations

import json
import os
import re
import shutil
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
from conftest import ROOTS, CliBuild, copy_root, sphinx_build


@dataclass
class Step:
    build: CliBuild
    pages: dict[str, str]  # docname -> its HTML right after this build

    def printed(self, docname: str, what: str) -> set[str]:
        return set(re.findall(rf"{what} VERSION \d", self.pages[docname]))


def fresh_copy(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh copy of the root for a test of its own, always at the same path: the builds'
    PYTHONPATH names it, and the same environment lets the suite's kept worker that the first
    such test started serve the next (each at a new path started its own). The config module,
    which that worker imported at its start (and which none of these tests edits), is left as
    it is: a new copy of it is a changed file to the worker, which then refuses the build."""
    src = tmp_path_factory.getbasetemp() / "imported-files-fresh" / "src"
    src.mkdir(parents=True, exist_ok=True)
    for entry in src.iterdir():
        if entry.name != "docs_config.py":
            shutil.rmtree(entry) if entry.is_dir() and not entry.is_symlink() else entry.unlink()
    for entry in (ROOTS / "test-imported-files").iterdir():
        if not (src / entry.name).exists():
            (shutil.copytree if entry.is_dir() else shutil.copy2)(entry, src / entry.name)
    return src


@pytest.fixture(scope="module")
def steps(tmp_path_factory) -> dict[str, Step]:
    first = copy_root("imported-files", tmp_path_factory)
    done = {}

    def build(name: str, *args: str, src: Path = first, status: int = 0) -> None:
        out = src / "_build" / "html"
        made = sphinx_build(src, out, *args, env={"PYTHONPATH": str(src)})
        assert made.returncode == status, (name, made.stderr)
        done[name] = Step(made, {doc: (out / f"{doc}.html").read_text() for doc in ("index", "other")})

    def edit(path: Path, old: str, new: str) -> None:
        path.write_text(path.read_text().replace(old, new))

    helper, config = first / "helper.py", first / "docs_config.py"
    build("first")
    build("unchanged")
    edit(helper, "VERSION = 1", "VERSION = 2")
    build("helper edited")
    os.utime(helper)  # its time only
    build("helper touched")
    edit(config, "VERSION = 1", "VERSION = 2")
    build("config edited")
    edit(helper, "SCALE = 2", "SCALE = (")  # the import fails: helper is not in sys.modules
    build("helper broken", status=1)
    edit(helper, "SCALE = (", "SCALE = 2")
    build("helper mended")
    edit(helper, "VERSION = 2", "VERSION = 3")
    build("never", "-D", "autocast_demo_execute=never")
    for entry in (first / ".autocast_demo_cache").rglob("*.json"):
        data = json.loads(entry.read_text())
        del data["files"]  # as the version before files were stamped wrote it
        entry.write_text(json.dumps(data))
    build("older entries", "-E")
    build("stamped again", "-E")
    second = first.parent / "second"  # the same checkout moved, or a second one: its own files
    shutil.copytree(first, second)
    build("moved", src=second)
    edit(second / "helper.py", "VERSION = 3", "VERSION = 9")
    build("second edited", src=second)
    build("first unchanged", src=first)
    return done


def test_the_first_build_runs_both_demos(steps):
    assert steps["first"].build.runs() == (8, 0)
    assert steps["first"].printed("index", "helper") == {"helper VERSION 1"}


def test_an_unchanged_rebuild_reads_and_runs_nothing(steps):
    assert steps["unchanged"].build.runs() == (0, 0)
    assert "reading sources... [" not in steps["unchanged"].build.stdout


def test_an_edited_module_runs_again_the_demo_that_imported_it_and_no_other(steps):
    step = steps["helper edited"]
    assert step.build.runs() == (4, 0)  # uses-helper's two values, compiled and eager
    assert step.printed("index", "helper") == {"helper VERSION 2"}
    assert re.findall(r"reading sources\.\.\. \[.*\] (\S+)", step.build.stdout) == ["index"]


def test_a_touched_module_is_read_again_and_answered_by_the_cache(steps):
    step = steps["helper touched"]
    assert step.build.runs() == (0, 2)
    assert step.printed("index", "helper") == {"helper VERSION 2"}


def test_an_edited_config_module_runs_every_demo_again(steps):
    # The worker imports it at its start (autocast_demo_config): every run has it.
    step = steps["config edited"]
    assert step.build.runs() == (8, 0)
    assert step.printed("other", "docs_config") == {"docs_config VERSION 2"}


def test_with_execution_off_a_stale_result_is_not_shown_as_checked(steps):
    step = steps["never"]
    assert step.build.runs() == (0, 0)
    assert step.build.stats["checked"] == 0 and step.build.stats["not_checked"] == 2
    assert ("index.rst:8: WARNING: every value: not run: autocast_demo_execute is 'never' and its "
            "cached result is stale: helper.py, which its runs imported, changed"
            ) in step.build.stderr
    page = step.pages["index"]
    assert page.count("not run: execution is off and a module it imports has changed since its "
                      "cached result") == 2
    assert step.printed("index", "helper") == set()  # no stale output either
    assert str(step.build.src) not in page  # no path of the build machine for readers


def test_a_module_whose_import_failed_runs_again_once_it_is_mended(steps):
    broken = steps["helper broken"]
    assert broken.build.runs() == (4, 0)
    assert "SyntaxError" in broken.pages["index"]
    mended = steps["helper mended"]
    assert mended.build.runs() == (4, 0)
    assert mended.printed("index", "helper") == {"helper VERSION 2"}


def test_a_moved_checkout_reuses_the_cache_and_a_second_one_compares_its_own_files(steps):
    assert steps["moved"].build.runs() == (0, 4)  # every page read (a new source directory)
    edited = steps["second edited"]
    assert edited.build.runs() == (4, 0)
    assert edited.printed("index", "helper") == {"helper VERSION 9"}
    assert steps["first unchanged"].build.runs() == (0, 0)


def test_an_entry_that_does_not_say_what_its_runs_imported_runs_once_more(steps):
    assert steps["older entries"].build.runs() == (8, 0)
    assert steps["stamped again"].build.runs() == (0, 4)


def test_only_the_writers_files_count():
    """Python's own, installed packages, torch and this extension are stamped by version, and
    what inductor generates into its cache is none of the writer's."""
    import sysconfig

    import torch
    from torch._inductor.runtime.cache_dir_utils import default_cache_dir

    from sphinx_autocast_demo.engine.child import imports

    here = os.path.abspath(__file__)
    paths = [here, json.__file__, torch.__file__, imports.__file__, "_ops.py", "<stdin>", None,
             os.path.join(sysconfig.get_paths()["purelib"], "anything", "__init__.py"),
             os.path.join(default_cache_dir(), "ab", "cabcdef.py")]
    assert imports.writers(paths) == {here}


@pytest.mark.torch  # what is not the writer's is found beside torch's own directories
def test_no_module_of_the_extension_is_the_writers():
    """Whichever stage folder it is in: in a checkout (an editable install, as here and in CI)
    the package is under no site-packages directory, and its version stamps it already."""
    import sphinx_autocast_demo
    from sphinx_autocast_demo.engine.child import imports

    package = Path(sphinx_autocast_demo.__file__).parent
    modules = [str(p) for p in package.rglob("*.py")]
    assert len(modules) > 50 and imports.writers(modules) == set()


@pytest.mark.torch  # the worker's view of sys.modules starts after torch's import
def test_a_run_that_cannot_tell_its_files_says_so_instead_of_failing():
    import sys

    from sphinx_autocast_demo.engine.child.imports import writers_files

    class Odd:
        @property
        def __dict__(self):
            raise RuntimeError("no")

    sys.modules["_autocast_demo_odd"] = Odd()  # type: ignore[assignment]
    try:
        assert writers_files() is None
    finally:
        del sys.modules["_autocast_demo_odd"]
    assert writers_files() is not None


def test_a_module_that_was_not_there_yet_is_run_for_once_it_is(tmp_path_factory):
    """An ImportError may be a module not written yet: nothing to stamp, so it is not kept."""
    src = fresh_copy(tmp_path_factory)
    page = src / "index.rst"
    page.write_text(page.read_text().replace("   import helper\n", "   import helper\n   import later\n"))
    out, env = src / "_build" / "html", {"PYTHONPATH": str(src)}
    first = sphinx_build(src, out, env=env)
    assert first.returncode == 1 and "ModuleNotFoundError" in first.stderr
    (src / "later.py").write_text("X = 1\n")
    second = sphinx_build(src, out, env=env)
    assert second.returncode == 0, second.stderr
    assert second.runs() == (4, 0)


def test_a_module_from_a_directory_the_snippet_removed_is_not_depended_on(tmp_path_factory):
    """Nothing left to compare: stamped, it would read the page and run it at every build."""
    src = fresh_copy(tmp_path_factory)
    page = src / "other.rst"
    page.write_text(page.read_text().replace("   import docs_config\n", textwrap.indent(
        textwrap.dedent("""\
            import docs_config
            import pathlib
            import sys
            import tempfile

            with tempfile.TemporaryDirectory() as scratch:
                pathlib.Path(scratch, "gone_module.py").write_text("X = 1")
                sys.path.insert(0, scratch)
                import gone_module
            """), "   ")))
    out, env = src / "_build" / "html", {"PYTHONPATH": str(src)}
    first = sphinx_build(src, out, env=env)
    assert first.returncode == 0, first.stderr
    assert first.runs() == (8, 0)
    again = sphinx_build(src, out, env=env)
    assert again.runs() == (0, 0) and "reading sources... [" not in again.stdout


@pytest.mark.torch  # the worker's view of sys.modules starts after torch's import
def test_a_run_finds_the_modules_it_imported_from_the_end_of_sys_modules(tmp_path, monkeypatch):
    """Reading back only to the last module the worker had (touching all would copy the
    zygote's pages: 5.5 ms a run), and every module where that one was removed since."""
    import sys

    from sphinx_autocast_demo.engine.child import imports

    for name in ("first_new", "second_new", "third_new"):
        (tmp_path / f"{name}.py").write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(imports, "_INHERITED", imports._INHERITED)
    for name in ("first_new", "second_new", "third_new"):
        monkeypatch.delitem(sys.modules, name, raising=False)  # (gone again after the test)
    imports.remember_modules()
    before = imports.writers_files()
    assert before is not None
    import first_new  # noqa: F401
    assert imports._added(*imports._INHERITED[:2]) == ["first_new"]
    # (and where each was found on sys.path: conf.py's may find it elsewhere next time)
    assert imports.writers_files() == sorted([*before, str(tmp_path / "first_new.py"),
                                              "module:first_new"])
    monkeypatch.delitem(sys.modules, "json")  # an inherited module removed, then two imported
    import second_new  # noqa: F401
    import third_new  # noqa: F401
    assert sorted(imports._added(*imports._INHERITED[:2])) == ["first_new", "second_new", "third_new"]
    names = ("first_new", "second_new", "third_new")
    every = sorted([*before, *(str(tmp_path / f"{n}.py") for n in names),
                    *(f"module:{n}" for n in names)])
    assert imports.writers_files() == every
    monkeypatch.delitem(sys.modules, imports._INHERITED[1])  # the last one: all are read
    assert imports.writers_files() == every


def test_what_cannot_be_stamped_as_the_run_had_it_is_said_and_runs_again(tmp_path_factory):
    """A module the snippet writes while the build runs, and one whose path an entry cannot
    hold: never served from the cache, and never silently (one line each, once a build)."""
    src = fresh_copy(tmp_path_factory)

    def add(docname: str, after: str, code: str) -> None:
        page = src / f"{docname}.rst"
        page.write_text(page.read_text().replace(after, after + textwrap.indent(code, "   ")))

    add("index", "   import helper\n", textwrap.dedent("""\
        import pathlib

        generated = pathlib.Path(__file__).with_name("generated.py")
        generated.write_text("X = 1")  # each run writes it again
        import generated
        """))
    add("other", "   import docs_config\n", textwrap.dedent("""\
        import pathlib
        import sys

        odd = pathlib.Path(__file__).parent / "odd\\x1bdir"
        odd.mkdir(exist_ok=True)
        (odd / "odd_module.py").write_text("Y = 1")
        sys.path.insert(0, str(odd))
        import odd_module
        """))
    out, env = src / "_build" / "html", {"PYTHONPATH": str(src)}
    builds = [sphinx_build(src, out, env=env) for _ in range(2)]
    for build in builds:
        assert build.returncode == 0, build.stderr
        assert build.runs() == (8, 0)  # both pages read and run again
        said = build.stdout
        assert "autocast-demo: written while this build ran, after its runs may have read it: " \
               f"{src / 'generated.py'}; the demos that imported it run again" in said
        assert ("autocast-demo: results whose runs' files cannot be kept run again in every build "
                "that reads their page; the first: ") in said
        assert "other.rst:4 (an entry cannot hold the name" in said
