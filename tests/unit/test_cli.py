"""The ``sphinx-autocast-demo`` command, in process: what ``--help`` lists, the console script
pyproject.toml declares, accept's sphinx-build line, and every failure as one line and a
non-zero exit. The installed script run for real: tests/build/test_console_script.py."""

from __future__ import annotations

import importlib
import os
import re
import sys
import tomllib
from pathlib import Path

import pytest

from sphinx_autocast_demo import __main__, cli
from sphinx_autocast_demo.accept.rewrite import ENV

REPO = Path(__file__).resolve().parents[2]
COMMANDS = ("accept", "merge", "list-workers", "stop-workers")


def run(capsys, *argv: str) -> tuple[int | str | None, str, str]:
    """(exit status, stdout, stderr) of the command line ``argv``, argparse's exits included."""
    try:
        status: int | str | None = cli.main(list(argv))
    except SystemExit as exit_:
        status = exit_.code
    said = capsys.readouterr()
    return status, said.out, said.err


def test_help_lists_each_command_on_one_line(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")  # a terminal's usual width; argparse wraps to it
    status, out, _ = run(capsys, "--help")
    assert status == 0 and out.startswith("usage: sphinx-autocast-demo ")
    for command in COMMANDS:
        line = re.search(rf"^ +{command} {{2,}}(\S.*)$", out, re.M)
        assert line is not None, (command, out)
    assert re.search(r"^ +--version {2,}\S", out, re.M), out
    assert "'sphinx-autocast-demo' and 'python -m sphinx_autocast_demo' are the same command" \
        in " ".join(out.split())


def test_python_m_is_the_same_command_under_its_own_name(capsys):
    assert __main__.main is cli.main
    with pytest.raises(SystemExit) as info:
        cli.main(["--help"], prog="python -m sphinx_autocast_demo")
    assert info.value.code == 0
    assert capsys.readouterr().out.startswith("usage: python -m sphinx_autocast_demo ")


def test_pyproject_declares_the_console_script():
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    target = project["scripts"]["sphinx-autocast-demo"]
    module, _, function = target.partition(":")
    assert (module, function) == ("sphinx_autocast_demo.cli", "main")
    assert getattr(cli, function) is cli.main


def test_each_command_has_its_own_help(capsys):
    for command in COMMANDS:
        status, out, _ = run(capsys, command, "--help")
        assert status == 0 and out.startswith(f"usage: sphinx-autocast-demo {command} "), out


def a_build(monkeypatch, status: int = 0, extension: bool = True) -> list[tuple[list[str], str | None]]:
    """Sphinx's build_main made up: what it was asked (argv, the accept variable), and the
    extension's setup imported (``extension``) as a build of a project that loads it does."""
    import sphinx.cmd.build

    seen: list[tuple[list[str], str | None]] = []

    def build_main(argv: list[str]) -> int:
        seen.append((list(argv), os.environ.get(ENV)))
        if extension:
            importlib.import_module(cli.EXTENSION)
        return status

    monkeypatch.setattr(sphinx.cmd.build, "build_main", build_main)
    monkeypatch.delitem(sys.modules, cli.EXTENSION, raising=False)
    return seen


def test_merge_help_says_what_it_does_and_when_it_fails(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "80")
    status, out, _ = run(capsys, "merge", "--help")
    said = " ".join(out.split())
    assert status == 0 and "usage: sphinx-autocast-demo merge [-h] OUT SET [SET ...]" in said
    assert "merge copies every environment of each SET" in said.replace("``", "")
    assert "exits 2, with one line, when OUT is a file or cannot be written" in said


def test_accept_runs_a_check_build_in_accept_mode(capsys, monkeypatch, tmp_path):
    (tmp_path / "conf.py").write_text("")
    seen = a_build(monkeypatch)
    monkeypatch.delenv(ENV, raising=False)
    assert run(capsys, "accept", str(tmp_path))[0] == 0
    assert run(capsys, "accept", "--diff", str(tmp_path), "out", "--", "-D", "x=1", "-b", "html")[0] == 0
    assert seen == [(["-b", "autocast-check", str(tmp_path), str(Path("_build", "check"))], "1"),
                    (["-b", "autocast-check", str(tmp_path), "out", "-D", "x=1", "-b", "html"], "diff")]
    assert ENV not in os.environ  # in process (a test, a tool): left as it was
    monkeypatch.setenv(ENV, "0")
    assert run(capsys, "accept", str(tmp_path))[0] == 0
    assert os.environ[ENV] == "0"


def test_accept_passes_sphinx_builds_exit_status_on(capsys, monkeypatch, tmp_path):
    (tmp_path / "conf.py").write_text("")
    a_build(monkeypatch, status=1)
    assert run(capsys, "accept", str(tmp_path))[0] == 1


def test_accept_where_conf_py_does_not_load_the_extension(capsys, monkeypatch, tmp_path):
    # Such a build succeeds without reading AUTOCAST_DEMO_ACCEPT: it must not pass for done.
    (tmp_path / "conf.py").write_text("extensions = []\n")
    a_build(monkeypatch, extension=False)
    said = one_line_error(*run(capsys, "accept", str(tmp_path), "--", "-b", "html"))
    assert said == (f"accept: the build of {tmp_path} did not load sphinx_autocast_demo, so nothing "
                    "was checked or rewritten: add it to extensions in its conf.py\n")


def one_line_error(status: int | str | None, out: str, err: str) -> str:
    assert isinstance(status, int) and status != 0, status
    assert out == "" and err.count("\n") == 1 and "Traceback" not in err, err
    return err


def test_accept_of_no_docs_is_one_line_not_sphinxs_traceback(capsys, tmp_path):
    said = one_line_error(*run(capsys, "accept", str(tmp_path / "none")))
    assert said == (f"accept: {tmp_path / 'none'}: no such directory: name the directory of your "
                    "docs' conf.py\n")
    said = one_line_error(*run(capsys, "accept", str(tmp_path)))
    assert said.startswith(f"accept: {tmp_path} has no conf.py: ")


def test_options_for_sphinx_build_only_after_accept(capsys):
    status, out, err = run(capsys, "list-workers", "--", "-j", "2")
    assert status == 2 and out == ""
    assert err.splitlines()[-1] == ("sphinx-autocast-demo: error: list-workers passes nothing on to "
                                    "sphinx-build: leave out '-- -j 2'")


def test_an_unexpected_error_is_one_line(capsys, monkeypatch):
    def broken() -> int:
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(cli, "list_workers", broken)
    said = one_line_error(*run(capsys, "list-workers"))
    assert said.startswith("list-workers: RuntimeError: boom\\nsecond line (a bug in sphinx-autocast-demo")


def test_an_unreadable_file_is_one_line(capsys, monkeypatch):
    def denied() -> int:
        raise PermissionError(13, "Permission denied", "/somewhere/kept")

    monkeypatch.setattr(cli, "list_workers", denied)
    said = one_line_error(*run(capsys, "list-workers"))
    assert said == "list-workers: Permission denied: /somewhere/kept\n"


def test_counts_say_one_and_many(capsys, monkeypatch):
    from sphinx_autocast_demo.engine import kept

    class Worker:
        key, pid, projects = "k", 7, ("/p",)

    for found, said in (([], "0 kept workers"), ([Worker()], "1 kept worker"),
                        ([Worker(), Worker()], "2 kept workers")):
        monkeypatch.setattr(kept, "workers", lambda found=found: found)
        status, out, _ = run(capsys, "list-workers")
        assert status == 0 and out.splitlines()[-1] == f"list-workers: {said}"
