"""Every word of ours on a page comes from the catalog: rendered under a pseudo-translation that
wraps each message as ``⟦…⟧``, no text of a page outside code is left bare but names and numbers.

A new literal on a page that bypasses ``_`` / ``n_`` (core/i18n.py) stays bare here and fails,
whether or not anybody has translated anything yet. Made-up results (tests/fakes.py, the
snapshot cases) through the demos' tables, a page's legend, lines to copy and shared footer,
and the matrix; no torch, no build.
"""

from __future__ import annotations

import gettext
import re
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from docutils import frontend, nodes
from docutils.parsers import rst
from docutils.utils import new_document
from fakes import TORCH, demo, ran, result
from sphinx import locale
from test_snapshots import CASES

from sphinx_autocast_demo.core import i18n
from sphinx_autocast_demo.core.model import DemoResult, RunRecord, Verdict
from sphinx_autocast_demo.core.state import DocState, state
from sphinx_autocast_demo.judge.judgement import judge
from sphinx_autocast_demo.present import cells, html, matrix, printed, render
from sphinx_autocast_demo.read import directives

CSS = Path(html.__file__).parent / "static" / "autocast_demo.css"


class Pseudo(gettext.NullTranslations):
    """Each message as ``⟦message⟧``: translated, and visibly so, with its placeholders kept."""

    def gettext(self, message: str) -> str:
        return f"\u27e6{message}\u27e7"

    def ngettext(self, msgid1: str, msgid2: str, n: int) -> str:
        return f"\u27e6{msgid1 if n == 1 else msgid2}\u27e7"


@pytest.fixture
def pseudo(monkeypatch):
    monkeypatch.setitem(locale.translators, ("general", i18n.CATALOG), Pseudo())


WRAPPED = re.compile("\u27e6[^\u27e6\u27e7]*\u27e7")
# Names, numbers and versions: anything with a dot, an underscore or a digit in it (w.grad,
# same_as_forward, 9.9.0, bfloat16, 1.2e-04).
NAMEISH = re.compile(r"[\w.]*[_.\d][\w.]*")
WORD = re.compile(r"[^\W\d_]{2,}")


def bare(text: str, names: set[str]) -> list[str]:
    """The words of ``text`` outside every ``⟦…⟧`` that are no name of the results."""
    # A message cut after its first line (a finding in a stale-record box) is still all words
    # of the catalog's: close what it opened.
    text += "\u27e7" * max(0, text.count("\u27e6") - text.count("\u27e7"))
    while (inner := WRAPPED.sub(" ", text)) != text:  # innermost first: messages hold messages
        text = inner
    for name in sorted(names, key=len, reverse=True):
        text = text.replace(name, " ")
    return WORD.findall(NAMEISH.sub(" ", text))


def data_names(results: list[DemoResult]) -> set[str]:
    """What the results name, which a page shows as it is: values, config, device, backend,
    exceptions, environments, the torch (a product's name before its version)."""
    names = {"torch"}
    for found in results:
        for one in (found, *found.others):
            names |= {vr.variant.name for vr in one.variants}
            names |= {cells.short_config(one), one.demo.device, one.demo.backend}
            names |= {vr.verdict.exception for vr in one.variants if vr.verdict.exception}
            names |= {vr.verdict.eager_exception for vr in one.variants if vr.verdict.eager_exception}
            if one.environment is not None:
                names |= {one.environment.label, one.environment.device}
    return names


def texts(tree: nodes.Node) -> list[str]:
    """Each piece of text a reader reads as one (a paragraph, a caption), without its code:
    inline literals and literal blocks are the writer's code or what it printed."""
    found = []
    for block in tree.findall(lambda n: isinstance(n, (nodes.paragraph, nodes.title))):
        words = [t.astext() for t in block.findall(nodes.Text)
                 if not any(isinstance(a, (nodes.literal, nodes.literal_block)) for a in _above(t, block))]
        found.append("".join(words))
    return found


def _above(node: nodes.Node, stop: nodes.Node) -> list[nodes.Node]:
    out = []
    while node is not stop and node.parent is not None:
        node = node.parent
        out.append(node)
    return out


