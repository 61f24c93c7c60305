"""The project's own docs, built once as CI builds them (``-W``), then checked page by page.

The expected verdicts below come from the measured facts (``shared/seed/README.md``), not
from the pages' own ``:expect:`` lines, so a page whose records and results drift together
still fails here. How the reference page's tables follow the option table, without a build:
tests/unit/test_options.py.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from conftest import sphinx_build, verdicts
from measured import EXPECTED, OUTPUTS, M
from pinned import assert_pinned

from sphinx_autocast_demo.core import config
from sphinx_autocast_demo.present import cells, matrix
from sphinx_autocast_demo.read import directives

DOCS = Path(__file__).parents[2] / "docs"
SNAPSHOTS = Path(__file__).parent / "snapshots"
#: The releases docs/_results keeps, and of those the ones that are not this build's torch
#: (with torch 2.14.1 installed, its set is this build's own: one environment fewer).
KEPT = ("2.14.1", "2.15.0")
try:
    INSTALLED = importlib.metadata.version("torch").split("+")[0]
except importlib.metadata.PackageNotFoundError:  # pytest -m "not torch" collects it without torch
    INSTALLED = ""
OTHERS = tuple(release for release in KEPT if release != INSTALLED)
PAGES = ("index", "behaviour", "upstream", "matrix", "guide", "myst", "reference", "compile-facts")


#: The result cache of the docs, beside their conf.py, as any build of them leaves it (CI's docs
#: step runs the README's docs command before the tests). A copy serves each demo whose key
#: still holds, as it would serve a writer: the same commit runs nothing again, an edited demo
#: runs. None there: every demo runs.
BUILT = DOCS / ".autocast_demo_cache"


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    out = tmp_path_factory.mktemp("docs") / "html"
    cache = out.parent / "cache"
    if BUILT.is_dir():
        shutil.copytree(BUILT, cache)
    return sphinx_build(DOCS, out, "-W", "--keep-going", "-D", f"autocast_demo_cache_dir={cache}")


def page(build, name: str) -> BeautifulSoup:
    return build.html(name)


def demos_in(soup: BeautifulSoup) -> list[str]:
    return [box["id"] for box in soup.select("div.autocast-demo[id]")]


def printed(soup: BeautifulSoup, ident: str) -> dict[str, str]:
    """``Printed under <value>:`` blocks of one demo -> their text."""
    box = soup.find(id=ident)
    found = {}
    for out in box.select("div.autocast-demo-output"):
        label = out.find("strong").get_text().removeprefix("Printed under ").rstrip(":")
        found[label] = out.find("pre").get_text().strip()
    return found


def test_docs_build_with_W_and_no_warning(build):
    assert build.returncode == 0, build.stderr[-3000:]
    assert "WARNING" not in build.stderr and "ERROR" not in build.stderr, build.stderr
    for name in PAGES:
        assert (build.out / f"{name}.html").exists(), name


def all_demos(build) -> list[tuple[str, str]]:
    """(page, demo) for every demo of the site, other engineers' pages included."""
    found = []
    for path in sorted(build.out.glob("*.html")):
        if path.stem not in ("matrix", "search", "genindex"):
            found += [(path.stem, ident) for ident in demos_in(page(build, path.stem))]
    return found


def test_every_demo_gives_the_measured_verdicts(build):
    seen = {(name, ident) for name in PAGES for ident in demos_in(page(build, name))}
    assert seen == set(EXPECTED), "a demo was added or removed: add it to EXPECTED"
    for name, ident in all_demos(build):  # pages written elsewhere: at least nothing is stale
        assert not stale(page(build, name), ident), (name, ident)
    for (name, ident), expected in EXPECTED.items():
        box = page(build, name).find(id=ident)
        # Each record the page makes holds (none is stale).
        assert not stale(page(build, name), ident), (name, ident)
        if expected == OUTPUTS:  # shows what it printed, no table
            assert box.select_one("table") is None and box.select(".autocast-demo-output"), ident
            continue
        cells = verdicts(page(build, name), ident)
        assert len(cells) == len(expected), (ident, cells)
        for cell, start in zip(cells, expected, strict=True):
            assert cell.startswith(start), (ident, cells)


