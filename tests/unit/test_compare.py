"""Pure-Python pieces (no torch, no Sphinx build): the option languages and the comparison of
two runs, and of each kind of tensor to its measure (integers, complex, signed zeros, NaNs)."""

from __future__ import annotations

import hashlib
import math
import struct
from array import array
from dataclasses import replace

import pytest

from sphinx_autocast_demo.core.model import (
    Claim,
    Note,
    RunRecord,
    SnippetError,
    TensorRecord,
    Tolerance,
    VariantResult,
    Verdict,
)
from sphinx_autocast_demo.engine.protocol import STORED
from sphinx_autocast_demo.judge.compare import compare_runs, compare_tensor
from sphinx_autocast_demo.judge.notes import note_text
from sphinx_autocast_demo.read import syntax

EXACT = Tolerance(grad=0.0, output=1e-3)

VARIANT = syntax.parse_values(["off"], "cpu", "bfloat16")[0]


def run(**tensors: tuple[str, list[float]]) -> tuple[RunRecord, tuple[bytes, dict[str, int | None]]]:
    """A fake run: name -> (kind, values); bytes hashed exactly like the worker does (float64 here)."""
    records, data, offsets = [], b"", {}
    for name, (kind, values) in tensors.items():
        raw = array("d", values).tobytes()
        offsets[name] = len(data)
        data += raw
        records.append(TensorRecord(name, kind, "float64", (len(values),), hashlib.sha256(raw).hexdigest()))
    return RunRecord(status="ok", tensors=tuple(records)), (data, offsets)


def test_split_top_level_keeps_literals_whole():
    text = 'off, fp16=[{"device_type": "cpu", "dtype": torch.float16}], x="a,b"'
    assert syntax.split_top_level(text, ",") == [
        "off", 'fp16=[{"device_type": "cpu", "dtype": torch.float16}]', 'x="a,b"']


def test_values_builtin_and_named():
    variants = syntax.parse_values("same_as_forward, off, autocast, fp16=[{'device_type': 'cpu', "
                                   "'dtype': torch.float16}]", "cpu", "bfloat16")
    assert [v.name for v in variants] == ["same_as_forward", "off", "autocast", "fp16"]
    assert variants[2].value == [{"device_type": "cpu", "dtype": {"__torch__": "bfloat16"}}]
    assert variants[3].value == [{"device_type": "cpu", "dtype": {"__torch__": "float16"}}]


@pytest.mark.parametrize(("text", "message"), [
    ("same_as_forwrd", "unknown value 'same_as_forwrd'"),
    ("off, off", "given twice"),
    ("bad=[{'a': open('x')}]", "is not allowed in a value"),
    ("bad=[{", "is not a Python literal"),
])
def test_values_errors_say_what_to_write(text, message):
    with pytest.raises(syntax.SyntaxProblem, match=message):
        syntax.parse_values(text, "cpu", "bfloat16")


def test_expect_pairs_and_errors():
    names = ("same_as_forward", "off")
    assert syntax.expect_text(syntax.parse_expect(
        "same_as_forward: matches\noff = raises  AssertionError", names)) == \
        "same_as_forward: matches, off: raises AssertionError"
    with pytest.raises(syntax.SyntaxProblem, match="not a value of this demo"):
        syntax.parse_expect("autocast: matches", names)
    with pytest.raises(syntax.SyntaxProblem, match="not an outcome"):
        syntax.parse_expect("off: equal", names)


def test_a_claim_holds_for_any_name_in_the_chain_and_only_for_its_outcome():
    chain = ("BackendCompilerFailed", "RuntimeError", "AssertionError")
    error = SnippetError(type="BackendCompilerFailed", names=chain, message="", frames=())
    raised = RunRecord(status="raised", error=error)
    did = VariantResult(VARIANT, Verdict("raises", exception="BackendCompilerFailed"), raised, raised)
    assert Claim("raises", "AssertionError").holds(did)
    assert Claim("raises", "torch._dynamo.exc.BackendCompilerFailed").holds(did)
    assert not Claim("raises", "KeyError").holds(did)
    assert not Claim("differs").holds(did)
    ok = RunRecord(status="ok")
    differed = VariantResult(VARIANT, Verdict("differs"), ok, ok)
    assert Claim("differs").holds(differed) and not Claim("matches").holds(differed)
    assert not Claim("raises", "AssertionError").holds(differed)
    assert Claim("no-config").holds(VariantResult(VARIANT, Verdict("no-config"), ok, ok))