def assert_translated(tree: nodes.Node, results: list[DemoResult], titles: set[str] = frozenset()) -> None:
    """``titles``: the pages' and demos' own, which the project's catalog translates."""
    names = data_names(results) | set(titles)
    left = {text: words for text in texts(tree) if (words := bare(text, names))}
    assert not left, f"words on the page that bypass the catalog: {left}"


APP = SimpleNamespace(srcdir="/docs", outdir="/out", doctreedir="/doctrees", extensions={},
                      builder=SimpleNamespace(format="html"))


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_word_of_a_demos_results_comes_from_the_catalog(pseudo, case):
    found = CASES[case]()
    box = nodes.container()
    box.extend(render.result_nodes(judge(found, TORCH), APP))  # type: ignore[arg-type]
    assert "\u27e6" in box.astext()
    assert_translated(box, [found])


def test_a_pages_legend_lines_to_copy_and_shared_footer_come_from_the_catalog(pseudo):
    held = result(replace(demo(), ident="a"), ran("matches"), ran("matches"))
    broken = result(replace(demo(), ident="b"), ran("differs"), ran("matches"))
    page = {"a": held, "b": broken, "c": None}
    doc = new_document("index.rst", frontend.get_default_settings(rst.Parser))
    for ident in page:
        box = nodes.container(classes=["autocast-demo"], ids=[ident])
        box += directives.results_placeholder(ident=ident)
        doc += box
    render.resolve(APP, doc, SimpleNamespace(results={"a": held, "b": broken}), True, TORCH)  # type: ignore[arg-type]
    classes = {c for p in doc.findall(nodes.paragraph) for c in p["classes"]}
    assert {"autocast-demo-legend", "autocast-demo-lines-lead", "autocast-demo-provenance"} <= classes
    assert_translated(doc, [held, broken])


def test_the_matrix_comes_from_the_catalog(pseudo):
    """Every snapshot case as a row: environments, values not run, records that break."""
    found = {case: replace(made, demo=replace(made.demo, ident=case))
             for case, make in sorted(CASES.items()) if (made := make())}
    env = SimpleNamespace(config=SimpleNamespace(root_doc="index"), toctree_includes={},
                          titles={"index": nodes.title(text="Home")})
    state(env).docs["index"] = DocState(demos={i: r.demo for i, r in found.items()}, results=found,
                                        titles={})
    app = SimpleNamespace(env=env, config=SimpleNamespace(language="en"),
                          builder=SimpleNamespace(get_relative_uri=lambda here, there: f"{there}.html"))
    box = nodes.container()
    box.extend(matrix.matrix(app, "index", TORCH))  # type: ignore[arg-type]
    assert box.next_node(nodes.table) is not None
    assert_translated(box, [*found.values()], {"Home", *found})


def test_the_phones_cards_name_their_cells_in_the_pages_language(pseudo):
    """The stylesheet cannot translate: it reads each column's name from the table's box."""
    box = html.scroll_box()
    assert 'data-scroll-hint="\u27e6scroll sideways\u27e7"' in box
    for column, name in cells.HEADERS.items():
        assert f"--acd-col-{column}: &quot;\u27e6{name}\u27e7: &quot;" in box
    css = CSS.read_text(encoding="utf-8")
    assert not re.findall(r'content:\s*"[^"]*[A-Za-z]', css), "a word of the stylesheet's own"


def test_the_words_the_docs_quote_are_the_pages_where_nothing_translates():
    assert cells.headers() == cells.HEADERS
    assert matrix.headers() == matrix.HEADERS
    assert html.scroll_box().startswith(
        '<div class="autocast-demo-scroll" data-scroll-hint="scroll sideways" '
        'style="--acd-col-verdict: &quot;compiled = eager? &quot;;')


