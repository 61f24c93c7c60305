"""cells.py and set_lines.py: a judged value as a table cell's text and classes, formatting only."""

from __future__ import annotations

from dataclasses import replace

import pytest
from docutils import nodes
from fakes import TORCH, demo, result

from sphinx_autocast_demo.core.config import DEFAULT_CONFIG
from sphinx_autocast_demo.core.model import (
    Environment,
    Frame,
    Note,
    RunRecord,
    TensorDiff,
    VariantResult,
    Verdict,
)
from sphinx_autocast_demo.judge.judgement import Column, NotChecked, Value, judge
from sphinx_autocast_demo.present import cells, set_lines, tables
from sphinx_autocast_demo.read.syntax import parse_values

OFF = parse_values("off", "cpu", "bfloat16")[0]
OK = RunRecord("ok")


def vr(verdict: Verdict, compiled: RunRecord = OK) -> VariantResult:
    return VariantResult(OFF, verdict, compiled, OK)


PRINTED = TensorDiff("printed line 2", "output", None, None, False, None,
                     Note("printed", "'0.'", "", line=2))


def value(verdict: Verdict, record: str = "holds", expected: str | None = "matches",
          why: NotChecked | None = None) -> Value:
    return Value("off", vr(verdict), why, expected, record, ())  # type: ignore[arg-type]


def diff(name: str, equal: bool = False, max_abs: float | None = None, note: Note | None = None,
         eager_dtype: str | None = "float32") -> TensorDiff:
    return TensorDiff(name, "grad", "float32", eager_dtype, equal, max_abs, note)


@pytest.mark.parametrize(("verdict", "text"), [
    (Verdict("matches"), "matches eager"),
    (Verdict("matches", max_abs=1.5e-4), "matches eager (max |\u0394| 1.5e-04)"),
    (Verdict("matches", cut="a generator it could not follow"),
     "matches eager in what was compared (partial view accepted: a generator it could not "
     "follow)"),
    # The largest difference is named; the rest are counted. Measured ones first, however
    # they were compared: a shown 3.05e-02 must not hide a 4.0 behind "and 2 more".
    (Verdict("differs", diffs=(diff("a", equal=True, max_abs=0.0),
                               diff("y", note=Note("dtype"), eager_dtype="float16"),
                               diff("w.grad", max_abs=0.5), diff("z"))),
     "differs (w.grad, max |\u0394| 5.00e-01) and 2 more"),
    (Verdict("differs", diffs=(diff("head.grad", max_abs=3.05e-2), diff("proj.weight.grad", max_abs=2.0),
                               diff("proj.bias.grad", max_abs=4.0))),
     "differs (proj.bias.grad, max |\u0394| 4.00e+00) and 2 more"),
    (Verdict("differs", diffs=(diff("w.grad", max_abs=0.5), diff("b.grad", max_abs=float("nan")))),
     "differs (b.grad, max |\u0394| nan) and 1 more"),
    # Without a number, in the order they were compared.
    (Verdict("differs", diffs=(diff("w2.grad", note=Note("missing", "[4]", ""), eager_dtype=None),
                               PRINTED)),
     "differs (w2.grad: compiled: a float32 tensor of shape [4]; eager: None) and 1 more"),
    (Verdict("differs", diffs=(PRINTED,)), "differs (printed line 2: compiled printed '0.', eager nothing)"),
    (Verdict("differs", diffs=(diff("y", note=Note("shape", "[2]", "[3]")),)),
     "differs (y: shape [2] compiled, [3] eager)"),
    (Verdict("differs", diffs=(diff("y"),)), "differs (y)"),
    # Equal values, not bitwise (gradients are held bitwise): what differs, never "max 0".
    (Verdict("differs", diffs=(diff("w.grad", max_abs=0.0, note=Note("signed-zero")),)),
     "differs (w.grad: equal values; differs only in the sign of zero)"),
    (Verdict("differs", eager_exception="KeyError", note="eager raised KeyError: 'x'; compiled did not"),
     "differs: eager raises KeyError, compiled does not"),
    (Verdict("differs"), "differs"),
    (Verdict("raises", exception="RuntimeError"), "raises RuntimeError"),
    (Verdict("raises", exception="RuntimeError", eager_exception="RuntimeError"),
     "raises RuntimeError (eager too)"),
    (Verdict("raises", exception="RuntimeError", eager_exception="KeyError"),
     "raises RuntimeError (eager raises KeyError)"),
    (Verdict("no-config"), "no such config in this torch"),
    (Verdict("error"), "not checked"),
])
def test_what_compiled_did_as_a_cell_says_it(verdict, text):
    assert cells.outcome_text(vr(verdict)) == text


