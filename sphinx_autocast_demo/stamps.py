"""The writer's files a cached result stands for: stamped when it is stored, compared when
it is looked up (the runs list them, ``engine/imports.py``).

A stamp is a path relative to conf.py's directory and the file's sha256, read once a build.
The content a run imported is the content stamped only if the file has not been written since
the run could have read it: a file written after this build began (less a margin for coarse
file times) is stamped as :data:`MISSING`, never current, and runs again next time.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from .engine.cache import MISSING, FileStamp, file_digest
from .model import MAX_ITEMS
from .text import printable

if TYPE_CHECKING:
    from collections.abc import Iterable

    from .engine.cache import Entry


class Stamps:
    def __init__(self, confdir: str) -> None:
        self.confdir = os.path.abspath(confdir)
        self.began = time.time()  # before the worker starts: every import of this build is later
        self.digests: dict[str, str] = {}  # absolute path -> its digest in this build

    def stamp(self, paths: Iterable[str] | None) -> tuple[FileStamp, ...] | None:
        """``paths`` (absolute) as an entry keeps them; None where they cannot be kept (not
        known, or a name the entry cannot hold as it is)."""
        if paths is None:
            return None
        stamps: list[FileStamp] = []
        for path in sorted(set(paths)):
            if not _keepable(path) or len(stamps) >= MAX_ITEMS:
                return None
            stamps.append(FileStamp(os.path.relpath(path, self.confdir), self._current(path)))
        return tuple(stamps)

    def stale(self, entry: Entry) -> str | None:
        """Why ``entry`` may no longer be what its runs would give, or None: a file of the
        writer's that they had is not what it was, or the entry does not say which files they
        had (stored by an older version, or not known: it runs again)."""
        if entry.files is None:
            return "it does not record which of the writer's files its runs imported"
        for stamp in entry.files:
            if stamp.sha256 == MISSING or self.digest(self.resolve(stamp.path)) != stamp.sha256:
                # (said on the page in "never" mode: nothing of the build machine's there)
                name = stamp.path if not stamp.path.startswith("..") else os.path.join(
                    *os.path.normpath(stamp.path).split(os.sep)[-2:])
                return f"{name}, which its runs imported, changed"
        return None

    def resolve(self, path: str) -> str:
        return os.path.normpath(os.path.join(self.confdir, path))

    def digest(self, path: str) -> str:
        if path not in self.digests:
            self.digests[path] = file_digest(path)
        return self.digests[path]

    def _current(self, path: str) -> str:
        try:
            mtime = os.stat(path).st_mtime_ns
        except OSError:
            return MISSING
        # Filesystems with whole-second times (FAT: two) round a write down by up to that much.
        margin = 2.0 if mtime % 1_000_000_000 == 0 else 0.1
        return MISSING if mtime / 1e9 >= self.began - margin else self.digest(path)


def _keepable(path: str) -> bool:
    """Whether an entry reads ``path`` back as it is (entries' text is made printable UTF-8)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:  # a name that is not UTF-8 on disk
        return False
    return printable(path) == path
