"""What a run prints and raises, as the page and the log show it (a real build).

tests/roots/test-run-output: a snippet that prints 50 MB, one that prints terminal escapes and
control bytes, and one whose ``BackendCompilerFailed`` carries its reason (the AssertionError
that the upstream page teaches) on the message's second line; and what the two runs printed,
compared (issue 35): a warning of dynamo's in many lines, a pid, a difference past what a page
keeps.
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import threading

import pytest
from conftest import copy_root, sphinx_build, verdicts

from sphinx_autocast_demo.core.text import MAX_OUTPUT
from sphinx_autocast_demo.engine.child.zygote import KEEP_BYTES


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    src = copy_root("run-output", tmp_path_factory)
    tmp = tmp_path_factory.mktemp("tmp")
    largest = [0]
    done = threading.Event()

    def watch() -> None:  # the largest output file the worker ever wrote in its temp dir
        while not done.wait(0.02):
            for path in glob.glob(f"{tmp}/autocast-demo-*/*.out"):
                with contextlib.suppress(OSError):  # removed meanwhile
                    largest[0] = max(largest[0], os.path.getsize(path))

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        result = sphinx_build(src, src / "_build" / "html", env={"TMPDIR": str(tmp)})
    finally:
        done.set()
        watcher.join()
    return result, largest[0]


def printed(build, ident: str) -> str:
    result, _ = build
    return result.html("index").find(id=ident).select(".autocast-demo-output pre")[0].get_text()


def test_a_flood_is_cut_where_it_is_written(build):
    result, largest = build
    assert result.returncode == 0, result.stderr
    assert 0 < largest <= KEEP_BYTES  # never 50 MB on disk
    text = printed(build, "flood")
    assert text.startswith("x" * 1000) and text.rstrip().endswith("[... output cut here ...]")
    assert len(text) < MAX_OUTPUT + 100


def test_escapes_and_control_bytes_never_reach_the_page_or_the_log(build):
    result, _ = build
    text = printed(build, "escapes")
    assert text.splitlines() == ["red and a bell\\x07 and a NUL\\x00", "progress 1", "progress 2"]
    page = (result.out / "index.html").read_text(encoding="utf-8")
    assert "\x1b" not in page and "\x07" not in page and "\x00" not in page


def test_the_reason_of_a_backend_failure_is_kept(build):
    text = printed(build, "chain")
    assert ("BackendCompilerFailed: backend='aot_eager' raised: AssertionError: expected "
            "backward_pass_autocast to be a list, got <class 'dict'>") in text, text


MATCH, DIFFER = "\u2713 matches eager", "\u2717 differs"


def test_a_warning_of_many_lines_that_only_dynamo_prints_is_no_difference(build):
    result, _ = build
    assert verdicts(result.html("index"), "dynamo-warns") == [MATCH], result.stderr
    text = printed(build, "dynamo-warns")
    # Shown as Python prints a warning (file:line: Category: message), its message's own line
    # breaks back (issue 47: a literal "\\n"), no build path; the :expect-output: record of it
    # (<UserWarning>) holds.
    (warning,) = [line for line in text.splitlines() if "Dynamo does not know" in line]
    assert re.match(r"torch/_dynamo/\S+\.py:\d+: UserWarning: Dynamo does not know", warning), text
    assert "\\n" not in text and "If it is a Python builtin" in text.split(warning, 1)[1], text


def test_a_pid_printed_is_no_difference(build):
    result, _ = build
    assert verdicts(result.html("index"), "pid") == [MATCH], result.stderr


def test_a_difference_past_what_a_page_keeps_is_found(build):
    result, _ = build
    (cell,) = verdicts(result.html("index"), "late")
    assert cell.startswith(DIFFER) and "after printed line" in cell, cell
    assert printed(build, "late").rstrip().endswith("[... output cut here ...]")

