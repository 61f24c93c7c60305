"""Results on disk, one JSON file per (demo, variant), keyed by everything that decides them
before they run, with the files of the writer's that the runs imported (:class:`FileStamp`).

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
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from ..core.fromjson import from_json
from ..core.model import RunRecord, Verdict

FORMAT = 1


@dataclass(frozen=True)
class FileStamp:
    """A file of the writer's that a run had (``engine/imports.py``), and its content then."""

    # Relative to conf.py's directory: a moved checkout, or a second one sharing the cache,
    # compares its own files.
    path: str
    sha256: str  # MISSING: it could not be read, or the run may have read another content


#: A :class:`FileStamp`'s digest that is never current.
MISSING = "missing"

#: Larger files are compared by size and time (a compiled module of the writer's, say).
HASHED_BYTES = 64 << 20


@dataclass(frozen=True)
class Entry:
    torch_version: str
    verdict: Verdict
    compiled: RunRecord
    eager: RunRecord
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
    return entry


def make_key(parts: dict[str, Any]) -> str:
    """A stable hash of JSON-able ``parts`` (code, setup, value, options, versions)."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(blob).hexdigest()


class ResultCache:
    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Entry | None:
        """The entry for ``key``, ``None`` when absent; :class:`CorruptEntry` when unreadable."""
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
            return consistent(from_json(Entry, data))
        except (ValueError, RecursionError) as exc:  # RecursionError: JSON nested too deep
            raise CorruptEntry(f"{path}: {exc}") from None

    def unwritable(self) -> str | None:
        """Why no entry can be stored under the root (found by storing an empty file), or ``None``."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
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
