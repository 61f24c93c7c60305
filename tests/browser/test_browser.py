"""The built docs in a real browser: headless Chromium, light and dark, wide and narrow.

Opens the pages of the already built sites, English (``docs/_build/html``, or
``AUTOCAST_DEMO_DOCS_HTML``) and Russian (``docs/_build/html-ru``, or
``AUTOCAST_DEMO_DOCS_HTML_RU``; each test runs on both unless it reads English words), through a
local HTTP server and checks what a reader sees: every results table is visible,
fits the screen or scrolls inside its own box (nothing cut off), shows the measured verdicts,
and keeps readable colours in both themes. Screenshots go to ``docs/_build/screenshots/``.

Needs Debian's ``chromium`` (``/usr/bin/chromium``, or ``AUTOCAST_DEMO_CHROMIUM``) and the
``playwright`` Python package; no browser is downloaded. Without them, or without a built site,
the tests skip, unless ``AUTOCAST_DEMO_BROWSER=1`` (set by ``.ci/run``) makes that a failure.
"""

from __future__ import annotations

import contextlib
import functools
import http.server
import os
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HTML = Path(os.environ.get("AUTOCAST_DEMO_DOCS_HTML", ROOT / "docs" / "_build" / "html"))
#: Each language's site: the same pages, as .ci/run builds them (-D language=ru for the second).
SITES = {"en": HTML, "ru": Path(os.environ.get("AUTOCAST_DEMO_DOCS_HTML_RU",
                                               ROOT / "docs" / "_build" / "html-ru"))}
SHOTS = ROOT / "docs" / "_build" / "screenshots"
CHROMIUM = os.environ.get("AUTOCAST_DEMO_CHROMIUM", "/usr/bin/chromium")
REQUIRED = os.environ.get("AUTOCAST_DEMO_BROWSER") == "1"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--no-first-run"]
WIDE, NARROW = {"width": 1280, "height": 900}, {"width": 390, "height": 844}


def pages_with_tables() -> list[str]:
    """Every page of the built site that shows a results table (or the matrix)."""
    return sorted(path.stem for path in HTML.glob("*.html")
                  if "autocast-demo-results" in path.read_text(encoding="utf-8"))


MODES = ("light", "dark")


def _missing(html: Path) -> str | None:
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright)"
    if not (html / "behaviour.html").exists():
        return f"no built docs in {html}: build them first (python -m sphinx -b html docs {html})"
    return None


@pytest.fixture(scope="module", params=sorted(SITES))
def site(request):
    why = _missing(SITES[request.param])
    if why:
        if REQUIRED:
            pytest.fail(why)
        pytest.skip(why)
    with serve(SITES[request.param]) as url:
        yield url


def english_only(request: pytest.FixtureRequest) -> None:
    """For a test that reads the English words of a page: it skips on the other sites."""
    if request.node.callspec.params["site"] != "en":
        pytest.skip("reads the English words of the pages")