def outcome(cell: str) -> str:
    """The outcome a cell names, whatever it says around it: "matches", "differs", "raises", or
    "no-config" (a value whose config this torch lacks)."""
    if "no such config" in cell:
        return "no-config"
    return next(w for w in re.split(r"[\s,]+", cell) if w in ("matches", "differs", "raises"))


def stale(soup: BeautifulSoup, ident: str) -> list[object]:
    """What in demo ``ident`` says that the page's record no longer holds."""
    return soup.find(id=ident).select(".autocast-demo-stale, .autocast-demo-stale-cell")


def test_the_numbers_the_text_quotes(build):
    behaviour = page(build, "behaviour")
    # Where the compiled run printed something else, the eager run's output is shown too:
    # eagerly the backward runs outside autocast, in float32, and does not overflow.
    assert printed(behaviour, "fp16-overflow") == {
        "same_as_forward": "inf", "off": "65536.0", "fp16": "inf",
        "same_as_forward, run eagerly": "65536.0", "fp16, run eagerly": "65536.0"}
    # Eagerly the config is never read: all three gradients are equal.
    assert printed(behaviour, "no-recompile") == {"every value": "True False",
                                                  "every value, run eagerly": "True True"}
    assert printed(behaviour, "current-default") == {"default": "same_as_forward"}
    patch = printed(behaviour, "patch-one-region")
    assert patch["same_as_forward"] == "same_as_forward" and patch["off"] == "off"
    # The bf16 rounding the text talks about (seed: ~8e-2 for 64x64 randn).
    cell = verdicts(behaviour, "backward-outside")[0]
    assert 1e-2 < float(re.search(r"max \|\u0394\| ([0-9.e+-]+)", cell).group(1)) < 1.0
    # Only inductor's forward output differs from eager (~1e-4), within the output tolerance.
    inductor = verdicts(behaviour, "no-forward-autocast-inductor")[2]
    assert 1e-6 < float(re.search(r"max \|\u0394\| ([0-9.e+-]+)", inductor).group(1)) < 1e-3


def test_upstream_snippets_render_the_error_each_gives(build):
    upstream = page(build, "upstream")
    errors = {
        "upstream-ellipsis": "ValueError: Expected `device_type` of type `str`",
        "upstream-undefined-region": "NameError: name 'region' is not defined",
        "upstream-undefined-z": "NameError: name 'z' is not defined",
        "upstream-off": "ValueError: Expected `device_type` of type `str`",
        "upstream-patch": "SyntaxError",
        "upstream-device-keyword":
            "TypeError: autocast.__init__() got an unexpected keyword argument 'device'",
        "upstream-kwargs-dict": "BackendCompilerFailed",
    }
    for ident, text in errors.items():
        shown = " ".join(printed(upstream, ident).values())
        assert text in shown, (ident, shown)
    bare = printed(upstream, "upstream-bare-import")
    # (one value: its block is named by it, not "every value")
    assert bare == {"off": "AttributeError: module 'torch._functorch' has no attribute 'config'"}


def test_every_python_block_on_the_behaviour_pages_is_a_checked_demo(build):
    for name in ("behaviour", "upstream", "myst"):
        for block in page(build, name).select("div.highlight-python"):
            demo = block.find_parent("div", class_="autocast-demo")
            setup = "autocast-demo-setup" in block.get("class", [])
            # (the lines that set a value, listed once under the first table: run alone below)
            lines = "autocast-demo-set" in block.get("class", [])
            assert demo is not None or setup or lines, (name, block.get_text()[:80])


