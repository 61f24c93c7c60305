"""What the README tells a new user before the first build, read against the project's files:
what the project is, the install lines (from a clone, a wheel, a later release, torch's CPU
build), the version policy, and that every command and link it names exists. The wheel those
lines build, built and installed: tests/build/test_wheel.py."""

from __future__ import annotations

import argparse
import re
import shlex
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

from sphinx_autocast_demo import __version__, cli

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
CPU_TORCH = "python -m pip install torch --index-url https://download.pytorch.org/whl/cpu"


def project() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def section(heading: str) -> str:
    assert f"\n{heading}\n" in README, heading
    return README.split(f"\n{heading}\n", 1)[1].split("\n## ", 1)[0]


def bash_lines(text: str) -> list[str]:
    """The commands of every ```bash block of ``text``, comments cut off."""
    blocks = re.findall(r"```bash\n(.*?)```", text, re.S)
    return [line.split("  #")[0].strip() for block in blocks for line in block.splitlines()
            if line.strip() and not line.startswith("#")]


def words(text: str) -> str:
    return " ".join(text.replace("`", "").replace("**", "").split())


def test_the_first_lines_say_what_it_is_and_for_whom():
    first = README.split("\n\n")[1]
    assert words(first).startswith(
        "A Sphinx extension for people who write docs about torch.compile and autocast")


def test_install_lines_for_a_clone_a_wheel_and_a_release():
    lines = bash_lines(section("## Use it in your docs"))
    steps = [shlex.split(step) for line in lines for step in line.split("&&")]
    assert ["python", "-m", "pip", "install", "-e", "/path/to/sphinx-autocast-demo"] in steps
    wheel = ["python", "-m", "pip", "wheel", "--no-deps", "-w", "dist", "/path/to/sphinx-autocast-demo"]
    assert wheel in steps
    # The wheel's file name as setuptools writes it (tests/build/test_wheel.py builds it).
    assert ["python", "-m", "pip", "install", "dist/sphinx_autocast_demo-*.whl"] in steps
    assert ["python", "-m", "pip", "install", project()["name"]] in steps
    assert CPU_TORCH in lines
    said = words(section("## Use it in your docs"))
    assert "It is not on PyPI yet" in said and "Once it is released on PyPI" in said


def test_every_extra_the_readme_installs_exists():
    extras = set(project()["optional-dependencies"])
    named = re.findall(r"(?:sphinx-autocast-demo|\.)\[([\w,]+)\]", README)
    assert named
    for group in named:
        assert set(group.split(",")) <= extras, group
    assert {"torch", "myst"} <= {e for group in named for e in group.split(",")}


def test_the_cpu_line_installs_what_the_torch_extra_accepts():
    # "the torch extra keeps it": the CPU build pip installs satisfies the extra's requirement.
    (torch,) = [Requirement(r) for r in project()["optional-dependencies"]["torch"]]
    assert torch.name == "torch" and torch.specifier.contains("2.13.0+cpu")


def test_the_version_policy_is_stated_for_this_version():
    policy = words(section("## Versions and changes"))
    version = Version(__version__)  # (pyproject reads it from there: written once)
    assert project()["dynamic"] == ["version"] and "version" not in project()
    assert f"this is {version}" in policy
    assert f"sphinx-autocast-demo~={version.major}.{version.minor}.0" in policy
    for rule in ("A patch release", "A minor release", "Before 1.0", "CHANGELOG.md",
                 "says what to do about it", "verdict", ":expect:", "option"):
        assert rule in policy, rule
    assert (REPO / "CHANGELOG.md").is_file()


def test_every_command_the_readme_names_exists():
    (subparsers,) = [a for a in cli.parser()._actions if isinstance(a, argparse._SubParsersAction)]
    commands = set(subparsers.choices)
    named = set(re.findall(r"(?:sphinx-autocast-demo|python -m\s+sphinx_autocast_demo)\s+([a-z][\w-]*)",
                           README))
    assert {"accept", "merge"} <= named
    assert named <= commands, named - commands
    assert "--help" in README and "--version" in README


def test_every_relative_link_leads_to_a_file():
    # Never a link to nowhere: there is no public home, so each link is a path in the repository.
    links = re.findall(r"\]\(([^)\s]+)\)", README)
    relative = [link for link in links if not re.match(r"[a-z]+:", link)]
    assert relative
    for link in relative:
        assert (REPO / link.split("#")[0]).exists(), link
    assert "(CHANGELOG.md)" in README
