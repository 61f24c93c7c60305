"""report.py on made-up results (no build): what the console summary and the budget warnings
say, what a published text keeps of the build machine, the timing report."""

from __future__ import annotations

import json
import logging
import os
import re
import sysconfig
from dataclasses import replace
from types import SimpleNamespace

import pytest
from fakes import APP, TORCH, Logger, demo, ran, result

from sphinx_autocast_demo.core.model import RunRecord, VariantResult, Verdict, skipped
from sphinx_autocast_demo.core.publish import publish
from sphinx_autocast_demo.engine import notices
from sphinx_autocast_demo.plan.planned import Stats
from sphinx_autocast_demo.report import console as report


@pytest.fixture
def logged(monkeypatch) -> Logger:
    found = Logger()
    monkeypatch.setattr(report, "logger", found)
    monkeypatch.setattr(notices, "logger", found)
    return found


def test_the_summary_counts_the_runs_of_unnamed_values_as_such(logged):
    held = result(demo(), ran("matches"), ran("differs"))
    report.summarize(APP, [held], [], Stats(executed=8, probes=4, seconds=1.0), TORCH)  # type: ignore[arg-type]
    assert logged.texts("info")[0] == (
        "autocast-demo: 1 demo, 2 values checked (8 runs, 4 of them of the values a demo does "
        "not name, to check that it can fail, 0 from the cache) in 1.0 s")


def test_the_summary_of_a_build_that_ran_and_failed(logged):
    broken = result(demo(), ran("differs"), ran("matches"))
    stats = Stats(executed=4, fresh=1, seconds=2.0, per_demo={"/docs/index.rst:1": 2.0})
    found = report.summarize(APP, [broken], [], stats, TORCH)  # type: ignore[arg-type]
    assert (found.demos, found.checked, found.failures, found.forked) == (1, 2, 1, 3)
    first, forked, slowest, failures = logged.texts("info")
    assert first == "autocast-demo: 1 demo, 2 values checked (4 runs, 0 from the cache) in 2.0 s"
    assert forked == ("autocast-demo: 3 runs forked from the worker, 1 in a new interpreter (CUDA, or a "
                      "worker that could not fork: see above)")
    assert slowest == "autocast-demo: slowest: /docs/index.rst:1 (2.00 s)"
    assert failures.startswith("autocast-demo: 1 failure:\n  /docs/index.rst:3: value same_as_forward: "
                               f"the page records 'matches' but with torch {TORCH}")


@pytest.mark.parametrize(("kept", "ended", "says"), [
    (1, False, " (kept for later builds)"),
    (2, True, " (kept from an earlier build; this is its build 2; it ended during this build: the next "
     "one starts a new worker)"),
])
def test_the_summary_names_a_kept_worker(logged, kept, ended, says):
    held = result(demo(), ran("matches"), ran("matches"))
    report.summarize(APP, [held], [], Stats(executed=2, kept=kept, kept_ended=ended), TORCH)  # type: ignore[arg-type]
    assert logged.texts("info")[1] == (
        f"autocast-demo: 2 runs forked from the worker{says}, 0 in a new interpreter")


def test_the_summary_says_what_no_warning_tells_and_nothing_without_demos(logged):
    the_demo = demo()
    cuda = result(the_demo, skipped(the_demo.variants[0], "no GPU", why="no-cuda"), ran("matches"))
    older = result(the_demo, ran("matches"), ran("matches"), torch="1.0.0")
    older = replace(older, variants=tuple(replace(v, cached=True) for v in older.variants))
    report.summarize(APP, [cuda, older], [], Stats(cached=2), TORCH)  # type: ignore[arg-type]
    assert logged.texts("info") == [
        "autocast-demo: 2 demos, 1 value checked, 3 not checked (0 runs, 2 from the cache) in 0.0 s",
        "autocast-demo: 1 CUDA demo skipped: the build machine has no CUDA "
        "(autocast_demo_cuda_unavailable = 'skip')",
        f"autocast-demo: 2 values rendered from results of torch 1.0.0 cached earlier, not checked "
        f"with the installed torch {TORCH}",
    ]
    logged.lines.clear()
    assert report.summarize(APP, [], [], Stats(), TORCH) == report.Counts()  # type: ignore[arg-type]
    assert logged.lines == []


