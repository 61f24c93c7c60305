""""✓ matches eager" means everything a reader could observe matches, under the backend
``torch.compile()`` uses: one real build of tests/roots/test-verdict (real torch, inductor by
default), where each demo hides its differing gradient where a top-level-only view would not
look, or cannot be compared at all."""

from __future__ import annotations

from importlib.metadata import version

import pytest
from conftest import app_build, copy_root, verdicts
from packaging.version import Version

from sphinx_autocast_demo.core.model import Note
from sphinx_autocast_demo.judge.notes import note_text

MATCH, DIFFER = "\u2713 matches eager", "\u2717 differs"


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return app_build(copy_root("verdict", tmp_path_factory))


def outcomes(build, ident):
    return {vr.variant.name: vr.verdict.outcome for vr in build.result("index", ident).variants}


def first_difference(build, ident, value="same_as_forward"):
    vr = next(v for v in build.result("index", ident).variants if v.variant.name == value)
    return next(d for d in vr.verdict.diffs if not d.equal)


@pytest.mark.parametrize(("ident", "path"), [
    ("autograd-grad", "g[0]"),  # a tuple from torch.autograd.grad, bound at top level
    ("retained", "h.grad"),  # a non-leaf's retained gradient
    ("containers", "box.kept['grads'][0]"),  # a list in a dict in an object's attribute
    ("buffer", "model.seen"),  # only a module's buffer
    ("printed", "printed line 1"),  # only what the two runs printed
    ("closure", "held.__closure__[0].cell_contents"),  # only a closure's captured value
    ("generator", "walk.gi_frame.f_locals['g']"),  # only a suspended generator's local
])
def test_a_difference_is_found_wherever_the_snippet_put_it(build, ident, path):
    assert outcomes(build, ident) == {"same_as_forward": "differs", "off": "matches",
                                      "autocast": "differs"}
    assert first_difference(build, ident).name == path
    cells = verdicts(build.html("index"), ident)
    assert cells[0].startswith(f"{DIFFER} ({path}") and cells[1].startswith(MATCH)


def test_each_step_of_a_training_loop_is_compared_though_zero_grad_cleared_it(build):
    # Before: .grad was None at the end, the parameters differed by ~1e-6 (within the output
    # tolerance), and every row said "matches eager": the true record failed.
    assert outcomes(build, "loop") == {"same_as_forward": "differs", "off": "matches",
                                       "autocast": "differs"}
    vr = build.result("index", "loop").variants[0]
    differing = {d.name for d in vr.verdict.diffs if not d.equal}
    assert differing == {f"backward {i}: model.w.grad" for i in (1, 2, 3)}, differing
    assert {d.name for d in vr.verdict.diffs if d.equal} == {"model.w", "loss"}  # within the tolerance
    cells = verdicts(build.html("index"), "loop")
    assert cells[0].startswith(f"{DIFFER} (backward 1: model.w.grad") and cells[1].startswith(MATCH)


def test_each_call_of_a_compiled_function_is_compared_though_its_output_is_gone(build):
    # Before: no output was kept, kept matched, and every row said "matches eager".
    assert set(outcomes(build, "calls").values()) == {"differs"}
    vr = build.result("index", "calls").variants[0]
    differing = {d.name for d in vr.verdict.diffs if not d.equal}
    assert differing == {f"call {i} of scale" for i in (1, 2, 3)}, differing


def test_what_a_function_produced_is_compared_though_no_name_keeps_it(build):
    # Before: nothing was kept, so nothing was compared (an error for every value), though
    # the compiled backward's gradient differed under same_as_forward.
    assert outcomes(build, "inside") == {"same_as_forward": "differs", "off": "matches",
                                         "autocast": "differs"}
    vr = build.result("index", "inside").variants[0]
    assert {d.name for d in vr.verdict.diffs if not d.equal} == {
        "backward 1: <a float32 [64, 64] leaf>.grad"}
    assert {d.name for d in vr.verdict.diffs if d.equal} == {"call 1 of region"}


def test_a_printed_moment_or_random_id_is_no_difference(build):
    # Before: the off row "differs" at printed line 1 (the log line's time).
    assert outcomes(build, "stamped") == {"same_as_forward": "differs", "off": "matches",
                                          "autocast": "differs"}
    for vr in build.result("index", "stamped").variants:
        # Before: the printed id() and the profiler's trace points differed in every row.
        assert not [d for d in vr.verdict.diffs if d.kind == "output" and not d.equal], vr
        if vr.variant.name == "off":
            assert vr.verdict.compared >= 5  # w, w.grad and the printed lines at least
        assert "w is object <id> <id>" in vr.compiled.output, vr.compiled.output
        assert "profiler_start" in vr.compiled.output, vr.compiled.output


