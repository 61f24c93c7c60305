"""The benchmark's venvs, made as a user makes theirs: ``python -m venv``, pip, pinned packages.

``python -m benchmarks.envs WORK`` makes (or reuses) ``WORK/venv-sphinx9`` and
``WORK/venv-sphinx72`` from ``benchmarks/requirements-*.txt`` and installs this repository
into each again, as a user's pip does (a wheel, byte-compiled), so that a reused venv measures
the code as it is now.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
ENVS = {"sphinx9": HERE / "requirements-sphinx9.txt", "sphinx72": HERE / "requirements-sphinx72.txt"}


def python(venv: Path) -> Path:
    return venv / "bin" / "python"


def activated(venv: Path) -> dict[str, str]:
    """The environment of a shell that sourced the venv's ``activate``: the anchors' kernels and
    the extension's worker find the venv's python first on PATH, as on a user's machine."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "PYTHONPATH")}
    return {**env, "VIRTUAL_ENV": str(venv), "PATH": f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"}


def _pip(venv: Path, *args: str) -> None:
    # pip's own output goes to a log beside the venv: a failed install says where to look.
    with open(venv / "bench-pip.log", "a", encoding="utf-8") as log:
        done = subprocess.run([str(python(venv)), "-m", "pip", "install", *args], stdout=log,
                              stderr=subprocess.STDOUT, env=activated(venv), check=False)
    if done.returncode:
        raise SystemExit(f"pip install {' '.join(args)} failed in {venv}: see {venv / 'bench-pip.log'}")


def ensure(work: Path, name: str) -> Path:
    """The venv ``name``, made and filled once per requirements file; the repo installed again."""
    venv = work / f"venv-{name}"
    requirements = ENVS[name]
    stamp = hashlib.sha256(requirements.read_bytes() + sys.version.encode()).hexdigest()
    marker = venv / "bench-stamp"
    if not (marker.exists() and marker.read_text() == stamp and python(venv).exists()):
        print(f"making {venv} from {requirements.name} (a few minutes)", flush=True)
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(venv)], check=True)
        _pip(venv, "-q", "-r", str(requirements))
        marker.write_text(stamp)
    # Not editable: pip byte-compiles what it installs, as for a user, where an editable
    # install's modules compile at every start (PYTHONDONTWRITEBYTECODE, a read-only checkout):
    # ~35 ms of a 0.6 s no-change rebuild, measured. Without dependencies: they are the pins
    # above; no build isolation, so that no other setuptools is fetched.
    _pip(venv, "-q", "--no-deps", "--no-build-isolation", "--force-reinstall", str(REPO))
    return venv


def main() -> None:
    work = Path(sys.argv[1]).resolve()
    work.mkdir(parents=True, exist_ok=True)
    for name in ENVS:
        print(ensure(work, name))


if __name__ == "__main__":
    main()
