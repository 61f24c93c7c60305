"""Bad directive input, in reST and in MyST (issue 5, case 6).

One real ``python -m sphinx`` build of tests/roots/test-fault-directives: every mistake is one
located warning that says what to write instead, the build exits 1, and the good demos of both
pages still run. MyST would only warn about an unknown option and drop it: we report it.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import processes_tagged, tagged_build, verdicts

MATCH = "\u2713 matches eager"
# Its build runs demos, but most tests read only the directive errors (conftest.py).
TORCH_FREE_FIXTURES = ("build",)


@pytest.fixture(scope="module")
def build(tmp_path_factory):
    return tagged_build("fault-directives", tmp_path_factory)


def nth_line(path: Path, text: str, n: int = 1) -> int:
    """1-based line of the ``n``-th line of ``path`` whose stripped text is ``text``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    found = [i for i, line in enumerate(lines, 1) if line.strip() == text]
    return found[n - 1]


def located(build, path: Path, line: int, message: str) -> None:
    expected = f"{path}:{line}: WARNING: {message}"
    assert expected in build.stderr, f"{expected!r} not in\n{build.stderr}"


RST, MD = "index.rst", "bad_md.md"
OPTIONS = ("values, expect, expect-output, config, backend, device, dtype, timeout, "
           "grad-tolerance, output-tolerance, group, name, caption, alike, partial-view, show")

# (page, the source line the message must point at, the message), for both syntaxes.
CASES = [
    *[(page, ":expcet: off: matches",
       f"autocast-demo: unknown option :expcet:; did you mean :expect:? (options: {OPTIONS}) "
       "[autocast_demo.directive]") for page in (RST, MD)],
    *[(page, ":values: off, of",
       "autocast-demo: :values: unknown value 'of' (did you mean 'off'?): use one of "
       "same_as_forward, off, autocast, default, or name it, e.g. fp16=[{\"device_type\": \"cpu\", "
       "\"dtype\": torch.float16}]") for page in (RST, MD)],
    *[(page, ':values: off, fp16=[{"device_type": "cpu", "dtype": torch.float16]',
       "autocast-demo: :values: value fp16: '[{\"device_type\": \"cpu\", \"dtype\": torch.float16]' "
       "is not a Python literal (closing parenthesis ']' does not match opening parenthesis '{'); "
       "write a list of torch.amp.autocast kwargs dicts, e.g. "
       "fp16=[{\"device_type\": \"cpu\", \"dtype\": torch.float16}]") for page in (RST, MD)],
    (RST, ':values: off, fp16=[{"device_type": "cpu", "dtype": float16}]',
     "autocast-demo: :values: value fp16: 'float16' is not allowed in a value: use strings, "
     "numbers, lists, dicts and torch dtypes such as torch.float16"),
    *[(page, ":backend: inductr",
       "autocast-demo: :backend: 'inductr' is not known (did you mean inductor?); choose one of "
       "aot_eager, inductor, eager") for page in (RST, MD)],
    *[(page, ":device: tpu",
       "autocast-demo: :device: 'tpu' is not known") for page in (RST, MD)],
    (RST, ":expect: of: matches",
     "autocast-demo: :expect: 'of' is not a value of this demo (did you mean 'off'?) (its "
     "values: off)"),
    *[(page, ":expect: off: match",
       "autocast-demo: :expect: 'match' is not an outcome (did you mean 'matches'?): write "
       "matches, differs, raises <ExceptionName> or no-config") for page in (RST, MD)],
    (RST, ":timeout: soon", "autocast-demo: :timeout: 'soon' must be a number of seconds > 0 and at "
     "most 86400 (24 h)"),
    (RST, ":grup: a",
     "autocast-demo-setup: unknown option :grup:; did you mean :group:? (options: group, show)"),
    # MyST's YAML option block: the unknown key is reported at its own line too.
    (MD, 'expcet: "off: matches"', "autocast-demo: unknown option :expcet:; did you mean :expect:?"),
]


@pytest.mark.parametrize(("page", "source", "message"), CASES)
def test_each_mistake_is_located_and_says_what_to_write(build, page, source, message):
    path = build.src / page
    located(build, path, nth_line(path, source), message)


@pytest.mark.parametrize("page", [RST, MD])
def test_an_empty_body_is_located_at_its_directive(build, page):
    path = build.src / page
    lines = path.read_text(encoding="utf-8").splitlines()
    marker = next(i for i, line in enumerate(lines, 1) if "MARK-empty" in line)
    directive = marker + (2 if page == RST else 1)  # reST needs a blank line after a comment
    assert "autocast-demo" in lines[directive - 1]
    located(build, path, directive,
            "autocast-demo: the body is empty: write the Python snippet to run under it")


@pytest.mark.torch  # reads what its demos did
def test_every_mistake_is_counted_once_and_the_build_fails(build):
    assert build.returncode == 1, build.stderr
    warnings = [line for line in build.stderr.splitlines() if ": WARNING: " in line]
    assert len(warnings) == len(CASES) + 2, build.stderr
    assert all(w.endswith("[autocast_demo.directive]") for w in warnings)
    assert build.stats["failures"] == len(CASES) + 2
    assert "Traceback" not in build.stderr


def test_myst_did_not_drop_the_unknown_option_silently(build):
    # myst-parser would say "Unknown option" and run the demo without it; it did not run.
    assert "Unknown option" not in build.stderr
    assert "myst.directive" not in build.stderr


@pytest.mark.torch  # reads what its demos did
def test_bad_demos_say_so_in_the_page_and_good_ones_ran(build):
    for docname, ident in (("index", "fine-rst"), ("bad_md", "fine-md")):
        soup = build.html(docname)
        assert verdicts(soup, ident) == [MATCH]
        notes = [n.get_text(" ", strip=True) for n in soup.select(".admonition.warning")]
        assert any("This demo was not checked: unknown option :expcet:" in n for n in notes)
    # Only the two good demos ran, compiled and eager.
    assert (build.stats["demos"], build.stats["checked"], build.runs()) == (2, 2, (4, 0))


def test_no_process_is_left(build):
    assert processes_tagged(build.tag) == []
