"""Results on disk, one JSON file per (demo, variant), keyed by everything that decides them
before they run, with the files of the writer's that the runs imported (:class:`.FileStamp`).

Entries are data: read with ``json``, validated field by field (type, allowed values, sizes;
text made printable and bounded as a live run's), never unpickled or executed, so a cache
restored from an untrusted CI artifact can at worst show wrong numbers (and a re-run with
``autocast_demo_execute = "force"`` replaces them). Writes go to a temporary file and are
renamed into place, so concurrent builds and a build killed mid-write leave whole entries only.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
import unicodedata
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..core.fromjson import from_json
from ..core.state import FileStamp

if TYPE_CHECKING:  # (from_json finds them in the model: an unchanged build reads no entry)
    from ..core.model import RunRecord, Verdict

FORMAT = 1

#: The cache's directory where conf.py names none, beside conf.py: one project's builds (html,
#: autocast-check, epub, each with its own output and doctree directories) share it, as pytest,
#: mypy and ruff keep theirs in the project. Sphinx reads no file of it as a source: entries end
#: in .json, and the markers are a .gitignore and a CACHEDIR.TAG (no README.md, which MyST reads).
DEFAULT_DIR = ".autocast_demo_cache"
#: Where a build whose conf.py directory cannot be written keeps its results instead: in its
#: doctree directory (each output directory then has its own, as before).
FALLBACK_DIR = "autocast_demo_cache"
#: What a directory the cache made holds beside its entries: nothing in it is to be committed
#: (result sets are what a project keeps), and backup tools may skip it (bford.info/cachedir).
MARKERS = {
    ".gitignore": "# The result cache of sphinx-autocast-demo: made again by any build.\n*\n",
    "CACHEDIR.TAG": "Signature: 8a477f597d28d172789f06886806bc55\n"
                    "# The result cache of sphinx-autocast-demo.\n"
                    "# For information about cache directory tags see https://bford.info/cachedir/\n",
}


#: A :class:`.FileStamp`'s digest that is never current.
MISSING = "missing"
#: A stamp's path that names no file (``engine/child/imports.py`` gives them): a variable of
#: the environment, an installed package, a directory's listing, where a module of the
#: writer's is found on ``sys.path``.
ENV, DIST, LISTING, MODULE = "env:", "dist:", "listing:", "module:"
INPUTS = (ENV, DIST, LISTING, MODULE)

#: Larger files are compared by size and time (a compiled module of the writer's, say).
HASHED_BYTES = 64 << 20


@dataclass(frozen=True)
class Entry:
    torch_version: str
    verdict: Verdict
    compiled: RunRecord
    eager: RunRecord | None  # None: none was asked for (``:compare: none``)
    python_version: str = ""
    # What autocast_demo_cache_torch made of the torch when the entry was stored; a label is
    # only known from here (the exact version and its release come from torch_version).
    torch_key: str = ""
    # The writer's modules (a helper beside the docs, the project on sys.path, an editable
    # install) that its runs imported: the key cannot name them, as they are known only after
    # the runs. None: not recorded (an entry of an older version, or of a result set, whose
    # files stay on the machine that made it).
    files: tuple[FileStamp, ...] | None = None


def file_digest(path: str) -> str:
    """The sha256 of ``path``'s content; :data:`MISSING` when it is no regular file that can be
    read. A path can come from a cache restored from elsewhere: a FIFO or a device must not
    block or never end (hence no waiting to open, and the check on what was opened)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return MISSING
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # (a directory opens too)
            return MISSING
        if st.st_size > HASHED_BYTES:
            return f"size {st.st_size} time {st.st_mtime_ns}"
        with os.fdopen(os.dup(fd), "rb") as f:
            return hashlib.file_digest(f, "sha256").hexdigest()
    except OSError:
        return MISSING
    finally:
        os.close(fd)


class CorruptEntry(Exception):
    """An entry exists but cannot be read; the caller re-runs and says so."""


def consistent(entry: Entry) -> Entry:
    """``entry``, if its fields agree with each other; :class:`ValueError` naming the field if
    not. The types are checked field by field (:func:`.fromjson.from_json`); what a live run never
    writes, such as a ``raises`` verdict without the exception, is checked here, or the page
    would say "compiled raises None"."""
    verdict = entry.verdict
    if verdict.outcome == "raises" and not verdict.exception:
        raise ValueError(f"verdict.exception is {verdict.exception!r}, but the outcome is 'raises'")
    if entry.eager is None and verdict.outcome in ("matches", "differs"):
        raise ValueError(f"eager is None, but the outcome is {verdict.outcome!r}")
    return entry