def test_when_and_how_a_result_set_was_made_is_said_in_the_pages_language(pseudo):
    # Kept as words to be said (core.i18n.Message), not as English: the matrix's "made on ..." and
    # a footer's "run on ..." read it in the page's language. Plain English where nothing asks.
    from sphinx_autocast_demo.core.model import Environment
    from sphinx_autocast_demo.plan.results import EnvironmentSet, RunInfo

    runs = [RunInfo("", "tox -e results-torch214", "2026-11-30"),
            RunInfo("", "tox -e results-torch214", "2026-12-03")]
    found = EnvironmentSet(Environment.only_named("torch 2.14.1"), [], runs)
    assert found.made == "made from 2026-11-30 to 2026-12-03 by tox -e results-torch214"
    said = i18n.on_page(found.made)
    assert said == "\u27e6made {when} by {command}\u27e7".format(
        when="\u27e6from {first} to {last}\u27e7", command="tox -e results-torch214").format(
        first="2026-11-30", last="2026-12-03")
    one = EnvironmentSet(Environment.only_named("torch 2.14.1"), [], runs[:1])
    assert i18n.on_page(one.when) == "\u27e6on {date}\u27e7".format(date="2026-11-30")


@pytest.mark.parametrize("run, said", [
    (RunRecord(status="timeout", detail="stopped after its timeout of 120 s"),
     "\u27e6stopped after its timeout of {seconds} s\u27e7".format(seconds="120")),
    (RunRecord(status="crashed", detail="the process was killed by SIGSEGV", killed_by="SIGSEGV"),
     "\u27e6the process was killed by {signal}\u27e7".format(signal="SIGSEGV")),
    (RunRecord(status="crashed", detail="the process exited with status 3 before the snippet "
               "finished", exit_status=3),
     f"\u27e6the process exited with status {3} before the snippet finished\u27e7"),
])
def test_how_a_run_that_did_not_finish_ended_is_said_in_the_pages_language(pseudo, run, said):
    # Under the printed output, after what the run printed: from the record's facts, not from
    # its detail, which is the engine's English (and stays so in the cache).
    stopped = result(demo(), (Verdict("error"), run, RunRecord(status="ok")), ran("matches"))
    blocks = printed.printed(stopped, APP)  # type: ignore[arg-type]
    text = "\n".join(node.astext() for node in blocks)
    assert said in text and run.detail not in text.replace(said, "")  # (only its translation)


def test_a_footers_sentences_end_with_the_pages_full_stop(monkeypatch):
    # Chinese ends a sentence with 。 and puts no space after it; English with ". ". From the
    # shipped catalog, not a made-up one: the translation must be there.
    from sphinx_autocast_demo.present.footer import Part, footer_line

    parts = [Part("a", "one"), Part("b", "two"), Part("c", "three", how=True)]
    assert footer_line(parts).astext() == "one. two \u00b7 three."
    catalog = gettext.translation(i18n.CATALOG, str(i18n.LOCALE_DIR), languages=["zh_CN"])
    monkeypatch.setitem(locale.translators, ("general", i18n.CATALOG), catalog)
    assert footer_line(parts).astext() == "one\u3002two \u00b7 three\u3002"


NOT_A_VERDICT = {
    "config-set": ("'off'",),
    "config-other": ("'off'", "'same_as_forward'", "Thread-1"),
    "eager-compiled": ("dynamo", "step"),
    "compiled-nothing": ("never-reached",),
}


@pytest.mark.parametrize("kind", sorted(NOT_A_VERDICT))
def test_why_a_run_is_no_verdict_is_said_in_the_pages_language(pseudo, kind):
    # Issue 47: the cell of a row that never ran under its own value showed the worker's
    # English ("a compile read 'off', not this row's ...") on a Russian page.
    from sphinx_autocast_demo.core.model import SnippetError, Tolerance
    from sphinx_autocast_demo.judge.compare import compare_runs

    english = "the worker's English, kept for a reader of the result file"
    error = SnippetError(type="NotAVerdict", names=("NotAVerdict",), message=english,
                         frames=(), kind=kind, facts=NOT_A_VERDICT[kind])  # type: ignore[arg-type]
    stopped, ok = RunRecord(status="raised", error=error), RunRecord(status="ok")
    runs = (stopped, ok) if kind != "eager-compiled" else (ok, stopped)
    verdict = compare_runs(*runs, (b"", {}), (b"", {}), Tolerance(grad=0.0, output=1e-3))
    assert verdict.outcome == "error" and verdict.note != english
    found = result(demo(), (verdict, *runs), ran("matches"))
    box = nodes.container()
    box.extend(render.result_nodes(judge(found, TORCH), APP))  # type: ignore[arg-type]
    assert english not in box.astext()
    assert_translated(box, [found], {"Thread-1", "step"})
