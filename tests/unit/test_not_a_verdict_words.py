"""Why a run is no verdict is written twice, by necessity: the worker (engine/child/proofs.py,
which imports nothing of the judge) writes the English of the result file, and judge/notes.py
words the same facts for the page and the console. Here both say the same in English, for each
kind, from the worker's own function; no torch (the worker's state is set by hand)."""

from __future__ import annotations

import pytest

from sphinx_autocast_demo.core.fromjson import from_json
from sphinx_autocast_demo.core.model import SnippetError
from sphinx_autocast_demo.engine.child import proofs
from sphinx_autocast_demo.judge.notes import reason_text

OK = {"status": "ok"}


@pytest.fixture
def worker(monkeypatch):
    """The worker's record of the run, empty: each test sets what its kind needs."""
    monkeypatch.setattr(proofs, "SET", [])
    monkeypatch.setattr(proofs, "SET_AT", [])
    monkeypatch.setattr(proofs, "READ", {})
    monkeypatch.setattr(proofs, "SITES", [])
    monkeypatch.setattr(proofs, "compiled_frames", lambda: (0, []))
    monkeypatch.setattr(proofs, "aot_compiles", lambda: 0)
    monkeypatch.setattr(proofs, "compiled_anything", lambda: True)
    return monkeypatch


def said(record: dict) -> SnippetError:
    assert record["status"] == "raised", record
    return from_json(SnippetError, record["error"])


def test_a_setup_that_wrote_the_rows_value(worker):
    proofs.SET.append("'off'")
    proofs.SET_AT.append([0, 3, "<module>", "x"])
    error = said(proofs.not_a_verdict(OK, "compiled", 2, True, "'same_as_forward'"))
    assert error.kind == "config-set" and reason_text(error) == error.message


@pytest.mark.parametrize("thread", ["MainThread", "Thread-1"])
def test_a_compile_under_another_value(worker, thread):
    proofs.READ["'same_as_forward'"] = ([1, 4, "f", "y"], thread)
    error = said(proofs.not_a_verdict(OK, "compiled", 1, True, "'off'"))
    assert error.kind == "config-other" and reason_text(error) == error.message


@pytest.mark.parametrize("compiled, aot", [((1, ["step"]), 0), ((1, []), 1), ((1, []), 0)])
def test_an_eager_run_that_compiled(worker, compiled, aot):
    worker.setattr(proofs, "compiled_frames", lambda: compiled)
    worker.setattr(proofs, "aot_compiles", lambda: aot)
    error = said(proofs.not_a_verdict(OK, "eager", 1, True, "'off'"))
    assert error.kind == "eager-compiled" and reason_text(error) == error.message


@pytest.mark.parametrize("why", [["env-disable"], ["config-disable"], ["never-reached"],
                                 ["skipped", "Attempt to trace generator"]])
def test_a_compiled_run_that_compiled_nothing(worker, why):
    worker.setattr(proofs, "compiled_anything", lambda: False)
    worker.setattr(proofs, "why_nothing_compiled", lambda: why)
    error = said(proofs.not_a_verdict(OK, "compiled", 1, True, "'off'"))
    assert error.kind == "compiled-nothing" and reason_text(error) == error.message
