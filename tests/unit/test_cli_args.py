"""The ``sphinx-autocast-demo`` command's arguments and messages, in process, with the kept
workers and the builds made up: what each command is told, what it prints, and its exit status.
What --help lists and the first failures: tests/unit/test_cli.py."""

from __future__ import annotations

import gettext
import importlib
import locale
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
import sphinx.locale
from fakes import Loud
from test_cli import run

from sphinx_autocast_demo import cli
from sphinx_autocast_demo.core.i18n import CATALOG
from sphinx_autocast_demo.engine import kept
from sphinx_autocast_demo.engine.kept import KeptUnavailable, KeptWorker


@pytest.fixture(autouse=True)
def english(monkeypatch) -> Iterator[None]:
    """The command reads the console's language from the locale: English here, whatever the
    machine's (and whatever catalog an earlier test of this process registered)."""
    monkeypatch.setenv("LC_ALL", "C")
    monkeypatch.delenv("LANGUAGE", raising=False)
    monkeypatch.setitem(sphinx.locale.translators, ("console", CATALOG), gettext.NullTranslations())
    before = locale.setlocale(locale.LC_ALL)
    yield
    # The command sets the process's locale from LC_ALL: C would make later tests' pipes ASCII.
    locale.setlocale(locale.LC_ALL, before)


def test_options_after_dashes_go_to_sphinx_build_even_where_they_look_like_ours(
        capsys, monkeypatch, tmp_path):
    import sphinx.cmd.build

    seen: list[list[str]] = []

    def build_main(argv: list[str]) -> int:
        seen.append(argv)
        importlib.import_module(cli.EXTENSION)
        return 0

    monkeypatch.setattr(sphinx.cmd.build, "build_main", build_main)
    monkeypatch.delitem(sys.modules, cli.EXTENSION, raising=False)
    # No conf.py here: sphinx-build's -c names the directory that holds it.
    assert run(capsys, "accept", str(tmp_path), "--", "--diff", "-c", "conf")[0] == 0
    assert seen == [["-b", "autocast-check", str(tmp_path), str(Path("_build", "check")), "--diff", "-c",
                     "conf"]]


def failing_build(monkeypatch, status: int) -> None:
    """A build that fails before it loads the extension (conf.py raised, say)."""
    import sphinx.cmd.build

    monkeypatch.setattr(sphinx.cmd.build, "build_main", lambda argv: status)
    monkeypatch.delitem(sys.modules, cli.EXTENSION, raising=False)


def test_a_failed_build_of_docs_that_name_the_extension_is_not_blamed_on_it(capsys, monkeypatch, tmp_path):
    (tmp_path / "conf.py").write_text("extensions = ['sphinx_autocast_demo']\nraise ValueError\n")
    failing_build(monkeypatch, 2)
    assert run(capsys, "accept", str(tmp_path)) == (2, "", "")  # sphinx-build said why


def test_a_failed_build_of_docs_that_do_not_name_the_extension_says_to_add_it(capsys, monkeypatch, tmp_path):
    (tmp_path / "conf.py").write_text("extensions = []\nraise ValueError\n")
    failing_build(monkeypatch, 1)
    status, out, err = run(capsys, "accept", str(tmp_path))
    assert (status, out) == (1, "")
    assert err.startswith(f"accept: the build of {tmp_path} did not load sphinx_autocast_demo, so nothing ")


def workers(tmp_path: Path) -> list[KeptWorker]:
    return [KeptWorker("shared", 7, (str(tmp_path / "a" / "docs"), str(tmp_path / "b" / "docs"))),
            KeptWorker("apart", None, (str(tmp_path / "c" / "docs"),)),
            KeptWorker("bare", 9, ())]


@pytest.fixture
def found(tmp_path, monkeypatch) -> list[list[KeptWorker]]:
    """Three kept workers made up; what stop was asked to end."""
    stopped: list[list[KeptWorker]] = []
    monkeypatch.setattr(kept, "workers", lambda: workers(tmp_path))
    monkeypatch.setattr(kept, "stop", lambda chosen: stopped.append(chosen) or chosen)
    return stopped


