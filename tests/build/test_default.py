"""The ``default`` row: it leaves the config as torch has it, so a page's claim about the
default is checked, and a torch whose default changed fails the build at the demo. Real builds
of tests/roots/test-default, real torch, inductor."""

from __future__ import annotations

import pytest
from conftest import DEFAULT_OFF_IF_SET, copy_root, sphinx_build, verdicts

MATCH, DIFFER = "\u2713 matches eager", "\u2717 differs"
#: A torch whose default became "off", simulated the way only a release could change it: the
#: config entry's default, not a value set (the other rows set theirs, and so keep them).
CHANGED = DEFAULT_OFF_IF_SET  # a torch whose default became "off", where TORCH_TEST_DEFAULT_OFF is set


def starts(cells: list[str]) -> list[str]:
    return [MATCH if c.startswith(MATCH) else DIFFER if c.startswith(DIFFER) else c for c in cells]


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    src = copy_root("default", tmp_path_factory)
    today = sphinx_build(src, src / "_build" / "html", "--keep-going")
    # The page's kept result set of the torch before, whose default was torch's today: what
    # tells a changed default from a wrong record.
    kept = sphinx_build(src, src / "_build" / "kept", "-b", "autocast-check",
                        "-D", "autocast_demo_environment=torch before",
                        "-D", f"autocast_demo_global_setup={CHANGED}")
    assert kept.returncode == 0, kept.stderr
    changed = sphinx_build(src, src / "_build" / "changed", "-W", "--keep-going",
                           "-D", f"autocast_demo_global_setup={CHANGED}",
                           "-D", f"autocast_demo_results={src / '_build' / 'kept' / 'results'}",
                           env={"TORCH_TEST_DEFAULT_OFF": "1"})
    return today, changed


def test_the_default_row_runs_under_torchs_default_and_says_which(builds):
    today, _ = builds
    assert today.returncode == 0, today.stderr
    assert "index.rst:15: WARNING" not in today.stderr, today.stderr
    assert starts(verdicts(today.html("index"), "default-inside")) == [MATCH, MATCH, DIFFER]
    row = today.html("index").select_one("#default-inside tbody tr").get_text(" ", strip=True)
    assert "not set" in row and "'same_as_forward'" in row, row


def test_a_changed_default_fails_the_build_at_the_demo(builds):
    _, changed = builds
    assert changed.returncode != 0
    # The default row now differs; the rows that set their value are as before.
    assert starts(verdicts(changed.html("index"), "default-inside")) == [DIFFER, MATCH, DIFFER]
    # Said once, as what it is: torch's new default against the one the page's records take
    # it to be (its default row recorded alike with same_as_forward's, which still holds).
    said = [line for line in changed.stderr.splitlines() if "index.rst:18: WARNING" in line]
    assert len(said) == 1 and "[autocast_demo.mismatch]" not in changed.stderr, changed.stderr
    assert ("index.rst:18: WARNING: value default: torch " in said[0]
            and "'s default of torch._functorch.config.backward_pass_autocast is now 'off', the "
            "page records 'same_as_forward' (its default row records 'matches', as its "
            "same_as_forward row does); the default row now differs from eager: " in said[0]
            and said[0].endswith("If the page is about the default, record what it does now "
                                 "(default: differs); if it is about 'same_as_forward', name "
                                 "that value instead of default [autocast_demo.default-changed]")
            ), said
    row = changed.html("index").select_one("#default-inside tbody tr").get_text(" ", strip=True)
    assert "'off'" in row, row


def test_a_demo_whose_values_cannot_be_told_apart_warns_unless_it_says_alike(builds):
    today, _ = builds
    warnings = [line for line in today.stderr.splitlines() if "WARNING" in line]
    # Two warnings: at the demo of three values without :alike: (line 29), naming every value,
    # and at the demo of one (line 55); none at the one-value demo whose neighbours differ.
    assert len(warnings) == 2, today.stderr
    assert ("index.rst:29: WARNING: this demo cannot tell same_as_forward, off and autocast "
            "apart: every one matches eager" in warnings[0]), warnings
    assert all(w.endswith("[autocast_demo.alike]") for w in warnings), warnings
    assert starts(verdicts(today.html("index"), "cannot-tell")) == [MATCH] * 3
    assert starts(verdicts(today.html("index"), "alike-on-purpose")) == [MATCH] * 3


def test_a_demo_of_one_value_is_checked_against_the_values_it_does_not_name(builds):
    today, _ = builds
    said = [line for line in today.stderr.splitlines() if "index.rst:55: WARNING" in line]
    assert said == [said[0]] and (
        "this demo cannot tell off, same_as_forward and autocast apart (same_as_forward and "
        "autocast were run too, to check): every one matches eager") in said[0], today.stderr
    assert "index.rst:68" not in today.stderr, today.stderr
    # The values run to check are not shown: each table has the demo's own value only.
    assert starts(verdicts(today.html("index"), "one-value-cannot-tell")) == [MATCH]
    assert starts(verdicts(today.html("index"), "one-value-tells")) == [MATCH]
    # Four demos lack a standard value (default-inside: autocast; the two above: two each):
    # 5 values checked on the page's tables' behalf + 5 run to check, each compiled and eager.
    assert today.runs() == ((3 + 3 + 3 + 1 + 1 + 5) * 2, 0), today.stats
    # The summary's run count says which of its runs no table shows.
    assert ("(32 runs, 10 of them of the values a demo does not name, to check that it can "
            "fail, 0 from the cache)") in today.stdout, today.stdout


def test_the_values_run_to_check_come_from_the_cache_on_a_rebuild(builds):
    today, _ = builds
    again = sphinx_build(today.src, today.out, "--keep-going")
    assert again.runs() == (0, 16), again.stats
    assert "index.rst:55: WARNING: this demo cannot tell off" in again.stderr, again.stderr


def test_inductors_isa_checks_left_to_its_compile_give_the_same_page(builds, tmp_path_factory):
    """``AUTOCAST_DEMO_ISA_THREAD=0`` through a real build on inductor: the warm-up leaves the
    ISA checks to inductor's compile instead of its thread (``warm.isa_checks``), and every
    verdict, warning and the exit status are those of the build that used the thread."""
    today, _ = builds
    src = copy_root("default", tmp_path_factory)
    alone = sphinx_build(src, src / "_build" / "html", "--keep-going",
                         env={"AUTOCAST_DEMO_ISA_THREAD": "0"}, kept=False)
    assert alone.returncode == today.returncode
    assert alone.runs()[0] > 0  # run here, not served from a cache
    for ident in ("default-inside", "cannot-tell", "alike-on-purpose", "one-value-cannot-tell",
                  "one-value-tells"):
        assert verdicts(alone.html("index"), ident) == verdicts(today.html("index"), ident), ident
    def warned(build) -> list[str]:  # (each build in a copy of its own)
        return [line.replace(str(build.src), "") for line in build.stderr.splitlines()
                if "WARNING" in line]

    assert warned(alone) == warned(today) != []