def test_the_matrix_has_every_demo_and_agrees_with_each_table(build):
    matrix = page(build, "matrix")
    table = matrix.select_one("table.autocast-demo-matrix")
    header = [th.get_text(strip=True) for th in table.select("thead th")]
    assert header[0] == "demo" and header[-1] == "page records"
    # The values most demos use get a column each; the rarer ones share "other values".
    assert header[1:-1] == ["default", "same_as_forward", "off", "autocast", "other values"]
    values = header[1:-2]
    headings = table.select("tbody tr.autocast-demo-matrix-page")
    demos = all_demos(build)
    pages = [tr.find("a")["href"].removesuffix(".html") for tr in headings]
    assert sorted(pages) == sorted({name for name, _ in demos})
    # Reading order (the toctree): the front page, then the behaviour pages, then the guide.
    mine = [name for name in pages if name in PAGES]
    assert mine == ["index", "behaviour", "upstream", "guide", "myst", "compile-facts"]
    rows = [tr for tr in table.select("tbody tr") if tr not in headings]
    linked = []
    for row in rows:
        href = row.find("a")["href"]
        target, _, ident = href.partition("#")
        name = target.removesuffix(".html")
        assert page(build, name).find(id=ident) is not None, href  # the link lands on the demo
        linked.append((name, ident))
        tds = row.select("th, td")  # (the demo's cell is the row header)
        assert len(tds) == len(header)
        shown = {v: tds[1 + i].get_text(" ", strip=True) for i, v in enumerate(values)
                 if tds[1 + i].get_text(strip=True)}
        for item in tds[-2].select("p"):  # "bad: \u26a0 raises BackendCompilerFailed"
            value, _, verdict = item.get_text("", strip=True).partition(":")
            shown[value] = verdict.strip()
        soup = page(build, name)
        if EXPECTED.get((name, ident)) != OUTPUTS:  # a demo that shows only outputs has no table
            # (a demo that varies nothing names its one row, the matrix's "default", as written)
            names = [tr.select_one("th strong, td strong").get_text().replace("as written", "default")
                     for tr in soup.find(id=ident).select("table.autocast-demo-results tbody tr")]
            own = dict(zip(names, verdicts(soup, ident), strict=True))
            assert {v: outcome(c) for v, c in shown.items()} == {v: outcome(c) for v, c in own.items()}, (
                ident, shown, own)
        # (this build, and each kept set of another release)
        assert tds[-1].get_text(strip=True) == f"holds in all {1 + len(OTHERS)}"
    assert sorted(linked) == sorted(demos)
    assert [n for n, _ in linked] == sorted((n for n, _ in linked), key=pages.index)
    # Demos that share a section are told apart by their captions.
    titles = [row.find("a").get_text() for row, (name, _) in zip(rows, linked, strict=True)
              if name in PAGES]
    assert len(set(titles)) == len(titles), titles
    # The lead sentence counts what the table shows.
    matching = sum(td.get_text(strip=True).startswith(M) for row in rows for td in row.select("td"))
    matching += sum(len(row.select(".autocast-demo-others .autocast-demo-matches")) for row in rows)
    lead = f"{len(demos)} demos on {len(pages)} pages"
    assert lead in matrix.get_text(" ", strip=True)
    assert f"compiled equals eager in {matching}," in matrix.get_text(" ", strip=True)
    # A recipe whose snippet patches the config ran under "off" in every row: its cells say so,
    # and the lead counts them apart (no verdict of the value a column names).
    recipe = next(row for row in rows if row.find("a")["href"].endswith("#recipe-patch"))
    # (its cells in column order, the empty ones of values it does not run left out)
    said = [td.get_text(" ", strip=True) for td in recipe.select("td") if td.get_text(strip=True)]
    assert said[0] == "\u2713 matches under the snippet's own value", said  # same_as_forward
    assert said[1] == "\u2713 matches", said  # (the off row: it ran under its own value)
    replaced = sum("the snippet's own value" in td.get_text() for row in rows for td in row.select("td"))
    assert (f"({replaced} under a value their snippet set itself, no verdict of the value their "
            "column names)") in matrix.get_text(" ", strip=True)
    # The three releases agree on every verdict, and the matrix says so in plain text.
    changes = matrix.select_one("p.autocast-demo-changes").get_text(" ", strip=True)
    assert changes.startswith("No verdict changed between torch") and "2.15.0" in changes


