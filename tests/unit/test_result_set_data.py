"""results.py and ``python -m sphinx_autocast_demo`` on result sets written here (no build):
names, provenance, shards, reading errors, merging."""

from __future__ import annotations

import json
import os
import re
from dataclasses import replace

import pytest

from sphinx_autocast_demo import __main__ as cli
from sphinx_autocast_demo import __version__
from sphinx_autocast_demo.core.model import Environment, RunRecord, Verdict
from sphinx_autocast_demo.plan import results, setfiles
from sphinx_autocast_demo.plan.cache import Entry
from sphinx_autocast_demo.plan.results import EnvironmentSet, RunInfo
from sphinx_autocast_demo.plan.setfiles import ENVIRONMENT, RUNS, SetProblem, run_files

NEW = Environment("torch 2.16.0", "2.16.0", "3.11.7", "cpu")
KEY = "ab" + "0" * 62
DATE = "2026-11-30"


def entry(verdict: str = "matches", seconds: float = 0.0, output: str = "") -> Entry:
    return Entry(NEW.torch, Verdict(verdict), RunRecord("ok", seconds=seconds, output=output),  # type: ignore[arg-type]
                 RunRecord("ok"))


def a_set(root, shard: str = "", env: Environment = NEW, key: str = KEY):
    return results.write(root, env, RunInfo(shard, "sphinx-build -b autocast-check", DATE), {key: entry()})


def test_a_run_file_is_named_by_its_shard_and_content():
    one = RunInfo("1/2", "sphinx-build", DATE)
    assert re.fullmatch(r"1-of-2-[0-9a-f]{12}\.json", one.file)
    assert RunInfo("", "sphinx-build", DATE).file.startswith("all-")
    assert one.file == RunInfo("1/2", "sphinx-build", DATE).file
    assert one.file != replace(one, keys=(KEY,)).file  # two shards' runs never overwrite each other


def test_made_says_when_and_by_what_without_the_machines_paths():
    def made(*runs: RunInfo) -> str:
        return EnvironmentSet(NEW, [], list(runs)).made
    command = "sphinx-build -b autocast-check /home/me/docs out"
    assert made(RunInfo("", command, DATE)) == f"made on {DATE} by sphinx-build -b autocast-check <path> out"
    assert made(RunInfo("1/2", "tox", "2026-11-29"), RunInfo("2/2", "tox", DATE), RunInfo("", "", DATE)) == (
        f"made from 2026-11-29 to {DATE} by tox")
    assert made(RunInfo("1/2", "tox -e a", DATE), RunInfo("2/2", "tox -e b", DATE)) == f"made on {DATE}"
    assert made() == "made"


def test_the_shards_no_run_answered():
    def missing(*shards: str) -> list[str]:
        return EnvironmentSet(NEW, [], [RunInfo(s, "", DATE) for s in shards]).missing_shards()
    assert missing("1/3", "3/3") == ["2/3"]
    assert missing("1/3", "3/3", "") == []  # an unsharded run answered every demo
    assert missing("1/2", "1/3") == ["2/2", "2/3", "3/3"]
    assert missing() == []


def test_a_command_keeps_no_absolute_path():
    text = ("sphinx-build /w/p/docs /w/p/_build -D cache=/tmp/c -D x=/w/p/y 'C:\\Users\\me' docs/rel "
            "/w/pother/z")
    assert results.without_paths(text, "/w/p") == (
        "sphinx-build docs _build -D cache=<path> -D x=y '<path>' docs/rel <path>")
    assert results.without_paths("run /w/p/docs") == "run <path>"


def test_shards_of_one_environment_load_as_one_set(tmp_path):
    a_set(tmp_path / "a", "1/2")
    other = "cd" + "0" * 62
    a_set(tmp_path / "b", "2/2", key=other)
    found = results.load([tmp_path / "a", tmp_path / "b"])
    assert list(found) == [NEW.label]
    both = found[NEW.label]
    assert both.roots == [tmp_path / "a" / "torch-2.16.0", tmp_path / "b" / "torch-2.16.0"]
    assert sorted(r.shard for r in both.runs) == ["1/2", "2/2"] and both.missing_shards() == []
    assert both.get(other) == entry() and both.get("ef" + "0" * 62) is None
    # The same label for another environment: refused, whether loaded or written.
    a_set(tmp_path / "c", env=replace(NEW, python="3.12.0"))
    with pytest.raises(SetProblem, match=r"'torch 2.16.0' is Environment.*, but .* says Environment"):
        results.load([tmp_path / "a", tmp_path / "c"])
    with pytest.raises(SetProblem, match="already holds"):
        a_set(tmp_path / "a", env=replace(NEW, device="cuda"))
    with pytest.raises(SetProblem, match="none: no such directory"):
        results.load([tmp_path / "none"])


