"""``sphinx-build -b autocast-check``: one real CLI build of test-check-builder, as CI runs it."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET

import pytest
from conftest import copy_root, sphinx_build

CHECK = ("-b", "autocast-check")  # the last -b wins over conftest's html


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    src = copy_root("check-builder", tmp_path_factory)
    # Relative file names are what CI annotations and JUnit viewers need: run from the root.
    env = {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(src.parent)}
    first = sphinx_build(src, src / "_build" / "check", *CHECK, env=env)
    again = sphinx_build(src, src / "_build" / "check", *CHECK, env=env)
    return first, again


@pytest.fixture(scope="module")
def junit(build):
    return ET.parse(build[0].out / "junit.xml").getroot()


def cases(root):
    return {c.get("name"): c for c in root.iter("testcase")}


def test_exit_status_is_non_zero_and_no_page_is_written(build):
    first, _ = build
    assert first.returncode == 1, first.stderr
    assert "Traceback" not in first.stderr.split("WARNING")[0]  # the placeholders resolved
    written = sorted(p.name for p in first.out.iterdir() if not p.name.startswith("."))
    assert written == ["autocast-check.json", "junit.xml", "results"]  # results: the result set


def test_junit_counts_match_the_demos(junit):
    # passes x2 pass; stale and myst-stale fail; broken x2 (NameError) and the misspelt
    # option are errors; unrecorded is skipped.
    assert junit.tag == "testsuites"
    assert (junit.get("tests"), junit.get("failures"), junit.get("errors"), junit.get("skipped")) \
        == ("8", "2", "3", "1")
    suites = {s.get("name"): s for s in junit.findall("testsuite")}
    assert set(suites) == {"index", "markdown"}
    assert suites["index"].get("tests") == "7" and suites["markdown"].get("tests") == "1"
    assert suites["markdown"].get("failures") == "1"
    assert sum(int(s.get("tests")) for s in suites.values()) == 8


def test_every_case_has_its_file_and_line(junit):
    got = {name: (c.get("classname"), c.get("file"), c.get("line")) for name, c in cases(junit).items()}
    assert got == {
        "passes[same_as_forward]": ("index", "src/index.rst", "15"),
        "passes[off]": ("index", "src/index.rst", "15"),
        "stale[off]": ("index", "src/index.rst", "23"),  # the :expect: line
        "broken[same_as_forward]": ("index", "src/index.rst", "34"),  # the failing statement
        "broken[off]": ("index", "src/index.rst", "34"),
        "unrecorded[off]": ("index", "src/index.rst", "36"),
        "directive at line 45": ("index", "src/index.rst", "45"),
        "myst-stale[off]": ("markdown", "src/markdown.md", "6"),
    }
    for case in junit.iter("testcase"):
        float(case.get("time"))


def test_failures_errors_and_skips_carry_the_message(junit):
    by_name = cases(junit)
    stale = by_name["stale[off]"].find("failure")
    assert stale.get("type") == "mismatch"
    assert stale.get("message").startswith("value off: the page records 'raises RuntimeError'")
    assert "matches eager" in stale.text
    broken = by_name["broken[off]"].find("error")
    assert broken.get("type") == "snippet-error" and "NameError" in broken.get("message")
    assert "undefined_name" in broken.text
    typo = by_name["directive at line 45"].find("error")
    assert typo.get("type") == "directive" and ":expcet:" in typo.get("message")
    skipped = by_name["unrecorded[off]"].find("skipped")
    assert skipped.get("message") == "no recorded expectation for off; torch says: matches"
    for name in ("passes[off]", "passes[same_as_forward]"):
        assert list(by_name[name]) == []


def test_json_report(build):
    data = json.loads((build[0].out / "autocast-check.json").read_text())
    assert data["summary"] == {"cases": 8, "passed": 2, "failed": 2, "error": 3, "skipped": 1}
    stale = next(c for c in data["cases"] if c["name"] == "myst-stale[off]")
    assert (stale["file"], stale["line"], stale["status"]) == ("src/markdown.md", 6, "failed")
    assert (stale["expected"], stale["outcome"]) == ("differs", "matches")


def test_github_annotations(build):
    lines = [ln for ln in build[0].stdout.splitlines() if ln.startswith("::error ")]
    assert len(lines) == 5, build[0].stdout
    assert any(ln.startswith("::error file=src/markdown.md,line=6,title=autocast-demo mismatch%3A "
                             "myst-stale[off]::value off: the page records 'differs'") for ln in lines)
    broken = next(ln for ln in lines if "broken[off]" in ln)
    assert "%0A" in broken and "\n" not in broken  # multi-line messages stay one command


def test_the_report_holds_the_builds_numbers(build):
    first, again = build
    # The same numbers as the doctree directory's file (the second build wrote the report).
    report = json.loads((again.out / "autocast-check.json").read_text(encoding="utf-8"))
    assert report["stats"] == again.stats
    # Every demo that read its options ran once (the misspelt option's did not), and each of
    # the 7 values ran compiled and eager; the second build re-read the failing pages only.
    assert (first.stats["demos"], first.stats["values"], first.runs()) == (5, 7, (14, 0))
    # stale, myst-stale, the misspelt option, and broken's NameError: one finding for both
    # its values (the report has a case per value: 5 failed or in error).
    assert first.stats["failures"] == 4


def test_incremental_check_still_reports_every_demo(build):
    # Passing pages are not read again, failing ones are: the report still lists every case.
    _, again = build
    assert again.returncode == 1
    assert again.runs()[0] == 0
    assert ET.parse(again.out / "junit.xml").getroot().get("tests") == "8"


def test_no_annotations_outside_github(tmp_path_factory, build):
    src = build[0].src
    cache = src / ".autocast_demo_cache"  # the check build's (beside conf.py): no torch runs
    out = tmp_path_factory.mktemp("plain") / "check"
    result = sphinx_build(src, out, *CHECK, "-D", f"autocast_demo_cache_dir={cache}",
                          env={"GITHUB_ACTIONS": ""})
    assert result.returncode == 1
    assert "::error" not in result.stdout
    assert result.runs()[0] == 0