def test_reference_tables_list_every_option_with_type_and_default(build):
    reference = page(build, "reference")
    tables = reference.select("table.autocast-demo-reference")
    demo_rows, setup_rows, conf_rows = (
        # ("": a name's parts, each a span between the <wbr>s that let it wrap, read as one)
        [[" ".join(c.get_text("").split()) for c in tr.select("td")] for tr in t.select("tbody tr")]
        for t in (tables[0], tables[1], tables[2])
    )
    assert [r[0] for r in demo_rows] == [f":{o}:" for o in directives.AutocastDemo.known]
    assert [r[0] for r in setup_rows] == [f":{o}:" for o in directives.AutocastDemoSetup.known]
    assert [r[0] for r in conf_rows] == [config.PREFIX + o.name for o in config.OPTIONS]
    for row, option in zip(conf_rows, config.OPTIONS, strict=True):
        assert row[1] == " or ".join(t.__name__ for t in option.types)
        assert row[2] == repr(option.default)
    assert all("?" not in r[1:] for r in demo_rows + setup_rows)
    assert "autocast-demo-summary takes no options." in reference.get_text()


def test_guide_shows_the_real_sources(build):
    guide = page(build, "guide")
    text = guide.get_text()
    assert (DOCS / "examples" / "failing" / "output.txt").read_text().splitlines()[1] in text
    assert ":name: myst-backward-inside" in text  # the MyST page's own source
    for heading in ("Install", "Add the extension", "Write a demo in reST", "Write a demo in MyST Markdown",
                    "Record expectations", "Setup code", "Running in CI", "Reading a failure",
                    "Troubleshooting"):
        assert any(heading in h2.get_text() for h2 in guide.select("h2")), heading


def test_theme_has_dark_mode_and_our_css(build):
    html = (build.out / "behaviour.html").read_text(encoding="utf-8")
    assert "pydata-sphinx-theme" in html or "pydata_sphinx_theme" in html
    assert "theme-switch" in html  # light / dark / auto button
    assert "_static/autocast_demo.css" in html
    css = (build.out / "_static" / "autocast_demo.css").read_text(encoding="utf-8")
    assert 'html[data-theme="dark"]' in css and "overflow-x: auto" in css


def test_the_docs_show_the_kept_torch_releases_beside_this_one(build):
    """docs/_results holds torch 2.14.1 and 2.15.0 (tox -e results-torch214,results-torch215):
    every demo's table has their columns, and the matrix names every environment."""
    kept = sorted(p.name for p in (DOCS / "_results").iterdir() if (p / "environment.json").is_file())
    assert kept == ["torch-2.14.1", "torch-2.15.0"]
    behaviour = page(build, "behaviour")
    table = behaviour.find(id="backward-outside").select_one("table.autocast-demo-results")
    header = [th.get_text(" ", strip=True) for th in table.select("thead th")]
    # The three agree on every value, so one column says so, headed by all three.
    torch = importlib.metadata.version("torch")
    assert header == ["backward_pass_autocast",
                      f"same in torch {torch} (this build) \u00b7 " + " \u00b7 ".join(OTHERS)]
    # What the page records holds in all three: measured, not assumed (the sets are real runs);
    # said once for the page, not in a column of "yes".
    said = " ".join(p.get_text(" ", strip=True) for p in behaviour.select("p.autocast-demo-provenance"))
    assert f"What the page records of each value holds in all {1 + len(OTHERS)} environments" in said
    matrix = page(build, "matrix").select_one("ul.autocast-demo-environments").get_text(" ")
    assert "torch 2.14.1 : torch 2.14.1, Python" in " ".join(matrix.split()) or "torch 2.14.1" in matrix
    assert "made on" in matrix and "by tox -e results-torch215" in matrix


def test_every_match_within_tolerance_names_the_tensor_that_differed(build):
    # Inductor's float32 forward differs from eager by ~1e-4 (within the output tolerance): the
    # cell says by how much, and in which tensor, as a difference does.
    within = re.compile("matches eager \\(max \\|\u0394\\| [^)]*\\)")
    found = [m for name in PAGES for m in within.findall(page(build, name).get_text())]
    assert len(found) > 10, found
    # (one number, or where releases share a column, the range theirs span: rounded otherwise
    # on another CPU)
    number = "\\d\\.\\de-\\d\\d"
    named = re.compile(f"matches eager \\(max \\|\u0394\\| (?:up to )?{number}(?: to {number})? "
                       "in [A-Za-z_][\\w.\\[\\]]*\\)")
    assert [m for m in found if not named.fullmatch(m)] == [], found


