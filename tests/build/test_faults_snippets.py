"""Snippets that fail, hang, die, leak or print noise (issue 5, cases 1-5 and 8).

One real ``python -m sphinx`` build of tests/roots/test-fault-snippets (reST faults in
index.rst, MyST faults in faults_md.md, a healthy page), then many assertions on it. Expected
lines come from ``# MARK-...`` comments in the root's sources, never from the output.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import processes_tagged, readme_block, tagged_build, verdicts

MATCH, DIFFER, NOT_CHECKED = "\u2713 matches eager", "\u2717 differs", "\u2014 not checked"


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return tagged_build("fault-snippets", tmp_path_factory)


def line_of(path: Path, marker: str) -> int:
    lines = path.read_text(encoding="utf-8").splitlines()
    found = [i for i, line in enumerate(lines, 1) if marker in line]
    assert len(found) == 1, (marker, found)
    return found[0]


def directive_line(path: Path, name: str) -> int:
    """The ``.. autocast-demo::`` / fence line of the demo named ``name`` (just above it)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return lines.index(next(line for line in lines if line.strip() == f":name: {name}"))


def warning(build, path: Path, line: int, start: str) -> str:
    """The whole (multi-line) warning at ``path:line`` whose text starts with ``start``."""
    head = f"{path}:{line}: WARNING: {start}"
    assert head in build.stderr, f"{head!r} not in\n{build.stderr}"
    text = build.stderr.split(head, 1)[1]
    return start + text.split(": WARNING: ", 1)[0]


@pytest.fixture(scope="module")
def rst(build):
    return build.src / "index.rst"


@pytest.fixture(scope="module")
def md(build):
    return build.src / "faults_md.md"


def test_the_build_fails_but_finishes(build):
    assert build.returncode == 1, build.stderr
    assert "Traceback" not in build.stdout  # no crash of Sphinx itself
    assert "build finished with problems" in build.stdout


@pytest.mark.parametrize("page", ["index", "faults_md"])
def test_syntax_error_of_the_upstream_patch_example(build, page):
    path = build.src / f"{page}.{'rst' if page == 'index' else 'md'}"
    mark = "MARK-syntax" if page == "index" else "MARK-md-syntax"
    text = warning(build, path, line_of(path, mark),
                   "value off: the snippet raised SyntaxError: expected ':'")
    assert f'File "{path.name}", line {line_of(path, mark)}, in <module>' in text
    assert 'patch(backward_pass_autocast="off")' in text
    assert "Fix the code, or record the error with  :expect: off: raises SyntaxError" in text


@pytest.mark.parametrize(("page", "mark", "start"), [
    ("index.rst", "MARK-indent", "value off: the snippet raised IndentationError: unexpected indent"),
    ("faults_md.md", "MARK-md-indent", "value off: the snippet raised IndentationError: unexpected indent"),
    ("index.rst", "MARK-name", "value off: the snippet raised NameError: name 'z' is not defined"),
    ("faults_md.md", "MARK-md-name", "value off: the snippet raised NameError: name 'z' is not defined"),
])
def test_indentation_and_name_errors_are_at_their_line(build, page, mark, start):
    path = build.src / page
    text = warning(build, path, line_of(path, mark), start)
    assert "Fix the code, or record the error" in text


@pytest.mark.parametrize("prefix", ["", "md-"])
def test_error_deep_in_a_setup_helper_walks_from_the_demo_into_the_setup(build, prefix):
    path = build.src / ("faults_md.md" if prefix else "index.rst")
    raise_line = line_of(path, f"MARK-{prefix}inner-raise")
    call_line = line_of(path, f"MARK-{prefix}helper-call")
    text = warning(build, path, raise_line,
                   "value off: the snippet raised ValueError: inner needs a 2-D tensor")
    frames = [line.strip() for line in text.splitlines() if line.strip().startswith("File ")]
    assert frames == [
        f'File "{path.name}", line {call_line}, in <module>',
        f'File "{path.name}", line {line_of(path, "return inner(t)")}, in helper',
        f'File "{path.name}", line {raise_line}, in inner',
    ]
    assert "sphinx_autocast_demo" not in text and "torch/" not in text  # only the writer's frames


def test_a_recorded_error_that_still_happens_passes(build, rst):
    assert verdicts(build.html("index"), "raises-holds") == [MATCH, "\u26a0 raises BackendCompilerFailed"]
    assert f"{rst}:{directive_line(rst, 'raises-holds')}" not in build.stderr
    assert f"{rst}:{line_of(rst, 'bad: raises AssertionError')}" not in build.stderr


def test_a_recorded_error_that_stopped_happening_fails_at_the_expect_line(build, rst):
    line = line_of(rst, ":expect: fixed: raises AssertionError")
    warning(build, rst, line, "value fixed: the page records 'raises AssertionError' but with torch")
    assert "compiled matches eager [autocast_demo.mismatch]" in build.stderr
    assert verdicts(build.html("index"), "raises-stopped") == [MATCH]


@pytest.mark.parametrize(("page", "mark"), [
    ("index.rst", "MARK-loop"), ("index.rst", "MARK-sleep"), ("index.rst", "MARK-pipe"),
    ("faults_md.md", "MARK-md-loop"),
])
def test_a_hang_is_stopped_at_its_timeout_and_located_where_it_hung(build, page, mark):
    path = build.src / page
    line = line_of(path, mark)
    text = warning(build, path, line, "value off: the compiled run did not finish: it was stopped "
                                      "after its timeout of 3 s, with every process it started")
    assert "raise the :timeout: option" in text
    assert f'File "{path.name}", line {line}, in <module>' in text
    assert "[autocast_demo.timeout]" in text


