"""Accept mode: rewrite the recorded expectations in the sources to what torch now does.

``AUTOCAST_DEMO_ACCEPT=1 sphinx-build ...`` (as ``EXPECTTEST_ACCEPT=1`` for PyTorch's
expecttest) rewrites the ``:expect:`` option (and a recorded ``:expect-output:``) of every demo
whose record no longer holds, or adds ``:expect:`` where it is missing, in reST and MyST. Only
those option lines change; inside ``:expect:`` only the outcomes that changed are replaced, so
everything else in the file stays byte for byte. ``AUTOCAST_DEMO_ACCEPT=diff`` prints a unified
diff instead. Nothing is written unless every demo produced an outcome (a timeout, a crash or a
directive error stops it) and then all files are replaced at once, each through a temporary file.

Accept writes where the text lives: a page or module reached through a symbolic link is edited in
the file the link names (the link stays), and a ``.py`` file is read and written back in the
encoding it declares (PEP 263), with its own line endings.

What the new record says is :mod:`.newrecord`'s, the edit of a file's lines :mod:`.edit`'s;
this module reads the files, plans each demo's changes, and writes them all or none.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sphinx.util import logging

from ..core.i18n import __, in_console, msg, n__
from ..core.publish import relative
from ..core.state import all_docs
from ..core.subtypes import ours
from ..read import docstrings
from . import ENV, mode
from .edit import Change, apply, plan, split_lines, unsafe_in_python
from .newrecord import Blocked, new_expect, recorded

if TYPE_CHECKING:
    from sphinx.application import Sphinx

    from ..core.model import Demo, DemoResult

logger = logging.getLogger(__name__)
class Files:
    """The files that accept mode edits, each once however it is reached: by the file a link
    names (two links to one file, or a link and the file, are one file), read as Python or
    Sphinx reads it."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}  # real path -> text, line endings kept
        self.encodings: dict[str, str] = {}
        self.shown: dict[str, str] = {}  # real path -> the path the build named it by
        self.changes: dict[str, list[Change]] = {}
        self.demos: dict[tuple[str, str], Demo] = {}  # each demo planned, as it will record

    def read(self, path: str) -> str:
        real = os.path.realpath(path)
        if real not in self.texts:
            if path.endswith((".py", ".pyw")):  # its PEP 263 declaration, or a BOM, says how
                self.texts[real], self.encodings[real] = docstrings.read_python(real)
            else:
                with open(real, encoding="utf-8", newline="") as f:
                    self.texts[real], self.encodings[real] = f.read(), "utf-8"
            self.shown[real] = path
        return real

    def take(self, result: DemoResult) -> str:
        """Plan ``result``'s changes; why its source cannot take them (empty: it can).
        Raises :class:`Blocked`, ``OSError``, ``UnicodeDecodeError`` or ``SyntaxError`` (a
        declared encoding that does not exist)."""
        path = result.demo.source_map.path
        if docstrings.split_source(path):  # the directive was not found in the .py file
            if new_expect(result) is None:
                return ""
            why = docstrings.reason(path)
            return msg("{why}; record it by hand", why=why)
        real = self.read(path)
        lines = [ln.rstrip("\r\n") for ln in split_lines(self.texts[real])]
        planned = plan(result, lines)
        bad = unsafe_in_python(path, planned, self.encodings[real])
        if bad:
            return bad
        known = self.changes.setdefault(real, [])
        # One file reached by two paths plans the same change twice: it is written once.
        known.extend(c for c in planned if not any(
            (c.start, c.end, c.new) == (k.start, k.end, k.new) for k in known))
        demo = recorded(result) if planned else None
        if demo is not None:
            self.demos[demo.docname, demo.ident] = demo
        return ""


#: The application's attribute: this build's :class:`Accepted`, set by :func:`write`.
OUTCOME = "_autocast_demo_accepted"


@dataclass
class Accepted:
    """What accept mode did in a build, before any page was written (:func:`write`), to be said
    at its end, after the summary (:func:`finish`), where a writer looks for it."""

    lines: list[tuple[bool, str]]  # (a warning?, the line)