def test_a_page_says_where_other_releases_results_come_from_once_in_a_readers_words(build):
    for name in ("index", "behaviour", "upstream", "myst"):
        lines = [p.get_text(" ", strip=True) for p in page(build, name).select(".autocast-demo-provenance")]
        # The two kept releases were run alike: one sentence for both, once on the page.
        both = " and ".join(f"torch {release}" for release in OTHERS) + ": run on "
        assert sum(both in line for line in lines) == 1, (name, lines)
        them = "them" if len(OTHERS) > 1 else "it"
        assert all(f"kept with these docs; this build did not run {them}" in line
                   for line in lines if both in line), (name, lines)
        # How they were made is the maintainers' (the matrix says it), not the reader's.
        assert not [line for line in lines if "tox -e" in line or "result set" in line], (name, lines)


def copy_blocks(soup: BeautifulSoup) -> list[str]:
    """The code a reader of the page copies to use: each value's lines (in a results table, or
    listed once under the first), and the front page's answers."""
    found = soup.select("div.autocast-demo-set pre, table.autocast-demo-answers div.highlight-python pre")
    return [pre.get_text() for pre in found]


def test_every_line_to_copy_runs_alone_in_a_fresh_python(build):
    """Issue 38: the copy button of the front page gave ``torch._functorch.config.
    backward_pass_autocast = "off"``, an AttributeError after a bare ``import torch``. Each
    block, pasted alone into a fresh interpreter with torch installed, must run."""
    blocks: dict[str, list[str]] = {}
    for path in sorted(build.out.glob("*.html")):
        for code in copy_blocks(page(build, path.stem)):
            blocks.setdefault(code, []).append(path.stem)
    assert len(blocks) >= 10 and "index" in {p for pages in blocks.values() for p in pages}, blocks

    def paste(code: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              timeout=300, cwd=build.out)

    # Each in its own interpreter, as many at a time as there are cores: every one is an
    # `import torch`, seconds of CPU, and none sees another.
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        done = dict(zip(blocks, pool.map(paste, blocks), strict=True))
    failed = {code: (sorted(set(blocks[code])), run.stderr.strip().splitlines()[-1:])
              for code, run in done.items() if run.returncode}
    assert failed == {}, failed


def test_a_page_shows_each_line_to_copy_once_and_every_row_reaches_its_own(build):
    """Issue 38: ``...backward_pass_autocast = 'same_as_forward'`` stood 12 times on the behaviour
    page. Each value's lines stand once on a page; a row without them links to them."""
    for name in PAGES:
        soup = page(build, name)
        lines = [pre.get_text() for pre in soup.select("div.autocast-demo-set pre")]
        assert {code: n for code, n in Counter(lines).items() if n > 1} == {}, name
        for th in soup.select("table.autocast-demo-results tbody th.autocast-demo-value"):
            value = th.find("strong").get_text()
            if th.select_one(".autocast-demo-set-default, div.autocast-demo-set"):
                continue  # (torch's default sets nothing; a row that shows its own lines)
            link = th.select_one("p.autocast-demo-set-listed a[href^='#']")
            assert link is not None, (name, th.get_text(" ", strip=True))
            target = soup.find(id=link["href"][1:])
            assert target is not None, (name, link["href"])
            assert value in target.find_next("strong").get_text().split(", "), (name, value)
            assert target.find_next("div", class_="autocast-demo-set") is not None
    # The behaviour page's tables share same_as_forward and off: listed once, under the first.
    listed = page(build, "behaviour").select("div.autocast-demo-lines div.autocast-demo-set pre")
    assert sum("'same_as_forward'" in pre.get_text() for pre in listed) == 1


def test_every_column_a_page_quotes_is_a_column_of_its_tables(build):
    """Issue 38: the behaviour page explained a *compiled = eager?* column that none of its
    tables had. Every name of a column the extension writes that a page quotes (emphasised, as
    code, in quotes) is the header of a table on the site."""
    names = set(cells.HEADERS.values()) | set(matrix.HEADERS)
    headers: set[str] = set()
    quoted: list[tuple[str, str]] = []
    for path in sorted(build.out.glob("*.html")):
        soup = page(build, path.stem)
        headers |= {th.get_text(" ", strip=True) for th in soup.select("table thead th")}
        article = soup.select_one("article")
        if article is None:  # (search, genindex)
            continue
        for said in article.select("em, code, span.pre"):
            if said.find_parent(["table", "pre"]) is None:
                quoted.append((path.stem, said.get_text(" ", strip=True)))
        for block in article.select("p, li"):
            if block.find_parent("table") is None:
                quoted += [(path.stem, q) for q in re.findall(r'["\u201c]([^"\u201d]+)["\u201d]',
                                                              block.get_text(" ", strip=True))]
    named = [(name, text) for name, text in quoted if text in names]
    assert named, "no page quotes a column's name: this test checks nothing"
    assert [(name, text) for name, text in named if text not in headers] == []