@contextlib.contextmanager
def serve(directory: Path) -> Iterator[str]:
    """``directory`` served over HTTP on a free local port, quietly: its URL."""
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@contextlib.contextmanager
def chromium() -> Iterator[object]:
    """Debian's Chromium, headless, driven by Playwright."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture(scope="module")
def browser(site):
    with chromium() as launched:
        yield launched


def open_page(browser, site: str, name: str, mode: str, viewport: dict[str, int]):
    """A page in ``mode``, chosen the way a reader does (the theme's saved choice)."""
    context = browser.new_context(viewport=viewport, color_scheme=mode)
    context.add_init_script(
        f"localStorage.setItem('mode', '{mode}'); localStorage.setItem('theme', '{mode}');")
    page = context.new_page()
    goto(page, site, name, mode)
    return page


def goto(page, site: str, name: str, mode: str) -> None:
    page.goto(f"{site}/{name}.html")
    page.wait_for_load_state("load")
    assert page.evaluate("document.documentElement.dataset.theme") == mode


# Every results table of the page, measured where a reader would see it: after scrolling it
# into view, is it displayed, on top (not under the sticky header or anything else), inside
# the screen horizontally, and can its last column be scrolled into its own box?
MEASURE = """
() => Array.from(document.querySelectorAll('table.autocast-demo-results')).map((table, index) => {
  table.scrollIntoView({block: 'center'});
  const r = table.getBoundingClientRect();
  const style = getComputedStyle(table);
  // The middle of the part of the table that is on screen (a table can be taller than it).
  const cx = (Math.max(r.left, 0) + Math.min(r.right, document.documentElement.clientWidth)) / 2;
  const cy = (Math.max(r.top, 0) + Math.min(r.bottom, window.innerHeight)) / 2;
  const hit = document.elementFromPoint(cx, cy);
  const scroller = table.closest('.pst-scrollable-table-container') || table;
  const box = table.scrollWidth > table.clientWidth + 1 ? table : scroller;
  box.scrollLeft = box.scrollWidth;
  // The header row, or on a phone, where rows stack into cards and the header is hidden,
  // the first card.
  const head = table.querySelector('thead');
  const cells = head && getComputedStyle(head).display !== 'none'
    ? table.querySelectorAll('thead tr > *') : table.querySelectorAll('tbody tr:first-child > *');
  const last = cells[cells.length - 1].getBoundingClientRect();
  const b = box.getBoundingClientRect();
  const result = {
    index, left: r.left, right: r.right, width: r.width, height: r.height,
    viewport: document.documentElement.clientWidth,
    shown: style.display !== 'none' && style.visibility !== 'hidden' && Number(style.opacity) > 0,
    onTop: hit !== null && table.contains(hit),
    wider: box.scrollWidth > box.clientWidth + 1,
    scrolls: ['auto', 'scroll'].includes(getComputedStyle(box).overflowX),
    lastInside: last.right <= b.right + 1 && last.left >= b.left - 1,
  };
  box.scrollLeft = 0;
  return result;
})
"""


@pytest.mark.parametrize("viewport", [WIDE, NARROW], ids=["wide", "narrow"])
@pytest.mark.parametrize("mode", MODES)
def test_every_results_table_is_visible_and_not_cut_off(browser, site, mode, viewport):
    page = open_page(browser, site, "index", mode, viewport)
    names = pages_with_tables()
    assert {"index", "behaviour", "upstream", "matrix", "guide", "myst"} <= set(names), names
    for name in names:
        goto(page, site, name, mode)
        tables = page.evaluate(MEASURE)
        assert tables, name
        for m in tables:
            where = (name, mode, viewport["width"], m)
            assert m["shown"] and m["onTop"] and m["width"] > 50 and m["height"] > 20, where
            # Inside the screen horizontally: a wider table scrolls within its own box.
            assert m["left"] >= -1 and m["right"] <= m["viewport"] + 1, where
            assert m["scrolls"] or not m["wider"], where
            assert m["lastInside"], where
    page.context.close()


@pytest.mark.parametrize("mode", MODES)
def test_tables_show_the_measured_verdicts(browser, site, mode, request):
    from measured import EXPECTED

    english_only(request)
    page = open_page(browser, site, "index", mode, WIDE)
    for name in dict.fromkeys(name for name, _ in EXPECTED):
        goto(page, site, name, mode)
        # Per demo, the column that answers "compiled = eager?" (or, for a demo that shows only
        # its recorded outcomes, that one; with other environments beside it, this build's),
        # value by value; null: the demo shows no table.
        shown = page.evaluate("""() => Object.fromEntries(
            Array.from(document.querySelectorAll('div.autocast-demo[id]')).map(box => {
              const table = box.querySelector('table.autocast-demo-results');
              if (!table) return [box.id, null];
              const head = Array.from(table.querySelectorAll('thead th')).map(th => th.innerText.trim());
              // A table of several environments has a column each: this build's answers.
              const at = head.findIndex(h => h === 'compiled = eager?' || h === 'outcome, as recorded?'
                                             || h.includes('(this build)'));
              return [box.id, Array.from(table.querySelectorAll('tbody tr')).map(tr =>
                tr.querySelectorAll('th, td')[at].innerText.split(/\\s+/).join(' ').trim())];
            }))""")
        for (page_name, ident), expected in EXPECTED.items():
            if page_name != name:
                continue
            cells = shown[ident]
            if not expected:  # only what it printed
                assert cells is None, (ident, cells)
                continue
            assert len(cells) == len(expected), (ident, cells)
            for cell, start in zip(cells, expected, strict=True):
                assert cell.startswith(start), (ident, cells)
    page.context.close()


def luminance(css: str) -> float:
    """Relative luminance (0 black .. 1 white) of an ``rgb(...)`` / ``rgba(...)`` colour."""
    parts = [float(v) for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3]]

    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    r, g, b = map(channel, parts)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a: str, b: str) -> float:
    hi, lo = sorted((luminance(a), luminance(b)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("mode", MODES)
def test_verdict_colours_are_readable_in_both_themes(browser, site, mode):
    page = open_page(browser, site, "behaviour", mode, WIDE)
    body_bg = page.evaluate("getComputedStyle(document.body).backgroundColor")
    assert (luminance(body_bg) < 0.2) == (mode == "dark"), body_bg
    for kind in ("matches", "differs", "raises"):
        cell = page.locator(f"td.autocast-demo-{kind}").first
        fg, bg = cell.evaluate("e => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor]")
        assert contrast(fg, bg) >= 4.5, (mode, kind, fg, bg)  # WCAG AA for normal text
        assert (luminance(bg) < 0.2) == (mode == "dark"), (mode, kind, bg)
    page.context.close()


def test_screenshots(browser, site, request):
    """Light and dark, wide and narrow, of the behaviour and matrix pages (for a person to look at)."""
    english_only(request)
    SHOTS.mkdir(parents=True, exist_ok=True)
    for mode in MODES:
        page = open_page(browser, site, "behaviour", mode, WIDE)
        page.screenshot(path=str(SHOTS / f"behaviour-top-{mode}.png"))
        page.screenshot(path=str(SHOTS / f"behaviour-{mode}.png"), full_page=True)
        # Element shots: keep the sticky header from being painted over the element.
        page.add_style_tag(content=".bd-header { position: static !important; }")
        page.locator("#backward-outside").screenshot(path=str(SHOTS / f"demo-{mode}.png"))
        page.locator("#fp16-overflow").screenshot(path=str(SHOTS / f"overflow-{mode}.png"))
        page.context.close()
        page = open_page(browser, site, "behaviour", mode, NARROW)
        page.locator("#backward-elsewhere").scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / f"behaviour-narrow-{mode}.png"))
        page.context.close()
        page = open_page(browser, site, "matrix", mode, WIDE)
        page.screenshot(path=str(SHOTS / f"matrix-{mode}.png"), full_page=True)
        page.context.close()
    for shot in ("behaviour-light", "behaviour-dark", "behaviour-narrow-dark", "matrix-dark"):
        assert (SHOTS / f"{shot}.png").stat().st_size > 10_000, shot


