"""A page that no longer tells the truth: real ``python -m sphinx`` exit status and messages."""

from __future__ import annotations

import pytest
from conftest import app_build, copy_root, processes_tagged, tagged_build, verdicts


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return tagged_build("failing", tmp_path_factory)


def test_exit_status_is_non_zero_without_dash_w(build):
    assert build.returncode == 1, build.stderr


def test_wrong_expectation_is_located_at_the_expect_line(build):
    line = (f"{build.src / 'index.rst'}:21: WARNING: value same_as_forward: the page records "
            "'matches' but with torch")
    assert line in build.stderr
    assert "[autocast_demo.mismatch]" in build.stderr


def test_exception_in_setup_helper_points_at_both_frames(build):
    index = build.src / "index.rst"
    # Located at the innermost statement of the writer's code: the helper's line 14.
    assert f"{index}:14: WARNING: value off: the snippet raised AttributeError" in build.stderr
    # The short traceback walks from the demo line into the setup helper, and nothing else.
    # Files named relative to the source directory: no path of the build machine.
    assert 'File "index.rst", line 41, in <module>' in build.stderr
    assert 'File "index.rst", line 14, in helper' in build.stderr
    assert "sphinx_autocast_demo" not in build.stderr.split("Traceback")[1].split("WARNING")[0]


def test_myst_exception_is_at_the_markdown_line(build):
    md = build.src / "broken_md.md"
    assert f"{md}:9: WARNING: value off: the snippet raised NameError" in build.stderr


def test_timeout_and_crash_are_reported_and_the_build_goes_on(build):
    index = build.src / "index.rst"
    # Located at the line that was running when the timeout struck, not the directive: the
    # `while True:` (51) or its `pass` (52), the loop runs both.
    timeout = ": WARNING: value off: the compiled run did not finish: it was stopped after its timeout of 3 s"
    assert f"{index}:51{timeout}" in build.stderr or f"{index}:52{timeout}" in build.stderr
    crash = f"{index}:57: WARNING: value off: the compiled run died: the process exited with status 3"
    assert crash in build.stderr
    assert "about to exit" in build.stderr  # its last output is shown
    # Another page of the same build still has its results.
    assert verdicts(build.html("other"), "autocast-demo-1") == ["\u2713 matches eager"]


def test_one_summary_lists_every_failure(build):
    summary = build.stdout.split("autocast-demo: 6 failures:")[1]
    for line in ("index.rst:21:", "index.rst:14:", "index.rst:57:", "broken_md.md:9:",
                 "included.inc:10:"):
        assert line in summary


def test_demo_in_an_included_file_is_located_in_that_file(build):
    included = build.src / "parts" / "included.inc"
    # Line 10 of the included file is the print; the including page's numbering must not leak.
    assert included.read_text().splitlines()[9].strip() == "print(name_only_in_the_included_file)"
    assert f"{included}:10: WARNING: value off: the snippet raised NameError" in build.stderr
    # A finding about the whole demo points at its directive line in the included file.
    assert included.read_text().splitlines()[11] == ".. autocast-demo::"
    assert f"{included}:12: WARNING: no recorded expectation for off" in build.stderr
    # The other demo of the including page still has its results.
    assert verdicts(build.html("other"), "autocast-demo-1") == ["\u2713 matches eager"]


def test_page_says_it_is_out_of_date(build):
    stale = build.html("index").select(".autocast-demo-stale")
    assert stale and "no longer describes what torch does" in stale[0].get_text()


def test_no_worker_outlives_the_build(build):
    assert processes_tagged(build.tag) == []


def test_a_russian_console_says_how_a_run_ended_in_russian(tmp_path_factory, monkeypatch):
    # The console's language is its locale's (LC_MESSAGES, as sphinx-build reads it): given here
    # by hand, since a machine may have no Russian locale installed. The shipped catalog, real
    # runs: 0.6.2 put the engine's English ("stopped after its timeout of 3 s") into the Russian.
    import gettext
    import locale

    import sphinx.locale

    from sphinx_autocast_demo.core.i18n import CATALOG, LOCALE_DIR

    russian = gettext.translation(CATALOG, LOCALE_DIR, ["ru"])
    stopped = russian.gettext("stopped after its timeout of {seconds} s").format(seconds="3")
    exited = russian.gettext("the process exited with status {status} before the snippet "
                             "finished").format(status=3)
    assert not stopped.startswith("stopped") and not exited.startswith("the process")  # (translated)
    monkeypatch.setattr(sphinx.locale, "translators", dict(sphinx.locale.translators))
    monkeypatch.setattr(locale, "getlocale", lambda category=None: ("ru_RU", "UTF-8"))
    built = app_build(copy_root("failing", tmp_path_factory))
    assert stopped in built.warnings and exited in built.warnings, built.warnings
    assert "stopped after its timeout" not in built.warnings
    assert "exited with status" not in built.warnings