def test_as_recorded_is_a_column_only_where_a_record_does_not_hold(build):
    """Issue 38: "as recorded?" said "yes" in all 42 cells of the front page. Where every record
    of a demo holds its table has no such column, and the page says it once."""
    for name in PAGES:
        soup = page(build, name)
        for table in soup.select("div.autocast-demo table.autocast-demo-results"):
            header = [th.get_text(" ", strip=True) for th in table.select("thead th")]
            if cells.HEADERS["recorded"] in header:
                said = [td.get_text(" ", strip=True) for td in table.select("td.autocast-demo-col-recorded")]
                assert not all(text.startswith("yes") for text in said), (name, said)
    for name in ("index", "behaviour", "upstream", "guide", "myst"):
        lines = [p.get_text(" ", strip=True) for p in page(build, name).select("p.autocast-demo-provenance")]
        holds = [line for line in lines if "What the page records of each value holds" in line]
        assert len(holds) == 1, (name, lines)  # the page's line, or its one demo's footer


def test_the_legend_is_short_and_once_a_page(build):
    """Issue 38: a 59-word legend stood on 6 pages. Once a page, in at most 30 words."""
    for name in PAGES:
        if name == "matrix":  # (the matrix's own legend, on its page alone)
            continue
        legends = [p.get_text(" ", strip=True) for p in page(build, name).select("p.autocast-demo-legend")]
        assert len(legends) <= 1, (name, legends)
        assert all(len(text.split()) <= 30 for text in legends), (name, legends)


def test_every_mark_a_cell_shows_means_its_verdict_and_is_in_its_pages_legend(build):
    """Issue 47: "\u2713 differs, as recorded" stood in a match's green under a legend that says
    \u2713 means compiled matches eager; a record cell said \u2713/\u2717 for "holds"; the matrix's
    legend gave "\u2014" a meaning its cells did not have. A mark means one thing everywhere, and
    each page's legend names exactly the marks its cells show."""
    verdicts = {"\u2713": "autocast-demo-matches", "\u2717": "autocast-demo-differs",
                "\u26a0": "autocast-demo-raises"}
    seen_anywhere: set[str] = set()
    for name in PAGES:
        soup = page(build, name)
        legend = " ".join(p.get_text(" ", strip=True) for p in soup.select("p.autocast-demo-legend"))
        shown: set[str] = set()
        for td in soup.select("table.autocast-demo-results td"):
            classes = set(td.get("class", []))
            if classes & {"autocast-demo-col-recorded", "autocast-demo-holds",
                          "autocast-demo-stale-cell"} and not classes & set(verdicts.values()):
                # Whether a record holds: words, never a mark.
                assert not any(m in td.get_text() for m in verdicts), (name, td.get_text())
            for mark, css in verdicts.items():
                carriers = [el for el in (td, *td.select("p, span")) if mark in el.get_text()]
                if carriers:
                    shown.add(mark)
                    assert any(css in el.get("class", []) for el in carriers), (name, str(td)[:300])
            if any("\u2014" in el.get_text() and set(el.get("class", [])) & {
                    "autocast-demo-no-config", "autocast-demo-error", "autocast-demo-unchecked"}
                   for el in (td, *td.select("p, span"))):
                shown.add("\u2014")
        if not legend:
            continue
        named = {mark for mark in (*verdicts, "\u2014") if f"{mark} " in legend}
        assert named == shown, (name, legend, shown)
        seen_anywhere |= shown
    assert {"\u2713", "\u2717", "\u26a0"} <= seen_anywhere  # (the check saw each mark: it can fail)


