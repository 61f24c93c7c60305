"""Accept mode's build step (accept/rewrite.py) on made-up results and real files, with no build:
what it writes, shows as a diff or refuses, what it says at the end of the build, and that a
failure while writing replaces no file. The edits of the lines themselves:
tests/unit/test_accept_rules.py."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
import sphinx.locale
from fakes import SRC, TEXT, WHERE, Logger, Loud, demo, ran, result, written

from sphinx_autocast_demo.accept import rewrite
from sphinx_autocast_demo.core.i18n import CATALOG
from sphinx_autocast_demo.core.model import Finding, Location, OptionSpan, SourceMap
from sphinx_autocast_demo.core.state import doc_state

ENV = rewrite.ENV
STALE = TEXT[2].replace("matches", "differs")  # "   :expect: *: differs"
BARE = [".. autocast-demo::", "   :values: same_as_forward, off", "", "   x = 1"]  # no :expect:


@pytest.fixture
def docs(tmp_path, monkeypatch) -> Path:
    """The docs' directory, where the build was started (the messages name files from there)."""
    monkeypatch.chdir(tmp_path)
    # English, whatever catalog an earlier test of this process registered for the console.
    monkeypatch.setitem(sphinx.locale.translators, ("console", CATALOG), sphinx.locale.NullTranslations())
    (tmp_path / "index.rst").write_text("\n".join(TEXT) + "\n", encoding="utf-8")
    return tmp_path


def a_build(*found: tuple[str, object]) -> SimpleNamespace:
    """Sphinx's application after reading: each (docname, result or directive problem)."""
    host = SimpleNamespace(env=SimpleNamespace(), builder=SimpleNamespace(name="html"))
    for docname, what in found:
        state = doc_state(host.env, docname)  # type: ignore[arg-type]
        if isinstance(what, Finding):
            state.problems.append(what)
        else:
            state.results[f"d{len(state.results)}"] = what  # type: ignore[assignment]
    return host


def on_page(path: Path | None, *outcomes: str, expect=(("*", "matches"),), where: SourceMap = WHERE):
    """A demo of the page ``path`` (as fakes.TEXT writes it; None: where ``where`` says),
    checked with these outcomes."""
    where = where if path is None else replace(where, path=str(path))
    return result(replace(demo(expect), source_map=where), *(ran(outcome) for outcome in outcomes))


def lines_of(host: SimpleNamespace) -> list[tuple[bool, str]]:
    return getattr(host, rewrite.OUTCOME).lines


def test_accept_rewrites_a_stale_record_and_the_build_judges_the_demo_as_rewritten(docs, monkeypatch):
    monkeypatch.setenv(ENV, "1")
    host = a_build(("index", on_page(docs / "index.rst", "differs", "differs")))
    rewritten = rewrite.write(host)  # type: ignore[arg-type]
    assert (docs / "index.rst").read_text(encoding="utf-8") == "\n".join([*TEXT[:2], STALE, *TEXT[3:]]) + "\n"
    assert lines_of(host) == [
        (False, f"{ENV}: index.rst:3: recorded *: differs"),
        (False, f"{ENV}: 1 file rewritten; the pages of this build show the new records")]
    assert list(rewritten) == [("index", "d")] and written(rewritten["index", "d"].expect) == "*: differs"


def test_a_record_is_added_once_to_a_page_reached_by_two_paths(docs, monkeypatch):
    # An included page (or a link to it) holds one demo for two documents: one :expect: line.
    (docs / "index.rst").write_text("\n".join(BARE) + "\n", encoding="utf-8")
    (docs / "link.rst").symlink_to(docs / "index.rst")
    where = SourceMap("x", 1, "rst", 2, 3, (OptionSpan("values", 2, 3),))
    monkeypatch.setenv(ENV, "write")
    other = on_page(docs / "link.rst", "differs", "matches", expect=(), where=where)
    host = a_build(("index", on_page(docs / "index.rst", "differs", "matches", expect=(), where=where)),
                   ("other", replace(other, demo=replace(other.demo, docname="other"))))
    rewritten = rewrite.write(host)  # type: ignore[arg-type]
    new = "   :expect: same_as_forward: differs, off: matches"
    assert (docs / "index.rst").read_text(encoding="utf-8") == "\n".join([*BARE[:2], new, *BARE[2:]]) + "\n"
    assert (docs / "link.rst").is_symlink()
    assert lines_of(host) == [
        (False, f"{ENV}: index.rst:3: recorded same_as_forward: differs, off: matches"),
        (False, f"{ENV}: 1 file rewritten; the pages of this build show the new records")]
    assert sorted(rewritten) == [("index", "d"), ("other", "d")]


