"""Every page, as any reader gets it: no table wider than its box, tables a screen reader can
walk, text with enough contrast, and a visible focus on every control.

Uses the site, browser and page helpers of ``test_browser`` (same skips: Chromium, Playwright
and a built site). Each check runs on every HTML page of the site, not a chosen few: a page
that is added later is covered without a word here.
"""

from __future__ import annotations

import pytest
import test_browser
from test_browser import HTML, MODES, NARROW, WIDE, contrast, visit

# test_browser's served site and browser, as this module's fixtures too.
site, browser = test_browser.site, test_browser.browser

FULL_HD = {"width": 1920, "height": 1080}


def every_page() -> list[str]:
    return sorted(p.stem for p in HTML.glob("*.html") if p.stem not in ("genindex", "search"))


# A table fits when nothing of it is hidden: it is no wider than its box, or its box scrolls
# and shows a hint that it does (the extension's and the theme's scroll containers say so).
FIT = """
() => Array.from(document.querySelectorAll('article table')).map(table => {
  // The box that clips the table: the table itself where it scrolls (the extension's tables
  // are display: block), else its nearest ancestor that does not let it overflow.
  let box = table;
  while (box !== document.body && getComputedStyle(box).overflowX === 'visible') {
    box = box.parentElement;
  }
  const scrolls = ['auto', 'scroll'].includes(getComputedStyle(box).overflowX);
  const cut = box === table ? table.scrollWidth > table.clientWidth + 1
                            : table.getBoundingClientRect().width > box.clientWidth + 1;
  // autocast_demo.js marks a box that scrolls at this width; the CSS then shows its hint.
  const hinted = scrolls && box.closest('[data-scrolls]') !== null;
  return {id: (table.closest('[id]') || {}).id, cls: table.className, cut, scrolls, hinted,
          need: table.scrollWidth, has: box.clientWidth};
})
"""


@pytest.mark.parametrize("viewport", [NARROW, WIDE, FULL_HD], ids=["390", "1280", "1920"])
def test_no_table_is_wider_than_its_box_unless_it_scrolls_with_a_hint(browser, site, viewport):
    bad = []
    for name, page in visit(browser, site, "light", viewport, every_page()):
        for t in page.evaluate(FIT):
            if t["cut"] and not (t["scrolls"] and t["hinted"]):
                bad.append((name, t))
    assert bad == [], bad


# Results tables for a screen reader: column headers with scope, the value's cell of each row a
# row header, and a caption tied to the table.
ACCESS = """
() => Array.from(document.querySelectorAll('table.autocast-demo-results, table.autocast-demo-matrix'))
  .map(table => ({
    id: (table.closest('[id]') || {}).id,
    unscoped: Array.from(table.querySelectorAll('th')).filter(th => !th.getAttribute('scope')).length,
    rowHeaders: Array.from(table.querySelectorAll('tbody tr'))
      .filter(tr => tr.firstElementChild && tr.firstElementChild.matches('th[scope="row"]')).length,
    rows: table.querySelectorAll('tbody tr').length,
    caption: (table.querySelector('caption') || {innerText: ''}).innerText.trim(),
  }))
"""


def test_results_tables_have_scoped_headers_row_headers_and_a_caption(browser, site):
    bad = []
    for name, page in visit(browser, site, "light", WIDE, every_page()):
        for t in page.evaluate(ACCESS):
            if t["unscoped"] or t["rowHeaders"] != t["rows"] or not t["caption"]:
                bad.append((name, t))
    assert bad == [], bad


# Every visible text node's colour against the background it is painted on (the nearest
# ancestor with an opaque background), for the article and the header's links.
TEXTS = """
() => {
  const seen = [];
  const opaque = e => {
    for (; e; e = e.parentElement) {
      const bg = getComputedStyle(e).backgroundColor;
      if (bg && !bg.startsWith('rgba(0, 0, 0, 0)') && bg !== 'transparent') return bg;
    }
    return getComputedStyle(document.body).backgroundColor;
  };
  const root = document.querySelector('main, article, body');
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const done = new Set();
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const e = n.parentElement;
    if (!n.textContent.trim() || done.has(e)) continue;
    done.add(e);
    const r = e.getBoundingClientRect();
    const style = getComputedStyle(e);
    if (!r.width || !r.height || style.visibility === 'hidden' || Number(style.opacity) === 0) continue;
    // Syntax-highlighted code keeps the highlighter's palette (its own contrast is the
    // theme's business); the extension's and the page's own text is what is checked here.
    if (e.closest('.highlight')) continue;
    seen.push({text: n.textContent.trim().slice(0, 40), fg: style.color, bg: opaque(e)});
  }
  return seen;
}
"""


