"""Demos translated like any text of a page (real builds, real torch): ``-b gettext`` extracts
each demo's caption, in reST, MyST and a docstring, into its page's catalog; a build with
``language`` set shows the catalog's captions and still checks the same demos, failing on the
same lines. The extension's own words: tests/unit/test_words.py."""

from __future__ import annotations

import pytest
from conftest import ROOTS, copy_root, sphinx_build, verdicts

ROOT = ROOTS / "test-i18n"

#: msgid -> msgstr of each page's catalog: the captions, as a translation team writes them.
CAPTIONS = {
    "index": {"The *reST* region": "La région *reST*",
              "A record that no longer holds": "Un enregistrement qui ne tient plus"},
    "page": {"The `MyST` region": "La région `MyST`"},
    "api": {"The docstring region": "La région de la docstring"},
}
DEMOS = {"index": ("rst-right", "rst-wrong"), "page": ("myst-right",), "api": ("docstring-right",)}


def _po(messages: dict[str, str]) -> str:
    head = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n\n'
    return head + "".join(f'msgid "{k}"\nmsgstr "{v}"\n\n' for k, v in messages.items())


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    src = copy_root("i18n", tmp_path_factory)
    cache = ("-D", f"autocast_demo_cache_dir={tmp_path_factory.mktemp('cache')}")
    pot = sphinx_build(src, src / "_build" / "gettext", "-b", "gettext", *cache)
    english = sphinx_build(src, src / "_build" / "html", *cache)
    # Sphinx compiles each .po into its .mo itself (gettext_auto_build, on by default).
    messages = src / "locale" / "xx" / "LC_MESSAGES"
    messages.mkdir(parents=True)
    for docname, translated in CAPTIONS.items():
        (messages / f"{docname}.po").write_text(_po(translated), encoding="utf-8")
    translated = sphinx_build(src, src / "_build" / "xx", "-D", "language=xx", *cache)
    return src, pot, english, translated


def test_gettext_extracts_every_caption(builds):
    src, pot, *_ = builds
    assert pot.returncode == 0, pot.stderr
    for docname, messages in CAPTIONS.items():
        text = (src / "_build" / "gettext" / f"{docname}.pot").read_text(encoding="utf-8")
        for msgid in messages:
            assert f'msgid "{msgid}"' in text, (docname, text)
        # Code is never a message to translate.
        assert "torch.ones" not in text and "backward()" not in text


def test_a_translated_build_shows_the_catalogs_captions(builds):
    *_, translated = builds
    for docname, messages in CAPTIONS.items():
        shown = " ".join(c.get_text(" ", strip=True) for c in translated.html(docname).select(
            ".autocast-demo .caption-text, .autocast-demo .caption, .autocast-demo caption"))
        for msgid, msgstr in messages.items():
            plain = msgstr.replace("*", "").replace("`", "")
            assert plain in shown, (docname, shown)
            assert msgid.replace("*", "").replace("`", "") not in shown


def test_a_translated_build_checks_the_same_demos_and_fails_on_the_same_line(builds):
    src, _, english, translated = builds
    for docname, idents in DEMOS.items():
        for ident in idents:
            assert verdicts(translated.html(docname), ident) == verdicts(english.html(docname), ident)
    line = (ROOT / "index.rst").read_text(encoding="utf-8").split("\n").index(
        "   :expect: off: differs") + 1
    failing = f"{src / 'index.rst'}:{line}: WARNING: value off: the page records 'differs'"
    assert failing in english.stderr and failing in translated.stderr, translated.stderr
    assert english.returncode == translated.returncode == 1
