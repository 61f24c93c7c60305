"""A verdict only where the runs are what it takes them for: the eager run eager and the
compiled run compiled, whatever entry point the snippet uses; the row's value the one that
ran; everything a reader could observe seen, or no match. One real build of
tests/roots/test-proofs (real torch, inductor), and one with TORCH_COMPILE_DISABLE."""

from __future__ import annotations

import pytest
from conftest import app_build, copy_root, sphinx_build, verdicts

MATCH = "\u2713 matches eager"


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return app_build(copy_root("proofs", tmp_path_factory))


def outcomes(build, ident):
    return {vr.variant.name: vr.verdict.outcome for vr in build.result("index", ident).variants}


def test_aot_autograd_called_directly_is_eager_in_the_eager_run(build):
    # Before: aot_function compiled in the eager run too, so every value "matched".
    assert outcomes(build, "aot-function") == {"same_as_forward": "differs", "off": "matches",
                                               "autocast": "differs"}


def test_torchs_own_eager_cond_still_works_in_the_eager_run(build):
    # Before: the eager run's torch.compile broke torch.cond's internal compile: every value
    # "differs (eager raised ...)".
    assert outcomes(build, "cond") == {"same_as_forward": "differs", "off": "matches",
                                       "autocast": "differs"}
    assert "eager-compiled" not in build.warnings


def test_model_compile_compiles_in_the_compiled_run_only(build):
    # torch's nn.Module.compile calls torch.compile from inside torch: that compile is the
    # snippet's, not one of torch's own (counted apart), and the eager run compiles nothing.
    assert outcomes(build, "module-compile") == {"same_as_forward": "differs", "off": "matches",
                                                 "autocast": "differs"}


def test_export_then_compile_is_compared_as_a_script_runs_it(build):
    # Before: strict export looked the snippet's globals up in the worker's own __main__
    # ("module '__main__' has no attribute 'torch'") in both runs.
    assert outcomes(build, "export") == {"same_as_forward": "differs", "off": "matches",
                                         "autocast": "differs"}


def test_a_compiled_run_that_compiled_nothing_is_no_verdict(build):
    assert set(outcomes(build, "never-compiled").values()) == {"error"}
    cells = verdicts(build.html("index"), "never-compiled")
    assert all("compiled nothing" in c and not c.startswith("\u2713") for c in cells), cells
    assert ("index.rst:75: WARNING: every value: the compiled run compiled nothing: the snippet "
            "never reached torch.compile") in build.warnings, build.warnings
    assert "[autocast_demo.compiled-nothing]" in build.warnings


def test_a_snippet_whose_every_frame_dynamo_skipped_is_no_verdict_saying_so(build):
    """Issue 49: it reached torch.compile; dynamo gave up on its one frame (a generator). The
    row said "never reached torch.compile"."""
    assert outcomes(build, "skipped-whole") == {"off": "error"}
    (warning,) = [line for line in build.warnings.splitlines() if "gave up on each frame" in line]
    assert ("value off: the compiled run compiled nothing: dynamo gave up on each frame it began "
            "(Attempt to trace generator), so it would be compared") in warning
    assert "record what compiling did (:expect-compile: graphs 0" in warning


def test_a_setup_that_sets_the_config_makes_no_row_a_verdict(build):
    # Before: each row was counted as a verdict of its own value, and the default row showed
    # the setup's "off" as torch's default. (The off row ran under its own value.)
    assert outcomes(build, "preset") == {"default": "error", "same_as_forward": "error",
                                         "off": "matches"}
    assert ("index.rst:22: WARNING: values default, same_as_forward: never ran under its own "
            "value: a setup sets the config to 'off' before the demo runs") in build.warnings
    assert "[autocast_demo.config-set]" in build.warnings


def test_a_compile_in_a_thread_under_torchs_default_is_no_verdict_of_the_rows_value(build):
    # Before: the off row was taken for a verdict of "off" (it "differs", as the default does),
    # though its thread compiled under the default: a false record "off: differs" held.
    assert outcomes(build, "thread") == {"default": "differs", "off": "error"}
    assert ("index.rst:183: WARNING: value off: never ran under its own value: a compile read "
            "'same_as_forward', not this row's 'off', in the thread 'Thread-") in build.warnings, \
        build.warnings
    assert "[autocast_demo.config-other]" in build.warnings
    cells = verdicts(build.html("index"), "thread")
    assert cells[0].startswith("\u2717 differs") and not cells[1].startswith(("\u2713", "\u2717"))


