"""summary.py and matrix.py on made-up sites (tests/fakes.py results in a fake environment):
which pages hold a summary, the demos' titles, and what the matrix says of every demo, page by
page, value by value. The matrix's cells across environments and its change line:
tests/unit/test_judge.py; its words from the catalog: tests/unit/test_page_words.py."""

from __future__ import annotations

from dataclasses import replace
from io import StringIO
from types import SimpleNamespace

import pytest
from docutils import frontend, nodes
from docutils.parsers import rst
from docutils.parsers.rst import directives
from docutils.utils import new_document
from fakes import HERE, LATER, MADE, TORCH, claims, demo, raised, ran, result

from sphinx_autocast_demo.core.model import Demo, DemoResult
from sphinx_autocast_demo.core.state import DocState, all_docs, state
from sphinx_autocast_demo.judge import check
from sphinx_autocast_demo.present import matrix as the_matrix
from sphinx_autocast_demo.present import summary, tables
from sphinx_autocast_demo.read.syntax import parse_values

LEAD_DAY = "1970-01-01"


@pytest.fixture(autouse=True)
def reproducible(monkeypatch):
    # The matrix dates its lead; a reproducible build's date is SOURCE_DATE_EPOCH's.
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "0")


def made(docname: str, ident: str, *values: str) -> Demo:
    found = replace(demo(), docname=docname, ident=ident)
    return replace(found, variants=parse_values(list(values), "cpu", "bfloat16")) if values else found


def site(pages: dict[str, list[DemoResult | Demo]], includes: dict[str, list[str]] | None = None,
         titles: dict[str, str] | None = None) -> SimpleNamespace:
    """A Sphinx app as far as the matrix reads it: each page's demos (a result, or a demo that has
    not run) in the environment, its toctree, its title."""
    env = SimpleNamespace(config=SimpleNamespace(root_doc="index"), toctree_includes=includes or {},
                          titles={name: nodes.title(text=text) for name, text in (titles or {}).items()})
    for docname, found in pages.items():
        demos = [f.demo if isinstance(f, DemoResult) else f for f in found]
        state(env).docs[docname] = DocState(
            demos={d.ident: d for d in demos},
            results={f.demo.ident: f for f in found if isinstance(f, DemoResult)})
    return SimpleNamespace(env=env, config=SimpleNamespace(language="en"),
                           builder=SimpleNamespace(get_relative_uri=lambda here, there: f"{here}->{there}"))


def matrix(app: SimpleNamespace) -> nodes.container:
    (box,) = the_matrix.matrix(app, "overview", TORCH)  # type: ignore[arg-type]
    assert isinstance(box, nodes.container) and "autocast-demo-summary" in box["classes"]
    return box


def lead(box: nodes.container) -> str:
    return box[0].astext()


def table_of(box: nodes.container) -> tables.results_table:
    (found,) = box.findall(tables.results_table)
    return found


def rows(box: nodes.container) -> list[list[str]]:
    """Each row of the table (its header first), as the text of its cells."""
    return [[entry.astext() for entry in row.children] for row in table_of(box).findall(nodes.row)]


def row_of(box: nodes.container, ident: str) -> nodes.row:
    (found,) = [row for row in table_of(box).findall(nodes.row) if row["ids"]
                and row["ids"][0].endswith(f"-{ident}")]
    return found


def classes(row: nodes.row) -> list[list[str]]:
    return [entry["classes"] for entry in row.children]


# -- the directive and the pages that hold one -----------------------------------------------------


def test_the_directive_marks_its_page_and_leaves_a_placeholder_where_it_stands(monkeypatch):
    monkeypatch.setitem(directives._directives, "autocast-demo-summary", summary.AutocastDemoSummary)
    env = SimpleNamespace(docname="overview")
    settings = frontend.get_default_settings(rst.Parser)
    settings.env, settings.warning_stream = env, StringIO()
    document = new_document("/docs/overview.rst", settings)
    rst.Parser().parse("Overview\n========\n\nText.\n\n.. autocast-demo-summary::\n", document)
    (placeholder,) = document.findall(summary.summary_placeholder)
    assert (placeholder.source, placeholder.line) == ("/docs/overview.rst", 6)
    assert all_docs(env)["overview"].summary


