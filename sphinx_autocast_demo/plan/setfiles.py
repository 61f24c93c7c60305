"""The result sets a build names (``autocast_demo_results``), as files: their layout, and a
digest of each set's environment and run files, read as bytes, that tells whether they changed
since the last build without reading them as the model's records (:mod:`.results` does that,
when a page is planned: :class:`.environments.NamedSets`)."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

ENVIRONMENT = "environment.json"
RUNS = "runs"


class SetProblem(Exception):
    """A result set that cannot be read or written; the message names the file."""


def environment_dirs(directory: Path) -> list[Path]:
    """The environments' directories of a set's directory, in order."""
    if not directory.is_dir():
        raise SetProblem(f"{directory}: no such directory")
    return sorted(p for p in directory.iterdir() if (p / ENVIRONMENT).is_file())


def run_files(directory: Path) -> list[Path]:
    """The run files of an environment's set; never a symbolic link, which could name a file
    outside the set (a merge would copy it, a build read it)."""
    if (directory / RUNS).is_symlink():
        return []
    return [path for path in sorted((directory / RUNS).glob("*.json")) if not path.is_symlink()]


def digest(directories: Sequence[Path]) -> str:
    """The environment and run files of the sets in ``directories``, byte for byte: a run file
    lists the keys it wrote and a digest of what they hold (:func:`.results.held`), so that an
    entry written again with another result is another run file, and no entry is read here."""
    h = hashlib.sha256()
    for directory in directories:
        for child in environment_dirs(directory):
            for path in (child / ENVIRONMENT, *run_files(child)):
                try:
                    data = path.read_bytes()
                except OSError as exc:
                    raise SetProblem(f"{child}: not a readable result set ({exc})") from None
                h.update(f"{child.name}/{path.name}:{len(data)}:".encode())
                h.update(data)
    return h.hexdigest()
