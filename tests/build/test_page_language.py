"""A page in its reader's language (real builds, real torch): built with ``-D language=ru``,
every word of ours on a page (tables, cells, legend, footers, notes, the matrix, the phone's
card labels) is the extension's catalog's Russian, looked up here through the shipped .mo,
never written into this test; English words of ours are left nowhere but in code.

One root built three times, in English and then in Russian and Chinese (from the English
build's cache). The unit layer checks that every word goes through the catalog
(tests/unit/test_page_words.py), that the catalog is complete (tests/unit/test_catalogs.py) and
that it translates every column (tests/unit/test_page_language_catalog.py).
"""

from __future__ import annotations

import gettext
import re

import pytest
from bs4 import BeautifulSoup
from conftest import copy_root, sphinx_build

from sphinx_autocast_demo.present import cells, matrix

#: What the extension writes on a page, by CSS selector (the demo's caption and code are the
#: writer's, and outputs are torch's).
OURS = ("table.autocast-demo-results thead th", "table.autocast-demo-results td",
        "caption.autocast-demo-table-caption", ".autocast-demo-legend", ".autocast-demo-provenance",
        ".autocast-demo-lines-lead", ".autocast-demo-output > p", ".autocast-demo-stale p",
        ".autocast-demo-changes", ".autocast-demo-silent", ".autocast-demo-set-default",
        ".autocast-demo-config-set")


@pytest.fixture(scope="module")
def pages(tmp_path_factory) -> dict[str, dict[str, BeautifulSoup]]:
    src = copy_root("page-language", tmp_path_factory)
    out = {}
    for language in ("en", "ru", "zh_CN"):
        built = sphinx_build(src, src / "_build" / language, "-D", f"language={language}")
        # (the stale demo's record does not hold: the build fails, and the page says so)
        assert "Traceback" not in built.stderr, built.stderr
        out[language] = {doc: built.html(doc) for doc in ("index", "summary")}
    return out


def texts(soup: BeautifulSoup) -> list[str]:
    """Each text of ours on the page, code and outputs left out."""
    found = []
    for selector in OURS:
        for element in soup.select(selector):
            for code in element.select("pre, code, .highlight"):
                code.decompose()
            if text := element.get_text(" ", strip=True):
                found.append(text)
    return found


def english_pieces(translations: gettext.GNUTranslations) -> set[str]:
    """The English of every message the catalog translates, cut at its placeholders into pieces
    of at least two words (one word may be a name: ``torch``, ``off``)."""
    catalog: dict[object, str] = translations._catalog  # type: ignore[attr-defined]
    pieces = set()
    for key, translated in catalog.items():
        msgid = key[0] if isinstance(key, tuple) else key
        if not msgid or translated == msgid:
            continue
        for piece in re.split(r"\{[^}]*\}", msgid):
            piece = piece.strip(" .,:;()")
            if len(re.findall(r"[A-Za-z]+", piece)) >= 2:
                pieces.add(piece)
    return pieces


def test_the_headers_and_the_phones_card_labels_are_the_catalogs(pages, russian):
    page = pages["ru"]["index"]
    headers = [th.get_text(" ", strip=True) for th in page.select("table.autocast-demo-results thead th")]
    assert headers[1] == russian.gettext(cells.HEADERS["verdict"])
    assert russian.gettext(cells.HEADERS["recorded"]) in headers  # (the stale demo's table)
    box = page.select_one("div.autocast-demo-scroll")
    assert box is not None and box["data-scroll-hint"] == russian.gettext("scroll sideways")
    assert russian.gettext(cells.HEADERS["verdict"]) in box["style"]
    heads = [th.get_text(" ", strip=True) for th in pages["ru"]["summary"].select("table thead th")]
    assert heads[0] == russian.gettext(matrix.HEADERS[0])
    assert heads[-1] == russian.gettext(matrix.HEADERS[2])


@pytest.mark.parametrize("doc", ["index", "summary"])
def test_no_english_of_ours_is_left_on_a_russian_page(pages, russian, doc):
    pieces = english_pieces(russian)
    english = " \n ".join(texts(pages["en"][doc]))
    # The check has something to find: the English page says what the catalog translates.
    assert [piece for piece in pieces if piece in english], "nothing of the catalog on the English page"
    left = {text: [piece for piece in pieces if piece in text] for text in texts(pages["ru"][doc])}
    assert {text: found for text, found in left.items() if found} == {}


def test_a_footers_sentences_end_with_the_pages_full_stop(pages):
    """A footer of several sentences (a stale record's, a result set's) ends each with the
    page language's stop: ``。`` with no space after it in Chinese, ``. `` in English."""
    def footers(language: str) -> list[str]:
        return [p.get_text(" ", strip=True) for doc in pages[language].values()
                for p in doc.select(".autocast-demo-provenance")]

    english, chinese = footers("en"), footers("zh_CN")
    assert len(english) == len(chinese) and english
    assert all(text.endswith(".") for text in english), english
    assert all(text.endswith("\u3002") and ". " not in text for text in chinese), chinese
    # At least one footer joins sentences, or the test would not see the separator at all.
    assert any(". " in text for text in english), english
    assert any("\u3002" in text[:-1] for text in chinese), chinese