def test_torchs_report_of_its_compiles_and_a_scripted_function_work_in_both_runs(build):
    # Before: explain was an "eager-compiled" error, torch.jit.script "Can't get source".
    assert outcomes(build, "explained") == {"same_as_forward": "differs", "off": "matches",
                                            "autocast": "differs"}
    vr = build.result("index", "explained").variants[0]
    assert "graphs 1 breaks 0" in vr.compiled.output and "graphs 1 breaks 0" in vr.eager.output


def test_a_result_kept_in_bytes_a_file_an_array_or_a_module_is_compared(build):
    # Before: each was skipped in silence, w was deleted, and every row "matched eager".
    assert outcomes(build, "saved") == {"same_as_forward": "differs", "off": "matches",
                                        "autocast": "differs"}
    vr = build.result("index", "saved").variants[0]
    differing = {d.name for d in vr.verdict.diffs if not d.equal}
    assert differing == {"torch.load(buffer)['grad']", "torch.load('grad.pt')", "numbers",
                         "state.grad"}, differing
    assert not vr.verdict.cut


def test_realistic_sizes_get_a_verdict_not_a_cut(build):
    # Before: "not fully compared" (the first 2,000 tensors; a set; a cached function): the
    # build failed on code any training script has.
    assert outcomes(build, "sized") == {"same_as_forward": "differs", "off": "matches",
                                        "autocast": "differs"}
    for vr in build.result("index", "sized").variants:
        assert not vr.verdict.cut and vr.verdict.compared > 4_000, vr.verdict


def test_a_value_reached_by_name_though_no_container_holds_it_is_compared(build):
    # Before: each of these was skipped without a word, and x, which matches, made every row
    # "matches eager".
    assert outcomes(build, "elsewhere") == {"same_as_forward": "differs", "off": "matches",
                                            "autocast": "differs"}
    vr = build.result("index", "elsewhere").variants[0]
    differing = {d.name for d in vr.verdict.diffs if not d.equal}
    assert differing >= {"Kept.grad", "Held.GRAD._value_[1]", "local.grad", "get.__self__.t",
                         "verdict_helpers.KEPT", "_g"}, differing
    assert "x" in {d.name for d in vr.verdict.diffs if d.equal}


def test_a_tensor_inside_a_tuple_is_compared(build):
    vr = build.result("index", "containers").variants[0]
    names = {t.name for t in vr.compiled.tensors}
    assert {"inputs_[0]", "inputs_[1]", "box.kept['grads'][0]"} <= names
    assert "inputs_[1].grad" not in names  # (set to None before the end, in both runs)


def test_printed_lines_that_differ_are_named_with_both_sides(build):
    diff = first_difference(build, "printed")
    said = note_text(diff)
    assert said.startswith("compiled printed 'sum ") and ", eager 'sum " in said


def test_nothing_compared_is_a_located_error_never_a_match(build):
    assert set(outcomes(build, "nothing").values()) == {"error"}
    cells = verdicts(build.html("index"), "nothing")
    assert not any(c.startswith("\u2713") for c in cells)
    assert all("nothing to compare" in c for c in cells)
    assert "index.rst:90: WARNING: every value: nothing to compare" in build.warnings
    assert "bind what it computes" in build.warnings


def test_the_eager_run_of_dynamo_optimize_is_eager(build):
    # Compiled in the eager run too, every value "matched": compiled against compiled.
    assert outcomes(build, "optimize") == {"same_as_forward": "differs", "off": "matches",
                                           "autocast": "differs"}


def test_an_entry_point_left_compiled_in_the_eager_run_is_an_error_at_its_line(build):
    assert set(outcomes(build, "not-replaced").values()) == {"error"}
    assert ("index.rst:115: WARNING: every value: the eager run is not eager: dynamo compiled "
            "region in the eager run") in build.warnings
    assert "[autocast_demo.eager-compiled]" in build.warnings


def test_a_row_whose_snippet_sets_the_varied_config_says_what_it_ran_under(build):
    # The region is compiled under "off" (patched) in every row: every row matches, and the
    # rows of the other values say that the snippet set it, instead of showing only their own.
    assert set(outcomes(build, "sets-config").values()) == {"matches"}
    rows = build.html("index").find(id="sets-config").select("tbody tr")
    said = [row.select_one(".autocast-demo-config-set") for row in rows]
    assert [s.get_text() if s else None for s in said] == [
        "the snippet itself changes it to 'off' (line 124)", None,
        "the snippet itself changes it to 'off' (line 124)"]  # (the patch line)


def test_the_seeds_third_layout_shows_its_verdicts_with_no_option_set(build):
    # aot_eager (the old default) runs the backward graph's ops eagerly, so the ambient
    # autocast reached them and every value "matched"; torch.compile()'s inductor does not.
    assert outcomes(build, "layout-three") == {"same_as_forward": "differs", "off": "differs",
                                               "autocast": "matches"}