def make_key(parts: dict[str, Any]) -> str:
    """A stable hash of JSON-able ``parts`` (code, setup, value, options, versions)."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()


def cache_root(configured: str, confdir: str, doctreedir: str) -> tuple[Path, str]:
    """The cache's directory, and why it is not the default (empty where it is, or where
    conf.py names one: a relative one is taken from conf.py's directory, not the working one).

    Decided from what the file system says, writing nothing: every build, even one that runs
    nothing, must find its results in the same place, and a source tree that cannot be written
    (a read-only checkout or mount) must still build, as it did when the cache was in the
    doctree directory."""
    if configured:
        root = Path(configured)
        return (root if root.is_absolute() else Path(confdir) / root), ""
    default = Path(confdir) / DEFAULT_DIR
    problem = _not_writable(default)
    if problem:
        return Path(doctreedir) / FALLBACK_DIR, f"{default} {problem}"
    return default, ""


def among_sources(root: Path, srcdir: str) -> str:
    """The cache's directory ``root`` as an ``exclude_patterns`` entry of the sources in
    ``srcdir`` ("" where it is not among them), NFC, as Sphinx compares the names it walks."""
    try:
        inside = Path(os.path.abspath(root)).relative_to(os.path.abspath(srcdir)).as_posix()
    except ValueError:  # (elsewhere: Sphinx walks nothing of it)
        return ""
    # A name that reads as a pattern is left walked (it costs time only): escaped, its "[[]"
    # makes Python's re warn at every build, and unescaped it could exclude a page.
    left_walked = inside == "." or any(c in inside for c in "*?[")
    return "" if left_walked else unicodedata.normalize("NFC", inside)


def _not_writable(path: Path) -> str:
    """Why a directory at ``path`` could not be kept, from its metadata only ("" where it can)."""
    if path.is_symlink() and not path.exists():
        return "is a broken symbolic link"
    if path.exists() and not path.is_dir():
        return "is not a directory"
    where = path if path.is_dir() else path.parent
    if not os.access(where, os.W_OK | os.X_OK):
        try:
            read_only = bool(os.statvfs(where).f_flag & os.ST_RDONLY)
        except OSError:
            read_only = False
        return "is on a read-only file system" if read_only else "cannot be written"
    return ""


class ResultCache:
    def __init__(self, root: Path) -> None:
        self.root = root

    def make(self) -> None:
        """Make the root, with its :data:`MARKERS`, unless it exists (a directory the writer
        made or named keeps what it holds). Raises ``OSError``."""
        try:
            self.root.mkdir(parents=True)
        except FileExistsError:
            if not self.root.is_dir():
                raise
            return
        for name, text in MARKERS.items():
            (self.root / name).write_text(text, encoding="utf-8")

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Entry | None:
        """The entry for ``key``, ``None`` when absent; :class:`CorruptEntry` when unreadable."""
        data = self._data(key)
        try:
            return None if data is None else consistent(from_json(Entry, data))
        except (ValueError, RecursionError) as exc:
            raise CorruptEntry(f"{self._path(key)}: {exc}") from None

    def _data(self, key: str) -> dict[str, Any] | None:
        """The entry for ``key`` as its JSON, checked to be one of this format for this key."""
        path = self._path(key)
        try:
            raw = path.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):  # the latter: a file where a directory goes
            return None
        except (OSError, UnicodeDecodeError) as exc:  # binary junk, e.g. a pickle: data only
            raise CorruptEntry(f"{path}: {exc}") from None
        try:
            data = json.loads(raw)
            if not isinstance(data, dict) or data.get("format") != FORMAT or data.get("key") != key:
                raise ValueError("written by another version or for another key")
            return data
        except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deep
            raise CorruptEntry(f"{path}: {exc}") from None

    def unwritable(self) -> str | None:
        """Why no entry can be stored under the root, or ``None``: found by storing an empty
        file, unless the root is a directory the file system says can be written. Not each
        time: in a watched source tree (sphinx-autobuild) a file written and removed at every
        build that runs something starts the next build, for ever where a demo fails."""
        if self.root.is_dir() and os.access(self.root, os.W_OK | os.X_OK):
            return None  # (and where a write fails after all, put() says so)
        try:
            self.make()
            fd, tmp = tempfile.mkstemp(dir=self.root, prefix=".tmp-", suffix=".json")
            os.close(fd)
            os.unlink(tmp)
        except OSError as exc:
            return self.why(exc)
        return None

    def why(self, exc: OSError) -> str:
        """An OS error in words, with the path it is about."""
        return f"{exc.strerror or exc}: {exc.filename or self.root}"

    def put(self, key: str, entry: Entry) -> None:
        path = self._path(key)
        if not self.root.is_dir():  # (removed during the build, say)
            self.make()
        path.parent.mkdir(parents=True, exist_ok=True)
        data = {"format": FORMAT, "key": key, **asdict(entry)}
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                # No fsync: the rename already keeps a killed build from leaving half an entry;
                # only a power cut could leave an empty file, which reads as damaged and runs
                # again with a warning. Cheaper than one disk flush per result.
                json.dump(data, f)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