def write(app: Sphinx) -> dict[tuple[str, str], Demo]:
    """Once every demo is checked, before any page is written: rewrite the records, or find
    the diff, or why neither. The demos rewritten, as their sources now record them: the build
    judges them again, so that its own pages, warnings, summary and exit status are those of
    the sources as they now are (a record rewritten holds, and the build succeeds).

    Here and not at the end of the build: Sphinx keeps the environment once reading is done,
    and a page judged against records that a later failure left unwritten would keep saying
    they hold. A build that fails from here on has rewritten what it checked."""
    how = mode()
    files = Files()
    told: list[tuple[bool, str]] = []
    setattr(app, OUTCOME, Accepted(told))
    if how not in ("write", "diff"):
        return {}
    docs = all_docs(app.env)
    blocked: list[str] = [f"{p.location}: {in_console(p.message).splitlines()[0]}"
                          for state in docs.values() for p in state.problems]
    # Demos whose source cannot be edited (a docstring not found in its file): each said in a
    # line, while every other source is still rewritten.
    unwritable: list[str] = []
    for state in docs.values():
        for result in state.results.values():
            try:
                bad = files.take(result)
            except (Blocked, OSError, UnicodeDecodeError, SyntaxError) as err:
                # A Blocked's reason is kept as words (msg()): said in the console's language.
                why = in_console(err.args[0]) if isinstance(err, Blocked) else str(err)
                blocked.append(f"{result.demo.location}: {why}")
            else:
                if bad:
                    unwritable.append(__("{demo}: not rewritten: {why}").format(
                        demo=result.demo.location, why=in_console(bad)))
    changes = files.changes
    if blocked:
        files.demos.clear()
        told.append((True, __("{mode}: nothing was changed, because:\n  {problems}").format(
            mode=ENV, problems="\n  ".join(blocked))))
        return {}
    told.extend((True, f"{ENV}: {line}") for line in unwritable)
    new = {p: apply(files.texts[p], c) for p, c in changes.items() if c}
    if how == "diff":
        files.demos.clear()
        for path, text in new.items():
            rel = _here(files.shown[path])
            told.append((False, "".join(difflib.unified_diff(
                files.texts[path].splitlines(keepends=True), text.splitlines(keepends=True),
                f"a/{rel}", f"b/{rel}")).rstrip("\n")))
        count = sum(map(len, changes.values()))
        told.append((False, n__("{mode}=diff: {n} change, nothing written",
                                "{mode}=diff: {n} changes, nothing written", count).format(
                                    mode=ENV, n=count)))
        return {}
    write_all(new, files.encodings)
    for items in changes.values():
        moved = 0  # lines the changes above this one added: said where the written file has it
        for change in sorted(items, key=lambda c: c.start):
            told.append((False, __("{mode}: {file}:{line}: recorded {what}").format(
                mode=ENV, file=_here(change.path), line=change.start + 1 + moved,
                what=change.what)))
            moved += len(change.new) - (change.end - change.start)
    if new:
        told.append((False, n__("{mode}: {n} file rewritten; the pages of this build show the "
                                "new records",
                                "{mode}: {n} files rewritten; the pages of this build show the "
                                "new records", len(new)).format(mode=ENV, n=len(new))))
    elif not unwritable:
        told.append((False, __("{mode}: every record holds; nothing to change").format(mode=ENV)))
    return files.demos


def finish(app: Sphinx, exc: Exception | None) -> None:
    """At the end of the build, after the summary: what :func:`write` did, or why it did not."""
    if mode() not in ("write", "diff"):
        return
    outcome: Accepted | None = getattr(app, OUTCOME, None)
    if outcome is None:
        if exc is not None:
            logger.warning(__("{mode}: the build failed, so no source was changed").format(
                mode=ENV), **ours("accept"))
        else:  # gettext, linkcheck...: nothing was checked
            logger.info(__("{mode}: the {builder} builder runs no demo, so no record was checked "
                           "or changed").format(mode=ENV, builder=app.builder.name))
        return
    for warning, line in outcome.lines:
        if warning:
            logger.warning(line, **ours("accept"))
        else:
            logger.info(line)


def _here(path: str) -> str:
    """A file named for the person who ran the build: from the working directory."""
    return relative(os.path.abspath(path), os.getcwd())


def write_all(new: dict[str, str], encodings: dict[str, str] | None = None) -> None:
    """Every file goes to a temporary file first; then they all replace the originals. A path
    that is a symbolic link is written in the file it names (beside it, so that the replacement
    stays on one file system), and the link stays a link."""
    staged: list[tuple[str, str]] = []
    try:
        for path, text in new.items():
            real = os.path.realpath(path)
            fd, tmp = tempfile.mkstemp(dir=os.path.dirname(real), prefix=".accept-", suffix=".tmp")
            staged.append((tmp, real))
            encoding = (encodings or {}).get(path, "utf-8")
            with os.fdopen(fd, "w", encoding=encoding, newline="") as f:
                f.write(text)
            os.chmod(tmp, os.stat(real).st_mode & 0o7777)
    except BaseException:
        for tmp, _ in staged:
            os.unlink(tmp)
        raise
    for tmp, path in staged:
        os.replace(tmp, path)