def test_the_pages_rewritten_when_a_result_changes_are_those_holding_a_summary():
    env = SimpleNamespace()
    state(env).docs.update(zoo=DocState(summary=True), index=DocState(),
                           api=DocState(summary=True))
    assert summary.summary_docs(env) == ["api", "zoo"]  # type: ignore[arg-type]


def test_a_demos_title_in_the_matrix_is_its_caption_else_its_sections_title():
    def box(ident: str, caption: str | None = None) -> nodes.container:
        found = nodes.container(classes=["autocast-demo"], ids=[ident] if ident else [])
        if caption:
            found += nodes.caption(caption, "", nodes.Text(caption))
        found += nodes.literal_block("x = 1", "x = 1")
        return found

    inner = nodes.section("", nodes.title("Inner", "Inner"), box("nested"))
    outer = nodes.section("", nodes.title("Backward", "Backward"), box("captioned", "The config"),
                          box("plain"), inner, box("", "No id, no row"))
    document = new_document("guide.rst", frontend.get_default_settings(rst.Parser))
    document += [box("top"), outer]  # (a demo above every section has neither)
    env = SimpleNamespace(docname="guide")
    summary.record_titles(env, document)  # type: ignore[arg-type]
    assert all_docs(env)["guide"].titles == {"captioned": "The config", "plain": "Backward",
                                             "nested": "Inner"}


def test_the_placeholder_becomes_the_matrix_or_nothing_where_no_demo_runs():
    for shown in (True, False):
        document = new_document("overview.rst", frontend.get_default_settings(rst.Parser))
        document += [nodes.paragraph(text="Before."), summary.summary_placeholder(),
                     nodes.paragraph(text="After.")]
        the_matrix.resolve(site({}), document, "overview", shown, TORCH)  # type: ignore[arg-type]
        kinds = [child.__class__.__name__ for child in document.children]
        assert kinds == (["paragraph", "container", "paragraph"] if shown else ["paragraph", "paragraph"])
        assert not list(document.findall(summary.summary_placeholder))


# -- what the matrix says ----------------------------------------------------------------------------


def four_demos() -> SimpleNamespace:
    """Two pages: one holding, one broken; one raising as recorded, one not run yet."""
    held = result(made("index", "held"), ran("matches"), ran("matches"))
    broken = result(made("index", "broken"), ran("differs"), ran("matches"))
    raising = result(replace(made("guide", "raising"), expect=claims((("*", "raises NameError"),))),
                     raised(), raised())
    return site({"index": [held, broken], "guide": [raising, made("guide", "waiting")]},
                includes={"index": ["guide"]}, titles={"index": "Home"})


def test_the_lead_counts_demos_pages_and_the_outcome_of_every_pair_checked():
    assert lead(matrix(four_demos())) == (
        f"4 demos on 2 pages. This build ({LEAD_DAY}, torch {TORCH}) checked 6 (demo, value) pairs: "
        "compiled equals eager in 3, differs in 1, raises in 2 of them; 2 not checked.")
    # How many match is said even when none does; another outcome only when some value had it.
    differing = result(made("index", "d"), ran("differs"), ran("differs"))
    assert lead(matrix(site({"index": [differing]}))).endswith(
        "checked 2 (demo, value) pairs: compiled equals eager in 0, differs in 2 of them.")


def test_a_site_without_demos_says_so_and_shows_no_table():
    box = matrix(site({"index": []}))
    assert lead(box) == (f"0 demos on 0 pages. This build ({LEAD_DAY}, torch {TORCH}) checked 0 (demo, "
                         "value) pairs.")
    assert box[-1].astext() == "The documentation has no demos yet."
    assert not list(box.findall(nodes.table))