def test_a_hung_snippet_and_the_processes_snippets_spawned_are_gone(build):
    # hang-pipe started `python -c "time.sleep(1000)"` in its process group, escaper one in a
    # session of its own (out of reach of a group kill): both carry the tag and must be dead.
    assert processes_tagged(build.tag) == []
    # escaper's runs finished, and what they printed (the daemon was running) matched.
    assert verdicts(build.html("index"), "escaper") == [MATCH]
    printed = build.html("index").find(id="escaper").select(".autocast-demo-output pre")
    assert [pre.get_text().strip() for pre in printed] == ["the daemon is running: True"]


def test_input_fails_at_once_instead_of_hanging(build, rst):
    warning(build, rst, line_of(rst, "MARK-input"),
            "value off: the snippet raised EOFError: EOF when reading a line")
    # stdin is /dev/null: input() fails at once (its default 120 s timeout never came into play).
    # The eager run of the same value reads the same /dev/null: it raises the same, and says so.
    assert verdicts(build.html("index"), "input") == ["\u26a0 raises EOFError (eager too)"]


def test_os_exit_is_reported_with_its_status_and_last_output(build, rst):
    text = warning(build, rst, directive_line(rst, "exit-3"),
                   "value off: the compiled run died: the process exited with status 3")
    assert "(os._exit(), or native code that exits); find what ends the process" in text
    assert "last output: about to exit" in text


@pytest.mark.parametrize(("page", "mark"), [
    ("index.rst", "MARK-segfault"), ("faults_md.md", "MARK-md-segfault"),
])
def test_a_segfault_is_reported_at_the_line_that_crashed(build, page, mark):
    path = build.src / page
    line = line_of(path, mark)
    text = warning(build, path, line, "value off: the compiled run died: the process was killed by SIGSEGV")
    assert "segmentation fault" in text
    assert f'File "{path.name}", line {line}, in <module>' in text


@pytest.mark.parametrize(("mark", "start"), [
    ("MARK-memory", "value off: the snippet raised MemoryError\n"),
    ("MARK-sys-exit", "value off: the snippet raised SystemExit: 2"),
])
def test_memory_error_and_system_exit_are_snippet_errors(build, rst, mark, start):
    text = warning(build, rst, line_of(rst, mark), start)
    assert "Fix the code, or record the error with" in text


def test_failed_demos_render_as_not_checked(build):
    soup = build.html("index")
    expected = {
        # Eager raises the same: no difference torch.compile made, and the cell says so.
        "syntax-error": "\u26a0 raises SyntaxError (eager too)",
        "memory-error": "\u26a0 raises MemoryError (eager too)",
        "hang-loop": f"{NOT_CHECKED}: the compiled run timed out",
        "hang-pipe": f"{NOT_CHECKED}: the compiled run timed out",
        "segfault": f"{NOT_CHECKED}: the compiled run crashed",
        "exit-3": f"{NOT_CHECKED}: the compiled run crashed",
    }
    for ident, cell in expected.items():
        assert verdicts(soup, ident) == [cell], ident
    printed = soup.find(id="hang-sleep").select(".autocast-demo-output pre")[0].get_text()
    assert "stopped after its timeout of 3 s" in printed


def test_nothing_leaks_to_the_next_value_or_the_next_demo(build, rst):
    # leaker prints what it sees, then changes the config, the seed, torch.compile, a global,
    # the environment and the working directory; its second value and the observer after it
    # must see none of that (their :expect-output: records the pristine state).
    for name in ("leaker", "observer"):
        assert f"{rst}:{directive_line(rst, name)}" not in build.stderr, build.stderr
        assert verdicts(build.html("index"), name) == [MATCH, MATCH]
    soup = build.html("index")
    printed = [pre.get_text().strip() for pre in soup.find(id="observer").select(".autocast-demo-output pre")]
    assert printed == ["same_as_forward False tensor([1.5410]) True True False",
                       "off False tensor([1.5410]) True True False"]


def test_noise_in_the_output_does_not_fail_an_expectation(build, rst):
    assert f"{rst}:{directive_line(rst, 'noisy')}" not in build.stderr
    printed = build.html("index").find(id="noisy").select(".autocast-demo-output pre")[0].get_text()
    assert "<object object at 0x" in printed and "UserWarning: checked at" in printed
    assert "0x7f3a2c1d9e40" not in printed  # really a different address from the recorded one


def test_a_real_change_in_the_output_still_fails_at_the_record(build, rst):
    lines = rst.read_text(encoding="utf-8").splitlines()
    record = lines.index(":expect-output:".rjust(18), directive_line(rst, "noisy-changed")) + 1
    text = warning(build, rst, record, "value off: the printed output is not what the page records")
    assert "recorded: '<object object at 0x?>\\ntotal 4.0'" in text
    assert "printed:  '<object object at 0x?>\\ntotal 6.0'" in text
    assert "fix the code or update the record" in text


def test_other_demos_and_pages_still_have_their_results(build):
    assert verdicts(build.html("index"), "fine-rst") == [MATCH, MATCH]
    assert verdicts(build.html("faults_md"), "fine-md") == [MATCH]
    healthy = verdicts(build.html("healthy"), "healthy")
    assert healthy[0].startswith(DIFFER) and healthy[1] == MATCH and healthy[2].startswith(DIFFER)
    assert "healthy.rst" not in build.stderr


def test_one_summary_lists_every_failure(build):
    summary = build.stdout.split("autocast-demo: ")[-1]
    assert summary.startswith("20 failures:"), build.stdout
    assert summary.count("index.rst:") == 14 and summary.count("faults_md.md:") == 6


def test_the_readme_shows_a_real_hang_message(build):
    assert readme_block("did not finish") in build.stderr.replace(f"{build.src}/", "")
