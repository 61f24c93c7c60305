"""The README's wheel line run for real (``pip wheel --no-deps``): the wheel holds every file of
the package, the CSS, JS and LaTeX package the builders copy and ``py.typed`` included, declares
the console script, and installed, runs it. What the README says, read without building:
tests/unit/test_readme_adoption.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from sphinx_autocast_demo import __version__

REPO = Path(__file__).resolve().parents[2]
PACKAGE = "sphinx_autocast_demo"


def package_files() -> set[str]:
    """The package's files as the repository holds them (what git tracks; without git, what is
    there), relative to the repository."""
    if (REPO / ".git").exists():
        listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard", PACKAGE],
                                cwd=REPO, capture_output=True, text=True, check=True).stdout.split()
        return {path for path in listed if (REPO / path).is_file()}
    return {str(p.relative_to(REPO)) for p in (REPO / PACKAGE).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    # From a copy: setuptools builds in the tree it is given (build/, *.egg-info), and this
    # checkout is in use. The copy holds what a clone holds of what the wheel is made from.
    clone = tmp_path_factory.mktemp("clone")
    for name in ("pyproject.toml", "README.md", "LICENSE", "MANIFEST.in"):
        shutil.copy2(REPO / name, clone / name)
    for path in package_files():
        (clone / path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / path, clone / path)
    dist = tmp_path_factory.mktemp("dist")
    # No build isolation: the venv's setuptools (pyproject's build requirement), no index.
    built = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                            "--no-index", "-q", "-w", str(dist), str(clone)],
                           capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (found,) = dist.glob("*.whl")
    return found


def test_the_wheel_is_named_as_the_readme_installs_it(wheel):
    assert wheel.name == f"{PACKAGE}-{__version__}-py3-none-any.whl"  # dist/sphinx_autocast_demo-*.whl


def test_the_wheel_holds_every_file_of_the_package(wheel):
    inside = set(zipfile.ZipFile(wheel).namelist())
    files = package_files()
    assert {f"{PACKAGE}/present/static/autocast_demo.css", f"{PACKAGE}/present/static/autocast_demo.js",
            f"{PACKAGE}/present/latex/sphinxautocastdemo.sty", f"{PACKAGE}/py.typed"} <= files
    assert files - inside == set()  # a data file pyproject's package-data does not name is left out


def test_the_wheel_declares_the_console_script_and_the_extras(wheel):
    archive = zipfile.ZipFile(wheel)
    info = f"{PACKAGE}-{__version__}.dist-info"
    entry_points = archive.read(f"{info}/entry_points.txt").decode()
    assert "[console_scripts]\nsphinx-autocast-demo = sphinx_autocast_demo.cli:main\n" in entry_points
    metadata = archive.read(f"{info}/METADATA").decode()
    assert "Provides-Extra: torch\n" in metadata and "Provides-Extra: myst\n" in metadata
    assert 'Requires-Dist: torch>=2.9; extra == "torch"\n' in metadata


def test_the_installed_wheel_runs_its_script(wheel, tmp_path):
    target = tmp_path / "site"
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "-q",
                                "--target", str(target), str(wheel)], capture_output=True, text=True,
                               timeout=600)
    assert installed.returncode == 0, installed.stderr[-3000:]
    # Its own copy first on the path (this checkout's editable install is found after it).
    env = {**os.environ, "PYTHONPATH": str(target)}
    ran = subprocess.run([str(target / "bin" / "sphinx-autocast-demo"), "--version"],
                         capture_output=True, text=True, timeout=60, env=env)
    assert (ran.returncode, ran.stdout) == (0, f"sphinx-autocast-demo {__version__}\n"), ran.stderr
    where = subprocess.run(
        [sys.executable, "-c", "import sphinx_autocast_demo as p; from sphinx_autocast_demo.core "
         "import STATIC; print(p.__file__); print(sorted(f.name for f in STATIC.iterdir()))"],
        capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path)  # not this checkout
    assert where.stdout.splitlines() == [str(target / PACKAGE / "__init__.py"),
                                         "['autocast_demo.css', 'autocast_demo.js']"], where.stderr