# What a first-time reader needs from the pages (issue "A results page that explains itself").
READER = """
() => {
  const broken = [];
  // Column headers (a row header holds a line of code, which wraps where it must).
  for (const th of document.querySelectorAll('table thead th')) {
    const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      for (const match of node.textContent.matchAll(/\\S+/g)) {
        const range = document.createRange();
        range.setStart(node, match.index);
        range.setEnd(node, match.index + match[0].length);
        const lines = new Set(Array.from(range.getClientRects()).map(r => Math.round(r.top)));
        if (lines.size > 1) broken.push(match[0]);
      }
    }
  }
  const out = Array.from(document.querySelectorAll('.autocast-demo-output pre'));
  return {
    tables: document.querySelectorAll('table.autocast-demo-results, table.autocast-demo-matrix').length,
    legends: Array.from(document.querySelectorAll('.autocast-demo-legend'))
      .filter(e => e.getBoundingClientRect().height > 0).length,
    emptyOutputs: out.filter(pre => !pre.innerText.trim()).length,
    broken,
    // Inline code in running text that runs past the screen's edge (clipped, on a phone).
    clipped: Array.from(document.querySelectorAll('article p code'))
      .filter(c => c.getBoundingClientRect().right > document.documentElement.clientWidth + 1)
      .map(c => c.innerText),
    text: document.body.innerText,
  };
}
"""

# Each table on the page: does it fit its box at this width, with no column out of view?
FITS = """
() => Array.from(document.querySelectorAll('article table')).map(table => {
  const box = table.closest('.pst-scrollable-table-container') || table.parentElement;
  const b = box.getBoundingClientRect();
  const cells = Array.from(table.querySelectorAll('tr:first-child > *'));
  const out = cells.filter(c => c.getBoundingClientRect().right > b.right + 1).map(c => c.innerText);
  return {table: table.className, out};
})
"""


def visit(browser, site: str, mode: str, viewport: dict[str, int], names: list[str]):
    """Each of ``names`` in turn, in one browser page: yields (name, what READER sees)."""
    page = open_page(browser, site, "index", mode, viewport)
    try:
        for name in names:
            goto(page, site, name, mode)
            yield name, page
    finally:
        page.context.close()


