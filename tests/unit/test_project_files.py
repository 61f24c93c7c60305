"""The project's own setup as the README tells it, read from its files (no build, no pip):
the quick start, the Python versions, the extras, tox, and the CI page's workflow. The README's
CI recipe run for real: tests/build/test_setup.py; the sdist's files: tests/unit/test_sdist_files.py."""

from __future__ import annotations

import configparser
import re
import sys
import tomllib
from pathlib import Path

import pytest
import yaml
from conftest import load_quickstart
from packaging.requirements import Requirement
from packaging.version import Version

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
quickstart = load_quickstart()


def pyproject() -> dict:
    return tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


def test_quickstart_commands_work_alone_on_a_fresh_debian():
    docs, tests = quickstart.commands(README)
    for command, extra in ((docs, "docs,torch"), (tests, "test")):
        steps = [step.strip() for step in command.split("&&")]
        # Each makes (or reuses) its own venv, so it needs nothing the other one did.
        assert steps[0] == "python3 -m venv .venv", command
        assert f'.venv/bin/python -m pip install -c constraints.txt -e ".[{extra}]"' in steps, command
        # No bare `python` (a fresh Debian has only python3) and no pip outside the venv
        # (PEP 668 refuses it).
        for step in steps[1:]:
            assert step.startswith(".venv/bin/python -m "), step
    assert docs.endswith(".venv/bin/python -m sphinx -W -b html docs docs/_build/html")
    assert tests.endswith(".venv/bin/python -m pytest")
    intro = README.read_text(encoding="utf-8").split("## Quick start", 1)[1].split("```bash", 1)[0]
    assert "python3-venv" in intro


def test_python_versions_agree():
    project = pyproject()
    minor = re.fullmatch(r">=3\.(\d+)", project["project"]["requires-python"])
    assert minor is not None, project["project"]["requires-python"]
    oldest = f"3.{minor[1]}"
    assert project["tool"]["ruff"]["target-version"] == f"py3{minor[1]}"
    assert project["tool"]["mypy"]["python_version"] == oldest
    for doc in (README, REPO / "docs" / "guide.rst"):
        said = re.findall(r"Python (3\.\d+)(?:\+| or newer)", doc.read_text(encoding="utf-8"))
        assert said and set(said) == {oldest}, (doc.name, said, oldest)
    assert sys.version_info >= tuple(map(int, oldest.split(".")))


def test_each_python_the_package_claims_has_a_tox_env_with_torch():
    # A classifier is a promise: the CI's Python, or one a tox env runs the suite on with torch.
    claimed = {c.rsplit(" ", 1)[1] for c in pyproject()["project"]["classifiers"]
               if re.fullmatch(r"Programming Language :: Python :: 3\.\d+", c)}
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(REPO / "tox.ini", encoding="utf-8")
    # CI's python3 (3.11, as .ci/run finds it) and the one running this suite.
    tested = {"3.11", f"{sys.version_info[0]}.{sys.version_info[1]}"}
    for section in tox.sections():
        found = re.fullmatch(r"testenv:py\{([\d,]+)\}-torch\d+", section)
        if found and "torch==" in tox[section].get("deps", ""):
            tested |= {f"{v[0]}.{v[1:]}" for v in found[1].split(",")}
    assert claimed and claimed <= tested, (claimed, tested)


def test_the_test_extra_has_numpy_pinned():
    extras = pyproject()["project"]["optional-dependencies"]
    assert "numpy" in {Requirement(r).name for r in extras["test"]}
    pins = (REPO / "constraints.txt").read_text(encoding="utf-8")
    assert re.search(r"^numpy==", pins, re.M)


def test_the_docs_and_test_extras_install_what_the_docs_load():
    """The README's test command builds the docs (test_docs.py) in a venv of its own: every
    extension and theme docs/conf.py loads must come with the test extra, as with the docs one."""
    import importlib.metadata

    conf: dict[str, object] = {"__file__": str(REPO / "docs" / "conf.py")}
    exec((REPO / "docs" / "conf.py").read_text(encoding="utf-8"), conf)
    modules = [*conf["extensions"], conf["html_theme"]]  # type: ignore[misc]
    local = {path.stem for path in (REPO / "docs" / "_ext").glob("*.py")}
    distributions = importlib.metadata.packages_distributions()
    needed = {distributions[m.split(".")[0]][0].lower() for m in modules
              if not m.startswith("sphinx.") and m not in local and m != "sphinx_autocast_demo"}
    assert "sphinx-copybutton" in needed and "pydata-sphinx-theme" in needed
    extras = pyproject()["project"]["optional-dependencies"]
    for extra in ("docs", "test"):
        named = {Requirement(r).name.lower() for r in extras[extra]}
        assert needed <= named, (extra, needed - named)


def test_tox_applies_constraints_the_way_pip_accepts():
    tox = configparser.ConfigParser(interpolation=None)
    tox.read(REPO / "tox.ini", encoding="utf-8")
    # `pip install -c constraints.txt` with no requirement is refused by pip: tox's own
    # `constraints` setting (tox 4.28+) passes the file along with what it installs.
    assert "-c" not in tox["testenv"].get("deps", "")
    assert tox["testenv"]["constraints"].strip() == "constraints.txt"
    assert Version(tox["tox"]["min_version"]) >= Version("4.28")
    for env in tox["tox"]["envlist"].replace(",", " ").split():
        section = tox[f"testenv:{env}"]
        assert "constraints" not in section and "-c" not in section.get("deps", ""), env


def test_the_ci_page_workflow_runs_the_readme_recipe():
    # The single-job workflow: the matrix one after it runs the same builds per shard.
    workflow = (REPO / "docs" / "ci.rst").read_text(encoding="utf-8").split("job matrix")[0]
    steps = [line.strip().removeprefix("- run: ") for line in workflow.splitlines()
             if line.strip().startswith("- run: python -m sphinx")]
    assert steps == quickstart.commands(README, "## In CI")


def test_readthedocs_installs_no_torch_and_renders_only():
    """.readthedocs.yaml's install (the requirements file, then the package) asks for no torch,
    and docs/conf.py runs nothing there. (A real build that way, in a venv without torch, is in
    the guide's ReadTheDocs section; torch-free, it takes seconds.)"""
    config = yaml.safe_load((REPO / ".readthedocs.yaml").read_text(encoding="utf-8"))
    assert config["version"] == 2 and config["sphinx"]["configuration"] == "docs/conf.py"
    [requirements, package] = config["python"]["install"]
    assert package == {"method": "pip", "path": "."}  # no extra: sphinx only
    lines = (REPO / requirements["requirements"]).read_text(encoding="utf-8").splitlines()
    named = [Requirement(line).name for line in lines if line and not line.startswith(("#", "-"))]
    assert "torch" not in named and "-c ../constraints.txt" in lines
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    assert not [r for r in project["project"]["dependencies"] if Requirement(r).name == "torch"]
    docs = {Requirement(r).name for r in project["project"]["optional-dependencies"]["docs"]}
    assert "torch" not in docs and set(named) == docs - {"sphinx"}
    for on_rtd, mode in ((True, "never"), (False, None)):
        with pytest.MonkeyPatch.context() as patch:
            if on_rtd:
                patch.setenv("READTHEDOCS", "True")
            else:
                patch.delenv("READTHEDOCS", raising=False)
            patch.setattr(sys, "path", list(sys.path))  # conf.py adds its _ext
            conf: dict[str, object] = {"__file__": str(REPO / "docs" / "conf.py")}
            exec((REPO / "docs" / "conf.py").read_text(encoding="utf-8"), conf)
        assert conf.get("autocast_demo_execute") == mode