def test_each_cell_says_a_values_verdict_and_the_last_whether_the_page_still_holds():
    box = matrix(four_demos())
    assert rows(box)[0] == ["demo", "same_as_forward", "off", "page records"]
    assert [texts for texts in rows(box) if len(texts) == 4][1:4] == [
        ["held", "\u2713 matches", "\u2713 matches", "holds"],
        ["broken", "\u2717 differs", "\u2713 matches", "no longer true"],
        ["raising", "\u26a0 raises NameError", "\u26a0 raises NameError", "holds"]]
    assert classes(row_of(box, "broken"))[1:] == [
        ["autocast-demo-differs"], ["autocast-demo-matches"], ["autocast-demo-stale-cell"]]


def test_a_demo_that_has_not_run_says_not_run_and_not_checked():
    box = matrix(four_demos())
    waiting = row_of(box, "waiting")
    assert [entry.astext() for entry in waiting.children][1:] == [
        "\u2014 not run", "\u2014 not run", "\u2014 not checked"]
    assert classes(waiting)[1:] == [["autocast-demo-error", "autocast-demo-unchecked"]] * 2 + [
        ["autocast-demo-unchecked"]]


def test_each_page_heads_its_rows_with_a_link_to_it_across_the_table():
    box = matrix(four_demos())
    headings = [row for row in table_of(box).findall(nodes.row)
                if "autocast-demo-matrix-page" in row["classes"]]
    assert [row.astext() for row in headings] == ["Home", "guide"]  # (a page without a title: its name)
    for row, docname in zip(headings, ["index", "guide"], strict=True):
        (entry,) = row.children
        assert entry["morecols"] == 3  # the demo's column, two values, the record
        (link,) = entry.findall(nodes.reference)
        assert link["refuri"] == f"overview->{docname}"  # from the page that holds the matrix
    below = [row.astext().split("\n")[0] for row in table_of(box)[1][-1].children]
    assert below == ["Home", "held", "broken", "guide", "raising", "waiting"]


def test_a_demo_row_has_an_id_of_its_own_and_links_to_the_demo_under_its_title():
    found = result(made("guide/intro", "fp16"), ran("matches"), ran("matches"))
    untitled = result(made("guide/intro", "plain"), ran("matches"), ran("matches"))
    app = site({"guide/intro": [found, untitled]})
    all_docs(app.env)["guide/intro"].titles = {"fp16": "Half precision"}
    box = matrix(app)
    row = row_of(box, "fp16")
    assert row["ids"] == ["summary-guide-intro-fp16"]  # unique across pages; a valid HTML id
    (link,) = row[0].findall(nodes.reference)
    assert (link.astext(), link["refuri"]) == ("Half precision", "overview->guide/intro#fp16")
    (plain,) = row_of(box, "plain")[0].findall(nodes.reference)
    assert plain.astext() == "plain"  # no caption, no section title: its id


def test_pages_follow_the_toctree_then_the_pages_outside_it():
    pages = {name: [result(made(name, f"{name}-demo"), ran("matches"), ran("matches"))]
             for name in ("appendix", "advanced", "setup", "index")}
    # setup includes advanced too: it is still one page, read where a reader first meets it.
    app = site(pages, includes={"index": ["setup", "advanced"], "setup": ["advanced"]})
    headings = [row.astext() for row in table_of(matrix(app)).findall(nodes.row)
                if "autocast-demo-matrix-page" in row["classes"]]
    assert headings == ["index", "setup", "advanced", "appendix"]
    demo_rows = [row["ids"][0] for row in table_of(matrix(app)).findall(nodes.row) if row["ids"]]
    assert demo_rows == ["summary-index-index-demo", "summary-setup-setup-demo",
                         "summary-advanced-advanced-demo", "summary-appendix-appendix-demo"]