def test_a_write_that_no_compile_read_is_not_said_as_a_change(build):
    # Before: the default row said "then set by the snippet itself to 'off'", though the
    # backward it patched had been traced at the forward (the row differs, as without it).
    assert outcomes(build, "patch-backward") == {"default": "differs", "off": "matches"}
    rows = build.html("index").find(id="patch-backward").select("tbody tr")
    assert not any(row.select_one(".autocast-demo-config-set") for row in rows)


def test_a_view_cut_too_deep_is_not_fully_compared_never_a_match(build):
    # Before: under same_as_forward everything seen matched, the differing gradient lay deeper
    # than the walk goes, and the row said "matches eager".
    assert set(outcomes(build, "deep").values()) == {"error"}
    cells = verdicts(build.html("index"), "deep")
    assert all("not fully compared" in c and not c.startswith("\u2713") for c in cells), cells
    assert "WARNING: every value: not fully compared:" in build.warnings
    assert "add :partial-view:" in build.warnings and "[autocast_demo.partial-view]" in build.warnings


def test_what_a_cached_function_returned_is_compared(build):
    # Before: the lru_cache'd function's cache could not be read, the view was cut there and
    # every row was "not fully compared" (issue 46: realistic code refused).
    assert outcomes(build, "cached") == {"same_as_forward": "differs", "off": "matches",
                                         "autocast": "differs"}
    vr = build.result("index", "cached").variants[0]
    assert [d.name for d in vr.verdict.diffs if not d.equal] == ["grad result 1"]
    assert not vr.verdict.cut


def test_partial_view_takes_a_cut_match_and_the_page_says_so(build):
    assert set(outcomes(build, "deep-accepted").values()) == {"matches"}
    cells = verdicts(build.html("index"), "deep-accepted")
    assert all(c.startswith(MATCH) and "in what was compared (partial view accepted:" in c
               for c in cells), cells


def test_only_the_planted_problems_fail_the_build(build):
    assert build.app.statuscode == 1
    failing = sorted({line.rsplit("[", 1)[-1] for line in build.warnings.splitlines()
                      if "WARNING" in line})
    assert failing == ["autocast_demo.compiled-nothing]", "autocast_demo.config-other]",
                       "autocast_demo.config-set]", "autocast_demo.partial-view]"], build.warnings


def test_torch_compile_disable_gives_no_verdict_and_says_why(tmp_path_factory):
    src = copy_root("proofs", tmp_path_factory)
    # The page's setup and one demo that compiles through torch.compile.
    text = (src / "index.rst").read_text(encoding="utf-8")
    setup = text.split(".. autocast-demo-setup::\n   :group: preset")[0]
    demo = text[text.index(".. autocast-demo::\n   :name: deep-accepted"):]
    (src / "index.rst").write_text(setup + demo, encoding="utf-8")
    result = sphinx_build(src, src / "_build" / "html", env={"TORCH_COMPILE_DISABLE": "1"})
    assert result.returncode == 1
    assert ("every value: the compiled run compiled nothing: TORCH_COMPILE_DISABLE is set in "
            "the build's environment") in result.stderr, result.stderr
    assert not any(c.startswith("\u2713") for c in verdicts(result.html("index"), "deep-accepted"))
    # In Russian (issue 47: the reason was the worker's English on a Russian page).
    russian = sphinx_build(src, src / "_build" / "html-ru", "-D", "language=ru",
                           env={"TORCH_COMPILE_DISABLE": "1"})
    rows = [tr.get_text(" ", strip=True) for tr in russian.html("index").find(
        id="deep-accepted").select("table.autocast-demo-results tbody tr")]
    assert rows and all("скомпилированный запуск ничего не скомпилировал: в окружении сборки "
                        "задана переменная TORCH_COMPILE_DISABLE" in row for row in rows), rows
    assert "TORCH_COMPILE_DISABLE is set" not in russian.html("index").get_text()
