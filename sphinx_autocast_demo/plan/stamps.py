"""The writer's files a cached result stands for: stamped when it is stored, compared when
it is looked up (the runs list them, ``engine/imports.py``). Beside files, what else its runs
read: a variable of the environment (``env:NAME``, stamped by its value), a directory they
listed (``listing:DIR``, by the names in it), an installed package the snippet imported
(``dist:NAME``, by the files its installer recorded, wherever it is installed) and where a
module of the writer's is found on this build's ``sys.path`` (``module:NAME``, relative to
conf.py's directory).

A stamp is a path relative to conf.py's directory and the file's sha256, read once a build.
The content a run imported is the content stamped only if the file has not been written since
the run could have read it: a file written after this build began (less a margin for coarse
file times) is stamped as :data:`MISSING`, never current, and runs again next time.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING

from sphinx.util import logging

from ..core.fromjson import MAX_ITEMS
from ..core.i18n import __
from ..core.state import FileStamp
from ..core.text import printable
from .cache import DIST, ENV, INPUTS, LISTING, MISSING, MODULE, file_digest

logger = logging.getLogger(__name__)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from .cache import Entry


class Stamps:
    def __init__(self, confdir: str) -> None:
        self.confdir = os.path.abspath(confdir)
        self.began = time.time_ns()  # before the worker starts: every import of this build is later
        self.digests: dict[str, str] = {}  # absolute path -> its digest in this build
        self.late: set[str] = set()  # files written since the build began (stamped MISSING)
        self.unkept = ""  # the first result stored without its files (it runs again), and why

    def stamp(self, paths: Iterable[str] | None, where: str) -> tuple[FileStamp, ...] | None:
        """``paths`` (absolute, from :meth:`comparable`; None: the runs could not tell) as the
        entry of the result at ``where`` keeps them; None where they cannot be kept as they are."""
        files = sorted(set(paths)) if paths is not None else []
        odd = next((path for path in files if not _keepable(path)), None)
        if paths is None:
            why = "its runs could not tell which of your modules they had"
        elif odd is not None:
            why = f"an entry cannot hold the name {odd!r}"
        elif len(files) > MAX_ITEMS:
            why = f"its runs had more than {MAX_ITEMS} files of yours"
        else:
            return tuple(FileStamp(self._name(p), self._current(p)) for p in files)
        self.unkept = self.unkept or f"{where} ({why})"
        return None

    def say(self) -> None:
        """Once a build: results that run again next time because their files could not be
        stamped as the runs had them (slower, never silently)."""
        if self.unkept:
            logger.info(__("autocast-demo: results whose runs' files cannot be kept run again "
                           "in every build that reads their page; the first: {first}").format(
                               first=self.unkept))
        if self.late:
            names = sorted(self.late)
            logger.info(__("autocast-demo: written while this build ran, after its runs may "
                           "have read it: {files}; the demos that imported it run again in the "
                           "next build").format(
                               files=", ".join(names[:3]) + (", ..." if len(names) > 3 else "")))

    @staticmethod
    def comparable(path: str) -> bool:
        """Whether ``path`` can be compared later: a file, or one missing from a directory that
        is there (renamed away for a moment: stamped as changed). Not one gone with its
        directory (a snippet's temporary one) or never on disk (a zip archive's module):
        stamped, it would read the page again and run it at every build."""
        if path.startswith((ENV, DIST, MODULE)):
            return True
        if path.startswith(LISTING):
            return os.path.isdir(path.removeprefix(LISTING))
        return os.path.isfile(path) or os.path.isdir(os.path.dirname(path))

    def stale(self, entry: Entry) -> str | None:
        """Why ``entry`` may no longer be what its runs would give, or None: a file of the
        writer's that they had is not what it was, or the entry does not say which files they
        had (stored by an older version, or not known: it runs again)."""
        if entry.files is None:
            return "it does not record which of the writer's files its runs imported"
        return self.changed(entry.files)

    def changed(self, files: tuple[FileStamp, ...]) -> str | None:
        """Why one of ``files`` (an entry's) is not what it was, or None."""
        for stamp in files:
            if stamp.sha256 == MISSING or self.digest(self.resolve(stamp.path)) != stamp.sha256:
                return _changed(stamp.path)
        return None

    def resolve(self, path: str) -> str:
        """A stamp's path as this build finds it."""
        return _on_place(path, lambda p: os.path.normpath(os.path.join(self.confdir, p)))

    def _name(self, path: str) -> str:
        """``path`` as an entry keeps it (relative to conf.py's directory: a moved checkout)."""
        return _on_place(path, lambda p: os.path.relpath(p, self.confdir))

    def digest(self, path: str) -> str:
        if path not in self.digests:
            self.digests[path] = (_input_digest(path, self.confdir) if path.startswith(INPUTS)
                                  else file_digest(path))
        return self.digests[path]

    def _current(self, path: str) -> str:
        if path.startswith(INPUTS):
            return self.digest(path)
        try:
            written_now = written_since(os.stat(path), self.began)
        except OSError:
            return MISSING
        if written_now:
            self.late.add(path)
            return MISSING
        return self.digest(path)


def _on_place(path: str, move: Callable[[str], str]) -> str:
    """``path`` with ``move`` applied to the place it names (a file, a listed directory);
    a variable, a package or a module names none."""
    if path.startswith((ENV, DIST, MODULE)):
        return path
    if path.startswith(LISTING):
        return LISTING + move(path.removeprefix(LISTING))
    return move(path)


def _changed(path: str) -> str:
    """Why a result whose stamp of ``path`` is not current is stale (said on the page in
    "never" mode: nothing of the build machine's there)."""
    if path.startswith(ENV):
        return f"the environment variable {path.removeprefix(ENV)}, which its runs read, changed"
    if path.startswith(DIST):
        return f"the installed package {path.removeprefix(DIST)}, which it imported, changed"
    if path.startswith(MODULE):
        return f"the module {path.removeprefix(MODULE)}, which it imported, is found elsewhere"
    listing = path.startswith(LISTING)
    path = path.removeprefix(LISTING)
    name = path if not path.startswith("..") else os.path.join(
        *os.path.normpath(path).split(os.sep)[-2:])
    return (f"the files in {name}, which its runs listed, changed" if listing
            else f"{name}, which its runs imported, changed")


def _input_digest(path: str, confdir: str) -> str:
    """What a stamp of a variable, a package, a listing or a module's place holds now (never
    :data:`MISSING` for a variable, a package or a module: unset, not installed and not found
    are states, compared as any)."""
    import hashlib
    import importlib.machinery
    import importlib.metadata
    import sys

    if path.startswith(ENV):
        value = os.environ.get(path.removeprefix(ENV))
        state = "unset" if value is None else "set:" + value
    elif path.startswith(MODULE):
        # (not importlib.util.find_spec: a module this process imported would be found where
        # it was imported from, whatever sys.path says now)
        spec = importlib.machinery.PathFinder.find_spec(path.removeprefix(MODULE), sys.path)
        origin = spec.origin if spec is not None else None
        state = os.path.relpath(origin, confdir) if origin and os.path.isabs(origin) else str(origin)
    elif path.startswith(DIST):
        try:
            dist = importlib.metadata.distribution(path.removeprefix(DIST))
            state = dist.read_text("RECORD") or "version:" + dist.version
        except importlib.metadata.PackageNotFoundError:
            state = "not installed"
    else:
        try:
            state = "\n".join(sorted(os.listdir(path.removeprefix(LISTING))))
        except OSError:
            return MISSING
    return hashlib.sha256(state.encode("utf-8", "surrogateescape")).hexdigest()


def _keepable(path: str) -> bool:
    """Whether an entry reads ``path`` back as it is (entries' text is made printable UTF-8)."""
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:  # a name that is not UTF-8 on disk
        return False
    return printable(path) == path


def written_since(st: os.stat_result, began_ns: int) -> bool:
    """May the file ``st`` describes have been written after ``began_ns``? The change time
    too (``cp -p`` keeps the old file time), with a margin for coarse clocks."""
    written = max(st.st_mtime_ns, st.st_ctime_ns)
    margin = 2_000_000_000 if written % 1_000_000_000 == 0 else 100_000_000
    return written >= began_ns - margin