@pytest.mark.parametrize("mode", MODES)
def test_a_reader_gets_a_legend_full_outputs_and_no_build_paths(browser, site, mode):
    for name, page in visit(browser, site, mode, WIDE, pages_with_tables()):
        seen = page.evaluate(READER)
        assert seen["tables"], name
        assert seen["legends"] >= 1, (name, "no legend says what the marks and rows mean")
        assert seen["emptyOutputs"] == 0, (name, "an output box with nothing in it")
        for path in (str(ROOT), *map(str, SITES.values()), "/tmp/", "/home/", "site-packages"):
            assert path not in seen["text"], (name, path)


@pytest.mark.parametrize("mode", MODES)
def test_matrix_and_reference_fit_at_1280(browser, site, mode):
    for name, page in visit(browser, site, mode, WIDE, ["matrix", "reference"]):
        for table in page.evaluate(FITS):
            assert not table["out"], (name, mode, table)


@pytest.mark.parametrize("mode", MODES)
def test_no_word_is_broken_in_a_table_header_nor_code_clipped_on_a_phone(browser, site, mode):
    for name, page in visit(browser, site, mode, NARROW, pages_with_tables()):
        seen = page.evaluate(READER)
        assert seen["broken"] == [], name
        assert seen["clipped"] == [], name


#: What a reader sees in each environment's cells of demo ``backward-outside``'s table.
ENV_CELLS = """() => Array.from(document.querySelectorAll(
    '#backward-outside table.autocast-demo-results td.autocast-demo-col-env'))
    .map(td => td.innerText.split(/\\s+/).join(' ').trim())"""


def test_on_a_phone_each_environment_cell_names_its_environment(browser, site, request):
    """The header that names the environments is hidden on a phone: each card line says it
    instead; at 1280 the header does, and the cells do not repeat it. (The three releases
    agree on every value there, so one column, headed by all three, says it.)"""
    english_only(request)
    for _, page in visit(browser, site, "light", NARROW, ["behaviour"]):
        cells = page.evaluate(ENV_CELLS)
        assert len(cells) == 4 and all(  # (a row per value)
            c.startswith("same in torch ") and " (this build) \u00b7 2.14.1 \u00b7 2.15.0: " in c
            for c in cells), cells
    for _, page in visit(browser, site, "light", WIDE, ["behaviour"]):
        cells = page.evaluate(ENV_CELLS)
        assert cells[0].startswith("\u2717 differs"), cells


#: Each mark a reader sees in a results cell, with the colour it is drawn in, and the text of
#: the page's legend.
MARKS = """
() => {
  const seen = [];
  for (const td of document.querySelectorAll('table.autocast-demo-results td')) {
    const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const at = n.parentElement;
      if (!at.getClientRects().length) continue;
      for (const mark of ['\\u2713', '\\u2717', '\\u26a0', '\\u2014'])
        if (n.textContent.includes(mark)) seen.push([mark, getComputedStyle(at).color]);
    }
  }
  const legend = Array.from(document.querySelectorAll('.autocast-demo-legend'))
    .filter(e => e.getClientRects().length).map(e => e.innerText).join(' ');
  return {seen, legend};
}
"""


@pytest.mark.parametrize("mode", MODES)
def test_each_mark_a_reader_sees_is_drawn_one_way_and_named_by_the_legend(browser, site, mode):
    """Issue 47, as a reader meets it: a ✓ drawn in a difference's colour, or a mark the legend
    does not explain (or explains and no cell shows). Each mark keeps one colour on a page, the
    three verdict marks three different ones, and the legend names exactly the marks shown."""
    colours: dict[str, set[str]] = {}
    for name, page in visit(browser, site, mode, WIDE, pages_with_tables()):
        seen = page.evaluate(MARKS)
        shown = {mark for mark, _ in seen["seen"]}
        for mark, colour in seen["seen"]:
            colours.setdefault(mark, set()).add(colour)
        assert seen["legend"], name
        named = {mark for mark in ("\u2713", "\u2717", "\u26a0", "\u2014")
                 if f"{mark} " in seen["legend"]}
        assert named == shown, (name, seen["legend"], shown)
    verdict_colours = [colours.get(mark, set()) for mark in ("\u2713", "\u2717", "\u26a0")]
    assert all(len(c) == 1 for c in verdict_colours), colours  # (each mark was seen: it can fail)
    assert len(set.union(*verdict_colours)) == 3, colours
