"""``autocast-demo-summary``: the matrix of every demo, and how it follows changed results.

Six tiny pages (enough for ``-j 2`` to read in parallel, so the environment merge is used) with
one cheap demo each, and a summary on a page of its own. Built, then one demo is changed and the build
repeated in the same output directory, then built again with nothing changed.
"""

from __future__ import annotations

import importlib.metadata
from datetime import UTC, datetime
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import sphinx_build

PAGES = [f"page{i}" for i in range(6)]
DEMO = """{title}
{underline}

.. autocast-demo-setup::

   import torch

.. autocast-demo::
   :name: demo-{i}
   :values: off, same_as_forward
   :expect: {expect}

   x = torch.ones(2, requires_grad=True)
{code}
"""
MATCHING = "   torch.compile(lambda x: (x * 2).sum())(x).backward()"
RAISING = "   raise ValueError('changed')"


def write_page(src: Path, i: int, code: str, expect: str) -> None:
    title = f"Page {i}"
    (src / f"page{i}.rst").write_text(
        DEMO.format(title=title, underline="=" * len(title), i=i, code=code, expect=expect),
        encoding="utf-8")


def matrix(out: Path) -> dict[str, list[str]]:
    soup = BeautifulSoup((out / "matrix.html").read_text(encoding="utf-8"), "html.parser")
    rows = soup.select("table.autocast-demo-matrix tbody tr:not(.autocast-demo-matrix-page)")
    found = {row.find("a")["href"]: [td.get_text(" ", strip=True) for td in row.select("th, td")]
             for row in rows}
    found["lead"] = [soup.select_one(".autocast-demo-summary p").get_text()]
    found["header"] = [th.get_text(strip=True) for th in soup.select("table.autocast-demo-matrix thead th")]
    return found


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    src = tmp_path_factory.mktemp("summary") / "src"
    src.mkdir()
    (src / "conf.py").write_text('extensions = ["sphinx_autocast_demo"]\n'
                                 'suppress_warnings = ["autocast_demo.alike"]\n', encoding="utf-8")
    # The summary sits on a sibling page, as in the docs: a toctree parent of a changed page
    # is re-written by Sphinx anyway, which would hide a summary that does not follow results.
    (src / "index.rst").write_text(
        "Home\n====\n\n.. toctree::\n\n   matrix\n" + "".join(f"   {p}\n" for p in PAGES),
        encoding="utf-8")
    (src / "matrix.rst").write_text("Matrix\n======\n\n.. autocast-demo-summary::\n", encoding="utf-8")
    for i in range(len(PAGES)):
        write_page(src, i, MATCHING, "*: matches")
    out = src.parent / "html"
    first = sphinx_build(src, out, "-j", "2")
    before = matrix(out)
    page3 = (src / "page3.rst").read_text(encoding="utf-8")
    (src / "page3.rst").write_text(page3.replace(MATCHING, RAISING).replace(
        "*: matches", "*: raises ValueError"), encoding="utf-8")
    second = sphinx_build(src, out)
    after = matrix(out)
    stamp = (out / "matrix.html").stat().st_mtime_ns
    third = sphinx_build(src, out)
    return first, before, second, after, third, stamp, out


def test_matrix_lists_every_demo_of_every_page_with_links(builds):
    first, before, *_ = builds
    assert first.returncode == 0, first.stderr
    assert "WARNING" not in first.stderr, first.stderr
    lead, header = before["lead"], before["header"]
    demos = {href: cells for href, cells in before.items() if href not in ("lead", "header")}
    assert sorted(demos) == sorted(f"page{i}.html#demo-{i}" for i in range(len(PAGES)))
    for href, cells in demos.items():
        assert cells[0] == f"Page {href[4]}"  # the demo's section title, linked
        assert cells[1:] == ["\u2713 matches", "\u2713 matches", "holds"], cells
    assert header == ["demo", "off", "same_as_forward", "page records"]
    assert lead[0] == (f"6 demos on 6 pages. This build ({datetime.now(UTC).date().isoformat()}, torch "
                       f"{importlib.metadata.version('torch')}) checked 12 (demo, value) pairs: "
                       "compiled equals eager in 12 of them.")


def test_matrix_is_rewritten_when_a_result_changes(builds):
    _, before, second, after, *_ = builds
    assert second.returncode == 0, second.stderr
    changed = {href for href in after if after[href] != before[href]}
    assert changed == {"page3.html#demo-3", "lead"}
    # Each outcome counted (page 3's demo now raises under both of its values).
    assert after["lead"][0].endswith("compiled equals eager in 10, raises in 2 of them.")
    assert after["page3.html#demo-3"][1:] == [
        "\u26a0 raises ValueError", "\u26a0 raises ValueError", "holds"]
    # Only the changed page was read again; the summary page was only written again.
    reading = [line for line in second.stdout.splitlines() if "reading sources" in line]
    assert reading and all("page3" in line for line in reading), reading


def test_nothing_changed_nothing_rewritten(builds):
    *_, third, stamp, out = builds
    assert third.returncode == 0, third.stderr
    assert (out / "matrix.html").stat().st_mtime_ns == stamp