def timed(compiled: float, eager: float, cached: bool = False, index: int = 0) -> VariantResult:
    variant = demo().variants[index]
    return VariantResult(variant, Verdict("matches"), RunRecord("ok", seconds=compiled),
                         RunRecord("ok", seconds=eager), cached=cached)


# (A stand-in for the Sphinx app is called host: tests/conftest.py reads a name "app" as Sphinx's
# test app fixture, which builds, and would put the test in the torch layer.)

def test_a_demo_or_a_build_over_its_budget_names_the_slowest(logged, tmp_path):
    (tmp_path / "conf.py").write_text("extensions = ['sphinx_autocast_demo']\n"
                                      "autocast_demo_build_budget = 1\n")
    host = SimpleNamespace(confdir=str(tmp_path))
    slow = replace(result(demo(), ran("matches"), ran("matches")),
                   variants=(timed(0.8, 0.4), timed(0.2, 0.1, index=1)))
    report.budgets(host, [slow], Stats(), 1.0, 0.0)  # type: ignore[arg-type]
    ((level, text, where),) = logged.lines
    assert level == "warning"
    assert text == ("this demo's runs took 1.5 s, over autocast_demo_budget (1 s); slowest: same_as_forward "
                    "compiled 0.8 s, same_as_forward eager 0.4 s, off compiled 0.2 s. Make the snippet "
                    "smaller (fewer values, smaller tensors) or raise the budget")
    assert where == {"type": "autocast_demo", "subtype": "budget", "location": "/docs/index.rst:1"}
    logged.lines.clear()
    # A result from the cache cost this build nothing.
    cheap = replace(slow, variants=(timed(0.6, 0.3), timed(5.0, 5.0, cached=True, index=1)))
    report.budgets(host, [cheap], Stats(), 1.0, 0.0)  # type: ignore[arg-type]
    assert logged.lines == []
    stats = Stats(seconds=3.0, per_demo={"a.rst:1": 1.0, "b.rst:2": 2.0})
    report.budgets(host, [], stats, 0.0, 1.0)  # type: ignore[arg-type]
    ((level, text, where),) = logged.lines
    assert level == "warning"
    assert text.startswith("the demos took 3.0 s to run in this build, over autocast_demo_build_budget "
                           "(1 s); slowest: b.rst:2 (2.0 s), a.rst:1 (1.0 s). Shrink those demos")
    assert where["location"] == f"{tmp_path / 'conf.py'}:2"


def test_a_published_text_names_no_place_of_the_build_machine():
    host = SimpleNamespace(srcdir="/w/docs", outdir="/w/docs/_build/html",
                          doctreedir="/w/docs/_build/doctrees")
    package = os.path.join(sysconfig.get_paths()["purelib"], "torch", "x.py")
    text = ('  File "/w/docs/sub/page.rst", line 3, in <module>\n'
            f"read /w/docs/data.bin, wrote /w/docs/_build/html/x.html in /w/docs; /w/docsother\x1b[31m\n"
            f"warned at {package}:12\x00")
    assert publish(text, host) == (  # type: ignore[arg-type]
        '  File "sub/page.rst", line 3, in <module>\n'
        "read data.bin, wrote <outdir>/x.html in .; /w/docsother\n"
        "warned at <site-packages>/torch/x.py:12\\x00")


def test_the_timing_report_lists_the_slowest_first(tmp_path):
    stats = Stats(seconds=1.75, per_demo={"a.rst:1": 0.5, "bb.rst:20": 1.25})
    report.write_timings(SimpleNamespace(outdir=str(tmp_path / "out")), stats)  # type: ignore[arg-type]
    assert json.loads((tmp_path / "out" / "autocast_demo_timings.json").read_text()) == [
        {"demo": "bb.rst:20", "seconds": 1.25}, {"demo": "a.rst:1", "seconds": 0.5}]
    assert (tmp_path / "out" / "autocast_demo_timings.txt").read_text() == (
        "demo       seconds\n"
        "---------  -------\n"
        "bb.rst:20    1.250\n"
        "a.rst:1      0.500\n"
        "total        1.750\n")


