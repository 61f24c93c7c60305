"""Never an unchecked result presented as checked ("No silent wrong result", items 3 and 6).

Real ``python -m sphinx`` builds of tests/roots/test-unchecked (a healthy demo, one that hangs,
one that kills its process, one on CUDA with ``autocast_demo_cuda_unavailable = "skip"``, and
a page whose snippet prints terminal escapes and fails with the build's paths in its message),
as HTML and as ``-b autocast-check``: run, rendered with execution off from an empty cache,
from the cache of the same torch, and from the cache of another torch.
"""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import CliBuild, column, copy_root, footer, installed_torch, sphinx_build, verdicts

TORCH = installed_torch()
OLD_TORCH = "9.9.9+old"
HAS_CUDA = Path("/dev/nvidiactl").exists()
CHECK = ("-b", "autocast-check")
NEVER = {"AUTOCAST_DEMO_EXECUTE": "never"}
MARKS = ("\u2713", "\u2717")  # what says "checked, holds" and "checked, broken"
no_cuda = pytest.mark.skipif(HAS_CUDA, reason="this machine has CUDA: the cuda demo runs")


def records(soup: BeautifulSoup, ident: str) -> list[str]:
    """The "as recorded?" column of demo ``ident``'s results table."""
    return column(soup, ident, ("as recorded?",))


def demo_box(soup: BeautifulSoup, ident: str):
    """The demo itself (its section may have the same id, and holds the page's legend)."""
    return soup.select_one(f"div.autocast-demo[id='{ident}']")


def matrix(build: CliBuild) -> dict[str, list[str]]:
    """Summary matrix rows by demo, without the demo's title: the cells of the values 'off' and
    'autocast' (empty where a demo has no such value), then 'page records'."""
    soup = build.html("matrix")
    rows = soup.select("table.autocast-demo-matrix tbody tr:not(.autocast-demo-matrix-page)")
    found = {row.find("a")["href"].split("#")[1]:
             [td.get_text(" ", strip=True) for td in row.select("th, td")[1:]] for row in rows}
    found["lead"] = [soup.select_one(".autocast-demo-summary p").get_text(" ", strip=True)]
    return found


def cases(build: CliBuild) -> dict[str, dict[str, str]]:
    root = ET.parse(build.out / "junit.xml").getroot()
    found = {}
    for case in root.iter("testcase"):
        status = next((child.tag for child in case if child.tag in ("failure", "error", "skipped")),
                      "passed")
        message = next((child.get("message", "") for child in case
                        if child.tag in ("failure", "error", "skipped")), "")
        found[case.get("name")] = {"status": status, "message": message,
                                   "text": "".join(child.text or "" for child in case)}
    return found


@pytest.fixture(scope="module")
def builds(tmp_path_factory) -> dict[str, CliBuild]:
    src = copy_root("unchecked", tmp_path_factory)
    cache = src.parent / "cache"
    empty = src.parent / "empty-cache"
    old = src.parent / "old-cache"

    def build(out: str, cache_dir: Path, *args: str, env: dict[str, str] | None = None) -> CliBuild:
        return sphinx_build(src, src / "_build" / out, "-E", "-d", str(src / "_build" / f"{out}.doctrees"),
                            "-D", f"autocast_demo_cache_dir={cache_dir}", *args, env=env)

    done = {"run": build("run", cache)}
    # The crash is checked in HTML only: a crashed run takes seconds to be noticed.
    done["check"] = build("check", cache, *CHECK, "-D", "exclude_patterns=_build,crash.rst")
    done["never"] = build("never", empty, env=NEVER)
    done["never-check"] = build("never-check", empty, *CHECK, env=NEVER)
    done["same"] = build("same", cache, env=NEVER)
    done["same-check"] = build("same-check", cache, *CHECK, env=NEVER)
    # A cache restored from a CI run of an older torch: the same entries, another torch.
    old.mkdir()
    for entry in cache.glob("*/*.json"):
        data = json.loads(entry.read_text(encoding="utf-8"))
        assert data["torch_version"] == TORCH
        data["torch_version"] = OLD_TORCH
        (old / entry.parent.name).mkdir(exist_ok=True)
        (old / entry.parent.name / entry.name).write_text(json.dumps(data), encoding="utf-8")
    done["old"] = build("old", old, env=NEVER)
    done["old-check"] = build("old-check", old, *CHECK, env=NEVER)
    return done