def test_list_workers_shows_each_workers_state_and_the_projects_it_served(capsys, found, tmp_path):
    status, out, err = run(capsys, "list-workers")
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        f"shared  pid 7  served: {tmp_path}/a/docs, {tmp_path}/b/docs",
        f"apart  starting (or stopped)  served: {tmp_path}/c/docs",
        "bare  pid 9  served: no sphinx-build",
        "list-workers: 3 kept workers"]
    assert found == []  # looked at only


def test_stop_workers_all_ends_every_worker_and_names_no_project(capsys, found, tmp_path):
    assert run(capsys, "stop-workers", "--all", str(tmp_path / "a")) == (
        0, "stop-workers: 3 kept workers told to end\n", "")
    assert found == [workers(tmp_path)]


def test_stop_workers_ends_those_of_the_current_directorys_project(capsys, found, tmp_path, monkeypatch):
    (tmp_path / "c" / "docs" / "_build").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "c" / "docs" / "_build")
    status, out, _ = run(capsys, "stop-workers")
    assert found == [[workers(tmp_path)[1]]]
    assert (status, out) == (0, "stop-workers: 1 kept worker told to end; 2 of other projects left "
                                "(--all ends them too)\n")


def test_a_runtime_directory_that_cannot_be_used_is_one_line_and_status_1(capsys, monkeypatch):
    def unusable() -> list[KeptWorker]:
        raise KeptUnavailable("/run/user/1000 can be written by other users and is not sticky")

    monkeypatch.setattr(kept, "workers", unusable)
    for command in ("list-workers", "stop-workers"):
        assert run(capsys, command) == (
            1, "", f"{command}: /run/user/1000 can be written by other users and is not sticky\n")


def test_ctrl_c_is_one_line_and_the_shells_status_for_it(capsys, monkeypatch):
    def interrupted() -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "list_workers", interrupted)
    assert run(capsys, "list-workers") == (130, "", "list-workers: interrupted\n")


def test_merge_into_a_place_that_cannot_be_written_is_one_line_naming_it(capsys, monkeypatch, tmp_path):
    from sphinx_autocast_demo.plan import results

    def full(out: Path, sets: list[Path]) -> tuple[int, list[str]]:
        raise OSError(28, "No space left on device", str(out / "torch-2.16" / "x.json"))

    monkeypatch.setattr(results, "merge", full)
    status, out, err = run(capsys, "merge", str(tmp_path / "out"), str(tmp_path / "a"))
    assert (status, out) == (2, "")
    assert err == (f"merge: No space left on device: {tmp_path}/out/torch-2.16/x.json (merging into "
                   f"{tmp_path}/out)\n")


def test_a_merged_set_that_cannot_be_read_back_fails_with_its_problem_on_one_line(
        capsys, monkeypatch, tmp_path):
    from sphinx_autocast_demo.plan import results
    from sphinx_autocast_demo.plan.setfiles import SetProblem

    (tmp_path / "out").mkdir()
    monkeypatch.setattr(results, "merge", lambda out, sets: (0, []))

    def unreadable(sets: list[Path]) -> dict[str, object]:
        raise SetProblem("out/index.json: not JSON\nExpecting value: line 1")

    monkeypatch.setattr(results, "load", unreadable)
    status, out, err = run(capsys, "merge", str(tmp_path / "out"), str(tmp_path / "a"))
    assert (status, out, err) == (1, "", "merge: out/index.json: not JSON\\nExpecting value: line 1\n")


def test_the_commands_words_are_said_in_the_consoles_language(capsys, monkeypatch, found, tmp_path):
    monkeypatch.setitem(sphinx.locale.translators, ("console", CATALOG), Loud())
    status, out, _ = run(capsys, "list-workers")
    assert status == 0 and out.splitlines()[1:3] == [
        f"apart  STARTING (OR STOPPED)  SERVED: {tmp_path}/c/docs", "bare  PID 9  SERVED: NO SPHINX-BUILD"]
    assert run(capsys, "list-workers", "--", "-j", "2")[2].splitlines()[-1].endswith(
        "error: list-workers PASSES NOTHING ON TO SPHINX-BUILD: LEAVE OUT '-- -j 2'")