def test_a_cell_that_counts_more_differences_names_the_largest(build):
    """Issue 38: "and 2 more" hid a gradient differing by 4.0 behind a shown 3.05e-02. The
    recipes' model differs under a wrong value in its head's gradient (about 3e-2) and in its
    projection's (2.0 and 4.0, measured): the cell names the largest."""
    behaviour = page(build, "behaviour")
    counted = [td.get_text(" ", strip=True) for ident in ("recipe-after", "recipe-inside", "recipe-another")
               for td in behaviour.find(id=ident).select("td") if "and 2 more" in td.get_text()]
    assert counted, "the recipes no longer differ in several gradients"
    for text in counted:
        shown = float(re.search(r"max \|\u0394\| ([0-9.e+-]+)\) and 2 more", text).group(1))
        assert shown >= 2.0, text


#: A claim of the matrix page's "How to read it": ``*<row>* is green (only) under ...``.
CLAIM = re.compile(r"^\s*is green (?P<only>only )?under (?P<what>every value|\S+(?: and \S+)*)")


def test_the_matrix_explanation_is_true_of_the_table(build):
    """Issue 38: "How to read it" described two values where the recipes had three. Each
    sentence that says where a row is green is checked against that row of the matrix."""
    matrix = page(build, "matrix")
    table = matrix.select_one("table.autocast-demo-matrix")
    header = [th.get_text(strip=True) for th in table.select("thead th")]
    rows = {}
    for tr in table.select("tbody tr"):
        if "autocast-demo-matrix-page" in tr.get("class", []):
            continue
        tds = tr.select("th, td")
        greens = set()
        shown = set()
        for column, td in zip(header[1:-2], tds[1:-2], strict=True):
            if td.get_text(strip=True):
                shown.add(column)
                greens |= {column} if td.get_text(strip=True).startswith("\u2713") else set()
        for item in tds[-2].select("p"):  # other values: "empty: \u2713 matches"
            value, _, verdict = item.get_text(" ", strip=True).partition(": ")
            value = value.strip()  # ("fp16 : ..." where its name is an element of its own)
            shown.add(value)
            greens |= {value} if verdict.startswith("\u2713") else set()
        rows[tds[0].get_text(" ", strip=True)] = (greens, shown)
    text = matrix.select_one("article")
    claims = []
    for em in text.select("em"):
        if em.find_parent("table") is not None:
            continue
        after = ""
        for sibling in em.next_siblings:
            if getattr(sibling, "name", None) == "em":
                break
            after += sibling.get_text(" ") if hasattr(sibling, "get_text") else str(sibling)
        found = CLAIM.match(" ".join(after.split()))
        if found:
            claims.append((" ".join(em.get_text().split()), found["only"], found["what"]))
    assert len(claims) >= 9, claims
    for title, only, what in claims:
        assert title in rows, (title, sorted(rows))
        greens, shown = rows[title]
        said = shown if what == "every value" else {v.strip(",.") for v in what.split(" and ")}
        assert said <= shown, (title, said, shown)
        assert (greens == said) if (only or what == "every value") else (said <= greens), (title, greens)
    # "Most upstream rows raise."
    upstream = [tr for tr in table.select("tbody tr")]
    start = next(i for i, tr in enumerate(upstream) if tr.find("a", href=re.compile(r"^upstream\.html$")))
    mine = []
    for tr in upstream[start + 1:]:
        if "autocast-demo-matrix-page" in tr.get("class", []):
            break
        mine.append("\u26a0" in tr.get_text())
    assert "Most" in text.get_text() and sum(mine) * 2 > len(mine), mine
    # "every other demo runs inductor": only the aot_eager demo names another backend.
    backends = [p.get_text(" ", strip=True) for name in PAGES
                for p in page(build, name).select("p.autocast-demo-provenance")]
    assert sum("backend aot_eager" in line for line in backends) == 1, backends


def _masked(text: str) -> str:
    """Text as a page and the README may both hold it on any machine: numbers as ``#`` (a
    maximum difference and this build's torch vary with the CPU and the release)."""
    return re.sub(r"\d+(?:\.\d+)?(?:e[-+]\d+)?", "#", " ".join(text.replace("`", "").split()))