@pytest.mark.parametrize("mode", MODES)
def test_every_text_has_4_5_to_1_contrast(browser, site, mode):
    bad = []
    for name, page in visit(browser, site, mode, WIDE, every_page()):
        for t in page.evaluate(TEXTS):
            if contrast(t["fg"], t["bg"]) < 4.5:
                bad.append((name, mode, t, round(contrast(t["fg"], t["bg"]), 2)))
    assert bad == [], bad[:20]


# Tab through the page: each control that takes the focus must show it (an outline or a box
# shadow that is not none).
FOCUS = """
async () => {
  const missing = [];
  const controls = Array.from(document.querySelectorAll(
    'a[href], button, input, select, summary, [tabindex]:not([tabindex="-1"])'))
    .filter(e => e.getBoundingClientRect().width > 0);
  for (const e of controls.slice(0, 400)) {
    e.focus({focusVisible: true});
    if (document.activeElement !== e) continue;
    const s = getComputedStyle(e);
    const ring = (s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) > 0) || s.boxShadow !== 'none';
    if (!ring) missing.push((e.innerText || e.getAttribute('aria-label') || e.tagName).trim().slice(0, 40));
  }
  return missing;
}
"""


def test_every_control_shows_a_focus_ring(browser, site):
    bad = []
    for name, page in visit(browser, site, "light", WIDE, every_page()):
        page.keyboard.press("Tab")  # keyboard mode: :focus-visible applies from here on
        missing = page.evaluate(FOCUS)
        if missing:
            bad.append((name, missing[:10]))
    assert bad == [], bad


@pytest.mark.parametrize("viewport", [NARROW, WIDE], ids=["390", "1280"])
def test_the_front_page_gives_all_four_answers_within_two_screens(browser, site, viewport):
    for _, page in visit(browser, site, "light", viewport, ["index"]):
        rows = page.evaluate("""() => Array.from(document.querySelectorAll(
            'table.autocast-demo-answers tbody tr')).map(tr => ({
              text: tr.innerText, bottom: tr.getBoundingClientRect().bottom + window.scrollY}))""")
        # inside: nothing; after: "off"; another autocast: the kwargs list; one function: patch.
        off = 'backward_pass_autocast = "off"'
        assert [(off in r["text"], "device_type" in r["text"], "patch(" in r["text"])
                for r in rows] == [(False, False, False), (True, False, False),
                                   (False, True, False), (False, False, True)], rows
        assert rows[-1]["bottom"] <= 2 * viewport["height"], (rows, viewport)


# Where a header cell's text wraps between two characters that are neither a blank nor after a
# "_", "." or "-" (the places a dotted or snake_case name may break; html.py puts a <wbr> in the
# lines to copy there): "same_as_forw|ard". Across the cell's text nodes, in reading order.
BREAKS = r"""
() => {
  const bad = [];
  for (const th of document.querySelectorAll('article th')) {
    if (!th.getBoundingClientRect().width) continue;
    const walker = document.createTreeWalker(th, NodeFilter.SHOW_TEXT);
    let before = null, top = null;
    for (let n = walker.nextNode(); n; n = walker.nextNode()) {
      const text = n.textContent;
      for (let i = 0; i < text.length; i++) {
        const range = document.createRange();
        range.setStart(n, i); range.setEnd(n, i + 1);
        const rect = range.getClientRects()[0];
        if (!rect || /\s/.test(text[i])) { before = text[i]; continue; }
        // (a soft hyphen's break is the page's own: Chromium measures the hyphen it draws
        // on the line before, so the letters beside it may read as the break)
        const soft = text.slice(Math.max(0, i - 2), i + 2).includes('\u00ad');
        if (top !== null && rect.top > top + 2 && before !== null && !/[\s_.\-\/]/.test(before)
            && !soft) {
          bad.push({cell: th.innerText.slice(0, 60),
                    at: text.slice(Math.max(0, i - 12), i) + '|' + text.slice(i, i + 8)});
        }
        before = text[i]; top = rect.top;
      }
    }
  }
  return bad;
}
"""


