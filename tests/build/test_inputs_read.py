"""A cached result stands for everything its runs read, not only the writer's modules: a
variable of the environment, a directory's listing, an installed package the snippet imported
(installed as CI installs it, not editable), and where conf.py's ``sys.path`` finds a helper.
Change any one and that demo runs again, even where Sphinx would not read its page again; change
none and nothing runs. Real builds, real torch (tests/roots/test-inputs-read)."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest
from conftest import CliBuild, copy_root, sphinx_build


def printed(build: CliBuild) -> dict[str, float]:
    """What the page showed right after ``build`` (a later build writes it again)."""
    page = build.html("index").get_text()
    return {name: float(value) for name, value in re.findall(r"(variable|listing|package|helper) "
                                                              r"([\d.]+)", page)}


def upgrade(site: Path, scale: str) -> None:
    """demopkg 1.0 -> 1.1 as pip would lay it: new module, new metadata, a RECORD of both."""
    (site / "demopkg" / "__init__.py").write_text(f"SCALE = {scale}\n")
    old, new = site / "demopkg-1.0.dist-info", site / "demopkg-1.1.dist-info"
    old.rename(new)
    (new / "METADATA").write_text("Metadata-Version: 2.1\nName: demopkg\nVersion: 1.1\n")
    lines = []
    for rel in ("demopkg/__init__.py", "demopkg-1.1.dist-info/METADATA"):
        data = (site / rel).read_bytes()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        lines.append(f"{rel},sha256={digest},{len(data)}")
    (new / "RECORD").write_text("\n".join([*lines, "demopkg-1.1.dist-info/RECORD,,"]) + "\n")


@pytest.fixture(scope="module")
def steps(tmp_path_factory) -> dict[str, tuple[CliBuild, dict[str, float]]]:
    src = copy_root("inputs-read", tmp_path_factory)
    done: dict[str, tuple[CliBuild, dict[str, float]]] = {}

    def build(name: str, scale: str = "1", *args: str, out: str = "html") -> None:
        env = {"PYTHONPATH": str(src / "site-packages"), "DEMO_SCALE": scale}
        made = sphinx_build(src, src / "_build" / out, *args, env=env)
        assert made.returncode == 0, (name, made.stderr)
        done[name] = made, printed(made)

    build("first")
    build("unchanged")
    build("variable", "3")
    (src / "data" / "b.txt").write_text("two\n")
    build("listing", "3")
    upgrade(src / "site-packages", "7.0")
    build("package", "3", "-E")
    conf = src / "conf.py"
    conf.write_text(conf.read_text().replace('"helpers_a"', '"helpers_b"'))
    build("helper", "3", "-E")
    build("all unchanged", "3", "-E")
    # A second build directory (its own environment) sharing the cache beside conf.py, as a
    # PDF build beside the HTML one does: it runs the demo whose variable changed and stores
    # that result; the first directory's pages still show the result of DEMO_SCALE=3.
    build("other directory", "9", out="other")
    build("after the other", "9")
    return done


def test_the_first_build_runs_each_demo_and_an_unchanged_one_nothing(steps):
    first, shown = steps["first"]
    assert shown == {"variable": 1.0, "listing": 1.0, "package": 2.0, "helper": 4.0}
    assert first.runs() == (8, 0)  # four demos, one value, compiled and eager
    assert steps["unchanged"][0].runs() == (0, 0)  # (no page read again)
    assert steps["all unchanged"][0].runs() == (0, 4)  # -E reads every page: all from the cache


@pytest.mark.parametrize(("step", "demo", "value"), [
    ("variable", "variable", 3.0),  # DEMO_SCALE=3 in the build's environment
    ("listing", "listing", 2.0),  # a second file in the directory the snippet globs
    ("package", "package", 7.0),  # demopkg upgraded, installed as CI does (not editable)
    ("helper", "helper", 5.0),  # conf.py's sys.path now finds helper_mod elsewhere
])
def test_a_changed_input_runs_its_demo_again_and_only_it(steps, step, demo, value):
    # Before: each was served from the cache (0 runs), the page showing the old value.
    build, shown = steps[step]
    assert shown[demo] == value
    assert build.runs() == (2, 3), build.stats


def test_a_page_never_keeps_a_result_whose_inputs_changed_since_it_was_shown(steps):
    # The other directory's build stored DEMO_SCALE=9's result under the key of the one this
    # directory's page shows. Whether the page is read again is decided by what its own
    # results stand for (DEMO_SCALE=3), not by the cache, which now holds 9: the page reads
    # again and shows 9, from the cache. (0.6.2 kept showing 3.)
    other, shown_there = steps["other directory"]
    assert shown_there["variable"] == 9.0 and other.runs() == (2, 3), other.stats
    after, shown = steps["after the other"]
    assert shown == {"variable": 9.0, "listing": 2.0, "package": 7.0, "helper": 5.0}
    assert after.runs() == (0, 4), after.stats