# -- what was run in this build ----------------------------------------------------------------


def test_a_checked_demo_says_so_with_its_torch(builds):
    soup = builds["run"].html("index")
    assert verdicts(soup, "healthy") == ["\u2713 matches eager"]
    # Its record holds: no "as recorded?" column to say "yes", its footer says it.
    assert footer(soup, "healthy").startswith(f"Checked at build time with torch {TORCH}. What "
                                              "the page records of each value holds \u00b7 ")


@pytest.mark.parametrize(("ident", "why"), [
    ("hang", "the compiled run timed out"), ("crash", "the compiled run crashed"),
])
def test_a_run_that_did_not_finish_is_not_checked_and_not_no_longer_true(builds, ident, why):
    soup = builds["run"].html("index" if ident == "hang" else ident)
    assert verdicts(soup, ident) == [f"\u2014 not checked: {why}"]
    assert records(soup, ident) == ["records matches (not checked)"]
    box = demo_box(soup, ident)
    text = box.get_text(" ", strip=True)
    assert not box.select(".autocast-demo-stale-cell") and not any(m in text for m in MARKS)
    assert footer(soup, ident).startswith(f"Not checked in this build: {why} \u00b7 ")
    assert "Checked" not in footer(soup, ident)
    # Still a failure of the build, located, as before.
    assert builds["run"].returncode == 1


def test_the_summary_matrix_counts_only_what_was_checked(builds):
    rows = matrix(builds["run"])
    assert rows["healthy"] == ["\u2713 matches", "", "holds"]
    assert rows["hang"] == ["\u2014 timed out", "", "\u2014 not checked"]
    assert rows["crash"] == ["\u2014 crashed", "", "\u2014 not checked"]
    # healthy and the failing snippet of paths.rst were checked; hang, crash (and cuda) were not.
    checked, unchecked = (4, 2) if HAS_CUDA else (2, 4)
    assert rows["lead"][0].endswith(
        f"torch {TORCH}) checked {checked} (demo, value) pairs: compiled equals eager in "
        f"{checked - 1}, raises in 1 of them; {unchecked} not checked.")


def test_the_check_builder_never_passes_what_did_not_finish(builds):
    found = cases(builds["check"])
    assert found["healthy[off]"]["status"] == "passed"
    assert found["hang[off]"]["status"] == "error"
    assert builds["check"].returncode == 1


# -- execution off, nothing cached ---------------------------------------------------------------


def test_execution_off_with_an_empty_cache_checks_nothing_and_says_so(builds):
    build = builds["never"]
    assert build.returncode == 0, build.stderr
    for ident in ("healthy", "hang", "crash"):
        soup = build.html("crash" if ident == "crash" else "index")
        assert verdicts(soup, ident) == ["\u2014 not run: execution is off and nothing is cached"]
        assert records(soup, ident) == ["records matches (not checked)"], ident
        assert footer(soup, ident).startswith("Not checked in this build: not run (execution is "
                                              "off and nothing is cached) \u00b7 "), ident
        assert not any(m in demo_box(soup, ident).get_text() for m in MARKS)
    rows = matrix(build)
    assert rows["healthy"] == ["\u2014 not run", "", "\u2014 not checked"]
    lead = rows["lead"][0]
    assert lead.startswith("5 demos on 3 pages. This build (") and lead.endswith(
        f"torch {TORCH}) checked 0 (demo, value) pairs; 6 not checked."), lead


def test_execution_off_with_an_empty_cache_passes_no_case(builds):
    found = cases(builds["never-check"])
    assert found and all(c["status"] == "skipped" for c in found.values()), found


# -- rendered from the cache ---------------------------------------------------------------------


def test_a_result_cached_by_the_same_torch_is_checked_and_says_from_where(builds):
    soup = builds["same"].html("index")
    assert verdicts(soup, "healthy") == ["\u2713 matches eager"]
    assert "What the page records of each value holds" in footer(soup, "healthy")
    text = footer(soup, "healthy")
    assert text.startswith(f"Checked with torch {TORCH} by an earlier build (cached result")
    assert cases(builds["same-check"])["healthy[off]"]["status"] == "passed"