def test_no_header_cell_breaks_a_name_between_two_letters_on_a_phone(browser, site):
    """Issue 38: on a 390 px phone, 67 header cells broke ``same_as_forward`` and
    ``autocast_demo_execute`` between two letters."""
    bad = []
    for name, page in visit(browser, site, "light", NARROW, every_page()):
        bad += [(name, b) for b in page.evaluate(BREAKS)]
    assert bad == [], bad[:10]


# Output a reader reads (the guide's real build output, what each demo printed): wider than its
# box, its end would sit behind a scroll bar that a reader does not see.
OUTPUT = """
() => Array.from(document.querySelectorAll('article pre'))
  .filter(pre => pre.closest('.autocast-demo-output') || pre.innerText.includes('autocast-demo: '))
  .map(pre => ({text: pre.innerText.slice(0, 50), failure: pre.innerText.includes('autocast-demo: '),
                need: pre.scrollWidth, has: pre.clientWidth}))
"""


@pytest.mark.parametrize("viewport", [NARROW, WIDE], ids=["390", "1280"])
def test_printed_output_wraps_inside_its_box(browser, site, viewport):
    """Issue 38: the guide's failure output was clipped by 832 px at 1280 px."""
    bad, failures = [], 0
    for name, page in visit(browser, site, "light", viewport, every_page()):
        blocks = page.evaluate(OUTPUT)
        failures += sum(name == "guide" and b["failure"] for b in blocks)
        bad += [(name, b) for b in blocks if b["need"] > b["has"] + 1]
    assert failures == 1, "the guide's failure output is not where this test looks"
    assert bad == [], bad[:10]


# Each copy button against the text of its block that a reader sees (clipped to the block's
# visible box: a long line scrolls under the button, its end out of view).
COVERED = """
() => Array.from(document.querySelectorAll('article button.copybtn')).map(button => {
  const pre = button.parentElement.querySelector('pre');
  if (!pre) return null;
  const b = button.getBoundingClientRect(), box = pre.getBoundingClientRect();
  const walker = document.createTreeWalker(pre, NodeFilter.SHOW_TEXT);
  let covered = '';
  for (let node = walker.nextNode(); node && !covered; node = walker.nextNode()) {
    if (!node.textContent.trim()) continue;
    const range = document.createRange();
    for (let i = 0; i < node.textContent.length && !covered; i++) {
      if (!node.textContent[i].trim()) continue;
      range.setStart(node, i); range.setEnd(node, i + 1);
      for (const r of range.getClientRects()) {
        const left = Math.max(r.left, box.left), right = Math.min(r.right, box.right);
        const top = Math.max(r.top, box.top), bottom = Math.min(r.bottom, box.bottom);
        if (right - left > 1 && bottom - top > 1 && left < b.right - 1 && right > b.left + 1
            && top < b.bottom - 1 && bottom > b.top + 1) {
          covered = node.textContent.trim().slice(0, 40);
        }
      }
    }
  }
  return covered ? {covered, block: pre.innerText.slice(0, 40)} : null;
}).filter(x => x)
"""


@pytest.mark.parametrize("viewport", [NARROW, WIDE], ids=["390", "1280"])
def test_no_copy_button_covers_the_text_of_its_block(browser, site, viewport):
    """Issue 47: the copy button covered "= False" on other-configs and text in 14 blocks on
    a phone (a line that scrolls runs under it, whatever the block's padding)."""
    bad = []
    for name, page in visit(browser, site, "light", viewport, every_page()):
        bad += [(name, b) for b in page.evaluate(COVERED)]
    assert bad == [], bad[:10]
