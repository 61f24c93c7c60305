"""What the environment keeps of a page (core.state): an unchanged build decides from a small
index and unpickles none of the page's demos and results (issue 48), and what it keeps can
never be an older result than the page had."""

from __future__ import annotations

import pickle
from dataclasses import replace
from pickle import loads  # (before any test patches the module's: the environment's own)

import pytest
from fakes import demo, ran, result

from sphinx_autocast_demo.core import state as state_module
from sphinx_autocast_demo.core.model import Finding, Location
from sphinx_autocast_demo.core.state import DocState, UnreadableState


def kept(page: DocState) -> DocState:
    """``page`` as the next build finds it in the environment (pickled, as Sphinx does)."""
    again = loads(pickle.dumps(page, pickle.HIGHEST_PROTOCOL))
    assert isinstance(again, DocState)
    return again


def a_page(*outcomes: str, missing: bool = False) -> DocState:
    shown = demo()
    page = DocState(demos={shown.ident: shown}, titles={shown.ident: "A title"})
    if not missing:
        page.results[shown.ident] = result(shown, *(ran(o) for o in outcomes))
    return page


def refuse(data: bytes) -> object:
    raise AssertionError("the page's demos and results were unpickled")


@pytest.fixture
def no_body(monkeypatch):
    """Reading a page's body back fails the test: what is asked must come from the index."""
    monkeypatch.setattr(state_module.pickle, "loads", refuse)


@pytest.mark.parametrize("outcomes, failed", [(("matches", "matches"), False),
                                              (("differs", "matches"), True)])
def test_whether_a_page_is_read_again_is_answered_without_its_results(outcomes, failed, monkeypatch):
    shown = a_page(*outcomes)
    said = {f.subtype for f in shown.results["d"].findings}  # "alike" where both match
    assert ("mismatch" in said) is failed
    page = kept(shown)
    with monkeypatch.context() as patched:
        patched.setattr(state_module.pickle, "loads", refuse)
        assert (page.failed, page.settled, page.demoed, page.summary) == (failed, True, True, False)
        assert page.subtypes == said and page.inputs == {}
    assert page.results == shown.results  # the body, read back: the properties now ask it
    assert "_body" not in page.__dict__ and "_index" not in page.__dict__
    assert page.failed is failed and page.settled and page.demoed and page.subtypes == said


def test_a_page_without_its_results_or_with_a_directive_error_is_not_settled(no_body):
    assert not kept(a_page(missing=True)).settled
    broken = DocState(problems=[Finding("error", "directive", "bad", Location("i.rst", 3))])
    again = kept(broken)
    assert (again.settled, again.failed, again.demoed) == (False, True, False)


def test_the_body_read_back_is_the_page_as_it_was_kept():
    page = a_page("differs", "matches")
    again = kept(page)
    assert again.titles == page.titles and again.demos == page.demos
    assert again.results == page.results and again.setups == page.setups == []
    assert again == page


def test_a_page_never_read_back_is_kept_as_it_came(monkeypatch):
    once = kept(a_page("matches", "matches"))
    body = once.__dict__["_body"]
    with monkeypatch.context() as patched:
        patched.setattr(state_module.pickle, "loads", refuse)
        twice = kept(once)
    assert twice.__dict__["_body"] == body and twice.results == once.results


def test_a_result_given_after_the_page_was_read_back_is_the_one_kept():
    """The index cannot outlive its body: a page given a new result (a differing one here) is
    pickled with it, and the next build's index says it failed."""
    page = kept(a_page("matches", "matches"))
    assert not page.failed
    new = result(demo(), ran("differs"), ran("matches"))
    page.results["d"] = new
    again = kept(page)
    assert again.failed and again.subtypes == {"mismatch"}
    assert again.results["d"] == new


def test_an_index_is_not_kept_beside_a_body_read_back():
    page = kept(a_page("matches", "matches"))
    page.results.clear()  # (a build that drops the results of a page it reads back)
    assert not page.settled and "_index" not in page.__dict__
    assert not kept(page).settled


def test_a_part_given_before_the_body_is_read_back_is_not_undone():
    page = kept(a_page("matches", "matches"))
    page.titles = {"d": "Another title"}  # (reading the rest back would put the old one back)
    assert page.demos and page.titles == {"d": "Another title"}
    assert kept(page).titles == {"d": "Another title"}


def test_asking_for_anything_else_is_an_attribute_error(no_body):
    page = kept(a_page("matches", "matches"))
    with pytest.raises(AttributeError):
        page.not_a_field  # noqa: B018
    with pytest.raises(AttributeError):
        DocState().not_a_field  # noqa: B018


def test_a_copy_of_an_unread_page_is_the_page():
    page = kept(a_page("differs", "matches"))
    copied = replace(page, summary=True)
    assert copied.summary and copied.results == page.results and copied.failed


def test_a_body_this_version_cannot_read_stops_the_build_with_what_to_do():
    page = kept(a_page("matches", "matches"))
    page.__dict__["_body"] = pickle.dumps(("no", "longer", "five"))  # (a version with other parts)
    assert page.settled  # the index still answers
    with pytest.raises(UnreadableState, match=r"ValueError.*sphinx-build -E"):
        page.results  # noqa: B018