def test_the_verdict_cell_marks_only_a_checked_result():
    assert cells.verdict_text(value(Verdict("differs")), TORCH) == (
        "\u2717 differs", ["autocast-demo-differs"])
    older = NotChecked("not checked", "cached result of torch 2.12.0", "torch 2.12.0",
                       other_torch="2.12.0", cause="other-torch")
    assert cells.verdict_text(value(Verdict("matches"), why=older), TORCH) == (
        f"matches eager with torch 2.12.0 (cached; not checked with torch {TORCH})",
        ["autocast-demo-unchecked"])
    # The cell says which run stopped and how from the runs themselves (as judge.unchecked
    # found it), not from the judgement's English words.
    stopped = NotChecked("not checked", "the eager run timed out", "timed out", cause="stopped")
    timed_out = Value("off", VariantResult(OFF, Verdict("error"), OK, RunRecord("timeout")), stopped,
                      "matches", "holds", ())
    assert cells.verdict_text(timed_out, TORCH) == (
        "\u2014 not checked: the eager run timed out", ["autocast-demo-error", "autocast-demo-unchecked"])


def test_the_record_cells_say_whether_the_page_holds():
    raised = Verdict("raises", exception="KeyError")
    assert cells.recorded_text(value(raised, "unrecorded", None)) == (
        "not recorded", ["autocast-demo-unrecorded"])
    assert cells.recorded_text(value(raised, "broken")) == (
        "no: records matches", ["autocast-demo-stale-cell"])
    assert cells.recorded_text(value(raised, "holds", "raises KeyError")) == (
        "yes (raises KeyError)", ["autocast-demo-holds"])
    # A record cell shows no mark: a mark says what compiled did against eager, and only that.
    assert not any(m in cells.recorded_text(value(raised, r))[0] for r in ("broken", "holds")
                   for m in cells.mark_meanings())
    # :show: record: what happened, with the verdict's mark and colour (the compiled run raised),
    # and the record's words and style beside them.
    assert cells.outcome_as_recorded(value(raised, "unrecorded", None), TORCH) == (
        "\u26a0 raises KeyError (not recorded)", ["autocast-demo-raises", "autocast-demo-unrecorded"])
    assert cells.outcome_as_recorded(value(raised, "broken"), TORCH) == (
        "\u26a0 raises KeyError, but the page records matches",
        ["autocast-demo-raises", "autocast-demo-stale-cell"])
    assert cells.outcome_as_recorded(value(raised, "holds", "raises KeyError"), TORCH) == (
        "\u26a0 raises KeyError, as recorded", ["autocast-demo-raises", "autocast-demo-holds"])
    differs = Verdict("differs")
    assert cells.outcome_as_recorded(value(differs, "holds", "differs"), TORCH) == (
        "\u2717 differs, as recorded", ["autocast-demo-differs", "autocast-demo-holds"])


def test_the_value_cell_shows_the_line_to_copy_or_torchs_default():
    found = result(demo(), (Verdict("matches"), OK, OK), (Verdict("matches"), OK, OK))
    cell = set_lines.value_cell(found, found.variants[1])
    assert cell.astext() == ("off\n\nimport torch._functorch.config\n"
                             "torch._functorch.config.backward_pass_autocast = 'off'")
    assert [b["classes"] for b in cell.findall(tables.set_code)] == [["autocast-demo-set"]]
    default = parse_values("default", "cpu", "bfloat16")[0]
    said = VariantResult(default, Verdict("matches"), RunRecord("ok", config_default="'same_as_forward'"), OK)
    assert "not set: torch's default, here 'same_as_forward'" in set_lines.value_cell(found, said).astext()
    assert set_lines.value_cell(found, VariantResult(default, Verdict("matches"), OK, OK)).astext().endswith(
        "not set: torch's default")
    reset = VariantResult(OFF, Verdict("matches"), RunRecord("ok", config_set=("'off'", "True")), OK)
    assert set_lines.value_cell(found, reset).astext().endswith(
        "the snippet itself changes it to 'off', True")
    # The line that set it, in the page's coordinates (the demo's own code is the last part).
    frame = Frame(len(found.codes) - 1, 1, "<module>", "")
    at = RunRecord("ok", config_set=("'off'",), config_set_at=(frame,))
    line = found.codes[-1].doc_line(1)
    assert set_lines.value_cell(found, VariantResult(OFF, Verdict("matches"), at, OK)).astext().endswith(
        f"the snippet itself changes it to 'off' (line {line})")


