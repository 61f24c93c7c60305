"""A page read as a notebook (issue 49): real builds of test-notebook (MyST). A demo with
``:continues:`` runs after the page's earlier demos, whose code each of its runs replays from a
clean start (their output hidden); its bare last expression is shown and compared; a demo
without it still runs alone; an edit of an earlier cell runs the later one again."""

from __future__ import annotations

import pytest
from conftest import copy_root, sphinx_build, verdicts


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    src = copy_root("notebook", tmp_path_factory)
    cache = ("-D", f"autocast_demo_cache_dir={src / '_build' / 'cache'}")
    first = sphinx_build(src, src / "_build" / "first", *cache)
    page = src / "index.md"
    page.write_text(page.read_text(encoding="utf-8").replace("torch.ones(8)", "torch.ones(5)"),
                    encoding="utf-8")
    edited = sphinx_build(src, src / "_build" / "edited", *cache)
    return first, edited


def printed(build, ident: str) -> list[str]:
    box = build.html("index").find(id=ident)
    return [out.find("pre").get_text() for out in box.select("div.autocast-demo-output")]


def test_a_continuing_cell_uses_the_earlier_ones_and_shows_its_last_expression(builds):
    first, _ = builds
    assert first.returncode == 0, first.stderr
    compiled, eager = printed(first, "bare-expression")
    assert compiled.startswith("tensor([") and compiled.count(".") == 8, compiled
    assert "the first cell ran" not in compiled  # (the replayed cell's output is not its own)
    assert eager.startswith("tensor([") and eager != compiled  # (inductor's own random numbers)
    # The value is compared as a tensor too: inductor's dropout keeps other elements.
    cells = verdicts(first.html("index"), "bare-expression")
    assert all(cell.startswith("\u2717 differs (_, max |\u0394|") for cell in cells), cells


def test_a_demo_without_it_still_runs_alone(builds):
    first, _ = builds
    assert "NameError: name 'dropped' is not defined" in printed(first, "still-alone")[0]


def test_an_edit_of_an_earlier_cell_runs_the_later_one_again(builds):
    _, edited = builds
    assert edited.returncode == 0, edited.stderr
    assert printed(edited, "bare-expression")[0].count(".") == 5
