"""Records that passed when they should not (issue 26, items 13 and 14), end to end.

One real ``python -m sphinx`` build of tests/roots/test-records, read by several tests; and
accept mode on tests/roots/test-records-accept (its own copy, as it rewrites the page), then
a plain build of what it wrote. Every demo runs under ``off`` only, where compiled matches
eager: what is tested is how the records are read.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import copy_root, installed_torch, sphinx_build, verdicts

MATCH = "\u2713 matches eager"
TORCH = installed_torch()  # 2.13.0+cpu here: a local version, as the CPU wheels have


def expect_line(path: Path, name: str, option: str = "expect") -> int:
    """The line of option ``option`` of the demo named ``name``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    start = lines.index(f"   :name: {name}")
    return next(i for i, line in enumerate(lines[start:], start + 1)
                if line.startswith(f"   :{option}:"))


def warnings_at(build, path: Path, line: int) -> list[str]:
    return [ln for ln in build.stderr.splitlines() if ln.startswith(f"{path}:{line}: WARNING:")]


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    src = copy_root("records", tmp_path_factory)
    index = src / "index.rst"
    index.write_text(index.read_text(encoding="utf-8").replace("TORCH", TORCH), encoding="utf-8")
    cache = tmp_path_factory.mktemp("cache")
    return sphinx_build(src, src / "_build" / "html", "-D", f"autocast_demo_cache_dir={cache}")


@pytest.fixture(scope="module")
def rst(build) -> Path:
    return build.src / "index.rst"


def test_a_hex_bit_pattern_is_compared_not_normalised(build, rst):
    found = warnings_at(build, rst, expect_line(rst, "bits", "expect-output"))
    assert len(found) == 1 and "the printed output is not what the page records" in found[0], build.stderr
    assert "'0x4000'" in build.stderr and "'0x3f80'" in build.stderr


def test_an_object_address_is_still_normalised(build, rst):
    assert warnings_at(build, rst, expect_line(rst, "address", "expect-output")) == []
    assert verdicts(build.html("index"), "address") == [MATCH]


def test_overlapping_scopes_that_disagree_are_a_located_error(build, rst):
    found = warnings_at(build, rst, expect_line(rst, "overlap"))
    assert len(found) == 1, build.stderr
    assert "off[torch>=2.13]" in found[0] and "off[torch<2.16]" in found[0], found
    assert "overlap" in found[0]
    assert build.returncode == 1


@pytest.mark.skipif("+" not in TORCH, reason="the installed torch has no local version")
def test_a_local_version_scope_applies_to_that_build(build, rst):
    assert warnings_at(build, rst, expect_line(rst, "local")) == [], build.stderr
    assert verdicts(build.html("index"), "local") == [MATCH]


def test_a_scope_of_two_devices_means_either(build, rst):
    assert warnings_at(build, rst, expect_line(rst, "devices")) == [], build.stderr
    assert verdicts(build.html("index"), "devices") == [MATCH]


def test_a_scope_no_release_satisfies_warns_at_its_line(build, rst):
    found = warnings_at(build, rst, expect_line(rst, "never"))
    assert len(found) == 1, build.stderr
    assert "off[torch>=2.16,<2.15]" in found[0] and "no torch release" in found[0], found
    assert "[autocast_demo.scope]" in found[0]
    assert verdicts(build.html("index"), "never") == [MATCH]  # the demo still runs and holds


@pytest.fixture(scope="module")
def accepted(tmp_path_factory):
    src = copy_root("records-accept", tmp_path_factory)
    cache = ("-D", f"autocast_demo_cache_dir={tmp_path_factory.mktemp('cache')}")
    out = src / "_build" / "html"
    write = sphinx_build(src, out, *cache, env={"AUTOCAST_DEMO_ACCEPT": "1"})
    text = (src / "index.rst").read_text(encoding="utf-8")
    verify = sphinx_build(src, out, *cache)
    return write, text, verify


def test_accept_rewrites_scoped_records_in_place_and_converges(accepted):
    write, text, verify = accepted
    assert write.returncode == 0, write.stderr
    assert "   :expect: off[torch>=2.9]: matches\n" in text, text
    assert "   :expect: off: matches, off[torch >= 2.9 cpu]: matches\n" in text, text
    # The next build, from the cache, finds every record holds.
    assert verify.returncode == 0, verify.stderr
    assert "WARNING" not in verify.stderr, verify.stderr