def test_the_value_cell_links_to_lines_the_page_lists_once():
    found = result(demo(), (Verdict("matches"), OK, OK), (Verdict("matches"), OK, OK))
    lines = set_lines.set_line(found, found.variants[1])
    cell = set_lines.value_cell(found, found.variants[1], {lines: "autocast-demo-d-set-1"})
    assert cell.astext() == f"off\n\n{set_lines.listed()}" and not list(cell.findall(tables.set_code))
    (link,) = cell.findall(nodes.reference)
    assert link["refid"] == "autocast-demo-d-set-1"
    # Lines the page does not list stay in the row.
    other = set_lines.value_cell(found, found.variants[0], {lines: "autocast-demo-d-set-1"})
    assert other.astext().endswith("= 'same_as_forward'") and not list(other.findall(nodes.reference))


def test_no_lines_to_copy_where_no_torch_checked_has_the_config():
    """They would raise AttributeError in each (upstream's aot_autograd_prune_unused_outputs)."""
    found = result(demo(), (Verdict("no-config"), OK, OK), (Verdict("matches"), OK, OK))
    judged = judge(found, TORCH)
    assert [set_lines.settable(judged, v.name) for v in judged.here.values] == [False, True]
    cell = set_lines.value_cell(found, found.variants[0], runs=False)
    assert cell.astext() == "same_as_forward\n\n'same_as_forward': no torch checked has the config to set"
    assert not list(cell.findall(tables.set_code))


@pytest.mark.parametrize(("config", "values", "lines"), [
    (DEFAULT_CONFIG, "off", ["import torch._functorch.config",
                             "torch._functorch.config.backward_pass_autocast = 'off'"]),
    # (importing torch._functorch.config binds torch: its dtypes need nothing more)
    (DEFAULT_CONFIG, 'fp16=[{"device_type": "cpu", "dtype": torch.float16}]',
     ["import torch._functorch.config",
      'torch._functorch.config.backward_pass_autocast = [{"device_type": "cpu", "dtype": torch.float16}]']),
    ("torch._inductor.config.fallback_random", "on=True",
     ["import torch._inductor.config", "torch._inductor.config.fallback_random = True"]),
    # A config outside torch that takes a dtype: torch too.
    ("amp_helpers.config.dtype", "half=torch.float16",
     ["import torch", "import amp_helpers.config", "amp_helpers.config.dtype = torch.float16"]),
])
def test_the_lines_to_copy_import_what_they_use(config, values, lines):
    """Pasted alone into a fresh ``python``: a bare ``import torch`` does not make
    ``torch._functorch.config`` reachable (tests/build/test_docs.py runs the docs' own)."""
    the_demo = replace(demo(), config=config, variants=tuple(parse_values(values, "cpu", "bfloat16")))
    found = result(the_demo, (Verdict("matches"), OK, OK))
    assert set_lines.set_line(found, found.variants[0]).splitlines() == lines


def test_the_table_and_its_headings():
    found = result(demo(), (Verdict("matches"), OK, OK), (Verdict("matches"), OK, OK))
    rows = [[cells.cell("a" * 50), cells.cell("x")]]
    table = cells.table(["value", "x"], rows)
    assert table["classes"] == ["autocast-demo-results"]
    assert [c["colwidth"] for c in table.findall(lambda n: n.tagname == "colspec")] == [40, 8]
    entries = [e.astext() for e in table.findall(lambda n: n.tagname == "entry")]
    assert entries == ["value", "x", "a" * 50, "x"]
    label = Environment("torch 2.16.0 gpu", "2.16.0", "3.11", "cuda")
    assert cells.heading(Column("", None, found, "build", TORCH, ())) == f"torch {TORCH}"
    mine = Column(label.label, label, found, "build", TORCH, ())
    assert cells.heading(mine) == "torch 2.16.0 gpu (this build)"
    assert cells.heading(Column(label.label, label, found, "set", TORCH, ())) == "torch 2.16.0 gpu"
    assert cells.short_config(found) == "backward_pass_autocast"
