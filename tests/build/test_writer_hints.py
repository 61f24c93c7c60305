"""What a build tells a writer of real pages (issue 38): the dtype the ``autocast`` value casts
to and who chose it, the tolerance option that applies where compiled differs from eager by
rounding only, and the ``no-config`` record that covers every release without the config.
Real builds of tests/roots/test-writer-hints, real torch, inductor."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from conftest import copy_root, sphinx_build, verdicts


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    src = copy_root("writer-hints", tmp_path_factory)
    return sphinx_build(src, src / "_build" / "html", "-v", "--keep-going")


@pytest.fixture(scope="module")
def followed(build):
    """The same project once the writer has done what the first build said: the tolerance
    raised to the value it named, the ``no-config`` record written as it proposed it."""
    said = " ".join(warnings(build, "index.rst") + warnings(build, "nocfg.rst"))
    tolerance = re.search(r"raise this demo's :grad-tolerance: 1e-09 \(line 36\) to (\S+?)[.;]? ", said)
    record = re.search(r"record that in :expect: \((\S+: no-config);", said)
    assert tolerance and record, said
    index, page = build.src / "index.rst", build.src / "nocfg.rst"
    index.write_text(index.read_text(encoding="utf-8").replace(
        ":grad-tolerance: 1e-9", f":grad-tolerance: {tolerance[1]}"), encoding="utf-8")
    page.write_text(page.read_text(encoding="utf-8").replace(
        "   :values: keep=False, prune=True\n",
        f"   :values: keep=False, prune=True\n   :expect: {record[1]}\n"), encoding="utf-8")
    return sphinx_build(build.src, build.out, "--keep-going")


def warnings(build, page: str) -> list[str]:
    return [line.split(": WARNING: ", 1)[1] for line in build.stderr.splitlines()
            if f"{page}:" in line and ": WARNING: " in line]


@pytest.mark.torch
def test_the_usual_autocast_dtype_of_each_device_is_torchs():
    from sphinx_autocast_demo.core.config import DEVICE_DTYPES

    # What torch.autocast(device) casts to when given no dtype, asked of a fresh interpreter.
    asked = f"import torch; print(*(torch.get_autocast_dtype(d) for d in {tuple(DEVICE_DTYPES)!r}))"
    said = subprocess.run([sys.executable, "-c", asked], capture_output=True, text=True, check=True)
    assert said.stdout.split() == [f"torch.{dtype}" for dtype in DEVICE_DTYPES.values()]


def test_the_log_says_which_dtype_the_autocast_value_casts_to_and_who_chose_it(build):
    index = build.src / "index.rst"
    said = [line for line in build.stdout.splitlines() if "the autocast value casts to" in line]
    assert (f"{index}:45: autocast-demo: the autocast value casts to torch.bfloat16 (torch's usual "
            "autocast dtype on cpu: neither :dtype: nor autocast_demo_dtype names one for it)") in said
    assert f"{index}:55: autocast-demo: the autocast value casts to torch.float16 (its :dtype:)" in said
    # A CUDA demo casts as its readers' torch.autocast("cuda") does, whatever the CPU's default.
    assert (f"{index}:66: autocast-demo: the autocast value casts to torch.float16 (torch's usual "
            "autocast dtype on cuda: neither :dtype: nor autocast_demo_dtype names one for it)") in said
    rows = build.html("index").select("#dtype-named tbody .autocast-demo-value")
    cells = [cell.get_text("") for cell in rows]
    assert len(cells) == 1 and '"dtype": torch.float16' in cells[0], cells


def test_values_alike_by_rounding_name_the_tolerance_to_allow_not_the_snippet_to_change(build):
    said = [w for w in warnings(build, "index.rst") if w.endswith("[autocast_demo.alike]")]
    assert len(said) == 2, build.stderr
    # No value decides a rounding difference: the tolerance comes first, as the option that
    # applies (conf.py's here, since the demo names none) with the value to write.
    assert said[0].startswith("this demo cannot tell same_as_forward, off and autocast apart: "
                              "every one differs from eager, but only by rounding (at most "), said
    assert ("in w.grad), which no value decides; allow it: add :grad-tolerance: 1e-0" in said[0]
            and " to this demo (it names none, so conf.py's autocast_demo_grad_tolerance = 0 "
            "applies to it). If its values then still give one verdict, make the snippet "
            "depend on the value" in said[0]), said[0]
    # A demo with a tolerance of its own: that one, at its line (31), is what to raise.
    assert "allow it: raise this demo's :grad-tolerance: 1e-09 (line 36) to 1e-0" in said[1], said[1]


def test_a_record_broken_by_rounding_says_which_tolerance_to_raise(build):
    index = build.src / "index.rst"
    broken = [line for line in build.stderr.splitlines()
              if line.startswith(f"{index}:37: WARNING: value ")]
    assert len(broken) == 3, build.stderr
    assert all("; if that is rounding, not the value's doing, allow it: raise this demo's "
               ":grad-tolerance: 1e-09 (line 36) to 1e-0" in line for line in broken), broken


def test_the_tolerance_raised_as_said_makes_the_recorded_match_hold(followed):
    index = followed.src / "index.rst"
    assert f"{index}:37: WARNING" not in followed.stderr, followed.stderr
    cells = verdicts(followed.html("index"), "rounding-own-tolerance")
    assert len(cells) == 3 and all(c.startswith("\u2713 matches eager") for c in cells), cells


def test_the_no_config_record_proposed_covers_every_release_without_it(build):
    import torch

    major, minor = (int(part) for part in torch.__version__.split(".")[:2])
    said = warnings(build, "nocfg.rst")
    assert len(said) == 1 and said[0].endswith(
        f"record that in :expect: (*[torch<{major}.{minor + 1}]: no-config; every release up to "
        f"{major}.{minor}: move the bound up to the release that adds it, once you know it) "
        "[autocast_demo.no-config]"), said
    assert f"torch=={torch.__version__}" not in build.stderr


def test_the_no_config_record_written_as_proposed_holds(followed):
    assert warnings(followed, "nocfg.rst") == [], followed.stderr
    cells = verdicts(followed.html("nocfg"), "not-yet")
    assert len(cells) == 2 and all("no such config" in c for c in cells), cells
