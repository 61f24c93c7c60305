"""What ``torch.compile`` did, recorded and checked (issue 49): real builds of
test-compile-facts, whose demos record the graphs, graph breaks and recompilations of their
compiled runs in ``:expect-compile:``. A global setup that flips two of dynamo's defaults, as a
torch release might, changes them: the build fails at each record's line saying what changed,
and accept mode writes the new counts."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest
from conftest import copy_root, sphinx_build

#: Three of dynamo's defaults flipped: ``print`` no longer breaks a graph, a float argument
#: is dynamic from the first call (no recompilation when it changes), and ``.item()`` is
#: captured (the graph breaks at the branch on its value instead: the same count, another
#: reason).
FLIPPED = ("-D", "autocast_demo_global_setup=import torch._dynamo.config as c; "
           "c.assume_static_by_default = False; c.reorderable_logging_functions.add(print); "
           "c.capture_scalar_outputs = True")


@pytest.fixture(scope="module")
def builds(tmp_path_factory):
    src = copy_root("compile-facts", tmp_path_factory)
    found = {"held": sphinx_build(src, src / "_build" / "held")}
    found["flipped"] = sphinx_build(src, src / "_build" / "flipped", *FLIPPED)
    found["accept"] = sphinx_build(src, src / "_build" / "accept", *FLIPPED,
                                   env={"AUTOCAST_DEMO_ACCEPT": "1"})
    found["source"] = (src / "index.rst").read_text(encoding="utf-8")
    found["again"] = sphinx_build(src, src / "_build" / "again", *FLIPPED)
    return found


def said(build, ident: str) -> list[str]:
    box = build.html("index").find(id=ident)
    return [p.get_text(" ", strip=True) for p in box.select("p.autocast-demo-compiled")]


def test_the_page_shows_each_graph_break_and_recompilation_at_its_line(builds):
    held = builds["held"]
    assert held.returncode == 0, held.stderr
    assert said(held, "a-break") == [
        "Compiled under every value: 2 graphs compiled; a graph break at line 15: Failed to "
        "trace builtin operator"]
    assert said(held, "a-recompile") == [
        "Compiled under every value: 2 graphs compiled; recompiled at line 32 (c == 1.0)"]
    # Records of the reason and the guard (a-recompile's [c == 1.0], a-reason's) hold.
    assert "[autocast_demo.compile-facts]" not in held.stderr, held.stderr


def test_a_demo_that_records_compiling_nothing_is_a_verdict(builds):
    # Without :expect-compile: this demo is "compiled nothing": no verdict.
    held = builds["held"]
    assert said(held, "nothing-compiled") == ["Compiled under every value: 0 graphs compiled"]
    assert "compiled-nothing" not in held.stderr


def test_a_frame_dynamo_skipped_is_a_fact_with_its_reason(builds):
    """Issue 49: dynamo gives up on a generator whole and runs it eagerly: no graph, no graph
    break, a frame not compiled. Recorded as such (``skipped 1 [reason]``), it is a verdict."""
    held = builds["held"]
    assert said(held, "skipped") == [
        "Compiled under every value: 0 graphs compiled; a frame not compiled: Attempt to trace "
        "generator"]
    assert "index.rst:139:" not in held.stderr and "index.rst:139:" not in builds["flipped"].stderr


def test_changed_counts_fail_at_the_records_line_saying_what_changed(builds):
    flipped = builds["flipped"]
    assert flipped.returncode != 0
    warnings = [line for line in flipped.stderr.splitlines() if "[autocast_demo.compile-facts]" in line]
    assert len(warnings) == 7, flipped.stderr  # three demos of two values, one of one
    assert all("index.rst:9: WARNING: value " in w and "(graphs 2 -> 1, breaks 1 -> 0)" in w
               for w in warnings[:2]), warnings
    assert all("index.rst:27: WARNING: value " in w and "(graphs 2 -> 1, recompiles 1 -> 0)" in w
               for w in warnings[2:4]), warnings
    assert "record graphs 1, breaks 0, recompiles 0" in warnings[0]
    # The same count of breaks, for another reason: a record of the reason catches it.
    reason = "Unsupported Tensor.item() call with capture_scalar_outputs=False"
    assert all("index.rst:65: WARNING: value " in w and f"(breaks [{reason}] -> [" in w
               and "graphs" not in w.split("(breaks")[1].split(")")[0] for w in warnings[4:6]), \
        warnings[4:6]


def test_a_demo_shown_as_its_output_without_a_record_of_it_warns_with_the_option(builds):
    """Issue 49: ``:show: outputs`` whose output nobody records checks no printed line."""
    warned = [line for line in builds["held"].stderr.splitlines() if "index.rst:50:" in line]
    assert warned and "no :expect-output: records it, so no printed line is checked" in warned[0]
    assert "[*]\n      graphs are counted, not printed" in builds["held"].stderr


def test_accept_writes_the_new_counts_and_the_next_build_holds(builds):
    assert ":expect-compile: *: graphs 1, breaks 0, recompiles 0\n" in builds["source"]
    assert ":expect-compile: *: graphs 1, recompiles 0 []\n" in builds["source"]  # (guards kept listed)
    # (a record that names the reasons gets the new reasons written)
    rewritten = [line for line in builds["source"].splitlines() if "graphs 2, breaks 1 [" in line]
    assert len(rewritten) == 1 and "capture_scalar_outputs=False" not in rewritten[0], rewritten
    assert ":expect-compile: *: graphs 0\n" in builds["source"]  # (it held: untouched)
    assert "   :show: outputs\n   :expect-output:\n      [*]\n      graphs are counted, not printed\n" \
        in builds["source"]
    assert builds["again"].returncode == 0, builds["again"].stderr


def record_line(source: str, ident: str) -> int:
    """The line of the ``:expect-compile:`` record of demo ``ident`` in ``source``."""
    lines = source.splitlines()
    start = lines.index(f"   :name: {ident}")
    return next(i for i in range(start, len(lines)) if ":expect-compile:" in lines[i]) + 1


def test_flipped_dynamo_defaults_fail_the_docs_own_claims_at_their_records(tmp_path):
    """Issue 49: the docs' page of PyTorch's compile claims fails when torch compiles otherwise
    (its recompilation and graph-break records), at each record's line, and nowhere else."""
    docs = Path(__file__).parents[2] / "docs"
    src = tmp_path / "docs"
    src.mkdir()
    for name in ("conf.py", "compile-facts.rst"):
        shutil.copy(docs / name, src / name)
    for name in ("_ext", "_static"):
        shutil.copytree(docs / name, src / name)
    two = ("-D", "autocast_demo_global_setup=import torch._dynamo.config as c; "
           "c.assume_static_by_default = False; c.reorderable_logging_functions.add(print)")
    flipped = sphinx_build(src, src / "_build", "-D", "root_doc=compile-facts",
                           "-D", "autocast_demo_results=", *two)
    assert flipped.returncode != 0
    failed = sorted(int(line.split("compile-facts.rst:")[1].split(":")[0])
                    for line in flipped.stderr.splitlines() if "[autocast_demo." in line)
    source = (src / "compile-facts.rst").read_text(encoding="utf-8")
    assert failed == [record_line(source, ident) for ident in
                      ("recompile-new-shape", "recompile-float", "graph-break-print")], flipped.stderr