def test_identical_runs_match_bitwise():
    c = run(w=("value", [1.0, 2.0]), **{"w.grad": ("grad", [0.5, 0.25])})
    e = run(w=("value", [1.0, 2.0]), **{"w.grad": ("grad", [0.5, 0.25])})
    verdict = compare_runs(c[0], e[0], c[1], e[1], EXACT)
    assert verdict.outcome == "matches" and verdict.max_abs == 0.0


def test_gradients_are_exact_outputs_have_a_tolerance():
    # An output 1e-4 off is within the default output tolerance; a gradient 1e-7 off is not.
    c = run(y=("value", [1.0001]), **{"w.grad": ("grad", [1.0])})
    e = run(y=("value", [1.0]), **{"w.grad": ("grad", [1.0])})
    assert compare_runs(c[0], e[0], c[1], e[1], EXACT).outcome == "matches"
    c = run(**{"w.grad": ("grad", [1.0 + 1e-7])})
    e = run(**{"w.grad": ("grad", [1.0])})
    verdict = compare_runs(c[0], e[0], c[1], e[1], EXACT)
    assert verdict.outcome == "differs" and math.isclose(verdict.max_abs, 1e-7, rel_tol=1e-6)
    assert "w.grad" in verdict.note


def test_inf_against_finite_is_an_infinite_difference():
    c = run(**{"w.grad": ("grad", [math.inf, 1.0])})
    e = run(**{"w.grad": ("grad", [65536.0, 1.0])})
    verdict = compare_runs(c[0], e[0], c[1], e[1], EXACT)
    assert verdict.outcome == "differs" and verdict.max_abs == math.inf


def test_missing_tensor_dtype_and_errors():
    c = run(a=("value", [1.0]))
    e = run(b=("value", [1.0]))
    verdict = compare_runs(c[0], e[0], c[1], e[1], EXACT)
    assert verdict.outcome == "differs"
    assert "a (compiled: a float64 tensor of shape [1]; eager: nothing there)" in verdict.note
    # A gradient one run lacks is None there, as torch says it.
    c = run(**{"w.grad": ("grad", [0.0])})
    e = run(w=("value", [1.0]))
    assert "w.grad (compiled: a float64 tensor of shape [1]; eager: None)" in compare_runs(
        c[0], e[0], c[1], e[1], EXACT).note
    error = SnippetError("NameError", ("NameError", "Exception"), "x", ())
    raised = RunRecord(status="raised", error=error)
    assert compare_runs(raised, e[0], (b"", {}), e[1], EXACT).text == "raises NameError"
    timeout = RunRecord(status="timeout", detail="stopped after its timeout of 3 s")
    assert compare_runs(timeout, e[0], (b"", {}), e[1], EXACT).outcome == "error"


def test_nothing_compared_is_never_a_match():
    c, e = run(), run()
    verdict = compare_runs(c[0], e[0], c[1], e[1], EXACT)
    assert verdict.outcome == "error" and verdict.compared == 0
    # Printed output alone is something to compare.
    c0 = replace(c[0], output="tensor(3.)\n")
    assert compare_runs(c0, replace(e[0], output="tensor(3.)\n"), c[1], e[1], EXACT).outcome == "matches"


