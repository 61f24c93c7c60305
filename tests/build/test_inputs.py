"""Inputs that used to crash, leak or mislead (issue 26, items 15 and 16, in part).

``merge`` into places it cannot write and over symbolic links, the build machine's paths and a
set's workflow commands in what a result set carries, a kept worker's runtime directory in
another user's directory, number settings given with ``-D``, and a cache entry that says
``raises`` without the exception. Builds are real ``python -m sphinx`` runs with torch on
tests/roots/test-inputs (one demo, one value). Shards of absurd counts and ``-b doctest``, which
no demo runs for: tests/unit/test_inputs_that_run_nothing.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest
from conftest import copy_root, sphinx_build

WORKFLOW = "::error file=index.rst,line=1::set data"


def no_workflow_command(*texts: str) -> bool:
    return not any(line.lstrip().startswith("::") for text in texts for line in text.splitlines())


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sphinx_autocast_demo", *args], capture_output=True,
                          text=True, timeout=120, env={**os.environ, **(env or {})})


@pytest.fixture(scope="module")
def checked(tmp_path_factory):
    """``-b autocast-check`` as the README's CI line runs it (an absolute cache directory),
    labelled as another environment, so that a later build shows its set as a column."""
    src = copy_root("inputs", tmp_path_factory)
    cache = src.parent / "cache"
    build = sphinx_build(src, src / "_build" / "check", "-b", "autocast-check",
                         "-D", f"autocast_demo_cache_dir={cache}",
                         "-D", "autocast_demo_environment=elsewhere", kept=False)  # the line as typed
    assert build.returncode == 0, build.stderr
    return src, cache, src / "_build" / "check" / "results"


def test_no_absolute_path_of_the_build_machine_reaches_a_set_or_a_page(checked):
    src, cache, sets = checked
    (run,) = (sets / "elsewhere" / "runs").glob("*.json")
    command = json.loads(run.read_text())["command"]
    assert command.endswith("-b autocast-check -D autocast_demo_cache_dir=<path> "
                            "-D autocast_demo_environment=elsewhere")
    home = str(src.parent)
    assert all(home not in p.read_text() for p in sets.rglob("*.json"))
    page = sphinx_build(src, src / "_build" / "html", "-D", f"autocast_demo_cache_dir={cache}",
                        "-D", f"autocast_demo_results={sets}")
    assert page.returncode == 0, page.stderr
    html = (page.out / "index.html").read_text()
    # The page says when the kept results were run, not the command that made them (the
    # set's own record of it is checked above): no path of the build machine either way.
    assert "kept with these docs" in html and "autocast_demo_cache_dir" not in html
    assert home not in html


def test_a_set_made_with_a_path_in_its_command_shows_none(checked, tmp_path):
    """A set written before commands lost their paths: the page still shows none."""
    src, cache, sets = checked
    copy = tmp_path / "sets"
    shutil.copytree(sets, copy)
    (run,) = (copy / "elsewhere" / "runs").glob("*.json")
    data = json.loads(run.read_text())
    run.write_text(json.dumps({**data, "command": "sphinx-build -d /home/runner/work/x/doctrees"}))
    page = sphinx_build(src, tmp_path / "html", "-D", f"autocast_demo_cache_dir={cache}",
                        "-D", f"autocast_demo_results={copy}")
    assert page.returncode == 0, page.stderr
    assert "/home/runner" not in (tmp_path / "html" / "index.html").read_text()


def test_a_sets_text_never_prints_a_workflow_command(checked, tmp_path):
    src, cache, sets = checked
    crafted = tmp_path / "crafted"
    shutil.copytree(sets, crafted)
    (entry,) = (crafted / "elsewhere").glob("??/*.json")
    data = json.loads(entry.read_text())
    data["verdict"].update(outcome="raises", exception=f"E\n{WORKFLOW}", note=f"n\n{WORKFLOW}")
    entry.write_text(json.dumps(data))
    build = sphinx_build(src, tmp_path / "html", "-D", f"autocast_demo_cache_dir={cache}",
                         "-D", f"autocast_demo_results={crafted}")
    assert "WARNING" in build.stderr and "set data" in build.stderr + build.stdout  # it was said
    assert no_workflow_command(build.stdout, build.stderr)
    # A label or a command is one line: a set with a line break there is not read.
    labelled = tmp_path / "labelled"
    shutil.copytree(sets, labelled)
    (run,) = (labelled / "elsewhere" / "runs").glob("*.json")
    run.write_text(json.dumps({**json.loads(run.read_text()), "command": f"x\n{WORKFLOW}"}))
    build = sphinx_build(src, tmp_path / "html2", "-D", f"autocast_demo_cache_dir={cache}",
                         "-D", f"autocast_demo_results={labelled}")
    assert "not a readable result set (command is" in build.stderr and "not one line" in build.stderr
    assert no_workflow_command(build.stdout, build.stderr)
    # merge prints the conflict between the two sets on one line.
    merged = cli("merge", str(tmp_path / "merged"), str(sets), str(crafted))
    assert merged.returncode == 1 and "two different results" in merged.stderr
    assert no_workflow_command(merged.stdout, merged.stderr)


def test_a_cache_entry_that_raises_nothing_is_corrupt_and_runs_again(checked, tmp_path):
    src, cache, _sets = checked
    own = tmp_path / "cache"
    shutil.copytree(cache, own)
    (entry,) = (p for p in own.rglob("*.json") if not p.name.startswith(".tmp-"))
    data = json.loads(entry.read_text())
    data["verdict"].update(outcome="raises", exception=None)
    entry.write_text(json.dumps(data))
    build = sphinx_build(src, tmp_path / "html", "-D", f"autocast_demo_cache_dir={own}",
                         "-D", "autocast_demo_environment=elsewhere")
    assert build.returncode == 0, build.stderr
    assert "unreadable cache entry" in build.stderr
    assert "verdict.exception is None, but the outcome is 'raises'" in build.stderr
    assert "raises None" not in build.stderr + (tmp_path / "html" / "index.html").read_text()
    assert build.runs() == (2, 0)


def test_merge_into_a_file_or_a_place_it_cannot_write_is_one_line(checked, tmp_path):
    _src, _cache, sets = checked
    afile = tmp_path / "afile"
    afile.write_text("")
    for out in (afile, afile / "under"):
        done = cli("merge", str(out), str(sets))
        assert done.returncode == 2, done.stderr
        assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1, done.stderr
        assert done.stderr.startswith("merge: ") and str(afile) in done.stderr


def test_merge_never_copies_a_symbolic_link_out_of_a_set(checked, tmp_path):
    _src, _cache, sets = checked
    linked = tmp_path / "linked"
    shutil.copytree(sets, linked)
    secret = tmp_path / "secret.json"
    secret.write_text(json.dumps({"shard": "", "command": "secret", "date": "2026-01-01"}))
    (linked / "elsewhere" / "runs" / "all-000000000000.json").symlink_to(secret)
    done = cli("merge", str(tmp_path / "out"), str(linked))
    assert done.returncode == 1 and "is a symbolic link, not copied" in done.stderr
    runs = list((tmp_path / "out" / "elsewhere" / "runs").iterdir())
    assert len(runs) == 1 and all("secret" not in p.read_text() for p in runs)


def test_every_number_setting_takes_dash_d(tmp_path_factory):
    src = copy_root("inputs", tmp_path_factory)
    build = sphinx_build(src, src / "_build" / "html", "-D", "autocast_demo_timeout=600",
                         "-D", "autocast_demo_grad_tolerance=0.5",
                         "-D", "autocast_demo_output_tolerance=1e-2",
                         "-D", "autocast_demo_budget=100", "-D", "autocast_demo_build_budget=0.000001",
                         "-D", "autocast_demo_keep_worker=0")
    assert build.returncode == 0, build.stderr
    assert "unsupported type" not in build.stderr and "invalid number" not in build.stderr
    assert "has type `str'" not in build.stderr
    # It arrived as a number: the build's budget of a millionth of a second is over.
    assert "over autocast_demo_build_budget (1e-06 s)" in build.stderr
    bad = sphinx_build(src, src / "_build" / "bad", "-D", "autocast_demo_timeout=ten")
    assert bad.returncode == 2
    assert "sphinx-build -D autocast_demo_timeout='ten': not a number" in bad.stderr
    zero = sphinx_build(src, src / "_build" / "zero", "-D", "autocast_demo_grad_tolerance=-1")
    assert zero.returncode == 2
    assert "sphinx-build -D autocast_demo_grad_tolerance: autocast_demo_grad_tolerance = -1.0 " \
           "must be a finite number >= 0" in zero.stderr


@pytest.mark.parametrize("parent", ["writable by all", "another user's"])
def test_a_runtime_directory_in_an_unsafe_directory_is_refused(tmp_path_factory, parent):
    if parent == "another user's" and os.getuid() != 0:
        pytest.skip("giving a directory to another user takes root")
    src = copy_root("inputs", tmp_path_factory)
    base = tmp_path_factory.mktemp("runtime")
    if parent == "another user's":
        os.chown(base, 65534, 65534)
        base.chmod(0o755)
    else:
        base.chmod(0o777)  # not sticky: anyone may rename our directory there
    build = sphinx_build(src, src / "_build" / "html", "-D", "autocast_demo_keep_worker=5",
                         env={"XDG_RUNTIME_DIR": str(base)})
    assert build.returncode == 0, build.stderr
    why = ("belongs to another user (uid 65534)" if parent == "another user's"
           else "can be written by other users and is not sticky")
    assert f"no kept worker serves this build ({base} {why}: no worker is kept in" in build.stderr
    assert list(base.iterdir()) == []  # nothing made there, nothing started
