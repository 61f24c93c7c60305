"""The package's house (tools/house.py): no circle of imports between its stages."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).parent.parent


def house():
    spec = importlib.util.spec_from_file_location("house", ROOT / "tools" / "house.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_stage_imports_one_that_imports_it():
    tool = house()
    package = ROOT / "sphinx_autocast_demo"
    found = tool.modules(package)
    edges = {n: tool.arrows(n, p, set(found), package.name) for n, p in found.items()}
    # Every arrow, those only for type checking too: a type that reaches back up a stage is a
    # stage that knows what comes after it.
    every = {n: set(e) for n, e in edges.items()}
    circles = [c for c in tool.components(every) if len(c) > 1]
    assert circles == [], circles


def test_the_house_counts_a_circle_it_is_shown():
    tool = house()
    graph = {"a": {"b"}, "b": {"a"}, "c": {"a"}}
    floors, said = tool.numbers(graph)
    assert said["circles"] == "1 (a <-> b)" and said["arrows"] == 3
    assert floors == {"a": 1, "b": 1, "c": 2} and said["floors"] == 2