def test_a_cut_view_confirms_a_difference_never_a_match():
    c, e = run(w=("grad", [1.0])), run(w=("grad", [1.0]))
    cut = replace(c[0], cut="containers deeper than 8 levels were not followed")
    verdict = compare_runs(cut, e[0], c[1], e[1], EXACT)
    assert verdict.outcome == "error" and verdict.compared == 1
    assert verdict.note == "not fully compared: containers deeper than 8 levels were not followed"
    # The eager run's cut counts as much as the compiled run's.
    assert compare_runs(c[0], replace(e[0], cut="x"), c[1], e[1], EXACT).outcome == "error"
    # :partial-view: takes the match, keeping why the view was cut for the page.
    accepted = compare_runs(cut, e[0], c[1], e[1], EXACT, partial=True)
    assert accepted.outcome == "matches" and accepted.cut.startswith("containers deeper")
    # Nothing seen where the view was cut is no proof that nothing is there.
    empty = compare_runs(replace(run()[0], cut="x deeper"), run()[0], c[1], e[1], EXACT)
    assert empty.outcome == "error" and empty.note == "not fully compared: x deeper"
    # What was seen to differ differs, however much was not seen.
    c2 = run(w=("grad", [2.0]))
    assert compare_runs(replace(c2[0], cut="x"), e[0], c2[1], e[1], EXACT).outcome == "differs"


def test_printed_output_of_the_two_runs_is_compared():
    c, e = run(y=("value", [1.0])), run(y=("value", [1.0]))
    printed = replace(c[0], output="sum tensor(-2532.96)\n")
    verdict = compare_runs(printed, replace(e[0], output="sum tensor(-2524.56)\n"), c[1], e[1], EXACT)
    assert verdict.outcome == "differs"
    assert verdict.diffs[-1].name == "printed line 1"
    assert "compiled printed 'sum tensor(-2532.96)', eager 'sum tensor(-2524.56)'" in verdict.note
    # Numbers within the output tolerance (inductor's float32 rounding) are the same line;
    # a line only one run printed is not.
    close = compare_runs(replace(c[0], output="tensor(1.0001)"), replace(e[0], output="tensor(1.0000)"),
                         c[1], e[1], EXACT)
    assert close.outcome == "matches"
    # Integers are counts, indices, ids: exact, however large.
    counts = compare_runs(replace(c[0], output="step 10001"), replace(e[0], output="step 10002"),
                          c[1], e[1], EXACT)
    assert counts.outcome == "differs"
    extra = compare_runs(replace(c[0], output="a\nb"), replace(e[0], output="a"), c[1], e[1], EXACT)
    assert extra.outcome == "differs" and "printed line 2 (compiled printed 'b', eager nothing)" in extra.note
    # Hex bit patterns are numbers, not addresses: 0x4000 is not 0x3f80.
    hexes = compare_runs(replace(c[0], output="0x4000"), replace(e[0], output="0x3f80"), c[1], e[1], EXACT)
    assert hexes.outcome == "differs"


def test_output_normalisation_keeps_content_drops_noise():
    from sphinx_autocast_demo.core.printed import normalize_output

    printed = ("tensor([[1., 2.],\n        [3., 4.]])\n<object object at 0x7f3a2c1b9e40>\n"
               "W1129 10:15:13.123000 4242 torch/_dynamo/convert_frame.py:964] recompiling\n"
               "took 0.53 s\n")
    recorded = ("tensor([[1., 2.],\n[3., 4.]])\n<object object at 0x7f00deadbeef>\n"
                "W1130 09:00:00.000001 17 torch/_dynamo/convert_frame.py:970] recompiling\n"
                "took 1.2 s")
    assert normalize_output(printed) == normalize_output(recorded)
    # A real change still shows.
    assert normalize_output(printed) != normalize_output(recorded.replace("4.]]", "5.]]"))
    # A hex value that is not an address (a bit pattern) is compared.
    assert normalize_output("0x3f80\n") != normalize_output("0x4000")
    assert normalize_output("<function f at 0x7f00ab12>") == normalize_output("<function f at 0x55aa>")


# -- each kind of tensor held to its measure (compare_tensor) ------------------------------------