def test_a_result_cached_by_another_torch_is_not_checked(builds):
    build = builds["old"]
    soup = build.html("index")
    [cell] = verdicts(soup, "healthy")
    assert cell.startswith(f"matches eager with torch {OLD_TORCH}") and not cell.startswith(MARKS)
    assert records(soup, "healthy") == ["records matches (not checked)"]
    assert footer(soup, "healthy").startswith(
        f"Rendered from results of torch {OLD_TORCH} cached earlier, not checked with the "
        f"installed torch {TORCH} \u00b7 ")
    assert matrix(build)["healthy"] == [f"\u2014 torch {OLD_TORCH}: matches", "", "\u2014 not checked"]
    assert f"not checked with the installed torch {TORCH}" in build.stdout
    case = cases(builds["old-check"])["healthy[off]"]
    assert case["status"] == "skipped"
    assert OLD_TORCH in case["message"] and TORCH in case["message"]


# -- no CUDA on this machine, autocast_demo_cuda_unavailable = "skip" -----------------------------


@no_cuda
def test_cuda_demos_are_skipped_quietly_and_counted_once(builds):
    build = builds["run"]
    cuda_line = next(i for i, line in enumerate((build.src / "index.rst").read_text().splitlines(), 1)
                     if line.strip() == ":name: cuda") - 1
    assert f"index.rst:{cuda_line}:" not in build.stderr
    assert "autocast_demo_cuda_unavailable" not in build.stderr
    assert "autocast-demo: 1 CUDA demo skipped: the build machine has no CUDA" in build.stdout
    soup = build.html("index")
    assert verdicts(soup, "cuda") == ["\u2014 skipped: no CUDA on the build machine"] * 2
    assert records(soup, "cuda") == ["records matches (not checked)"] * 2
    assert footer(soup, "cuda").startswith(
        "Not checked in this build: skipped (no CUDA on the build machine) \u00b7 ")
    assert matrix(build)["cuda"] == ["\u2014 skipped: no CUDA"] * 2 + ["\u2014 not checked"]
    found = cases(builds["check"])
    assert found["cuda[off]"]["status"] == found["cuda[autocast]"]["status"] == "skipped"


# -- paths and terminal escapes ------------------------------------------------------------------


def test_pages_hold_no_path_of_the_build_and_no_escape(builds):
    build = builds["run"]
    html = (build.out / "paths.html").read_text(encoding="utf-8")
    assert "\x1b" not in html and "\x07" not in html
    assert str(build.src) not in html and str(build.src.parent) not in html
    assert "/tmp/" not in html
    printed = build.html("paths").find(id="noisy-error").select(".autocast-demo-output pre")[0]
    text = printed.get_text()
    assert "red in . \\x07" in text
    assert 'File "paths.rst", line 10, in <module>' in text
    assert "RuntimeError: cannot read data.bin" in text


def test_messages_hold_no_path_of_the_build_and_no_escape(builds):
    build = builds["run"]
    src = build.src
    # The location is where Sphinx puts its own (an absolute path, as Sphinx 9 prints them);
    # the message itself names files relative to the docs.
    head = (f"{src / 'paths.rst'}:10: WARNING: value off: the snippet raised RuntimeError: "
            "cannot read data.bin\n")
    assert head in build.stderr
    message = build.stderr.split(head, 1)[1].split("[autocast_demo.snippet-error]")[0]
    assert 'File "paths.rst", line 10, in <module>' in message
    assert str(src) not in message
    # Sphinx 7.2 itself erases each progress line with ESC[2K even when not on a terminal: not
    # ours. Any other escape would be.
    assert "\x1b" not in build.stderr and "\x1b" not in build.stdout.replace("\x1b[2K", "")
    summary = re.split(r"failures?:", build.stdout, maxsplit=1)[1]
    assert "cannot read data.bin" in summary and f"{src}/data.bin" not in summary
    case = cases(builds["check"])["noisy-error[off]"]
    assert 'File "paths.rst", line 10, in <module>' in case["text"]
    assert str(src) not in case["text"] and "\x1b" not in case["text"]