def test_only_the_planted_problems_fail_the_build(build):
    assert build.app.statuscode == 1
    failing = [line for line in build.warnings.splitlines() if "WARNING" in line]
    assert len(failing) == 3, build.warnings  # nothing, not-replaced, no-config-unrecorded


def test_a_raise_that_eager_shares_says_so(build):
    cells = verdicts(build.html("index"), "both-raise")
    if Version(version("torch")).release < (2, 14):
        # dynamo wraps it: compiled raises its TorchRuntimeError, eager the plain one
        assert cells == ["\u26a0 raises TorchRuntimeError (eager raises RuntimeError)"] * 3
    else:  # from 2.14 dynamo raises the snippet's own error: the same as eager's
        assert cells == ["\u26a0 raises RuntimeError (eager too)"] * 3


def test_a_config_this_torch_lacks_is_its_own_outcome(build):
    assert outcomes(build, "no-config-recorded") == {"yes": "no-config"}
    assert verdicts(build.html("index"), "no-config-recorded") == [
        "\u2014 no such config in this torch"]
    assert not build.result("index", "no-config-recorded").findings
    # Recorded as the snippet's error, it is not one: the build says what torch lacks, at the
    # :config: line, and how to record it.
    assert outcomes(build, "no-config-unrecorded") == {"yes": "no-config"}
    assert (f"index.rst:164: WARNING: value yes: torch {version('torch')} has no config "
            "torch._functorch.config.not_in_any_release") in build.warnings
    assert "[autocast_demo.no-config]" in build.warnings


def differing(build, ident, value="same_as_forward"):
    vr = next(v for v in build.result("index", ident).variants if v.variant.name == value)
    return {d.name for d in vr.verdict.diffs if not d.equal}


def diffs_by_name(build, ident, value="same_as_forward"):
    vr = next(v for v in build.result("index", ident).variants if v.variant.name == value)
    return {d.name: d for d in vr.verdict.diffs}


@pytest.mark.parametrize(("ident", "paths"), [
    # a helper module's class, an underscored attribute (and the gradient where its backward
    # left it, its leaf w deleted since: named by what it is)
    ("helper-module", {"keeper._grad", "backward 1: <a float32 [64, 64] leaf>.grad"}),
    # dataclass, slot, partial; and the gradient where its backward left it, cleared since
    ("holders", {"model.noted.grad", "kept.grad", "step.args[0]", "backward 1: model.w.grad"}),
    # TwoTensor: read through its inner tensors
    ("wrapper", {"t.a", "t.b", "backward 1: <a float32 [64, 64] leaf>.grad"}),
])
def test_a_tensor_is_found_whatever_class_keeps_it(build, ident, paths):
    assert outcomes(build, ident) == {"same_as_forward": "differs", "off": "matches",
                                      "autocast": "differs"}
    assert differing(build, ident) == paths
    assert all(not vr.compiled.cut and not vr.eager.cut
               for vr in build.result("index", ident).variants)


def test_what_is_no_tensor_or_holds_no_values_is_said_never_read(build):
    # A mock that says it is a tensor is an object; a meta tensor and an object that raises at
    # every attribute are said in the cut; the tensor that differs is still found.
    assert set(outcomes(build, "not-tensors").values()) == {"differs"}
    for vr in build.result("index", "not-tensors").variants:
        assert vr.compiled.status == vr.eager.status == "ok"
        assert differing(build, "not-tensors", vr.variant.name) == {"g"}
        assert not any(t.name.startswith("fake") for t in vr.compiled.tensors)
        assert "sealed could not be read (RuntimeError: sealed)" in vr.compiled.cut
        assert "shape_only cannot be compared: a meta tensor" in vr.compiled.cut


def test_each_kind_of_tensor_is_held_to_its_own_measure(build):
    diffs = diffs_by_name(build, "kinds")
    # A complex tensor within the tolerance matches; a numpy array of them is compared too.
    assert diffs["close"].equal and 0 < (diffs["close"].max_abs or 0) < 1e-5
    assert not diffs["arr"].equal and diffs["arr"].max_abs == pytest.approx(1.0)
    # Integers exactly: 10001 against 10000 is within 1e-3 * (1 + 10000), and differs.
    assert not diffs["n"].equal and diffs["n"].max_abs == 1.0
    assert diffs["n"].note == Note("exact")


def test_equal_values_that_are_not_bitwise_equal_say_what_differs(build):
    diffs = diffs_by_name(build, "bits")
    zero, nan = Note("signed-zero"), Note("nan-bits")
    assert diffs["zeros"].equal and diffs["zeros"].note == zero  # within the output tolerance
    assert diffs["nans"].equal and diffs["nans"].note == nan
    # A gradient is compared bitwise: a difference, and the note says it is none in value.
    assert not diffs["leaf.grad"].equal and diffs["leaf.grad"].note == zero
    assert diffs["leaf.grad"].max_abs == 0.0