def test_a_set_that_cannot_be_read_is_refused_naming_why(tmp_path):
    root = a_set(tmp_path / "a")
    moved = root.rename(root.parent / "torch-2.15.0")
    with pytest.raises(SetProblem, match=r"holds the environment 'torch 2\.16\.0', whose directory is "
                                         r"named 'torch-2\.16\.0'"):
        results.read_environment(moved)
    odd = tmp_path / "b" / "a-b"
    (odd / RUNS).mkdir(parents=True)
    (odd / ENVIRONMENT).write_text(json.dumps({"label": "a\nb", "torch": "1", "python": "3"}))
    with pytest.raises(SetProblem, match=r"not a readable result set \(label is 'a\\nb', not one line\)"):
        results.read_environment(odd)
    (odd / ENVIRONMENT).write_text(json.dumps({"label": "a b", "torch": "1", "python": "3"}))
    (odd / RUNS / "x.json").write_text(json.dumps({"shard": "0/2", "command": "", "date": DATE}))
    with pytest.raises(SetProblem, match="'0/2' is not a shard"):
        results.read_environment(odd)


def test_a_symbolic_link_is_never_a_run_file(tmp_path):
    root = a_set(tmp_path / "a")
    runs = root / RUNS
    (tmp_path / "elsewhere.json").write_text("{}")
    os.symlink(tmp_path / "elsewhere.json", runs / "link.json")
    written = RunInfo("", "sphinx-build -b autocast-check", DATE, keys=(KEY,),
                      held=results.held({KEY: entry()})).file
    assert sorted(p.name for p in runs.iterdir()) == sorted([written, "link.json"])
    assert [p.name for p in run_files(root)] == [written]
    linked = tmp_path / "b" / "torch-2.16.0"
    linked.mkdir(parents=True)
    os.symlink(runs, linked / RUNS)
    assert run_files(linked) == []


def test_the_same_results_made_again_are_the_run_file_there_is_and_others_another(tmp_path):
    """A check made again the same day by the same command: the same results (run times aside)
    write the run file that is there; other results under the same keys write another, which a
    build's digest of the set sees (it reads the run files, not the entries)."""
    def again(**made: object) -> list[str]:
        root = results.write(tmp_path, NEW, RunInfo("", "sphinx-build", DATE), {KEY: entry(**made)})  # type: ignore[arg-type]
        return sorted(p.name for p in run_files(root))

    first = again()
    assert len(first) == 1 and again(seconds=3.0) == first  # (a run time is no result)
    digest = setfiles.digest([tmp_path])
    assert len(again(verdict="differs")) == 2 and setfiles.digest([tmp_path]) != digest


def test_same_result_shards_and_split():
    assert results.same_result(entry(seconds=1.0), entry(seconds=2.0))
    assert not results.same_result(entry(output="1"), entry(output="2"))
    assert not results.same_result(entry("matches"), entry("differs"))
    assert results.parse_shard(" 2 / 3 ") == (2, 3)
    with pytest.raises(ValueError, match="more than 10000 shards"):
        results.parse_shard("1/10001")
    with pytest.raises(ValueError, match="more than 10000 shards"):
        results.parse_shard("1/" + "9" * 400)
    assert results.partition({"a": 1.0, "b": 3.0}, 5) == {"b": 1, "a": 2}  # the heaviest first
    assert results.partition({"y": 1.0, "x": 1.0}, 1) == {"x": 1, "y": 1}


# -- python -m sphinx_autocast_demo ------------------------------------------------------------

def test_the_version_and_a_missing_command(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0 and capsys.readouterr().out == f"sphinx-autocast-demo {__version__}\n"
    with pytest.raises(SystemExit) as info:
        cli.main([])
    assert info.value.code == 2 and "required: command" in capsys.readouterr().err


def test_merge_says_what_it_merged(tmp_path, capsys):
    a_set(tmp_path / "a")
    assert cli.main(["merge", str(tmp_path / "out"), str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == [f"torch 2.16.0: torch 2.16.0, Python 3.11.7, cpu; runs all; made on {DATE} by "
                   "sphinx-build -b autocast-check", f"merge: 1 result into {tmp_path / 'out'}"]
    assert results.load([tmp_path / "out"])[NEW.label].get(KEY) == entry()


def test_merge_into_a_file_or_from_nowhere_is_one_line(tmp_path, capsys):
    (tmp_path / "file").write_text("")
    assert cli.main(["merge", str(tmp_path / "file"), str(tmp_path)]) == 2
    assert capsys.readouterr().err == (f"merge: {tmp_path / 'file'} is a file, not a directory: name a "
                                       "directory for the merged set\n")
    assert cli.main(["merge", str(tmp_path / "out"), str(tmp_path / "none")]) == 1
    said = capsys.readouterr()
    assert said.err == f"merge: {tmp_path / 'none'}: no such directory\n"
    assert said.out == f"merge: 0 results into {tmp_path / 'out'}, 1 problem\n"
