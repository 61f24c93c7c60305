"""What two runs printed, compared (issue 35): warnings the compiler stack prints, a pid, and
output past what a page keeps. Pure Python: no torch, no build."""

from __future__ import annotations

import warnings

from sphinx_autocast_demo.core.model import RunRecord
from sphinx_autocast_demo.core.printed import as_recorded, normalize_output, output_holds, snippets_lines
from sphinx_autocast_demo.core.text import MAX_OUTPUT, bounded
from sphinx_autocast_demo.engine.child.warned import warning_line
from sphinx_autocast_demo.judge.notes import note_text
from sphinx_autocast_demo.judge.printed import compare_output, compare_printed

# As dynamo's warn_once says a builtin it cannot trace: three lines, none indented.
DYNAMO = ("Dynamo does not know how to trace the builtin `zlib.crc32.`\n"
          "If it is a Python builtin, please file an issue on GitHub.\n"
          "If it is a third-party C/C++ Python extension, please wrap it.")


def test_a_warning_of_many_lines_is_one_line_and_folds_whole():
    line = warning_line(DYNAMO, UserWarning, "torch/_dynamo/variables/functions.py", 2431)
    assert "\n" not in line
    assert normalize_output(f"{line}\ndone\n") == "<UserWarning>\ndone"
    assert snippets_lines(normalize_output(f"{line}\ndone\n")) == ["done"]


def test_a_category_not_named_warning_is_said_as_its_nearest_base():
    class Odd(DeprecationWarning):
        pass

    assert warning_line("x", Odd, "<frozen importlib._bootstrap>", 1) == \
        "DeprecationWarning: x [<frozen_importlib._bootstrap>:1]"


def test_the_hook_prints_what_python_would_print_as_one_line(capsys):
    from sphinx_autocast_demo.engine.child.warned import show_warnings_on_one_line

    with warnings.catch_warnings():
        warnings.simplefilter("always")
        show_warnings_on_one_line()
        warnings.warn(DYNAMO, UserWarning, stacklevel=1)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("UserWarning: Dynamo does not know")
    assert normalize_output(err) == "<UserWarning>"


def test_a_warning_only_compiled_prints_is_no_difference():
    line = warning_line(DYNAMO, UserWarning, "torch/_dynamo/variables/functions.py", 2431)
    assert compare_output(f"{line}\ndone\n", "done\n", 0.0) == (1, None)


def test_a_line_that_differs_only_in_each_runs_pid_is_named_not_counted():
    lines, diff = compare_output("pid 4242\n", "pid 4250\n", 0.0, pids=(4242, 4250))
    assert lines == 1 and diff is not None and diff.equal
    assert diff.name == "printed line 1"
    assert note_text(diff) == "differs only in the run's pid (4242 compiled, 4250 eager)"
    # Another number is still a difference, whatever the pids.
    _, other = compare_output("pid 4243\n", "pid 4250\n", 0.0, pids=(4242, 4250))
    assert other is not None and not other.equal


def _ran(text: str, pid: int | None = None) -> RunRecord:
    """A run's record as engine/records.collect makes it: ``output`` bounded, and a digest of
    all of it when that is not all."""
    from sphinx_autocast_demo.core.printed import printed_digest

    shown = bounded(text)
    return RunRecord(status="ok", output=shown, pid=pid,
                     printed=printed_digest(text, pid) if shown != text else None)


LONG = "".join(f"line {i}\n" for i in range(4000))  # past MAX_OUTPUT


def test_a_difference_past_what_a_page_keeps_is_found():
    assert len(LONG) > MAX_OUTPUT
    seen = compare_printed(_ran(LONG + "True\n"), _ran(LONG + "False\n"), 0.0)
    assert seen.diff is not None and not seen.diff.equal and not seen.cut
    assert "compiled printed other text than eager" in note_text(seen.diff)
    more = compare_printed(_ran(LONG + "x\n"), _ran(LONG), 0.0)
    assert more.diff is not None and "4001 lines in all, eager 4000" in note_text(more.diff)
    # ... and one a page shows still by its line.
    early = compare_printed(_ran("a\n" + LONG), _ran("b\n" + LONG), 0.0)
    assert early.diff is not None and early.diff.name == "printed line 1"


def test_the_same_long_output_matches_and_only_unknowable_numbers_cut_the_view():
    same = compare_printed(_ran(LONG + "end\n", pid=7), _ran(LONG + "end\n", pid=8), 0.0)
    assert same.diff is None and not same.cut and same.lines == 4001
    pids = compare_printed(_ran(LONG + "pid 40007\n", pid=40007),
                           _ran(LONG + "pid 40008\n", pid=40008), 0.0)
    assert pids.diff is not None and pids.diff.equal and not pids.cut
    assert note_text(pids.diff).endswith("only in the run's pid (40007 compiled, 40008 eager)")
    near = compare_printed(_ran(LONG + "1.0000001\n"), _ran(LONG + "1.0\n"), 1e-3)
    assert near.diff is None and "cannot be told" in near.cut
    exact = compare_printed(_ran(LONG + "1.0000001\n"), _ran(LONG + "1.0\n"), 0.0)
    assert exact.diff is not None and "other numbers" in note_text(exact.diff)


def test_short_outputs_compare_as_before():
    seen = compare_printed(RunRecord(status="ok", output="a 1\n", pid=3),
                           RunRecord(status="ok", output="a 2\n", pid=4), 0.0)
    assert seen.diff is not None and note_text(seen.diff) == "compiled printed 'a 1', eager 'a 2'"