def test_torchs_log_records_show_without_the_build_machines_marks(builds):
    """Issue 49: with ``set_logs(graph_breaks=True)`` in a setup, torch's log records showed
    their timestamp, pid, the build's venv path and frames of the extension's own modules."""
    held = builds["held"]
    shown = "\n".join(pre.get_text() for pre in held.html("index").find(id="logged").select(
        "div.autocast-demo-output pre"))
    assert "Graph break in user code at index.rst:" in shown, shown  # the page's line
    assert 'File "index.rst", line 96, in g' in shown, shown  # the writer's frames alone
    for mark in (r"\b[IWEDC]\d{4} \d\d:\d\d:\d\d", r"\b\d\d:\d\d:\d\d\.\d+", str(held.src),
                 "site-packages", "sphinx_autocast_demo", "zygote", "runpy", "<autocast-demo-",
                 r"\^\^\^", r"\\n"):
        assert not re.search(mark, shown), (mark, shown)
    # The record accept mode keeps of what it printed holds none of it either.
    record = builds["source"].split(":name: logged", 1)[1]
    assert "      [*]\n      done\n" in record and "Graph break" not in record


def test_a_demo_compared_with_nothing_makes_no_eager_run_and_checks_its_records(builds):
    """Issue 49: ``:compare: none`` for a demo whose point is not its numbers (here a timing,
    which no eager run could match): compiled runs only, its compile record checked."""
    held = builds["held"]
    # 7 demos of 2 values, each a compiled and an eager run; timed's 1 value and unrecorded's
    # 2, each a compiled run alone.
    assert held.runs() == (7 * 2 * 2 + 1 + 2, 0), held.stats
    box = held.html("index").find(id="timed")
    assert box.select_one("caption").get_text(" ", strip=True).endswith(
        "Results of this demo: compiled, compared with nothing")
    cells = [td.get_text(" ", strip=True) for td in box.select("td.autocast-demo-col-outcome")]
    assert cells == ["ran, not compared with eager, as recorded"]
    assert "run eagerly" not in box.get_text() and "\u2713" not in box.get_text()
    assert said(held, "timed") == [
        "Compiled: 2 graphs compiled; a graph break at line 112: Failed to trace builtin operator"]
    # Under flipped defaults its record fails at its line, as any demo's.
    flipped = [line for line in builds["flipped"].stderr.splitlines() if "index.rst:105:" in line]
    assert flipped and "(graphs 2 -> 1, breaks 1 -> 0)" in flipped[0], builds["flipped"].stderr


def test_a_demo_compared_with_nothing_that_records_nothing_warns_and_accept_records_it(builds):
    warned = builds["held"].stderr.split("index.rst:121: WARNING: ", 1)[1].split("[autocast_demo", 1)[0]
    assert "compares nothing with eager (:compare: none)" in warned, warned
    # n == 2 was a guard of the first compile: the second call recompiled, once per value.
    assert "   :expect-compile: *: graphs 2, breaks 0, recompiles 1 [n == 2]" in warned, warned
    cells = [td.get_text(" ", strip=True) for td in
             builds["held"].html("index").find(id="unrecorded").select("td.autocast-demo-col-outcome")]
    assert cells == ["ran, not compared with eager (not recorded)"] * 2
    # Accept writes the record of what compiling did under the flipped defaults (an int
    # argument is dynamic from the first call there: no recompilation), and it holds.
    block = builds["source"].split(":name: unrecorded", 1)[1].split("\n\n", 1)[0]
    assert block.endswith(":compare: none\n   :expect-compile: *: graphs 1, breaks 0, recompiles 0"), block