def stored(dtype, values):
    """``values`` as a run stores a tensor of ``dtype``'s numbers (engine.protocol.STORED)."""
    code = STORED.get(dtype, "d")
    if code == "bf16":  # (values a bfloat16 holds exactly: the upper half of their float32)
        return b"".join(struct.pack("<f", v)[2:] for v in values)
    if code not in "efd":
        values = [int(v) for v in values]
    return struct.pack(f"<{len(values)}{code}", *values)


def compared(dtype, shape, a, b, kind="value", tol=EXACT):
    """compare_tensor of two records whose numbers are ``a`` and ``b``, stored as a run stores
    them for ``dtype``."""
    left, right = stored(dtype, a), stored(dtype, b)
    records = [TensorRecord("t", kind, dtype, tuple(shape), sha) for sha in ("x", "y")]
    return compare_tensor(records[0], records[1], (left, 0), (right, 0), tol)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64", "float8_e4m3fn"])
def test_each_dtype_is_read_back_as_the_run_stored_it(dtype):
    # A run stores most dtypes' numbers as they are (no float64 copy of a whole model): 0.5
    # apart is read back as 0.5 apart, whatever the width.
    diff = compared(dtype, [2], [1.5, -2.0], [1.0, -2.0])
    assert diff.max_abs == 0.5 and not diff.equal


def test_integers_and_booleans_are_compared_exactly_whatever_the_tolerance():
    diff = compared("int64", [1], [10_001.0], [10_000.0])
    assert not diff.equal and diff.max_abs == 1.0 and diff.note == Note("exact")
    assert note_text(diff) == "integers and booleans are compared exactly"
    assert not compared("bool", [1], [1.0], [0.0]).equal
    assert compared("float32", [1], [10_001.0], [10_000.0]).equal  # (the same within 1e-3)


def test_a_complex_tensor_is_compared_part_by_part_within_the_tolerance():
    close = compared("complex64", [2], [1.0, 2.0, 3.0, -1.0], [1.0, 2.0, 3.0 + 1e-6, -1.0])
    assert close.equal and 0 < (close.max_abs or 0) < 1e-5
    assert not compared("complex64", [1], [1.0, 2.5], [1.0, 2.0]).equal


def test_equal_values_not_bitwise_equal_say_what_differs():
    zero = compared("float32", [2], [-0.0, 1.0], [0.0, 1.0])
    assert zero.equal and zero.max_abs == 0.0
    assert note_text(zero) == "equal values; differs only in the sign of zero"
    nan = compared("float32", [1], [-math.nan], [math.nan])
    assert note_text(nan) == "equal values; differs only in NaN bit patterns"
    both = compared("float32", [2], [-0.0, -math.nan], [0.0, math.nan])
    assert note_text(both) == "equal values; differs only in the sign of zero and NaN bit patterns"
    # A gradient is compared bitwise (tolerance 0): a difference, not one in value.
    grad = compared("float32", [1], [-0.0], [0.0], kind="grad")
    assert not grad.equal and grad.note == zero.note


def test_a_data_file_cut_short_gives_no_values_never_a_crash():
    records = [TensorRecord("t", "value", "float32", (4,), sha) for sha in ("x", "y")]
    diff = compare_tensor(records[0], records[1], (b"\0" * 12, 0), (b"\0" * 32, 0), EXACT)
    assert not diff.equal and diff.max_abs is None and diff.note == Note("unmeasured")


def test_the_note_names_the_largest_difference_first():
    # Compared in name order a.grad (0.03) comes before b.grad (4.0); the warning's note, like
    # the cell, must not put the smaller one first.
    c = run(**{"a.grad": ("grad", [1.03]), "b.grad": ("grad", [5.0]), "c.grad": ("grad", [1.0])})
    e = run(**{"a.grad": ("grad", [1.0]), "b.grad": ("grad", [1.0]), "c.grad": ("grad", [1.0])})
    verdict = compare_runs(c[0], e[0], c[1], e[1], EXACT)
    assert verdict.outcome == "differs"
    assert verdict.note.startswith("b.grad (max |diff| 4)"), verdict.note
    assert verdict.note.index("b.grad") < verdict.note.index("a.grad") and "c.grad" not in verdict.note
