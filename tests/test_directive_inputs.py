"""What a writer types into a directive is taken as written, or refused at its line.

Real ``python -m sphinx`` builds of tests/roots/test-option-numbers: timeouts and tolerances
that cannot be (nothing runs), and the same for the conf.py values.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import copy_root, sphinx_build, tagged_build

from sphinx_autocast_demo import config

RST = "index.rst"


@pytest.fixture(scope="module")
def numbers(tmp_path_factory):
    return tagged_build("option-numbers", tmp_path_factory)


def line_of(path: Path, text: str, after: int = 0) -> int:
    """1-based line of the first line of ``path`` below line ``after`` whose stripped text is ``text``."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return next(i for i, line in enumerate(lines, 1) if i > after and line.strip() == text)


def ours(build) -> list[str]:
    return [line for line in build.stderr.splitlines()
            if ": WARNING: " in line and "[myst." not in line and not line.startswith(" ")]


def located(build, path: Path, line: int, message: str) -> None:
    expected = f"{path}:{line}: WARNING: {message}"
    assert expected in build.stderr, f"{expected!r} not in\n{build.stderr}"


# -- 3. numbers -----------------------------------------------------------------------------

SECONDS = "a number of seconds > 0 and at most 86400 (24 h)"
FINITE = "a finite number >= 0 (0: bitwise equal)"
TIMEOUT = (f"must be {SECONDS}; leave the option out to use autocast_demo_timeout (120 s) "
           "[autocast_demo.directive]")
TOLERANCE = f"must be {FINITE} [autocast_demo.directive]"


@pytest.mark.parametrize(("page", "source", "message"), [
    (RST, ":timeout: inf", f":timeout: 'inf' {TIMEOUT}"),
    (RST, ":timeout: nan", f":timeout: 'nan' {TIMEOUT}"),
    (RST, ":timeout: 1e9", f":timeout: '1e9' {TIMEOUT}"),
    (RST, ":timeout: 0", f":timeout: '0' {TIMEOUT}"),
    (RST, ":grad-tolerance: nan", f":grad-tolerance: 'nan' {TOLERANCE}"),
    (RST, ":output-tolerance: -inf", f":output-tolerance: '-inf' {TOLERANCE}"),
    ("numbers_md.md", ":timeout: inf", f":timeout: 'inf' {TIMEOUT}"),
    ("numbers_md.md", "output-tolerance: inf", f":output-tolerance: 'inf' {TOLERANCE}"),
])
def test_a_number_option_out_of_range_is_located_at_its_line(numbers, page, source, message):
    path = numbers.src / page
    located(numbers, path, line_of(path, source), f"autocast-demo: {message}")


def test_numbers_out_of_range_fail_the_build_without_a_traceback(numbers):
    assert numbers.returncode == 1, numbers.stderr
    assert len(ours(numbers)) == 8, numbers.stderr
    assert "Traceback" not in numbers.stderr + numbers.stdout
    assert "0 demos, 0 values checked (0 runs" in numbers.stdout


@pytest.mark.parametrize(("name", "value", "rule"), [
    ("timeout", 'float("inf")', SECONDS),
    ("timeout", "0", SECONDS),
    ("timeout", "90000", SECONDS),
    ("grad_tolerance", 'float("nan")', FINITE),
    ("output_tolerance", "-1e-3", FINITE),
])
def test_a_conf_py_number_out_of_range_is_refused_at_its_line(tmp_path_factory, name, value, rule):
    src = copy_root("option-numbers", tmp_path_factory)
    conf = src / "conf.py"
    conf.write_text(conf.read_text(encoding="utf-8") + f"autocast_demo_{name} = {value}\n",
                    encoding="utf-8")
    result = sphinx_build(src, src / "_build" / "html")
    assert result.returncode == 2, result.stderr
    line = len(conf.read_text(encoding="utf-8").splitlines())
    shown = repr(eval(value))  # as the message shows the value: inf, nan, 0, -0.001
    default = next(o.default for o in config.OPTIONS if o.name == name)
    assert (f"{conf}:{line}: autocast_demo_{name} = {shown} must be {rule} (default {default!r})"
            in result.stderr), result.stderr


def test_number_rules_at_their_bounds():
    timeout, tolerance = config.TIMEOUT_RULE, config.TOLERANCE_RULE
    assert not config.number_problem(timeout, 86400) and not config.number_problem(timeout, 0.5)
    assert config.number_problem(timeout, 86400.5) and config.number_problem(timeout, 0)
    assert config.number_problem(timeout, 10**400)  # too large for a float
    assert not config.number_problem(tolerance, 0) and not config.number_problem(tolerance, 1e9)
    assert config.number_problem(tolerance, -1e-300) and config.number_problem(tolerance, float("nan"))