def test_diff_mode_shows_the_change_from_where_the_build_ran_and_writes_nothing(docs, monkeypatch):
    (docs / "sub").mkdir()
    page = docs / "sub" / "page.rst"
    page.write_text("\n".join(TEXT) + "\n", encoding="utf-8")
    monkeypatch.setenv(ENV, "diff")
    host = a_build(("sub/page", on_page(page, "differs", "differs")))
    assert rewrite.write(host) == {}  # type: ignore[arg-type]
    assert page.read_text(encoding="utf-8") == "\n".join(TEXT) + "\n"
    (warned, diff), (_, count) = lines_of(host)
    assert not warned and diff.splitlines() == [
        "--- a/sub/page.rst", "+++ b/sub/page.rst", "@@ -1,5 +1,5 @@", f" {TEXT[0]}", f" {TEXT[1]}",
        f"-{TEXT[2]}", f"+{STALE}", " ", f" {TEXT[4]}"]
    assert count == f"{ENV}=diff: 1 change, nothing written"


def test_where_every_record_holds_nothing_is_written_and_it_says_so(docs, monkeypatch):
    monkeypatch.setenv(ENV, "1")
    before = (docs / "index.rst").stat().st_mtime_ns
    host = a_build(("index", on_page(docs / "index.rst", "matches", "matches")))
    assert rewrite.write(host) == {}  # type: ignore[arg-type]
    assert lines_of(host) == [(False, f"{ENV}: every record holds; nothing to change")]
    assert (docs / "index.rst").stat().st_mtime_ns == before


def test_a_directive_error_on_any_page_leaves_every_file_as_it_was(docs, monkeypatch):
    monkeypatch.setenv(ENV, "1")
    problem = Finding("error", "directive", "autocast-demo: :values: value 'x' is given twice\nmore",
                      Location("/docs/other.rst", 4))
    host = a_build(("index", on_page(docs / "index.rst", "differs", "differs")), ("other", problem))
    assert rewrite.write(host) == {}  # type: ignore[arg-type]
    assert (docs / "index.rst").read_text(encoding="utf-8") == "\n".join(TEXT) + "\n"
    assert lines_of(host) == [(True, f"{ENV}: nothing was changed, because:\n"
                                 "  /docs/other.rst:4: autocast-demo: :values: value 'x' is given twice")]


def test_a_docstring_not_found_in_its_file_is_named_and_every_other_record_is_rewritten(
        docs, monkeypatch):
    (docs / "mod.py").write_text("def g():\n    pass\n", encoding="utf-8")
    docstring = SourceMap(f"{docs / 'mod.py'}:docstring of mod.f", 1, "rst", 2, 4)
    not_found = on_page(None, "differs", "differs", where=docstring)
    holds = on_page(None, "matches", "matches", where=docstring)  # nothing to record: not named
    monkeypatch.setenv(ENV, "1")
    monkeypatch.setitem(sphinx.locale.translators, ("console", CATALOG), Loud())
    stale = on_page(docs / "index.rst", "differs", "differs")
    host = a_build(("api", not_found), ("api", holds), ("index", stale))
    rewrite.write(host)  # type: ignore[arg-type]
    assert (docs / "index.rst").read_text(encoding="utf-8") == "\n".join([*TEXT[:2], STALE, *TEXT[3:]]) + "\n"
    assert lines_of(host) == [
        (True, f"{ENV}: {SRC}:1: NOT REWRITTEN: {docs / 'mod.py'} DEFINES NO f (IS IT MADE AT RUN TIME?); "
               "RECORD IT BY HAND"),
        (False, f"{ENV}: index.rst:3: RECORDED *: differs"),
        (False, f"{ENV}: 1 FILE REWRITTEN; THE PAGES OF THIS BUILD SHOW THE NEW RECORDS")]