def test_the_readmes_sample_table_is_the_docs_first_demo_as_built(build):
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    sample = readme.split("The docs' first demo renders as", 1)[1].split("\n\n", 2)[1]
    rows = [[cell.replace("\\|", "|").strip() for cell in re.split(r"(?<!\\)\|", line)[1:-1]]
            for line in sample.splitlines() if not line.startswith("| ---")]
    table = page(build, "index").select_one("div.autocast-demo table.autocast-demo-results")
    built = [[cell.get_text(" ", strip=True) for cell in tr.find_all(["th", "td"])]
             for tr in table.find_all("tr") if tr.find_all(["th", "td"])]
    assert len(rows) == len(built) and len(rows[0]) == len(built[0]), (rows, built)
    assert [_masked(c) for c in rows[0]] == [_masked(c) for c in built[0]]
    for said, shown in zip(rows[1:], built[1:], strict=True):
        # A row's first cell holds the line that sets the value; its verdict the column's label.
        assert _masked(shown[0]).startswith(_masked(said[0])), (said, shown)
        assert _masked(shown[1]).endswith(_masked(said[1])), (said, shown)


#: Where a demo's text depends on the machine or on the cache, not on what the page says: how
#: far compiled was from eager and in which tensor (the CPU's kernels), the local part of a torch
#: version, and whether a result was run now or taken from the cache.
UNPINNED = (
    (re.compile(r"(✓ matches eager|✗ differs)(?: \([^()]*(?:\([^()]*\)[^()]*)*\))?"
                r"(?: and \d+ more)?"), r"\1"),
    (re.compile(r"\+(?:cpu|cu\d+|rocm[\d.]+)\b"), ""),
    (re.compile(r"Checked (?:at build time )?with torch (\d[\w.]*\w)(?: by an earlier build \(cached "
                r"result: same code, torch and Python\))?"), r"Checked with torch \1"),
)


#: A warning torch's compiler printed while it generated code: whether a run prints it depends
#: on inductor's caches on the machine (a kernel taken from the cache prints nothing).
COMPILER_WARNING = re.compile(r"^torch/\S+:\d+: \w*Warning: ")
#: The sentences that go with printed output when only such warnings were printed.
ABOUT_OUTPUT = ("Nothing printed under ", "Warnings and torch's log lines shown here")


def demo_text(box) -> str:
    """What a reader reads of one demo, block by block, the snippet's code left out (the page's
    source pins it): title, table rows, printed output, notes and footers; printed output that
    is only the compiler's warnings is left out with what says it (see COMPILER_WARNING)."""
    lines = [f"[{box['id']}]"]
    outputs = box.select("div.autocast-demo-output")
    machine = [out for out in outputs if all(
        COMPILER_WARNING.match(line) for pre in out.select("pre")
        for line in pre.get_text().splitlines() if line.strip())]
    for block in box.find_all(["caption", "tr", "p", "pre", "li"]):
        if block.find_parent(["tr", "p", "li"]) or (
                block.name == "pre" and not block.find_parent(class_="autocast-demo-output")):
            continue
        if any(out in block.parents for out in machine) or (
                machine and len(machine) == len(outputs)
                and block.get_text(" ", strip=True).startswith(ABOUT_OUTPUT)):
            continue
        cells = block.find_all(["th", "td"]) if block.name == "tr" else [block]
        text = " | ".join(" ".join(c.get_text(" ", strip=True).split()) for c in cells)
        for pattern, into in UNPINNED:
            text = pattern.sub(into, text)
        lines.append(_masked(text))
    return "\n".join(line for line in lines if line) + "\n"


@pytest.mark.skipif(importlib.util.find_spec("torch") is None or
                    __import__("torch").cuda.is_available(),
                    reason="the docs' snapshots are of a CPU build: a GPU runs their CUDA demos")
@pytest.mark.parametrize("name", ["index", "behaviour", "upstream", "guide", "myst", "other-configs",
                                  "compile-facts"])
def test_each_docs_demo_reads_as_its_snapshot(build, name):
    # reST and MyST pages alike; the verdicts themselves are EXPECTED's (measured.py).
    soup = page(build, name)
    assert_pinned(SNAPSHOTS / f"docs-{name}.txt", "".join(demo_text(box) for box in
                                                          soup.select("div.autocast-demo[id]")))
