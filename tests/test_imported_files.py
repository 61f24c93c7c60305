"""A cached result stands for the modules of the writer's that its runs imported, as they were:
edit one and the demos that imported it run again (and only those); touch it and the cache
still answers. Real builds, real torch."""

from __future__ import annotations

import json
import os
import re
import types
from dataclasses import dataclass

import pytest
from conftest import CliBuild, copy_root, sphinx_build


@dataclass
class Step:
    build: CliBuild
    pages: dict[str, str]  # docname -> its HTML right after this build

    def printed(self, docname: str, what: str) -> set[str]:
        return set(re.findall(rf"{what} VERSION \d", self.pages[docname]))


@pytest.fixture(scope="module")
def steps(tmp_path_factory) -> dict[str, Step]:
    src = copy_root("imported-files", tmp_path_factory)
    out, env = src / "_build" / "html", {"PYTHONPATH": str(src)}
    helper, config = src / "helper.py", src / "docs_config.py"
    done = {}

    def build(name: str, *args: str) -> None:
        made = sphinx_build(src, out, *args, env=env)
        assert made.returncode == 0, (name, made.stderr)
        done[name] = Step(made, {doc: (out / f"{doc}.html").read_text() for doc in ("index", "other")})

    build("first")
    build("unchanged")
    helper.write_text(helper.read_text().replace("VERSION = 1", "VERSION = 2"))
    build("helper edited")
    os.utime(helper)  # its time only
    build("helper touched")
    config.write_text(config.read_text().replace("VERSION = 1", "VERSION = 2"))
    build("config edited")
    helper.write_text(helper.read_text().replace("VERSION = 2", "VERSION = 3"))
    build("never", "-D", "autocast_demo_execute=never")
    for entry in (out / ".doctrees" / "autocast_demo_cache").rglob("*.json"):
        data = json.loads(entry.read_text())
        del data["files"]  # as the version before files were stamped wrote it
        entry.write_text(json.dumps(data))
    build("older entries", "-E")
    build("stamped again", "-E")
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


def test_an_entry_that_does_not_say_what_its_runs_imported_runs_once_more(steps):
    assert steps["older entries"].build.runs() == (8, 0)
    assert steps["stamped again"].build.runs() == (0, 4)


def test_only_the_writers_modules_count():
    """Python's own, installed packages, torch and this extension are stamped by version."""
    import sysconfig

    import torch

    from sphinx_autocast_demo.engine import job

    here = os.path.abspath(__file__)
    fake = [types.SimpleNamespace(__file__=path) for path in (
        here, json.__file__, torch.__file__, job.__file__, "_ops.py", "<stdin>",
        os.path.join(sysconfig.get_paths()["purelib"], "anything", "__init__.py"))]
    fake.append(types.SimpleNamespace())  # a built-in module has no __file__
    assert job._local_files(fake) == {here}
