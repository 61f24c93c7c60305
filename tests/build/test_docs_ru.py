"""The project's docs in Russian (``-D language=ru``, docs/locale/ru), built as ``tox -e
docs-ru`` and CI build them (``-W``), beside an English build from the same result cache.

The pages translated in full (TRANSLATED) must read in Russian, from their catalogs' msgstr;
every page must show the same demos with the same verdicts, code and printed outputs as in
English, and the Russian build must run no demo the English one ran: one cache serves every
language. Cheap: the cache the docs build leaves beside conf.py (tests/build/test_docs.py)
serves both builds.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from babel.messages.pofile import read_po
from bs4 import BeautifulSoup
from conftest import sphinx_build

DOCS = Path(__file__).parents[2] / "docs"
BUILT = DOCS / ".autocast_demo_cache"
CATALOGS = DOCS / "locale" / "ru" / "LC_MESSAGES"
#: The pages whose catalogs translate every message: every page of the docs.
TRANSLATED = ("index", "behaviour", "translating", "upstream", "matrix", "guide", "reference",
              "myst", "ci", "other-configs", "architecture", "compile-facts")
CYRILLIC = re.compile(r"[\u0400-\u04ff]")


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    """(English, Russian): both from one copy of the docs' result cache, English first."""
    root = tmp_path_factory.mktemp("docs-ru")
    cache = root / "cache"
    if BUILT.is_dir():
        shutil.copytree(BUILT, cache)
    english = sphinx_build(DOCS, root / "html", "-W", "--keep-going",
                           "-D", f"autocast_demo_cache_dir={cache}")
    russian = sphinx_build(DOCS, root / "html-ru", "-W", "--keep-going", "-D", "language=ru",
                           "-D", f"autocast_demo_cache_dir={cache}")
    return english, russian


def catalog(page: str) -> dict[str, str]:
    """msgid -> msgstr of the page's Russian catalog."""
    with (CATALOGS / f"{page}.po").open("rb") as f:
        return {m.id: m.string for m in read_po(f) if m.id}


def plain(text: str) -> str:
    """A message as the page shows it: inline markup (literals, emphasis, roles) dropped."""
    text = re.sub(r":\w+:`([^`<]*?)(?: <[^>]*>)?`", r"\1", text)
    return same(re.sub(r"``|\*\*|\*", "", text))


def same(text: str) -> str:
    """Text to compare: one space between words, and Sphinx's smart apostrophe undone."""
    return re.sub(r"\s+", " ", text).replace("\u2019", "'").strip()


def headings(soup: BeautifulSoup) -> list[str]:
    found = []
    for h in soup.select("article h1, article h2"):
        for link in h.select("a.headerlink"):
            link.decompose()
        found.append(same(h.get_text(" ")))
    return found


def prose(soup: BeautifulSoup) -> list[str]:
    """The page's own paragraphs: those of its sections and lists, none that the extension
    writes (a demo's box, the legend), which its own catalogs translate."""
    ours = re.compile(r"^autocast-demo")
    return [p.get_text(" ", strip=True) for p in soup.select("article p")
            if not any(ours.match(c) for c in p.get("class", []))
            and not p.find_parent(class_=ours) and not p.find_parent("table")]


def test_russian_docs_build_with_W_and_run_no_demo_again(builds):
    english, russian = builds
    assert english.returncode == 0, english.stderr[-3000:]
    assert russian.returncode == 0, russian.stderr[-3000:]
    assert "WARNING" not in russian.stderr and "ERROR" not in russian.stderr, russian.stderr
    # The English build left every result in the cache: the Russian one reads them all.
    runs, cached = russian.runs()
    assert runs == 0 and cached > 0, russian.stats
    assert russian.html("index").html["lang"] == "ru"


@pytest.mark.parametrize("page", TRANSLATED)
def test_translated_pages_read_in_russian_from_their_catalogs(builds, page):
    english, russian = builds
    messages = catalog(page)
    assert all(messages.values()), [k for k, v in messages.items() if not v]
    by_text = {plain(k): plain(v) for k, v in messages.items()}
    # Every heading is its msgstr, section by section as in English.
    theirs, ours = headings(english.html(page)), headings(russian.html(page))
    assert [by_text.get(h, h) for h in theirs] == ours
    # Every paragraph of the page's own prose is Russian (a Latin-only one would be a message
    # the catalog missed), the extension's boxes aside.
    paragraphs = prose(russian.html(page))
    assert paragraphs and all(CYRILLIC.search(p) for p in paragraphs), \
        [p for p in paragraphs if not CYRILLIC.search(p)]


