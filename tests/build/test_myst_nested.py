"""MyST as PyTorch's docs write it: demos inside list items, in the colon form, captions with
inline markup, and myst_nb in place of myst_parser (real builds, real torch). The nesting taken
off a block and the scopes of ``:expect-output:``, without a build: tests/unit/test_syntax.py."""

from __future__ import annotations

import pytest
from conftest import ROOTS, copy_root, sphinx_build


@pytest.fixture(scope="module")
def nested(tmp_path_factory):
    src = copy_root("myst-nested", tmp_path_factory)
    out = src / "_build" / "html"
    cache = ("-D", f"autocast_demo_cache_dir={tmp_path_factory.mktemp('cache')}")
    accepted = sphinx_build(src, out, *cache, env={"AUTOCAST_DEMO_ACCEPT": "1"})
    text = (src / "index.md").read_text(encoding="utf-8")
    again = sphinx_build(src, out, *cache)
    return accepted, text, again


def test_colon_form_in_list_items_runs_and_accept_rewrites_in_place(nested):
    accepted, text, _ = nested
    assert "indented like a continuation" not in accepted.stderr
    # What torch does: no autocast anywhere, so compiled matches eager under off; accept mode
    # rewrites the wrong outcome and adds the missing record, in the list item's indentation.
    original = (ROOTS / "test-myst-nested" / "index.md").read_text(encoding="utf-8")
    want = original.replace("  :expect: off: differs\n", "  :expect: off: matches\n", 1)
    want = want.replace("  :name: missing\n", "  :name: missing\n  :expect: off: matches\n", 1)
    assert want != original
    assert text == want


def test_accepted_nested_page_builds_clean(nested):
    _, _, again = nested
    assert again.returncode == 0, again.stderr
    assert "WARNING" not in again.stderr
    html = again.html("index")
    for ident in ("bullet", "missing", "numbered"):
        box = html.find(id=ident)
        assert box is not None and box.find_parent("li") is not None, ident
        assert "compiled matches eager" in box.get_text(" ") or "✓" in box.get_text(), ident


def test_captions_parse_inline_markup_in_myst_and_rest(nested):
    _, _, again = nested
    for name, ident in (("index", "bullet"), ("rest", "rest-bullet")):
        caption = again.html(name).find(id=ident).find(class_="caption-text")
        code = caption.find("code")
        assert code is not None and code.get_text() == "double", (name, caption)
        assert "`" not in caption.get_text(), caption


def test_myst_nb_alone_runs_the_demos(tmp_path_factory):
    src = copy_root("myst-nb", tmp_path_factory)
    build = sphinx_build(src, src / "_build" / "html")
    assert build.returncode == 0, build.stderr
    assert "WARNING" not in build.stderr
    box = build.html("index").find(id="nb-bullet")
    assert box.find(class_="caption-text").find("code").get_text() == "double"
    assert build.stats.get("runs") == 2  # off, compiled and eager


def test_scoped_output_record_applies_only_in_its_scope(nested):
    _, _, again = nested
    assert "rest-scoped-output" in again.html("rest").find(id="rest-scoped-output")["id"]
    assert again.returncode == 0 and "WARNING" not in again.stderr  # [off] holds, >=2.99 not here