def test_a_value_a_demo_does_not_have_is_an_empty_cell():
    one = result(made("index", "one", "off", "same_as_forward"), ran("matches"), ran("differs"))
    two = result(made("index", "two", "off", "autocast"), ran("matches"), ran("matches"))
    box = matrix(site({"index": [one, two]}))
    assert rows(box)[0] == ["demo", "off", "same_as_forward", "autocast", "page records"]
    assert rows(box)[2][1:4] == ["\u2713 matches", "\u2717 differs", ""]
    assert rows(box)[3][1:4] == ["\u2713 matches", "", "\u2713 matches"]
    assert classes(row_of(box, "two"))[2] == ["autocast-demo-absent"]


def test_the_values_that_get_a_column_are_the_most_used_in_order_of_first_use():
    assert the_matrix.columns([["off", "sf"], ["off", "fp16"]]) == (["off", "sf", "fp16"], False)
    used = [["rare1", "off", "sf"], ["off", "sf", "fp16"], ["fp16", "bf16", "off"], ["bf16", "x", "rare2"],
            ["x", "sf"], ["x"]]
    # off, sf and x 3 times, fp16 and bf16 twice (a tie: the one met first): in the order first met.
    assert the_matrix.columns(used) == (["off", "sf", "fp16", "x"], True)
    # A value one demo uses gets no column of its own, though columns are left.
    assert the_matrix.columns([["off", "a"], ["off", "b"], ["c", "d"], ["e"]]) == (["off"], True)
    assert the_matrix.COLUMNS == 4


def test_rarer_values_share_a_cell_that_names_each_with_its_verdict():
    names = ("a=1", "b=2", "c=3", "d=4")
    common = [result(made("index", f"common{i}", *names), *[ran("matches")] * 4) for i in (1, 2)]
    rare = result(made("index", "rare", "a=1", "e=5", "f=6"), ran("matches"), ran("differs"),
                  ran("matches"))
    box = matrix(site({"index": [*common, rare]}))
    assert rows(box)[0] == ["demo", "a", "b", "c", "d", "other values", "page records"]
    others = row_of(box, "rare")[5]
    assert "autocast-demo-others" in others["classes"]
    assert [p.astext() for p in others.children] == ["e: \u2717 differs", "f: \u2713 matches"]
    assert [p.next_node(nodes.inline)["classes"] for p in others.children] == [
        ["autocast-demo-differs"], ["autocast-demo-matches"]]
    assert row_of(box, "common1")[5].astext() == ""
    assert "Values that few demos use are listed together under other values." in box[1].astext()


def test_the_record_says_it_holds_in_all_environments_that_checked_it():
    the_demo = made("index", "d")
    mine = result(the_demo, ran("matches"), ran("matches"))
    later = replace(result(the_demo, ran("matches"), ran("matches"), torch=LATER.torch),
                    environment=LATER, source="set", made=MADE, findings=())
    both = check.check(replace(mine, environment=HERE, others=(later,), findings=()))
    assert row_of(matrix(site({"index": [both]})), "d")[-1].astext() == "holds in all 2"
    assert row_of(matrix(site({"index": [mine]})), "d")[-1].astext() == "holds"


def test_a_value_run_under_the_snippets_own_setting_gives_no_verdict_of_its_column():
    verdict, compiled, eager = ran("matches")
    reset = result(made("index", "d"), (verdict, replace(compiled, config_set=("'off'",)), eager),
                   ran("matches"))
    box = matrix(site({"index": [reset]}))
    assert rows(box)[2][1:3] == ["\u2713 matches under the snippet's own value", "\u2713 matches"]
    assert classes(row_of(box, "d"))[1] == ["autocast-demo-matches", "autocast-demo-config-set"]
    assert lead(box) == (
        f"1 demo on 1 page. This build ({LEAD_DAY}, torch {TORCH}) checked 2 (demo, value) pairs: "
        "compiled equals eager in 2 of them (1 under a value their snippet set itself, no verdict of "
        "the value their column names).")