def test_the_warnings_about_the_machine_say_why_and_where(logged, tmp_path):
    (tmp_path / "conf.py").write_text("project = 'x'\nextensions = ['sphinx_autocast_demo']\n")
    host = SimpleNamespace(confdir=str(tmp_path), builder=SimpleNamespace(name="doctest"))
    assert not notices.cannot_fork(host, {"fork": True})  # type: ignore[arg-type]
    assert notices.cannot_fork(host, {"fork": False, "threads": ["b", "a", "a"]})  # type: ignore[arg-type]
    report.unchecked_by(host, 0)  # type: ignore[arg-type]
    report.unchecked_by(host, 1)  # type: ignore[arg-type]
    assert not notices.not_kept(host, None)  # type: ignore[arg-type]
    fork, doctest = logged.lines
    assert "the worker had 3 more threads running (a, b)" in fork[1]
    assert fork[2] == {"type": "autocast_demo", "subtype": "slow", "location": f"{tmp_path / 'conf.py'}:2"}
    assert doctest[1] == ("autocast-demo: -b doctest checks none of the 1 demo of these docs; check them "
                          "with sphinx-build -b autocast-check (or -b html)")
    assert doctest[2]["subtype"] == "not-checked"
    # Sphinx before 7.3 prints no [type.subtype]: the filter adds ours, and only ours.
    ours = logging.LogRecord("sphinx", logging.WARNING, "", 0, "bad", None, None)
    ours.type, ours.subtype = "autocast_demo", "mismatch"  # type: ignore[attr-defined]
    theirs = logging.LogRecord("sphinx", logging.WARNING, "", 0, "other", None, None)
    theirs.type, theirs.subtype = "toc", "excluded"  # type: ignore[attr-defined]
    assert report._TypeSuffix().filter(ours) and report._TypeSuffix().filter(theirs)
    assert (ours.msg, theirs.msg) == ("bad [autocast_demo.mismatch]", "other")


class _Pirate:
    """A console catalog: every msgid of ours said back in upper case, its placeholders kept
    (plural by count)."""

    def gettext(self, message: str) -> str:
        return re.sub(r"[^{}]+(?=\{|$)|(?<=\})[^{}]+", lambda m: m[0].upper(), message)

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        return self.gettext(singular if n == 1 else plural)


def test_the_console_says_stored_findings_in_its_locale_and_the_finding_stays_english(logged, monkeypatch):
    import sphinx.locale

    from sphinx_autocast_demo.core.i18n import CATALOG

    broken = result(demo(), ran("differs"), ran("matches"))
    report.summarize(APP, [broken], [], Stats(executed=2, seconds=1.0), TORCH)  # type: ignore[arg-type]
    english = logged.texts("info")
    stored = [f for f in broken.findings if f.failed] or None
    assert stored and "the page records" in stored[0].message
    logged.lines.clear()
    monkeypatch.setitem(sphinx.locale.translators, ("console", CATALOG), _Pirate())
    report.summarize(APP, [broken], [], Stats(executed=2, seconds=1.0), TORCH)  # type: ignore[arg-type]
    translated = logged.texts("info")
    assert translated[0].startswith("AUTOCAST-DEMO: 1 DEMO, 2 VALUES CHECKED (2 RUNS")
    assert "THE PAGE RECORDS 'matches' BUT WITH torch" in translated[-1]  # the record is data
    assert "1 FAILURE:" in translated[-1] and english[-1].startswith("autocast-demo: 1 failure:")
    report.warn(stored[0], APP)  # type: ignore[arg-type]
    assert "VALUE same_as_forward: THE PAGE RECORDS" in logged.texts("warning")[0]
    assert "the page records" in stored[0].message  # what results and reports hold: English