def test_with_accept_off_nothing_is_planned_written_or_said(docs, monkeypatch):
    monkeypatch.delenv(ENV, raising=False)
    host = a_build(("index", on_page(docs / "index.rst", "differs", "differs")))
    logged = Logger()
    monkeypatch.setattr(rewrite, "logger", logged)
    assert rewrite.write(host) == {} and lines_of(host) == []  # type: ignore[arg-type]
    rewrite.finish(host, None)  # type: ignore[arg-type]
    # A build that failed before accept's step: not a word of accept when it was not asked for.
    rewrite.finish(SimpleNamespace(builder=SimpleNamespace(name="html")), RuntimeError("x"))  # type: ignore[arg-type]
    assert logged.lines == [] and (docs / "index.rst").read_text(encoding="utf-8") == "\n".join(TEXT) + "\n"


def test_the_end_of_the_build_says_what_accept_did_or_why_it_did_nothing(monkeypatch):
    monkeypatch.setenv(ENV, "1")
    monkeypatch.setitem(sphinx.locale.translators, ("console", CATALOG), sphinx.locale.NullTranslations())
    logged = Logger()
    monkeypatch.setattr(rewrite, "logger", logged)
    host = SimpleNamespace(builder=SimpleNamespace(name="gettext"))
    rewrite.finish(host, RuntimeError("a page failed"))  # type: ignore[arg-type]
    rewrite.finish(host, None)  # type: ignore[arg-type]
    setattr(host, rewrite.OUTCOME, rewrite.Accepted([(True, "a warning"), (False, "a line")]))
    rewrite.finish(host, None)  # type: ignore[arg-type]
    accept = {"type": "autocast_demo", "subtype": "accept"}
    assert logged.lines == [
        ("warning", f"{ENV}: the build failed, so no source was changed", accept),
        ("info", f"{ENV}: the gettext builder runs no demo, so no record was checked or changed", {}),
        ("warning", "a warning", accept), ("info", "a line", {})]


@pytest.mark.parametrize("failure", ["a file that is gone", "a directory that is gone"])
def test_a_failure_while_writing_replaces_no_file_and_leaves_no_temporary_file(tmp_path, failure):
    first = tmp_path / "a.rst"
    first.write_text("old\n", encoding="utf-8")
    gone = tmp_path / "b.rst" if failure == "a file that is gone" else tmp_path / "none" / "b.rst"
    with pytest.raises(FileNotFoundError):
        rewrite.write_all({str(first): "new\n", str(gone): "new\n"})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.rst"]
    assert first.read_text(encoding="utf-8") == "old\n"


def test_the_lines_said_are_those_of_the_rewritten_file(docs, monkeypatch):
    """Two demos of a page each get a record inserted: the second is said at its line in the
    file as written, one below where it was, where the writer's editor finds it."""
    (docs / "index.rst").write_text("\n".join([*BARE, "", *BARE]) + "\n", encoding="utf-8")
    monkeypatch.setenv(ENV, "write")
    first = on_page(docs / "index.rst", "differs", "matches", expect=(),
                    where=SourceMap("x", 1, "rst", 2, 3, (OptionSpan("values", 2, 3),)))
    second = on_page(docs / "index.rst", "matches", "differs", expect=(),
                     where=SourceMap("x", 6, "rst", 7, 8, (OptionSpan("values", 7, 8),)))
    second = replace(second, demo=replace(second.demo, ident="e"))
    host = a_build(("index", first), ("index", second))
    rewrite.write(host)  # type: ignore[arg-type]
    lines = (docs / "index.rst").read_text(encoding="utf-8").splitlines()
    assert lines[2] == "   :expect: same_as_forward: differs, off: matches"
    assert lines[8] == "   :expect: same_as_forward: matches, off: differs"
    assert lines_of(host)[:2] == [
        (False, f"{ENV}: index.rst:3: recorded same_as_forward: differs, off: matches"),
        (False, f"{ENV}: index.rst:9: recorded same_as_forward: matches, off: differs")]
