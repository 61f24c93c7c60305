"""The directive end to end: one real build of tests/roots/test-basic, many assertions."""

from __future__ import annotations

import importlib.metadata

import pytest
from conftest import app_build, copy_root, footer, verdicts

MATCH, DIFFER, RAISES = "\u2713 matches eager", "\u2717 differs", "\u26a0 raises"


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return app_build(copy_root("basic", tmp_path_factory))


def test_build_passes_with_only_the_missing_expectation_warning(build):
    assert build.app.statuscode == 0
    warnings = [w for w in build.warnings.splitlines() if "WARNING" in w]
    assert len(warnings) == 1, build.warnings
    assert "index.rst:111: WARNING: no recorded expectation for off" in warnings[0]
    # The exact text to paste follows the warning.
    assert ":expect: off: matches" in build.warnings


def test_only_the_value_that_matches_where_backward_runs_reproduces_eager(build):
    inside = verdicts(build.html("index"), "inside")
    outside = verdicts(build.html("index"), "outside")
    assert inside[0].startswith(MATCH) and inside[1].startswith(DIFFER) and inside[2].startswith(MATCH)
    assert outside[0].startswith(DIFFER) and outside[1].startswith(MATCH) and outside[2].startswith(DIFFER)


def test_two_values_really_give_different_gradients(build):
    result = build.result("index", "outside")
    by_value = {vr.variant.name: vr for vr in result.variants}

    def grad(run):
        return next(t for t in run.tensors if t.name == "w.grad")

    same, off = by_value["same_as_forward"], by_value["off"]
    assert grad(same.compiled).sha256 != grad(off.compiled).sha256
    assert grad(off.compiled).sha256 == grad(off.eager).sha256
    # Eager does not depend on the value: both eager runs saw the same gradient.
    assert grad(same.eager).sha256 == grad(off.eager).sha256
    # bf16 rounding of a 64x64 fp32 matmul: the seed notes measured ~8e-2.
    assert 1e-3 < same.verdict.max_abs < 1.0


def test_fp16_overflow_gives_inf_where_eager_gives_65536(build):
    result = build.result("index", "overflow")
    printed = {vr.variant.name: vr.compiled.output.strip() for vr in result.variants}
    assert printed == {"same_as_forward": "inf", "off": "65536.0", "fp16": "inf"}
    eager = {vr.eager.output.strip() for vr in result.variants}
    assert eager == {"65536.0"}


def test_custom_kwargs_list_value_is_shown_and_run(build):
    soup = build.html("index")
    values = [tr.select_one("th strong, td strong").get_text()
              for tr in soup.find(id="overflow").select("tbody tr")]
    assert values == ["same_as_forward", "off", "fp16"]
    assert 'torch.float16' in soup.find(id="overflow").get_text()


def test_expected_error_is_recorded_and_rendered(build):
    cells = verdicts(build.html("index"), "dict-value")
    assert cells[0] == MATCH
    assert cells[1] == f"{RAISES} BackendCompilerFailed"
    result = build.result("index", "dict-value")
    bad = result.variants[1]
    assert "AssertionError" in bad.compiled.error.names


def test_setup_is_hidden_unless_shown_and_groups_apply(build):
    soup = build.html("index")
    setups = soup.select("div.autocast-demo-setup, pre")
    assert not any("fp32 matmul inside" in s.get_text() for s in setups)  # hidden setup
    assert any("scale = 3.0" in s.get_text() for s in setups)  # :show:
    assert build.result("index", "grouped").variants[0].compiled.output.strip() == "tensor([3., 3.])"


def test_myst_demo_runs_like_rest(build):
    cells = verdicts(build.html("markdown"), "myst-outside")
    assert cells[0].startswith(DIFFER) and cells[1].startswith(MATCH) and cells[2].startswith(DIFFER)


def test_nothing_leaks_between_demos_or_values(build):
    # The observer's recorded output (no leaked config, seed, name, torch.compile or cwd)
    # held for both values, or the build would have warned.
    result = build.result("isolation", "observer")
    assert [f for f in result.findings] == []
    outputs = [vr.compiled.output.split() for vr in result.variants]
    assert outputs[0][0] == "same_as_forward" and outputs[1][0] == "off"


def test_results_table_output_and_provenance(build):
    soup = build.html("index")
    box = soup.find(id="outside")
    assert box.select_one("pre").get_text().startswith("x = torch.randn(64, 64)")
    printed = box.select(".autocast-demo-output pre")
    assert [p.get_text().strip() for p in printed] == ["torch.float32"]
    provenance = footer(soup, "outside")
    assert f"torch {importlib.metadata.version('torch')}" in provenance
    assert "backend inductor" in provenance and "device cpu" in provenance
    assert "checked at build time" in provenance.lower()
    assert not soup.select(".autocast-demo-stale")  # nothing out of date on this page


@pytest.mark.parametrize("buildername", ["text", "latex"])
def test_other_builders_do_not_crash(buildername, tmp_path_factory, build):
    # Same cache as the html build (beside its conf.py): no torch runs, only rendering.
    cache = build.app.confdir / ".autocast_demo_cache"
    other = app_build(copy_root("basic", tmp_path_factory), buildername,
                      autocast_demo_cache_dir=str(cache))
    assert other.app.statuscode == 0
    assert other.runs() == (0, 19)
    if buildername == "text":
        text = " ".join((other.app.outdir / "index.txt").read_text().split())
        assert "matches eager" in text and "differs" in text
