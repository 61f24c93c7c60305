"""The results tables' colours under each theme a user picks, in each mode, on a light and a
dark system: headless Chromium on tests/roots/test-builders built with each theme.

A verdict cell keeps its own colour (no theme's row striping paints over it), agrees with the
page it is on (light cells on a light page, dark on a dark one, whatever the system says when
the theme has no dark mode or the reader chose one) and every cell's text has a contrast of at
least 4.5:1 (WCAG AA) with what is behind it.

Needs what test_browser.py needs (Debian's chromium, playwright) and the themes
(sphinx-rtd-theme, sphinx-book-theme, furo, pydata-sphinx-theme). It skips without them,
unless ``AUTOCAST_DEMO_BROWSER=1`` makes that a failure.
"""

from __future__ import annotations

import contextlib
import importlib.util

import pytest
from conftest import copy_root, sphinx_build
from test_browser import CHROMIUM, REQUIRED, chromium, contrast, luminance, serve

# theme -> the modes a reader can choose (None: the theme has no dark mode) and the
# localStorage key its script reads that choice from.
THEMES: dict[str, tuple[tuple[str | None, ...], str | None]] = {
    "alabaster": ((None,), None),
    "sphinx_rtd_theme": ((None,), None),
    "furo": (("light", "dark", "auto"), "theme"),
    "pydata_sphinx_theme": (("light", "dark", "auto"), "mode"),
    "sphinx_book_theme": (("light", "dark", "auto"), "mode"),
}
CASES = [(theme, mode, system) for theme, (modes, _) in THEMES.items() for mode in modes
         for system in ("light", "dark")]
HUE = {  # which channels lead in each verdict's background, light or dark palette
    "matches": lambda r, g, b: g > r and g > b,
    "differs": lambda r, g, b: r > g and r > b,
    "raises": lambda r, g, b: r > b and g > b and r >= g,
}


def _missing() -> str | None:
    from pathlib import Path

    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    for module in ("playwright", "furo", "pydata_sphinx_theme", "sphinx_book_theme",
                   "sphinx_rtd_theme"):
        if importlib.util.find_spec(module) is None:
            return f"{module} is not installed"
    return None


@pytest.fixture(scope="module")
def sites(tmp_path_factory):
    """The root built with each theme (torch runs in the first build only), served locally."""
    why = _missing()
    if why:
        if REQUIRED:
            pytest.fail(why)
        pytest.skip(why)
    src = copy_root("builders", tmp_path_factory)
    cache = tmp_path_factory.mktemp("cache")
    with contextlib.ExitStack() as stack:
        urls = {}
        for theme in THEMES:
            out = src / "_build" / theme
            done = sphinx_build(src, out, "-D", f"html_theme={theme}",
                                "-D", f"autocast_demo_cache_dir={cache}")
            assert done.returncode == 0, done.stderr
            urls[theme] = stack.enter_context(serve(out))
        yield urls


@pytest.fixture(scope="module")
def browser(sites):
    with chromium() as launched:
        yield launched


# Each cell of every results table: its text colour, its own background, and the colour
# behind it (the first opaque background among it and its ancestors).
CELLS = """
() => {
  const opaque = c => c !== 'transparent' && !/rgba\\(.*, 0\\)$/.test(c);
  const behind = e => {
    for (; e; e = e.parentElement) {
      const c = getComputedStyle(e).backgroundColor;
      if (opaque(c)) return c;
    }
    return 'rgb(255, 255, 255)';
  };
  const table = document.querySelector('table.autocast-demo-results');
  return {
    page: behind(table.parentElement),
    cells: Array.from(document.querySelectorAll(
      'table.autocast-demo-results td, table.autocast-demo-results th')).map(e => ({
        classes: e.className, text: e.innerText.trim().slice(0, 40),
        fg: getComputedStyle(e).color, bg: getComputedStyle(e).backgroundColor, behind: behind(e),
      })),
  };
}
"""


def rgb(css: str) -> tuple[float, ...]:
    return tuple(float(v) for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3])


@pytest.mark.parametrize(("theme", "mode", "system"), CASES,
                         ids=[f"{t}-{m or 'only'}-os-{s}" for t, m, s in CASES])
def test_results_keep_their_colours_and_contrast(browser, sites, theme, mode, system):
    key = THEMES[theme][1]
    context = browser.new_context(color_scheme=system, viewport={"width": 1280, "height": 900})
    if mode is not None:  # the reader's choice, saved the way the theme's switcher saves it
        context.add_init_script(f"localStorage.setItem('{key}', '{mode}')")
    page = context.new_page()
    page.goto(f"{sites[theme]}/index.html")
    page.wait_for_load_state("load")
    seen = page.evaluate(CELLS)
    context.close()
    dark = mode == "dark" or (mode == "auto" and system == "dark")
    # The theme did what the reader chose (else the rest checks nothing).
    assert (luminance(seen["page"]) < 0.2) == dark, seen["page"]
    verdicts = 0
    for cell in seen["cells"]:
        assert contrast(cell["fg"], cell["behind"]) >= 4.5, cell
        kind = next((k for k in HUE if f"autocast-demo-{k}" in cell["classes"].split()), None)
        if kind is None:
            continue
        verdicts += 1
        assert cell["bg"] == cell["behind"], cell  # its own colour, not a stripe's
        assert HUE[kind](*rgb(cell["bg"])), (kind, cell)
        assert (luminance(cell["bg"]) < 0.2) == dark, (kind, cell)
    assert verdicts >= 4, seen["cells"]  # matches (3 tables), differs, raises
