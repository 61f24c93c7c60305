"""``:config:`` and ``autocast_demo_config``: the matrix over another compile-time flag."""

from __future__ import annotations

from importlib.metadata import version

import pytest
from conftest import copy_root, sphinx_build, verdicts

MATCH = "\u2713 matches eager"
SCALARS = "torch._dynamo.config.capture_scalar_outputs"


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    src = copy_root("config-flags", tmp_path_factory)
    cache = ("-D", f"autocast_demo_cache_dir={tmp_path_factory.mktemp('cache')}")
    default = sphinx_build(src, src / "_build" / "default", *cache)
    # The whole site varies capture_scalar_outputs instead; the values come from conf.py.
    conf = sphinx_build(src, src / "_build" / "conf", *cache, "-D", f"autocast_demo_config={SCALARS}",
                        "-D", "autocast_demo_values=graph_break=False,captured=True")
    return default, conf


def header(soup, ident):
    """The config the table varies (its first header), then its values (a row each)."""
    box = soup.find(id=ident)
    first = box.select_one("thead th").get_text(strip=True)
    return [first, *(tr.select_one("th strong, td strong").get_text() for tr in box.select("tbody tr"))]


def test_directive_config_runs_each_named_value(builds):
    soup = builds[0].html("index")
    assert header(soup, "scalars") == ["capture_scalar_outputs", "graph_break", "captured"]
    # Each value's row says how to set it: the config's module imported (a bare "import torch"
    # does not reach it), then its full path and the value as Python.
    lines = [pre.get_text().strip() for pre in soup.find(id="scalars").select(".autocast-demo-value pre")]
    assert lines == [f"import torch._dynamo.config\n{SCALARS} = False",
                     f"import torch._dynamo.config\n{SCALARS} = True"]
    # The tensors match; what differs is the graph count it prints, which eagerly is 0.
    assert verdicts(soup, "scalars") == [
        f"\u2717 differs (printed line 2: compiled printed 'graphs: {n}', eager 'graphs: 0')"
        for n in (2, 1)]
    # The value reached torch: one graph with the scalar captured, two around the graph break.
    # (The :expect-output: of the page holds, or the build would warn about it.)
    printed = [p.get_text().strip() for p in soup.find(id="scalars").select(".autocast-demo-output pre")]
    # ... and eagerly nothing is compiled: that output differs, so it is shown as well.
    assert printed == ["tensor(9., grad_fn=<SumBackward0>)\ngraphs: 2",
                       "tensor(9., grad_fn=<SumBackward0>)\ngraphs: 1",
                       "tensor(9., grad_fn=<SumBackward0>)\ngraphs: 0"]
    assert f"{SCALARS}" not in builds[0].stderr.split("no_such_flag")[0]


def test_mistakes_are_reported_where_they_are(builds):
    build = builds[0]
    index = build.src / "index.rst"
    assert build.returncode == 1
    warnings = [ln for ln in build.stderr.splitlines() if "WARNING" in ln]
    assert len(warnings) == 2, build.stderr
    # A builtin name means nothing for another config: the directive says so at :values:.
    assert f"{index}:47: WARNING: autocast-demo: :values: unknown value 'off'" in warnings[0] + warnings[1]
    # A flag torch does not have: no run is the snippet's, said at :config:.
    assert (f"{index}:39: WARNING: value one: torch {version('torch')} has no config "
            "torch._functorch.config.no_such_flag") in build.stderr


def test_default_config_is_backward_pass_autocast(builds):
    soup = builds[0].html("conf_level")
    assert header(soup, "conf-level") == ["backward_pass_autocast", "same_as_forward", "off", "autocast"]
    assert verdicts(soup, "conf-level") == [MATCH] * 3


def test_conf_py_config_and_values_apply_to_every_demo(builds):
    conf = builds[1]
    soup = conf.html("conf_level")
    assert header(soup, "conf-level") == ["capture_scalar_outputs", "graph_break", "captured"]
    assert verdicts(soup, "conf-level") == [MATCH, MATCH]
    # Builtin names belong to backward_pass_autocast only, whichever config the site varies.
    assert "unknown value 'off': use one of default, or name it" in conf.stderr
    # Only the demo that follows conf.py ran again: the others are the same runs as before.
    assert conf.runs() == (4, 3)