def test_two_runs_of_one_result_differ_in_their_pids_only():
    from dataclasses import replace

    from sphinx_autocast_demo.core.model import Verdict
    from sphinx_autocast_demo.plan import results

    ran = RunRecord(status="ok", output="x\n", pid=10)
    entry = results.Entry("2.13.0", Verdict("matches"), ran, ran)  # type: ignore[arg-type]
    other = replace(entry, compiled=replace(ran, pid=11), eager=replace(ran, pid=12))
    assert results.same_result(entry, other)


def test_moments_and_random_ids_are_normal_form_and_no_difference():
    # Before: each of these made a false "differs" (issue 46): two runs never print one moment.
    compiled = ("2026-12-05 09:12:33,123 INFO step 1\n"
                "saved at 2026-12-05T09:12:33.123456+00:00\n"
                "now datetime.datetime(2026, 12, 5, 9, 12, 33, 123456)\n"
                "took a while, done at 09:12:33\n"
                "run 3f2b8c1e-5d4a-4e6f-9a1b-2c3d4e5f6a7b\n")
    eager = ("2026-12-05 09:12:41,907 INFO step 1\n"
             "saved at 2026-12-05T09:12:41.000001+00:00\n"
             "now datetime.datetime(2026, 12, 5, 9, 12, 41, 7)\n"
             "took a while, done at 09:12:41\n"
             "run 0c9d1e2f-3a4b-4c5d-8e6f-7a8b9c0d1e2f\n")
    assert compare_output(compiled, eager, 1e-3) == (5, None)
    assert normalize_output(compiled).splitlines()[0] == "<timestamp> INFO step 1"


def test_what_only_looks_like_a_moment_is_still_compared():
    # A ratio, a year alone, a shape: no moment, compared as printed.
    lines, diff = compare_output("ratio 12:30, year 2026, shape [4, 4]\n",
                                 "ratio 12:31, year 2026, shape [4, 4]\n", 0.0)
    assert lines == 1 and diff is not None and not diff.equal
    assert compare_output("year 2026\n", "year 2027\n", 1e-3)[1] is not None


def test_the_profilers_trace_points_are_log_lines_not_the_snippets():
    # Before: the date was normal form but the pid:tid pair was not (issue 46, item 6).
    compiled = ("USDT:2026-12-05 14:01:24 8303:8303 SyncActivityProfilerHandler.cpp:52] "
                "profiler_start\nloss 0.5\n")
    eager = ("USDT:2026-12-05 14:01:31 8311:8329 SyncActivityProfilerHandler.cpp:52] "
             "profiler_start\nloss 0.5\n")
    assert compare_output(compiled, eager, 1e-3) == (1, None)
    # A line of the snippet's that starts alike is still compared.
    assert compare_output("USDT: 1\n", "USDT: 2\n", 1e-3)[1] is not None


#: A record of dynamo's graph_breaks log as the worker printed it: each line under torch's
#: prefix, its traceback through the worker's own files.
PREFIX = "W1206 03:04:24.779000 11994 torch/_dynamo/x.py:12] [0/0] [__graph_breaks] "
LOGGED = "\n".join(PREFIX + line for line in (
    "Graph break in user code at <autocast-demo-1>:3",
    "User code traceback:",
    '  File "<frozen runpy>", line 198, in _run_module_as_main',
    '  File "/venv/lib/python3.11/site-packages/sphinx_autocast_demo/engine/child/job.py", '
    "line 290, in run_job",
    '    exec(compile(text, filename, "exec"), namespace)',
    "           ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
    '  File "<autocast-demo-1>", line 6, in <module>',
    "    out = torch.compile(g)(torch.ones(3))",
    '  File "<autocast-demo-1>", line 3, in g',
    '    print("done")')) + "\ndone"


def test_a_log_records_traceback_keeps_the_writers_frames_and_no_mark_of_the_build_machine():
    """Issue 49: a record of torch's log held the worker's frames and the venv's path."""
    normal = normalize_output(LOGGED)
    assert normal.splitlines() == [
        "<log> [0/0] [__graph_breaks] Graph break in user code at <snippet>:3",
        "<log> [0/0] [__graph_breaks] User code traceback:",
        '<log> [0/0] [__graph_breaks]   File "<snippet>", line 6, in <module>',
        "<log> [0/0] [__graph_breaks]     out = torch.compile(g)(torch.ones(3))",
        '<log> [0/0] [__graph_breaks]   File "<snippet>", line 3, in g',
        '<log> [0/0] [__graph_breaks]     print("done")',
        "done"]
    # A record on one line (its breaks as \n) reads as its lines, torch's tags said once.
    one = LOGGED.replace("\n" + PREFIX, "\\n")
    tags = "<log> [0/0] [__graph_breaks] "
    assert normalize_output(one).splitlines() == [normal.splitlines()[0], *(
        line.replace(tags, "<log> ") for line in normal.splitlines()[1:])]


def test_a_record_of_what_was_printed_holds_whatever_torch_logged_unless_it_records_logs():
    assert output_holds("done", LOGGED) and as_recorded(LOGGED, logs=False) == "done"
    assert not output_holds("done\nmore", LOGGED)
    kept = as_recorded(LOGGED, logs=True)
    assert output_holds(kept, LOGGED)  # (a record that keeps the log checks it)
    assert not output_holds(kept.replace("line 3, in g", "line 4, in g"), LOGGED)


def test_a_one_line_records_empty_lines_are_still_torchs_not_the_snippets():
    # A record whose message ends in blank lines (dynamo's .item() graph break) left "<log>"
    # lines that the comparison read as the snippet's printed lines: a false difference.
    one = PREFIX + "Graph break from Tensor.item()\\n  File \"<autocast-demo-1>\", line 3, in f\\n\\n"
    assert snippets_lines(normalize_output(one)) == []
    assert as_recorded(one + "\nprinted", logs=False) == "printed"