def test_the_front_page_comes_from_the_catalog(builds):
    _, russian = builds
    messages = catalog("index")
    soup = russian.html("index")
    lead = soup.select_one("article section p")
    source = "**Documentation about** ``torch.compile`` **and autocast that checks itself.**"
    assert lead.get_text(" ", strip=True) == plain(messages[source]).replace("  ", " ")
    assert lead.get_text().startswith("Документация ")
    assert "Какое значение нужно вашему циклу обучения" in headings(soup)
    # The toctree names the pages in Russian.
    assert "Поведение" in soup.get_text()


def test_every_page_of_the_docs_has_its_russian_catalog():
    # Issue 47: seven pages (guide, reference, ...) had no catalog and stayed English.
    pages = {p.stem for p in DOCS.glob("*.rst")} | {p.stem for p in DOCS.glob("*.md")}
    assert pages == set(TRANSLATED), pages ^ set(TRANSLATED)


def demos(soup: BeautifulSoup) -> dict[str, tuple[object, ...]]:
    """demo id -> what it checked: each row's value and verdict (the cells' classes, which no
    language changes), and every code and output block as it is."""
    found = {}
    for box in soup.select("div.autocast-demo[id]"):
        rows = []
        for row in box.select("table.autocast-demo-results tbody tr"):
            value = row.select_one("th.autocast-demo-value strong")
            if value is not None and value.find_parent("p", class_="autocast-demo-set-default") \
                    and len(row.select("th.autocast-demo-value p")) == 1:
                value = None  # a demo that varies nothing: its one row is words, not a value
            cells = [tuple(sorted(c for c in td.get("class", []) if c.startswith("autocast-demo-")))
                     for td in row.select("td")]
            rows.append((value.get_text() if value else None, tuple(cells)))
        blocks = tuple(pre.get_text() for pre in box.select("pre"))
        found[box["id"]] = (tuple(rows), blocks)
    return found


def all_pages(build) -> list[str]:
    return sorted(p.stem for p in build.out.glob("*.html") if p.stem not in ("search", "genindex"))


def test_every_demo_gives_the_same_verdicts_and_outputs_in_russian(builds):
    english, russian = builds
    assert all_pages(english) == all_pages(russian)
    verdicts = set()
    for page in all_pages(english):
        theirs, ours = demos(english.html(page)), demos(russian.html(page))
        assert list(theirs) == list(ours), page
        for ident, (rows, blocks) in theirs.items():
            assert ours[ident] == (rows, blocks), (page, ident)
            verdicts |= {c for _, cells in rows for cell in cells for c in cell}
    # The verdicts compared are real ones: matches, differences and errors, not empty cells.
    assert {"autocast-demo-matches", "autocast-demo-differs"} <= verdicts, verdicts


def test_demo_captions_come_from_the_catalog(builds):
    # A caption is prose of its page (issue 39, item 3): its msgstr, wherever the page shows it.
    english, russian = builds
    for page, caption in (("behaviour", "Recipe: backward after the autocast block"),
                          ("upstream", "With the ellipsis filled in")):
        assert caption in english.html(page).get_text()
        text = russian.html(page).get_text()
        assert caption not in text and catalog(page)[caption] in text, page


def test_the_reference_tables_generated_from_the_code_read_in_russian(builds):
    # Issue 47: the option, conf.py and warning tables are written by docs/_ext at build time;
    # they were English on the Russian page (no catalog could reach them).
    soup = builds[1].html("reference")
    described = [row.find_all("td")[-1].get_text(" ", strip=True)
                 for row in soup.select("table.autocast-demo-reference tbody tr")]
    described += [dd.get_text(" ", strip=True) for dd in soup.select("dl.autocast-demo-reference dd")]
    assert len(described) > 60
    assert all(CYRILLIC.search(text) for text in described), \
        [text for text in described if not CYRILLIC.search(text)]
