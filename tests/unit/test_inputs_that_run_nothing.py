"""Inputs that used to crash or mislead (issue 26, items 15 and 16, in part), which a real
``python -m sphinx`` build of tests/roots/test-inputs answers before any demo could run: shards of
absurd counts refused at once where they are set, and ``-b doctest``, which runs none, saying so.
The other inputs of the issue, in builds whose demos run: tests/build/test_inputs.py."""

from __future__ import annotations

import time

import pytest
import sphinx
from conftest import copy_root, sphinx_build

MAX_SHARDS = 10_000  # results.MAX_SHARDS


@pytest.mark.parametrize("where", ["conf.py", "environment"])
def test_an_absurd_shard_count_is_refused_at_once_where_it_is_set(tmp_path_factory, where):
    src = copy_root("inputs", tmp_path_factory)
    env = {}
    if where == "conf.py":
        with (src / "conf.py").open("a") as conf:
            conf.write('autocast_demo_shard = "1/1000000000000"\n')
    else:
        env["AUTOCAST_DEMO_SHARD"] = "1/1000000000000"
    begun = time.monotonic()
    build = sphinx_build(src, src / "_build" / "html", env=env, timeout=60)
    assert time.monotonic() - begun < 30
    assert build.returncode == 2 and "MemoryError" not in build.stderr
    line = len((src / "conf.py").read_text().splitlines())
    said = f"{src / 'conf.py'}:{line}: autocast_demo_shard" if where == "conf.py" else "AUTOCAST_DEMO_SHARD"
    assert f"{said}: '1/1000000000000' splits the demos into more than {MAX_SHARDS} shards" \
        in build.stderr


def test_doctest_says_that_it_checked_no_demo(tmp_path_factory):
    src = copy_root("inputs", tmp_path_factory)
    build = sphinx_build(src, src / "_build" / "doctest", "-b", "doctest")
    assert build.returncode == 0, build.stderr
    (line,) = [ln for ln in build.stderr.splitlines() if "WARNING" in ln]
    assert line == (f"{src / 'conf.py'}:1: WARNING: autocast-demo: -b doctest checks none of the 1 "
                    "demo of these docs; check them with sphinx-build -b autocast-check (or -b html) "
                    "[autocast_demo.not-checked]")
    strict = sphinx_build(src, src / "_build" / "doctest-W", "-b", "doctest", "-W")
    # A make doctest -W CI fails instead of passing unchecked (Sphinx < 7.3 stops at the first
    # warning with exit 2, as the guide says).
    assert strict.returncode == (1 if sphinx.version_info >= (7, 3) else 2), strict.stderr
